package dev.stoker.formats.records;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.stoker.formats.io.RecordJson;
import java.io.IOException;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * Files other loaders' own writers made ({@code src/test/resources/interop}), and the values they
 * were written from, as {@code stoker cat} prints them ({@code *.expected.jsonl}).
 */
public final class Interop {
    public static final Path DIR = Path.of("src/test/resources/interop");
    private static final ObjectMapper JSON = new ObjectMapper();

    private Interop() {
    }

    /** Each record of {@code source} as {@link RecordJson} prints it. */
    public static List<String> cat(RecordSource source) throws IOException {
        List<String> out = new ArrayList<>();
        for (long i = 0; i < source.size(); i++) {
            StringWriter w = new StringWriter();
            try (JsonGenerator g = new JsonFactory().createGenerator(w)) {
                RecordJson.write(g, source.get(i));
            }
            out.add(w.toString());
        }
        return out;
    }

    /** Asserts that {@code source} prints the lines of {@code expected}, record by record. */
    public static void assertPrints(Path expected, RecordSource source) throws IOException {
        List<String> want = Files.readAllLines(expected);
        List<String> got = cat(source);
        assertEquals(want.size(), got.size(), expected + ": records");
        for (int i = 0; i < want.size(); i++) {
            JsonNode w = JSON.readTree(want.get(i));
            JsonNode g = JSON.readTree(got.get(i));
            String diff = diff(w, g, "");
            if (diff != null) {
                fail(expected + " record " + i + ": " + diff + "\n  expected " + want.get(i) + "\n  got      " + got.get(i));
            }
        }
    }

    /**
     * Where two JSON values differ, or null: numbers equal as doubles, or as floats (a float32 or
     * float16 prints as the shortest decimal of its float, the writers' side as its exact value), integers exactly,
     * objects with the same keys in the same order.
     */
    static String diff(JsonNode want, JsonNode got, String at) {
        if (want.isNumber() && got.isNumber()) {
            if (want.isIntegralNumber() && got.isIntegralNumber()) {
                return want.bigIntegerValue().equals(got.bigIntegerValue()) ? null : at + ": " + want + " != " + got;
            }
            double a = want.doubleValue();
            double b = got.doubleValue();
            boolean same = a == b || (float) a == (float) b;
            return same ? null : at + ": " + want + " != " + got;
        }
        if (want.getNodeType() != got.getNodeType()) {
            return at + ": " + want.getNodeType() + " " + want + " != " + got.getNodeType() + " " + got;
        }
        if (want.isObject()) {
            List<String> wk = new ArrayList<>();
            want.fieldNames().forEachRemaining(wk::add);
            List<String> gk = new ArrayList<>();
            got.fieldNames().forEachRemaining(gk::add);
            if (!wk.equals(gk)) {
                return at + ": keys " + wk + " != " + gk;
            }
            for (String k : wk) {
                String d = diff(want.get(k), got.get(k), at + "." + k);
                if (d != null) {
                    return d;
                }
            }
            return null;
        }
        if (want.isArray()) {
            if (want.size() != got.size()) {
                return at + ": " + want.size() + " elements != " + got.size();
            }
            Iterator<JsonNode> a = want.elements();
            Iterator<JsonNode> b = got.elements();
            for (int i = 0; a.hasNext(); i++) {
                String d = diff(a.next(), b.next(), at + "[" + i + "]");
                if (d != null) {
                    return d;
                }
            }
            return null;
        }
        return want.equals(got) ? null : at + ": " + want + " != " + got;
    }

    /** A record as one JSON line (for messages). */
    public static String line(Map<String, Object> record) throws IOException {
        StringWriter w = new StringWriter();
        try (JsonGenerator g = new JsonFactory().createGenerator(w)) {
            RecordJson.write(g, record);
        }
        return w.toString();
    }
}
