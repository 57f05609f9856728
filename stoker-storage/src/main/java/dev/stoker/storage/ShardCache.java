package dev.stoker.storage;

import dev.stoker.storage.io.PendingFile;
import dev.stoker.storage.io.Temporaries;
import dev.stoker.storage.io.UserCache;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A local directory of downloaded shards within a byte limit that every process using the
 * directory keeps together. {@link #acquire} returns the local copy of a shard (downloading it if
 * needed) and pins it until {@link #release}; a pinned shard is never evicted, by this process or
 * any other. Because a loader knows its order in advance, {@link #plan} tells the cache which
 * shards come next: eviction removes the unpinned shard whose next use lies furthest ahead (those
 * not needed again first, then the least recently used), and {@link #prefetch} downloads ahead in
 * parallel. Downloads go to a temporary file, are checked against the announced size (and digest,
 * where the source gives one), and are renamed into place; each shard is downloaded once however
 * many processes want it.
 *
 * <p>NOTE [Shared budget]: the directory is the ledger. Complete shards ({@code KEY.shard}) and
 * reservations ({@code KEY.reserve}: the size of a download in progress, written once the source
 * has announced it and before any byte lands) add up to the bytes in use. Every reservation,
 * eviction and completion happens under an exclusive lock on {@code .cache.lock} (a file lock
 * between processes, a lock between the threads of one), after a fresh scan of the directory, so
 * the sum stays within the limit whoever downloads. A downloader holds an exclusive lock on
 * {@code KEY.lock} (others wanting the same shard wait on it, then find it present), so a
 * reservation whose {@code KEY.lock} is free was left by a process that died: the scan removes it
 * and its partial file. A shard in use is pinned by a shared lock on {@code KEY.pin}; an evicting
 * process deletes a shard only after taking an exclusive lock on its pin file without waiting,
 * and a pinning process checks that the shard still exists after its lock is granted. POSIX
 * locks belong to a process and closing any descriptor of a file drops them all, so within one
 * process each pin file has one shared channel (a table), and lock files are opened only by the
 * thread that holds the process-wide lock for them. The directory must be the user's own (NOTE
 * [Folders of one's own]): another user's is refused.
 */
public final class ShardCache implements AutoCloseable {
    private static final String LEDGER = ".cache.lock";
    private static final long WAIT_FOR_ROOM_NANOS = TimeUnit.SECONDS.toNanos(60);
    /** A wait longer than this is said on stderr (NOTE [Download locks]); shorter ones are the usual sharing. */
    private static final long SAY_AFTER_NANOS = TimeUnit.SECONDS.toNanos(2);
    /** How long a lock held in a dead process's name is looked at again before it is called stale (NOTE [Download locks]). */
    private static final long STALE_LOOK_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

    private final Path dir;
    private final long maxBytes;
    private final ExecutorService downloads;
    /** This cache's pins per shard key. */
    private final Map<String, Integer> pins = new HashMap<>();
    private final Map<String, CompletableFuture<Path>> inFlight = new HashMap<>();
    /** Per shard key, its positions in the planned order, ascending; {@code now} is the position reached. */
    private final Map<String, int[]> uses = new HashMap<>();
    private int now;

    // stats
    private long hits;
    private long misses;
    private long bytesDownloaded;
    private long evictions;
    private long waitNanos;
    private long used;

    /**
     * What the cache did; {@code usedBytes} is what the directory held (shards and reservations,
     * every process's) when this cache last changed it.
     */
    public record Stats(long hits, long misses, long bytesDownloaded, long evictions, long waitNanos, long usedBytes) {
    }

    public ShardCache(Path dir, long maxBytes, int parallelDownloads) throws IOException {
        if (maxBytes < 1 || parallelDownloads < 1) {
            throw new IllegalArgumentException("maxBytes and parallelDownloads must be >= 1");
        }
        this.dir = UserCache.ownFolder(dir); // NOTE [Folders of one's own]: a copy found here is trusted
        this.maxBytes = maxBytes;
        this.downloads = Executors.newFixedThreadPool(parallelDownloads, r -> {
            Thread t = new Thread(r, "stoker-download");
            t.setDaemon(true);
            return t;
        });
        this.used = ledger(() -> scan(null).used);
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
    private synchronized int nextUse(String k) {
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
        if (!Files.exists(dir.resolve(k))) {
            downloadOf(location, k);
        }
    }

    /** The download of shard {@code k}, started if none is running; it leaves the table when done (caller holds this). */
    private CompletableFuture<Path> downloadOf(String location, String k) {
        CompletableFuture<Path> f = inFlight.get(k);
        if (f == null) {
            CompletableFuture<Path> started = CompletableFuture.supplyAsync(() -> download(location, k), downloads);
            inFlight.put(k, started);
            started.whenComplete((p, e) -> {
                synchronized (this) {
                    inFlight.remove(k, started);
                }
            });
            f = started;
        }
        return f;
    }

    /**
     * The local copy of a shard, pinned until {@link #release}. A copy is of one version of the
     * object (NOTE [One version]): the first time this process acquires a location, a copy of
     * another version than the server's now is evicted and fetched again.
     */
    public Path acquire(String location) throws IOException {
        String k = key(location);
        Path target = dir.resolve(k);
        long t0 = System.nanoTime();
        boolean counted = false;
        while (true) {
            CompletableFuture<Path> f;
            boolean pinned;
            synchronized (this) {
                pinned = pinHere(k);
            }
            // the version check asks the server: outside the monitor, which downloads take under the ledger's lock
            if (pinned) {
                if (current(location, k)) {
                    synchronized (this) {
                        if (!counted) {
                            hits++;
                        }
                    }
                    touch(target);
                    return target;
                }
                release(location);
                evict(location); // another version than the server's: fetched again below
                if (Files.exists(target)) {
                    throw new IOException(location + ": the cached copy in " + dir + " is of another version than the "
                            + "server's, and another reader has it open: not used (" + Storage.version(location) + " now)");
                }
                continue;
            }
            synchronized (this) {
                if (!counted) {
                    misses++;
                    counted = true;
                }
                f = downloadOf(location, k);
            }
            try {
                f.join();
            } catch (java.util.concurrent.CompletionException e) {
                Throwable c = e.getCause();
                throw c instanceof IOException io ? io : c instanceof java.io.UncheckedIOException u ? u.getCause()
                        : new IOException(location + ": " + c, c);
            }
            synchronized (this) {
                waitNanos += System.nanoTime() - t0;
                if (pinHere(k)) {
                    touch(target);
                    return target;
                }
            }
            if (System.nanoTime() - t0 > WAIT_FOR_ROOM_NANOS) {
                throw new IOException(location + ": downloaded, then evicted before use, again and again (the cache of "
                        + maxBytes + " bytes is too small for what its processes read at once)");
            }
            // another process evicted it between the download and the pin: fetch it again
        }
    }

    /** A format's check of a local copy of {@code location}: throws, naming the location, when the bytes are not a shard it can read. */
    @FunctionalInterface
    public interface Check {
        void check(Path local, String location) throws IOException;
    }

    /**
     * {@link #acquire}, then {@code check} of the copy by its format's reader. A copy that fails
     * it (an error page that a store sent with a success status and the size it announced, a copy
     * damaged on disk) is evicted and fetched again, once; failing again, it is evicted too and
     * the error, naming the location, is the caller's. A server's status and sizes cannot tell a
     * shard from an error page; only its format can.
     */
    public Path acquire(String location, Check check) throws IOException {
        for (int attempt = 1; ; attempt++) {
            Path local = acquire(location);
            try {
                check.check(local, location);
                return local;
            } catch (IOException | RuntimeException e) {
                release(location);
                evict(location);
                if (attempt == 2) {
                    String why = e.getMessage() != null ? e.getMessage() : e.toString();
                    throw new IOException((why.startsWith(location) ? why : location + ": " + why)
                            + " (fetched twice, and neither copy was readable: not kept)", e);
                }
            }
        }
    }

    /** Locations whose copy this process has checked against the server's version. */
    private final java.util.Set<String> checked = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /**
     * Whether the pinned copy {@code k} of {@code location} is of the version the server has (asked
     * once per process and location). A server that cannot be asked leaves the copy in use: nothing
     * newer can be read from it either.
     */
    private boolean current(String location, String k) throws IOException {
        if (checked.contains(location)) {
            return true;
        }
        String now;
        try {
            now = Storage.version(location);
        } catch (IOException e) {
            return true; // asked again at the next acquire
        }
        boolean same;
        try {
            same = now == null || now.equals(Files.readString(dir.resolve(k + ".version"), StandardCharsets.UTF_8));
        } catch (IOException e) {
            same = false; // a copy of no known version
        }
        if (same) {
            checked.add(location);
        }
        return same;
    }

    /** Removes a shard's copy unless some process has it pinned; it is fetched again when next acquired. */
    public void evict(String location) throws IOException {
        String k = key(location);
        ledger(() -> {
            if (ShardPins.evict(dir.resolve(k + ".pin"), dir.resolve(k))) {
                synchronized (this) {
                    evictions++;
                }
            }
            return scan(null);
        });
    }

    public synchronized void release(String location) {
        String k = key(location);
        Integer n = pins.get(k);
        if (n != null) {
            if (n == 1) {
                pins.remove(k);
            } else {
                pins.put(k, n - 1);
            }
            ShardPins.unpin(dir.resolve(k + ".pin"));
        }
    }

    public synchronized Stats stats() {
        return new Stats(hits, misses, bytesDownloaded, evictions, waitNanos, used);
    }

    /** Pins shard {@code k} if it is present; false if it is not (caller holds this). */
    private boolean pinHere(String k) throws IOException {
        if (!ShardPins.pin(dir.resolve(k + ".pin"), dir.resolve(k))) {
            return false;
        }
        pins.merge(k, 1, Integer::sum);
        return true;
    }

    /** Marks a shard as just used, for the least-recently-used order every process sees. */
    private static void touch(Path shard) {
        try {
            Files.setLastModifiedTime(shard, java.nio.file.attribute.FileTime.from(java.time.Instant.now()));
        } catch (IOException e) {
            // only the tie-break order suffers
        }
    }

    private Path download(String location, String k) {
        Path lockPath = dir.resolve(k + ".lock");
        ReentrantLock local = Locks.of(lockPath);
        local.lock();
        FileChannel lockFile = null;
        try {
            lockFile = lockForDownload(lockPath, location);
            Path target = dir.resolve(k);
            if (Files.exists(target)) {
                return target; // another process downloaded it while we waited for the lock
            }
            removePartials(k); // left by a process that died: we hold the shard's lock
            Path reserve = dir.resolve(k + ".reserve");
            Temporaries.track(reserve); // given back if the process is stopped mid-download
            long[] reserved = {-1};
            PendingFile copied = null; // abandoned unless committed
            try {
                Storage.Copy copy = Storage.copy(location, target, n -> { }, announced -> {
                    if (announced >= 0 && reserved[0] != announced) {
                        reserve(k, announced, reserve);
                        reserved[0] = announced;
                    }
                });
                copied = copy.file();
                long size = copy.bytes();
                if (reserved[0] != size) {
                    reserve(k, size, reserve); // the source announced no size: reserved once it is known
                }
                String version = Storage.version(location); // the one the download was pinned to
                ledger(() -> {
                    Path versionFile = dir.resolve(k + ".version");
                    if (version != null) { // beside the copy before it is in place: whoever sees the copy sees its version
                        PendingFile.write(versionFile, out -> out.write(version.getBytes(StandardCharsets.UTF_8)));
                    } else {
                        Files.deleteIfExists(versionFile);
                    }
                    copy.file().commit();
                    Files.deleteIfExists(reserve);
                    return null;
                });
                checked.add(location);
                synchronized (this) {
                    bytesDownloaded += size;
                }
                return target;
            } finally {
                if (copied != null) {
                    copied.abandon();
                }
                if (Files.deleteIfExists(reserve)) {
                    ledger(() -> scan(null)); // refresh the stats after giving the reservation back
                }
                Temporaries.done(reserve);
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } finally {
            try {
                if (lockFile != null) {
                    lockFile.close(); // releases the lock
                }
            } catch (IOException e) {
                // the lock goes with the descriptor
            }
            local.unlock();
        }
    }

    /**
     * NOTE [Download locks]: the lock file {@code KEY.lock} of a download, locked (caller holds
     * the process-wide lock for it), with this process's pid and host written in it. Another
     * process's download of the same shard is waited for, saying on stderr, once it has waited
     * two seconds, whom it waits for and what that process downloads. A lock the system says is
     * held although the process it names, on this host, is gone (a network file system that kept
     * a dead client's lock) is stale once a second look, 200 ms later, finds it still held in that
     * name (a process that has just taken it writes its own at once): said so, and taken over (a
     * new lock file in its place). A process that locked a file which was then taken over as
     * stale sees that the path is no longer its file, and locks again. A lock left by a process that died on a local file system is no longer held and is
     * simply taken, as its reservation and partial file are swept ({@link #scan}).
     */
    private FileChannel lockForDownload(Path lockPath, String location) throws IOException {
        while (true) {
            FileChannel ch = FileChannel.open(lockPath, StandardOpenOption.CREATE, StandardOpenOption.READ,
                    StandardOpenOption.WRITE);
            try {
                Object opened = fileKey(lockPath); // the file this channel is, while nobody replaced it
                FileLock got = ch.tryLock();
                if (got == null) {
                    String holder = holder(ch);
                    String[] f = holder.split(" ");
                    long pid = f.length == 2 && f[0].matches("[0-9]{1,18}") ? Long.parseLong(f[0]) : -1;
                    if (pid > 0 && f[1].equals(HOST) && !ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
                        // a second look: a process that has just taken the lock writes its pid over the dead one's at once
                        got = tryLock(ch, STALE_LOOK_NANOS);
                        if (got == null && holder(ch).equals(holder)) {
                            notice(lockPath + ": stale lock of process " + pid + ", which is gone: taken over");
                            Files.deleteIfExists(lockPath);
                            ch.close();
                            continue;
                        }
                    }
                    if (got == null && tryLock(ch, SAY_AFTER_NANOS) == null) {
                        notice("waiting for " + (pid > 0 ? "process " + pid + (f[1].equals(HOST) ? "" : " on " + f[1])
                                : "another process") + ", which is downloading " + Locations.redact(location) + " into " + dir
                                + " (its lock " + lockPath + ")");
                        ch.lock();
                    }
                }
                if (opened == null || !opened.equals(fileKey(lockPath))) {
                    ch.close(); // its file was taken over as stale (and replaced) while this process waited: not the lock
                    continue;
                }
                ch.truncate(0);
                ch.write(java.nio.ByteBuffer.wrap((PID + " " + HOST).getBytes(StandardCharsets.UTF_8)), 0);
                return ch;
            } catch (IOException | RuntimeException e) {
                ch.close();
                throw e;
            }
        }
    }

    /** The lock of {@code ch}, tried until {@code nanos} have passed; null if it is still held then. */
    private static FileLock tryLock(FileChannel ch, long nanos) throws IOException {
        long end = System.nanoTime() + nanos;
        for (FileLock l; ; LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20))) {
            if ((l = ch.tryLock()) != null || System.nanoTime() > end) {
                return l;
            }
        }
    }

    private static final long PID = ProcessHandle.current().pid();
    /** This machine's name, as a lock records it: a pid names a process on its own host only. */
    static final String HOST = hostName();

    private static String hostName() {
        try {
            return Files.readString(Path.of("/proc/sys/kernel/hostname")).strip().replace(' ', '_');
        } catch (IOException | RuntimeException e) {
            String h = System.getenv("HOSTNAME");
            return h != null && !h.isBlank() ? h.strip().replace(' ', '_') : "localhost";
        }
    }

    /** What a lock file says of its holder: "PID HOST", or "" when it says nothing yet. */
    /** The identity of the file at {@code p} (device and inode), read without opening it; null if none is there. */
    private static Object fileKey(Path p) {
        try {
            return Files.readAttributes(p, java.nio.file.attribute.BasicFileAttributes.class, java.nio.file.LinkOption.NOFOLLOW_LINKS)
                    .fileKey();
        } catch (IOException e) {
            return null;
        }
    }

    private static String holder(FileChannel ch) throws IOException {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(256);
        ch.read(b, 0);
        return new String(b.array(), 0, b.position(), StandardCharsets.UTF_8).strip();
    }

    /** Says what the cache is waiting for, on stderr: a wait is never silent. */
    private static void notice(String message) {
        System.err.println("stoker: " + message);
        System.err.flush();
    }

    /**
     * Makes room for {@code size} bytes of shard {@code k} and records the reservation, under the
     * ledger lock; waits for other processes' pins to go when every shard is in use.
     */
    private void reserve(String k, long size, Path reserve) throws IOException {
        if (size > maxBytes) {
            throw new IOException("a shard of " + size + " bytes does not fit a cache of " + maxBytes + " bytes");
        }
        long deadline = System.nanoTime() + WAIT_FOR_ROOM_NANOS;
        boolean waiting = false;
        while (true) {
            boolean done = ledger(() -> {
                Scan sc = scan(k);
                long inUse = sc.used;
                List<Scan.Shard> order = new ArrayList<>(sc.shards);
                // furthest next use first (never again: first of all), then least recently used
                order.sort(java.util.Comparator.comparingInt((Scan.Shard x) -> nextUse(x.key)).reversed()
                        .thenComparingLong(x -> x.modified));
                for (int i = 0; inUse + size > maxBytes && i < order.size(); i++) {
                    Scan.Shard victim = order.get(i);
                    if (!victim.key.equals(k) && ShardPins.evict(dir.resolve(victim.key + ".pin"), dir.resolve(victim.key))) {
                        inUse -= victim.size;
                        synchronized (this) {
                            evictions++;
                        }
                    }
                }
                if (inUse + size > maxBytes) {
                    return false;
                }
                PendingFile.write(reserve, out -> out.write(Long.toString(size).getBytes(StandardCharsets.US_ASCII)));
                synchronized (this) {
                    used = inUse + size;
                }
                return true;
            });
            if (done) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new IOException("the cache of " + maxBytes + " bytes in " + dir + " is full of shards in use; a shard of "
                        + size + " bytes does not fit");
            }
            if (!waiting && System.nanoTime() > deadline - WAIT_FOR_ROOM_NANOS + SAY_AFTER_NANOS) {
                waiting = true;
                notice("waiting up to " + TimeUnit.NANOSECONDS.toSeconds(WAIT_FOR_ROOM_NANOS) + " s for room for " + size
                        + " bytes: the cache of " + maxBytes + " bytes in " + dir + " is full of shards and downloads in use");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
        }
    }

    /** What the directory holds: complete shards, and the bytes of live reservations. */
    private record Scan(List<Shard> shards, long used) {
        record Shard(String key, long size, long modified) {
        }
    }

    /**
     * Reads the ledger (caller holds the ledger lock): shards and live reservations other than
     * {@code except}'s; reservations and partial files of dead downloads are removed.
     */
    private Scan scan(String except) throws IOException {
        List<Scan.Shard> shards = new ArrayList<>();
        long used = 0;
        List<Path> files;
        try (var list = Files.list(dir)) {
            files = list.toList();
        }
        for (Path p : files) {
            String name = p.getFileName().toString();
            try {
                if (name.endsWith(".shard") && !name.startsWith(".")) {
                    var attrs = Files.readAttributes(p, java.nio.file.attribute.BasicFileAttributes.class);
                    shards.add(new Scan.Shard(name, attrs.size(), attrs.lastModifiedTime().to(TimeUnit.MICROSECONDS)));
                    used += attrs.size();
                } else if (name.endsWith(".reserve")) {
                    String k = name.substring(0, name.length() - ".reserve".length());
                    if (k.equals(except)) {
                        continue;
                    }
                    if (downloading(k)) {
                        used += Long.parseLong(Files.readString(p, StandardCharsets.US_ASCII).trim());
                    } else if (Files.deleteIfExists(p)) {
                        removePartials(k);
                        String holder = lastHolder(k);
                        notice(p + ": the download of " + (holder.isEmpty() ? "a process" : "process " + holder.split(" ")[0])
                                + ", which is gone, left this reservation: taken back, with its partial file");
                    }
                }
            } catch (java.nio.file.NoSuchFileException | NumberFormatException e) {
                // gone meanwhile, or a reservation being written: its writer holds the ledger, so not this one
            }
        }
        synchronized (this) {
            this.used = used;
        }
        return new Scan(shards, used);
    }

    /** What the lock file of shard {@code k} says of its last holder ("PID HOST"), or "". */
    private String lastHolder(String k) {
        Path lockPath = dir.resolve(k + ".lock");
        ReentrantLock local = Locks.of(lockPath);
        if (!local.tryLock()) { // a thread of this process holds it: opening and closing the file would drop its lock
            return "";
        }
        try (FileChannel ch = FileChannel.open(lockPath, StandardOpenOption.READ)) {
            return holder(ch);
        } catch (IOException e) {
            return "";
        } finally {
            local.unlock();
        }
    }

    /** Whether some thread or process is downloading shard {@code k} now (holds its lock). */
    private boolean downloading(String k) throws IOException {
        Path lockPath = dir.resolve(k + ".lock");
        ReentrantLock local = Locks.of(lockPath);
        if (!local.tryLock()) {
            return true; // a thread of this process
        }
        try (FileChannel ch = FileChannel.open(lockPath, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            FileLock l = ch.tryLock();
            if (l == null) {
                return true; // another process
            }
            l.release();
            return false;
        } finally {
            local.unlock();
        }
    }

    private void removePartials(String k) throws IOException {
        try (var list = Files.list(dir)) {
            for (Path p : list.filter(p -> {
                String n = p.getFileName().toString();
                return n.startsWith("." + k + ".") && n.endsWith(".partial");
            }).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    private interface LedgerWork<T> {
        T run() throws IOException;
    }

    /**
     * Runs {@code work} holding the ledger lock: this process's threads, then other processes.
     * Never nested: a second channel on the file would drop the lock when closed.
     */
    private <T> T ledger(LedgerWork<T> work) throws IOException {
        Path lockPath = dir.resolve(LEDGER);
        ReentrantLock local = Locks.of(lockPath);
        local.lock();
        try (FileChannel ch = FileChannel.open(lockPath, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
             FileLock lock = ch.lock()) {
            return work.run();
        } finally {
            local.unlock();
        }
    }

    /** One lock per lock file in this process: file locks are per process, so threads meet here first. */
    private static final class Locks {
        private static final ConcurrentHashMap<Path, ReentrantLock> LOCKS = new ConcurrentHashMap<>();

        static ReentrantLock of(Path p) {
            return LOCKS.computeIfAbsent(p, x -> new ReentrantLock());
        }
    }

    /** The cache's file name for a location: a hash, then the original name. */
    static String key(String location) {
        try {
            byte[] h = MessageDigest.getInstance("SHA-256").digest(location.getBytes(StandardCharsets.UTF_8));
            String name = Locations.baseName(location).replaceAll("[^A-Za-z0-9._-]", "_");
            return HexFormat.of().formatHex(h, 0, 8) + "-" + name + ".shard";
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Shards cached now (for tests and stats). */
    synchronized List<String> cached() throws IOException {
        try (var list = Files.list(dir)) {
            return list.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".shard") && !n.startsWith("."))
                    .sorted().toList();
        }
    }

    /** Stops the downloads and gives back the pins this cache still holds. Idempotent. */
    @Override
    public synchronized void close() {
        downloads.shutdownNow();
        pins.forEach((k, n) -> {
            for (int i = 0; i < n; i++) {
                ShardPins.unpin(dir.resolve(k + ".pin"));
            }
        });
        pins.clear();
    }
}
