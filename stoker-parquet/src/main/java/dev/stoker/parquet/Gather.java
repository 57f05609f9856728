package dev.stoker.parquet;

import static dev.stoker.parquet.ParquetColumns.LE_INT;
import static dev.stoker.parquet.ParquetColumns.LE_LONG;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

/**
 * Scratch for one {@link ParquetDataset#readAll} at a time: a shuffled batch's samples sorted by
 * row group, the groups it holds, and the copy of one column's values from a group to the batch.
 */
final class Gather {
    /** Each sample's row in its group, and its group's slot. */
    int[] row = new int[0];
    int[] group = new int[0];
    /** The samples' rows and places in the batch, sorted by slot. */
    int[] sortedRow = new int[0];
    int[] sortedAt = new int[0];
    /** By group number: its slot in this batch, or -1. */
    final int[] slot;
    /** By slot: the group number, where its samples start among the sorted ones, its values. */
    final int[] distinct;
    final int[] end;
    final Values[][] held;

    Gather(int groups) {
        slot = new int[groups];
        Arrays.fill(slot, -1);
        distinct = new int[groups];
        end = new int[groups + 1];
        held = new Values[groups][];
    }

    void size(int count) {
        if (row.length < count) {
            row = new int[count];
            group = new int[count];
            sortedRow = new int[count];
            sortedAt = new int[count];
        }
    }

    /** Ready for the next batch, whose slots {@code [0, d)} this one used. */
    void clear(int d) {
        for (int s = 0; s < d; s++) {
            slot[distinct[s]] = -1;
            held[s] = null;
        }
        Arrays.fill(end, 0, d + 1, 0);
    }

    /** Values of width {@code w}: row {@code rows[t]} of {@code src} to sample {@code at[t]} of {@code dst} from {@code base}, for {@code t} in {@code [begin, stop)}. */
    static void copy(MemorySegment src, int[] rows, int[] at, int begin, int stop, MemorySegment dst, long base, int w) {
        switch (w) { // one loop per width: no branch between the loads
            case 8 -> {
                for (int t = begin; t < stop; t++) {
                    dst.set(LE_LONG, base + 8L * at[t], src.get(LE_LONG, 8L * rows[t]));
                }
            }
            case 4 -> {
                for (int t = begin; t < stop; t++) {
                    dst.set(LE_INT, base + 4L * at[t], src.get(LE_INT, 4L * rows[t]));
                }
            }
            case 1 -> {
                for (int t = begin; t < stop; t++) {
                    dst.set(ValueLayout.JAVA_BYTE, base + at[t], src.get(ValueLayout.JAVA_BYTE, rows[t]));
                }
            }
            default -> {
                for (int t = begin; t < stop; t++) {
                    MemorySegment.copy(src, (long) w * rows[t], dst, base + (long) w * at[t], w);
                }
            }
        }
    }
}
