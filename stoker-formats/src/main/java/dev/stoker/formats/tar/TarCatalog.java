package dev.stoker.formats.tar;

import dev.stoker.formats.io.MappedFile;
import dev.stoker.storage.io.PendingFile;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * The index of every tar shard in one folder, in one file that is mapped and read in place: for
 * each shard (by file name) its {@link Stat} and content fingerprint, and for each of its samples
 * the key and, per field, the name, byte offset and size. A dataset of many shards opens by one
 * map and a stat per shard, and holds no per-sample object (NOTE [Folder index] in
 * {@link TarDataset}).
 *
 * <p>Layout (little-endian): a header; each shard's entry (a self-contained block, below); the
 * directory, one record per shard; the field-name table; the shards' file names. Each entry
 * carries a CRC-32C of itself, and the header one of the directory, the table and the names, so
 * a damaged file is indexed again rather than read at wrong offsets. An entry:
 * <pre>
 *   0 long fingerprint   8 long shard size   16 int samples n   20 int fields f
 *  24 int key bytes     28 int CRC-32C of the rest
 *  32 long[f] offsets, long[f] sizes, int[n+1] first field, int[n+1] key start,
 *     int[f] field-name ids, key bytes (UTF-8)
 * </pre>
 */
final class TarCatalog implements AutoCloseable {
    // "STKCAT03", little-endian: 03 since a shard's ctime and inode are kept (02: since sparse members are refused)
    private static final long MAGIC = 0x33305441434b5453L;
    private static final int HEADER = 48;
    private static final int RECORD = 56; // name offset, name length, (pad), mtime, ctime, inode, entry offset, entry length
    private static final int ENTRY = 32;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** Where it was read from or written to (null: it lives in memory only). */
    private final Path path;
    private final MappedFile file;
    private final MemorySegment bytes;
    private final String[] fieldNames;
    private final Map<String, Integer> byName;
    private final long directory;

    private TarCatalog(Path path, MappedFile file, MemorySegment bytes, String[] fieldNames, Map<String, Integer> byName,
            long directory) {
        this.path = path;
        this.file = file;
        this.bytes = bytes;
        this.fieldNames = fieldNames;
        this.byName = byName;
        this.directory = directory;
    }

    /** A catalog with no shard. */
    static TarCatalog empty() {
        return new TarCatalog(null, null, MemorySegment.NULL, new String[0], Map.of(), 0);
    }

    /** Where the catalog of {@code folder} may be kept: in it, then in the user's cache. */
    static List<Path> places(Path folder) {
        return dev.stoker.formats.io.Sidecar.places(folder.resolve(".stoker"), "stkidx");
    }

    /**
     * The lock of {@code folder}'s index among processes and threads, held while shards missing
     * from it are indexed and it is written again: ranks that open the same shards at once index
     * them once, and the others wait and then read the index. In the first of {@link #places}
     * where a lock file can be made and locked; none ({@link Lock#NONE}) where no place takes one
     * (the shards are then indexed without it).
     */
    static Lock lock(Path folder) {
        for (Path p : places(folder)) {
            Path file = Path.of(p + ".lock").toAbsolutePath();
            java.util.concurrent.locks.ReentrantLock inProcess = LOCKS.computeIfAbsent(file,
                    k -> new java.util.concurrent.locks.ReentrantLock()); // a file lock is the process's: threads take turns first
            inProcess.lock();
            try {
                Files.createDirectories(file.getParent());
                java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.CREATE,
                        java.nio.file.StandardOpenOption.WRITE);
                try {
                    return new Lock(inProcess, ch, ch.lock());
                } catch (IOException | RuntimeException e) {
                    ch.close();
                    throw e;
                }
            } catch (IOException | RuntimeException e) {
                inProcess.unlock(); // not writable here, or no locks on this file system: the next place
            }
        }
        return Lock.NONE;
    }

    private static final Map<Path, java.util.concurrent.locks.ReentrantLock> LOCKS = new java.util.concurrent.ConcurrentHashMap<>();

    /** A folder's index locked ({@link #lock}), or not ({@link #NONE}); {@link #close()} releases it. */
    static final class Lock implements AutoCloseable {
        static final Lock NONE = new Lock(null, null, null);
        private final java.util.concurrent.locks.ReentrantLock inProcess;
        private final java.nio.channels.FileChannel channel;
        private final java.nio.channels.FileLock lock;

        private Lock(java.util.concurrent.locks.ReentrantLock inProcess, java.nio.channels.FileChannel channel,
                java.nio.channels.FileLock lock) {
            this.inProcess = inProcess;
            this.channel = channel;
            this.lock = lock;
        }

        boolean held() {
            return lock != null;
        }

        @Override
        public void close() throws IOException {
            if (lock == null) {
                return;
            }
            try (channel) {
                lock.release();
            } finally {
                inProcess.unlock();
            }
        }
    }

    /** The first stored catalog that reads among {@code places}; empty when none does. */
    static TarCatalog load(List<Path> places) {
        for (Path p : places) {
            TarCatalog c = load(p);
            if (c != null) {
                return c;
            }
        }
        return empty();
    }

    /** The catalog stored at {@code p}, mapped; null when there is none or it is not whole. */
    private static TarCatalog load(Path p) {
        if (!Files.isRegularFile(p)) {
            return null;
        }
        MappedFile f = null;
        try {
            f = MappedFile.open(p);
            TarCatalog c = read(p, f, f.segment());
            if (c != null) {
                return c;
            }
        } catch (IOException | RuntimeException e) {
            // unreadable: indexed again, and written over
        }
        if (f != null) {
            f.close();
        }
        return null;
    }

    private static TarCatalog read(Path path, MappedFile file, MemorySegment s) {
        if (s.byteSize() < HEADER || s.get(LONG, 0) != MAGIC || s.get(LONG, 32) != s.byteSize()) {
            return null;
        }
        int entries = s.get(INT, 8);
        int names = s.get(INT, 12);
        long directory = s.get(LONG, 16);
        long table = s.get(LONG, 24);
        if (entries < 0 || names < 0 || directory < HEADER || table != directory + (long) entries * RECORD || table > s.byteSize()
                || crc(s, directory, s.byteSize()) != s.get(INT, 40)) {
            return null;
        }
        String[] fieldNames = new String[names];
        long at = table;
        for (int i = 0; i < names; i++) {
            int n = s.get(INT, at);
            fieldNames[i] = string(s, at + 4, n);
            at += 4 + n;
        }
        Map<String, Integer> byName = HashMap.newHashMap(entries);
        for (int e = 0; e < entries; e++) {
            long r = directory + (long) e * RECORD;
            byName.put(string(s, s.get(LONG, r), s.get(INT, r + 8)), e);
        }
        return new TarCatalog(path, file, s, fieldNames, byName, directory);
    }

    /**
     * What a shard's stat says, the key its stored index is trusted by: its size and mtime and,
     * where the file system keeps them, its ctime and inode (0 where not). A write sets the ctime,
     * and no user can set it back as {@code touch} does the mtime; a file replaced by another (a
     * rename over it) has another inode. So a shard rewritten in place with its size and mtime
     * kept is indexed again, not read at its old offsets (NOTE [Folder index] in {@link TarDataset}).
     */
    record Stat(long size, long mtime, long ctime, long inode) {
        /** The stat of {@code p}, a regular file (an {@link IOException} naming it otherwise). */
        static Stat of(Path p) throws IOException {
            java.nio.file.attribute.BasicFileAttributes a = Files.readAttributes(p, java.nio.file.attribute.BasicFileAttributes.class);
            if (!a.isRegularFile()) {
                throw new IOException(p + ": not a regular file (a directory, device or pipe)");
            }
            long ctime = 0;
            long inode = 0;
            try {
                Map<String, Object> unix = Files.readAttributes(p, "unix:ctime,ino");
                ctime = ((java.nio.file.attribute.FileTime) unix.get("ctime")).to(java.util.concurrent.TimeUnit.NANOSECONDS);
                inode = (Long) unix.get("ino");
            } catch (UnsupportedOperationException | IllegalArgumentException e) {
                // no unix attributes here: size and mtime, and the content fingerprint on first read
            }
            return new Stat(a.size(), a.lastModifiedTime().to(java.util.concurrent.TimeUnit.NANOSECONDS), ctime, inode);
        }
    }

    /**
     * The entry of shard {@code name} when one is stored for a file of this {@link Stat} and its
     * bytes are whole; null otherwise (the shard is then indexed again).
     */
    Entry find(String name, Stat stat) {
        Integer e = byName.get(name);
        if (e == null) {
            return null;
        }
        long r = directory + (long) e * RECORD;
        long at = bytes.get(LONG, r + 40);
        long length = bytes.get(LONG, r + 48);
        if (bytes.get(LONG, r + 16) != stat.mtime() || bytes.get(LONG, r + 24) != stat.ctime() || bytes.get(LONG, r + 32) != stat.inode()
                || at < HEADER || length < ENTRY || at + length > directory) {
            return null;
        }
        Entry x = new Entry(bytes.asSlice(at, length), fieldNames);
        if (x.samples() < 0 || x.fields() < 0 || x.shardSize() != stat.size() || x.length() != length
                || crc(x.bytes, ENTRY, length) != x.bytes.get(INT, 28)) {
            return null;
        }
        return x;
    }

    /** The file this catalog was read from or written to; null when it lives in memory. */
    Path path() {
        return path;
    }

    /** A shard indexed afresh: its file name, stat and index. */
    record Fresh(String name, Stat stat, Entry entry) {
    }

    /**
     * This catalog's entries with {@code fresh} ones added (a fresh entry replaces a stored one of
     * its name), written atomically to the first of {@code places} that takes it and mapped from
     * there, or kept in memory when none does (or {@code places} is empty). This catalog is left
     * as it is; the caller closes it.
     */
    TarCatalog with(List<Fresh> fresh, List<Path> places) throws IOException {
        // field names: this catalog's first, so that its entries' name ids hold as they are
        List<String> names = new ArrayList<>(List.of(fieldNames));
        Map<String, Integer> ids = new HashMap<>();
        for (int i = 0; i < names.size(); i++) {
            ids.put(names.get(i), i);
        }
        Map<String, MemorySegment> entries = new LinkedHashMap<>();
        Map<String, Stat> stats = new HashMap<>();
        for (int e = 0; e < byName.size(); e++) { // in the stored order: a shard indexed again keeps its place
            long r = directory + (long) e * RECORD;
            String name = string(bytes, bytes.get(LONG, r), bytes.get(INT, r + 8));
            MemorySegment entry = bytes.asSlice(bytes.get(LONG, r + 40), bytes.get(LONG, r + 48));
            entries.put(name, entry);
            stats.put(name, new Stat(entry.get(LONG, 8), bytes.get(LONG, r + 16), bytes.get(LONG, r + 24), bytes.get(LONG, r + 32)));
        }
        for (Fresh f : fresh) {
            entries.put(f.name(), f.entry().renumbered(names, ids));
            stats.put(f.name(), f.stat());
        }
        for (Path p : places) {
            PendingFile out = null;
            try {
                Files.createDirectories(p.toAbsolutePath().getParent());
                out = new PendingFile(p);
                write(out.out(), entries, stats, names);
                out.commit();
            } catch (IOException e) {
                continue; // not writable here: the next place
            } finally {
                if (out != null) {
                    out.abandon();
                }
            }
            TarCatalog c = load(p);
            if (c != null) {
                return c;
            }
        }
        ByteArrayOutputStream mem = new ByteArrayOutputStream();
        write(mem, entries, stats, names);
        MemorySegment s = MemorySegment.ofArray(mem.toByteArray());
        TarCatalog c = read(null, null, s);
        if (c == null) {
            throw new IllegalStateException("a tar catalog written in memory does not read back");
        }
        return c;
    }

    private static void write(OutputStream out, Map<String, MemorySegment> entries, Map<String, Stat> stats, List<String> names)
            throws IOException {
        long at = HEADER;
        byte[][] fileNames = new byte[entries.size()][];
        long[] where = new long[entries.size()];
        int e = 0;
        for (Map.Entry<String, MemorySegment> x : entries.entrySet()) {
            fileNames[e] = x.getKey().getBytes(StandardCharsets.UTF_8);
            where[e++] = at;
            at += x.getValue().byteSize();
        }
        long directory = at;
        long table = directory + (long) entries.size() * RECORD;
        // the directory, the field names and the file names, in memory: a few dozen bytes a shard
        long fileNameBytes = java.util.Arrays.stream(fileNames).mapToLong(b -> b.length).sum();
        ByteBuffer tail = ByteBuffer.allocate(Math.toIntExact(entries.size() * (long) RECORD
                + names.stream().mapToLong(n -> 4 + n.getBytes(StandardCharsets.UTF_8).length).sum()
                + fileNameBytes)).order(ByteOrder.LITTLE_ENDIAN);
        long pool = directory + tail.capacity() - fileNameBytes;
        e = 0;
        for (Map.Entry<String, MemorySegment> x : entries.entrySet()) {
            Stat st = stats.get(x.getKey());
            tail.putLong(pool).putInt(fileNames[e].length).putInt(0).putLong(st.mtime()).putLong(st.ctime()).putLong(st.inode())
                    .putLong(where[e]).putLong(x.getValue().byteSize());
            pool += fileNames[e++].length;
        }
        for (String n : names) {
            byte[] b = n.getBytes(StandardCharsets.UTF_8);
            tail.putInt(b.length).put(b);
        }
        for (byte[] b : fileNames) {
            tail.put(b);
        }
        ByteBuffer header = ByteBuffer.allocate(HEADER).order(ByteOrder.LITTLE_ENDIAN);
        header.putLong(MAGIC).putInt(entries.size()).putInt(names.size()).putLong(directory).putLong(table)
                .putLong(directory + tail.capacity()).putInt(crc(MemorySegment.ofArray(tail.array()), 0,
                        tail.capacity())).putInt(0);
        out.write(header.array());
        byte[] chunk = new byte[1 << 16];
        for (MemorySegment x : entries.values()) {
            for (long off = 0; off < x.byteSize(); off += chunk.length) {
                int n = (int) Math.min(chunk.length, x.byteSize() - off);
                MemorySegment.copy(x, ValueLayout.JAVA_BYTE, off, chunk, 0, n);
                out.write(chunk, 0, n);
            }
        }
        out.write(tail.array());
        out.flush();
    }

    private static int crc(MemorySegment s, long from, long to) {
        CRC32C c = new CRC32C();
        c.update(s.asSlice(from, to - from).asByteBuffer());
        return (int) c.getValue();
    }

    private static String string(MemorySegment s, long at, int length) {
        byte[] b = new byte[length];
        MemorySegment.copy(s, ValueLayout.JAVA_BYTE, at, b, 0, length);
        return new String(b, StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        if (file != null) {
            file.close();
        }
    }

    /**
     * One shard's index, read in place: a slice of its catalog (or, for a shard indexed afresh, a
     * block of its own), with the catalog's field names.
     */
    static final class Entry {
        private final MemorySegment bytes;
        private final String[] fieldNames;
        private final int samples;
        private final int fields;

        Entry(MemorySegment bytes, String[] fieldNames) {
            this.bytes = bytes;
            this.fieldNames = fieldNames;
            this.samples = bytes.get(INT, 16);
            this.fields = bytes.get(INT, 20);
        }

        /** {@code index} as an entry, its field names numbered in the order {@code index} lists them. */
        static Entry of(TarIndex index) {
            List<String> names = new ArrayList<>();
            Map<String, Integer> ids = new HashMap<>();
            return new Entry(encode(index, names, ids), names.toArray(String[]::new));
        }

        private static MemorySegment encode(TarIndex x, List<String> names, Map<String, Integer> ids) {
            int n = x.samples();
            int f = x.fieldNames.length;
            byte[][] keys = new byte[n][];
            int keyBytes = 0;
            for (int s = 0; s < n; s++) {
                keys[s] = x.keys[s].getBytes(StandardCharsets.UTF_8);
                keyBytes += keys[s].length;
            }
            ByteBuffer b = ByteBuffer.allocate(Math.toIntExact(length(n, f, keyBytes))).order(ByteOrder.LITTLE_ENDIAN);
            b.putLong(x.fingerprint).putLong(x.size).putInt(n).putInt(f).putInt(keyBytes).putInt(0);
            for (long o : x.offsets) {
                b.putLong(o);
            }
            for (long z : x.sizes) {
                b.putLong(z);
            }
            for (int s = 0; s <= n; s++) {
                b.putInt(x.firstField[s]);
            }
            int k = 0;
            for (int s = 0; s <= n; s++) {
                b.putInt(k);
                k += s < n ? keys[s].length : 0;
            }
            for (String name : x.fieldNames) {
                b.putInt(ids.computeIfAbsent(name, z -> {
                    names.add(z);
                    return names.size() - 1;
                }));
            }
            for (byte[] key : keys) {
                b.put(key);
            }
            MemorySegment m = MemorySegment.ofArray(b.array());
            m.set(INT, 28, crc(m, ENTRY, m.byteSize()));
            return m;
        }

        /** This entry with its field names numbered as {@code names} (to which it adds those missing). */
        MemorySegment renumbered(List<String> names, Map<String, Integer> ids) {
            MemorySegment m = MemorySegment.ofArray(bytes.toArray(ValueLayout.JAVA_BYTE));
            long at = ENTRY + 16L * fields + 8L * (samples + 1);
            for (int k = 0; k < fields; k++) {
                m.set(INT, at + 4L * k, ids.computeIfAbsent(fieldName(k), z -> {
                    names.add(z);
                    return names.size() - 1;
                }));
            }
            m.set(INT, 28, crc(m, ENTRY, m.byteSize()));
            return m;
        }

        private static long length(int n, int f, int keyBytes) {
            return ENTRY + 16L * f + 8L * (n + 1) + 4L * f + keyBytes;
        }

        private long length() {
            return length(samples, fields, bytes.get(INT, 24));
        }

        long fingerprint() {
            return bytes.get(LONG, 0);
        }

        long shardSize() {
            return bytes.get(LONG, 8);
        }

        int samples() {
            return samples;
        }

        int fields() {
            return fields;
        }

        /** Whether this is the index of the shard whose bytes and size are given: its size and fingerprint agree. */
        boolean describes(TarIndex.Bytes shard, long size) throws IOException {
            return size == shardSize() && TarIndex.fingerprint(shard, size, offsets()) == fingerprint();
        }

        long offset(int k) {
            return bytes.get(LONG, ENTRY + 8L * k);
        }

        long size(int k) {
            return bytes.get(LONG, ENTRY + 8L * fields + 8L * k);
        }

        /** Sample {@code s} has the fields {@code [firstField(s), firstField(s + 1))}. */
        int firstField(int s) {
            return bytes.get(INT, ENTRY + 16L * fields + 4L * s);
        }

        String fieldName(int k) {
            return fieldNames[bytes.get(INT, ENTRY + 16L * fields + 8L * (samples + 1) + 4L * k)];
        }

        /** Sample {@code s}'s key as UTF-8: {@code [keyStart(s), keyStart(s + 1))} of {@link #keys()}. */
        int keyStart(int s) {
            return bytes.get(INT, ENTRY + 16L * fields + 4L * (samples + 1) + 4L * s);
        }

        MemorySegment keys() {
            long at = ENTRY + 20L * fields + 8L * (samples + 1);
            return bytes.asSlice(at, bytes.byteSize() - at);
        }

        String key(int s) {
            int from = keyStart(s);
            return string(keys(), from, keyStart(s + 1) - from);
        }

        /** The offsets of the fields, in the order listed: what a content fingerprint samples. */
        long[] offsets() {
            return bytes.asSlice(ENTRY, 8L * fields).toArray(LONG);
        }
    }
}
