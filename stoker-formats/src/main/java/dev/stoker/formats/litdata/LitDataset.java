package dev.stoker.formats.litdata;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.github.luben.zstd.Zstd;
import dev.stoker.CorruptRecordException;
import dev.stoker.CorruptShardException;
import dev.stoker.DType;
import dev.stoker.formats.io.Fingerprints;
import dev.stoker.formats.io.MappedFile;
import dev.stoker.formats.io.Parts;
import dev.stoker.formats.io.Unreadable;
import dev.stoker.formats.records.Numbers;
import dev.stoker.formats.records.RecordSource;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A LitData optimized dataset read as it is: {@code index.json} and its {@code chunk-*.bin}
 * files, items of the {@code PyTreeLoader} (each a record of its leaves, named by the pytree's
 * keys) or, with a block size, the {@code TokensLoader}'s blocks of tokens.
 *
 * <p>NOTE [LitData]: a chunk is {@code u32 n}, {@code u32 offsets[n + 1]}, then the items; a
 * PyTree item is a {@code u32} size for every leaf, then each leaf's bytes, leaves in the pytree's
 * order ({@code data_spec}, a JSON string of a JSON tree), each decoded by its {@code data_format}
 * ({@link LitValues}). The {@code tensor} header's byte order changed in 0.2.57 with no version
 * field; the rule is to read it in the order under which it is consistent (a known dtype, a rank
 * under 64, and a shape whose bytes are the leaf's), big-endian first. Token chunks are cut into
 * blocks within each chunk, its tail dropped, as LitData's reader cuts them. zstd chunks are
 * decompressed, encrypted ones (Fernet, by sample or by chunk) decrypted with the password the user
 * gives (the salt is in {@code fernet.pem} beside the index), or refused. Chunks are read whole
 * when first needed; the last few are kept.
 */
public final class LitDataset implements RecordSource {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int KEPT = 4;
    private static final java.lang.foreign.ValueLayout.OfInt U32 =
            java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final Path dir;
    private final String[] files;
    private final long[] starts;
    private final long[] itemsPerChunk;
    private final List<String> formats;
    private final Spec spec;
    private final String compression;
    private final String encryption;
    private final Fernet fernet;
    private final int blockSize;
    private final DType tokenType;
    private final long fingerprint;
    private final long leftOut;
    private final LinkedHashMap<Integer, Chunk> kept = new LinkedHashMap<>(8, 0.75f, true);
    /** Uncompressed, unencrypted chunks' files, mapped. */
    private final MappedFile[] maps;
    private boolean closed;
    /** The chunks held, by index, for reads without the lock ({@link #kept} orders them). */
    private final Chunk[] resident;
    /** Per leaf, {@link #fixedWidth} (computed when first asked; 0: not yet). */
    private final Map<String, Long> widths = new java.util.concurrent.ConcurrentHashMap<>();
    /** The leaves a record's top-level dict names, by name. */
    private final Map<String, Integer> leaves = new java.util.HashMap<>();

    /** A pytree's shape: a leaf (its index in {@code data_format}), a dict of named children, or a list. */
    private record Spec(int leaf, List<String> keys, List<Spec> children) {
    }

    /** A chunk's bytes, decompressed and decrypted, and its items' offsets. */
    private record Chunk(java.lang.foreign.MemorySegment segment, long[] offsets) {
        byte[] bytes(long from, long to) {
            return segment.asSlice(from, to - from).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
        }
    }

    private LitDataset(Path dir, String[] files, long[] starts, long[] itemsPerChunk, List<String> formats, Spec spec,
                       String compression, String encryption, Fernet fernet, int blockSize, DType tokenType, long fingerprint,
                       long leftOut) {
        this.dir = dir;
        this.leftOut = leftOut;
        this.files = files;
        this.starts = starts;
        this.itemsPerChunk = itemsPerChunk;
        this.formats = formats;
        this.spec = spec;
        this.compression = compression;
        this.encryption = encryption;
        this.fernet = fernet;
        this.blockSize = blockSize;
        this.tokenType = tokenType;
        this.fingerprint = fingerprint;
        this.resident = new Chunk[files.length];
        this.maps = new MappedFile[files.length];
        if (spec.keys() != null) {
            for (int i = 0; i < spec.keys().size(); i++) {
                if (spec.children().get(i).leaf() >= 0) {
                    leaves.put(spec.keys().get(i), spec.children().get(i).leaf());
                }
            }
        }
    }

    /**
     * The dataset in {@code dir}. {@code blockSize}: the tokens per sample of a TokensLoader dataset
     * (0 for a PyTree one); {@code password}: an encrypted dataset's (null: refused if encrypted).
     */
    public static LitDataset open(Path dir, int blockSize, char[] password) throws IOException {
        Path indexFile = dir.resolve("index.json");
        if (!Files.isRegularFile(indexFile)) {
            throw new NoSuchFileException(indexFile.toString(), null, "a LitData dataset's folder holds index.json");
        }
        String where = indexFile.toString();
        byte[] text = Files.readAllBytes(indexFile);
        JsonNode index;
        try {
            index = JSON.readTree(text);
        } catch (IOException e) {
            throw new CorruptShardException(where, -1, "not JSON: " + e.getMessage().lines().findFirst().orElse(""));
        }
        JsonNode config = index.path("config");
        if (!index.path("chunks").isArray() || !config.isObject()) {
            throw new CorruptShardException(where, -1, "expected {\"chunks\": [...], \"config\": {...}} (a LitData index)");
        }
        String loader = config.path("item_loader").asText("");
        boolean tokens = loader.equals("TokensLoader");
        if (!tokens && !loader.equals("PyTreeLoader")) {
            throw new CorruptShardException(where, -1, "item_loader '" + loader + "', which Stoker does not read (it reads "
                    + "PyTreeLoader and TokensLoader datasets)");
        }
        if (tokens && blockSize < 1) {
            throw new IllegalArgumentException(dir + " is a TokensLoader dataset: give its block size (tokens per sample)");
        }
        List<String> formats = new ArrayList<>();
        config.path("data_format").forEach(n -> formats.add(n.asText()));
        for (int i = 0; i < formats.size(); i++) {
            LitValues.check(where, i, formats.get(i));
        }
        Spec spec;
        try {
            spec = spec(JSON.readTree(config.path("data_spec").asText()), new int[1]);
        } catch (IOException | IllegalArgumentException e) {
            throw new CorruptShardException(where, -1, "its data_spec is not a pytree spec: " + e.getMessage());
        }
        String compression = config.path("compression").isTextual() ? config.get("compression").asText() : null;
        if (compression != null && !compression.split(":")[0].equals("zstd")) {
            throw new CorruptShardException(where, -1, "chunks compressed with '" + compression + "'; LitData writes zstd only");
        }
        String encryption = null;
        Fernet fernet = null;
        if (config.path("encryption").isObject()) {
            JsonNode e = config.get("encryption");
            encryption = e.path("level").asText("");
            String algorithm = e.path("algorithm").asText("");
            if (!algorithm.equals("fernet") || !(encryption.equals("sample") || encryption.equals("chunk"))) {
                throw new CorruptShardException(where, -1, "encrypted with " + algorithm + " (" + encryption + " level), which "
                        + "Stoker does not decrypt (it decrypts fernet, by sample or by chunk)");
            }
            if (password == null) {
                throw new CorruptShardException(where, -1, "encrypted (fernet, " + encryption + " level): give its password "
                        + "(the source's password_env names the environment variable that holds it)");
            }
            Path pem = dir.resolve("fernet.pem");
            if (!Files.isRegularFile(pem)) {
                throw new NoSuchFileException(pem.toString(), null, "an encrypted LitData dataset keeps its salt in fernet.pem");
            }
            try {
                byte[] salt = Base64.getUrlDecoder().decode(JSON.readTree(pem.toFile()).path("salt").asText(""));
                fernet = new Fernet(password, salt);
            } catch (IOException | IllegalArgumentException | GeneralSecurityException e2) {
                throw new CorruptShardException(pem.toString(), -1, "expected JSON with the base64url salt: " + e2.getMessage());
            }
        }
        DType tokenType = null;
        if (tokens) {
            if (formats.size() != 1 || spec.leaf() != 0) {
                throw new CorruptShardException(where, -1, "a TokensLoader dataset of " + formats + " (expected one raw array leaf)");
            }
            tokenType = LitValues.rawType(formats.get(0));
            if (tokenType == null) {
                throw new CorruptShardException(where, -1, "token items serialized as '" + formats.get(0)
                        + "'; expected no_header_numpy or no_header_tensor");
            }
        }
        JsonNode chunks = index.get("chunks");
        String[] files = new String[chunks.size()];
        long[] starts = new long[chunks.size() + 1];
        long[] items = new long[chunks.size()];
        for (int i = 0; i < files.length; i++) {
            JsonNode c = chunks.get(i);
            files[i] = c.path("filename").asText("");
            Path p = dir.resolve(files[i]).normalize();
            if (files[i].isEmpty() || !p.startsWith(dir.normalize())) {
                throw new CorruptShardException(where, -1, "chunk " + i + " names the file '" + files[i] + "', not one in the folder");
            }
            items[i] = c.path("chunk_size").asLong(-1);
            long samples = tokens ? c.path("dim").asLong(-1) / blockSize : items[i];
            if (items[i] < 0 || samples < 0) {
                throw new CorruptShardException(where, -1, "chunk " + i + " has no chunk_size" + (tokens ? " or dim" : ""));
            }
            starts[i + 1] = starts[i] + samples;
        }
        return new LitDataset(dir, files, starts, items, List.copyOf(formats), spec, compression, encryption, fernet,
                tokens ? blockSize : 0, tokenType, Fingerprints.names(List.of(new String(text, StandardCharsets.UTF_8))), 0);
    }

    /**
     * {@link #open(Path, int, char[])}; with {@code skipUnreadable} (a skip policy) every chunk is
     * read and checked now, and one that cannot be read is left out and counted
     * ({@link #shardsLeftOut()}; NOTE [Unreadable shards] in {@link Unreadable}).
     */
    public static LitDataset open(Path dir, int blockSize, char[] password, boolean skipUnreadable) throws IOException {
        LitDataset all = open(dir, blockSize, password);
        if (!skipUnreadable) {
            return all;
        }
        int[] kept;
        try {
            kept = Unreadable.kept(all.files.length, true, all::chunk);
        } finally {
            all.close(); // what was read to check it is read again when asked for
        }
        if (kept.length == all.files.length) {
            return open(dir, blockSize, password);
        }
        String[] files = new String[kept.length];
        long[] items = new long[kept.length];
        long[] starts = new long[kept.length + 1];
        for (int k = 0; k < kept.length; k++) {
            int c = kept[k];
            files[k] = all.files[c];
            items[k] = all.itemsPerChunk[c];
            starts[k + 1] = starts[k] + all.starts[c + 1] - all.starts[c];
        }
        return new LitDataset(all.dir, files, starts, items, all.formats, all.spec, all.compression, all.encryption, all.fernet,
                all.blockSize, all.tokenType, all.fingerprint * 31 + java.util.Arrays.hashCode(kept), all.files.length - kept.length);
    }

    @Override
    public long shardsLeftOut() {
        return leftOut;
    }

    private static Spec spec(JsonNode node, int[] leaves) {
        if (node.isArray() && node.size() == 2 && node.get(0).isInt()) { // [version, tree]
            return spec(node.get(1), leaves);
        }
        String type = node.path("type").isNull() ? null : node.path("type").asText();
        JsonNode children = node.path("children_spec");
        if (type == null && children.isEmpty()) {
            return new Spec(leaves[0]++, null, List.of());
        }
        List<Spec> cs = new ArrayList<>();
        for (JsonNode c : children) {
            cs.add(spec(c, leaves));
        }
        List<String> keys = null;
        if (type.equals("builtins.dict") || type.equals("collections.OrderedDict")) {
            keys = new ArrayList<>();
            try {
                for (JsonNode k : JSON.readTree(node.path("context").asText("[]"))) {
                    keys.add(k.asText());
                }
            } catch (IOException e) {
                throw new IllegalArgumentException("a dict's context is not a JSON list of keys");
            }
            if (keys.size() != cs.size()) {
                throw new IllegalArgumentException("a dict of " + keys.size() + " keys and " + cs.size() + " children");
            }
        } else if (!type.equals("builtins.list") && !type.equals("builtins.tuple")) {
            throw new IllegalArgumentException("a pytree node of type " + type);
        }
        return new Spec(-1, keys, List.copyOf(cs));
    }

    /**
     * A top-level leaf stored as its little-endian bytes ({@code int}, {@code float}, {@code bool},
     * {@code no_header_*}), as wide in every item as in the first (each item's own leaf sizes are
     * checked as it is copied), or a TokensLoader dataset's {@code tokens}; not under sample-level
     * encryption.
     */
    @Override
    public long fixedWidth(String field) {
        return widths.computeIfAbsent(field, this::width);
    }

    private long width(String field) {
        if (blockSize > 0) {
            return field.equals("tokens") ? (long) blockSize * tokenType.byteSize() : -1;
        }
        Integer leaf = leaves.get(field);
        if (leaf == null || "sample".equals(encryption) || size() == 0) {
            return -1;
        }
        String f = formats.get(leaf);
        boolean raw = f.equals("int") || f.equals("float") || f.equals("bool") || LitValues.rawType(f) != null;
        if (!raw) {
            return -1;
        }
        try {
            Chunk c = chunk(0);
            return Integer.toUnsignedLong(c.segment().get(U32, c.offsets()[0] + 4L * leaf));
        } catch (IOException e) {
            return -1; // read by record, where the error is reported with its record
        }
    }

    @Override
    public void copyFixed(String field, long index, int count, java.lang.foreign.MemorySegment dst, long at) throws IOException {
        long width = fixedWidth(field);
        int leaf = blockSize > 0 ? 0 : leaves.get(field);
        int leaves = formats.size();
        int k = 0;
        while (k < count) { // the run's items chunk by chunk: each chunk found once
            long i = index + k;
            int c = chunkOf(i);
            Chunk chunk = chunk(c);
            int first = (int) (i - starts[c]);
            int n = (int) Math.min(count - k, starts[c + 1] - i);
            if (blockSize > 0) { // a chunk's blocks lie one after the other: one copy
                long from = chunk.offsets[0] + (long) first * width;
                if (from + n * width > chunk.offsets[chunk.offsets.length - 1]) {
                    throw new CorruptShardException(dir.resolve(files[c]).toString(), from, "blocks " + first + " to "
                            + (first + n - 1) + " run past the chunk's tokens");
                }
                java.lang.foreign.MemorySegment.copy(chunk.segment, from, dst, at + k * width, n * width);
                k += n;
                continue;
            }
            for (int item = first; item < first + n; item++, k++) {
                long start = chunk.offsets[item];
                long end = chunk.offsets[item + 1];
                long from = start + 4L * leaves;
                for (int l = 0; l < leaf; l++) {
                    from += Integer.toUnsignedLong(chunk.segment.get(U32, start + 4L * l));
                }
                long size = Integer.toUnsignedLong(chunk.segment.get(U32, start + 4L * leaf));
                if (size != width || from + width > end) {
                    throw new CorruptRecordException(dir.resolve(files[c]).toString(), start, "item " + item + ": leaf '" + field
                            + "' is " + size + " bytes where the first item's is " + width);
                }
                java.lang.foreign.MemorySegment.copy(chunk.segment, from, dst, at + k * width, width);
            }
        }
    }

    /** The chunks' files, relative to the dataset's folder, in order. */
    public List<String> files() {
        return List.of(files);
    }

    @Override
    public long size() {
        return starts[files.length];
    }

    @Override
    public String name() {
        return dir.toString();
    }

    @Override
    public long fingerprint() {
        return fingerprint;
    }

    private int chunkOf(long index) {
        return Parts.of(starts, index);
    }

    @Override
    public String where(long index) {
        int c = chunkOf(index);
        return dir.resolve(files[c]) + (blockSize > 0 ? " block " : " item ") + (index - starts[c]);
    }

    @Override
    public Map<String, Object> get(long index) throws IOException {
        int c = chunkOf(index);
        Chunk chunk = chunk(c);
        String file = dir.resolve(files[c]).toString();
        int i = (int) (index - starts[c]);
        if (blockSize > 0) {
            long from = chunk.offsets[0] + (long) i * blockSize * tokenType.byteSize();
            long bytes = (long) blockSize * tokenType.byteSize();
            if (from + bytes > chunk.offsets[chunk.offsets.length - 1]) {
                throw new CorruptShardException(file, from, "block " + i + " runs past the chunk's tokens");
            }
            Numbers tokens = new Numbers(tokenType, chunk.bytes(from, from + bytes));
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("tokens", tokens);
            return out;
        }
        long from = chunk.offsets[i];
        byte[] item = chunk.bytes(from, chunk.offsets[i + 1]);
        if ("sample".equals(encryption)) {
            try {
                item = fernet.decrypt(item);
            } catch (IllegalArgumentException e) {
                throw new CorruptRecordException(file, from, "item " + i + ": " + e.getMessage());
            }
        }
        Object[] leaves = new Object[formats.size()];
        ByteBuffer b = ByteBuffer.wrap(item).order(ByteOrder.LITTLE_ENDIAN);
        if (item.length < 4L * leaves.length) {
            throw new CorruptRecordException(file, from, "item " + i + " of " + item.length + " bytes ends inside its "
                    + leaves.length + " leaf sizes");
        }
        int at = 4 * leaves.length;
        for (int l = 0; l < leaves.length; l++) {
            long n = Integer.toUnsignedLong(b.getInt(4 * l));
            if (n > item.length - at) {
                throw new CorruptRecordException(file, from, "item " + i + ": leaf " + l + " of " + n + " bytes runs past the item's "
                        + item.length);
            }
            try {
                leaves[l] = LitValues.decode(formats.get(l), Arrays.copyOfRange(item, at, at + (int) n));
            } catch (IllegalArgumentException e) {
                throw new CorruptRecordException(file, from, "item " + i + ", leaf " + l + " (" + formats.get(l) + "): "
                        + e.getMessage());
            }
            at += (int) n;
        }
        if (at != item.length) {
            throw new CorruptRecordException(file, from, "item " + i + ": its leaves end at byte " + at + " of " + item.length);
        }
        Object tree = tree(spec, leaves);
        if (tree instanceof Map<?, ?> m) {
            @SuppressWarnings("unchecked")
            Map<String, Object> out = (Map<String, Object>) m;
            return out;
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("item", tree);
        return out;
    }

    /** Chunk {@code c}'s file, mapped once and kept until {@link #close()}. */
    private java.lang.foreign.MemorySegment mapped(int c, Path p) throws IOException {
        synchronized (maps) {
            if (closed) {
                throw new IOException(name() + " is closed");
            }
            MappedFile m = maps[c];
            if (m == null) {
                m = maps[c] = MappedFile.open(p);
            }
            return m.segment();
        }
    }

    @Override
    public void close() {
        synchronized (maps) {
            closed = true;
            for (int c = 0; c < maps.length; c++) {
                if (maps[c] != null) {
                    maps[c].close();
                    maps[c] = null;
                }
            }
        }
        synchronized (kept) {
            kept.clear();
            Arrays.fill(resident, null);
        }
    }

    private static Object tree(Spec s, Object[] leaves) {
        if (s.leaf() >= 0) {
            return leaves[s.leaf()];
        }
        if (s.keys() != null) {
            Map<String, Object> m = new LinkedHashMap<>();
            for (int i = 0; i < s.keys().size(); i++) {
                m.put(s.keys().get(i), tree(s.children().get(i), leaves));
            }
            return m;
        }
        List<Object> l = new ArrayList<>();
        for (Spec c : s.children()) {
            l.add(tree(c, leaves));
        }
        return l;
    }

    /** Chunk {@code c}, read, decompressed, decrypted and checked the first time (and again once dropped). */
    private Chunk chunk(int c) throws IOException {
        Chunk held = resident[c]; // a Chunk's fields are final: seen whole, or not at all (then read under the lock)
        if (held != null) {
            return held;
        }
        synchronized (kept) {
            Chunk k = kept.get(c);
            if (k != null) {
                return k;
            }
        }
        Path p = dir.resolve(files[c]);
        String file = p.toString();
        java.lang.foreign.MemorySegment b;
        if (compression == null && !"chunk".equals(encryption)) {
            b = mapped(c, p); // read in place
        } else {
            byte[] raw = Files.readAllBytes(p);
            if (compression != null) {
                long size = raw.length == 0 ? -1 : Zstd.getFrameContentSize(raw);
                if (size < 0 || size > Integer.MAX_VALUE - 16) {
                    throw new CorruptShardException(file, 0, "not a zstd frame with its size (" + size + ")");
                }
                raw = dev.stoker.formats.io.Compression.ZSTD.block(raw, 0, raw.length, (int) size, file, 0);
            }
            if ("chunk".equals(encryption)) {
                try {
                    raw = fernet.decrypt(raw);
                } catch (IllegalArgumentException e) {
                    throw new CorruptShardException(file, 0, "the encrypted chunk " + e.getMessage());
                }
            }
            b = java.lang.foreign.MemorySegment.ofArray(raw);
        }
        long length = b.byteSize();
        if (length < 4) {
            throw new CorruptShardException(file, 0, "a chunk of " + length + " bytes (a truncated file?)");
        }
        long n = Integer.toUnsignedLong(b.get(U32, 0));
        if (n != itemsPerChunk[c] || 4 + 4 * (n + 1) > length) {
            throw new CorruptShardException(file, 0, "a chunk of " + n + " items where the index says " + itemsPerChunk[c]
                    + (4 + 4 * (n + 1) > length ? ", in " + length + " bytes (a truncated file?)" : ""));
        }
        long[] offsets = new long[(int) n + 1];
        long previous = 4 + 4 * (n + 1);
        for (int i = 0; i <= n; i++) {
            long o = Integer.toUnsignedLong(b.get(U32, 4 + 4L * i));
            if (o < previous || o > length) {
                throw new CorruptShardException(file, 4 + 4L * i, "offset " + i + " is " + o + "; expected one in [" + previous
                        + ", " + length + "] (the chunk is " + length + " bytes: a truncated or corrupt file?)");
            }
            offsets[i] = o;
            previous = o;
        }
        Chunk k = new Chunk(b, offsets);
        synchronized (kept) {
            kept.put(c, k);
            resident[c] = k;
            if (kept.size() > KEPT) {
                int oldest = kept.keySet().iterator().next();
                kept.remove(oldest);
                resident[oldest] = null;
            }
        }
        return k;
    }
}
