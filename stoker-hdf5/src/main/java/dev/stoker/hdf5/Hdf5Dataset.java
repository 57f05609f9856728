package dev.stoker.hdf5;

import dev.stoker.internal.BlockCache;
import dev.stoker.CorruptShardException;
import dev.stoker.DType;
import dev.stoker.DirectDataset;
import dev.stoker.Field;
import dev.stoker.Row;
import dev.stoker.Schema;
import dev.stoker.formats.io.Fingerprints;
import io.jhdf.HdfFile;
import io.jhdf.api.Dataset;
import io.jhdf.api.Group;
import io.jhdf.api.Node;
import io.jhdf.api.dataset.ChunkedDataset;
import io.jhdf.api.dataset.ContiguousDataset;
import io.jhdf.object.datatype.DataType;
import io.jhdf.object.datatype.EnumDataType;
import io.jhdf.object.datatype.VariableLength;
import io.jhdf.object.datatype.FixedPoint;
import io.jhdf.object.datatype.FloatingPoint;
import io.jhdf.object.datatype.OrderedDataType;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.reflect.Array;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Datasets of an HDF5 file (as h5py writes them: contiguous or chunked, gzip and shuffle filters,
 * default or {@code libver='latest'}) as a random-access dataset: the first axis is the sample
 * axis, and sample {@code i} is the slice {@code [i]} of every dataset named, read without
 * reading the rest (jHDF, a pure-Java reader). Each dataset becomes the field named by its last
 * path component; a one-dimensional dataset of variable-length lists of numbers (h5py's
 * {@code vlen_dtype}) becomes a {@link Field#ragged ragged} field, read whole when the file is
 * opened. Samples are read as slices of decoded blocks (a chunk's rows for a chunked
 * dataset, about 1 MiB of rows for a contiguous one) held in a {@link BlockCache} bounded in
 * bytes, so a chunk is decompressed once per pass over it, not once per sample; a jHDF file handle
 * is not safe for concurrent reads, so each decoding thread takes a handle of its own from a pool
 * (opened on first need, all closed by {@link #close()}) and chunks are decompressed in parallel.
 */
public final class Hdf5Dataset implements DirectDataset, AutoCloseable {
    private final Path path;
    private final HdfFile file;
    private final Dataset[] datasets;
    private final long[][] dims;
    private final Schema schema;
    private final long size;
    private final java.util.concurrent.ConcurrentLinkedQueue<Handle> handles = new java.util.concurrent.ConcurrentLinkedQueue<>();
    private final java.util.concurrent.ConcurrentLinkedQueue<Handle> all = new java.util.concurrent.ConcurrentLinkedQueue<>();
    private final List<String> names;
    private final int[] blockRows;
    private final int[] firstBlock;
    private final long[] sampleBytes;
    private final BlockCache<MemorySegment> cache;
    /** By dataset: its bytes mapped where they are stored as they are (contiguous, little-endian), else null. */
    private final MemorySegment[] mapped;
    /** By dataset: a variable-length dataset's values, read whole when the file is opened, else null. */
    private final Lists[] lists;

    /** A variable-length dataset of numbers: every sample's values little-endian, one after the other, and their byte offsets. */
    private record Lists(MemorySegment values, long[] offsets) {
    }
    private final java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofShared();
    private volatile boolean closed;

    /** The default bound on decoded blocks held at once. */
    public static final long DEFAULT_CACHE_BYTES = 256L << 20;

    /** An open file and its datasets, used by one thread at a time. */
    private record Handle(HdfFile file, Dataset[] datasets) {
    }

    public Hdf5Dataset(Path path, List<String> names) throws IOException {
        this(path, names, DEFAULT_CACHE_BYTES);
    }

    /** @param cacheBytes the bound on decoded blocks held at once (at least one is always held) */
    public Hdf5Dataset(Path path, List<String> names, long cacheBytes) throws IOException {
        if (names.isEmpty()) {
            throw new IllegalArgumentException("name at least one dataset, e.g. /x");
        }
        this.path = path;
        this.names = List.copyOf(names);
        try {
            this.file = new HdfFile(path);
        } catch (RuntimeException e) {
            throw new CorruptShardException(path.toString(), -1, "not a readable HDF5 file: " + e.getMessage(), e);
        }
        try {
            checkLength(path, file);
            this.datasets = new Dataset[names.size()];
            this.dims = new long[names.size()][];
            List<Field> fields = new ArrayList<>();
            long n = -1;
            for (int i = 0; i < datasets.length; i++) {
                Node node;
                try {
                    node = file.getByPath(names.get(i));
                } catch (io.jhdf.exceptions.HdfInvalidPathException e) {
                    throw new IllegalArgumentException(path + ": no dataset " + names.get(i) + " (it has " + datasetPaths(file) + ")");
                }
                boolean numberLists = node instanceof Dataset d && d.getDataType() instanceof VariableLength v
                        && !v.isVariableLengthString() && d.getDimensions().length == 1;
                if (!(node instanceof Dataset d) || d.isCompound() || d.isVariableLength() && !numberLists || d.isScalar()) {
                    throw new IllegalArgumentException(path + ": " + names.get(i) + " is not a numeric dataset with a sample axis"
                            + " (nor a one-dimensional dataset of variable-length lists of numbers)");
                }
                datasets[i] = d;
                dims[i] = d.getDimensionsAsLong();
                if (numberLists) {
                    if (n >= 0 && dims[i][0] != n) {
                        throw new IllegalArgumentException(path + ": " + names.get(i) + " has " + dims[i][0] + " samples, "
                                + names.get(0) + " has " + n);
                    }
                    n = dims[i][0];
                    String field = names.get(i).substring(names.get(i).lastIndexOf('/') + 1);
                    DType t = dtype(((VariableLength) d.getDataType()).getParent(), path + ":" + names.get(i));
                    fields.add(Field.ragged(field, t, t.byteSize() * 16L));
                    continue;
                }
                if (n >= 0 && dims[i][0] != n) {
                    throw new IllegalArgumentException(path + ": " + names.get(i) + " has " + dims[i][0] + " samples, "
                            + names.get(0) + " has " + n);
                }
                n = dims[i][0];
                long[] shape = java.util.Arrays.copyOfRange(dims[i], 1, dims[i].length);
                String field = names.get(i).substring(names.get(i).lastIndexOf('/') + 1);
                fields.add(Field.tensor(field, dtype(d.getDataType(), path + ":" + names.get(i)), shape));
            }
            this.size = n;
            this.schema = Schema.of(fields);
            this.blockRows = new int[datasets.length];
            this.firstBlock = new int[datasets.length + 1];
            this.sampleBytes = new long[datasets.length];
            long fileBytes = java.nio.file.Files.size(path);
            this.lists = new Lists[datasets.length];
            for (int i = 0; i < datasets.length; i++) {
                if (schema.field(i).isRagged()) { // read whole, its values checked against the file's size; no blocks
                    lists[i] = lists(path, datasets[i], schema.field(i).dtype(), n, fileBytes);
                    firstBlock[i + 1] = firstBlock[i];
                    continue;
                }
                sampleBytes[i] = schema.field(i).sampleBytes();
                // contiguous data is stored as it is (no compression) once written: a shape that needs more bytes lies
                boolean stored = datasets[i] instanceof io.jhdf.api.dataset.ContiguousDataset c && !c.isEmpty();
                if (stored && (Math.multiplyHigh(n, sampleBytes[i]) != 0 || n * sampleBytes[i] > fileBytes)) {
                    throw new CorruptShardException(path.toString(), -1, names.get(i) + ": " + n + " samples of "
                            + sampleBytes[i] + " bytes, stored as they are, do not fit the file's " + fileBytes + " bytes");
                }
                long rows = datasets[i] instanceof io.jhdf.api.dataset.ChunkedDataset c ? c.getChunkDimensions()[0]
                        : Math.max(1, (1L << 20) / Math.max(1, sampleBytes[i]));
                blockRows[i] = (int) Math.max(1, Math.min(rows, Math.max(1, n)));
                firstBlock[i + 1] = Math.addExact(firstBlock[i], (int) ((n + blockRows[i] - 1) / blockRows[i]));
            }
            this.cache = new BlockCache<>(path.toString(), firstBlock[datasets.length], cacheBytes, this::decode,
                    MemorySegment::byteSize);
            this.mapped = map(path, file, datasets, n, sampleBytes, fileBytes, arena);
            Handle first = new Handle(file, datasets);
            handles.add(first);
            all.add(first);
        } catch (io.jhdf.exceptions.HdfException e) {
            file.close();
            arena.close();
            throw damaged(path, e);
        } catch (IOException | RuntimeException e) {
            file.close();
            arena.close();
            throw e;
        }
    }

    /**
     * NOTE [Contiguous]: a contiguous dataset (h5py's default) is stored as it is, C order, in one
     * run of the file; read through jHDF, a slice is gathered one innermost row at a time, so a
     * block of {@code [rows, L, F]} costs {@code rows * L} small reads before the first batch.
     * Such a dataset in little-endian order is instead mapped where it lies (its address checked
     * to hold {@code samples * sampleBytes} bytes inside the file), and a sample is one copy from
     * the mapping: the first batch costs the same for a thousand samples or a billion, and a
     * batch of consecutive samples is one copy a field ({@link #readAll}). Others (chunked,
     * compact, big-endian) go through decoded blocks.
     */
    private static MemorySegment[] map(Path path, HdfFile file, Dataset[] datasets, long n, long[] sampleBytes, long fileBytes,
                                       java.lang.foreign.Arena arena) throws IOException {
        MemorySegment[] out = new MemorySegment[datasets.length];
        try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(path, java.nio.file.StandardOpenOption.READ)) {
            for (int i = 0; i < datasets.length; i++) {
                if (!(datasets[i] instanceof ContiguousDataset c) || c.isVariableLength() || c.isEmpty() || n == 0
                        || order(c.getDataType()) == ByteOrder.BIG_ENDIAN && sampleBytes[i] / Math.max(1, elements(c)) > 1) {
                    continue;
                }
                long at = file.getUserBlockSize() + c.getDataAddress();
                long bytes = n * sampleBytes[i];
                if (at < 0 || at > fileBytes || bytes > fileBytes - at) {
                    throw new CorruptShardException(path.toString(), at, datasets[i].getPath() + ": its " + bytes
                            + " bytes, stored as they are at byte " + at + ", do not fit the file's " + fileBytes + " bytes");
                }
                out[i] = ch.map(java.nio.channels.FileChannel.MapMode.READ_ONLY, at, bytes, arena);
            }
        }
        return out;
    }

    /**
     * A variable-length dataset of numbers, read whole (jHDF follows each sample's reference into
     * the file's global heap): its values, which the file holds, so their bytes are at most the
     * file's (a larger count is a lying file, refused before the values are copied), little-endian
     * in the batch's type, and each sample's byte offsets.
     */
    private static Lists lists(Path path, Dataset d, DType t, long n, long fileBytes) throws IOException {
        Object data = d.getData();
        if (!(data instanceof Object[] rows) || rows.length != n) {
            throw new CorruptShardException(path.toString(), -1, d.getPath() + ": " + n + " lists expected, jHDF read "
                    + (data instanceof Object[] r ? r.length : data == null ? "nothing" : data.getClass().getSimpleName()));
        }
        long[] offsets = new long[rows.length + 1];
        for (int r = 0; r < rows.length; r++) {
            Object row = rows[r];
            int len = row == null ? 0 : row.getClass().isArray() ? java.lang.reflect.Array.getLength(row) : -1;
            if (len < 0) {
                throw new CorruptShardException(path.toString(), -1, d.getPath() + "[" + r + "]: a list expected, read a "
                        + row.getClass().getSimpleName());
            }
            offsets[r + 1] = offsets[r] + (long) len * t.byteSize();
            if (offsets[r + 1] > fileBytes) {
                throw new CorruptShardException(path.toString(), -1, d.getPath() + ": its lists hold more values than the file's "
                        + fileBytes + " bytes can (at list " + r + ")");
            }
        }
        MemorySegment values = MemorySegment.ofArray(new byte[Math.toIntExact(offsets[rows.length])]);
        for (int r = 0; r < rows.length; r++) {
            if (rows[r] != null && offsets[r + 1] > offsets[r]) {
                flatten(rows[r], t, values, offsets[r]);
            }
        }
        return new Lists(values, offsets);
    }

    /** Elements of one sample of {@code d} (1 for a scalar dataset). */
    private static long elements(Dataset d) {
        long[] dim = d.getDimensionsAsLong();
        long e = 1;
        for (int k = 1; k < dim.length; k++) {
            e *= dim[k];
        }
        return Math.max(1, e);
    }

    /**
     * A file shorter than its superblock's end-of-file address was cut short (libhdf5 refuses it
     * the same way): refused at once, even when the datasets asked for lie before the cut.
     */
    private static void checkLength(Path path, HdfFile f) throws IOException {
        var sb = f.getHdfBackingStorage().getSuperblock();
        long end = sb.getBaseAddressByte() + sb.getEndOfFileAddress();
        long size = java.nio.file.Files.size(path);
        if (end > size) {
            throw new CorruptShardException(path.toString(), size, "truncated HDF5 file: its superblock says it ends at byte "
                    + end + ", the file has " + size + " bytes");
        }
    }

    /** A jHDF failure on a damaged file, with what jHDF says (it names the address it could not read). */
    private static CorruptShardException damaged(Path path, RuntimeException e) {
        for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (String.valueOf(c.getMessage()).contains("External Data Files")) {
                return new CorruptShardException(path.toString(), -1, "a dataset of this file keeps its data in other "
                        + "files (HDF5 external storage), which Stoker does not read: copy it into the file (h5py: "
                        + "f.create_dataset(name, data=f[name][:]) in a new file)", e);
            }
        }
        StringBuilder m = new StringBuilder("damaged HDF5 file: " + e.getMessage());
        for (Throwable c = e.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
            m.append(": ").append(c.getMessage());
        }
        return new CorruptShardException(path.toString(), -1, m.toString(), e);
    }

    /**
     * The HDF5 type as a Stoker dtype: its bytes are delivered as they are (in little-endian
     * order). An enum is its base integer type (the codes, as h5py reads it), and h5py's bool (an
     * enum of FALSE and TRUE over one byte) is bool.
     */
    static DType dtype(DataType t, String name) throws CorruptShardException {
        if (t instanceof EnumDataType e) {
            if (e.getSize() == 1 && e.getEnumMapping().equals(java.util.Map.of(0, "FALSE", 1, "TRUE"))) {
                return DType.BOOL;
            }
            return dtype(e.getBaseType(), name);
        }
        if (t instanceof FloatingPoint f) {
            return switch (f.getSize()) {
                case 2 -> DType.FLOAT16;
                case 4 -> DType.FLOAT32;
                case 8 -> DType.FLOAT64;
                default -> throw new CorruptShardException(name, -1, "a " + f.getSize() + "-byte float is not supported");
            };
        }
        if (t instanceof FixedPoint f) {
            boolean s = f.isSigned();
            return switch (f.getSize()) {
                case 1 -> s ? DType.INT8 : DType.UINT8;
                case 2 -> s ? DType.INT16 : DType.UINT16;
                case 4 -> s ? DType.INT32 : DType.UINT32;
                case 8 -> s ? DType.INT64 : DType.UINT64;
                default -> throw new CorruptShardException(name, -1, "a " + f.getSize() + "-byte integer is not supported");
            };
        }
        throw new CorruptShardException(name, -1, "type " + t.getClass().getSimpleName() + " is not supported (numeric only)");
    }

    /** One dataset of a file: its path, numpy type string (or HDF5 class name) and shape. */
    public record Info(String path, String dtype, long[] shape) {
    }

    /** The datasets of an HDF5 file, sorted by path. */
    public static List<Info> describe(Path file) throws IOException {
        HdfFile f;
        try {
            f = new HdfFile(file);
        } catch (RuntimeException e) {
            throw new CorruptShardException(file.toString(), -1, "not a readable HDF5 file: " + e.getMessage(), e);
        }
        try (f) {
            checkLength(file, f);
            List<Info> out = new ArrayList<>();
            for (String p : datasetPaths(f).stream().sorted().toList()) {
                Dataset d = f.getDatasetByPath(p);
                String dtype;
                try {
                    dtype = dtype(d.getDataType(), file + ":" + p).numpy();
                } catch (CorruptShardException e) {
                    dtype = d.getDataType().getClass().getSimpleName();
                }
                out.add(new Info(p, dtype, d.getDimensionsAsLong()));
            }
            return out;
        }
    }

    /** Every dataset of the file, by path. */
    public static List<String> datasetPaths(HdfFile f) {
        List<String> out = new ArrayList<>();
        walk(f, out);
        return out;
    }

    private static void walk(Group g, List<String> out) {
        for (Node n : g.getChildren().values()) {
            if (n instanceof Group child) {
                walk(child, out);
            } else if (n instanceof Dataset) {
                out.add(n.getPath());
            }
        }
    }

    /** A hash of the file's ends and size, with the datasets read and their shapes. */
    @Override
    public long fingerprint() {
        long h;
        try {
            h = Fingerprints.ends(path);
        } catch (java.io.IOException e) {
            return 0; // no fingerprint: a resume is not checked against one
        }
        for (int i = 0; i < names.size(); i++) {
            h = Fingerprints.and(h, names.get(i).hashCode() + java.util.Arrays.hashCode(dims[i]));
        }
        return h;
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
        return path.toString();
    }

    @Override
    public void read(long index, Row row) throws IOException {
        for (int f = 0; f < datasets.length; f++) {
            if (lists[f] != null) {
                long from = lists[f].offsets()[(int) index];
                row.append(f, lists[f].values(), from, lists[f].offsets()[(int) index + 1] - from);
                continue;
            }
            if (mapped[f] != null) {
                row.copy(f, mapped[f], index * sampleBytes[f], sampleBytes[f]);
                continue;
            }
            long b = index / blockRows[f];
            MemorySegment block = cache.get(firstBlock[f] + (int) b);
            row.copy(f, block, (index - b * blockRows[f]) * sampleBytes[f], sampleBytes[f]);
        }
    }

    /** Every field mapped ({@code NOTE [Contiguous]}): each run of consecutive samples is one copy a field. */
    @Override
    public boolean readAll(long[] indices, int from, int count, Row row) {
        for (MemorySegment m : mapped) {
            if (m == null) {
                return false;
            }
        }
        for (int f = 0; f < mapped.length; f++) {
            MemorySegment column = row.column(f);
            long at = row.offset(f);
            long bytes = sampleBytes[f];
            for (int j = 0; j < count; ) {
                long first = indices[from + j];
                int run = 1;
                while (j + run < count && indices[from + j + run] == first + run) {
                    run++;
                }
                MemorySegment.copy(mapped[f], first * bytes, column, at + j * bytes, run * bytes);
                j += run;
            }
        }
        return true;
    }

    /** Block {@code k}: some consecutive samples of one dataset, as little-endian C-order bytes. */
    private MemorySegment decode(int k) throws IOException {
        int f = 0;
        while (k >= firstBlock[f + 1]) {
            f++;
        }
        long start = (long) (k - firstBlock[f]) * blockRows[f];
        int rows = (int) Math.min(blockRows[f], size - start);
        long[] offset = new long[dims[f].length];
        int[] shape = new int[dims[f].length];
        offset[0] = start;
        shape[0] = rows;
        for (int d = 1; d < shape.length; d++) {
            shape[d] = Math.toIntExact(dims[f][d]);
        }
        Handle h = handle();
        MemorySegment out = MemorySegment.ofArray(new byte[Math.toIntExact(rows * sampleBytes[f])]);
        DType t = schema.field(f).dtype();
        try {
            Dataset d = h.datasets()[f];
            long end;
            boolean raw = true; // the file's bytes, in its byte order (flatten writes little-endian values)
            if (d instanceof ChunkedDataset c) {
                end = chunks(c, dims[f], t.byteSize(), start, rows, out);
            } else if (d instanceof ContiguousDataset && d instanceof io.jhdf.dataset.DatasetBase contiguous) {
                ByteBuffer bytes = contiguous.getSliceDataBuffer(offset, shape);
                end = bytes.remaining();
                MemorySegment.copy(MemorySegment.ofBuffer(bytes), 0, out, 0, Math.min(end, out.byteSize()));
            } else { // compact: as Java arrays
                end = flatten(d.getData(offset, shape), t, out, 0);
                raw = false;
            }
            if (end != out.byteSize()) {
                throw new CorruptShardException(path.toString(), -1, datasets[f].getPath() + "[" + start + ":" + (start + rows)
                        + "]: " + end + " bytes read, " + out.byteSize() + " expected");
            }
            if (raw && order(d.getDataType()) == ByteOrder.BIG_ENDIAN) {
                swap(out, t.byteSize());
            }
        } catch (CorruptShardException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new CorruptShardException(path.toString(), -1, datasets[f].getPath() + "[" + start + ":" + (start + rows) + "]: "
                    + e.getMessage(), e);
        } finally {
            handles.add(h);
        }
        return out;
    }

    /**
     * Rows {@code [start, start + rows)} of a chunked dataset of shape {@code dim} (start on a chunk
     * boundary of the first axis), as the file's raw element bytes in C order: each chunk that
     * covers them decompressed and its part copied, and a chunk never written (HDF5 allocates
     * chunks as they are written) read as the dataset's fill value, as libhdf5 reads it. Returns
     * the bytes written.
     */
    private long chunks(ChunkedDataset d, long[] dim, int e, long start, int rows, MemorySegment out) throws CorruptShardException {
        int rank = dim.length;
        int[] c = d.getChunkDimensions();
        long[] limit = dim.clone();
        limit[0] = start + rows;
        long[] outStride = new long[rank];
        long[] chunkStride = new long[rank];
        outStride[rank - 1] = 1;
        chunkStride[rank - 1] = 1;
        for (int k = rank - 2; k >= 0; k--) {
            outStride[k] = outStride[k + 1] * dim[k + 1];
            chunkStride[k] = chunkStride[k + 1] * c[k + 1];
        }
        byte[] filled = null;
        int[] origin = new int[rank]; // the chunk's offset in the dataset
        origin[0] = Math.toIntExact(start);
        while (true) {
            byte[] bytes;
            try {
                bytes = d.getDecompressedChunk(origin);
            } catch (io.jhdf.exceptions.HdfException x) {
                if (!String.valueOf(x.getMessage()).startsWith("No chunk with offset")) {
                    throw x;
                }
                if (filled == null) {
                    filled = fill(d, e, Math.multiplyExact(Math.toIntExact(chunkStride[0]), c[0]));
                }
                bytes = filled;
            }
            if (bytes.length < chunkStride[0] * c[0] * e) {
                throw new CorruptShardException(path.toString(), -1, d.getPath() + ": the chunk at " + java.util.Arrays.toString(origin)
                        + " holds " + bytes.length + " bytes, not the " + chunkStride[0] * c[0] * e + " of its shape");
            }
            MemorySegment chunk = MemorySegment.ofArray(bytes);
            // every run along the last axis of the chunk's part inside the rows asked for
            int[] at = new int[rank]; // within the chunk
            long run = Math.min(c[rank - 1], limit[rank - 1] - origin[rank - 1]);
            while (true) {
                long src = 0;
                long dst = 0;
                for (int k = 0; k < rank; k++) {
                    src += at[k] * chunkStride[k];
                    dst += (origin[k] + at[k] - (k == 0 ? start : 0)) * outStride[k];
                }
                MemorySegment.copy(chunk, src * e, out, dst * e, run * e);
                int k = rank - 2;
                while (k >= 0 && ++at[k] >= Math.min(c[k], limit[k] - origin[k])) {
                    at[k] = 0;
                    k--;
                }
                if (k < 0) {
                    break;
                }
            }
            int k = rank - 1;
            while (k >= 1 && (origin[k] += c[k]) >= dim[k]) {
                origin[k] = 0;
                k--;
            }
            if (k < 1) {
                break;
            }
        }
        return (long) rows * outStride[0] * e;
    }

    /** A chunk's worth of the dataset's fill value (0 when it sets none), as raw element bytes in the file's order. */
    private byte[] fill(ChunkedDataset d, int e, int elements) throws CorruptShardException {
        Object v = d.getFillValue();
        byte[] out = new byte[Math.multiplyExact(elements, e)];
        if (v == null) {
            return out;
        }
        MemorySegment one = MemorySegment.ofArray(new byte[e]);
        ByteOrder order = order(d.getDataType());
        switch (v) {
            case Float x when e == 2 -> one.set(I16.withOrder(order), 0, Float.floatToFloat16(x));
            case Float x when e == 4 -> one.set(F32.withOrder(order), 0, x);
            case Double x when e == 8 -> one.set(F64.withOrder(order), 0, x);
            case Number x when !(x instanceof Float || x instanceof Double) -> {
                long bits = x instanceof java.math.BigInteger b ? b.longValue() : x.longValue();
                for (int i = 0; i < e; i++) {
                    int shift = 8 * (order == ByteOrder.LITTLE_ENDIAN ? i : e - 1 - i);
                    one.set(ValueLayout.JAVA_BYTE, i, (byte) (bits >>> shift));
                }
            }
            default -> throw new CorruptShardException(path.toString(), -1, d.getPath() + ": its fill value " + v + " ("
                    + v.getClass().getSimpleName() + ") is not one Stoker reads, and some of its chunks were never written");
        }
        for (int i = 0; i < elements; i++) {
            MemorySegment.copy(one, 0, MemorySegment.ofArray(out), (long) i * e, e);
        }
        return out;
    }

    /** The byte order of a type's raw elements (an enum's is its base type's). */
    private static ByteOrder order(DataType t) {
        if (t instanceof EnumDataType en) {
            t = en.getBaseType();
        }
        return t instanceof OrderedDataType o && o.getByteOrder() != null ? o.getByteOrder() : ByteOrder.LITTLE_ENDIAN;
    }

    /** Reverses the bytes of each {@code e}-byte element: big-endian data, delivered little-endian. */
    private static void swap(MemorySegment s, int e) {
        if (e == 1) {
            return;
        }
        long n = s.byteSize() / e;
        for (long i = 0; i < n; i++) {
            long at = i * e;
            switch (e) {
                case 2 -> s.set(I16, at, Short.reverseBytes(s.get(I16, at)));
                case 4 -> s.set(I32, at, Integer.reverseBytes(s.get(I32, at)));
                default -> s.set(I64, at, Long.reverseBytes(s.get(I64, at)));
            }
        }
    }

    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /**
     * Writes a (nested) Java array as {@code t} elements in C order at byte {@code at} of
     * {@code out}; returns the byte after the last. Arrays of the element's own Java type are
     * copied in bulk; others (jHDF widens some unsigned types) element by element.
     */
    private static long flatten(Object a, DType t, MemorySegment out, long at) {
        if (a.getClass().getComponentType().isArray()) {
            for (Object inner : (Object[]) a) {
                at = flatten(inner, t, out, at);
            }
            return at;
        }
        switch (a) {
            case float[] v when t == DType.FLOAT32 -> MemorySegment.copy(v, 0, out, F32, at, v.length);
            case float[] v when t == DType.FLOAT16 -> { // jHDF widens half floats: their bits again, exactly
                for (int i = 0; i < v.length; i++) {
                    out.set(I16, at + 2L * i, Float.floatToFloat16(v[i]));
                }
            }
            case double[] v when t == DType.FLOAT64 -> MemorySegment.copy(v, 0, out, F64, at, v.length);
            case int[] v when t.byteSize() == 4 -> MemorySegment.copy(v, 0, out, I32, at, v.length);
            case long[] v when t.byteSize() == 8 -> MemorySegment.copy(v, 0, out, I64, at, v.length);
            case short[] v when t.byteSize() == 2 -> MemorySegment.copy(v, 0, out, I16, at, v.length);
            case byte[] v when t.byteSize() == 1 -> MemorySegment.copy(v, 0, out, ValueLayout.JAVA_BYTE, at, v.length);
            default -> {
                int n = Array.getLength(a);
                for (int i = 0; i < n; i++) {
                    long x = ((Number) Array.get(a, i)).longValue();
                    long p = at + (long) i * t.byteSize();
                    switch (t.byteSize()) {
                        case 1 -> out.set(ValueLayout.JAVA_BYTE, p, (byte) x);
                        case 2 -> out.set(I16, p, (short) x);
                        case 4 -> out.set(I32, p, (int) x);
                        default -> out.set(I64, p, x);
                    }
                }
            }
        }
        return at + (long) Array.getLength(a) * t.byteSize();
    }

    /** A handle no other thread is using: from the pool, or newly opened. */
    private Handle handle() throws IOException {
        Handle h = handles.poll();
        if (h != null) {
            return h;
        }
        if (closed) {
            throw new IllegalStateException(path + " is closed");
        }
        HdfFile f;
        try {
            f = new HdfFile(path);
        } catch (RuntimeException e) {
            throw new CorruptShardException(path.toString(), -1, "not a readable HDF5 file: " + e.getMessage(), e);
        }
        Dataset[] ds = new Dataset[names.size()];
        try {
            for (int i = 0; i < ds.length; i++) {
                ds[i] = f.getDatasetByPath(names.get(i));
            }
        } catch (RuntimeException e) {
            f.close();
            throw damaged(path, e);
        }
        h = new Handle(f, ds);
        all.add(h);
        if (closed) { // closed meanwhile: close() may have missed it
            f.close();
            throw new IllegalStateException(path + " is closed");
        }
        return h;
    }


    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        cache.close();
        arena.close();
        for (Handle h; (h = all.poll()) != null; ) {
            h.file().close();
        }
        handles.clear();
    }
}
