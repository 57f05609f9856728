package dev.stoker.formats.tar;

import dev.stoker.CorruptShardException;
import dev.stoker.Dataset;
import dev.stoker.formats.io.MappedFile;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Uncompressed WebDataset tar shards as one random-access dataset: sample {@code i} of the
 * shards laid end to end, its fields as slices of the mapped shard (no copy). With a
 * {@link TarIndex} per shard, the loader's orders, exact and elastic resume work as on any other
 * dataset, without replaying a shard. {@link #close()} unmaps the shards.
 */
public final class TarDataset implements Dataset<TarSample>, AutoCloseable {
    private final List<Shard> shards = new ArrayList<>();
    private long leftOut;
    private volatile long fingerprint;
    private final Dataset<TarSample> all;

    /** One mapped shard, its index, and the name samples and errors give it. */
    private record Shard(MappedFile file, TarIndex index, String shardName) implements Dataset<TarSample> {
        @Override
        public long size() {
            return index.samples();
        }

        @Override
        public TarSample get(long i) {
            int s = Math.toIntExact(i);
            Map<String, MemorySegment> fields = new LinkedHashMap<>();
            for (int k = index.firstField[s]; k < index.firstField[s + 1]; k++) {
                fields.put(index.fieldNames[k], file.segment().asSlice(index.offsets[k], index.sizes[k]));
            }
            return new TarSample(index.keys[s], shardName, fields);
        }

        @Override
        public String name() {
            return shardName;
        }
    }

    public TarDataset(List<Path> paths) throws IOException {
        this(paths, paths.stream().map(Path::toString).toList(), true, false);
    }

    /**
     * Shards read from local copies ({@code paths}, e.g. a shard cache's files) under the names
     * they have elsewhere ({@code names}, e.g. their URLs), which samples and errors give. With
     * {@code storeIndex} false the indexes are built in memory and stored nowhere (a cache's
     * directory holds its shards alone). With {@code skipUnreadable}, a shard that cannot be
     * indexed (damaged, cut short, empty) is left out and counted ({@link #shardsLeftOut()});
     * without it, it is an error; a dataset left with no shard at all is an error either way.
     */
    public TarDataset(List<Path> paths, List<String> names, boolean storeIndex, boolean skipUnreadable) throws IOException {
        if (paths.isEmpty()) {
            throw new IllegalArgumentException("no shards");
        }
        if (names.size() != paths.size()) {
            throw new IllegalArgumentException(names.size() + " names for " + paths.size() + " shards");
        }
        CorruptShardException first = null;
        int firstAt = 0;
        Opened[] opened = openAll(paths, names, storeIndex);
        try {
            for (int i = 0; i < paths.size(); i++) {
                Opened o = opened[i];
                if (o.shard() != null) {
                    shards.add(o.shard());
                    opened[i] = null; // closed with the dataset from now on
                } else if (o.error() instanceof CorruptShardException e && skipUnreadable) {
                    if (first == null) {
                        first = e;
                        firstAt = i;
                    }
                    leftOut++;
                } else if (o.error() instanceof IOException e) {
                    throw renamed(e, paths.get(i).toString(), names.get(i));
                } else {
                    throw (RuntimeException) o.error();
                }
            }
            if (shards.isEmpty()) {
                throw new IOException("every shard is unreadable (" + leftOut + "); the first: "
                        + renamed(first, paths.get(firstAt).toString(), names.get(firstAt)).getMessage(), first);
            }
        } catch (IOException | RuntimeException e) {
            for (Opened o : opened) {
                if (o != null && o.shard() != null) {
                    o.shard().file().close();
                }
            }
            close();
            throw e;
        }
        this.all = Dataset.concat(shards);
    }

    /** A shard mapped and indexed, or the exception (an {@link IOException} or a runtime one) it failed with. */
    private record Opened(Shard shard, Exception error) {
    }

    /**
     * Each shard mapped and indexed, on up to {@link #INDEXING_THREADS} threads: with many small
     * shards the time goes to opening files and reading their headers or stored indexes, which
     * waits on the file system as much as on a core (NOTE [Parallel indexing]). Returns what each
     * shard gave, in the shards' order.
     */
    private static Opened[] openAll(List<Path> paths, List<String> names, boolean storeIndex) {
        Opened[] out = new Opened[paths.size()];
        java.util.concurrent.atomic.AtomicInteger next = new java.util.concurrent.atomic.AtomicInteger();
        Runnable work = () -> {
            for (int i; (i = next.getAndIncrement()) < out.length; ) {
                Path p = paths.get(i);
                try {
                    TarIndex idx = storeIndex ? TarIndex.of(p) : TarIndex.build(p);
                    out[i] = new Opened(new Shard(MappedFile.open(p), idx, names.get(i)), null);
                } catch (IOException | RuntimeException e) {
                    out[i] = new Opened(null, e);
                }
            }
        };
        int threads = Math.min(INDEXING_THREADS, paths.size());
        Thread[] helpers = new Thread[threads - 1];
        for (int t = 0; t < helpers.length; t++) {
            helpers[t] = Thread.ofPlatform().name("stoker-index-" + t).daemon().start(work);
        }
        work.run(); // the calling thread is one of them
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
    // shard an open, a map, and a read of its stored index (or, the first time, of every header).
    // Done one shard after another, 3,000 W2-sized shards of 7 samples took seconds before the
    // first batch (BENCHMARKS.md, "Many small shards"). Threads take the next shard from a shared
    // counter, so a slow shard holds up one thread, not the rest; errors are reported in the
    // shards' order, as one thread would have met them. Eight threads: the file system's queue
    // depth, not the cores, sets how many pay; the figure is measured there.
    static final int INDEXING_THREADS = 8;

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
        java.nio.ByteBuffer n = java.nio.ByteBuffer.allocate(8);
        for (Shard sh : shards) {
            TarIndex x = sh.index();
            for (String k : x.keys) {
                keys.update(k.getBytes(java.nio.charset.StandardCharsets.UTF_8));
                keys.update(0);
            }
            for (int f = 0; f < x.fieldNames.length; f++) {
                fields.update(x.fieldNames[f].getBytes(java.nio.charset.StandardCharsets.UTF_8));
                fields.update(n.clear().putLong(x.sizes[f]).flip());
            }
        }
        return keys.getValue() << 32 | fields.getValue();
    }

    /** Shards left out as unreadable (with {@code skipUnreadable}). */
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
        return all.size();
    }

    @Override
    public String name() {
        return shards.get(0).name();
    }

    /** Samples in shard {@code s}. */
    public int samples(int s) {
        return shards.get(s).index().samples();
    }

    @Override
    public TarSample get(long index) throws IOException {
        return all.get(index);
    }

    @Override
    public void close() {
        for (Shard s : shards) {
            s.file().close();
        }
    }
}
