package dev.stoker.formats.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * JsonLine against Jackson's streaming parser as the oracle: on generated lines and on lines
 * mutated byte by byte (flips, cuts, insertions), both must agree on validity and on the field's
 * bytes, except that JsonLine also refuses invalid UTF-8 that Jackson lets through (overlong
 * forms), as the standard and Python's json module do.
 */
class JsonLineTest {
    private static final JsonFactory JACKSON = new JsonFactory();

    /** Jackson's verdict: null when the line is not one valid JSON object, else the field's UTF-8 bytes (or an empty marker). */
    static byte[] oracle(byte[] line, String field) {
        byte[] value = null;
        try (JsonParser p = JACKSON.createParser(line)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken t = p.nextToken();
                if (name.equals(field) && t == JsonToken.VALUE_STRING) {
                    value = p.getText().getBytes(StandardCharsets.UTF_8);
                } else {
                    p.skipChildren();
                }
            }
            if (p.currentToken() != JsonToken.END_OBJECT || p.nextToken() != null) {
                return null;
            }
        } catch (IOException e) {
            return null;
        }
        return value == null ? MISSING : value;
    }

    static final byte[] MISSING = new byte[] {'\u0000', 'M'};

    static byte[] mine(JsonLine j, byte[] line) {
        try {
            return j.parse(line, 0, line.length) ? Arrays.copyOfRange(j.value(), j.offset(), j.offset() + j.length()) : MISSING;
        } catch (JsonLine.Malformed e) {
            return null;
        }
    }

    static final String[] STRINGS = {"plain text", "", "ascii with \\\"quotes\\\" and \\\\ slashes", "tab\\tnew\\nline\\r",
        "unicode é ü ß 日本 😀", "\\u00e9\\u65e5\\ud83d\\ude00", "lone \\ud800 surrogate", "slash \\/ b\\b f\\f",
        "long " + "abcdefgh".repeat(40), "ends with backslash \\\\", "\\u0000 nul escaped"};

    static String value(SplittableRandom r, int depth) {
        switch (r.nextInt(depth > 3 ? 5 : 7)) {
            case 0: return "\"" + STRINGS[r.nextInt(STRINGS.length)] + "\"";
            case 1: return String.valueOf(r.nextInt(-1000, 1000));
            case 2: return r.nextBoolean() ? "3.25e-7" : "-0.5";
            case 3: return r.nextBoolean() ? "true" : r.nextBoolean() ? "false" : "null";
            case 4: return "\"\"";
            case 5: {
                StringBuilder b = new StringBuilder("[");
                int n = r.nextInt(4);
                for (int k = 0; k < n; k++) {
                    b.append(k > 0 ? ", " : "").append(value(r, depth + 1));
                }
                return b.append("]").toString();
            }
            default: return object(r, depth + 1);
        }
    }

    static String object(SplittableRandom r, int depth) {
        StringBuilder b = new StringBuilder("{");
        int n = r.nextInt(5);
        String[] keys = {"text", "id", "meta", "t\\u0065xt", "texts", "te"};
        for (int k = 0; k < n; k++) {
            b.append(k > 0 ? (r.nextBoolean() ? "," : " , ") : "").append('"').append(keys[r.nextInt(keys.length)]).append("\":")
                    .append(r.nextBoolean() ? " " : "").append(value(r, depth));
        }
        return b.append("}").toString();
    }

    @Test
    void agreesWithJacksonOnGeneratedAndMutatedLines() {
        SplittableRandom r = new SplittableRandom(42);
        JsonLine j = new JsonLine("text");
        int valid = 0;
        int invalid = 0;
        for (int n = 0; n < 30_000; n++) {
            byte[] generated = (r.nextInt(4) == 0 ? " " : "").concat(object(r, 0)).getBytes(StandardCharsets.UTF_8);
            byte[] line = n % 2 == 1 ? mutate(generated, r) : generated;
            // Jackson accepts some invalid UTF-8 (overlong forms); the standard, Python's json and
            // Stoker refuse it: a line that is not strict UTF-8 must be refused
            byte[] want = strictUtf8(line) ? oracle(line, "text") : null;
            byte[] got = mine(j, line);
            if (want == null) {
                invalid++;
            } else {
                valid++;
            }
            if (want == null || got == null) {
                assertEquals(want == null, got == null, () -> "validity differs on: " + show(line));
            } else {
                assertTrue(Arrays.equals(want, got), () -> "field differs on: " + show(line) + " jackson=" + show(want)
                        + " mine=" + show(got));
            }
        }
        assertTrue(valid > 10_000 && invalid > 3_000, valid + " valid, " + invalid + " invalid lines");
    }

    static boolean strictUtf8(byte[] line) {
        try {
            StandardCharsets.UTF_8.newDecoder().onMalformedInput(java.nio.charset.CodingErrorAction.REPORT)
                    .onUnmappableCharacter(java.nio.charset.CodingErrorAction.REPORT).decode(java.nio.ByteBuffer.wrap(line));
            return true;
        } catch (java.nio.charset.CharacterCodingException e) {
            return false;
        }
    }

    static byte[] mutate(byte[] line, SplittableRandom r) {
        byte[] out = line.clone();
        switch (r.nextInt(4)) {
            case 0 -> out[r.nextInt(out.length)] = (byte) r.nextInt(256);
            case 1 -> out = Arrays.copyOf(out, r.nextInt(out.length));
            case 2 -> {
                int at = r.nextInt(out.length);
                byte[] ins = {'"', '\\', ',', '}', ']', '{', (byte) 0xC3, (byte) 0xE2, 0x01, ' '};
                byte[] grown = new byte[out.length + 1];
                System.arraycopy(out, 0, grown, 0, at);
                grown[at] = ins[r.nextInt(ins.length)];
                System.arraycopy(out, at, grown, at + 1, out.length - at);
                out = grown;
            }
            default -> {
                int at = r.nextInt(out.length);
                out[at] = (byte) "\"\\,:{}[]0-eE.u".charAt(r.nextInt(14));
            }
        }
        return out;
    }

    static String show(byte[] b) {
        StringBuilder s = new StringBuilder();
        for (byte x : b) {
            int c = x & 0xFF;
            s.append(c >= 0x20 && c < 0x7F ? String.valueOf((char) c) : String.format("\\x%02x", c));
        }
        return s.toString();
    }

    @Test
    void refusesWhatTheStandardRefuses() {
        JsonLine j = new JsonLine("text");
        String[] bad = {"", "[]", "{\"text\": \"a\",}", "{\"text\": 01}", "{\"text\": \"a\"} x", "{'text': 'a'}",
            "{\"text\": \"a\u0001\"}", "{\"text\": \"\\x\"}", "{\"text\": NaN}", "{\"text\": \"a\"", "{\"text\" \"a\"}"};
        for (String s : bad) {
            assertEquals(null, mine(j, s.getBytes(StandardCharsets.UTF_8)), s);
        }
        byte[][] badUtf8 = {{'{', '"', 't', 'e', 'x', 't', '"', ':', '"', (byte) 0xC0, (byte) 0x80, '"', '}'},
            {'{', '"', 't', 'e', 'x', 't', '"', ':', '"', (byte) 0xED, (byte) 0xA0, (byte) 0x80, '"', '}'},
            {'{', '"', 't', 'e', 'x', 't', '"', ':', '"', (byte) 0xF5, (byte) 0x80, (byte) 0x80, (byte) 0x80, '"', '}'}};
        for (byte[] s : badUtf8) {
            assertEquals(null, mine(j, s), "overlong, surrogate and out-of-range UTF-8 are refused: " + show(s));
        }
        StringBuilder deep = new StringBuilder("{\"a\":");
        deep.append("[".repeat(1001)).append("]".repeat(1001)).append("}");
        assertEquals(null, mine(j, deep.toString().getBytes(StandardCharsets.UTF_8)), "nesting is bounded");
    }
}
