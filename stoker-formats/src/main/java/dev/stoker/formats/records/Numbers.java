package dev.stoker.formats.records;

import dev.stoker.DType;
import java.util.Arrays;

/**
 * A list of numbers of one type, kept as their little-endian bytes rather than one object each
 * (a {@code tf.train.Example}'s packed list, an Arrow list of integers): printed as a JSON array,
 * batched as a vector of its type.
 */
public record Numbers(DType dtype, byte[] data) {
    public Numbers {
        if (data.length % dtype.byteSize() != 0) {
            throw new IllegalArgumentException(data.length + " bytes are not whole " + dtype.label() + " values");
        }
    }

    public int size() {
        return data.length / dtype.byteSize();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Numbers n && n.dtype == dtype && Arrays.equals(n.data, data);
    }

    @Override
    public int hashCode() {
        return 31 * dtype.hashCode() + Arrays.hashCode(data);
    }

    @Override
    public String toString() {
        return "a list of " + size() + " " + dtype.label() + " values";
    }
}
