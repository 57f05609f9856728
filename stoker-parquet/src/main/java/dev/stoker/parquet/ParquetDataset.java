package dev.stoker.parquet;

import dev.stoker.BlockCache;
import dev.stoker.CorruptShardException;
import dev.stoker.DType;
import dev.stoker.DirectDataset;
import dev.stoker.Field;
import dev.stoker.Row;
import dev.stoker.Schema;
import dev.stoker.storage.Storage;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.parquet.ParquetReadOptions;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.ColumnReader;
import org.apache.parquet.column.impl.ColumnReadStoreImpl;
import org.apache.parquet.column.page.PageReadStore;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.filter2.statisticslevel.StatisticsFilter;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.parquet.io.InputFile;
import org.apache.parquet.io.LocalInputFile;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.io.api.Converter;
import org.apache.parquet.io.api.GroupConverter;
import org.apache.parquet.io.api.PrimitiveConverter;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType;
import org.apache.parquet.schema.Type;

/**
 * A Parquet file as a random-access dataset: one sample per row, one batch field per projected
 * column. Numeric and boolean columns become scalar fields of their type (int32, int64, uint32,
 * uint64, float32, float64, bool; decimals stored as int32 or int64 become float64), strings and
 * binary become variable-length fields (offsets + bytes). A nullable
 * column that holds nulls also gets a bool field {@code <name>_valid} (false for a null, whose value
 * is written as 0, NaN or empty).
 *
 * <p>Rows are addressed by (row group, offset): sample {@code i} is found by a binary search over
 * the row groups' first rows, so every order, partition and resume of the core applies. A row
 * group is decoded once, column by column (only the projected ones), by the worker that first
 * needs it, into plain arrays kept in a {@link BlockCache} bounded in bytes; workers that need
 * different row groups decode them in parallel, each with a reader of its own. An optional {@link Where} filter
 * skips row groups whose statistics rule it out and keeps the matching rows of the others (found
 * once, when the dataset is opened).
 *
 * <p>An order that jumps between row groups at random decodes a group per sample once the file
 * outgrows the cache: shuffle such a file by row group, or give the cache room for it.
 */
public final class ParquetDataset implements DirectDataset, AutoCloseable {
    /** The default bound on decoded row groups held at once. */
    public static final long DEFAULT_CACHE_BYTES = 512L << 20;

    private final String location;
    private final InputFile input;
    private final StorageInputFile.Traffic traffic = new StorageInputFile.Traffic();
    private final long projectionBytes;
    private final ParquetMetadata footer;
    private final ParquetReadOptions options;
    private final MessageType projection;
    private final Column[] columns;
    private final Schema schema;
    private final int[] groups;
    private final long[] starts;
    private final int[][] kept;
    private final long size;
    private final ConcurrentLinkedQueue<ParquetFileReader> readers = new ConcurrentLinkedQueue<>();
    private final BlockCache<Decoded> cache;

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
     * A Parquet file at any location {@link Storage} reads: a local file is read as such, a
     * remote one by ranged requests for its footer and the column chunks of the row groups read
     * ({@link #traffic()} tells how many bytes that fetched).
     */
    public ParquetDataset(String location, List<String> columns, Where where, long cacheBytes) throws IOException {
        this.location = location;
        this.options = options();
        this.input = inputFile(location, traffic);
        ParquetFileReader first = open(input, location, null, options);
        try {
            this.footer = first.getFooter();
            MessageType file = footer.getFileMetaData().getSchema();
            List<String> names = columns.isEmpty() ? file.getFields().stream().map(Type::getName).toList() : columns;
            List<Type> projected = new ArrayList<>();
            List<BlockMetaData> blocks = footer.getBlocks();
            this.columns = new Column[names.size()];
            List<Field> fields = new ArrayList<>();
            for (int i = 0; i < names.size(); i++) {
                String name = names.get(i);
                Type t = flatColumn(file, name, "");
                projected.add(t);
                PrimitiveType p = t.asPrimitiveType();
                boolean nulls = t.isRepetition(Type.Repetition.OPTIONAL) && mayHoldNulls(blocks, name);
                Column c = new Column(name, p, file.getColumnDescription(new String[] {name}), kind(p), fields.size(), nulls ? fields.size() + 1 : -1);
                this.columns[i] = c;
                fields.add(c.kind == Kind.BYTES ? Field.bytes(name, bytesHint(blocks, name)) : Field.scalar(name, c.kind.dtype));
                if (nulls) {
                    fields.add(Field.scalar(name + "_valid", DType.BOOL));
                }
            }
            this.schema = Schema.of(fields.toArray(Field[]::new));
            this.projection = new MessageType(file.getName(), projected);

            // row groups, pruned by the filter's statistics, then the matching rows of each
            List<Integer> keep = new ArrayList<>();
            List<int[]> rows = new ArrayList<>();
            Where.Bound bound = null;
            ColumnDescriptor filterColumn = null;
            if (where != null) {
                Type t = flatColumn(file, where.column(), "filter '" + where + "': ");
                bound = where.bind(t.asPrimitiveType());
                filterColumn = file.getColumnDescription(new String[] {where.column()});
            }
            for (int g = 0; g < blocks.size(); g++) {
                BlockMetaData b = blocks.get(g);
                if (b.getRowCount() == 0) {
                    continue;
                }
                if (bound != null) {
                    if (StatisticsFilter.canDrop(bound.predicate(), b.getColumns())) {
                        continue;
                    }
                    int[] match = matching(first, g, b.getRowCount(), filterColumn, where, bound);
                    if (match.length == 0) {
                        continue;
                    }
                    rows.add(match.length == b.getRowCount() ? null : match);
                } else {
                    rows.add(null);
                }
                keep.add(g);
            }
            this.groups = keep.stream().mapToInt(Integer::intValue).toArray();
            this.kept = rows.toArray(int[][]::new);
            this.starts = new long[groups.length + 1];
            for (int i = 0; i < groups.length; i++) {
                starts[i + 1] = starts[i] + (kept[i] != null ? kept[i].length : blocks.get(groups[i]).getRowCount());
            }
            this.size = starts[groups.length];
            this.projectionBytes = projectionBytes(blocks, names, where);
            this.cache = new BlockCache<>(location, groups.length, cacheBytes, k -> decode(groups[k]), d -> d.byteSize);
            first.setRequestedSchema(projection);
            readers.add(first);
            first = null;
        } finally {
            if (first != null) {
                first.close();
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

    /** Forgets the decoded row groups, so that the next pass starts cold (benchmarks do this per configuration). */
    public void dropCache() {
        cache.clear();
    }

    @Override
    public void read(long index, Row row) throws IOException {
        if (index < 0 || index >= size) {
            throw new IndexOutOfBoundsException("row " + index + " of " + size);
        }
        int k = Arrays.binarySearch(starts, index); // no two starts are equal: every group kept has rows
        k = k >= 0 ? k : -k - 2;
        int offset = (int) (index - starts[k]);
        int r = kept[k] != null ? kept[k][offset] : offset;
        Decoded d = cache.get(k);
        for (int i = 0; i < columns.length; i++) {
            d.write(i, columns[i], r, row);
        }
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

    record Column(String name, PrimitiveType type, ColumnDescriptor descriptor, Kind kind, int field, int validField) {
    }

    /** A top-level, non-repeated primitive column of the file; {@code context} prefixes the error. */
    private Type flatColumn(MessageType file, String name, String context) {
        if (!file.containsField(name)) {
            throw new IllegalArgumentException(location + ": " + context + "no column '" + name + "' (it has " + columnNames(file) + ")");
        }
        Type t = file.getType(name);
        if (!t.isPrimitive() || t.isRepetition(Type.Repetition.REPEATED)) {
            throw new IllegalArgumentException(location + ": " + context + "column '" + name
                    + "' is nested or repeated; only flat columns can be read");
        }
        return t;
    }

    private static Kind kind(PrimitiveType p) {
        LogicalTypeAnnotation l = p.getLogicalTypeAnnotation();
        boolean unsigned = l instanceof LogicalTypeAnnotation.IntLogicalTypeAnnotation i && !i.isSigned();
        boolean decimal = l instanceof LogicalTypeAnnotation.DecimalLogicalTypeAnnotation;
        return switch (p.getPrimitiveTypeName()) {
            case BOOLEAN -> Kind.BOOL;
            case INT32 -> decimal ? Kind.DECIMAL32 : unsigned ? Kind.UINT32 : Kind.INT32;
            case INT64 -> decimal ? Kind.DECIMAL64 : unsigned ? Kind.UINT64 : Kind.INT64;
            case FLOAT -> Kind.FLOAT32;
            case DOUBLE -> Kind.FLOAT64;
            case BINARY, FIXED_LEN_BYTE_ARRAY -> Kind.BYTES;
            case INT96 -> Kind.BYTES; // legacy timestamps: their 12 bytes as they are
        };
    }

    /** One row group's projected columns, decoded into arrays; immutable once made. */
    private final class Decoded {
        final Object[] values = new Object[columns.length];
        final int[][] offsets = new int[columns.length][];
        final MemorySegment[] bytes = new MemorySegment[columns.length];
        final boolean[][] valid = new boolean[columns.length][];
        long byteSize;

        void write(int i, Column c, int r, Row row) {
            boolean present = valid[i] == null || valid[i][r];
            switch (c.kind) {
                case BOOL -> row.putByte(c.field, 0, ((boolean[]) values[i])[r] ? (byte) 1 : 0);
                case INT32, UINT32 -> row.putInt(c.field, 0, ((int[]) values[i])[r]);
                case INT64, UINT64 -> row.putLong(c.field, 0, ((long[]) values[i])[r]);
                case FLOAT32 -> row.putFloat(c.field, 0, present ? ((float[]) values[i])[r] : Float.NaN);
                case FLOAT64, DECIMAL32, DECIMAL64 -> row.putDouble(c.field, 0, present ? ((double[]) values[i])[r] : Double.NaN);
                case BYTES -> row.append(c.field, bytes[i], offsets[i][r], offsets[i][r + 1] - offsets[i][r]);
            }
            if (c.validField >= 0) {
                row.putByte(c.validField, 0, present ? (byte) 1 : 0);
            }
        }
    }

    private Decoded decode(int g) throws IOException {
        ParquetFileReader reader = reader();
        try {
            PageReadStore pages = reader.readRowGroup(g);
            int n = Math.toIntExact(pages.getRowCount());
            ColumnReadStoreImpl store = new ColumnReadStoreImpl(pages, NO_CONVERTER, projection, footer.getFileMetaData().getCreatedBy());
            Decoded d = new Decoded();
            for (int i = 0; i < columns.length; i++) {
                Column c = columns[i];
                ColumnReader cr = store.getColumnReader(c.descriptor);
                int max = c.descriptor.getMaxDefinitionLevel();
                boolean[] valid = max > 0 ? new boolean[n] : null;
                boolean anyNull = false;
                Kind kind = c.kind;
                boolean[] bools = kind == Kind.BOOL ? new boolean[n] : null;
                int[] ints = kind == Kind.INT32 || kind == Kind.UINT32 ? new int[n] : null;
                long[] longs = kind == Kind.INT64 || kind == Kind.UINT64 ? new long[n] : null;
                float[] floats = kind == Kind.FLOAT32 ? new float[n] : null;
                double[] doubles = kind == Kind.FLOAT64 || kind == Kind.DECIMAL32 || kind == Kind.DECIMAL64 ? new double[n] : null;
                double unit = kind == Kind.DECIMAL32 || kind == Kind.DECIMAL64 ? Math.pow(10, -((LogicalTypeAnnotation.DecimalLogicalTypeAnnotation)
                        c.type.getLogicalTypeAnnotation()).getScale()) : 1;
                int[] off = kind == Kind.BYTES ? new int[n + 1] : null;
                java.io.ByteArrayOutputStream out = kind == Kind.BYTES ? new java.io.ByteArrayOutputStream() : null;
                // one loop for every kind: the switch is on a value fixed for the loop, which the JIT hoists
                for (int r = 0; r < n; r++, cr.consume()) {
                    boolean present = cr.getCurrentDefinitionLevel() == max;
                    if (present) {
                        switch (kind) {
                            case BOOL -> bools[r] = cr.getBoolean();
                            case INT32, UINT32 -> ints[r] = cr.getInteger();
                            case INT64, UINT64 -> longs[r] = cr.getLong();
                            case FLOAT32 -> floats[r] = cr.getFloat();
                            case FLOAT64 -> doubles[r] = cr.getDouble();
                            case DECIMAL32 -> doubles[r] = cr.getInteger() * unit;
                            case DECIMAL64 -> doubles[r] = cr.getLong() * unit;
                            case BYTES -> {
                                Binary b = cr.getBinary();
                                out.write(b.getBytesUnsafe(), 0, b.length());
                            }
                        }
                        if (valid != null) {
                            valid[r] = true;
                        }
                    } else {
                        anyNull = true;
                    }
                    if (off != null) {
                        off[r + 1] = out.size();
                    }
                }
                switch (kind) {
                    case BOOL -> d.values[i] = bools;
                    case INT32, UINT32 -> d.values[i] = ints;
                    case INT64, UINT64 -> d.values[i] = longs;
                    case FLOAT32 -> d.values[i] = floats;
                    case FLOAT64, DECIMAL32, DECIMAL64 -> d.values[i] = doubles;
                    case BYTES -> {
                        d.offsets[i] = off;
                        d.bytes[i] = MemorySegment.ofArray(out.toByteArray());
                    }
                }
                d.byteSize += kind == Kind.BYTES ? 4L * (n + 1) + out.size() : (long) n * Math.max(1, kind.dtype.byteSize());
                if (anyNull && c.validField < 0) {
                    // the statistics said no nulls (or were absent and the column is required)
                    throw new CorruptShardException(location, -1, "column '" + c.name + "' holds nulls in row group " + g
                            + " although its statistics say it has none");
                }
                d.valid[i] = c.validField >= 0 ? valid : null;
                d.byteSize += d.valid[i] != null ? n : 0;
            }
            return d;
        } catch (CorruptShardException e) {
            throw e;
        } catch (IOException | RuntimeException e) {
            throw new CorruptShardException(location, offset(g), "row group " + g + " is unreadable: " + describe(e), e);
        } finally {
            readers.add(reader);
        }
    }

    /** The rows of row group {@code g} whose filter column satisfies the condition. */
    private int[] matching(ParquetFileReader reader, int g, long rows, ColumnDescriptor column, Where where, Where.Bound bound)
            throws IOException {
        try {
            MessageType only = new MessageType("filter", footer.getFileMetaData().getSchema().getType(where.column()));
            reader.setRequestedSchema(only);
            PageReadStore pages = reader.readRowGroup(g);
            ColumnReadStoreImpl store = new ColumnReadStoreImpl(pages, NO_CONVERTER, only, footer.getFileMetaData().getCreatedBy());
            ColumnReader cr = store.getColumnReader(column);
            int max = column.getMaxDefinitionLevel();
            int n = Math.toIntExact(rows);
            int[] out = new int[n];
            int m = 0;
            for (int r = 0; r < n; r++, cr.consume()) {
                if (cr.getCurrentDefinitionLevel() != max) {
                    continue;
                }
                int c = switch (column.getPrimitiveType().getPrimitiveTypeName()) {
                    case INT32 -> Integer.compare(cr.getInteger(), (int) bound.integer());
                    case INT64 -> Long.compare(cr.getLong(), bound.integer());
                    case FLOAT -> Float.compare(cr.getFloat(), (float) bound.real());
                    case DOUBLE -> Double.compare(cr.getDouble(), bound.real());
                    case BOOLEAN -> Integer.compare(cr.getBoolean() ? 1 : 0, (int) bound.integer());
                    default -> Arrays.compareUnsigned(cr.getBinary().getBytesUnsafe(), bound.bytes());
                };
                if (where.op().holds(c)) {
                    out[m++] = r;
                }
            }
            return Arrays.copyOf(out, m);
        } catch (CorruptShardException e) {
            throw e;
        } catch (IOException | RuntimeException e) {
            throw new CorruptShardException(location, offset(g), "row group " + g + " is unreadable: " + describe(e), e);
        }
    }

    private long offset(int g) {
        List<ColumnChunkMetaData> cols = footer.getBlocks().get(g).getColumns();
        return cols.isEmpty() ? -1 : cols.get(0).getStartingPos();
    }

    private ParquetFileReader reader() throws IOException {
        ParquetFileReader r = readers.poll();
        if (r == null) {
            r = open(input, location, footer, options);
            r.setRequestedSchema(projection);
        }
        return r;
    }

    /**
     * The bytes a read of the projection needs: the footer (everything after the last column
     * chunk) and the chunks of the projected and filter columns in the row groups read.
     */
    private long projectionBytes(List<BlockMetaData> blocks, List<String> names, Where where) throws IOException {
        java.util.Set<String> read = new java.util.HashSet<>(names);
        if (where != null) {
            read.add(where.column());
        }
        long dataEnd = 4; // the leading magic
        for (BlockMetaData b : blocks) {
            for (ColumnChunkMetaData c : b.getColumns()) {
                dataEnd = Math.max(dataEnd, c.getStartingPos() + c.getTotalSize());
            }
        }
        long need = input.getLength() - dataEnd;
        for (int g : groups) {
            for (ColumnChunkMetaData c : blocks.get(g).getColumns()) {
                if (read.contains(c.getPath().toDotString())) {
                    need += c.getTotalSize();
                }
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

    public Traffic traffic() throws IOException {
        return new Traffic(traffic.bytes.sum(), traffic.requests.sum(), projectionBytes, input.getLength());
    }

    /** The file at {@code location}: a local file as such, any other through ranged reads counted in {@code traffic}. */
    private static InputFile inputFile(String location, StorageInputFile.Traffic traffic) throws IOException {
        if (Storage.isRemote(location)) {
            return new StorageInputFile(location, Storage.size(location), traffic);
        }
        Path path = location.startsWith("file:") ? Path.of(java.net.URI.create(location)) : Path.of(location);
        if (!Files.isRegularFile(path)) {
            throw new java.nio.file.NoSuchFileException(location);
        }
        return new LocalInputFile(path);
    }

    private static ParquetFileReader open(InputFile in, String location, ParquetMetadata footer, ParquetReadOptions options)
            throws IOException {
        try {
            return footer == null ? ParquetFileReader.open(in, options) : ParquetFileReader.open(in, footer, options, in.newStream());
        } catch (IOException e) {
            if (in instanceof StorageInputFile) {
                throw e; // the store's error, which names the location and the byte
            }
            throw corruptFooter(in, location, e);
        } catch (RuntimeException e) {
            throw corruptFooter(in, location, e);
        }
    }

    private static CorruptShardException corruptFooter(InputFile in, String location, Exception e) throws IOException {
        return new CorruptShardException(location, Math.max(0, in.getLength() - 8),
                "not a readable Parquet file (the footer at its end): " + describe(e), e);
    }

    /** Read options with Stoker's own page codecs, so no Hadoop {@code Configuration} is ever built. */
    private static ParquetReadOptions options() {
        return ParquetReadOptions.builder(new PlainParquetConfiguration()).withCodecFactory(Codecs.INSTANCE).build();
    }

    private static String describe(Throwable e) {
        return e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
    }

    private static boolean mayHoldNulls(List<BlockMetaData> blocks, String name) {
        for (BlockMetaData b : blocks) {
            for (ColumnChunkMetaData c : b.getColumns()) {
                if (c.getPath().toDotString().equals(name)) {
                    var st = c.getStatistics();
                    if (st == null || !st.isNumNullsSet() || st.getNumNulls() > 0) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    private static long bytesHint(List<BlockMetaData> blocks, String name) {
        long bytes = 0;
        long rows = 0;
        for (BlockMetaData b : blocks) {
            for (ColumnChunkMetaData c : b.getColumns()) {
                if (c.getPath().toDotString().equals(name)) {
                    bytes += c.getTotalUncompressedSize();
                    rows += b.getRowCount();
                }
            }
        }
        return Math.max(8, rows == 0 ? 8 : bytes / rows);
    }

    private static List<String> columnNames(MessageType t) {
        return t.getFields().stream().map(Type::getName).toList();
    }

    /** A column's type as {@code stoker inspect} names it: the logical type if any, else the physical one. */
    static String typeName(Type t) {
        if (!t.isPrimitive()) {
            return "group";
        }
        PrimitiveType p = t.asPrimitiveType();
        LogicalTypeAnnotation l = p.getLogicalTypeAnnotation();
        String physical = p.getPrimitiveTypeName().name().toLowerCase();
        String base;
        if (l instanceof LogicalTypeAnnotation.StringLogicalTypeAnnotation) {
            base = "string";
        } else if (l instanceof LogicalTypeAnnotation.IntLogicalTypeAnnotation i) {
            base = (i.isSigned() ? "int" : "uint") + i.getBitWidth();
        } else if (l instanceof LogicalTypeAnnotation.DecimalLogicalTypeAnnotation d) {
            base = "decimal(" + d.getPrecision() + "," + d.getScale() + ")";
        } else if (l != null) {
            base = physical + " (" + l + ")";
        } else {
            base = physical;
        }
        return t.isRepetition(Type.Repetition.REPEATED) ? "repeated " + base : base;
    }

    /** What {@code stoker inspect} shows of a Parquet file. */
    public record Info(long rows, int rowGroups, List<ColumnInfo> columns, String createdBy) {
    }

    public record ColumnInfo(String name, String type, boolean nullable) {
    }

    public static Info describe(Path path) throws IOException {
        return describe(path.toString());
    }

    /** {@link #describe(Path)} of a file at any location: a remote one by ranged reads of its footer. */
    public static Info describe(String location) throws IOException {
        try (ParquetFileReader r = open(inputFile(location, new StorageInputFile.Traffic()), location, null, options())) {
            ParquetMetadata f = r.getFooter();
            long rows = 0;
            for (BlockMetaData b : f.getBlocks()) {
                rows += b.getRowCount();
            }
            List<ColumnInfo> cols = new ArrayList<>();
            for (Type t : f.getFileMetaData().getSchema().getFields()) {
                cols.add(new ColumnInfo(t.getName(), typeName(t), t.isRepetition(Type.Repetition.OPTIONAL)));
            }
            return new Info(rows, f.getBlocks().size(), cols, f.getFileMetaData().getCreatedBy());
        }
    }

    @Override
    public void close() throws IOException {
        cache.close();
        IOException first = null;
        for (ParquetFileReader r; (r = readers.poll()) != null; ) {
            try {
                r.close();
            } catch (IOException e) {
                first = first == null ? e : first;
            }
        }
        if (first != null) {
            throw first;
        }
    }

    private static final GroupConverter NO_CONVERTER = new GroupConverter() {
        private final PrimitiveConverter primitive = new PrimitiveConverter() {
        };

        @Override
        public Converter getConverter(int fieldIndex) {
            return primitive;
        }

        @Override
        public void start() {
        }

        @Override
        public void end() {
        }
    };
}
