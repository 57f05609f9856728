package dev.stoker.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The Python side of a contract test: one module of the {@code stoker} package, loaded alone (without
 * the package's {@code __init__}, which needs numpy) by {@code $STOKER_PYTHON} (default
 * {@code /usr/bin/python3}), as {@code m}, and what the given lines print. A test without that
 * Python is skipped, saying so.
 */
final class PythonSide {
    private static final Path PACKAGE = Path.of("..", "python", "stoker").toAbsolutePath().normalize();

    private PythonSide() {
    }

    /** What {@code lines}, run after {@code stoker.MODULE} is loaded as {@code m}, print (stripped). */
    static String print(String module, String... lines) throws Exception {
        Path python = Path.of(System.getenv().getOrDefault("STOKER_PYTHON", "/usr/bin/python3"));
        assumeTrue(Files.isExecutable(python), "no " + python + ": the Python side of the contract is not checked");
        List<String> script = new ArrayList<>(List.of(
                "import importlib.util, json, sys, types",
                "pkg = types.ModuleType('stoker'); pkg.__path__ = [sys.argv[1]]; sys.modules['stoker'] = pkg",
                "spec = importlib.util.spec_from_file_location('stoker." + module + "', sys.argv[1] + '/" + module + ".py')",
                "m = importlib.util.module_from_spec(spec); sys.modules['stoker." + module + "'] = m; spec.loader.exec_module(m)"));
        script.addAll(List.of(lines));
        Process p = new ProcessBuilder(python.toString(), "-c", String.join("\n", script), PACKAGE.toString())
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assumeTrue(p.waitFor(60, TimeUnit.SECONDS), "python did not answer");
        assertEquals(0, p.exitValue(), out);
        return out.strip();
    }
}
