package dev.stoker.root;

import dev.stoker.CorruptShardException;
import dev.stoker.storage.Locations;
import dev.stoker.storage.Storage;
import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A ROOT file, read through {@link Storage}: a local file is mapped (any size), a remote one
 * (http(s)://, s3://) is read by ranged requests, its first and last 64 KiB (header, keys,
 * streamers, tree metadata) fetched once. Both the small header and the large one (64-bit seeks,
 * past 2 GB) are read, and keys of both widths. Every read is checked against the file's size;
 * errors name the file, what was read and the byte. Safe for reads from several threads; {@link
 * #close()} is idempotent, and a table must not be read after its file is closed.
 */
public final class RootFile implements AutoCloseable {
    /** Remote files: the bytes at either end fetched once and served from memory. */
    static final int END_BYTES = 64 << 10;

    private final String path;
    private final long size;
    private final Arena arena;
    private final MemorySegment mapped;
    private final byte[] head;
    private final byte[] tail;
    private final int version;
    private final int compression;
    private final long seekInfo;
    private final int nbytesInfo;
    private final Directory top;
    private final Map<String, Directory> directories = new ConcurrentHashMap<>();
    private volatile boolean closed;

    private RootFile(String path, long size, Arena arena, MemorySegment mapped, byte[] head, byte[] tail) throws IOException {
        this.path = path;
        this.size = size;
        this.arena = arena;
        this.mapped = mapped;
        this.head = head;
        this.tail = tail;
        Cursor h = new Cursor(path, "file header", read(0, (int) Math.min(size, 64), "file header"), 0);
        if (size < 4 || h.i32() != 0x726f6f74) { // "root"
            throw new CorruptShardException(path, 0, "not a ROOT file: expected the magic 'root' at its start");
        }
        int v = h.i32();
        boolean large = v >= 1_000_000;
        this.version = large ? v - 1_000_000 : v;
        long begin = h.i32();
        long end = large ? h.i64() : h.i32() & 0xFFFFFFFFL;
        h.skip(large ? 8 : 4); // fSeekFree
        h.skip(8); // fNbytesFree, nfree
        int nbytesName = h.i32();
        h.skip(1); // fUnits
        this.compression = h.i32();
        this.seekInfo = large ? h.i64() : h.i32() & 0xFFFFFFFFL;
        this.nbytesInfo = h.i32();
        if (end > size) {
            throw new EOFException(path + ": truncated: its header says it ends at byte " + end + ", it has " + size + " bytes");
        }
        if (begin < 0 || nbytesName < 0 || begin + nbytesName > size) {
            throw new CorruptShardException(path, 8, "file header: the top directory at byte " + begin + " + " + nbytesName
                    + " lies outside the file's " + size + " bytes");
        }
        this.top = directory("", read(begin + nbytesName, (int) Math.min(64, size - begin - nbytesName), "top directory"),
                begin + nbytesName);
    }

    /** Opens a local path or an http(s):// or s3:// URL. */
    public static RootFile open(String pathOrUrl) throws IOException {
        if (Locations.isRemote(pathOrUrl)) {
            long size = Storage.size(pathOrUrl);
            byte[] head = new byte[(int) Math.min(size, END_BYTES)];
            Storage.readFully(pathOrUrl, 0, ByteBuffer.wrap(head));
            byte[] tail = new byte[(int) Math.min(size, END_BYTES)];
            Storage.readFully(pathOrUrl, size - tail.length, ByteBuffer.wrap(tail));
            return new RootFile(pathOrUrl, size, null, null, head, tail);
        }
        Path p = Locations.localPath(pathOrUrl);
        if (!Files.isRegularFile(p)) {
            throw Files.exists(p) ? new IOException(pathOrUrl + ": not a regular file") : new NoSuchFileException(pathOrUrl);
        }
        Arena arena = Arena.ofShared();
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
            long size = ch.size();
            MemorySegment seg = size == 0 ? MemorySegment.NULL.reinterpret(0) : ch.map(FileChannel.MapMode.READ_ONLY, 0, size, arena);
            return new RootFile(pathOrUrl, size, arena, seg, null, null);
        } catch (IOException | RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    /** The path or URL it was opened with, as errors name it. */
    public String path() {
        return path;
    }

    public long size() {
        return size;
    }

    /** ROOT's version that wrote it, e.g. 62004 for 6.20/04. */
    public int version() {
        return version;
    }

    /** {@code fCompress}: algorithm × 100 + level (1 zlib, 2 LZMA, 4 LZ4, 5 ZSTD; 0 none). */
    public int compression() {
        return compression;
    }

    /** The keys of the top directory, the highest cycle of each name. */
    public List<Key> keys() {
        return top.keys();
    }

    /** The directory at {@code path} ({@code ""} for the top one, {@code "dir/sub"} below). */
    public Directory directory(String path) throws IOException {
        String p = trim(path);
        if (p.isEmpty()) {
            return top;
        }
        Directory d = directories.get(p);
        if (d != null) {
            return d;
        }
        Directory parent = top;
        String at = "";
        for (String name : p.split("/")) {
            Key k = parent.key(name);
            if (k == null || !k.className().startsWith("TDirectory")) {
                throw new IllegalArgumentException(this.path + ": no directory '" + (at.isEmpty() ? name : at + "/" + name)
                        + "'" + (k == null ? "" : " (it is a " + k.className() + ")") + "; " + (at.isEmpty() ? "the top directory" : at)
                        + " holds " + names(parent));
            }
            at = at.isEmpty() ? name : at + "/" + name;
            Directory sub = directories.get(at);
            if (sub == null) {
                ByteBuffer body = object(k);
                sub = directory(at, body, -1);
                directories.put(at, sub);
            }
            parent = sub;
        }
        return parent;
    }

    /**
     * The tree at {@code name} ({@code "dir/name"} in a subdirectory): a TTree, or an RNTuple
     * (class {@code ROOT::RNTuple}, or {@code ROOT::Experimental::RNTuple} as ROOT 6.30–6.32 named it).
     */
    public RootTable table(String name) throws IOException {
        String n = trim(name);
        int slash = n.lastIndexOf('/');
        Directory d = directory(slash < 0 ? "" : n.substring(0, slash));
        String leaf = n.substring(slash + 1);
        Key k = d.key(leaf);
        if (k == null) {
            throw new IllegalArgumentException(path + ": no tree '" + n + "'; " + (d.path().isEmpty() ? "the top directory" : d.path())
                    + " holds " + names(d));
        }
        return switch (k.className()) {
            case "TTree", "TNtuple", "TNtupleD" -> TTreeTable.open(this, k, n);
            case "ROOT::RNTuple", "ROOT::Experimental::RNTuple" -> RNTupleTable.open(this, k);
            default -> throw new IllegalArgumentException(path + ": '" + n + "' is a " + k.className() + ", not a TTree or an RNTuple");
        };
    }

    /** The bytes {@code [offset, offset + length)}, big-endian; fails naming {@code what} when they run past the end. */
    public ByteBuffer read(long offset, int length, String what) throws IOException {
        if (offset < 0 || length < 0 || offset > size - length) {
            throw new EOFException(path + ": " + what + ": " + length + " bytes at byte " + offset
                    + " run past the file's end at byte " + size);
        }
        if (closed) {
            throw new IOException(path + ": closed");
        }
        if (mapped != null) {
            return mapped.asSlice(offset, length).asByteBuffer().order(ByteOrder.BIG_ENDIAN);
        }
        if (offset + length <= head.length) {
            return ByteBuffer.wrap(head, (int) offset, length).slice().order(ByteOrder.BIG_ENDIAN);
        }
        long tailStart = size - tail.length;
        if (offset >= tailStart) {
            return ByteBuffer.wrap(tail, (int) (offset - tailStart), length).slice().order(ByteOrder.BIG_ENDIAN);
        }
        ByteBuffer b = ByteBuffer.allocate(length);
        Storage.readFully(path, offset, b);
        return b.flip().order(ByteOrder.BIG_ENDIAN);
    }

    /** The key's payload, decompressed: {@code objlen} bytes. */
    public ByteBuffer object(Key key) throws IOException {
        if (key.keylen() < 0 || key.nbytes() < key.keylen() || key.objlen() < 0) {
            throw new CorruptShardException(path, key.seekKey(), key + ": declares " + key.nbytes() + " bytes with a header of "
                    + key.keylen() + " and an uncompressed length of " + key.objlen());
        }
        ByteBuffer raw = read(key.seekKey() + key.keylen(), key.nbytes() - key.keylen(), key.toString());
        return decompress(raw, key.objlen(), key.toString());
    }

    /**
     * {@code compressed} (one record: one or more of ROOT's compressed blocks, or the bytes as they
     * are when their length is {@code uncompressedLength}) decompressed to exactly
     * {@code uncompressedLength} bytes; fails naming {@code what} and the block otherwise.
     */
    public ByteBuffer decompress(ByteBuffer compressed, int uncompressedLength, String what) throws IOException {
        return Blocks.decompress(path, compressed, uncompressedLength, what);
    }

    /** The streamer-info record's place: {@code fSeekInfo} and {@code fNbytesInfo}. */
    long seekInfo() {
        return seekInfo;
    }

    int nbytesInfo() {
        return nbytesInfo;
    }

    /** A key header at the cursor, the keys of a directory of {@code large} (version > 1000) or small width. */
    static Key key(Cursor c) throws IOException {
        int start = c.pos();
        int nbytes = c.i32();
        int v = c.i16();
        int objlen = c.i32();
        c.skip(4); // fDatime
        int keylen = c.i16();
        int cycle = c.i16();
        boolean large = v > 1000;
        long seekKey = large ? c.i64() : c.i32() & 0xFFFFFFFFL;
        c.skip(large ? 8 : 4); // fSeekPdir
        String className = c.tstring();
        String name = c.tstring();
        String title = c.tstring();
        if (nbytes < 0 || keylen < 0 || objlen < 0 || keylen > nbytes && nbytes != 0) {
            throw c.corruptAt(start, "key '" + name + "' declares " + nbytes + " bytes, a header of " + keylen
                    + " and an uncompressed length of " + objlen);
        }
        return new Key(name, cycle, className, title, seekKey, nbytes, objlen, keylen);
    }

    /** A directory record (TDirectory's streamer) at {@code body}, then its keys list. */
    private Directory directory(String dirPath, ByteBuffer body, long base) throws IOException {
        String what = dirPath.isEmpty() ? "top directory" : "directory '" + dirPath + "'";
        Cursor c = new Cursor(path, what, body, base);
        int v = c.i16();
        c.skip(8); // fDatimeC, fDatimeM
        int nbytesKeys = c.i32();
        c.skip(4); // fNbytesName
        boolean large = v > 1000;
        c.skip(large ? 16 : 8); // fSeekDir, fSeekParent
        long seekKeys = large ? c.i64() : c.i32() & 0xFFFFFFFFL;
        if (seekKeys == 0) {
            return new Directory(dirPath, List.of()); // written without keys
        }
        if (nbytesKeys < 0) {
            throw c.corrupt("declares a keys list of " + nbytesKeys + " bytes");
        }
        String keysWhat = "keys list of the " + what;
        Cursor k = new Cursor(path, keysWhat, read(seekKeys, nbytesKeys, keysWhat), seekKeys);
        Key self = key(k);
        k.pos(self.keylen());
        int n = k.i32();
        // a key header takes at least 30 bytes: a count past that is a lie, not a reason to allocate
        if (n < 0 || n > k.remaining() / 30) {
            throw k.corrupt("declares " + n + " keys in " + k.remaining() + " bytes");
        }
        Map<String, Key> highest = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            Key key = key(k);
            highest.merge(key.name(), key, (a, b) -> b.cycle() > a.cycle() ? b : a);
        }
        return new Directory(dirPath, new ArrayList<>(highest.values()));
    }

    private static String trim(String p) {
        String s = p == null ? "" : p.strip();
        while (s.startsWith("/")) {
            s = s.substring(1);
        }
        while (s.endsWith("/")) {
            s = s.substring(0, s.length() - 1);
        }
        return s;
    }

    private static String names(Directory d) {
        if (d.keys().isEmpty()) {
            return "nothing";
        }
        StringBuilder b = new StringBuilder();
        for (Key k : d.keys()) {
            b.append(b.isEmpty() ? "" : ", ").append(k.name()).append(" (").append(k.className()).append(')');
        }
        return b.toString();
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        if (arena != null) {
            arena.close();
        }
    }

    @Override
    public String toString() {
        return path;
    }
}
