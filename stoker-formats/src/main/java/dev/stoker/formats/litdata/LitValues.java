package dev.stoker.formats.litdata;

import dev.stoker.CorruptShardException;
import dev.stoker.DType;
import dev.stoker.formats.io.PilImage;
import dev.stoker.formats.records.Tensor;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * LitData's serializers, by their {@code data_format} names: {@code int} (int64), {@code float}
 * (float64), {@code bool}, {@code str}/{@code text}, {@code bytes}, {@code numpy} and
 * {@code tensor} (a header of dtype index, rank and shape, then the values), their
 * {@code no_header_*:IDX} 1-D forms, {@code pil}, and the raw bytes of {@code jpeg} and of files
 * kept with their extension ({@code image:png}, {@code video:mp4}, {@code file:...}). Pickled
 * leaves are refused by name, never unpickled.
 */
final class LitValues {
    /** numpy dtypes by LitData's index ({@code _NUMPY_SCTYPES}); null: one Stoker does not read. */
    private static final DType[] NUMPY = {DType.INT8, DType.INT16, DType.INT32, DType.INT64, DType.UINT8, DType.UINT16,
        DType.UINT32, DType.UINT64, DType.FLOAT16, DType.FLOAT32, DType.FLOAT64, null, null, DType.BOOL};
    /** torch dtypes by LitData's index ({@code _TORCH_DTYPES_MAPPING}). */
    private static final DType[] TORCH = {DType.FLOAT32, DType.FLOAT32, DType.FLOAT64, DType.FLOAT64, null, null, null, null,
        DType.FLOAT16, DType.FLOAT16, DType.BFLOAT16, DType.UINT8, DType.INT8, DType.INT16, DType.INT16, DType.INT32, DType.INT32,
        DType.INT64, DType.INT64, DType.BOOL, DType.UINT16};

    private LitValues() {
    }

    /** Refuses a serializer Stoker does not read, naming the leaf. */
    static void check(String where, int leaf, String format) throws CorruptShardException {
        String base = format.split(":", 2)[0];
        switch (base) {
            case "pickle", "graph" -> throw new CorruptShardException(where, -1, "leaf " + leaf + " is serialized as '" + format
                    + "', which may hold pickled data; Stoker never unpickles data (it can run code): write it with another serializer");
            case "int", "float", "bool", "str", "text", "bytes", "numpy", "tensor", "pil", "jpeg", "jpeg_array", "image", "video",
                 "audio", "file", "pdf", "nifti", "mesh", "tiff" -> {
            }
            case "no_header_numpy", "no_header_tensor" -> {
                if (rawType(format) == null) {
                    throw new CorruptShardException(where, -1, "leaf " + leaf + " is '" + format + "', a dtype Stoker does not read");
                }
            }
            default -> throw new CorruptShardException(where, -1, "leaf " + leaf + " is serialized as '" + format
                    + "', which Stoker does not know");
        }
    }

    /** The element type of a {@code no_header_numpy:IDX} or {@code no_header_tensor:IDX} leaf, or null. */
    static DType rawType(String format) {
        String[] p = format.split(":", 2);
        if (p.length != 2 || !(p[0].equals("no_header_numpy") || p[0].equals("no_header_tensor"))) {
            return null;
        }
        try {
            int i = Integer.parseInt(p[1]);
            DType[] table = p[0].equals("no_header_numpy") ? NUMPY : TORCH;
            return i >= 0 && i < table.length ? table[i] : null;
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** A leaf's value from its bytes; IllegalArgumentException when they are not one. */
    static Object decode(String format, byte[] b) {
        ByteBuffer le = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
        String base = format.split(":", 2)[0];
        return switch (base) {
            case "int" -> Tensor.scalar(DType.INT64, exactly(b, 8));
            case "float" -> Tensor.scalar(DType.FLOAT64, exactly(b, 8));
            case "bool" -> exactly(b, 1)[0] != 0;
            case "str", "text" -> utf8(b);
            case "numpy" -> array(le, NUMPY, "numpy");
            case "tensor" -> tensor(b);
            case "no_header_numpy", "no_header_tensor" -> {
                DType t = rawType(format);
                if (b.length % t.byteSize() != 0) {
                    throw new IllegalArgumentException(b.length + " bytes are not whole " + t.label() + " values");
                }
                yield new Tensor(t, new long[] {b.length / t.byteSize()}, b);
            }
            case "pil" -> PilImage.decode(b);
            default -> b; // bytes, jpeg, and files kept with their extension
        };
    }

    private static byte[] exactly(byte[] b, int n) {
        if (b.length != n) {
            throw new IllegalArgumentException(b.length + " bytes where " + n + " were expected");
        }
        return b;
    }

    private static String utf8(byte[] b) {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(b)).toString();
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException("not UTF-8 text");
        }
    }

    /**
     * A {@code tensor} leaf: its header big-endian (0.2.57 and later) or little-endian (before),
     * whichever is consistent (NOTE [LitData] in {@link LitDataset}).
     */
    private static Tensor tensor(byte[] b) {
        Tensor t = consistent(ByteBuffer.wrap(b).order(ByteOrder.BIG_ENDIAN), TORCH);
        if (t == null) {
            t = consistent(ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN), TORCH);
        }
        if (t == null) {
            throw new IllegalArgumentException("its header is neither big- nor little-endian (dtype index, rank, shape) "
                    + "consistent with its " + b.length + " bytes");
        }
        return t;
    }

    private static Tensor array(ByteBuffer h, DType[] table, String what) {
        Tensor t = consistent(h, table);
        if (t == null) {
            throw new IllegalArgumentException("its " + what + " header (dtype index, rank, shape) does not fit its " + h.capacity()
                    + " bytes");
        }
        return t;
    }

    /** The array a header in {@code h}'s byte order describes, or null when the header does not fit the bytes. */
    private static Tensor consistent(ByteBuffer h, DType[] table) {
        int n = h.capacity();
        if (n < 8) {
            return null;
        }
        long index = Integer.toUnsignedLong(h.getInt(0));
        long rank = Integer.toUnsignedLong(h.getInt(4));
        if (index >= table.length || table[(int) index] == null || rank >= 64 || 8 + 4 * rank > n) {
            return null;
        }
        DType t = table[(int) index];
        long[] shape = new long[(int) rank];
        long bytes = t.byteSize();
        for (int d = 0; d < rank; d++) {
            shape[d] = Integer.toUnsignedLong(h.getInt(8 + 4 * d));
            bytes = Math.multiplyHigh(bytes, shape[d]) != 0 ? -1 : bytes * shape[d];
            if (bytes < 0) {
                return null;
            }
        }
        int at = 8 + 4 * (int) rank;
        if (bytes != n - at) {
            return null;
        }
        return new Tensor(t, shape, Arrays.copyOfRange(h.array(), at, n));
    }
}
