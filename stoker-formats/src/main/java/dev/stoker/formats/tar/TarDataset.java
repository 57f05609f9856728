package dev.stoker.formats.tar;

import dev.stoker.CorruptShardException;
import dev.stoker.ErrorPolicy;
import dev.stoker.Dataset;
import dev.stoker.formats.io.MappedFile;
import dev.stoker.formats.io.Parts;
import dev.stoker.formats.io.Unreadable;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Uncompressed WebDataset tar shards as one random-access dataset: sample {@code i} of the
 * shards laid end to end. Every shard's index lies in its folder's {@link TarCatalog}, mapped and
 * read in place, so the loader's orders, exact and elastic resume work as on any other dataset,
 * without replaying a shard, and a dataset of many shards opens by a stat per shard (NOTE
 * [Folder index]). A shard is opened when first read. Up to {@link #MAPPED_LIMIT} shards, each is
 * mapped then and a sample's fields are slices of the mapping (no copy), valid until
 * {@link #close()} unmaps it; beyond, a sample's bytes are read into an array of its own.
 */
public final class TarDataset implements Dataset<TarSample>, AutoCloseable {
    /**
     * The most shards a dataset maps: each mapping is one of the process's {@code
     * vm.max_map_count} (65,530 by default), which the JVM's own heap, code and threads share.
     */
    static final int MAPPED_LIMIT = 8_192;

    private final Shard[] shards;
    /** Shard {@code k}'s first sample; the last element is the total. */
    private final long[] starts;
    private final boolean mapped;
    private final List<TarCatalog> catalogs = new ArrayList<>();
    private final long leftOut;
    private int indexed;
    private volatile long fingerprint;
    private volatile boolean closed;

    /** A shard: its local file, the name samples and errors give it, its stored index, and once read, what was opened. */
    private static final class Shard {
        final Path path;
        final String name;
        final TarCatalog catalog;
        final TarCatalog.Entry stored;
        volatile Opened opened;

        Shard(Path path, String name, TarCatalog catalog, TarCatalog.Entry stored) {
            this.path = path;
            this.name = name;
            this.catalog = catalog;
            this.stored = stored;
        }
    }

    /** A shard given to a dataset that is compressed: it has no random access, and reads as a stream ({@link TarShards}). */
    public static final class CompressedShardException extends IllegalArgumentException {
        CompressedShardException(String message) {
            super(message);
        }
    }

    /** A shard checked against its index (or indexed again) on its first read, and its mapping (null: read by position). */
    private record Opened(TarCatalog.Entry index, MappedFile file) {
    }

    public TarDataset(List<Path> paths) throws IOException {
        this(paths, paths.stream().map(Path::toString).toList(), true, ErrorPolicy.FAIL);
    }

    /**
     * Shards read from local copies ({@code paths}, e.g. a shard cache's files) under the names
     * they have elsewhere ({@code names}, e.g. their URLs), which samples and errors give. With
     * {@code storeIndex} false the index is built in memory and stored nowhere (a cache's
     * directory holds its shards alone). Under a skip policy ({@code errors} other than
     * {@link ErrorPolicy#FAIL}), a shard that cannot be indexed (damaged, cut short, empty) is left
     * out and counted ({@link #shardsLeftOut()}); under {@code FAIL} it is an error; a dataset left
     * with no shard at all is an error either way.
     */
    public TarDataset(List<Path> paths, List<String> names, boolean storeIndex, ErrorPolicy errors) throws IOException {
        this(paths, names, storeIndex, errors != ErrorPolicy.FAIL, MAPPED_LIMIT);
    }

    /** As above, mapping the shards only when there are at most {@code mappedLimit} of them. */
    TarDataset(List<Path> paths, List<String> names, boolean storeIndex, boolean skipUnreadable, int mappedLimit) throws IOException {
        if (paths.isEmpty()) {
            throw new IllegalArgumentException("no shards");
        }
        if (names.size() != paths.size()) {
            throw new IllegalArgumentException(names.size() + " names for " + paths.size() + " shards");
        }
        int n = paths.size();
        Path[] folders = new Path[n];
        String[] files = new String[n];
        Map<Path, TarCatalog> stored = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            Path abs = paths.get(i).toAbsolutePath();
            folders[i] = abs.getParent();
            files[i] = abs.getFileName().toString();
            stored.computeIfAbsent(folders[i], f -> storeIndex ? TarCatalog.load(TarCatalog.places(f)) : TarCatalog.empty());
        }
        catalogs.addAll(stored.values());
        try {
            // each shard stat'ed and looked up in its folder's stored index
            Found[] found = inParallel(n, i -> stat(paths.get(i), files[i], stored.get(folders[i])));
            Map<Path, List<Integer>> readable = new LinkedHashMap<>(); // each folder's shards that stat'ed
            java.util.Set<Path> missing = new java.util.HashSet<>();
            for (int i = 0; i < n; i++) {
                if (found[i].error() == null) {
                    readable.computeIfAbsent(folders[i], k -> new ArrayList<>()).add(i);
                    if (found[i].entry() == null) {
                        missing.add(folders[i]);
                    }
                }
            }
            // a folder with shards not in its index: those indexed, under the folder's lock (NOTE [Folder index])
            Map<Path, TarCatalog> current = new LinkedHashMap<>(stored);
            for (Map.Entry<Path, List<Integer>> e : readable.entrySet()) {
                Path folder = e.getKey();
                if (!missing.contains(folder)) {
                    continue;
                }
                try (TarCatalog.Lock lock = storeIndex ? TarCatalog.lock(folder) : TarCatalog.Lock.NONE) {
                    if (lock.held()) { // another process may have indexed them while this one waited (and all it reads
                        // is checked again below: a shard the index read now lacks is indexed too)
                        TarCatalog again = TarCatalog.load(TarCatalog.places(folder));
                        catalogs.add(again);
                        current.put(folder, again);
                    }
                    TarCatalog c = current.get(folder);
                    List<Integer> left = e.getValue().stream()
                            .filter(i -> c.find(files[i], found[i].stat()) == null).toList();
                    Found[] built = inParallel(left.size(), j -> index(paths.get(left.get(j)), found[left.get(j)]));
                    List<TarCatalog.Fresh> fresh = new ArrayList<>();
                    for (int j = 0; j < left.size(); j++) {
                        int i = left.get(j);
                        found[i] = built[j];
                        if (built[j].error() == null) {
                            fresh.add(new TarCatalog.Fresh(files[i], built[j].stat(), built[j].fresh()));
                        }
                    }
                    indexed += fresh.size();
                    if (!fresh.isEmpty()) {
                        TarCatalog next = c.with(fresh, storeIndex ? TarCatalog.places(folder) : List.of());
                        catalogs.add(next);
                        current.put(folder, next);
                    }
                }
            }
            // the first error in the shards' order, as one thread would have met it
            IOException first = null;
            int firstAt = 0;
            long skipped = 0;
            for (int i = 0; i < n; i++) {
                Found f = found[i];
                if (skipUnreadable && Unreadable.badData(f.error())) { // NOTE [Unreadable shards]
                    if (first == null) {
                        first = (IOException) f.error();
                        firstAt = i;
                    }
                    skipped++;
                } else if (f.error() instanceof IOException e) {
                    throw renamed(e, paths.get(i).toString(), names.get(i));
                } else if (f.error() != null) {
                    throw (RuntimeException) f.error();
                }
            }
            if (skipped == n) {
                throw Unreadable.noneLeft(n, renamed(first, paths.get(firstAt).toString(), names.get(firstAt)));
            }
            List<Shard> kept = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                Found f = found[i];
                if (f.error() == null) {
                    TarCatalog c = current.get(folders[i]);
                    TarCatalog.Entry x = c == stored.get(folders[i]) ? f.entry() : c.find(files[i], f.stat());
                    if (x == null) {
                        throw new IllegalStateException(paths.get(i) + ": not found in the index just written");
                    }
                    kept.add(new Shard(paths.get(i), names.get(i), c, x));
                }
            }
            // the catalogs read before and written over since
            for (TarCatalog c : List.copyOf(catalogs)) {
                if (!current.containsValue(c)) {
                    c.close();
                    catalogs.remove(c);
                }
            }
            this.shards = kept.toArray(Shard[]::new);
            this.leftOut = skipped;
        } catch (IOException | RuntimeException e) {
            catalogs.forEach(TarCatalog::close);
            throw e;
        }
        this.starts = new long[shards.length + 1];
        for (int k = 0; k < shards.length; k++) {
            starts[k + 1] = starts[k] + shards[k].stored.samples();
        }
        this.mapped = shards.length <= mappedLimit;
    }

    /**
     * What opening found of a shard: its stored index when that is current, else one built from
     * its headers ({@code fresh}); or the exception (an {@link IOException} or a runtime one) it
     * failed with.
     */
    private record Found(TarCatalog.Entry entry, TarCatalog.Entry fresh, TarCatalog.Stat stat, Exception error) {
    }

    /** Shards indexed from their headers when this dataset opened (the others' indexes were stored). */
    public int shardsIndexed() {
        return indexed;
    }

    private static Found stat(Path p, String file, TarCatalog catalog) {
        try {
            TarCatalog.Stat stat = TarCatalog.Stat.of(p);
            return new Found(catalog.find(file, stat), null, stat, null);
        } catch (IOException | RuntimeException e) {
            return new Found(null, null, null, e);
        }
    }

    /** A shard stat'ed ({@code f}) indexed from its headers. */
    private static Found index(Path p, Found f) {
        try {
            return new Found(null, TarCatalog.Entry.of(TarIndex.build(p)), f.stat(), null);
        } catch (IOException | RuntimeException e) {
            return new Found(null, null, null, e);
        }
    }

    /**
     * {@code task} for each of {@code 0..n-1} on up to {@link #INDEXING_THREADS} threads, the
     * calling one among them (NOTE [Parallel indexing]); returns the results in order.
     */
    private static Found[] inParallel(int n, java.util.function.IntFunction<Found> task) {
        Found[] out = new Found[n];
        if (n == 0) {
            return out;
        }
        java.util.concurrent.atomic.AtomicInteger next = new java.util.concurrent.atomic.AtomicInteger();
        Runnable work = () -> {
            for (int i; (i = next.getAndIncrement()) < n; ) {
                out[i] = task.apply(i);
            }
        };
        int threads = Math.min(INDEXING_THREADS, n);
        Thread[] helpers = new Thread[threads - 1];
        for (int t = 0; t < helpers.length; t++) {
            helpers[t] = Thread.ofPlatform().name("stoker-index-" + t).daemon().start(work);
        }
        work.run();
        boolean interrupted = false;
        for (Thread t : helpers) {
            while (true) {
                try {
                    t.join();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true; // the helpers finish their shards; nothing is left half-open
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return out;
    }

    // NOTE [Parallel indexing]: opening a dataset of many small shards is file-system work: for each
    // shard a stat and, the first time, reads of its headers. Threads take the next shard from a
    // shared counter, so a slow shard holds up one thread, not the rest; errors are reported in the
    // shards' order, as one thread would have met them. One thread per core: with the shards in
    // the page cache every read is a system call's worth of CPU, and more threads than cores only
    // take turns with the JIT compiler that makes the scan fast (100,000 shards: 1.8 s to index
    // with two threads on two cores, 4.3 s with eight; BENCHMARKS.md, "Many small shards").
    static final int INDEXING_THREADS = Runtime.getRuntime().availableProcessors();

    // NOTE [Folder index]: a dataset of 100,000 shards cannot keep an index object per shard and a
    // mapping per shard: the indexes' keys and offsets filled the heap in proportion to the
    // samples, reading 100,000 index files took seconds, and 100,000 mappings pass the kernel's
    // vm.max_map_count (the JVM then dies: "os::commit_memory failed"). So the indexes of a
    // folder's shards live in one file, TarCatalog, kept in the folder (or the user's cache) and
    // mapped: opening reads it in place and stats each shard (in parallel); a shard whose size,
    // mtime, ctime or inode differs from its entry (TarCatalog.Stat: a write in place with the
    // size and mtime kept still sets the ctime), or that has none, is indexed from its headers and the catalog
    // written again with it, so adding shards to a folder indexes the new ones only. That is done
    // holding the folder's lock (a file lock, TarCatalog.lock), and the catalog read again once it
    // is held: ranks that open the same shards cold at once index each shard once, the others
    // waiting and then reading the catalog, instead of every rank indexing all of them. The heap
    // holds an object per shard and nothing per sample. A shard is opened on its first read: its
    // content fingerprint is checked then (the catalog's word is its stat at open; the first
    // read proves the rest) and, past MAPPED_LIMIT shards, each sample is read by position, one
    // read of its members' span, instead of mapping the shard. A shard rewritten since the open
    // (or on a file system without ctimes) is indexed again when its fingerprint differs, and its
    // folder's catalog removed, so the next open indexes the folder again.

    /**
     * A hash of every sample's key and of its fields' names and sizes, shard by shard: the same for
     * a shard cache's copies and the local files, other for other shards.
     */
    @Override
    public long fingerprint() {
        long f = fingerprint;
        if (f == 0) {
            f = fingerprint = keysAndFields(); // once: it reads every sample's key, and every loader asks
        }
        return f;
    }

    private long keysAndFields() {
        java.util.zip.CRC32C keys = new java.util.zip.CRC32C();
        java.util.zip.CRC32C fields = new java.util.zip.CRC32C();
        ByteBuffer n = ByteBuffer.allocate(8);
        byte[] buf = new byte[256];
        Map<String, byte[]> utf8 = new java.util.HashMap<>();
        for (Shard sh : shards) {
            TarCatalog.Entry x = sh.stored;
            MemorySegment k = x.keys();
            if (k.byteSize() > buf.length) {
                buf = new byte[(int) k.byteSize()];
            }
            MemorySegment.copy(k, java.lang.foreign.ValueLayout.JAVA_BYTE, 0, buf, 0, (int) k.byteSize());
            for (int s = 0; s < x.samples(); s++) {
                keys.update(buf, x.keyStart(s), x.keyStart(s + 1) - x.keyStart(s));
                keys.update(0);
            }
            for (int f = 0; f < x.fields(); f++) {
                fields.update(utf8.computeIfAbsent(x.fieldName(f), z -> z.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
                fields.update(n.clear().putLong(x.size(f)).flip());
            }
        }
        return keys.getValue() << 32 | fields.getValue();
    }

    /** Shards left out as unreadable (under a skip policy). */
    @Override
    public long shardsLeftOut() {
        return leftOut;
    }

    /** The same error, naming the shard as its reader knows it (its URL, not the cache's file). */
    private static IOException renamed(IOException e, String local, String name) {
        String m = e.getMessage();
        if (m == null || local.equals(name) || !m.contains(local)) {
            return e;
        }
        return new IOException(m.replace(local, name), e);
    }

    @Override
    public long size() {
        return starts[shards.length];
    }

    @Override
    public String name() {
        return shards[0].name;
    }

    /** Samples in shard {@code s}. */
    public int samples(int s) {
        return shards[s].stored.samples();
    }

    @Override
    public TarSample get(long index) throws IOException {
        if (index < 0 || index >= size()) {
            throw new IndexOutOfBoundsException("sample " + index + " of " + size());
        }
        int k = shardOf(index);
        Shard sh = shards[k];
        Opened o = sh.opened;
        if (o == null) {
            o = open(sh);
        }
        TarCatalog.Entry x = o.index();
        int s = (int) (index - starts[k]);
        int from = x.firstField(s);
        int to = x.firstField(s + 1);
        MemorySegment bytes;
        long base = 0;
        if (o.file() != null) {
            bytes = o.file().segment();
        } else {
            base = x.offset(from); // a sample's members lie one after the other: one read of their span
            bytes = read(sh, base, x.offset(to - 1) + x.size(to - 1) - base);
        }
        Map<String, MemorySegment> fields = LinkedHashMap.newLinkedHashMap(to - from);
        for (int f = from; f < to; f++) {
            fields.put(x.fieldName(f), bytes.asSlice(x.offset(f) - base, x.size(f)));
        }
        return new TarSample(x.key(s), sh.name, fields);
    }

    /** The shard holding sample {@code index}: the last whose first sample is at or before it (an empty shard holds none). */
    private int shardOf(long index) {
        return Parts.of(starts, index);
    }

    /** A shard on its first read: mapped (up to MAPPED_LIMIT shards), and checked against its index. */
    private Opened open(Shard sh) throws IOException {
        synchronized (sh) {
            Opened o = sh.opened;
            if (o != null) {
                return o;
            }
            if (closed) {
                throw new IllegalStateException(sh.name + ": the dataset is closed");
            }
            MappedFile file = null;
            try {
                TarCatalog.Entry index = sh.stored;
                boolean same;
                if (mapped) {
                    file = MappedFile.open(sh.path);
                    same = index.describes(TarIndex.Bytes.of(file.segment()), file.size());
                } else {
                    try (FileChannel ch = FileChannel.open(sh.path, StandardOpenOption.READ)) {
                        same = index.describes(TarIndex.Bytes.of(ch), ch.size());
                    }
                }
                if (!same) {
                    index = reindexed(sh);
                }
                o = new Opened(index, file);
            } catch (IOException e) {
                if (file != null) {
                    file.close();
                }
                throw renamed(e, sh.path.toString(), sh.name);
            } catch (RuntimeException e) {
                if (file != null) {
                    file.close();
                }
                throw e;
            }
            sh.opened = o;
            return o;
        }
    }

    /**
     * The index of a shard whose content is not what its stored index was built from (rewritten
     * with its size and mtime kept): built again, and the folder's catalog removed so that the
     * next open indexes the folder again. A shard that now holds another number of samples cannot
     * take its old place in the dataset's numbering: that is an error.
     */
    private static TarCatalog.Entry reindexed(Shard sh) throws IOException {
        if (sh.catalog.path() != null) {
            Files.deleteIfExists(sh.catalog.path());
        }
        TarIndex fresh = TarIndex.build(sh.path);
        if (fresh.samples() != sh.stored.samples()) {
            throw new CorruptShardException(sh.name, 0, "changed since the dataset was opened (or was rewritten with the "
                    + "size and modification time it had when indexed): it holds " + fresh.samples()
                    + " samples where its index listed " + sh.stored.samples() + "; open the dataset again");
        }
        return TarCatalog.Entry.of(fresh);
    }

    /** {@code length} bytes of a shard from byte {@code at}, read into an array of their own. */
    private static MemorySegment read(Shard sh, long at, long length) throws IOException {
        byte[] b = new byte[Math.toIntExact(length)];
        ByteBuffer buf = ByteBuffer.wrap(b);
        try (FileChannel ch = FileChannel.open(sh.path, StandardOpenOption.READ)) {
            while (buf.hasRemaining()) {
                if (ch.read(buf, at + buf.position()) < 0) {
                    throw new CorruptShardException(sh.name, at + buf.position(), "ends before byte " + (at + length)
                            + ", where its index says a sample's members end: cut short since it was indexed");
                }
            }
        } catch (CorruptShardException e) {
            throw e;
        } catch (IOException e) {
            throw renamed(e, sh.path.toString(), sh.name);
        }
        return MemorySegment.ofArray(b);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (mapped) {
            for (Shard sh : shards) {
                synchronized (sh) {
                    Opened o = sh.opened;
                    if (o != null && o.file() != null) {
                        o.file().close();
                    }
                }
            }
        }
        catalogs.forEach(TarCatalog::close);
    }
}
