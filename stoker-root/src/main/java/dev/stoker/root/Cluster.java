package dev.stoker.root;

import dev.stoker.Row;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A decoded cluster of a {@link RootDataset}: each field's data (null for one held in a stack) and
 * the stacks held entry by entry (NOTE [Entry-major] in Row), their values off the heap in
 * {@code memory}, freed when the cache drops the cluster. Kept off the heap, a cache of decoded
 * clusters costs the collector nothing to keep: held on it, each cluster was copied and compacted
 * by every collection while it lived, which under the serial collector the server runs halved a
 * shuffled epoch's rate.
 */
record Cluster(ColumnData[] columns, List<Cluster.Stack> stacks, Arena memory) {
    private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /**
     * Fields {@code fields} of a cluster held entry by entry: entry {@code e}'s float32 values are
     * {@code [offsets[e] * w, offsets[e + 1] * w)} of {@code values}, {@code w} the fields.
     */
    record Stack(int[] fields, MemorySegment values, long[] offsets) {
    }

    /**
     * The cluster whose fields' data {@code read} holds (on the heap), copied off the heap, the
     * field groups {@code stacks} interleaved entry by entry (each one whose fields have the same
     * lengths in every entry; another keeps its fields apart).
     */
    static Cluster of(ColumnData[] read, List<int[]> stacks) {
        ColumnData[] out = read.clone();
        Arena memory = Arena.ofShared();
        try {
            List<Stack> held = new ArrayList<>();
            for (int[] g : stacks) {
                Stack s = entryMajor(g, out, memory);
                if (s != null) {
                    held.add(s);
                    for (int f : g) {
                        out[f] = null;
                    }
                }
            }
            for (int f = 0; f < out.length; f++) {
                if (out[f] != null) {
                    MemorySegment v = memory.allocate(out[f].values().byteSize(), 8);
                    v.copyFrom(out[f].values());
                    out[f] = new ColumnData(v, out[f].offsets());
                }
            }
            return new Cluster(out, List.copyOf(held), memory);
        } catch (RuntimeException e) {
            memory.close();
            throw e;
        }
    }

    /** Fields {@code g} interleaved entry by entry into {@code memory}, or null if their lengths differ. */
    private static Stack entryMajor(int[] g, ColumnData[] d, Arena memory) {
        long[] offsets = d[g[0]].offsets();
        for (int f : g) {
            if (!Arrays.equals(d[f].offsets(), offsets)) {
                return null;
            }
        }
        int w = g.length;
        long n = offsets[offsets.length - 1];
        MemorySegment entries = memory.allocate(4 * n * w, 8);
        // a block of entries at a time, interleaved in an array that stays in the processor's cache
        int block = (int) Math.min(n, 1024);
        float[] column = new float[block];
        float[] interleaved = new float[block * w];
        for (long i0 = 0; i0 < n; i0 += block) {
            int m = (int) Math.min(block, n - i0);
            for (int j = 0; j < w; j++) {
                MemorySegment.copy(d[g[j]].values(), FLOAT, 4 * i0, column, 0, m);
                for (int i = 0, at = j; i < m; i++, at += w) {
                    interleaved[at] = column[i];
                }
            }
            MemorySegment.copy(interleaved, 0, entries, FLOAT, 4 * i0 * w, m * w);
        }
        return new Stack(g, entries, offsets);
    }

    /**
     * Writes entry {@code at}: each stack's entries with one append, each other field's values;
     * a fixed-size field is {@code sampleBytes[f]} bytes an entry, a ragged one counted by its offsets. Fails with an {@link IllegalStateException}, having read nothing, if the cluster
     * was freed meanwhile.
     */
    void write(int at, Row row, long[] sampleBytes) {
        for (Stack s : stacks) {
            long[] o = s.offsets();
            row.appendEntries(s.fields(), s.values(), o[at] * 4L * s.fields().length, o[at + 1] - o[at]);
        }
        for (int f = 0; f < columns.length; f++) {
            ColumnData d = columns[f];
            if (d == null) {
                continue; // in a stack
            }
            dev.stoker.Field field = row.schema().field(f);
            if (field.isRagged()) {
                long[] o = d.offsets();
                int e = field.dtype().byteSize();
                row.append(f, d.values(), o[at] * e, (o[at + 1] - o[at]) * e);
            } else {
                row.copy(f, d.values(), at * sampleBytes[f], sampleBytes[f]);
            }
        }
    }

    /** The bytes the cluster holds, as its cache counts them. */
    long bytes() {
        long n = 64;
        for (ColumnData d : columns) {
            if (d != null) {
                n += d.values().byteSize() + (d.offsets() == null ? 0 : 8L * d.offsets().length);
            }
        }
        for (Stack s : stacks) {
            n += s.values().byteSize() + 8L * s.offsets().length;
        }
        return n;
    }

    /** Frees the cluster's memory; a read of it then fails (see {@link #write}). */
    void free() {
        memory.close();
    }
}
