package dev.stoker.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The Python package's help is the command line's: {@code python/stoker/_reference.json} equals
 * what {@link OptionsReference} reads off the commands now, and every option of every spec has a
 * meaning there. After a change of an option: {@code ./test -pl stoker-cli -am
 * -Dtest=OptionsReferenceTest -Dsurefire.failIfNoSpecifiedTests=false -Dstoker.reference.write=true}.
 */
class OptionsReferenceTest {
    private static final Path FILE = Path.of("../python/stoker/_reference.json");

    @Test
    void everyOptionOfEverySpecHasAMeaning() {
        assertEquals(List.of(), OptionsReference.build().get("missing"), "options no command describes");
    }

    @Test
    void thePythonPackageCarriesTheCommandLinesHelp() throws Exception {
        String now = OptionsReference.json();
        if (Boolean.getBoolean("stoker.reference.write")) {
            Files.writeString(FILE, now);
        }
        assertEquals(now, Files.readString(FILE), "python/stoker/_reference.json is stale: " + OptionsReferenceTest.class.getName()
                + "'s javadoc says how to write it again");
    }

    @Test
    void meaningsNameTheKeywordsNotTheFlags() {
        @SuppressWarnings("unchecked")
        Map<String, String> tokens = (Map<String, String>) ((Map<String, Object>) ((Map<String, Object>) OptionsReference.build()
                .get("sources")).get("tokens")).get("options");
        assertEquals(false, tokens.values().stream().anyMatch(m -> m.contains("--")), tokens.toString());
    }
}
