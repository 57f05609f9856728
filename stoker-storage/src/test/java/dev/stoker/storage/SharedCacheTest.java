package dev.stoker.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.storage.testing.TestServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Several processes (real JVMs) on one cache directory keep one byte budget (NOTE [Shared budget]). */
@Timeout(180)
class SharedCacheTest {
    @TempDir
    Path tmp;

    /**
     * A cache client in its own process. Arguments: cache directory, byte limit, hold milliseconds,
     * then URLs. Each URL is acquired, held, hashed at the end of the hold (so that a file deleted
     * under it would show), and released; prints {@code pinned URL} when the first is pinned and
     * {@code URL SHA256} per URL.
     */
    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        long limit = Long.parseLong(args[1]);
        long hold = Long.parseLong(args[2]);
        try (ShardCache cache = new ShardCache(dir, limit, 2)) {
            for (int i = 3; i < args.length; i++) {
                Path p = cache.acquire(args[i]);
                System.out.println("pinned " + args[i]);
                System.out.flush();
                Thread.sleep(hold);
                System.out.println(args[i] + " " + sha256(p));
                System.out.flush();
                cache.release(args[i]);
            }
        }
    }

    static String sha256(Path p) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(p)));
    }

    private static Process client(Path cache, long limit, long holdMillis, List<String> urls) throws IOException {
        return client(cache, limit, holdMillis, urls, ProcessBuilder.Redirect.INHERIT);
    }

    private static Process client(Path cache, long limit, long holdMillis, List<String> urls, ProcessBuilder.Redirect err)
            throws IOException {
        List<String> cmd = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"), "-cp",
                System.getProperty("java.class.path"), SharedCacheTest.class.getName(), cache.toString(),
                Long.toString(limit), Long.toString(holdMillis)));
        cmd.addAll(urls);
        return new ProcessBuilder(cmd).redirectError(err).start();
    }

    /**
     * {@link #onDisk}, holding the cache's ledger lock (as the clients' reservations, evictions
     * and commits do), so the listing is one state of the ledger: without it, a shard listed just
     * before its eviction and the partial download that replaced it, read a moment later, would
     * both be counted though they were never on disk together. Partial files still grow meanwhile,
     * within their reservations.
     */
    private static long onDiskUnderLedger(Path dir) {
        if (!Files.isDirectory(dir)) {
            return 0;
        }
        try (var ch = java.nio.channels.FileChannel.open(dir.resolve(".cache.lock"), java.nio.file.StandardOpenOption.CREATE,
                java.nio.file.StandardOpenOption.WRITE); var lock = ch.lock()) {
            return onDisk(dir);
        } catch (IOException e) {
            return 0; // the directory is being created
        }
    }

    /** Bytes of shards and partial downloads in the directory now. */
    private static long onDisk(Path dir) {
        long n = 0;
        try (var list = Files.list(dir)) {
            for (Path p : list.toList()) {
                String name = p.getFileName().toString();
                if (name.endsWith(".shard") || name.endsWith(".partial")) {
                    try {
                        n += Files.size(p);
                    } catch (IOException gone) {
                        // deleted or renamed meanwhile
                    }
                }
            }
        } catch (IOException e) {
            // the directory is being created
        }
        return n;
    }

    @Test
    void processesSharingACacheStayWithinOneBudgetAndReadWholeShards() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("served"));
        StorageTest.shards(root, 8, 60); // about 130 KB each
        long shardSize = Files.size(root.resolve("s0.tar"));
        long limit = 3 * shardSize + shardSize / 2;
        Path cache = tmp.resolve("cache");
        Map<String, String> expected = new ConcurrentHashMap<>();
        try (TestServer s = new TestServer(root)) {
            List<String> a = new ArrayList<>();
            List<String> b = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                a.add(s.url("s" + i + ".tar"));
                b.add(s.url("s" + (7 - i) + ".tar"));
                expected.put(s.url("s" + i + ".tar"), sha256(root.resolve("s" + i + ".tar")));
            }
            AtomicLong most = new AtomicLong();
            AtomicBoolean sampling = new AtomicBoolean(true);
            Thread sampler = Thread.ofPlatform().start(() -> {
                while (sampling.get()) {
                    most.accumulateAndGet(onDiskUnderLedger(cache), Math::max);
                    java.util.concurrent.locks.LockSupport.parkNanos(200_000);
                }
            });
            Process pa = client(cache, limit, 20, a);
            Process pb = client(cache, limit, 20, b);
            List<String> outA = lines(pa);
            List<String> outB = lines(pb);
            sampling.set(false);
            sampler.join();
            assertEquals(0, pa.waitFor(), String.join("\n", outA));
            assertEquals(0, pb.waitFor(), String.join("\n", outB));
            for (List<String> out : List.of(outA, outB)) {
                List<String> digests = out.stream().filter(l -> !l.startsWith("pinned ")).toList();
                assertEquals(8, digests.size(), String.join("\n", out));
                for (String l : digests) {
                    String[] f = l.split(" ");
                    assertEquals(expected.get(f[0]), f[1], "whole, unchanged bytes of " + f[0]);
                }
            }
            assertTrue(most.get() > 0, "the sampler saw the cache fill");
            assertTrue(most.get() <= limit, "at most " + limit + " bytes on disk at any time, saw " + most.get());
        }
        try (var list = Files.list(cache)) {
            assertFalse(list.anyMatch(p -> p.toString().endsWith(".reserve") || p.toString().endsWith(".partial")),
                    "no reservation or partial file is left behind");
        }
    }

    @Test
    void aShardPinnedByAnotherProcessIsNotEvictedUnderIt() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("served"));
        StorageTest.shards(root, 2, 60);
        long shardSize = Files.size(root.resolve("s0.tar"));
        Path dir = tmp.resolve("cache");
        try (TestServer s = new TestServer(root)) {
            String held = s.url("s0.tar");
            Process p = client(dir, shardSize + shardSize / 2, 1500, List.of(held));
            BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            assertEquals("pinned " + held, r.readLine());
            long t0 = System.nanoTime();
            try (ShardCache cache = new ShardCache(dir, shardSize + shardSize / 2, 1)) {
                Path got = cache.acquire(s.url("s1.tar")); // room only once the other process lets s0 go
                long waited = (System.nanoTime() - t0) / 1_000_000;
                assertEquals(sha256(root.resolve("s1.tar")), sha256(got));
                assertTrue(waited >= 800, "waited " + waited + " ms for the pin to go");
                cache.release(s.url("s1.tar"));
                assertEquals(1, cache.stats().evictions());
            }
            String line = r.readLine();
            assertEquals(held + " " + sha256(root.resolve("s0.tar")), line, "the holder read its whole shard");
            assertEquals(0, p.waitFor());
        }
    }

    @Test
    void aReservationLeftByADeadProcessIsReclaimed() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("served"));
        StorageTest.shards(root, 1, 60);
        long shardSize = Files.size(root.resolve("s0.tar"));
        Path dir = Files.createDirectories(tmp.resolve("cache"));
        try (TestServer s = new TestServer(root)) {
            String k = ShardCache.key(s.url("s9.tar"));
            Files.writeString(dir.resolve(k + ".reserve"), Long.toString(10 * shardSize));
            Files.write(dir.resolve("." + k + ".123.partial"), new byte[1000]);
            try (ShardCache cache = new ShardCache(dir, 2 * shardSize, 1)) {
                Path got = cache.acquire(s.url("s0.tar"));
                assertEquals(shardSize, Files.size(got));
                assertTrue(cache.stats().usedBytes() <= 2 * shardSize);
                cache.release(s.url("s0.tar"));
            }
            assertFalse(Files.exists(dir.resolve(k + ".reserve")));
            assertFalse(Files.exists(dir.resolve("." + k + ".123.partial")));
        }
    }

    @Test
    void aDownloadWaitedForSaysWhichProcessItWaitsFor() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("served"));
        StorageTest.shards(root, 1, 60);
        Path dir = tmp.resolve("cache");
        try (TestServer s = new TestServer(root)) {
            String url = s.url("s0.tar");
            s.trickle.put("s0.tar", new TestServer.Trickle(4 * 1024, 200)); // about 6 s
            Process first = client(dir, 1 << 24, 0, List.of(url));
            Path lock = dir.resolve(ShardCache.key(url) + ".lock");
            for (long end = System.nanoTime() + 20_000_000_000L; !(Files.exists(lock) && Files.size(lock) > 0); ) {
                assertTrue(System.nanoTime() < end, "the first process took the download's lock");
                Thread.sleep(20);
            }
            Process second = client(dir, 1 << 24, 0, List.of(url), ProcessBuilder.Redirect.PIPE);
            List<String> out = lines(second);
            String err = new String(second.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(0, second.waitFor(), err);
            assertEquals(0, first.waitFor());
            assertTrue(err.startsWith("stoker: waiting for process " + first.pid() + ", which is downloading " + url + " into "),
                    err);
            assertTrue(out.contains(url + " " + sha256(root.resolve("s0.tar"))), String.join("\n", out));
            assertEquals(Files.size(root.resolve("s0.tar")), s.bytesSent.get(), "downloaded once, by the first");
        }
    }

    /** The pid of a process that has ended. */
    private static long goneProcess() throws Exception {
        Process p = new ProcessBuilder("true").start();
        p.waitFor();
        return p.pid();
    }

    @Test
    void aLockHeldInTheNameOfAProcessThatIsGoneIsSaidStaleAndTakenOverAtOnce() throws Exception {
        Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/python3")), "python3 holds a POSIX lock for the test");
        Path root = Files.createDirectories(tmp.resolve("served"));
        StorageTest.shards(root, 1, 60);
        Path dir = Files.createDirectories(tmp.resolve("cache"));
        long gone = goneProcess();
        try (TestServer s = new TestServer(root)) {
            String url = s.url("s0.tar");
            Path lock = Files.writeString(dir.resolve(ShardCache.key(url) + ".lock"), gone + " " + ShardCache.HOST);
            // a lock the system still holds for a process that is gone, as a network file system can keep one
            Process ghost = new ProcessBuilder("/usr/bin/python3", "-c", "import fcntl, sys, time\n"
                    + "f = open(sys.argv[1], 'r+'); fcntl.lockf(f, fcntl.LOCK_EX); print('locked', flush=True); time.sleep(60)",
                    lock.toString()).start();
            try {
                assertEquals("locked", new BufferedReader(new InputStreamReader(ghost.getInputStream(), StandardCharsets.UTF_8))
                        .readLine());
                java.io.ByteArrayOutputStream said = new java.io.ByteArrayOutputStream();
                java.io.PrintStream err = System.err;
                long t0 = System.nanoTime();
                System.setErr(new java.io.PrintStream(said, true, StandardCharsets.UTF_8));
                try (ShardCache cache = new ShardCache(dir, 1 << 24, 1)) {
                    Path got = cache.acquire(url);
                    assertEquals(sha256(root.resolve("s0.tar")), sha256(got));
                    cache.release(url);
                } finally {
                    System.setErr(err);
                }
                assertTrue((System.nanoTime() - t0) / 1_000_000 < 10_000, "taken over at once");
                assertEquals("stoker: " + lock + ": stale lock of process " + gone + ", which is gone: taken over",
                        said.toString(StandardCharsets.UTF_8).strip());
            } finally {
                ghost.destroyForcibly();
            }
        }
    }

    @Test
    void aReservationOfAKilledDownloadIsSaidAndTakenBackAtOnce() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("served"));
        StorageTest.shards(root, 1, 60);
        Path dir = Files.createDirectories(tmp.resolve("cache"));
        long gone = goneProcess();
        try (TestServer s = new TestServer(root)) {
            String url = s.url("s0.tar");
            String k = ShardCache.key(url);
            // what a download killed by SIGKILL leaves: its lock (free now), its reservation, its partial file
            Files.writeString(dir.resolve(k + ".lock"), gone + " " + ShardCache.HOST);
            Path reserve = Files.writeString(dir.resolve(k + ".reserve"), "1000000");
            Files.write(dir.resolve("." + k + ".123.partial"), new byte[1000]);
            java.io.ByteArrayOutputStream said = new java.io.ByteArrayOutputStream();
            java.io.PrintStream err = System.err;
            long t0 = System.nanoTime();
            System.setErr(new java.io.PrintStream(said, true, StandardCharsets.UTF_8));
            try (ShardCache cache = new ShardCache(dir, 1 << 24, 1)) {
                assertEquals(sha256(root.resolve("s0.tar")), sha256(cache.acquire(url)));
                cache.release(url);
            } finally {
                System.setErr(err);
            }
            assertTrue((System.nanoTime() - t0) / 1_000_000 < 10_000, "at once");
            assertEquals("stoker: " + reserve + ": the download of process " + gone + ", which is gone, left this "
                    + "reservation: taken back, with its partial file", said.toString(StandardCharsets.UTF_8).strip());
            assertFalse(Files.exists(dir.resolve("." + k + ".123.partial")));
        }
    }

    private static List<String> lines(Process p) throws IOException {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            return r.lines().toList();
        }
    }
}
