package dev.stoker.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The bridge's two sides agree: {@link Protocol}'s table and the Python package's
 * {@code stoker/_protocol.py}, read by Python itself, hold the same names and values.
 */
class ProtocolContractTest {
    @Test
    void javaAndPythonHoldTheSameMessagesAndRingLayout() throws Exception {
        String out = PythonSide.print("_protocol", "print(json.dumps(m.table()))");
        Map<String, String> java = new TreeMap<>();
        Protocol.table().forEach((k, v) -> java.put(k, String.valueOf(v)));
        assertEquals(java, parse(out), "Protocol.java and python/stoker/_protocol.py differ");
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
