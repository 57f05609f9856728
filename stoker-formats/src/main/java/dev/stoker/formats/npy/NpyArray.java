package dev.stoker.formats.npy;

import dev.stoker.DType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * An array read from a {@code .npy} file (or an entry of a {@code .npz}): its dtype, byte order,
 * shape and layout, and its data in memory (mapped for a {@code .npy}). {@link #close()} releases
 * the memory; idempotent.
 */
public final class NpyArray implements AutoCloseable {
    private final String name;
    private final NpyHeader header;
    private final MemorySegment data;
    private final AutoCloseable owner;
    private final ValueLayout.OfShort i16;
    private final ValueLayout.OfInt i32;
    private final ValueLayout.OfLong i64;
    private final ValueLayout.OfFloat f32;
    private final ValueLayout.OfDouble f64;

    NpyArray(String name, NpyHeader header, MemorySegment data, AutoCloseable owner) {
        this.name = name;
        this.header = header;
        this.data = data;
        this.owner = owner;
        ByteOrder o = header.order();
        this.i16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(o);
        this.i32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(o);
        this.i64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(o);
        this.f32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(o);
        this.f64 = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(o);
    }

    /** A name for errors: the file, or the npz and its entry. */
    public String name() {
        return name;
    }

    public DType dtype() {
        return header.dtype();
    }

    public ByteOrder byteOrder() {
        return header.order();
    }

    /** The numpy type string, e.g. {@code <u2}, {@code >i4}, {@code |b1}. */
    public String descr() {
        DType d = header.dtype();
        char o = d.byteSize() == 1 ? '|' : header.order() == ByteOrder.BIG_ENDIAN ? '>' : '<';
        return o + d.numpy().substring(1);
    }

    public long[] shape() {
        return header.shape().clone();
    }

    public boolean fortranOrder() {
        return header.fortranOrder();
    }

    /** The format version, e.g. "1.0" ("0.0" for an array that came from no {@code .npy}: {@link Npy#view}, {@link Npy#raw}). */
    public String version() {
        return header.major() + "." + header.minor();
    }

    /** Number of elements (1 for a 0-d array). */
    public long elements() {
        long n = 1;
        for (long d : header.shape()) {
            n *= d;
        }
        return n;
    }

    /** The data, in the file's layout and byte order. */
    public MemorySegment segment() {
        return data;
    }

    /** Element {@code i} in storage order, as a long (floats truncated). */
    public long getLong(long i) {
        return switch (header.dtype()) {
            case BOOL, UINT8 -> data.get(ValueLayout.JAVA_BYTE, i) & 0xFFL;
            case INT8 -> data.get(ValueLayout.JAVA_BYTE, i);
            case INT16 -> data.get(i16, 2 * i);
            case UINT16 -> data.get(i16, 2 * i) & 0xFFFFL;
            case INT32 -> data.get(i32, 4 * i);
            case UINT32 -> data.get(i32, 4 * i) & 0xFFFF_FFFFL;
            case INT64, UINT64 -> data.get(i64, 8 * i);
            default -> (long) getDouble(i);
        };
    }

    /** Element {@code i} in storage order, as a double. */
    public double getDouble(long i) {
        return switch (header.dtype()) {
            case FLOAT16 -> Float.float16ToFloat(data.get(i16, 2 * i));
            case BFLOAT16 -> Float.intBitsToFloat((data.get(i16, 2 * i) & 0xFFFF) << 16);
            case FLOAT32 -> data.get(f32, 4 * i);
            case FLOAT64 -> data.get(f64, 8 * i);
            case UINT64 -> {
                long v = data.get(i64, 8 * i);
                yield v >= 0 ? v : (double) (v >>> 1) * 2.0 + (v & 1);
            }
            default -> getLong(i);
        };
    }

    /** The storage index of the element at C-order (row-major) position {@code c}. */
    public long storageIndex(long c) {
        if (!header.fortranOrder()) {
            return c;
        }
        long[] shape = header.shape();
        // C-order position -> multi-index (last axis fastest) -> Fortran offset (first axis fastest)
        long rest = c;
        long[] idx = new long[shape.length];
        for (int k = shape.length - 1; k >= 0; k--) {
            idx[k] = rest % shape[k];
            rest /= shape[k];
        }
        long off = 0;
        long stride = 1;
        for (int k = 0; k < shape.length; k++) {
            off += idx[k] * stride;
            stride *= shape[k];
        }
        return off;
    }

    /** Up to {@code n} first values in C order, as numbers (integers as Long, floats as Double, bools as Boolean). */
    public Object[] first(int n) {
        long count = Math.min(n, elements());
        Object[] out = new Object[(int) count];
        for (int i = 0; i < count; i++) {
            long s = storageIndex(i);
            out[i] = switch (header.dtype()) {
                case BOOL -> getLong(s) != 0;
                case FLOAT16, BFLOAT16, FLOAT32, FLOAT64 -> getDouble(s);
                case UINT64 -> Long.toUnsignedString(getLong(s));
                default -> getLong(s);
            };
        }
        return out;
    }

    @Override
    public void close() {
        try {
            owner.close();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
