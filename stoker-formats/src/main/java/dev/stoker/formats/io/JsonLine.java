package dev.stoker.formats.io;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Takes one string field out of one line of JSON, straight from its UTF-8 bytes to the field's
 * UTF-8 bytes, while checking that the whole line is one valid JSON object (RFC 8259, strict:
 * UTF-8 validated, no trailing commas, no leading zeros, nesting at most 1000 deep).
 *
 * <p>NOTE [JsonLine]: this is the hot loop of every JSON lines source, so strings are scanned
 * eight bytes at a time (a word with no quote, backslash, control or non-ASCII byte is copied
 * whole) and nothing is allocated per line but the output buffer's growth. It agrees with
 * Jackson's streaming parser on what is valid and what the field holds (JsonLineTest checks it
 * on random and mutated lines); lone UTF-16 surrogates in {@code \\u} escapes become {@code ?}, as
 * Java's encoder writes them. A field that appears twice keeps its last string value. Not
 * thread-safe: one per reader.
 */
public final class JsonLine {
    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long ONES = 0x0101010101010101L;
    private static final long HIGHS = 0x8080808080808080L;
    private static final int MAX_DEPTH = 1000;

    /** Why a line was refused; {@code column} is 1-based. */
    public static final class Malformed extends Exception {
        final int column;

        Malformed(String what, int column) {
            super(what + " at column " + column, null, false, false);
            this.column = column;
        }
    }

    private final byte[] field;
    private byte[] b;
    private int end;
    private int i;
    private byte[] out = new byte[4096];
    private int outLen;
    private boolean found;
    private byte[] valueArray;
    private int valueFrom;
    private int valueLen;
    private boolean foundNow;
    private byte[] scratch = new byte[256];

    public JsonLine(String field) {
        this.field = field.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    /**
     * Parses {@code bytes[from, to)}. True when the object has a string field of the name given;
     * its bytes are then {@link #value()}[0, {@link #length()}).
     */
    public boolean parse(byte[] bytes, int from, int to) throws Malformed {
        this.b = bytes;
        this.i = from;
        this.end = to;
        this.found = false;
        this.outLen = 0;
        int start = from;
        ws();
        if (i >= end || b[i] != '{') {
            throw error("expected a JSON object", start);
        }
        object(0, true, start);
        ws();
        if (i != end) {
            throw error("trailing characters after the JSON object", start);
        }
        return found;
    }

    /** The array holding the value: the line itself, or the output buffer when escapes were decoded. */
    public byte[] value() {
        return valueArray;
    }

    public int offset() {
        return valueFrom;
    }

    public int length() {
        return valueLen;
    }

    private Malformed error(String what, int start) {
        return new Malformed(what, i - start + 1);
    }

    private void ws() {
        while (i < end) {
            byte c = b[i];
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
                i++;
            } else {
                return;
            }
        }
    }

    private void value(int depth, int start) throws Malformed {
        if (i >= end) {
            throw error("unexpected end of line", start);
        }
        switch (b[i]) {
            case '{' -> object(depth + 1, false, start);
            case '[' -> array(depth + 1, start);
            case '"' -> string(false, start);
            case 't' -> literal("true", start);
            case 'f' -> literal("false", start);
            case 'n' -> literal("null", start);
            default -> number(start);
        }
    }

    private void object(int depth, boolean top, int start) throws Malformed {
        if (depth > MAX_DEPTH) {
            throw error("nesting deeper than " + MAX_DEPTH, start);
        }
        i++; // {
        ws();
        if (i < end && b[i] == '}') {
            i++;
            return;
        }
        while (true) {
            if (i >= end || b[i] != '"') {
                throw error("expected a field name", start);
            }
            boolean match;
            if (top) {
                match = keyMatches(start);
            } else {
                string(false, start);
                match = false;
            }
            ws();
            if (i >= end || b[i] != ':') {
                throw error("expected ':'", start);
            }
            i++;
            ws();
            if (match && i < end && b[i] == '"') {
                string(true, start);
                found = true;
            } else {
                value(depth, start);
            }
            ws();
            if (i < end && b[i] == ',') {
                i++;
                ws();
                continue;
            }
            if (i < end && b[i] == '}') {
                i++;
                return;
            }
            throw error("expected ',' or '}'", start);
        }
    }

    /** Reads a key (at its opening quote); true when it is the wanted field. */
    private boolean keyMatches(int start) throws Malformed {
        byte[] va = valueArray;
        int vf = valueFrom;
        int vl = valueLen;
        byte[] savedOut = out;
        int savedLen = outLen;
        out = scratch;
        outLen = 0;
        try {
            string(true, start);
            scratch = out;
            return valueLen == field.length && Arrays.equals(valueArray, valueFrom, valueFrom + valueLen, field, 0, field.length);
        } finally {
            out = savedOut;
            outLen = savedLen;
            valueArray = va;
            valueFrom = vf;
            valueLen = vl;
        }
    }

    private void array(int depth, int start) throws Malformed {
        if (depth > MAX_DEPTH) {
            throw error("nesting deeper than " + MAX_DEPTH, start);
        }
        i++; // [
        ws();
        if (i < end && b[i] == ']') {
            i++;
            return;
        }
        while (true) {
            value(depth, start);
            ws();
            if (i < end && b[i] == ',') {
                i++;
                ws();
                continue;
            }
            if (i < end && b[i] == ']') {
                i++;
                return;
            }
            throw error("expected ',' or ']'", start);
        }
    }

    private void literal(String word, int start) throws Malformed {
        int n = word.length();
        if (end - i < n) {
            throw error("unexpected end of line", start);
        }
        for (int k = 0; k < n; k++) {
            if (b[i + k] != word.charAt(k)) {
                throw error("unrecognized token", start);
            }
        }
        i += n;
    }

    private void number(int start) throws Malformed {
        int s = i;
        if (i < end && b[i] == '-') {
            i++;
        }
        if (i >= end || !digit(b[i])) {
            i = s;
            throw error("unexpected character '" + printable(s) + "'", start);
        }
        if (b[i] == '0') {
            i++;
            if (i < end && digit(b[i])) {
                throw error("leading zeroes are not allowed", start);
            }
        } else {
            while (i < end && digit(b[i])) {
                i++;
            }
        }
        if (i < end && b[i] == '.') {
            i++;
            if (i >= end || !digit(b[i])) {
                throw error("expected a digit after the decimal point", start);
            }
            while (i < end && digit(b[i])) {
                i++;
            }
        }
        if (i < end && (b[i] == 'e' || b[i] == 'E')) {
            i++;
            if (i < end && (b[i] == '+' || b[i] == '-')) {
                i++;
            }
            if (i >= end || !digit(b[i])) {
                throw error("expected a digit in the exponent", start);
            }
            while (i < end && digit(b[i])) {
                i++;
            }
        }
    }

    private String printable(int at) {
        int c = b[at] & 0xFF;
        return c >= 0x20 && c < 0x7F ? String.valueOf((char) c) : String.format("\\x%02x", c);
    }

    private static boolean digit(byte c) {
        return c >= '0' && c <= '9';
    }

    /**
     * A string at its opening quote; with {@code keep}, it becomes the value. A string without
     * escapes is already its own UTF-8 bytes: the value is then a slice of the line, not a copy.
     * Only an escape makes the bytes before it (and everything after) go to the output buffer.
     */
    private void string(boolean keep, int start) throws Malformed {
        i++; // "
        int run = i;          // start of the bytes not yet copied
        boolean copying = false;
        while (true) {
            // eight plain bytes at a time: no quote, backslash, control or non-ASCII byte
            while (end - i >= 8) {
                long w = (long) LONG.get(b, i);
                long special = ((w ^ (ONES * '"')) - ONES) & ~(w ^ (ONES * '"'))
                        | ((w ^ (ONES * '\\')) - ONES) & ~(w ^ (ONES * '\\'))
                        | (w - ONES * 0x20) & ~w
                        | w;
                if ((special & HIGHS) != 0) {
                    break;
                }
                i += 8;
            }
            if (i >= end) {
                throw error("unterminated string", start);
            }
            int c = b[i] & 0xFF;
            if (c == '"') {
                if (keep) {
                    if (copying) {
                        append(run, i);
                        valueArray = out;
                        valueFrom = 0;
                        valueLen = outLen;
                    } else {
                        valueArray = b;
                        valueFrom = run;
                        valueLen = i - run;
                    }
                }
                i++;
                return;
            }
            if (c == '\\') {
                if (keep) {
                    if (!copying) {
                        outLen = 0;
                        copying = true;
                    }
                    append(run, i);
                }
                escape(keep, start);
                run = i;
            } else if (c < 0x20) {
                throw error("control character " + String.format("0x%02x", c) + " in a string", start);
            } else if (c < 0x80) {
                i++;
            } else {
                utf8(start);
            }
        }
    }

    private void append(int from, int to) {
        int n = to - from;
        ensure(n);
        System.arraycopy(b, from, out, outLen, n);
        outLen += n;
    }

    private void escape(boolean keep, int start) throws Malformed {
        if (i + 1 >= end) {
            throw error("unterminated escape", start);
        }
        byte e = b[i + 1];
        int cp;
        switch (e) {
            case '"' -> cp = '"';
            case '\\' -> cp = '\\';
            case '/' -> cp = '/';
            case 'b' -> cp = '\b';
            case 'f' -> cp = '\f';
            case 'n' -> cp = '\n';
            case 'r' -> cp = '\r';
            case 't' -> cp = '\t';
            case 'u' -> {
                int u = hex4(i + 2, start);
                i += 6;
                if (u >= 0xD800 && u <= 0xDBFF && end - i >= 6 && b[i] == '\\' && b[i + 1] == 'u') {
                    int lo = hex4(i + 2, start);
                    if (lo >= 0xDC00 && lo <= 0xDFFF) {
                        i += 6;
                        put(keep, 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00));
                        return;
                    }
                }
                put(keep, u >= 0xD800 && u <= 0xDFFF ? '?' : u); // a lone surrogate, as Java encodes it
                return;
            }
            default -> throw error("unrecognized escape '\\" + printable(i + 1) + "'", start);
        }
        i += 2;
        put(keep, cp);
    }

    private int hex4(int at, int start) throws Malformed {
        if (end - at < 4) {
            throw error("incomplete \\u escape", start);
        }
        int v = 0;
        for (int k = 0; k < 4; k++) {
            int c = b[at + k];
            int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
            if (d < 0) {
                throw error("bad hex digit in a \\u escape", start);
            }
            v = v << 4 | d;
        }
        return v;
    }

    /** Writes a code point as UTF-8. */
    private void put(boolean keep, int cp) {
        if (!keep) {
            return;
        }
        ensure(4);
        if (cp < 0x80) {
            out[outLen++] = (byte) cp;
        } else if (cp < 0x800) {
            out[outLen++] = (byte) (0xC0 | cp >> 6);
            out[outLen++] = (byte) (0x80 | cp & 0x3F);
        } else if (cp < 0x10000) {
            out[outLen++] = (byte) (0xE0 | cp >> 12);
            out[outLen++] = (byte) (0x80 | cp >> 6 & 0x3F);
            out[outLen++] = (byte) (0x80 | cp & 0x3F);
        } else {
            out[outLen++] = (byte) (0xF0 | cp >> 18);
            out[outLen++] = (byte) (0x80 | cp >> 12 & 0x3F);
            out[outLen++] = (byte) (0x80 | cp >> 6 & 0x3F);
            out[outLen++] = (byte) (0x80 | cp & 0x3F);
        }
    }

    /** One UTF-8 sequence (at a byte >= 0x80), validated as RFC 3629 defines it. */
    private void utf8(int start) throws Malformed {
        int c = b[i] & 0xFF;
        int n;
        int min;
        int cp;
        if (c >= 0xC2 && c <= 0xDF) {
            n = 2;
            cp = c & 0x1F;
            min = 0x80;
        } else if (c >= 0xE0 && c <= 0xEF) {
            n = 3;
            cp = c & 0x0F;
            min = 0x800;
        } else if (c >= 0xF0 && c <= 0xF4) {
            n = 4;
            cp = c & 0x07;
            min = 0x10000;
        } else {
            throw error("invalid UTF-8 start byte " + String.format("0x%02x", c), start);
        }
        if (end - i < n) {
            throw error("invalid UTF-8: sequence cut short", start);
        }
        for (int k = 1; k < n; k++) {
            int d = b[i + k] & 0xFF;
            if ((d & 0xC0) != 0x80) {
                throw error("invalid UTF-8 middle byte " + String.format("0x%02x", d), start);
            }
            cp = cp << 6 | d & 0x3F;
        }
        if (cp < min || cp > 0x10FFFF || cp >= 0xD800 && cp <= 0xDFFF) {
            throw error("invalid UTF-8 sequence (code point " + Integer.toHexString(cp) + ")", start);
        }
        i += n;
    }

    private void ensure(int n) {
        if (outLen + n > out.length) {
            out = Arrays.copyOf(out, Math.max(outLen + n, out.length * 2));
        }
    }
}
