package dev.stoker;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * The write side of one row of a {@link Batch}: a {@link Collator} or a {@link DirectDataset}
 * writes one sample's fields here, straight into the batch's off-heap columns.
 *
 * <p>Tensor fields: write {@link Field#sampleBytes()} bytes at {@link #offset(int)} of
 * {@link #column(int)}, or use the typed helpers, which take an element index within the sample.
 * Variable-length fields: {@link #append(int, byte[])} (any number of times per row); a ragged
 * field's appends hold whole little-endian values of its dtype. A field left unwritten keeps
 * whatever bytes the reused buffer held before.
 *
 * <p>Fields are numbered as in {@link #schema()}, the dataset's own. When the loader pads ragged
 * fields ({@link Padding}), the batch's schema differs from it, and the row writes each field
 * where the batch has it: a padded field's appends into its tensor column (NOTE [Padding]).
 *
 * <p>A row object is reused for every sample of a batch and belongs to one thread at a time; it
 * must not be kept after the write call returns.
 */
public final class Row {
    private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfDouble DOUBLE = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final Batch batch;
    /** The fields the dataset writes, by their numbers there: the batch's, or its source's when padded. */
    private final Schema schema;
    /** Each written field's batch column (NOTE [Padding]). */
    private final int[] target;
    /** The padding between the dataset's fields and the batch's, or null. */
    private final PadLayout pad;
    /** Values appended so far to this row of each padded field. */
    private final long[] counts;
    private int row;
    private long index;

    Row(Batch batch, PadLayout pad) {
        this.batch = batch;
        this.pad = pad;
        this.schema = pad == null ? batch.schema() : pad.source;
        this.target = pad == null ? identity(schema.size()) : pad.target;
        this.counts = pad == null ? null : new long[schema.size()];
    }

    private static int[] identity(int n) {
        int[] t = new int[n];
        for (int i = 0; i < n; i++) {
            t[i] = i;
        }
        return t;
    }

    void begin(int row, long index) {
        this.row = row;
        this.index = index;
        if (pad != null) {
            java.util.Arrays.fill(counts, 0);
        }
        for (int f = 0; f < batch.schema().size(); f++) {
            if (batch.isVariable(f) && row > 0) {
                batch.setVarEnd(f, row + 1, batch.varEnd(f, row));
            } else if (batch.isVariable(f)) {
                batch.setVarEnd(f, 1, 0);
            }
        }
    }

    void commit() {
        // the end offsets were advanced by append(); a padded field's pad, lengths and mask are written now
        if (pad != null) {
            pad.finish(batch, row, counts);
        }
    }

    void rollback() {
        for (int f = 0; f < batch.schema().size(); f++) {
            if (batch.isVariable(f)) {
                batch.setVarEnd(f, row + 1, batch.varEnd(f, row));
            }
        }
    }

    /**
     * Discards what has been written to this row so far, for a dataset that writes its sample
     * again from the start (one whose source memory was freed under it mid-sample, say).
     */
    public void restart() {
        begin(row, index);
    }

    /** The row number within the batch. */
    public int row() {
        return row;
    }

    /** The dataset index of the sample being written. */
    public long index() {
        return index;
    }

    /** The fields the dataset writes, numbered as the methods here take them (the batch's may differ: {@link Padding}). */
    public Schema schema() {
        return schema;
    }

    /** The whole column of a tensor field; this row starts at {@link #offset(int)}. */
    public MemorySegment column(int field) {
        return batch.column(target[field]);
    }

    /** Byte offset of this row in the column of tensor field {@code field}. */
    public long offset(int field) {
        return batch.rowOffset(target[field], row);
    }

    /** Copies {@code bytes} bytes from {@code src} at {@code srcOffset} into this row of a tensor field. */
    public void copy(int field, MemorySegment src, long srcOffset, long bytes) {
        int f = target[field];
        MemorySegment.copy(src, srcOffset, batch.column(f), batch.rowOffset(f, row), bytes);
    }

    /** Copies a byte array into this row of a tensor field, at its start. */
    public void put(int field, byte[] src) {
        int f = target[field];
        MemorySegment.copy(src, 0, batch.column(f), ValueLayout.JAVA_BYTE, batch.rowOffset(f, row), src.length);
    }

    public void putByte(int field, long element, byte v) {
        int f = target[field];
        batch.column(f).set(ValueLayout.JAVA_BYTE, batch.rowOffset(f, row) + element, v);
    }

    public void putShort(int field, long element, short v) {
        int f = target[field];
        batch.column(f).set(SHORT, batch.rowOffset(f, row) + 2 * element, v);
    }

    public void putInt(int field, long element, int v) {
        int f = target[field];
        batch.column(f).set(INT, batch.rowOffset(f, row) + 4 * element, v);
    }

    public void putLong(int field, long element, long v) {
        int f = target[field];
        batch.column(f).set(LONG, batch.rowOffset(f, row) + 8 * element, v);
    }

    public void putFloat(int field, long element, float v) {
        int f = target[field];
        batch.column(f).set(FLOAT, batch.rowOffset(f, row) + 4 * element, v);
    }

    public void putDouble(int field, long element, double v) {
        int f = target[field];
        batch.column(f).set(DOUBLE, batch.rowOffset(f, row) + 8 * element, v);
    }

    /** Appends bytes to this row of a variable-length field. */
    public void append(int field, byte[] src) {
        append(field, MemorySegment.ofArray(src), 0, src.length);
    }

    /**
     * Appends {@code entries} entries of the ragged float32 fields {@code fields} held entry by
     * entry in {@code src} from {@code srcOffset}: {@code entries * fields.length} little-endian
     * float32 values, entry {@code e}'s value of {@code fields[j]} the {@code (e * fields.length + j)}-th.
     * The row is as if each field's values had been appended on their own.
     *
     * <p>NOTE [Entry-major]: a shuffled read of a column store takes a sample's fields from as many
     * places, each a cache miss: 17 of them a jet in ParticleNet's inputs, which bounded a worker to
     * about a third of its rate in file order. A dataset told that the loader stacks fields
     * ({@link DirectDataset#willStack}) may hold them entry by entry, as the stack lays them out;
     * a sample is then one run of memory, written into its stack with one copy. Into anything else
     * (another stack, no padding) the values are appended field by field.
     */
    public void appendEntries(int[] fields, MemorySegment src, long srcOffset, long entries) {
        for (int f : fields) {
            if (schema.field(f).dtype() != DType.FLOAT32 || !schema.field(f).isRagged()) {
                throw new IllegalArgumentException("appendEntries takes ragged float32 fields; '" + schema.field(f).name()
                        + "' is not one");
            }
        }
        if (pad != null && pad.appendEntries(batch, row, counts, fields, src, srcOffset, entries)) {
            return;
        }
        int w = fields.length;
        for (int j = 0; j < w; j++) {
            for (long e = 0; e < entries; e++) {
                append(fields[j], src, srcOffset + 4 * (e * w + j), 4);
            }
        }
    }

    /** Appends {@code bytes} bytes of {@code src} from {@code srcOffset} to this row of a variable-length field. */
    public void append(int field, MemorySegment src, long srcOffset, long bytes) {
        if (pad != null && pad.padded(field)) {
            pad.append(batch, row, counts, field, src, srcOffset, bytes);
            return;
        }
        int f = target[field];
        if (!batch.isVariable(f)) {
            throw new IllegalArgumentException("field '" + schema.field(field).name() + "' is not variable-length");
        }
        long end = batch.varEnd(f, row + 1);
        MemorySegment dst = batch.growVar(f, end + bytes, end);
        MemorySegment.copy(src, srcOffset, dst, end, bytes);
        batch.setVarEnd(f, row + 1, end + bytes);
    }
}
