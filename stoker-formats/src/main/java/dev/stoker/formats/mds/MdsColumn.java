package dev.stoker.formats.mds;

import com.fasterxml.jackson.databind.JsonNode;
import dev.stoker.CorruptRecordException;
import dev.stoker.CorruptShardException;
import dev.stoker.DType;
import dev.stoker.formats.records.JsonText;
import dev.stoker.formats.io.PilImage;
import dev.stoker.formats.records.Tensor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.math.BigInteger;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One column of an MDS dataset: its name, encoding and fixed size (or -1: a size per sample), and
 * how its bytes become a value (NOTE [MDS] in {@link MdsDataset}). Integers and floats become
 * scalars of their type ({@code int} an int64), {@code str_int} an integer (a {@link BigInteger}
 * past 64 bits), {@code str_float} a double, {@code str_decimal} its text, {@code json} the JSON
 * document, {@code ndarray} a {@link Tensor}, {@code pil} images of mode L, RGB or RGBA a uint8
 * tensor of shape {@code [height, width(, channels)]} (other modes their raw bytes), and
 * {@code jpeg}, {@code png} and {@code bytes} the stored bytes; lists of images are lists.
 */
record MdsColumn(String name, String encoding, long size) {
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** The columns a shard's index entry names, checked: every encoding known, none pickled. */
    static List<MdsColumn> of(String where, JsonNode names, JsonNode encodings, JsonNode sizes) throws CorruptShardException {
        if (!names.isArray() || !encodings.isArray() || !sizes.isArray() || names.size() != encodings.size()
                || names.size() != sizes.size() || names.isEmpty()) {
            throw new CorruptShardException(where, -1, "expected column_names, column_encodings and column_sizes of one length");
        }
        List<MdsColumn> out = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            String name = names.get(i).asText();
            String enc = encodings.get(i).asText();
            long size = sizes.get(i).isNull() ? -1 : sizes.get(i).asLong();
            if (enc.equals("pkl")) {
                throw new CorruptShardException(where, -1, "column '" + name + "' is pickled (pkl); Stoker never unpickles "
                        + "data (it can run code): write the column with another encoding");
            }
            long fixed;
            try {
                fixed = fixedSize(enc);
            } catch (ArithmeticException e) {
                throw new CorruptShardException(where, -1, "column '" + name + "' has encoding '" + enc + "', whose size overflows");
            }
            if (fixed == -2) {
                throw new CorruptShardException(where, -1, "column '" + name + "' has encoding '" + enc
                        + "', which Stoker does not know");
            }
            if (fixed >= 0 && size != fixed || fixed == -1 && size != -1) {
                throw new CorruptShardException(where, -1, "column '" + name + "' (" + enc + ") has size " + sizes.get(i)
                        + "; expected " + (fixed >= 0 ? fixed : "null"));
            }
            out.add(new MdsColumn(name, enc, size));
        }
        return List.copyOf(out);
    }

    /** The bytes of a value of {@code encoding}, -1 for a size per sample, -2 for an unknown encoding. */
    private static long fixedSize(String encoding) {
        DType t = scalar(encoding);
        if (t != null) {
            return t.byteSize();
        }
        if (encoding.equals("int")) {
            return 8;
        }
        if (encoding.startsWith("ndarray")) {
            NdArray a = NdArray.parse(encoding);
            return a == null ? -2 : a.fixedBytes();
        }
        return switch (encoding) {
            case "bytes", "str", "str_int", "str_float", "str_decimal", "json", "pil", "jpeg", "png", "jpeg_array", "jpegarray",
                 "list[pil]", "list[jpeg]", "list[png]" -> -1;
            default -> -2;
        };
    }

    private static DType scalar(String encoding) {
        return switch (encoding) {
            case "uint8" -> DType.UINT8;
            case "uint16" -> DType.UINT16;
            case "uint32" -> DType.UINT32;
            case "uint64" -> DType.UINT64;
            case "int8" -> DType.INT8;
            case "int16" -> DType.INT16;
            case "int32" -> DType.INT32;
            case "int64" -> DType.INT64;
            case "float16" -> DType.FLOAT16;
            case "float32" -> DType.FLOAT32;
            case "float64" -> DType.FLOAT64;
            default -> null;
        };
    }

    /** An {@code ndarray[:dtype[:d0,d1,...]]} encoding. */
    private record NdArray(DType dtype, long[] shape) {
        static NdArray parse(String encoding) {
            String[] parts = encoding.split(":", -1);
            if (!parts[0].equals("ndarray") || parts.length > 3) {
                return null;
            }
            DType dtype = null;
            long[] shape = null;
            if (parts.length >= 2) {
                dtype = scalar(parts[1]);
                if (dtype == null) {
                    return null;
                }
            }
            if (parts.length == 3) {
                try {
                    shape = Arrays.stream(parts[2].split(",")).mapToLong(Long::parseLong).toArray();
                } catch (NumberFormatException e) {
                    return null;
                }
                if (Arrays.stream(shape).anyMatch(d -> d < 1)) {
                    return null;
                }
            }
            return new NdArray(dtype, shape);
        }

        long fixedBytes() {
            if (dtype == null || shape == null) {
                return -1;
            }
            long n = dtype.byteSize();
            for (long d : shape) {
                n = Math.multiplyExact(n, d);
            }
            return n;
        }
    }

    /** Decodes one sample's bytes (at byte {@code base} of its shard) into column name -> value. */
    static Map<String, Object> decode(List<MdsColumn> columns, MemorySegment sample, String where, long base)
            throws CorruptRecordException {
        long[] sizes = new long[columns.size()];
        long at = 0;
        for (int c = 0; c < sizes.length; c++) {
            long s = columns.get(c).size;
            if (s < 0) {
                if (at + 4 > sample.byteSize()) {
                    throw new CorruptRecordException(where, base + at, "the sample ends inside its column sizes");
                }
                s = Integer.toUnsignedLong(sample.get(U32, at));
                at += 4;
            }
            sizes[c] = s;
        }
        Map<String, Object> out = new LinkedHashMap<>();
        for (int c = 0; c < sizes.length; c++) {
            MdsColumn col = columns.get(c);
            if (at + sizes[c] > sample.byteSize()) {
                throw new CorruptRecordException(where, base + at, "column '" + col.name + "' needs " + sizes[c]
                        + " bytes; the sample has " + (sample.byteSize() - at) + " left");
            }
            byte[] b = sample.asSlice(at, sizes[c]).toArray(ValueLayout.JAVA_BYTE);
            try {
                out.put(col.name, col.value(b));
            } catch (IllegalArgumentException | IndexOutOfBoundsException | ArithmeticException e) { // a shape that overflows too
                throw new CorruptRecordException(where, base + at, "column '" + col.name + "' (" + col.encoding + "): "
                        + e.getMessage());
            }
            at += sizes[c];
        }
        if (at != sample.byteSize()) {
            throw new CorruptRecordException(where, base + at, "the columns end at byte " + at + " of a sample of "
                    + sample.byteSize());
        }
        return out;
    }

    /** Whether the column's bytes are its value's little-endian bytes at a fixed size (a number, a static ndarray). */
    boolean raw() {
        return size >= 0 && (scalar(encoding) != null || encoding.equals("int") || encoding.startsWith("ndarray"));
    }

    /** This column's value from its bytes; IllegalArgumentException when they are not one. */
    Object value(byte[] b) {
        DType t = scalar(encoding);
        if (t != null) {
            return Tensor.scalar(t, b);
        }
        if (encoding.startsWith("ndarray")) {
            return ndarray(NdArray.parse(encoding), b);
        }
        return switch (encoding) {
            case "int" -> Tensor.scalar(DType.INT64, b);
            case "bytes", "jpeg", "png" -> b;
            case "str", "str_decimal" -> utf8(b);
            case "str_int" -> integer(utf8(b).trim());
            case "str_float" -> real(utf8(b).trim());
            case "json" -> new JsonText(utf8(b));
            case "pil" -> PilImage.decode(b);
            case "jpeg_array", "jpegarray" -> images(b, 0);
            case "list[pil]", "list[jpeg]", "list[png]" -> {
                List<Object> items = images(b, 4);
                if (encoding.equals("list[pil]")) {
                    items.replaceAll(o -> PilImage.decode((byte[]) o));
                }
                yield items;
            }
            default -> throw new IllegalArgumentException("unknown encoding");
        };
    }

    private static Object integer(String s) {
        try {
            BigInteger v = new BigInteger(s);
            return v.bitLength() < 64 ? (Object) v.longValue() : v;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + s + "' is not an integer");
        }
    }

    private static Double real(String s) {
        switch (s.toLowerCase(java.util.Locale.ROOT)) {
            case "nan", "+nan", "-nan" -> {
                return Double.NaN;
            }
            case "inf", "+inf", "infinity", "+infinity" -> {
                return Double.POSITIVE_INFINITY;
            }
            case "-inf", "-infinity" -> {
                return Double.NEGATIVE_INFINITY;
            }
            default -> {
                try {
                    return Double.valueOf(s);
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("'" + s + "' is not a number");
                }
            }
        }
    }

    private static String utf8(byte[] b) {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(java.nio.ByteBuffer.wrap(b)).toString();
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException("not UTF-8 text");
        }
    }

    private static Tensor ndarray(NdArray enc, byte[] b) {
        int at = 0;
        DType dtype = enc.dtype;
        if (dtype == null) {
            need(b, at, 1, "its dtype");
            dtype = switch (b[at++] & 0xFF) {
                case 8 -> DType.UINT8;
                case 9 -> DType.INT8;
                case 16 -> DType.UINT16;
                case 17 -> DType.INT16;
                case 18 -> DType.FLOAT16;
                case 32 -> DType.UINT32;
                case 33 -> DType.INT32;
                case 34 -> DType.FLOAT32;
                case 64 -> DType.UINT64;
                case 65 -> DType.INT64;
                case 66 -> DType.FLOAT64;
                default -> throw new IllegalArgumentException("dtype code " + (b[at - 1] & 0xFF) + " is not one of MDS's");
            };
        }
        long[] shape = enc.shape;
        if (shape == null) {
            need(b, at, 1, "its rank");
            int head = b[at++] & 0xFF;
            int ndim = head >> 2;
            int width = 1 << (head & 3);
            need(b, at, ndim * width, "its shape");
            shape = new long[ndim];
            for (int d = 0; d < ndim; d++) {
                long v = 0;
                for (int k = width - 1; k >= 0; k--) {
                    v = v << 8 | (b[at + d * width + k] & 0xFF);
                }
                if (v < 1) {
                    throw new IllegalArgumentException("dimension " + d + " is " + Long.toUnsignedString(v));
                }
                shape[d] = v;
            }
            at += ndim * width;
        }
        long n = dtype.byteSize();
        for (long d : shape) {
            n = Math.multiplyExact(n, d);
        }
        if (n != b.length - at) {
            throw new IllegalArgumentException(dtype.label() + Arrays.toString(shape) + " needs " + n + " bytes; the value has "
                    + (b.length - at));
        }
        return new Tensor(dtype, shape, Arrays.copyOfRange(b, at, b.length));
    }

    private static void need(byte[] b, int at, long n, String what) {
        if (at + n > b.length) {
            throw new IllegalArgumentException("the value ends inside " + what);
        }
    }

    /** {@code u32 n, u32 sizes[n], items} after {@code skip} reserved bytes. */
    private static List<Object> images(byte[] b, int skip) {
        java.nio.ByteBuffer h = java.nio.ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
        need(b, skip, 4, "its count");
        long n = Integer.toUnsignedLong(h.getInt(skip));
        long at = skip + 4 + 4 * n;
        need(b, 0, at, "its sizes");
        List<Object> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            long size = Integer.toUnsignedLong(h.getInt(skip + 4 + 4 * i));
            need(b, (int) at, size, "item " + i);
            out.add(Arrays.copyOfRange(b, (int) at, (int) (at + size)));
            at += size;
        }
        if (at != b.length) {
            throw new IllegalArgumentException("its items end at byte " + at + " of " + b.length);
        }
        return out;
    }

    @Override
    public String toString() {
        return name + ":" + encoding;
    }
}
