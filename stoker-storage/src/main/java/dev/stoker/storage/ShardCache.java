package dev.stoker.storage;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A local directory of downloaded shards within a byte limit. {@link #acquire} returns the local
 * copy of a shard (downloading it if needed) and pins it until {@link #release}; a pinned shard is
 * never evicted. Because a loader knows its order in advance, {@link #plan} tells the cache which
 * shards come next: eviction removes the unpinned shard whose next use lies furthest ahead (those
 * not needed again first), and {@link #prefetch} downloads ahead in parallel. Downloads go to a
 * temporary file, are checked against the announced size, and are renamed into place; a file lock
 * per shard lets several processes share one cache and download each shard once.
 */
public final class ShardCache implements AutoCloseable {
    private final Path dir;
    private final long maxBytes;
    private final ExecutorService downloads;
    private final Map<String, Entry> entries = new LinkedHashMap<>(16, 0.75f, true);
    private final Map<String, CompletableFuture<Path>> inFlight = new HashMap<>();
    /** Per shard key, its positions in the planned order, ascending; {@code now} is the position reached. */
    private final Map<String, int[]> uses = new HashMap<>();
    private int now;
    private long used;

    // stats
    private long hits;
    private long misses;
    private long bytesDownloaded;
    private long evictions;
    private long waitNanos;

    private static final class Entry {
        final Path path;
        final long size;
        int pins;

        Entry(Path path, long size) {
            this.path = path;
            this.size = size;
        }
    }

    /** What the cache did. */
    public record Stats(long hits, long misses, long bytesDownloaded, long evictions, long waitNanos, long usedBytes) {
    }

    public ShardCache(Path dir, long maxBytes, int parallelDownloads) throws IOException {
        if (maxBytes < 1 || parallelDownloads < 1) {
            throw new IllegalArgumentException("maxBytes and parallelDownloads must be >= 1");
        }
        this.dir = Files.createDirectories(dir);
        this.maxBytes = maxBytes;
        this.downloads = Executors.newFixedThreadPool(parallelDownloads, r -> {
            Thread t = new Thread(r, "stoker-download");
            t.setDaemon(true);
            return t;
        });
        try (var files = Files.list(this.dir)) {
            for (Path p : files.filter(p -> p.getFileName().toString().endsWith(".shard")).toList()) {
                long size = Files.size(p);
                entries.put(p.getFileName().toString(), new Entry(p, size));
                used += size;
            }
        }
    }

    /**
     * The order in which shards will be read (by location; a shard may come more than once):
     * eviction keeps the shard needed soonest, and first removes those not needed again. Call
     * {@link #reached} as the reader moves along it.
     */
    public synchronized void plan(List<String> order) {
        Map<String, List<Integer>> positions = new HashMap<>();
        for (int i = 0; i < order.size(); i++) {
            positions.computeIfAbsent(key(order.get(i)), x -> new ArrayList<>()).add(i);
        }
        uses.clear();
        positions.forEach((k, list) -> uses.put(k, list.stream().mapToInt(Integer::intValue).toArray()));
        now = 0;
    }

    /** The reader has reached position {@code position} of the plan: uses before it are past. */
    public synchronized void reached(int position) {
        now = Math.max(now, position);
    }

    /** The next planned use of a shard at or after the position reached; MAX_VALUE when none. */
    private int nextUse(String k) {
        int[] at = uses.get(k);
        if (at == null) {
            return Integer.MAX_VALUE;
        }
        int i = java.util.Arrays.binarySearch(at, now);
        i = i >= 0 ? i : -i - 1;
        return i < at.length ? at[i] : Integer.MAX_VALUE;
    }

    /** Starts downloading a shard if it is neither cached nor coming. */
    public synchronized void prefetch(String location) {
        String k = key(location);
        if (!entries.containsKey(k) && !inFlight.containsKey(k)) {
            inFlight.put(k, CompletableFuture.supplyAsync(() -> download(location, k), downloads));
        }
    }

    /** The local copy of a shard, pinned until {@link #release}. */
    public Path acquire(String location) throws IOException {
        String k = key(location);
        CompletableFuture<Path> f;
        synchronized (this) {
            Entry e = entries.get(k);
            if (e != null) {
                e.pins++;
                hits++;
                return e.path;
            }
            misses++;
            f = inFlight.computeIfAbsent(k, x -> CompletableFuture.supplyAsync(() -> download(location, k), downloads));
        }
        long t0 = System.nanoTime();
        try {
            f.join();
        } catch (java.util.concurrent.CompletionException e) {
            synchronized (this) {
                inFlight.remove(k);
            }
            Throwable c = e.getCause();
            throw c instanceof IOException io ? io : c instanceof java.io.UncheckedIOException u ? u.getCause()
                    : new IOException(location + ": " + c, c);
        }
        synchronized (this) {
            waitNanos += System.nanoTime() - t0;
            Entry e = entries.get(k);
            if (e == null) {
                throw new IOException(location + ": downloaded, then evicted before use (the cache is too small)");
            }
            e.pins++;
            return e.path;
        }
    }

    public synchronized void release(String location) {
        Entry e = entries.get(key(location));
        if (e != null && e.pins > 0) {
            e.pins--;
        }
    }

    public synchronized Stats stats() {
        return new Stats(hits, misses, bytesDownloaded, evictions, waitNanos, used);
    }

    /** File locks are per process: threads of one process (two caches on one folder) meet here first. */
    private static final java.util.concurrent.ConcurrentHashMap<Path, Object> PROCESS_LOCKS = new java.util.concurrent.ConcurrentHashMap<>();

    private Path download(String location, String k) {
        Path lockPath = dir.resolve(k + ".lock").toAbsolutePath().normalize();
        synchronized (PROCESS_LOCKS.computeIfAbsent(lockPath, x -> new Object())) {
            return downloadLocked(location, k, lockPath);
        }
    }

    private Path downloadLocked(String location, String k, Path lockPath) {
        Path target = dir.resolve(k);
        try (FileChannel lockFile = FileChannel.open(lockPath, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
             FileLock lock = lockFile.lock()) {
            long size;
            boolean downloaded = false;
            if (Files.exists(target)) {
                size = Files.size(target); // another process downloaded it while we waited for the lock
            } else {
                Path tmp = Files.createTempFile(dir, "." + k, ".partial");
                try {
                    size = Storage.copy(location, tmp, n -> { });
                    makeRoom(size, k); // reserves the bytes, so parallel downloads cannot overfill the cache
                    try {
                        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                    } catch (IOException | RuntimeException e) {
                        synchronized (this) {
                            used -= size;
                        }
                        throw e;
                    }
                    downloaded = true;
                } finally {
                    Files.deleteIfExists(tmp);
                }
            }
            synchronized (this) {
                if (!entries.containsKey(k)) {
                    entries.put(k, new Entry(target, size));
                    if (!downloaded) {
                        used += size;
                    }
                } else if (downloaded) {
                    used -= size;
                }
                if (downloaded) {
                    bytesDownloaded += size;
                }
                inFlight.remove(k);
            }
            return target;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** Evicts unpinned shards, furthest next use first, until {@code size} more bytes fit, and reserves them. */
    private synchronized void makeRoom(long size, String incoming) throws IOException {
        if (size > maxBytes) {
            throw new IOException("a shard of " + size + " bytes does not fit a cache of " + maxBytes + " bytes");
        }
        while (used + size > maxBytes) {
            Map.Entry<String, Entry> victim = null;
            int victimUse = -1;
            for (Map.Entry<String, Entry> e : entries.entrySet()) {
                if (e.getValue().pins > 0 || e.getKey().equals(incoming)) {
                    continue;
                }
                int use = nextUse(e.getKey()); // not needed again: first to go
                if (use > victimUse) { // ties: the least recently used, which the access order lists first
                    victimUse = use;
                    victim = e;
                }
            }
            if (victim == null) {
                throw new IOException("the cache of " + maxBytes + " bytes is full of shards in use; a shard of " + size
                        + " bytes does not fit");
            }
            Files.deleteIfExists(victim.getValue().path);
            used -= victim.getValue().size;
            entries.remove(victim.getKey());
            evictions++;
        }
        used += size;
    }

    /** The cache's file name for a location: a hash, then the original name. */
    static String key(String location) {
        try {
            byte[] h = MessageDigest.getInstance("SHA-256").digest(location.getBytes(StandardCharsets.UTF_8));
            String name = Storage.baseName(location).replaceAll("[^A-Za-z0-9._-]", "_");
            return HexFormat.of().formatHex(h, 0, 8) + "-" + name + ".shard";
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Shards cached now (for tests and stats). */
    synchronized List<String> cached() {
        return new ArrayList<>(entries.keySet());
    }

    @Override
    public void close() {
        downloads.shutdownNow();
    }
}
