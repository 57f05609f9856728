package dev.stoker.parquet;

import dev.hardwood.metadata.ColumnChunk;
import dev.hardwood.metadata.ColumnMetaData;
import dev.hardwood.metadata.FileMetaData;
import dev.hardwood.metadata.LogicalType;
import dev.hardwood.metadata.PhysicalType;
import dev.hardwood.metadata.RepetitionType;
import dev.hardwood.metadata.RowGroup;
import dev.hardwood.reader.ColumnReader;
import dev.hardwood.reader.ParquetFileReader;
import dev.hardwood.reader.RowGroupPredicate;
import dev.hardwood.reader.Validity;
import dev.hardwood.schema.FileSchema;
import dev.hardwood.schema.SchemaNode;
import dev.stoker.BlockCache;
import dev.stoker.CorruptShardException;
import dev.stoker.DType;
import dev.stoker.DirectDataset;
import dev.stoker.Field;
import dev.stoker.Row;
import dev.stoker.Schema;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A Parquet file as a random-access dataset: one sample per row, one batch field per projected
 * column. Numeric and boolean columns become scalar fields of their type (int32, int64, uint32,
 * uint64, float32, float64, bool; decimals stored as int32 or int64 become float64), strings and
 * binary become variable-length fields (offsets + bytes). A nullable column that holds nulls also
 * gets a bool field {@code <name>_valid} (false for a null, whose value is written as 0, NaN or
 * empty).
 *
 * <p>Rows are addressed by (row group, offset): sample {@code i} is found by a binary search over
 * the row groups' first rows, so every order, partition and resume of the core applies. A row
 * group is decoded once, column by column (only the projected ones), by the worker that first
 * needs it, into plain arrays kept in a {@link BlockCache} bounded in bytes; workers that need
 * different row groups decode them in parallel. A run of consecutive rows is copied into its
 * batch with one copy per column, a shuffled batch is gathered column by column ({@link #readAll}). An optional {@link Where} filter skips row
 * groups whose statistics rule it out and keeps the matching rows of the others (found once, when
 * the dataset is opened).
 *
 * <p>The footer is parsed by Hardwood; the projected column chunks of a row group are read with
 * one ranged read per run of adjacent chunks and decoded by Stoker's own page decoder
 * ({@link ChunkDecoder}: plain, dictionary and byte-stream-split pages, straight into arrays);
 * a chunk in an encoding it does not handle (the delta encodings) is decoded by Hardwood's column
 * reader instead. A remote file is read the same way, by ranged requests ({@link #traffic()}).
 *
 * <p>An order that jumps between row groups at random decodes a group per sample once the file
 * outgrows the cache: shuffle such a file by row group, or give the cache room for it.
 */
public final class ParquetDataset implements DirectDataset, AutoCloseable {
    /** The default bound on decoded row groups held at once. */
    public static final long DEFAULT_CACHE_BYTES = 512L << 20;

    /** Free slabs of decoded memory held for reuse beyond those in use. */
    private static final int SLABS_KEPT = 4;

    /** Hardwood logs at INFO when it loads (its SIMD support); a data loader's output stays quiet. */
    private static final Logger HARDWOOD_LOG = Logger.getLogger("dev.hardwood");

    static {
        HARDWOOD_LOG.setLevel(Level.WARNING);
    }

    private final String location;
    private final ParquetInput input;
    private final ParquetFileReader hardwood;
    private final FileMetaData meta;
    private final long projectionBytes;
    private final Column[] columns;
    private final Schema schema;
    private final int[] groups;
    private final long[] starts;
    private final int[][] kept;
    private final long size;
    /** 1 / the first row group's rows. */
    private final double perGroup;
    private final ConcurrentLinkedQueue<ChunkDecoder> decoders = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<Gather> gathers = new ConcurrentLinkedQueue<>();
    private final BlockCache<Group> cache;
    private final Slabs slabs;
    private volatile boolean closed;

    /** All flat columns, every row, the default cache. */
    public ParquetDataset(Path path) throws IOException {
        this(path, List.of(), null, DEFAULT_CACHE_BYTES);
    }

    /**
     * @param columns the columns to read, in this order (empty: every top-level column)
     * @param where a row filter, or null
     * @param cacheBytes the bound on decoded row groups held at once (at least one is always held)
     */
    public ParquetDataset(Path path, List<String> columns, Where where, long cacheBytes) throws IOException {
        this(path.toString(), columns, where, cacheBytes);
    }

    /**
     * A Parquet file at any location {@link dev.stoker.storage.Storage} reads: a local file by
     * positioned reads, a remote one by ranged requests for its footer and the column chunks of
     * the row groups read ({@link #traffic()} tells how many bytes that fetched).
     */
    public ParquetDataset(String location, List<String> columns, Where where, long cacheBytes) throws IOException {
        this.location = location;
        this.input = new ParquetInput(location);
        ParquetFileReader reader = open(input, location);
        try {
            this.meta = reader.getFileMetaData();
            FileSchema file = reader.getFileSchema();
            List<String> names = columns.isEmpty() ? file.getRootNode().children().stream().map(SchemaNode::name).toList() : columns;
            List<RowGroup> blocks = meta.rowGroups();
            this.columns = new Column[names.size()];
            List<Field> fields = new ArrayList<>();
            for (int i = 0; i < names.size(); i++) {
                SchemaNode.PrimitiveNode node = flatColumn(file, names.get(i), "");
                Kind kind = kind(node);
                boolean nulls = node.repetitionType() == RepetitionType.OPTIONAL && mayHoldNulls(blocks, node.columnIndex());
                Column c = new Column(node, typeLength(file, node), kind, fields.size(), nulls ? fields.size() + 1 : -1);
                this.columns[i] = c;
                fields.add(kind == Kind.BYTES ? Field.bytes(node.name(), bytesHint(blocks, node.columnIndex()))
                        : Field.scalar(node.name(), kind.dtype));
                if (nulls) {
                    fields.add(Field.scalar(node.name() + "_valid", DType.BOOL));
                }
            }
            this.schema = Schema.of(fields.toArray(Field[]::new));
            this.hardwood = reader;

            long largest = 0;
            for (RowGroup b : blocks) {
                largest = Math.max(largest, fixedBytes(this.columns, b.numRows()));
            }
            this.slabs = new Slabs(largest, SLABS_KEPT);

            // row groups, pruned by the filter's statistics, then the matching rows of each
            List<Integer> keep = new ArrayList<>();
            List<int[]> rows = new ArrayList<>();
            Where.Bound bound = null;
            Column filter = null;
            if (where != null) {
                SchemaNode.PrimitiveNode node = flatColumn(file, where.column(), "filter '" + where + "': ");
                bound = where.bind(node.type());
                filter = new Column(node, typeLength(file, node), kind(node), -1, -1);
            }
            for (int g = 0; g < blocks.size(); g++) {
                RowGroup b = blocks.get(g);
                if (b.numRows() == 0) {
                    continue;
                }
                if (bound != null) {
                    ColumnMetaData m = b.columns().get(filter.node.columnIndex()).metaData();
                    if (bound.rulesOut(m.statistics(), m.numValues())) {
                        continue;
                    }
                    int[] match = matching(g, filter, where, bound);
                    if (match.length == 0) {
                        continue;
                    }
                    rows.add(match.length == b.numRows() ? null : match);
                } else {
                    rows.add(null);
                }
                keep.add(g);
            }
            this.groups = keep.stream().mapToInt(Integer::intValue).toArray();
            this.kept = rows.toArray(int[][]::new);
            this.starts = new long[groups.length + 1];
            for (int i = 0; i < groups.length; i++) {
                starts[i + 1] = starts[i] + (kept[i] != null ? kept[i].length : blocks.get(groups[i]).numRows());
            }
            this.size = starts[groups.length];
            this.perGroup = groups.length == 0 ? 0 : 1.0 / starts[1];
            this.projectionBytes = projectionBytes(blocks, this.columns, filter);
            this.cache = new BlockCache<>(location, groups.length, cacheBytes, k -> decode(groups[k], this.columns),
                    Group::bytes, Group::free);
            reader = null;
        } finally {
            if (reader != null) { // the constructor failed after the footer was read
                reader.close();
            }
        }
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public Schema schema() {
        return schema;
    }

    @Override
    public String name() {
        return location;
    }

    /** The row groups this dataset reads: those of the file that hold rows and, with a filter, a matching one. */
    public int rowGroups() {
        return groups.length;
    }

    /**
     * The first row of each row group read, and the row count after the last: the blocks of
     * {@link dev.stoker.Sampler#blockShuffle}, the shuffle that decodes each row group once per epoch.
     */
    public long[] rowGroupStarts() {
        return starts.clone();
    }

    /**
     * A hash of what the footer says of the rows read (each kept row group's rows and the
     * statistics-free layout: projected columns, their types, the filter's kept rows): the same
     * for a file wherever it lives, other for another file of as many rows.
     */
    @Override
    public long fingerprint() {
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        java.nio.ByteBuffer n = java.nio.ByteBuffer.allocate(8);
        for (int i = 0; i < groups.length; i++) {
            var g = meta.rowGroups().get(groups[i]);
            crc.update(n.clear().putLong(starts[i + 1] - starts[i]).flip());
            for (Column c : columns) {
                crc.update(n.clear().putLong(chunk(g, c).metaData().totalCompressedSize()).flip());
            }
        }
        for (Column c : columns) {
            crc.update((c.name() + ":" + c.kind).getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        return crc.getValue() << 32 | size & 0xFFFF_FFFFL;
    }

    /** Forgets the decoded row groups, so that the next pass starts cold (benchmarks do this per configuration). */
    public void dropCache() {
        cache.clear();
    }

    @Override
    public void read(long index, Row row) throws IOException {
        int k = group(index);
        int offset = (int) (index - starts[k]);
        int r = kept[k] != null ? kept[k][offset] : offset;
        try {
            write(cache.get(k).values, r, row);
        } catch (IllegalStateException e) {
            Group own = freedUnder(e, k);
            try {
                write(own.values, r, row);
            } finally {
                own.free();
            }
        }
    }

    /**
     * A read that found its row group's memory freed under it (the cache dropped the group for
     * room between taking it and copying from it; the freed memory was never read, as a shared
     * arena's close guarantees) decodes the group again for itself alone: another turn through
     * the cache could lose the same race again when the cache holds less than a group per worker.
     */
    private Group freedUnder(IllegalStateException e, int k) throws IOException {
        if (closed) {
            throw e;
        }
        return decode(groups[k], columns);
    }

    /**
     * Writes row {@code r} of a decoded group: first the fixed-width values, the only reads that
     * can fail on freed memory (and are simply done again), then the variable-length ones (on
     * the heap, appended once) and the validity bytes.
     */
    private void write(Values[] d, int r, Row row) {
        for (int i = 0; i < columns.length; i++) {
            Values v = d[i];
            int f = columns[i].field;
            switch (v.width) { // one load and one store, not a bulk copy, for a single value
                case 8 -> row.column(f).set(LE_LONG, row.offset(f), v.segment.get(LE_LONG, 8L * r));
                case 4 -> row.column(f).set(LE_INT, row.offset(f), v.segment.get(LE_INT, 4L * r));
                case 1 -> row.column(f).set(ValueLayout.JAVA_BYTE, row.offset(f), v.segment.get(ValueLayout.JAVA_BYTE, r));
                case 0 -> {
                }
                default -> row.copy(f, v.segment, (long) r * v.width, v.width);
            }
        }
        for (int i = 0; i < columns.length; i++) {
            Column c = columns[i];
            Values v = d[i];
            if (v.width == 0) {
                row.append(c.field, v.segment, v.offsets[r], v.offsets[r + 1] - v.offsets[r]);
            }
            if (c.validField >= 0) {
                row.putByte(c.validField, 0, v.present(r) ? (byte) 1 : 0);
            }
        }
    }

    /**
     * Fills a batch column by column (every field is a tensor here). A batch of consecutive rows
     * (a sequential order's) is copied with one copy per column and row group it spans. Any other
     * is gathered: the samples' row groups and rows are found first, the groups no worker decodes
     * yet are decoded here, then each column is copied for the whole batch, one load and one
     * store per row, in a loop whose loads do not wait on each other (a shuffled batch's rows are
     * cache misses, and the processor overlaps them). A group freed under the batch (the cache
     * dropped it for room meanwhile) fails the batch, which the loader then reads sample by sample.
     */
    @Override
    public boolean readAll(long[] indices, int from, int count, Row row) throws IOException {
        long first = indices[from];
        boolean consecutive = true;
        for (int i = 1; i < count && consecutive; i++) {
            consecutive = indices[from + i] == first + i;
        }
        if (consecutive) {
            readRun(first, count, row);
        } else {
            gatherAll(indices, from, count, row);
        }
        return true;
    }

    /** The {@code count} consecutive rows from {@code index}: one copy per column and row group they span. */
    private void readRun(long index, int count, Row row) throws IOException {
        int done = 0;
        while (done < count) {
            long at = index + done;
            int k = group(at);
            int offset = (int) (at - starts[k]);
            int n = (int) Math.min(count - done, starts[k + 1] - at);
            try {
                copy(cache.get(k).values, kept[k], offset, n, done, row);
            } catch (IllegalStateException e) {
                Group own = freedUnder(e, k);
                try {
                    copy(own.values, kept[k], offset, n, done, row);
                } finally {
                    own.free();
                }
            }
            done += n;
        }
    }

    /** Copies {@code n} rows from {@code offset} of a row group (its kept {@code rows}, or all) into the rows from {@code done}. */
    private void copy(Values[] d, int[] rows, int offset, int n, int done, Row row) {
        for (int i = 0; i < columns.length; i++) {
            Column c = columns[i];
            Values v = d[i];
            int w = v.width;
            MemorySegment dst = row.column(c.field);
            long to = row.offset(c.field) + (long) done * w;
            if (rows == null) {
                MemorySegment.copy(v.segment, (long) offset * w, dst, to, (long) n * w);
            } else {
                for (int j = 0; j < n; j++) {
                    MemorySegment.copy(v.segment, (long) rows[offset + j] * w, dst, to + (long) j * w, w);
                }
            }
            if (c.validField >= 0) {
                MemorySegment valid = row.column(c.validField);
                long vto = row.offset(c.validField) + done;
                if (v.valid == null) {
                    valid.asSlice(vto, n).fill((byte) 1);
                } else if (rows == null) {
                    MemorySegment.copy(v.validSegment, offset, valid, vto, n);
                } else {
                    for (int j = 0; j < n; j++) {
                        valid.set(ValueLayout.JAVA_BYTE, vto + j, v.valid[rows[offset + j]]);
                    }
                }
            }
        }
    }

    /**
     * Samples in no particular order, gathered column by column (see {@link #readAll}). The
     * batch's samples are first sorted by row group (a counting sort: a batch holds a few), so
     * that each column is then copied group by group, from one segment at a time: the checks of
     * that segment (bounds, and that its memory is still there) are made once per group and
     * column, not once per value.
     */
    private void gatherAll(long[] indices, int from, int count, Row row) throws IOException {
        Gather g = gathers.poll();
        if (g == null) {
            g = new Gather(groups.length);
        }
        g.size(count);
        int d = 0;
        try {
            for (int i = 0; i < count; i++) {
                long index = indices[from + i];
                int k = group(index);
                int offset = (int) (index - starts[k]);
                g.row[i] = kept[k] != null ? kept[k][offset] : offset;
                int s = g.slot[k];
                if (s < 0) {
                    s = d++;
                    g.slot[k] = s;
                    g.distinct[s] = k;
                }
                g.group[i] = s;
                g.end[s]++;
            }
            for (int s = 1; s <= d; s++) {
                g.end[s] += g.end[s - 1]; // each slot's end among the sorted samples
            }
            for (int i = count - 1; i >= 0; i--) {
                int t = --g.end[g.group[i]]; // now each slot's start
                g.sortedRow[t] = g.row[i];
                g.sortedAt[t] = i;
            }
            cache.start(g.distinct, d); // the batch's groups that no worker decodes yet are decoded here
            for (int s = 0; s < d; s++) {
                g.held[s] = cache.get(g.distinct[s]).values;
            }
            for (int c = 0; c < columns.length; c++) {
                MemorySegment dst = row.column(columns[c].field);
                long at = row.offset(columns[c].field);
                int validField = columns[c].validField;
                MemorySegment valid = validField >= 0 ? row.column(validField) : null;
                long vat = validField >= 0 ? row.offset(validField) : 0;
                for (int s = 0; s < d; s++) {
                    int begin = g.end[s];
                    int stop = s + 1 < d ? g.end[s + 1] : count;
                    Values v = g.held[s][c];
                    gather(v.segment, g.sortedRow, g.sortedAt, begin, stop, dst, at, v.width);
                    if (valid != null) {
                        for (int t = begin; t < stop; t++) {
                            valid.set(ValueLayout.JAVA_BYTE, vat + g.sortedAt[t], v.present(g.sortedRow[t]) ? (byte) 1 : 0);
                        }
                    }
                }
            }
        } finally {
            g.clear(d);
            gathers.add(g);
        }
    }

    /** Values of width {@code w}: row {@code rows[t]} of {@code src} to sample {@code at[t]} of {@code dst} from {@code base}, for {@code t} in {@code [begin, stop)}. */
    private static void gather(MemorySegment src, int[] rows, int[] at, int begin, int stop, MemorySegment dst, long base, int w) {
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

    /** Scratch for one {@link #readAll} at a time: the batch's samples sorted by row group, and the groups it holds. */
    private static final class Gather {
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
    }

    /**
     * The row group holding row {@code index}: a guess from the first group's size (a
     * multiplication: a division would cost a shuffled batch more than its gather), then a binary
     * search if it missed.
     */
    private int group(long index) {
        if (index < 0 || index >= size) {
            throw new IndexOutOfBoundsException("row " + index + " of " + size);
        }
        int k = (int) Math.min(groups.length - 1, index * perGroup);
        if (starts[k] <= index && index < starts[k + 1]) {
            return k; // every row of a file whose groups (but the last) have one size
        }
        k = Arrays.binarySearch(starts, index); // no two starts are equal: every group kept has rows
        return k >= 0 ? k : -k - 2;
    }

    // ---- decoding ------------------------------------------------------------------------------

    enum Kind {
        BOOL(DType.BOOL), INT32(DType.INT32), UINT32(DType.UINT32), INT64(DType.INT64), UINT64(DType.UINT64),
        FLOAT32(DType.FLOAT32), FLOAT64(DType.FLOAT64), DECIMAL32(DType.FLOAT64), DECIMAL64(DType.FLOAT64), BYTES(null);

        final DType dtype;

        Kind(DType dtype) {
            this.dtype = dtype;
        }
    }

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

    /** A projected (or filter) column: its place in the file and its fields in the batch. */
    record Column(SchemaNode.PrimitiveNode node, int typeLength, Kind kind, int field, int validField) {
        String name() {
            return node.name();
        }
    }

    /** A top-level, non-repeated primitive column of the file; {@code context} prefixes the error. */
    private SchemaNode.PrimitiveNode flatColumn(FileSchema file, String name, String context) {
        SchemaNode n = file.getRootNode().children().stream().filter(c -> c.name().equals(name)).findFirst().orElse(null);
        if (n == null) {
            throw new IllegalArgumentException(location + ": " + context + "no column '" + name + "' (it has "
                    + file.getRootNode().children().stream().map(SchemaNode::name).toList() + ")");
        }
        if (!(n instanceof SchemaNode.PrimitiveNode p) || p.repetitionType() == RepetitionType.REPEATED) {
            throw new IllegalArgumentException(location + ": " + context + "column '" + name
                    + "' is nested or repeated; only flat columns can be read");
        }
        return p;
    }

    private static int typeLength(FileSchema file, SchemaNode.PrimitiveNode p) {
        Integer n = file.getColumn(p.columnIndex()).typeLength();
        return n == null ? 0 : n;
    }

    private static Kind kind(SchemaNode.PrimitiveNode p) {
        LogicalType l = p.logicalType();
        boolean unsigned = l instanceof LogicalType.IntType i && !i.isSigned();
        boolean decimal = l instanceof LogicalType.DecimalType;
        return switch (p.type()) {
            case BOOLEAN -> Kind.BOOL;
            case INT32 -> decimal ? Kind.DECIMAL32 : unsigned ? Kind.UINT32 : Kind.INT32;
            case INT64 -> decimal ? Kind.DECIMAL64 : unsigned ? Kind.UINT64 : Kind.INT64;
            case FLOAT -> Kind.FLOAT32;
            case DOUBLE -> Kind.FLOAT64;
            case BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY -> Kind.BYTES;
            case INT96 -> Kind.BYTES; // legacy timestamps: their 12 bytes as they are
        };
    }

    /**
     * Row group {@code g}'s chunks of {@code cols}, read with one read per run of adjacent chunks
     * and decoded; a chunk in an encoding the page decoder does not handle goes to Hardwood.
     */
    private Group decode(int g, Column[] cols) throws IOException {
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
        Arrays.sort(order, (a, b) -> Long.compare(chunk(group, cols[a]).chunkStartOffset(), chunk(group, cols[b]).chunkStartOffset()));
        ChunkDecoder decoder = decoders.poll();
        if (decoder == null) {
            decoder = new ChunkDecoder();
        }
        Slabs.Lease memory = slabs.lease(fixedBytes(cols, n));
        boolean done = false;
        int i = 0;
        Column current = cols[order[0]];
        try {
            while (i < cols.length) {
                // a run of adjacent chunks: one read
                long from = chunk(group, cols[order[i]]).chunkStartOffset();
                long to = from;
                int j = i;
                while (j < cols.length && chunk(group, cols[order[j]]).chunkStartOffset() == to) { // at least chunk i
                    to += chunk(group, cols[order[j]]).metaData().totalCompressedSize();
                    j++;
                }
                int length = Math.toIntExact(to - from);
                byte[] bytes = decoder.buffer(length);
                input.read(from, bytes, 0, length);
                for (; i < j; i++) {
                    current = cols[order[i]];
                    ColumnChunk c = chunk(group, current);
                    ColumnMetaData m = c.metaData();
                    ChunkDecoder.Spec spec = new ChunkDecoder.Spec(m.type(), current.typeLength,
                            current.node.maxDefinitionLevel(), m.codec());
                    Values v;
                    try {
                        v = decoder.decode(bytes, (int) (c.chunkStartOffset() - from), Math.toIntExact(m.totalCompressedSize()), spec, n, memory.allocator);
                    } catch (ChunkDecoder.Unsupported e) {
                        v = hardwood(group, current, spec.width(), n);
                    }
                    out[order[i]] = decimal(v, current, memory.allocator);
                }
            }
            done = true;
            return new Group(out, memory);
        } catch (IOException | RuntimeException e) {
            if (e instanceof CorruptShardException || e instanceof java.io.FileNotFoundException
                    || e instanceof java.nio.channels.ClosedByInterruptException || e instanceof java.io.InterruptedIOException || closed) {
                throw e; // an interrupted read is not a corrupt row group
            }
            throw new CorruptShardException(location, chunk(group, current).chunkStartOffset(),
                    "row group " + g + " is unreadable: column '" + current.name() + "': " + describe(e), e);
        } finally {
            decoders.add(decoder);
            if (!done) {
                memory.free();
            }
        }
    }

    /** The off-heap bytes a group of {@code rows} rows of {@code cols} takes: its fixed-width values (8-aligned), and doubles for its decimals. */
    private static long fixedBytes(Column[] cols, long rows) {
        long n = 0;
        for (Column c : cols) {
            int w = ChunkDecoder.width(c.node.type());
            n += w == 0 ? 0 : ChunkDecoder.SLACK + ((rows * w + 7) & ~7L);
            if (c.kind == Kind.DECIMAL32 || c.kind == Kind.DECIMAL64) {
                n += 8 * rows;
            }
        }
        return n;
    }

    private static ColumnChunk chunk(RowGroup group, Column c) {
        return group.columns().get(c.node.columnIndex());
    }

    /** A chunk decoded by Hardwood's column reader (the encodings {@link ChunkDecoder} does not handle). */
    private Values hardwood(RowGroup group, Column c, int w, int n) throws IOException {
        long from = Long.MAX_VALUE;
        long to = 0;
        for (ColumnChunk k : group.columns()) {
            from = Math.min(from, k.chunkStartOffset());
            to = Math.max(to, k.chunkStartOffset() + k.metaData().totalCompressedSize());
        }
        PhysicalType type = c.node.type();
        byte[] data = new byte[w * n];
        MemorySegment seg = MemorySegment.ofArray(data);
        int[] offsets = w == 0 ? new int[n + 1] : null;
        ByteArrayOutputStream bytes = w == 0 ? new ByteArrayOutputStream() : null;
        byte[] valid = c.node.maxDefinitionLevel() > 0 ? new byte[n] : null;
        boolean nulls = false;
        int r = 0;
        try (ColumnReader reader = hardwood.buildColumnReader(c.node.columnIndex())
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

    private static final ValueLayout.OfInt LE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong LE_LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat LE_FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfDouble LE_DOUBLE = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** A decimal column's unscaled integers as doubles (a null as NaN); any other column as it is. */
    private static Values decimal(Values v, Column c, SegmentAllocator arena) {
        if (c.kind != Kind.DECIMAL32 && c.kind != Kind.DECIMAL64) {
            return v;
        }
        double unit = Math.pow(10, -((LogicalType.DecimalType) c.node.logicalType()).scale());
        MemorySegment to = arena.allocate(8L * v.rows, 8);
        for (int r = 0; r < v.rows; r++) {
            double x = !v.present(r) ? Double.NaN
                    : c.kind == Kind.DECIMAL32 ? v.segment.get(LE_INT, 4L * r) * unit : v.segment.get(LE_LONG, 8L * r) * unit;
            to.set(LE_DOUBLE, 8L * r, x);
        }
        return new Values(8, v.rows, to, v.valid);
    }

    /** The rows of row group {@code g} whose filter column satisfies the condition. */
    private int[] matching(int g, Column column, Where where, Where.Bound bound) throws IOException {
        Group d = decode(g, new Column[] {column});
        try {
            Values v = d.values[0];
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

    /**
     * The bytes a read of the projection needs: the footer (everything after the last column
     * chunk) and the chunks of the projected and filter columns in the row groups read.
     */
    private long projectionBytes(List<RowGroup> blocks, Column[] projected, Column filter) {
        Set<Integer> read = new HashSet<>();
        for (Column c : projected) {
            read.add(c.node.columnIndex());
        }
        if (filter != null) {
            read.add(filter.node.columnIndex());
        }
        long dataEnd = 4; // the leading magic
        for (RowGroup b : blocks) {
            for (ColumnChunk c : b.columns()) {
                dataEnd = Math.max(dataEnd, c.chunkStartOffset() + c.metaData().totalCompressedSize());
            }
        }
        long need = input.length() - dataEnd;
        for (int g : groups) {
            for (int c : read) {
                need += blocks.get(g).columns().get(c).metaData().totalCompressedSize();
            }
        }
        return need;
    }

    /**
     * The bytes fetched from a remote file so far and the requests that fetched them (both zero
     * for a local file, which is not fetched), the bytes the projection needs
     * ({@link #projectionBytes}) and the file's size.
     */
    public record Traffic(long bytesFetched, long requests, long projectionBytes, long fileBytes) {
    }

    public Traffic traffic() {
        return new Traffic(input.bytesFetched.sum(), input.requests.sum(), projectionBytes, input.length());
    }

    /**
     * Hardwood's reader of the file's footer. The file's end is read first, so that a store's
     * error is reported as itself (and a remote file's tail is fetched once); a footer that
     * cannot be parsed is a corrupt file.
     */
    private static ParquetFileReader open(ParquetInput in, String location) throws IOException {
        byte[] end = new byte[8];
        if (in.length() < 12) {
            throw new CorruptShardException(location, 0, "not a readable Parquet file: " + in.length() + " bytes, too short for one");
        }
        in.read(in.length() - 8, end, 0, 8);
        if (end[4] != 'P' || end[5] != 'A' || end[6] != 'R' || end[7] != '1') {
            throw new CorruptShardException(location, in.length() - 4, "not a readable Parquet file: it does not end with the magic PAR1");
        }
        try {
            return ParquetFileReader.open(in);
        } catch (IOException | RuntimeException e) {
            throw corruptFooter(in, location, e);
        }
    }

    /** What {@link #decompressionCeiling} measured: the chunks' bytes, the bytes their pages hold uncompressed, and the time it took. */
    public record Ceiling(long compressedBytes, long uncompressedBytes, double seconds, int threads) {
    }

    /**
     * The decompression ceiling of this dataset's reads: the projected column chunks of the row
     * groups read, fetched into memory first, then every page decompressed (nothing decoded) on
     * {@code threads} threads, a chunk at a time. No reader of these pages can be faster; a
     * benchmark reports its own rate against this one, measured in the same run.
     */
    public Ceiling decompressionCeiling(int threads) throws IOException, InterruptedException {
        if (threads < 1) {
            throw new IllegalArgumentException("the decompression ceiling needs at least one thread, got " + threads);
        }
        List<byte[]> chunks = new ArrayList<>();
        List<ChunkDecoder.Spec> specs = new ArrayList<>();
        long compressed = 0;
        for (int g : groups) {
            RowGroup group = meta.rowGroups().get(g);
            for (Column c : columns) {
                ColumnChunk k = chunk(group, c);
                byte[] b = new byte[Math.toIntExact(k.metaData().totalCompressedSize())];
                input.read(k.chunkStartOffset(), b, 0, b.length);
                chunks.add(b);
                specs.add(new ChunkDecoder.Spec(k.metaData().type(), c.typeLength, c.node.maxDefinitionLevel(), k.metaData().codec()));
                compressed += b.length;
            }
        }
        AtomicInteger next = new AtomicInteger();
        AtomicLong out = new AtomicLong();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            long t0 = System.nanoTime();
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                done.add(pool.submit(() -> {
                    ChunkDecoder d = new ChunkDecoder();
                    for (int i; (i = next.getAndIncrement()) < chunks.size(); ) {
                        byte[] b = chunks.get(i);
                        out.addAndGet(d.decompressOnly(b, 0, b.length, specs.get(i)));
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                try {
                    f.get();
                } catch (ExecutionException e) {
                    throw new IOException(location + ": decompressing its chunks: " + describe(e.getCause()), e.getCause());
                }
            }
            return new Ceiling(compressed, out.get(), (System.nanoTime() - t0) / 1e9, threads);
        } finally {
            pool.shutdownNow();
        }
    }

    private static CorruptShardException corruptFooter(ParquetInput in, String location, Exception e) {
        return new CorruptShardException(location, Math.max(0, in.length() - 8),
                "not a readable Parquet file (the footer at its end): " + describe(e), e);
    }

    private static String describe(Throwable e) {
        return e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
    }

    private static boolean mayHoldNulls(List<RowGroup> blocks, int column) {
        for (RowGroup b : blocks) {
            var st = b.columns().get(column).metaData().statistics();
            if (st == null || st.nullCount() == null || st.nullCount() > 0) {
                return true;
            }
        }
        return false;
    }

    private static long bytesHint(List<RowGroup> blocks, int column) {
        long bytes = 0;
        long rows = 0;
        for (RowGroup b : blocks) {
            bytes += b.columns().get(column).metaData().totalUncompressedSize();
            rows += b.numRows();
        }
        return Math.max(8, rows == 0 ? 8 : bytes / rows);
    }

    /** A column's type as {@code stoker inspect} names it: the logical type if any, else the physical one. */
    static String typeName(SchemaNode n) {
        String base;
        if (!(n instanceof SchemaNode.PrimitiveNode p)) {
            base = "group";
        } else {
            LogicalType l = p.logicalType();
            String physical = p.type() == PhysicalType.BYTE_ARRAY ? "binary" : p.type().name().toLowerCase();
            if (l instanceof LogicalType.StringType) {
                base = "string";
            } else if (l instanceof LogicalType.IntType i) {
                base = (i.isSigned() ? "int" : "uint") + i.bitWidth();
            } else if (l instanceof LogicalType.DecimalType d) {
                base = "decimal(" + d.precision() + "," + d.scale() + ")";
            } else if (l != null) {
                base = physical + " (" + l + ")";
            } else {
                base = physical;
            }
        }
        return n.repetitionType() == RepetitionType.REPEATED ? "repeated " + base : base;
    }

    /** What {@code stoker inspect} shows of a Parquet file. */
    public record Info(long rows, int rowGroups, List<ColumnInfo> columns, String createdBy) {
    }

    public record ColumnInfo(String name, String type, boolean nullable) {
    }

    public static Info describe(Path path) throws IOException {
        return describe(path.toString());
    }

    /** {@link #describe(Path)} of a file at any location: a remote one by one ranged read of its footer. */
    public static Info describe(String location) throws IOException {
        try (ParquetFileReader r = open(new ParquetInput(location), location)) {
            FileMetaData f = r.getFileMetaData();
            long rows = 0;
            for (RowGroup b : f.rowGroups()) {
                rows += b.numRows();
            }
            List<ColumnInfo> cols = new ArrayList<>();
            for (SchemaNode t : r.getFileSchema().getRootNode().children()) {
                cols.add(new ColumnInfo(t.name(), typeName(t), t.repetitionType() == RepetitionType.OPTIONAL));
            }
            return new Info(rows, f.rowGroups().size(), cols, f.createdBy());
        }
    }

    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        cache.close();
        slabs.close();
        hardwood.close();
    }
}
