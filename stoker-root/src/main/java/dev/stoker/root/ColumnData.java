package dev.stoker.root;

import java.lang.foreign.MemorySegment;

/**
 * The values of a column over entries {@code [from, to)}, little-endian in the column's dtype, and,
 * for a ragged column, {@code to - from + 1} element offsets into them (the first 0); null otherwise.
 */
public record ColumnData(MemorySegment values, long[] offsets) {
}
