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
import java.lang.foreign.ValueLayout;
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
                    if (current.isList()) {
                        out[order[i]] = list(group, current, n);
                        continue;
                    }
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

    /**
     * A chunk decoded by Hardwood's column reader (the encodings {@link ChunkDecoder} does not handle).
     * The workers share one {@code ParquetFileReader}, which does not say that it may be read from
     * two threads at once; its column readers are built and read one at a time here
     * ({@code synchronized}, as {@link #list} is). A test that read with two workers on a loaded
     * machine once got none of a row group's rows from it.
     */
    private synchronized Values hardwood(RowGroup group, Column c, int w, int n) throws IOException {
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

    /**
     * A list column's chunk, decoded by Hardwood's nested column reader: each row's values, as
     * little-endian values of the element's type one after the other, and {@code n + 1} byte
     * offsets (a null list is empty). A null element of a float or double list is NaN; of any
     * other list, an error naming the column, the row group and the row.
     */
    private synchronized Values list(RowGroup group, Column c, int n) throws IOException {
        long from = Long.MAX_VALUE;
        long to = 0;
        for (ColumnChunk k : group.columns()) {
            from = Math.min(from, k.chunkStartOffset());
            to = Math.max(to, k.chunkStartOffset() + k.metaData().totalCompressedSize());
        }
        PhysicalType type = c.node().type();
        int w = ChunkDecoder.width(type);
        // the values a chunk holds, from its footer: the bound of what its rows may take, checked before anything is held
        long stated = ParquetColumns.chunk(group, c).metaData().numValues();
        if (stated < 0 || stated * w > Integer.MAX_VALUE - 16) {
            throw new CorruptShardException(location, ParquetColumns.chunk(group, c).chunkStartOffset(), "column '" + c.name()
                    + "': a row group's list holds " + stated + " values; at most " + (Integer.MAX_VALUE - 16) / w + " can be read");
        }
        byte[] data = new byte[(int) Math.min(stated * w, 1 << 20)];
        int[] offsets = new int[n + 1];
        int at = 0;
        int r = 0;
        try (ColumnReader reader = hardwood.buildColumnReader(c.node().columnIndex())
                .filter(RowGroupPredicate.byteRange(from, to)).batchSize(n).build()) {
            while (reader.nextBatch()) {
                int m = reader.getRecordCount();
                if (r + m > n) {
                    throw new IOException("Hardwood read more than the row group's " + n + " rows");
                }
                int values = reader.getValueCount();
                int[] layer = reader.getLayerOffsets(0);
                Validity leaf = reader.getLeafValidity();
                if (layer.length < m || (long) at + (long) values * w > stated * w) {
                    throw new IOException("column '" + c.name() + "': the list's rows hold more values than its chunk states ("
                            + stated + ")");
                }
                if (at + values * w > data.length) {
                    data = Arrays.copyOf(data, (int) Math.min(stated * w, Math.max((long) at + (long) values * w, 2L * data.length)));
                }
                MemorySegment seg = MemorySegment.ofArray(data);
                boolean[] bools = type == PhysicalType.BOOLEAN ? reader.getBooleans() : null;
                int[] ints = type == PhysicalType.INT32 ? reader.getInts() : null;
                long[] longs = type == PhysicalType.INT64 ? reader.getLongs() : null;
                float[] floats = type == PhysicalType.FLOAT ? reader.getFloats() : null;
                double[] doubles = type == PhysicalType.DOUBLE ? reader.getDoubles() : null;
                for (int i = 0; i < m; i++) {
                    int start = layer[i];
                    int end = i + 1 < m ? layer[i + 1] : layer.length > m ? layer[m] : values;
                    if (start < 0 || end < start || end > values) {
                        throw new IOException("column '" + c.name() + "': row " + (r + i) + "'s values [" + start + ", " + end
                                + ") are not within the " + values + " read");
                    }
                    for (int j = start; j < end; j++) {
                        long o = (long) at + (long) (j - start) * w;
                        boolean isNull = leaf.isNull(j);
                        if (isNull && type != PhysicalType.FLOAT && type != PhysicalType.DOUBLE) {
                            throw new CorruptShardException(location, -1, "column '" + c.name() + "', row group "
                                    + meta.rowGroups().indexOf(group) + ", row " + (r + i) + ": a null inside a list of "
                                    + ParquetColumns.typeName(c.node()) + "; Stoker reads lists of numbers without nulls "
                                    + "(a float or double list's null reads as NaN)");
                        }
                        switch (type) {
                            case BOOLEAN -> seg.set(ValueLayout.JAVA_BYTE, o, bools[j] ? (byte) 1 : 0);
                            case INT32 -> seg.set(LE_INT, o, ints[j]);
                            case INT64 -> seg.set(LE_LONG, o, longs[j]);
                            case FLOAT -> seg.set(LE_FLOAT, o, isNull ? Float.NaN : floats[j]);
                            case DOUBLE -> seg.set(LE_DOUBLE, o, isNull ? Double.NaN : doubles[j]);
                            default -> throw new AssertionError(type);
                        }
                    }
                    at += (end - start) * w;
                    offsets[r + i + 1] = at;
                }
                r += m;
            }
        }
        if (r != n) {
            throw new IOException("Hardwood read " + r + " of the row group's " + n + " rows");
        }
        return new Values(n, at == data.length ? data : Arrays.copyOf(data, at), offsets, null);
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
