package dev.stoker.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The Python package's schema is the specs' and its help the command line's:
 * {@code python/stoker/_schema.json} equals what {@link OptionsReference} reads off the specs and
 * the commands now, and every option of every spec has a meaning there. After a change of an option: {@code ./test -pl stoker-cli -am
 * -Dtest=OptionsReferenceTest -Dsurefire.failIfNoSpecifiedTests=false -Dstoker.reference.write=true}.
 */
class OptionsReferenceTest {
    private static final Path FILE = Path.of("../python/stoker/_schema.json");

    @Test
    void everyOptionOfEverySpecHasAMeaning() {
        assertEquals(List.of(), OptionsReference.build().missing(), "options no command describes");
    }

    @Test
    void thePythonPackageCarriesTheCommandLinesHelp() throws Exception {
        holds(FILE, OptionsReference.json(), OptionsReferenceTest.class);
    }

    /**
     * {@code file} holds {@code now}, written from the code; with {@code -Dstoker.reference.write=true}
     * it is written again first ({@code test}'s javadoc says how).
     */
    static void holds(Path file, String now, Class<?> test) throws java.io.IOException {
        if (Boolean.getBoolean("stoker.reference.write")) {
            Files.writeString(file, now);
        }
        assertEquals(now, Files.readString(file), file.toString().replace("../", "") + " is stale: " + test.getName()
                + "'s javadoc says how to write it again");
    }

    @Test
    void meaningsNameTheKeywordsNotTheFlags() {
        var tokens = OptionsReference.build().schema().get("$defs").get("tokens").get("properties");
        tokens.properties().forEach(e -> assertFalse(e.getValue().path("description").asText().contains("--"), e.toString()));
        assertTrue(tokens.get("seq_len").get("description").asText().contains("1024"), tokens.toString());
    }
}
