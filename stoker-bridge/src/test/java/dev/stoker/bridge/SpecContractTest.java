package dev.stoker.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.stoker.sources.Specs;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The Python package builds the specs the server reads: {@code stoker/_options.py}'s tables,
 * read by Python itself, name the same sources, the same options and the same nested specs as
 * {@link Specs} does from its records.
 */
class SpecContractTest {
    @Test
    void pythonBuildsTheSpecsJavaReads() throws Exception {
        String out = PythonSide.print("_options",
                "s = m.schema()",
                "for name in s['loader']: print('loader', name)",
                "for kind, options in s['sources'].items():",
                "    for name, group in options.items(): print('source', kind, name, group or '-')");
        List<String> java = new ArrayList<>();
        Specs.loaderOptions().forEach(name -> java.add("loader " + name));
        for (String kind : Specs.kinds()) {
            Specs.options(kind).forEach((name, group) -> java.add("source " + kind + " " + name + " " + (group.isEmpty() ? "-" : group)));
        }
        assertEquals(String.join("\n", java), out, "the specs (Java) and python/stoker/_options.py (Python) differ");
    }
}
