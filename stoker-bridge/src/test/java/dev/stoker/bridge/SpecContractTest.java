package dev.stoker.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.stoker.sources.Specs;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The Python package builds the specs the server reads: {@code stoker/_options.py}'s tables,
 * read by Python itself, name the same sources, the same options and the same nested specs as
 * {@link Specs} does from its records.
 */
class SpecContractTest {
    private static final Path PACKAGE = Path.of("..", "python", "stoker").toAbsolutePath().normalize();

    @Test
    void pythonBuildsTheSpecsJavaReads() throws Exception {
        Path python = Path.of(System.getenv().getOrDefault("STOKER_PYTHON", "/usr/bin/python3"));
        assumeTrue(Files.isExecutable(python), "no " + python + ": the Python side of the contract is not checked");
        String script = String.join("\n",
                "import importlib.util, json, sys, types",
                "pkg = types.ModuleType('stoker'); pkg.__path__ = [sys.argv[1]]; sys.modules['stoker'] = pkg",
                "spec = importlib.util.spec_from_file_location('stoker._options', sys.argv[1] + '/_options.py')",
                "m = importlib.util.module_from_spec(spec); sys.modules['stoker._options'] = m; spec.loader.exec_module(m)",
                "s = m.schema()",
                "for name in s['loader']: print('loader', name)",
                "for kind, options in s['sources'].items():",
                "    for name, group in options.items(): print('source', kind, name, group or '-')");
        Process p = new ProcessBuilder(python.toString(), "-c", script, PACKAGE.toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assumeTrue(p.waitFor(60, TimeUnit.SECONDS), "python did not answer");
        assertEquals(0, p.exitValue(), out);
        List<String> java = new ArrayList<>();
        Specs.loaderOptions().forEach(name -> java.add("loader " + name));
        for (String kind : Specs.kinds()) {
            Specs.options(kind).forEach((name, group) -> java.add("source " + kind + " " + name + " " + (group.isEmpty() ? "-" : group)));
        }
        assertEquals(String.join("\n", java), out.strip(), "the specs (Java) and python/stoker/_options.py (Python) differ");
    }
}
