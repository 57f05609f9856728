package dev.stoker.parquet;

import static dev.stoker.parquet.ParquetColumns.LE_DOUBLE;
import static dev.stoker.parquet.ParquetColumns.LE_FLOAT;
import static dev.stoker.parquet.ParquetColumns.LE_INT;
import static dev.stoker.parquet.ParquetColumns.LE_LONG;

import dev.hardwood.metadata.ColumnChunk;
import dev.hardwood.metadata.ColumnMetaData;
import dev.hardwood.metadata.FileMetaData;
import dev.hardwood.metadata.PhysicalType;
import dev.hardwood.metadata.RowGroup;
import dev.hardwood.reader.ColumnReader;
import dev.hardwood.reader.ParquetFileReader;
import dev.hardwood.reader.RowGroupPredicate;
import dev.hardwood.reader.Validity;
import dev.stoker.CorruptShardException;
import dev.stoker.parquet.ParquetColumns.Column;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Decodes a Parquet file's row groups: the projected column chunks of a group read with one
 * ranged read per run of adjacent chunks and decoded by Stoker's page decoder ({@link
 * ChunkDecoder}), or by Hardwood's column reader for the encodings it does not handle, into
 * off-heap memory leased from {@link Slabs}; and the rows of a group a filter keeps.
 */
final class RowGroups implements AutoCloseable {
    private final String location;
    private final ParquetInput input;
    private final FileMetaData meta;
    private final ParquetFileReader hardwood;
    private final Slabs slabs;
    private final ConcurrentLinkedQueue<ChunkDecoder> decoders = new ConcurrentLinkedQueue<>();
    private volatile boolean closed;

    /** A decoded row group: its projected columns' values, and the memory that holds them off the heap. */
    record Group(Values[] values, Slabs.Lease memory) {
        long bytes() {
            long n = 0;
            for (Values v : values) {
                n += v.byteSize();
            }
            return n;
        }

        void free() {
            memory.free();
        }
    }

    RowGroups(String location, ParquetInput input, FileMetaData meta, ParquetFileReader hardwood, Slabs slabs) {
        this.location = location;
        this.input = input;
        this.meta = meta;
        this.hardwood = hardwood;
        this.slabs = slabs;
    }

    /**
     * Row group {@code g}'s chunks of {@code cols}, read with one read per run of adjacent chunks
     * and decoded; a chunk in an encoding the page decoder does not handle goes to Hardwood.
     */
    Group decode(int g, Column[] cols) throws IOException {
        if (closed) {
            throw new IllegalStateException(location + " is closed");
        }
        RowGroup group = meta.rowGroups().get(g);
        int n = Math.toIntExact(group.numRows());
        Values[] out = new Values[cols.length];
        Integer[] order = new Integer[cols.length];
        for (int i = 0; i < cols.length; i++) {
            order[i] = i;
        }
        Arrays.sort(order, (a, b) -> Long.compare(ParquetColumns.chunk(group, cols[a]).chunkStartOffset(), ParquetColumns.chunk(group, cols[b]).chunkStartOffset()));
        ChunkDecoder decoder = decoders.poll();
        if (decoder == null) {
            decoder = new ChunkDecoder();
        }
        Slabs.Lease memory = slabs.lease(ParquetColumns.fixedBytes(cols, n));
        boolean done = false;
        int i = 0;
        Column current = cols[order[0]];
        try {
            while (i < cols.length) {
                // a run of adjacent chunks: one read
                long from = ParquetColumns.chunk(group, cols[order[i]]).chunkStartOffset();
                long to = from;
                int j = i;
                while (j < cols.length && ParquetColumns.chunk(group, cols[order[j]]).chunkStartOffset() == to) { // at least chunk i
                    to += ParquetColumns.chunk(group, cols[order[j]]).metaData().totalCompressedSize();
                    j++;
                }
                int length = Math.toIntExact(to - from);
                byte[] bytes = decoder.buffer(length);
                input.read(from, bytes, 0, length);
                for (; i < j; i++) {
                    current = cols[order[i]];
                    ColumnChunk c = ParquetColumns.chunk(group, current);
                    ColumnMetaData m = c.metaData();
                    ChunkDecoder.Spec spec = new ChunkDecoder.Spec(m.type(), current.typeLength(),
                            current.node().maxDefinitionLevel(), m.codec());
                    Values v;
                    try {
                        v = decoder.decode(bytes, (int) (c.chunkStartOffset() - from), Math.toIntExact(m.totalCompressedSize()), spec, n, memory.allocator);
                    } catch (ChunkDecoder.Unsupported e) {
                        v = hardwood(group, current, spec.width(), n);
                    }
                    out[order[i]] = ParquetColumns.decimal(v, current, memory.allocator);
                }
            }
            done = true;
            return new Group(out, memory);
        } catch (IOException | RuntimeException e) {
            if (e instanceof CorruptShardException || e instanceof java.io.FileNotFoundException
                    || e instanceof java.nio.channels.ClosedByInterruptException || e instanceof java.io.InterruptedIOException || closed) {
                throw e; // an interrupted read is not a corrupt row group
            }
            throw new CorruptShardException(location, ParquetColumns.chunk(group, current).chunkStartOffset(),
                    "row group " + g + " is unreadable: column '" + current.name() + "': " + ParquetFooter.describe(e), e);
        } finally {
            decoders.add(decoder);
            if (!done) {
                memory.free();
            }
        }
    }

    /** A chunk decoded by Hardwood's column reader (the encodings {@link ChunkDecoder} does not handle). */
    private Values hardwood(RowGroup group, Column c, int w, int n) throws IOException {
        long from = Long.MAX_VALUE;
        long to = 0;
        for (ColumnChunk k : group.columns()) {
            from = Math.min(from, k.chunkStartOffset());
            to = Math.max(to, k.chunkStartOffset() + k.metaData().totalCompressedSize());
        }
        PhysicalType type = c.node().type();
        byte[] data = new byte[w * n];
        MemorySegment seg = MemorySegment.ofArray(data);
        int[] offsets = w == 0 ? new int[n + 1] : null;
        ByteArrayOutputStream bytes = w == 0 ? new ByteArrayOutputStream() : null;
        byte[] valid = c.node().maxDefinitionLevel() > 0 ? new byte[n] : null;
        boolean nulls = false;
        int r = 0;
        try (ColumnReader reader = hardwood.buildColumnReader(c.node().columnIndex())
                .filter(RowGroupPredicate.byteRange(from, to)).batchSize(n).build()) {
            while (reader.nextBatch()) {
                int m = reader.getRecordCount();
                if (r + m > n) {
                    throw new IOException("Hardwood read more than the row group's " + n + " rows");
                }
                Validity v = reader.getLeafValidity();
                switch (type) {
                    case BOOLEAN -> {
                        boolean[] a = reader.getBooleans();
                        for (int i = 0; i < m; i++) {
                            data[r + i] = a[i] ? (byte) 1 : 0;
                        }
                    }
                    case INT32 -> MemorySegment.copy(reader.getInts(), 0, seg, LE_INT, 4L * r, m);
                    case INT64 -> MemorySegment.copy(reader.getLongs(), 0, seg, LE_LONG, 8L * r, m);
                    case FLOAT -> MemorySegment.copy(reader.getFloats(), 0, seg, LE_FLOAT, 4L * r, m);
                    case DOUBLE -> MemorySegment.copy(reader.getDoubles(), 0, seg, LE_DOUBLE, 8L * r, m);
                    default -> {
                        byte[][] a = reader.getBinaries();
                        for (int i = 0; i < m; i++) {
                            if (a[i] != null && !v.isNull(i)) {
                                bytes.write(a[i], 0, a[i].length);
                            }
                            offsets[r + i + 1] = bytes.size();
                        }
                    }
                }
                for (int i = 0; i < m; i++) {
                    boolean isNull = v.isNull(i);
                    if (valid != null) {
                        valid[r + i] = isNull ? (byte) 0 : 1;
                    }
                    if (isNull) {
                        nulls = true;
                        if (type == PhysicalType.FLOAT) {
                            seg.set(LE_FLOAT, 4L * (r + i), Float.NaN);
                        } else if (type == PhysicalType.DOUBLE) {
                            seg.set(LE_DOUBLE, 8L * (r + i), Double.NaN);
                        } else if (w > 0) {
                            seg.asSlice((long) w * (r + i), w).fill((byte) 0);
                        }
                    }
                }
                r += m;
            }
        }
        if (r != n) {
            throw new IOException("Hardwood read " + r + " of the row group's " + n + " rows");
        }
        byte[] validity = nulls ? valid : null;
        return w > 0 ? new Values(w, n, seg, validity) : new Values(n, bytes.toByteArray(), offsets, validity);
    }

    /** The rows of row group {@code g} whose filter column satisfies the condition. */
    int[] matching(int g, Column column, Where where, Where.Bound bound) throws IOException {
        Group d = decode(g, new Column[] {column});
        try {
            Values v = d.values()[0];
            int[] out = new int[v.rows];
            int m = 0;
            for (int r = 0; r < v.rows; r++) {
                if (v.present(r) && where.op().holds(bound.compare(v, r))) {
                    out[m++] = r;
                }
            }
            return Arrays.copyOf(out, m);
        } finally {
            d.free();
        }
    }

    /** From now on a decode fails as closed (the dataset is closing; its cache goes next). */
    void stop() {
        closed = true;
    }

    /** The decoded memory and Hardwood's reader, released (after every group was freed). */
    @Override
    public void close() throws IOException {
        closed = true;
        slabs.close();
        hardwood.close();
    }
}
