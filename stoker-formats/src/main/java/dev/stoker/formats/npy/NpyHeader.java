package dev.stoker.formats.npy;

import dev.stoker.CorruptShardException;
import dev.stoker.DType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The header of a {@code .npy} file, format versions 1, 2 and 3: magic {@code \x93NUMPY}, major and
 * minor version, header length (2 bytes in v1, 4 in v2 and v3), then a Python dict literal
 * ({@code {'descr': '<u2', 'fortran_order': False, 'shape': (3, 4), }}) padded with spaces and a
 * newline. The dict is parsed as data by a small literal parser, never evaluated.
 */
record NpyHeader(int major, int minor, DType dtype, ByteOrder order, boolean fortranOrder, long[] shape, long dataOffset) {

    static final byte[] MAGIC = {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y'};

    static NpyHeader parse(MemorySegment file, String name) throws CorruptShardException {
        long size = file.byteSize();
        if (size < 10) {
            throw new CorruptShardException(name, size, "truncated .npy: " + size + " bytes, the header alone needs at least 10");
        }
        for (int i = 0; i < MAGIC.length; i++) {
            if (file.get(ValueLayout.JAVA_BYTE, i) != MAGIC[i]) {
                throw new CorruptShardException(name, 0, "not a .npy file: expected the magic \\x93NUMPY");
            }
        }
        int major = file.get(ValueLayout.JAVA_BYTE, 6) & 0xFF;
        int minor = file.get(ValueLayout.JAVA_BYTE, 7) & 0xFF;
        long headerLen;
        long start;
        if (major == 1) {
            headerLen = file.get(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 8) & 0xFFFF;
            start = 10;
        } else if (major == 2 || major == 3) {
            if (size < 12) {
                throw new CorruptShardException(name, size, "truncated .npy v" + major + " header");
            }
            headerLen = file.get(ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 8) & 0xFFFF_FFFFL;
            start = 12;
        } else {
            throw new CorruptShardException(name, 6, "unsupported .npy format version " + major + "." + minor
                    + " (expected 1.0, 2.0 or 3.0)");
        }
        if (headerLen > (1 << 20)) {
            throw new CorruptShardException(name, 8, "header of " + headerLen + " bytes (numpy writes a few hundred)");
        }
        if (start + headerLen > size) {
            throw new CorruptShardException(name, start, "header of " + headerLen + " bytes runs past the end of the file ("
                    + size + " bytes)");
        }
        byte[] bytes = file.asSlice(start, headerLen).toArray(ValueLayout.JAVA_BYTE);
        String text = new String(bytes, major == 3 ? StandardCharsets.UTF_8 : StandardCharsets.ISO_8859_1);
        Map<String, Object> dict;
        try {
            Object v = new Literal(text).parseTop();
            if (!(v instanceof Map<?, ?>)) {
                throw new CorruptShardException(name, start, "header is not a dict: " + abbreviate(text));
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> m = (Map<String, Object>) v;
            dict = m;
        } catch (Literal.SyntaxError e) {
            throw new CorruptShardException(name, start + e.at, "malformed header: " + e.getMessage() + " in " + abbreviate(text));
        }
        Object descr = dict.get("descr");
        Object fortran = dict.get("fortran_order");
        Object shapeObj = dict.get("shape");
        if (descr == null || fortran == null || shapeObj == null) {
            throw new CorruptShardException(name, start, "header lacks 'descr', 'fortran_order' or 'shape': " + abbreviate(text));
        }
        if (descr instanceof List<?>) {
            throw new CorruptShardException(name, start, "structured dtypes are not supported (descr " + abbreviate(String.valueOf(descr)) + ")");
        }
        if (!(descr instanceof String d) || !(fortran instanceof Boolean f) || !(shapeObj instanceof List<?> shapeList)) {
            throw new CorruptShardException(name, start, "header has the wrong types: " + abbreviate(text));
        }
        ByteOrder order;
        DType dtype = dtypeOf(d, name, start);
        char o = d.charAt(0);
        order = o == '>' ? ByteOrder.BIG_ENDIAN : (o == '<' || o == '|') ? ByteOrder.LITTLE_ENDIAN : ByteOrder.nativeOrder();
        long[] shape = new long[shapeList.size()];
        long elements = 1;
        long need;
        try {
            for (int i = 0; i < shape.length; i++) {
                if (!(shapeList.get(i) instanceof Long dim) || dim < 0) {
                    throw new CorruptShardException(name, start, "shape must hold non-negative integers: " + shapeList);
                }
                shape[i] = dim;
                elements = Math.multiplyExact(elements, dim);
            }
            need = Math.multiplyExact(elements, (long) dtype.byteSize());
        } catch (ArithmeticException e) {
            throw new CorruptShardException(name, start, "shape " + shapeList + " is larger than any file");
        }
        long dataOffset = start + headerLen;
        if (size - dataOffset < need) {
            throw new CorruptShardException(name, size, "truncated: shape " + java.util.Arrays.toString(shape) + " of "
                    + d + " needs " + need + " data bytes from byte " + dataOffset + ", the file has " + (size - dataOffset));
        }
        return new NpyHeader(major, minor, dtype, order, f, shape, dataOffset);
    }

    /** Numeric dtypes only: {@code b1 i1 u1 i2 u2 i4 u4 i8 u8 f2 f4 f8} with any byte order. */
    static DType dtypeOf(String d, String name, long at) throws CorruptShardException {
        if (d.length() < 3 || "<>|=".indexOf(d.charAt(0)) < 0) {
            throw unsupported(d, name, at);
        }
        return switch (d.substring(1)) {
            case "b1" -> DType.BOOL;
            case "i1" -> DType.INT8;
            case "u1" -> DType.UINT8;
            case "i2" -> DType.INT16;
            case "u2" -> DType.UINT16;
            case "i4" -> DType.INT32;
            case "u4" -> DType.UINT32;
            case "i8" -> DType.INT64;
            case "u8" -> DType.UINT64;
            case "f2" -> DType.FLOAT16;
            case "f4" -> DType.FLOAT32;
            case "f8" -> DType.FLOAT64;
            default -> throw unsupported(d, name, at);
        };
    }

    private static CorruptShardException unsupported(String d, String name, long at) {
        String why = d.contains("O") ? " (object arrays hold pickled Python objects and are never loaded)" : "";
        return new CorruptShardException(name, at, "dtype '" + d + "' is not supported" + why
                + "; numeric dtypes only: b1 i1 u1 i2 u2 i4 u4 i8 u8 f2 f4 f8");
    }

    private static String abbreviate(String s) {
        String t = s.strip();
        return t.length() > 120 ? t.substring(0, 117) + "..." : t;
    }

    /** The Python literals a numpy header uses: dicts, strings, booleans, None, ints, tuples, lists. */
    static final class Literal {
        private final String s;
        private int i;

        Literal(String s) {
            this.s = s;
        }

        static final class SyntaxError extends Exception {
            final int at;

            SyntaxError(String message, int at) {
                super(message + " at character " + at);
                this.at = at;
            }
        }

        Object parseTop() throws SyntaxError {
            Object v = value();
            ws();
            if (i != s.length()) {
                throw new SyntaxError("unexpected '" + s.charAt(i) + "'", i);
            }
            return v;
        }

        private void ws() {
            while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
                i++;
            }
        }

        private int depth;

        private Object value() throws SyntaxError {
            if (++depth > 64) {
                throw new SyntaxError("nesting too deep", i);
            }
            try {
                return value0();
            } finally {
                depth--;
            }
        }

        private Object value0() throws SyntaxError {
            ws();
            if (i >= s.length()) {
                throw new SyntaxError("unexpected end", i);
            }
            char c = s.charAt(i);
            switch (c) {
                case '{':
                    return dict();
                case '(':
                    return sequence('(', ')');
                case '[':
                    return sequence('[', ']');
                case '\'':
                case '"':
                    return string(c);
                default:
                    if (c == '-' || Character.isDigit(c)) {
                        return number();
                    }
                    return word();
            }
        }

        private Map<String, Object> dict() throws SyntaxError {
            Map<String, Object> m = new LinkedHashMap<>();
            i++;
            while (true) {
                ws();
                if (i < s.length() && s.charAt(i) == '}') {
                    i++;
                    return m;
                }
                Object k = value();
                if (!(k instanceof String key)) {
                    throw new SyntaxError("dict keys must be strings", i);
                }
                ws();
                expect(':');
                m.put(key, value());
                ws();
                if (i < s.length() && s.charAt(i) == ',') {
                    i++;
                } else {
                    ws();
                    expect('}');
                    return m;
                }
            }
        }

        private List<Object> sequence(char open, char close) throws SyntaxError {
            List<Object> out = new ArrayList<>();
            i++;
            while (true) {
                ws();
                if (i < s.length() && s.charAt(i) == close) {
                    i++;
                    return out;
                }
                out.add(value());
                ws();
                if (i < s.length() && s.charAt(i) == ',') {
                    i++;
                } else {
                    expect(close);
                    return out;
                }
            }
        }

        private String string(char quote) throws SyntaxError {
            int start = ++i;
            StringBuilder b = new StringBuilder();
            while (i < s.length() && s.charAt(i) != quote) {
                char c = s.charAt(i++);
                if (c == '\\' && i < s.length()) {
                    c = s.charAt(i++);
                }
                b.append(c);
            }
            if (i >= s.length()) {
                throw new SyntaxError("unterminated string", start - 1);
            }
            i++;
            return b.toString();
        }

        private Long number() throws SyntaxError {
            int start = i;
            if (s.charAt(i) == '-') {
                i++;
            }
            while (i < s.length() && Character.isDigit(s.charAt(i))) {
                i++;
            }
            if (i < s.length() && (s.charAt(i) == 'L' || s.charAt(i) == 'l')) {
                i++; // Python 2 long suffix, as old numpy wrote
                return parse(s.substring(start, i - 1), start);
            }
            return parse(s.substring(start, i), start);
        }

        private Long parse(String t, int at) throws SyntaxError {
            try {
                return Long.parseLong(t);
            } catch (NumberFormatException e) {
                throw new SyntaxError("bad integer '" + t + "'", at);
            }
        }

        private Object word() throws SyntaxError {
            int start = i;
            while (i < s.length() && Character.isLetter(s.charAt(i))) {
                i++;
            }
            return switch (s.substring(start, i)) {
                case "True" -> Boolean.TRUE;
                case "False" -> Boolean.FALSE;
                case "None" -> "None";
                default -> throw new SyntaxError("unexpected '" + s.substring(start, Math.min(s.length(), start + 10)) + "'", start);
            };
        }

        private void expect(char c) throws SyntaxError {
            if (i >= s.length() || s.charAt(i) != c) {
                throw new SyntaxError("expected '" + c + "'", i);
            }
            i++;
        }
    }
}
