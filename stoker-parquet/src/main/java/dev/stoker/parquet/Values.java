package dev.stoker.parquet;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * One row group's values of one column, decoded: fixed-width values one after the other in
 * {@link #segment} (little-endian, a null written as 0 or NaN; off the heap, in the row group's
 * arena), or variable-length values as {@link #bytes} and {@code rows + 1} offsets (a null is
 * empty); and a validity byte per row (1 present, 0 null) when the row group holds a null.
 * Immutable once made; read by any number of threads.
 */
final class Values {
    /** Bytes per value; 0 for variable-length values. */
    final int width;
    final int rows;
    final MemorySegment segment;
    final byte[] bytes;
    final int[] offsets;
    final byte[] valid;
    final MemorySegment validSegment;

    /** Fixed-width values. */
    Values(int width, int rows, MemorySegment values, byte[] valid) {
        this(width, rows, values, null, null, valid);
    }

    /** Variable-length values. */
    Values(int rows, byte[] bytes, int[] offsets, byte[] valid) {
        this(0, rows, MemorySegment.ofArray(bytes), bytes, offsets, valid);
    }

    private Values(int width, int rows, MemorySegment segment, byte[] bytes, int[] offsets, byte[] valid) {
        this.width = width;
        this.rows = rows;
        this.segment = segment;
        this.bytes = bytes;
        this.offsets = offsets;
        this.valid = valid;
        this.validSegment = valid == null ? null : MemorySegment.ofArray(valid);
    }

    long byteSize() {
        return segment.byteSize() + (offsets == null ? 0 : 4L * offsets.length) + (valid == null ? 0 : valid.length);
    }

    boolean present(int r) {
        return valid == null || valid[r] != 0;
    }

    byte byteAt(int r) {
        return segment.get(ValueLayout.JAVA_BYTE, r);
    }
}
