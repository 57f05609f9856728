package dev.stoker.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.storage.testing.TestServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A response is data only when it is the object's bytes, of the version read so far: an HTML error
 * page sent as a success, an encoding nobody asked for and a range from the wrong byte are errors
 * naming what came; an object replaced mid-read is an error naming both versions, never a splice
 * (NOTE [One version]); a server's Retry-After is waited for.
 */
class ResponsesTest {
    @TempDir
    Path root;

    private static byte[] bytes(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    private InputStream http(TestServer s, String name) {
        return new HttpSource(URI.create(s.url(name)), StorageTest.FAST, Duration.ofSeconds(10));
    }

    /** The error reading the whole object {@code name} ends in (none is a failure of the test). */
    private IOException readFails(TestServer s, String name) {
        return assertThrows(IOException.class, () -> {
            try (InputStream in = http(s, name)) {
                in.readAllBytes();
            }
        });
    }

    @Test
    void anObjectReplacedDuringAResumedDownloadFailsNamingBothVersions() throws IOException {
        for (boolean dates : new boolean[] {false, true}) {
            String name = "replaced-" + dates;
            Files.write(root.resolve(name), bytes(1_000_000, 1));
            try (TestServer s = new TestServer(root)) {
                s.lastModifiedOnly = dates;
                s.dropNext.put(name, new AtomicInteger(1)); // the first response is cut halfway
                s.replaceOnSecondRequest.put(name, bytes(1_000_000, 2)); // and the object replaced before the resume
                IOException e = readFails(s, name);
                assertTrue(e.getMessage().contains("changed while it was read") && e.getMessage().contains(dates ? "Last-Modified" : "ETag")
                        && e.getMessage().contains(s.url(name)), e.getMessage());
            }
        }
    }

    @Test
    void separateRangedReadsOfOneFileAreOfOneVersion() throws IOException {
        byte[] first = bytes(4096, 3);
        Files.write(root.resolve("table"), first);
        try (TestServer s = new TestServer(root)) {
            ByteBuffer footer = ByteBuffer.allocate(100);
            Storage.readFully(s.url("table"), 3996, footer); // a Parquet reader reads the footer first
            assertArrayEquals(java.util.Arrays.copyOfRange(first, 3996, 4096), footer.array());
            s.replaceOnSecondRequest.put("table", bytes(4096, 4)); // then a writer replaces the file
            IOException e = assertThrows(IOException.class, () -> Storage.readFully(s.url("table"), 0, ByteBuffer.allocate(1000)));
            assertTrue(e.getMessage().contains("changed while it was read"), e.getMessage());
        }
    }

    @Test
    void anHtmlPageSentAsASuccessIsRetriedAndNeverTakenAsData() throws IOException {
        byte[] data = bytes(10_000, 5);
        Files.write(root.resolve("tokens.bin"), data);
        try (TestServer s = new TestServer(root)) {
            s.htmlNext.put("tokens.bin", new AtomicInteger(1));
            try (InputStream in = http(s, "tokens.bin")) {
                assertArrayEquals(data, in.readAllBytes(), "the page was retried, the bytes came after");
            }
            s.htmlNext.put("tokens.bin", new AtomicInteger(100));
            IOException e = readFails(s, "tokens.bin");
            assertTrue(e.getMessage().contains("HTML page") && e.getMessage().contains("Bad Gateway")
                    && e.getMessage().contains(s.url("tokens.bin")), e.getMessage());
        }
    }

    @Test
    void aBodyEncodedOtherwiseThanAskedIsRefused() throws IOException {
        Files.write(root.resolve("docs.jsonl"), "{\"text\": \"a\"}\n".repeat(100).getBytes());
        try (TestServer s = new TestServer(root)) {
            s.gzipNext.put("docs.jsonl", new AtomicInteger(1));
            IOException e = readFails(s, "docs.jsonl");
            assertTrue(e.getMessage().contains("Content-Encoding: gzip"), e.getMessage());
            assertTrue(s.requests.get("docs.jsonl").get() == 1, "no retry can mend it");
        }
    }

    @Test
    void aRangeFromTheWrongByteIsRefused() throws IOException {
        Files.write(root.resolve("shard.tar"), bytes(50_000, 6));
        try (TestServer s = new TestServer(root)) {
            s.wrongRangeNext.put("shard.tar", new AtomicInteger(1));
            IOException e = assertThrows(IOException.class, () -> {
                try (InputStream in = Storage.open(s.url("shard.tar"), 1000, 500)) {
                    in.readAllBytes();
                }
            });
            assertTrue(e.getMessage().contains("206 with bytes from 1001") && e.getMessage().contains("byte 1000 was asked for"),
                    e.getMessage());
        }
    }

    @Test
    void retryAfterIsWaitedForWithinItsLimitAndAskingForMoreFailsAtOnce() throws IOException {
        byte[] data = bytes(1000, 7);
        Files.write(root.resolve("busy"), data);
        try (TestServer s = new TestServer(root)) {
            s.retryAfterNext.put("busy", new AtomicInteger(1));
            long t0 = System.nanoTime();
            try (InputStream in = http(s, "busy")) {
                assertArrayEquals(data, in.readAllBytes());
            }
            assertTrue(System.nanoTime() - t0 >= 900_000_000L, "waited the second the server asked for");
            s.retryAfterSeconds = 3600;
            s.retryAfterNext.put("busy", new AtomicInteger(1));
            t0 = System.nanoTime();
            IOException e = readFails(s, "busy");
            assertTrue(e.getMessage().contains("retry after 3600 s"), e.getMessage());
            assertTrue(System.nanoTime() - t0 < 5_000_000_000L, "failed at once");
        }
    }

    @Test
    void thePasswordsSignaturesAndTokensOfUrlsAreNeverShown() {
        String presigned = "https://b.s3.amazonaws.com/train-000001.tar?X-Amz-Algorithm=AWS4-HMAC-SHA256"
                + "&X-Amz-Credential=AKIAEXAMPLE%2F20261127%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261127T000000Z"
                + "&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Security-Token=FwoGZXIvYXdzEXAMPLE"
                + "&X-Amz-Signature=0123456789abcdef";
        String shown = Locations.redact("stoker: " + presigned + ": HTTP 403");
        for (String secret : new String[] {"AKIAEXAMPLE", "FwoGZXIvYXdzEXAMPLE", "0123456789abcdef"}) {
            assertTrue(!shown.contains(secret), shown);
        }
        assertTrue(shown.contains("train-000001.tar") && shown.contains("X-Amz-Expires=3600") && shown.endsWith("HTTP 403"), shown);
        assertTrue(!Locations.redact("https://me:hunter2@host/a.tar?sig=abc&sv=1").contains("hunter2"));
        assertTrue(!Locations.redact("https://me:hunter2@host/a.tar?sig=abc&sv=1").contains("abc"));
    }

    /** A cache holds one version of each object: a copy of another version than the server's is fetched again. */
    @Test
    void aCachedCopyOfAnOlderVersionIsFetchedAgain() throws IOException {
        byte[] first = bytes(20_000, 8);
        byte[] second = bytes(20_000, 9);
        Files.write(root.resolve("shard.tar"), first);
        Path dir = root.resolve("cache");
        try (TestServer s = new TestServer(root)) {
            String url = s.url("shard.tar");
            try (ShardCache cache = new ShardCache(dir, 1 << 20, 1)) {
                assertArrayEquals(first, Files.readAllBytes(cache.acquire(url)));
                cache.release(url);
            }
            Files.write(root.resolve("shard.tar"), second); // the object is replaced on the server
            Files.setLastModifiedTime(root.resolve("shard.tar"), java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() + 60_000));
            Storage.forgetVersions(); // a new process
            try (ShardCache cache = new ShardCache(dir, 1 << 20, 1)) {
                assertArrayEquals(second, Files.readAllBytes(cache.acquire(url)), "the new version, not the cached copy");
                cache.release(url);
                assertArrayEquals(second, Files.readAllBytes(cache.acquire(url)));
                cache.release(url);
                assertTrue(cache.stats().hits() == 1 && cache.stats().misses() == 1, cache.stats().toString());
            }
            Storage.forgetVersions();
            try (ShardCache cache = new ShardCache(dir, 1 << 20, 1)) { // unchanged: the copy is used
                assertArrayEquals(second, Files.readAllBytes(cache.acquire(url)));
                cache.release(url);
                assertEquals(1, cache.stats().hits());
            }
        }
    }
}
