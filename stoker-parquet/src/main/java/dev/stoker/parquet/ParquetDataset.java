package dev.stoker.parquet;

import static dev.stoker.parquet.ParquetColumns.LE_INT;
import static dev.stoker.parquet.ParquetColumns.LE_LONG;
import static dev.stoker.parquet.ParquetColumns.bytesHint;
import static dev.stoker.parquet.ParquetColumns.chunk;
import static dev.stoker.parquet.ParquetColumns.fixedBytes;
import static dev.stoker.parquet.ParquetColumns.flatColumn;
import static dev.stoker.parquet.ParquetColumns.kind;
import static dev.stoker.parquet.ParquetColumns.mayHoldNulls;
import static dev.stoker.parquet.ParquetColumns.typeLength;

import dev.hardwood.metadata.ColumnChunk;
import dev.hardwood.metadata.ColumnMetaData;
import dev.hardwood.metadata.FileMetaData;
import dev.hardwood.metadata.RepetitionType;
import dev.hardwood.metadata.RowGroup;
import dev.hardwood.reader.ParquetFileReader;
import dev.hardwood.schema.FileSchema;
import dev.hardwood.schema.SchemaNode;
import dev.stoker.internal.BlockCache;
import dev.stoker.DType;
import dev.stoker.DirectDataset;
import dev.stoker.Field;
import dev.stoker.Row;
import dev.stoker.Schema;
import dev.stoker.parquet.ParquetColumns.Column;
import dev.stoker.parquet.ParquetColumns.Kind;
import dev.stoker.parquet.RowGroups.Group;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A Parquet file as a random-access dataset: one sample per row, one batch field per projected
 * column. Numeric and boolean columns become scalar fields of their type (int32, int64, uint32,
 * uint64, float32, float64, bool; decimals stored as int32 or int64 become float64), strings and
 * binary become variable-length fields (offsets + bytes), lists of numbers ({@code list<float>}) ragged
 * fields of their element's type ({@link Field#ragged}; a null list reads as an empty one, a
 * null element of a float list as NaN, of any other list as an error). A nullable column that holds nulls also
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
    private final ConcurrentLinkedQueue<Gather> gathers = new ConcurrentLinkedQueue<>();
    private final BlockCache<Group> cache;
    private final RowGroups rowGroups;
    private volatile boolean closed;

    /**
     * What to read of a file.
     *
     * @param columns the columns to read, in this order (empty: every top-level column)
     * @param where a row filter, or null for every row
     * @param cacheBytes the bound on decoded row groups held at once (at least one is always held)
     */
    public record Options(List<String> columns, Where where, long cacheBytes) {
        public Options {
            columns = List.copyOf(columns);
        }

        /** Every top-level column, every row, {@link #DEFAULT_CACHE_BYTES} of decoded row groups. */
        public static Options of() {
            return new Options(List.of(), null, DEFAULT_CACHE_BYTES);
        }

        public Options withColumns(List<String> columns) {
            return new Options(columns, where, cacheBytes);
        }

        public Options withWhere(Where where) {
            return new Options(columns, where, cacheBytes);
        }

        public Options withCacheBytes(long cacheBytes) {
            return new Options(columns, where, cacheBytes);
        }
    }

    /**
     * A Parquet file at any location {@link dev.stoker.storage.Storage} reads: a local file by
     * positioned reads, a remote one by ranged requests for its footer and the column chunks of
     * the row groups read ({@link #traffic()} tells how many bytes that fetched).
     */
    public static ParquetDataset open(String location, Options options) throws IOException {
        return new ParquetDataset(location, options.columns(), options.where(), options.cacheBytes());
    }

    private ParquetDataset(String location, List<String> columns, Where where, long cacheBytes) throws IOException {
        this.location = location;
        this.input = new ParquetInput(location);
        ParquetFileReader reader = ParquetFooter.open(input, location);
        try {
            this.meta = reader.getFileMetaData();
            FileSchema file = reader.getFileSchema();
            List<String> names = columns.isEmpty() ? file.getRootNode().children().stream().map(SchemaNode::name).toList() : columns;
            List<RowGroup> blocks = meta.rowGroups();
            this.columns = new Column[names.size()];
            List<Field> fields = new ArrayList<>();
            for (int i = 0; i < names.size(); i++) {
                SchemaNode.PrimitiveNode leaf = ParquetColumns.listLeaf(location, file, names.get(i));
                if (leaf != null) { // a list of numbers: a ragged field, its values read by Hardwood's nested reader
                    Kind kind = kind(leaf);
                    this.columns[i] = new Column(leaf, typeLength(file, leaf), kind, fields.size(), -1, names.get(i));
                    fields.add(Field.ragged(names.get(i), kind.dtype, bytesHint(blocks, leaf.columnIndex())));
                    continue;
                }
                SchemaNode.PrimitiveNode node = flatColumn(location, file, names.get(i), "");
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

            long largest = 0;
            for (RowGroup b : blocks) {
                largest = Math.max(largest, fixedBytes(this.columns, b.numRows()));
            }
            this.rowGroups = new RowGroups(location, input, meta, reader, new Slabs(largest, SLABS_KEPT));

            // row groups, pruned by the filter's statistics, then the matching rows of each
            List<Integer> keep = new ArrayList<>();
            List<int[]> rows = new ArrayList<>();
            Where.Bound bound = null;
            Column filter = null;
            if (where != null) {
                SchemaNode.PrimitiveNode node = flatColumn(location, file, where.column(), "filter '" + where + "': ");
                bound = where.bind(node.type());
                filter = new Column(node, typeLength(file, node), kind(node), -1, -1);
            }
            for (int g = 0; g < blocks.size(); g++) {
                RowGroup b = blocks.get(g);
                if (b.numRows() == 0) {
                    continue;
                }
                if (bound != null) {
                    ColumnMetaData m = b.columns().get(filter.node().columnIndex()).metaData();
                    if (bound.rulesOut(m.statistics(), m.numValues())) {
                        continue;
                    }
                    int[] match = rowGroups.matching(g, filter, where, bound);
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
            this.cache = new BlockCache<>(location, groups.length, cacheBytes, k -> rowGroups.decode(groups[k], this.columns),
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
            crc.update((c.name() + ":" + c.kind()).getBytes(java.nio.charset.StandardCharsets.UTF_8));
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
            write(cache.get(k).values(), r, row);
        } catch (IllegalStateException e) {
            Group own = freedUnder(e, k);
            try {
                write(own.values(), r, row);
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
        return rowGroups.decode(groups[k], columns);
    }

    /**
     * Writes row {@code r} of a decoded group: first the fixed-width values, the only reads that
     * can fail on freed memory (and are simply done again), then the variable-length ones (on
     * the heap, appended once) and the validity bytes.
     */
    private void write(Values[] d, int r, Row row) {
        for (int i = 0; i < columns.length; i++) {
            Values v = d[i];
            int f = columns[i].field();
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
                row.append(c.field(), v.segment, v.offsets[r], v.offsets[r + 1] - v.offsets[r]);
            }
            if (c.validField() >= 0) {
                row.putByte(c.validField(), 0, v.present(r) ? (byte) 1 : 0);
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
                copy(cache.get(k).values(), kept[k], offset, n, done, row);
            } catch (IllegalStateException e) {
                Group own = freedUnder(e, k);
                try {
                    copy(own.values(), kept[k], offset, n, done, row);
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
            MemorySegment dst = row.column(c.field());
            long to = row.offset(c.field()) + (long) done * w;
            if (rows == null) {
                MemorySegment.copy(v.segment, (long) offset * w, dst, to, (long) n * w);
            } else {
                for (int j = 0; j < n; j++) {
                    MemorySegment.copy(v.segment, (long) rows[offset + j] * w, dst, to + (long) j * w, w);
                }
            }
            if (c.validField() >= 0) {
                MemorySegment valid = row.column(c.validField());
                long vto = row.offset(c.validField()) + done;
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
                g.held[s] = cache.get(g.distinct[s]).values();
            }
            for (int c = 0; c < columns.length; c++) {
                MemorySegment dst = row.column(columns[c].field());
                long at = row.offset(columns[c].field());
                int validField = columns[c].validField();
                MemorySegment valid = validField >= 0 ? row.column(validField) : null;
                long vat = validField >= 0 ? row.offset(validField) : 0;
                for (int s = 0; s < d; s++) {
                    int begin = g.end[s];
                    int stop = s + 1 < d ? g.end[s + 1] : count;
                    Values v = g.held[s][c];
                    Gather.copy(v.segment, g.sortedRow, g.sortedAt, begin, stop, dst, at, v.width);
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

    /**
     * The bytes a read of the projection needs: the footer (everything after the last column
     * chunk) and the chunks of the projected and filter columns in the row groups read.
     */
    private long projectionBytes(List<RowGroup> blocks, Column[] projected, Column filter) {
        Set<Integer> read = new HashSet<>();
        for (Column c : projected) {
            read.add(c.node().columnIndex());
        }
        if (filter != null) {
            read.add(filter.node().columnIndex());
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

    // for ParquetCeiling
    String location() {
        return location;
    }

    ParquetInput input() {
        return input;
    }

    FileMetaData meta() {
        return meta;
    }

    int[] groups() {
        return groups;
    }

    Column[] columns() {
        return columns;
    }

    /**
     * Field {@code field}'s value {@code bytes}, of a column batched as bytes, as a reader of the
     * table means it ({@code stoker cat}): a string's text, an INT96 timestamp's instant (ISO-8601),
     * a decimal's number; null when the bytes are the value (or the field is no such column).
     */
    public Object shown(String field, byte[] bytes) {
        for (Column c : columns) {
            if (c.kind() == ParquetColumns.Kind.BYTES && c.name().equals(field)) {
                return ParquetColumns.shown(c.node(), bytes);
            }
        }
        return null;
    }

    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        rowGroups.stop();
        cache.close();
        rowGroups.close();
    }
}
