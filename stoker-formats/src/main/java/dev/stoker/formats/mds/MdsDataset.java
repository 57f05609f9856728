package dev.stoker.formats.mds;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.stoker.CorruptShardException;
import dev.stoker.formats.io.Fingerprints;
import dev.stoker.formats.io.Compression;
import dev.stoker.formats.io.MappedFile;
import dev.stoker.formats.io.Parts;
import dev.stoker.formats.io.Unreadable;
import dev.stoker.formats.records.RecordSource;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A MosaicML Streaming (MDS) dataset read as it is: {@code index.json} and the
 * {@code shard.NNNNN.mds[.zstd|.gz]} files it lists (merged indexes name shards in sub-folders).
 *
 * <p>NOTE [MDS]: a shard is {@code u32 n}, {@code u32 offsets[n + 1]} (absolute), the shard's
 * config as JSON, then the samples; a sample is a {@code u32} size for each variable-size column,
 * then each column's bytes, columns in the index's order ({@link MdsColumn} decodes them). The
 * index is checked whole when opened: version 2, {@code mds} shards only (the JSON/CSV split
 * formats are refused), the same columns in every shard, no {@code pkl} column (never
 * unpickled). A shard is checked when first read: its sample count and offsets against the index
 * and its size, and the hashes the index gives (those the JDK or lz4-java computes). Uncompressed
 * shards are mapped; compressed ones (zstd, gzip) are decompressed into memory, at most
 * {@code cacheBytes} of them kept at once (least recently read first out), so a random order
 * over a compressed dataset larger than that decompresses shards again.
 */
public final class MdsDataset implements RecordSource {
    /** Decompressed shards kept in memory by default. */
    public static final long DEFAULT_CACHE_BYTES = 1L << 30;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final Path dir;
    private final List<MdsColumn> columns;
    private final Shard[] shards;
    private final long[] starts;
    private final long fingerprint;
    private final long cacheBytes;
    private final long leftOut;
    /** Per column, where it lies in every sample (-1: not at one place, or not raw bytes). */
    private final long[] places;
    private final LinkedHashMap<Shard, MemorySegment> decompressed = new LinkedHashMap<>(16, 0.75f, true);
    private long cachedBytes;
    private boolean closed;

    /** One shard as the index describes it, and its bytes once read. */
    private static final class Shard {
        final String file;
        final String compression;
        final long samples;
        final long rawBytes;
        final Map<String, String> hashes;
        volatile MemorySegment bytes;
        volatile int[] offsets;
        MappedFile mapped;

        Shard(String file, String compression, long samples, long rawBytes, Map<String, String> hashes) {
            this.file = file;
            this.compression = compression;
            this.samples = samples;
            this.rawBytes = rawBytes;
            this.hashes = hashes;
        }
    }

    private MdsDataset(Path dir, List<MdsColumn> columns, List<Shard> shards, long fingerprint, long cacheBytes, long leftOut) {
        this.dir = dir;
        this.leftOut = leftOut;
        this.columns = columns;
        this.shards = shards.toArray(Shard[]::new);
        this.starts = new long[this.shards.length + 1];
        for (int i = 0; i < this.shards.length; i++) {
            starts[i + 1] = starts[i] + this.shards[i].samples;
        }
        this.fingerprint = fingerprint;
        this.cacheBytes = cacheBytes;
        this.places = new long[columns.size()];
        for (int c = 0; c < places.length; c++) {
            places[c] = place(columns, c);
            byName.put(columns.get(c).name(), c);
        }
    }

    /** The dataset whose {@code index.json} is in {@code dir}. */
    public static MdsDataset open(Path dir) throws IOException {
        return open(dir, DEFAULT_CACHE_BYTES);
    }

    public static MdsDataset open(Path dir, long cacheBytes) throws IOException {
        return open(dir, cacheBytes, false);
    }

    /**
     * The dataset, holding at most {@code cacheBytes} of decompressed shards. With
     * {@code skipUnreadable} (a skip policy) every shard is read and checked now, and one that
     * cannot be read is left out and counted ({@link #shardsLeftOut()}; NOTE [Unreadable shards]
     * in {@link Unreadable}); otherwise a shard is checked when first read.
     */
    public static MdsDataset open(Path dir, long cacheBytes, boolean skipUnreadable) throws IOException {
        Path indexFile = dir.resolve("index.json");
        if (!Files.isRegularFile(indexFile)) {
            throw new NoSuchFileException(indexFile.toString(), null, "an MDS dataset's folder holds index.json");
        }
        byte[] text = Files.readAllBytes(indexFile);
        String where = indexFile.toString();
        JsonNode index;
        try {
            index = JSON.readTree(text);
        } catch (IOException e) {
            throw new CorruptShardException(where, -1, "not JSON: " + firstLine(e.getMessage()));
        }
        if (index == null || !index.isObject() || !index.path("shards").isArray()) {
            throw new CorruptShardException(where, -1, "expected an object with a \"shards\" list (an MDS index)");
        }
        if (index.path("version").asInt(-1) != 2) {
            throw new CorruptShardException(where, -1, "MDS index version " + index.path("version")
                    + "; Stoker reads version 2 (streaming 0.4 and later)");
        }
        List<MdsColumn> columns = null;
        List<Shard> shards = new ArrayList<>();
        int i = 0;
        for (JsonNode s : index.get("shards")) {
            String at = where + " shard " + i;
            String format = s.path("format").asText("");
            if (!format.equals("mds")) {
                throw new CorruptShardException(at, -1, "shards of format '" + format + "' (streaming's "
                        + "JSON/CSV/TSV writers) are not read; Stoker reads MDS shards (MDSWriter)");
            }
            if (s.path("version").asInt(-1) != 2) {
                throw new CorruptShardException(at, -1, "shard version " + s.path("version") + "; expected 2");
            }
            List<MdsColumn> cs = MdsColumn.of(at, s.path("column_names"), s.path("column_encodings"), s.path("column_sizes"));
            if (columns == null) {
                columns = cs;
            } else if (!columns.equals(cs)) {
                throw new CorruptShardException(at, -1, "its columns " + cs + " differ from shard 0's " + columns);
            }
            String compression = s.path("compression").isTextual() ? s.get("compression").asText() : null;
            JsonNode raw = s.path("raw_data");
            JsonNode zip = s.path("zip_data");
            JsonNode stored = compression == null ? raw : zip;
            if (!stored.path("basename").isTextual() || !raw.path("bytes").canConvertToLong() || !s.path("samples").canConvertToLong()) {
                throw new CorruptShardException(at, -1, "expected raw_data (and zip_data when compressed) with basename and "
                        + "bytes, and samples");
            }
            long samples = s.get("samples").asLong();
            long rawBytes = raw.get("bytes").asLong();
            if (samples < 0 || rawBytes < 4 || rawBytes > Integer.MAX_VALUE) {
                throw new CorruptShardException(at, -1, samples + " samples in " + rawBytes
                        + " bytes; expected a shard of fewer than 2 GiB");
            }
            Map<String, String> hashes = new LinkedHashMap<>();
            stored.path("hashes").properties().forEach(e -> hashes.put(e.getKey(), e.getValue().asText()));
            String file = stored.get("basename").asText();
            Path p = dir.resolve(file).normalize();
            if (!p.startsWith(dir.normalize())) {
                throw new CorruptShardException(at, -1, "basename '" + file + "' points outside the dataset's folder");
            }
            shards.add(new Shard(file, compression, samples, rawBytes, hashes));
            i++;
        }
        if (columns == null) {
            throw new CorruptShardException(where, -1, "lists no shards");
        }
        long fingerprint = Fingerprints.names(List.of(new String(text, java.nio.charset.StandardCharsets.UTF_8)));
        MdsDataset all = new MdsDataset(dir, columns, shards, fingerprint, cacheBytes, 0);
        if (!skipUnreadable) {
            return all;
        }
        int[] kept;
        try {
            kept = Unreadable.kept(shards.size(), true, s -> all.bytes(all.shards[s]));
        } catch (IOException | RuntimeException e) {
            all.close();
            throw e;
        }
        if (kept.length == shards.size()) {
            return all;
        }
        List<Shard> readable = java.util.Arrays.stream(kept).mapToObj(shards::get).toList(); // their mappings move along
        return new MdsDataset(dir, columns, readable, fingerprint * 31 + java.util.Arrays.hashCode(kept), cacheBytes,
                shards.size() - kept.length);
    }

    @Override
    public long shardsLeftOut() {
        return leftOut;
    }

    private static String firstLine(String s) {
        return s == null ? "" : s.lines().findFirst().orElse("");
    }

    /** The shards' files, relative to the dataset's folder, in order. */
    public List<String> files() {
        return java.util.Arrays.stream(shards).map(s -> s.file).toList();
    }

    /** The columns, in the order samples hold them. */
    public List<Column> columns() {
        return columns.stream().map(c -> new Column(c.name(), c.encoding(), c.size())).toList();
    }

    /** A column as the index names it: its name, its MDS encoding, its fixed size in bytes (-1: a size per sample). */
    public record Column(String name, String encoding, long size) {
    }

    /**
     * A column stored as its values' little-endian bytes at a fixed size (integers, floats,
     * {@code ndarray} of static dtype and shape) and at a fixed place in every sample: no column of
     * varying size comes before it.
     */
    @Override
    public long fixedWidth(String field) {
        int c = columnIndex(field);
        return c < 0 || places[c] < 0 ? -1 : columns.get(c).size();
    }

    /** Where column {@code c} lies in every sample, or -1 when it does not lie at one place or is not raw bytes. */
    private static long place(List<MdsColumn> columns, int c) {
        if (!columns.get(c).raw()) {
            return -1;
        }
        long at = 0;
        for (MdsColumn col : columns) {
            if (col.size() < 0) {
                at += 4; // its size comes first
            }
        }
        for (int i = 0; i < c; i++) {
            if (columns.get(i).size() < 0) {
                return -1;
            }
            at += columns.get(i).size();
        }
        return at;
    }

    private final java.util.Map<String, Integer> byName = new java.util.HashMap<>();

    private int columnIndex(String field) {
        return byName.getOrDefault(field, -1);
    }

    @Override
    public void copyFixed(String field, long index, int count, MemorySegment dst, long at) throws IOException {
        int c = columnIndex(field);
        long place = places[c];
        long width = columns.get(c).size();
        for (int k = 0; k < count; k++) {
            long i = index + k;
            int s = shardOf(i);
            Shard shard = shards[s];
            MemorySegment bytes = bytes(shard);
            int r = (int) (i - starts[s]);
            long from = Integer.toUnsignedLong(shard.offsets[r]);
            long end = Integer.toUnsignedLong(shard.offsets[r + 1]);
            if (from + place + width > end) {
                throw new dev.stoker.CorruptRecordException(dir.resolve(shard.file) + " sample " + r, from,
                        "column '" + field + "' runs past the sample's " + (end - from) + " bytes");
            }
            MemorySegment.copy(bytes, from + place, dst, at + k * width, width);
        }
    }

    @Override
    public long size() {
        return starts[shards.length];
    }

    @Override
    public String name() {
        return dir.toString();
    }

    @Override
    public long fingerprint() {
        return fingerprint;
    }

    private int shardOf(long index) {
        return Parts.of(starts, index);
    }

    @Override
    public String where(long index) {
        int s = shardOf(index);
        return dir.resolve(shards[s].file) + " sample " + (index - starts[s]);
    }

    @Override
    public Map<String, Object> get(long index) throws IOException {
        int s = shardOf(index);
        Shard shard = shards[s];
        MemorySegment bytes = bytes(shard);
        int[] offsets = shard.offsets;
        int i = (int) (index - starts[s]);
        long from = Integer.toUnsignedLong(offsets[i]);
        long to = Integer.toUnsignedLong(offsets[i + 1]);
        return MdsColumn.decode(columns, bytes.asSlice(from, to - from), dir.resolve(shard.file) + " sample " + i, from);
    }

    /** The shard's (decompressed) bytes, read and checked the first time, or again once evicted. */
    private MemorySegment bytes(Shard shard) throws IOException {
        if (shard.compression == null) {
            MemorySegment b = shard.bytes;
            if (b != null) {
                return b;
            }
            synchronized (shard) {
                if (shard.bytes == null) {
                    if (closed) {
                        throw new IOException(name() + " is closed");
                    }
                    MappedFile f = MappedFile.open(dir.resolve(shard.file));
                    try {
                        check(shard, f.segment(), f.segment());
                    } catch (IOException | RuntimeException e) {
                        f.close();
                        throw e;
                    }
                    shard.mapped = f;
                    shard.bytes = f.segment();
                }
                return shard.bytes;
            }
        }
        synchronized (decompressed) {
            MemorySegment b = decompressed.get(shard);
            if (b != null) {
                return b;
            }
        }
        MemorySegment b = decompress(shard);
        synchronized (decompressed) {
            if (decompressed.putIfAbsent(shard, b) == null) {
                cachedBytes += b.byteSize();
                var it = decompressed.entrySet().iterator();
                while (cachedBytes > cacheBytes && decompressed.size() > 1 && it.hasNext()) {
                    var e = it.next();
                    if (e.getKey() != shard) {
                        cachedBytes -= e.getValue().byteSize();
                        it.remove();
                    }
                }
            }
        }
        return b;
    }

    private MemorySegment decompress(Shard shard) throws IOException {
        Path file = dir.resolve(shard.file);
        String family = shard.compression.split(":", 2)[0].toLowerCase(Locale.ROOT);
        Compression codec = switch (family) {
            case "zstd" -> Compression.ZSTD;
            case "gz" -> Compression.GZIP;
            default -> throw new CorruptShardException(file.toString(), -1, "compressed with '" + shard.compression
                    + "', which Stoker does not decompress (it reads zstd and gz); rewrite the dataset with one of them");
        };
        byte[] zipped = Files.readAllBytes(file);
        byte[] raw;
        try (InputStream in = codec.stream(new java.io.ByteArrayInputStream(zipped), file.toString())) {
            raw = in.readNBytes((int) shard.rawBytes + 1); // a codec's failure is named there (NOTE [Codec errors])
        }
        MemorySegment seg = MemorySegment.ofArray(raw);
        check(shard, MemorySegment.ofArray(zipped), seg);
        return seg;
    }

    /** Checks a shard's hashes, sample count and offsets against the index (the offsets kept). */
    private void check(Shard shard, MemorySegment stored, MemorySegment raw) throws IOException {
        String file = dir.resolve(shard.file).toString();
        verifyHashes(file, shard.hashes, stored);
        long size = raw.byteSize();
        if (size != shard.rawBytes) {
            throw new CorruptShardException(file, -1, size + " bytes" + (shard.compression == null ? "" : " decompressed")
                    + " where the index says " + shard.rawBytes);
        }
        long n = Integer.toUnsignedLong(raw.get(U32, 0));
        if (n != shard.samples) {
            throw new CorruptShardException(file, 0, "the shard holds " + n + " samples where the index says " + shard.samples);
        }
        long table = 4 + 4 * (n + 1);
        if (table > size) {
            throw new CorruptShardException(file, 4, "an offset table of " + (n + 1) + " entries does not fit " + size + " bytes");
        }
        int[] offsets = new int[(int) n + 1];
        long previous = table;
        for (int i = 0; i <= n; i++) {
            long o = Integer.toUnsignedLong(raw.get(U32, 4 + 4L * i));
            if (o < previous || o > size) {
                throw new CorruptShardException(file, 4 + 4L * i, "offset " + i + " is " + o + "; expected one in ["
                        + previous + ", " + size + "] (the shard is " + size + " bytes)");
            }
            offsets[i] = (int) o;
            previous = o;
        }
        if (previous != size) {
            throw new CorruptShardException(file, 4 + 4 * n, "the last sample ends at " + previous + ", the shard at " + size);
        }
        shard.offsets = offsets;
    }

    private static void verifyHashes(String file, Map<String, String> hashes, MemorySegment data) throws IOException {
        for (Map.Entry<String, String> h : hashes.entrySet()) {
            String actual = MdsHashes.of(h.getKey(), data);
            if (actual != null && !actual.equalsIgnoreCase(h.getValue())) {
                throw new CorruptShardException(file, -1, h.getKey() + " is " + actual + " where the index says " + h.getValue());
            }
        }
    }

    @Override
    public synchronized void close() {
        closed = true;
        for (Shard s : shards) {
            synchronized (s) {
                if (s.mapped != null) {
                    s.mapped.close();
                    s.mapped = null;
                    s.bytes = null;
                }
            }
        }
        synchronized (decompressed) {
            decompressed.clear();
            cachedBytes = 0;
        }
    }
}
