package dev.stoker.storage;

import dev.stoker.storage.io.PendingFileTest;
import dev.stoker.storage.testing.CacheReplay;
import dev.stoker.storage.testing.MemoryStore;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.storage.testing.TestServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(120)
class StorageTest {
    @TempDir
    Path tmp;

    static final RetryingSource.Retry FAST = new RetryingSource.Retry(6, Duration.ofMillis(5), Duration.ofMillis(50));

    Path served() throws IOException {
        return Files.createDirectories(tmp.resolve("served"));
    }

    @Test
    void aCopyOntoAFifoIsRefusedNamingItAndLeavesItAFifo() throws Exception {
        Path pipe = PendingFileTest.fifo(tmp.resolve("pipe")); // as a device such as /dev/full would be
        Path src = tmp.resolve("src.bin");
        Files.write(src, new byte[100_000]);
        IOException e = assertThrows(IOException.class, () -> Storage.copy(src.toString(), pipe, n -> { }));
        assertEquals(pipe + ": not a regular file; refusing to replace it", e.getMessage());
        assertTrue(PendingFileTest.isFifo(pipe));
    }

    @Test
    void aDroppedConnectionAndBurstsOf503ResumeWithoutLosingOrRepeatingAByte() throws IOException {
        Path root = served();
        byte[] data = new byte[1_000_003];
        new java.util.Random(1).nextBytes(data);
        Files.write(root.resolve("blob"), data);
        try (TestServer s = new TestServer(root)) {
            s.failNext.put("blob", new AtomicInteger(2));
            s.dropNext.put("blob", new AtomicInteger(1));
            try (InputStream in = new HttpSource(URI.create(s.url("blob")), FAST, Duration.ofSeconds(10))) {
                assertArrayEquals(data, in.readAllBytes());
            }
            assertTrue(s.rangeRequests.getOrDefault("blob", new AtomicInteger()).get() >= 1, "resumed with a ranged GET");
        }
    }

    @Test
    void aPasswordInAUrlIsSentAsBasicAuthenticationAndNeverPrinted() throws IOException {
        Path root = served();
        byte[] data = "the protected bytes".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        Files.write(root.resolve("secret"), data);
        try (TestServer s = new TestServer(root)) {
            s.requireAuthorization = "Basic " + java.util.Base64.getEncoder().encodeToString(
                    "alice:s3cr3t".getBytes(java.nio.charset.StandardCharsets.UTF_8));
            String url = s.url("secret").replace("http://", "http://alice:s3cr3t@");
            try (InputStream in = Storage.open(url)) {
                assertArrayEquals(data, in.readAllBytes(), "the credentials were sent");
            }
            assertEquals(data.length, Storage.size(url));
            String wrong = s.url("secret").replace("http://", "http://alice:wrong-pw@");
            IOException e = assertThrows(IOException.class, () -> {
                try (InputStream in = Storage.open(wrong)) {
                    in.readAllBytes();
                }
            });
            String all = e.getMessage() + (e.getCause() == null ? "" : e.getCause().getMessage());
            assertTrue(all.contains("401") && all.contains("alice:***@"), all);
            assertTrue(!all.contains("wrong-pw"), "the password is never printed: " + all);
        }
        assertEquals("s3://b/k and https://bob:***@host:8443/x?y=1", Locations.redact("s3://b/k and https://bob:pw@host:8443/x?y=1"));
        assertEquals("http://host:8080/a@b", Locations.redact("http://host:8080/a@b"));
    }

    @Test
    void afterTheLastRetryTheErrorNamesUrlOffsetAndCause() throws IOException {
        Path root = served();
        Files.write(root.resolve("x"), new byte[10]);
        try (TestServer s = new TestServer(root)) {
            s.failNext.put("x", new AtomicInteger(100));
            IOException e = assertThrows(IOException.class,
                    () -> new HttpSource(URI.create(s.url("x")), FAST, Duration.ofSeconds(5)).readAllBytes());
            assertTrue(e.getMessage().startsWith(s.url("x") + ": failed at byte 0 after 6 attempts: HTTP 503"), e.getMessage());
            IOException missing = assertThrows(IOException.class,
                    () -> new HttpSource(URI.create(s.url("nope")), FAST, Duration.ofSeconds(5)).readAllBytes());
            assertTrue(missing.getMessage().contains("HTTP 404"), missing.getMessage());
            assertEquals(1, s.requests.get("nope").get(), "a 404 is not retried");
        }
    }

    static byte[] random(int size, long seed) {
        byte[] data = new byte[size];
        new java.util.Random(seed).nextBytes(data);
        return data;
    }

    static String sha256(byte[] data) {
        try {
            return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256").digest(data));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void aBodyThatTricklesWithinTheReadTimeoutArrivesWholeWithoutARetry() throws IOException {
        Path root = served();
        byte[] data = random(160_000, 4);
        Files.write(root.resolve("slow"), data);
        Duration timeout = Duration.ofMillis(300);
        try (TestServer s = new TestServer(root)) {
            s.trickle.put("slow", new TestServer.Trickle(4_000, 25)); // 40 pieces, 25 ms apart: a second in all
            long t0 = System.nanoTime();
            byte[] got;
            try (InputStream in = new HttpSource(URI.create(s.url("slow")), FAST, timeout)) {
                got = in.readAllBytes();
            }
            long millis = (System.nanoTime() - t0) / 1_000_000;
            assertEquals(sha256(data), sha256(got));
            assertTrue(millis > 3 * timeout.toMillis(), "the body took longer than the timeout in all: " + millis + " ms");
            assertEquals(1, s.requests.get("slow").get(), "no read waited past the timeout, so nothing was retried");
        }
    }

    @Test
    void aBodyThatStallsPastTheReadTimeoutIsResumedFromTheLastByteReceived() throws IOException {
        Path root = served();
        byte[] data = random(1_000_003, 5);
        Files.write(root.resolve("stuck"), data);
        try (TestServer s = new TestServer(root)) {
            s.stallAt.put("stuck", new java.util.concurrent.ConcurrentLinkedQueue<>(List.of(250_000, 500_000)));
            long t0 = System.nanoTime();
            byte[] got;
            try (InputStream in = new HttpSource(URI.create(s.url("stuck")), FAST, Duration.ofMillis(300))) {
                got = in.readAllBytes();
            }
            long millis = (System.nanoTime() - t0) / 1_000_000;
            assertEquals(sha256(data), sha256(got));
            assertTrue(millis < s.stallMillis, "resumed when the read timed out, not when the server gave up: " + millis + " ms");
            assertEquals(List.of("bytes=250000-", "bytes=500000-"), s.ranges.get("stuck"), "each retry asks for the rest");
            assertEquals(3, s.requests.get("stuck").get());
        }
    }

    @Test
    void aBodyThatKeepsStallingFailsNamingUrlOffsetAndTheTimeout() throws IOException {
        Path root = served();
        Files.write(root.resolve("stuck"), random(1_000_000, 6));
        RetryingSource.Retry three = new RetryingSource.Retry(3, Duration.ofMillis(5), Duration.ofMillis(50));
        try (TestServer s = new TestServer(root)) {
            // stuck at byte 300,000: each retry gets nothing more
            s.stallAt.put("stuck", new java.util.concurrent.ConcurrentLinkedQueue<>(java.util.Collections.nCopies(10, 300_000)));
            IOException e;
            try (InputStream in = new HttpSource(URI.create(s.url("stuck")), three, Duration.ofMillis(300))) {
                e = assertThrows(IOException.class, in::readAllBytes);
            }
            assertTrue(e.getMessage().startsWith(s.url("stuck")
                    + ": failed at byte 300000 after 3 attempts: read timed out: no bytes for 300 ms"), e.getMessage());
            assertTrue(e.getCause() instanceof java.net.SocketTimeoutException, String.valueOf(e.getCause()));
            assertEquals(List.of("bytes=300000-", "bytes=300000-"), s.ranges.get("stuck"));
            assertEquals(3, s.requests.get("stuck").get());
        }
    }

    @Test
    void theReadTimeoutIsASystemPropertyInSeconds() {
        String before = System.getProperty("stoker.read.timeout");
        try {
            System.clearProperty("stoker.read.timeout");
            assertEquals(Duration.ofSeconds(30), Storage.readTimeout());
            System.setProperty("stoker.read.timeout", "0.25");
            assertEquals(Duration.ofMillis(250), Storage.readTimeout());
            System.setProperty("stoker.read.timeout", "soon");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, Storage::readTimeout);
            assertTrue(e.getMessage().contains("stoker.read.timeout=soon"), e.getMessage());
            System.setProperty("stoker.read.timeout", "0");
            assertThrows(IllegalArgumentException.class, Storage::readTimeout);
        } finally {
            if (before == null) {
                System.clearProperty("stoker.read.timeout");
            } else {
                System.setProperty("stoker.read.timeout", before);
            }
        }
    }

    /** {@code n} files {@code s0.tar}... of {@code samples} kB of random bytes each. */
    static void shards(Path root, int n, int samples) throws IOException {
        java.util.Random r = new java.util.Random(n);
        for (int i = 0; i < n; i++) {
            byte[] b = new byte[samples * 1024];
            r.nextBytes(b);
            Files.write(root.resolve("s" + i + ".tar"), b);
        }
    }

    @Test
    void theCacheStaysWithinItsLimitAndEvictsTheShardNeededLast() throws IOException {
        Path root = served();
        shards(root, 5, 40); // about 90 KB each
        long shardSize = Files.size(root.resolve("s0.tar"));
        try (TestServer s = new TestServer(root);
             ShardCache cache = new ShardCache(tmp.resolve("cache"), 3 * shardSize, 2)) {
            List<String> order = List.of(s.url("s0.tar"), s.url("s1.tar"), s.url("s2.tar"), s.url("s3.tar"), s.url("s0.tar"),
                    s.url("s1.tar"), s.url("s4.tar"));
            for (int i = 0; i < order.size(); i++) {
                cache.plan(order.subList(i + 1, order.size()));
                Path p = cache.acquire(order.get(i));
                assertTrue(Files.size(p) == shardSize);
                cache.release(order.get(i));
                assertTrue(cache.stats().usedBytes() <= 3 * shardSize, "never over the limit");
            }
            // s2 was the one not needed again when s3 came in: s0 and s1 stayed, so their second use hit
            assertEquals(1, s.requests.get("s0.tar").get(), "s0 kept for its second use");
            assertEquals(1, s.requests.get("s1.tar").get(), "s1 kept for its second use");
            ShardCache.Stats st = cache.stats();
            assertEquals(2, st.hits());
            assertEquals(5, st.misses());
            assertTrue(st.evictions() >= 2);
        }
    }

    @Test
    void twoCachesOnOneDirectoryDownloadAShardOnce() throws Exception {
        Path root = served();
        shards(root, 1, 200);
        try (TestServer s = new TestServer(root);
             ShardCache a = new ShardCache(tmp.resolve("shared"), 10_000_000, 1);
             ShardCache b = new ShardCache(tmp.resolve("shared"), 10_000_000, 1)) {
            String url = s.url("s0.tar");
            var fa = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                try {
                    return a.acquire(url);
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            Path pb = b.acquire(url);
            assertEquals(fa.get(), pb);
            assertEquals(1, s.requests.get("s0.tar").get(), "one download for both");
        }
    }

    @Test
    void rangedReadsGiveExactlyTheirBytesLocallyOverHttpAndFromAStoreThatFailsMidRead() throws IOException {
        Path root = served();
        byte[] data = new byte[200_001];
        new java.util.Random(3).nextBytes(data);
        Files.write(root.resolve("blob"), data);
        long[][] ranges = {{0, 10}, {5, 0}, {199_990, 11}, {12_345, 100_000}, {150_000, -1}, {0, -1}};
        try (TestServer s = new TestServer(root); MemoryStore mem = MemoryStore.mount("ranged")) {
            mem.put("blob", data);
            mem.chunk(1_000).cutAfter(7_777);
            s.dropNext.put("blob", new AtomicInteger(1));
            for (String location : List.of(root.resolve("blob").toString(), s.url("blob"), mem.location("blob"))) {
                for (long[] r : ranges) {
                    int from = (int) r[0];
                    int to = r[1] < 0 ? data.length : from + (int) r[1];
                    byte[] want = java.util.Arrays.copyOfRange(data, from, to);
                    try (InputStream in = Storage.open(location, r[0], r[1])) {
                        assertArrayEquals(want, in.readAllBytes(), location + " " + from + "+" + r[1]);
                    }
                    java.nio.ByteBuffer dst = java.nio.ByteBuffer.allocateDirect(to - from);
                    Storage.readFully(location, from, dst);
                    assertEquals(java.nio.ByteBuffer.wrap(want), dst.flip(), location + " " + from + "+" + r[1]);
                }
                java.io.EOFException e = assertThrows(java.io.EOFException.class,
                        () -> Storage.readFully(location, 199_000, java.nio.ByteBuffer.allocate(2_000)));
                assertTrue(e.getMessage().startsWith(location + ": ends at byte 200001, 999 bytes short of 201000"), e.getMessage());
            }
            assertTrue(s.ranges.get("blob").contains("bytes=12345-112344"), "a bounded range: " + s.ranges.get("blob"));
            assertTrue(mem.requests("blob") > 30, "every body was cut and resumed: " + mem.requests("blob"));
        }
    }

    @Test
    void aStoreThatDeliversOneByteAtATimeAndFailsItsOpensStillGivesEveryByteOnce() throws IOException {
        byte[] data = new byte[5_000];
        new java.util.Random(4).nextBytes(data);
        try (MemoryStore mem = MemoryStore.mount("one-byte")) {
            mem.put("a/x.bin", data);
            mem.put("a/y.bin", new byte[3]);
            mem.put("b/z.bin", new byte[1]);
            mem.chunk(1).failOpens("a/x.bin", 3);
            try (InputStream in = Storage.open(mem.location("a/x.bin"))) {
                assertArrayEquals(data, in.readAllBytes());
            }
            assertEquals(4, mem.requests("a/x.bin"), "three failed opens, then one body read a byte at a time");
            assertEquals(List.of(mem.location("a/x.bin"), mem.location("a/y.bin")), Storage.list(mem.location("a/")));
            assertEquals(List.of(mem.location("a/y.bin")), Storage.list(mem.location("a/y*")));
            assertTrue(Locations.isListing(mem.location("a/")) && Locations.isRemote(mem.location("a/x.bin")));
            assertEquals(5_000, Storage.size(mem.location("a/x.bin")));
            IOException missing = assertThrows(IOException.class, () -> Storage.open(mem.location("nope")).read());
            assertTrue(missing.getMessage().contains(mem.location("nope")) && missing.getMessage().contains("404"),
                    missing.getMessage());
            mem.failOpens("a/y.bin", 100);
            IOException gaveUp = assertThrows(IOException.class, () -> Storage.open(mem.location("a/y.bin")).readAllBytes());
            assertTrue(gaveUp.getMessage().startsWith(mem.location("a/y.bin") + ": failed at byte 0 after 6 attempts"),
                    gaveUp.getMessage());
        }
        assertTrue(!Locations.isRemote("mem://one-byte/a/x.bin"), "unmounted on close");
    }

    @Test
    void localListingsTakeADirectoryANamePrefixOrAGlob() throws IOException {
        Path d = Files.createDirectories(tmp.resolve("ls/sub"));
        for (String n : List.of("ls/a-1.tar", "ls/a-2.tar", "ls/b-1.tar", "ls/a-3.idx", "ls/sub/a-9.tar")) {
            Files.write(tmp.resolve(n), new byte[1]);
        }
        String root = tmp.resolve("ls").toString();
        assertEquals(List.of(root + "/a-1.tar", root + "/a-2.tar", root + "/a-3.idx", root + "/b-1.tar"), Storage.list(root));
        assertEquals(List.of(root + "/a-1.tar", root + "/a-2.tar", root + "/a-3.idx"), Storage.list(root + "/a-"));
        assertEquals(List.of(root + "/a-1.tar", root + "/a-2.tar", root + "/b-1.tar"), Storage.list(root + "/*.tar"));
        assertEquals(List.of(root + "/a-1.tar", root + "/a-2.tar", root + "/b-1.tar", root + "/sub/a-9.tar"),
                Storage.list(root + "/**.tar"));
        assertThrows(java.nio.file.NoSuchFileException.class, () -> Storage.list(tmp.resolve("none") + "/*.tar"));
        assertEquals(List.of("pom.xml"), Storage.list("pom.x*"), "a bare name is looked up in the working directory");
        assertTrue(d.toFile().isDirectory());
    }

    @Test
    void nextUseEvictionDownloadsLessThanLruWithACacheOfAThirdOfTheData() throws IOException {
        Path root = Files.createDirectories(tmp.resolve("replay"));
        List<String> shards = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            Path p = root.resolve(String.format("s%02d.bin", i));
            Files.write(p, new byte[1000]);
            shards.add(p.toString());
        }
        List<List<String>> epochs = new ArrayList<>();
        for (int e = 0; e < 4; e++) {
            List<String> order = new ArrayList<>(shards);
            java.util.Collections.shuffle(order, new java.util.Random(5 + e));
            epochs.add(order);
        }
        long[] next;
        long[] lru;
        try (ShardCache c = new ShardCache(tmp.resolve("next"), 9_000, 1)) {
            next = CacheReplay.bytesPerEpoch(epochs, c, true);
        }
        try (ShardCache c = new ShardCache(tmp.resolve("lru"), 9_000, 1)) {
            lru = CacheReplay.bytesPerEpoch(epochs, c, false);
        }
        assertEquals(30_000, next[0], "the first epoch downloads everything once");
        assertEquals(30_000, lru[0]);
        assertTrue(java.util.Arrays.stream(next).sum() < java.util.Arrays.stream(lru).sum(),
                "next-use " + java.util.Arrays.toString(next) + " vs LRU " + java.util.Arrays.toString(lru));
    }

    @Test
    void aFailureToReachAServerNamesTheLocationInWords() {
        String refused = "http://127.0.0.1:1/shard.tar"; // nothing listens on port 1
        java.io.IOException e = org.junit.jupiter.api.Assertions.assertThrows(java.io.IOException.class, () -> Storage.size(refused));
        org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().startsWith(refused + ": "), e.getMessage());
        String unknown = "http://no-such-host.invalid/shard.tar";
        e = org.junit.jupiter.api.Assertions.assertThrows(java.io.IOException.class, () -> Storage.size(unknown));
        org.junit.jupiter.api.Assertions.assertEquals(unknown + ": unknown host no-such-host.invalid", e.getMessage());
    }
}
