package dev.stoker.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.sources.Specs;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The docs' option tables are the specs': {@code docs/options.md} equals what
 * {@link OptionsReference#markdown()} writes from the schema and the flags now, and names every
 * option of every spec. After a change of an option: {@code ./test -pl stoker-cli -am
 * -Dtest=OptionTablesTest -Dsurefire.failIfNoSpecifiedTests=false -Dstoker.reference.write=true}.
 */
class OptionTablesTest {
    private static final Path FILE = Path.of("../docs/options.md");

    @Test
    void theDocsTablesAreTheSpecs() throws Exception {
        OptionsReferenceTest.holds(FILE, OptionsReference.markdown(), OptionTablesTest.class);
    }

    @Test
    void everyOptionHasItsRow() {
        String md = OptionsReference.markdown();
        for (String name : Specs.loaderOptions()) {
            assertTrue(md.contains("| `" + name + "` | `" + Main.flag(name) + "` |"), name);
        }
        for (String kind : Specs.kinds()) {
            assertTrue(md.contains("## Source `" + kind + "`"), kind);
            for (String name : Specs.options(kind).keySet()) {
                assertTrue(md.contains("| `" + name + "` | "), kind + "." + name);
            }
        }
    }
}
