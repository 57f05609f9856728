package dev.stoker.formats.records;

import dev.stoker.DType;
import java.util.Arrays;

/**
 * An n-dimensional array read from a record: its element type, shape (empty for a scalar) and
 * values in C order, little-endian, as numpy's {@code tobytes()} of a little-endian array gives
 * them.
 */
public record Tensor(DType dtype, long[] shape, byte[] data) {
    public Tensor {
        long n = elements(shape);
        if (n * dtype.byteSize() != data.length) {
            throw new IllegalArgumentException(dtype.label() + Arrays.toString(shape) + " needs " + n * dtype.byteSize()
                    + " bytes, got " + data.length);
        }
    }

    /** A scalar of {@code dtype} from its little-endian bytes. */
    public static Tensor scalar(DType dtype, byte[] data) {
        return new Tensor(dtype, new long[0], data);
    }

    public long elements() {
        return elements(shape);
    }

    static long elements(long[] shape) {
        long n = 1;
        for (long d : shape) {
            n = Math.multiplyExact(n, d);
        }
        return n;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Tensor t && t.dtype == dtype && Arrays.equals(t.shape, shape) && Arrays.equals(t.data, data);
    }

    @Override
    public int hashCode() {
        return 31 * (31 * dtype.hashCode() + Arrays.hashCode(shape)) + Arrays.hashCode(data);
    }

    @Override
    public String toString() {
        return dtype.label() + Arrays.toString(shape);
    }
}
