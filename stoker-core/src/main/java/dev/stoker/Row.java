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
 * Variable-length fields: {@link #append(int, byte[])} (any number of times per row). A field left
 * unwritten keeps whatever bytes the reused buffer held before.
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
    private int row;
    private long index;

    Row(Batch batch) {
        this.batch = batch;
    }

    void begin(int row, long index) {
        this.row = row;
        this.index = index;
        for (int f = 0; f < batch.schema().size(); f++) {
            if (batch.isVariable(f) && row > 0) {
                batch.setVarEnd(f, row + 1, batch.varEnd(f, row));
            } else if (batch.isVariable(f)) {
                batch.setVarEnd(f, 1, 0);
            }
        }
    }

    void commit() {
        // the end offsets were advanced by append(); nothing else to do
    }

    void rollback() {
        for (int f = 0; f < batch.schema().size(); f++) {
            if (batch.isVariable(f)) {
                batch.setVarEnd(f, row + 1, batch.varEnd(f, row));
            }
        }
    }

    /** The row number within the batch. */
    public int row() {
        return row;
    }

    /** The dataset index of the sample being written. */
    public long index() {
        return index;
    }

    public Schema schema() {
        return batch.schema();
    }

    /** The whole column of a tensor field; this row starts at {@link #offset(int)}. */
    public MemorySegment column(int field) {
        return batch.column(field);
    }

    /** Byte offset of this row in the column of tensor field {@code field}. */
    public long offset(int field) {
        return batch.rowOffset(field, row);
    }

    /** Copies {@code bytes} bytes from {@code src} at {@code srcOffset} into this row of a tensor field. */
    public void copy(int field, MemorySegment src, long srcOffset, long bytes) {
        MemorySegment.copy(src, srcOffset, batch.column(field), batch.rowOffset(field, row), bytes);
    }

    /** Copies a byte array into this row of a tensor field, at its start. */
    public void put(int field, byte[] src) {
        MemorySegment.copy(src, 0, batch.column(field), ValueLayout.JAVA_BYTE, batch.rowOffset(field, row), src.length);
    }

    public void putByte(int field, long element, byte v) {
        batch.column(field).set(ValueLayout.JAVA_BYTE, batch.rowOffset(field, row) + element, v);
    }

    public void putShort(int field, long element, short v) {
        batch.column(field).set(SHORT, batch.rowOffset(field, row) + 2 * element, v);
    }

    public void putInt(int field, long element, int v) {
        batch.column(field).set(INT, batch.rowOffset(field, row) + 4 * element, v);
    }

    public void putLong(int field, long element, long v) {
        batch.column(field).set(LONG, batch.rowOffset(field, row) + 8 * element, v);
    }

    public void putFloat(int field, long element, float v) {
        batch.column(field).set(FLOAT, batch.rowOffset(field, row) + 4 * element, v);
    }

    public void putDouble(int field, long element, double v) {
        batch.column(field).set(DOUBLE, batch.rowOffset(field, row) + 8 * element, v);
    }

    /** Appends bytes to this row of a variable-length field. */
    public void append(int field, byte[] src) {
        append(field, MemorySegment.ofArray(src), 0, src.length);
    }

    /** Appends {@code bytes} bytes of {@code src} from {@code srcOffset} to this row of a variable-length field. */
    public void append(int field, MemorySegment src, long srcOffset, long bytes) {
        if (!batch.isVariable(field)) {
            throw new IllegalArgumentException("field '" + batch.schema().field(field).name() + "' is not variable-length");
        }
        long end = batch.varEnd(field, row + 1);
        MemorySegment dst = batch.growVar(field, end + bytes, end);
        MemorySegment.copy(src, srcOffset, dst, end, bytes);
        batch.setVarEnd(field, row + 1, end + bytes);
    }
}
