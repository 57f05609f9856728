package dev.stoker;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.security.MessageDigest;
import java.util.function.Consumer;

/**
 * A batch of samples: one off-heap column per {@link Field}, written once, in place, by the
 * loader's workers, then handed to the consumer.
 *
 * <p>Batches come from a fixed pool and are reused: a batch is valid until it is released, either
 * explicitly with {@link #close()} or implicitly by the next call to the loader iterator's
 * {@code hasNext()}/{@code next()}. Copy out what must outlive that.
 *
 * <p>Layout. A tensor column of a field with dtype {@code T} and per-sample shape {@code S} holds
 * {@code size()} rows of {@code T[S]}, row-major, little-endian, starting at byte 0 of
 * {@link #data(int)} (the segment is sized for a full batch; the valid part is
 * {@code size() * field.sampleBytes()} bytes). A variable-length column holds
 * {@code size() + 1} int64 offsets in {@link #offsets(int)} (the first is 0) and the bytes of row
 * {@code r} at {@code [offset(r), offset(r + 1))} of {@link #data(int)}.
 */
public final class Batch implements AutoCloseable {
    static final long ALIGN = 64;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final Schema schema;
    private final int capacity;
    private final Allocator allocator;
    private final Arena arena;
    private final MemorySegment[] data;
    private final MemorySegment[] offsets;
    private final Arena[] varArenas;
    /** Each variable-length column's share of the buffer's own arena, where every batch starts. */
    private final MemorySegment[] home;
    /** A variable-length column's larger region, kept for the batches that outgrow {@link #home}. */
    private final MemorySegment[] grown;
    private final long[] sampleBytes;
    private final long[] indices;
    private final Row writer;
    private final Consumer<Batch> releaser;

    // Written by the worker that fills the batch, read by the consumer after the hand-off
    // (which is a volatile write/read in the loader), so plain fields suffice.
    int rows;
    long sequence;
    long epoch;
    /** Samples of this batch left out under a skip policy. */
    int skipped;
    boolean delivered;
    /** This buffer's number in the loader's pool. */
    int slot;

    Batch(Schema schema, int capacity, Allocator allocator, Consumer<Batch> releaser) {
        this(schema, null, capacity, allocator, releaser);
    }

    /** A batch of {@code schema}'s fields, written through {@code pad} from its source's (null: written as they are). */
    Batch(Schema schema, PadLayout pad, int capacity, Allocator allocator, Consumer<Batch> releaser) {
        this.schema = schema;
        this.capacity = capacity;
        this.allocator = allocator;
        this.releaser = releaser;
        int n = schema.size();
        // every column of a fresh buffer comes from one arena (one slot of a shared-memory ring);
        // only a variable-length column that outgrows its share gets an arena of its own
        this.arena = allocator.newBatchArena(bytesFor(schema, capacity));
        this.data = new MemorySegment[n];
        this.offsets = new MemorySegment[n];
        this.varArenas = new Arena[n];
        this.home = new MemorySegment[n];
        this.grown = new MemorySegment[n];
        this.sampleBytes = new long[n];
        for (int i = 0; i < n; i++) {
            Field f = schema.field(i);
            if (f.isVariable()) {
                offsets[i] = arena.allocate(offsetsBytes(capacity), ALIGN);
                data[i] = arena.allocate(varBytes(f, capacity), ALIGN);
                home[i] = data[i];
            } else {
                sampleBytes[i] = f.sampleBytes();
                data[i] = arena.allocate(fixedBytes(f, capacity), ALIGN);
            }
        }
        this.indices = new long[capacity];
        this.writer = new Row(this, pad);
    }

    /** The fields of this batch. */
    public Schema schema() {
        return schema;
    }

    /** Number of samples (rows) in this batch; at most {@link #capacity()}. */
    public int size() {
        return rows;
    }

    /** The batch size this buffer was made for. */
    public int capacity() {
        return capacity;
    }

    /** Position of this batch in its epoch for this rank: 0, 1, 2, ... */
    public long sequence() {
        return sequence;
    }

    public long epoch() {
        return epoch;
    }

    /** The dataset index of the sample in row {@code row}. */
    public long index(int row) {
        checkRow(row);
        return indices[row];
    }

    /** The column of field {@code field}: tensor data, or the byte region of a variable-length field. */
    public MemorySegment data(int field) {
        return data[field];
    }

    public MemorySegment data(String field) {
        return data[schema.indexOf(field)];
    }

    /** The {@code size() + 1} int64 offsets of a variable-length field. */
    public MemorySegment offsets(int field) {
        if (offsets[field] == null) {
            throw new IllegalArgumentException("field '" + schema.field(field).name() + "' is not variable-length");
        }
        return offsets[field];
    }

    /** Shape of a tensor column: {@code [size(), per-sample shape...]}. */
    public long[] shape(int field) {
        Field f = schema.field(field);
        long[] s = f.shape();
        long[] out = new long[s.length + 1];
        out[0] = rows;
        System.arraycopy(s, 0, out, 1, s.length);
        return out;
    }

    /** Valid bytes of a column: the tensor rows, or the variable-length data of all rows. */
    public long byteSize(int field) {
        return offsets[field] == null ? rows * sampleBytes[field] : offsets[field].getAtIndex(LONG, rows);
    }

    /** Total valid bytes over all columns (variable-length offsets not counted). */
    public long byteSize() {
        long n = 0;
        for (int i = 0; i < data.length; i++) {
            n += byteSize(i);
        }
        return n;
    }

    /**
     * The bytes a fresh buffer of {@code capacity} rows allocates from its arena: every column (and
     * the offsets of each variable-length one) in schema order, each 64-byte aligned.
     */
    public static long bytesFor(Schema schema, int capacity) {
        long n = 0;
        for (Field f : schema.fields()) {
            n += f.isVariable() ? align(offsetsBytes(capacity)) + align(varBytes(f, capacity)) : align(fixedBytes(f, capacity));
        }
        return n;
    }

    private static long offsetsBytes(int capacity) {
        return 8L * (capacity + 1);
    }

    private static long varBytes(Field f, int capacity) {
        return Math.max(64, f.bytesHint() * capacity);
    }

    private static long fixedBytes(Field f, int capacity) {
        return Math.max(1, f.sampleBytes() * capacity);
    }

    private static long align(long bytes) {
        return (bytes + ALIGN - 1) & -ALIGN;
    }

    /** The bytes of row {@code row} of a field, as a slice of the column (allocates a view). */
    public MemorySegment bytes(int field, int row) {
        checkRow(row);
        if (offsets[field] == null) {
            return data[field].asSlice(row * sampleBytes[field], sampleBytes[field]);
        }
        long from = offsets[field].getAtIndex(LONG, row);
        long to = offsets[field].getAtIndex(LONG, row + 1);
        return data[field].asSlice(from, to - from);
    }

    /**
     * Feeds this batch to a digest: fields in name order; a tensor field contributes its valid
     * bytes, a variable-length field its {@code size() + 1} offsets (int64 little-endian) and then
     * its valid bytes. This is the digest {@code stoker bench --digests} prints.
     */
    public void digest(MessageDigest md) {
        for (int f : schema.nameOrder()) {
            if (offsets[f] != null) {
                md.update(offsets[f].asSlice(0, 8L * (rows + 1)).asByteBuffer());
            }
            md.update(data[f].asSlice(0, byteSize(f)).asByteBuffer());
        }
    }

    /**
     * Releases this batch back to the loader's pool before the next {@code next()} call would.
     * Idempotent; the batch must not be read afterwards, and must not be closed after that next
     * call (the pool may have handed the same buffer out again).
     */
    @Override
    public void close() {
        if (delivered) {
            delivered = false;
            releaser.accept(this);
        }
    }

    private void checkRow(int row) {
        if (row < 0 || row >= rows) {
            throw new IndexOutOfBoundsException("row " + row + " of a batch of " + rows);
        }
    }

    // ---- used by the loader -------------------------------------------------------------------

    Row writer() {
        return writer;
    }

    void reset(long epoch, long sequence) {
        this.epoch = epoch;
        this.sequence = sequence;
        this.rows = 0;
        this.skipped = 0;
        for (int i = 0; i < offsets.length; i++) {
            if (offsets[i] != null) {
                offsets[i].setAtIndex(LONG, 0, 0L);
                data[i] = home[i];
            }
        }
        writer.begin(0, -1);
    }

    /** Starts row {@code rows} for sample {@code index}. */
    Row beginRow(long index) {
        indices[rows] = index;
        writer.begin(rows, index);
        return writer;
    }

    /** Starts the {@code count} rows from row {@code rows} for the samples {@code samples[0, count)}. */
    Row beginAll(long[] samples, int count) {
        System.arraycopy(samples, 0, indices, rows, count);
        writer.begin(rows, samples[0]);
        return writer;
    }

    /** Keeps the {@code count} rows just written by {@link #beginAll}. */
    void commitAll(int count) {
        rows += count;
    }

    /** Keeps the row just written. */
    void commitRow() {
        writer.commit();
        rows++;
    }

    /** Forgets the row just written (its sample failed and is skipped). */
    void abandonRow() {
        writer.rollback();
    }

    long rowOffset(int field, int row) {
        return row * sampleBytes[field];
    }

    long varEnd(int field, int row) {
        return offsets[field].getAtIndex(LONG, row);
    }

    void setVarEnd(int field, int row, long end) {
        offsets[field].setAtIndex(LONG, row, end);
    }

    boolean isVariable(int field) {
        return offsets[field] != null;
    }

    MemorySegment column(int field) {
        return data[field];
    }

    /**
     * Makes the byte region of a variable-length field at least {@code needed} bytes, keeping
     * {@code keep} bytes. A batch starts in the buffer's own arena (a ring's slot) and moves to a
     * larger region only when it outgrows it; the region is kept for later batches that need it.
     */
    MemorySegment growVar(int field, long needed, long keep) {
        MemorySegment old = data[field];
        if (needed <= old.byteSize()) {
            return old;
        }
        MemorySegment to = grown[field];
        if (to == null || to.byteSize() < needed) {
            long size = Math.max(needed, old.byteSize() * 2);
            Arena fresh = allocator.newArena();
            to = fresh.allocate(size, ALIGN);
            MemorySegment.copy(old, 0, to, 0, keep);
            if (varArenas[field] != null) {
                varArenas[field].close(); // after the copy: old may be the region it held
            }
            varArenas[field] = fresh;
            grown[field] = to;
        } else {
            MemorySegment.copy(old, 0, to, 0, keep);
        }
        data[field] = to;
        return to;
    }

    void free() {
        arena.close();
        for (Arena a : varArenas) {
            if (a != null) {
                a.close();
            }
        }
    }
}
