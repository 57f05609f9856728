package dev.stoker.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The bridge's two sides agree: {@link Protocol}'s table and the Python package's
 * {@code stoker/_protocol.py}, read by Python itself, hold the same names and values.
 */
class ProtocolContractTest {
    private static final Path PACKAGE = Path.of("..", "python", "stoker").toAbsolutePath().normalize();

    @Test
    void javaAndPythonHoldTheSameMessagesAndRingLayout() throws Exception {
        Path python = Path.of(System.getenv().getOrDefault("STOKER_PYTHON", "/usr/bin/python3"));
        assumeTrue(Files.isExecutable(python), "no " + python + ": the Python side of the contract is not checked");
        // the module alone, without the package's __init__ (which needs numpy)
        String script = String.join("\n",
                "import importlib.util, json, sys, types",
                "pkg = types.ModuleType('stoker'); pkg.__path__ = [sys.argv[1]]; sys.modules['stoker'] = pkg",
                "spec = importlib.util.spec_from_file_location('stoker._protocol', sys.argv[1] + '/_protocol.py')",
                "m = importlib.util.module_from_spec(spec); sys.modules['stoker._protocol'] = m; spec.loader.exec_module(m)",
                "print(json.dumps(m.table()))");
        Process p = new ProcessBuilder(python.toString(), "-c", script, PACKAGE.toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assumeTrue(p.waitFor(60, TimeUnit.SECONDS), "python did not answer");
        assertEquals(0, p.exitValue(), out);
        Map<String, String> java = new TreeMap<>();
        Protocol.table().forEach((k, v) -> java.put(k, String.valueOf(v)));
        assertEquals(java, parse(out.strip()), "Protocol.java and python/stoker/_protocol.py differ");
    }

    private static Map<String, String> parse(String json) throws IOException {
        Map<String, String> t = new TreeMap<>();
        try (JsonParser j = new JsonFactory().createParser(json)) {
            if (j.nextToken() != JsonToken.START_OBJECT) {
                throw new IOException("not a JSON object: " + json);
            }
            while (j.nextToken() == JsonToken.FIELD_NAME) {
                String name = j.currentName();
                j.nextToken();
                t.put(name, j.getText());
            }
        }
        return t;
    }
}
