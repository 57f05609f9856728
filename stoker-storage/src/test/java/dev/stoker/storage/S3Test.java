package dev.stoker.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.gaul.s3proxy.S3Proxy;
import org.gaul.s3proxy.auth.AuthenticationType;
import org.gaul.s3proxy.blobstore.ForwardingBlobStore;
import org.gaul.s3proxy.nio2blob.FilesystemNio2BlobStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.checksums.DefaultChecksumAlgorithm;
import software.amazon.awssdk.checksums.SdkChecksum;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.retries.DefaultRetryStrategy;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.ChecksumType;

/** S3 reads against a real S3-compatible server (S3Proxy on loopback, signed requests) with injected faults. */
@Timeout(120)
class S3Test {
    static final RetryingSource.Retry FAST = StorageTest.FAST;

    @TempDir
    static Path store;
    @TempDir
    Path tmp;

    static S3Proxy proxy;
    static S3Client s3;
    /**
     * Per key: how many coming GETs fail with 503, are cut off after 100 kB, have a byte of their
     * body flipped (the 12,345th), or stall after 100 kB (for 5 s).
     */
    static final Map<String, AtomicInteger> failNext = new ConcurrentHashMap<>();
    static final Map<String, AtomicInteger> cutNext = new ConcurrentHashMap<>();
    static final Map<String, AtomicInteger> corruptNext = new ConcurrentHashMap<>();
    static final Map<String, AtomicInteger> stallNext = new ConcurrentHashMap<>();
    static final Map<String, AtomicInteger> gets = new ConcurrentHashMap<>();
    /** Per key: the full-object checksum that full GETs announce, CRC32C or CRC64NVME (base64). */
    static final Map<String, Map.Entry<String, String>> checksumOf = new ConcurrentHashMap<>();
    /** Per key: the Range of each ranged GET, in order. */
    static final Map<String, List<String>> ranges = new ConcurrentHashMap<>();

    @BeforeAll
    static void start() throws Exception {
        var faulty = new ForwardingBlobStore(new FilesystemNio2BlobStore(store.toString())) {
            @Override
            public ResponseInputStream<GetObjectResponse> getBlob(GetObjectRequest req) {
                gets.computeIfAbsent(req.key(), k -> new AtomicInteger()).incrementAndGet();
                if (failNext.getOrDefault(req.key(), new AtomicInteger()).getAndDecrement() > 0) {
                    throw (S3Exception) S3Exception.builder().statusCode(503).message("SlowDown").build();
                }
                if (req.range() != null) {
                    ranges.computeIfAbsent(req.key(), k -> new java.util.concurrent.CopyOnWriteArrayList<>()).add(req.range());
                }
                ResponseInputStream<GetObjectResponse> in = super.getBlob(req);
                InputStream body = in;
                if (corruptNext.getOrDefault(req.key(), new AtomicInteger()).getAndDecrement() > 0) {
                    body = new Faulty(body, 12_345, () -> new IOException("unused"), true);
                }
                if (cutNext.getOrDefault(req.key(), new AtomicInteger()).getAndDecrement() > 0) {
                    body = new Faulty(body, 100_000, () -> new IOException("injected: connection lost"), false);
                }
                if (stallNext.getOrDefault(req.key(), new AtomicInteger()).getAndDecrement() > 0) {
                    body = new Faulty(body, 100_000, () -> {
                        try {
                            Thread.sleep(5_000);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                        return new IOException("injected: stalled");
                    }, false);
                }
                GetObjectResponse response = in.response();
                Map.Entry<String, String> crc = checksumOf.get(req.key());
                if (crc != null && req.range() == null) {
                    // S3 keeps the checksum an upload was sent with (CRC64NVME when it was sent with
                    // none) and returns it (x-amz-checksum-mode); S3Proxy's filesystem store does
                    // not keep it, so it is added to the response here
                    var b = response.toBuilder().checksumType(ChecksumType.FULL_OBJECT);
                    response = (crc.getKey().equals("CRC32C") ? b.checksumCRC32C(crc.getValue()) : b.checksumCRC64NVME(crc.getValue())).build();
                }
                return body == in && response == in.response() ? in : new ResponseInputStream<>(response, body);
            }
        };
        proxy = S3Proxy.builder().blobStore(faulty).endpoint(URI.create("http://127.0.0.1:0"))
                .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, "stoker-test", "stoker-secret").build();
        proxy.start();
        for (int i = 0; i < 200 && !"STARTED".equals(proxy.getState()); i++) {
            Thread.sleep(25);
        }
        s3 = S3Client.builder().endpointOverride(URI.create("http://127.0.0.1:" + proxy.getPort()))
                .forcePathStyle(true).region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("stoker-test", "stoker-secret")))
                .overrideConfiguration(o -> o.retryStrategy(DefaultRetryStrategy.doNotRetry()))
                .build();
        S3Objects.useClient(s3);
        s3.createBucket(b -> b.bucket("data"));
    }

    /** A body that, at byte {@code at}, either flips that byte or fails with {@code failure} (after waiting in it, for a stall). */
    static final class Faulty extends FilterInputStream {
        private final long at;
        private final java.util.function.Supplier<IOException> failure;
        private final boolean flip;
        private long sent;

        Faulty(InputStream in, long at, java.util.function.Supplier<IOException> failure, boolean flip) {
            super(in);
            this.at = at;
            this.failure = failure;
            this.flip = flip;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (!flip && sent >= at) {
                throw failure.get();
            }
            int n = super.read(b, off, flip ? len : (int) Math.min(len, at - sent));
            if (flip && n > 0 && sent <= at && at < sent + n) {
                b[off + (int) (at - sent)] ^= 0x01;
            }
            sent += Math.max(n, 0);
            return n;
        }
    }

    @AfterAll
    static void stop() throws Exception {
        S3Objects.useClient(null);
        s3.close();
        proxy.stop();
    }

    static void put(String key, byte[] data) {
        s3.putObject(b -> b.bucket("data").key(key), RequestBody.fromBytes(data));
    }

    @Test
    void aCutConnectionAnd503sResumeWithoutLosingOrRepeatingAByte() throws IOException {
        byte[] data = new byte[700_001];
        new Random(3).nextBytes(data);
        put("blob", data);
        failNext.put("blob", new AtomicInteger(2));
        cutNext.put("blob", new AtomicInteger(3));
        gets.remove("blob");
        try (RetryingSource in = S3Objects.open("s3://data/blob", FAST)) {
            assertArrayEquals(data, in.readAllBytes());
            assertEquals(data.length, in.length());
        }
        assertEquals(6, gets.get("blob").get(), "2 refused, 3 cut short and resumed, 1 to the end");
    }

    static String md5(byte[] data) {
        try {
            return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("MD5").digest(data));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void aBodyThatStallsPastTheReadTimeoutIsResumedFromTheLastByteReceived() throws IOException {
        byte[] data = StorageTest.random(400_000, 7);
        put("stalled", data);
        stallNext.put("stalled", new AtomicInteger(2));
        ranges.remove("stalled");
        long t0 = System.nanoTime();
        try (RetryingSource in = S3Objects.open("s3://data/stalled", FAST, Duration.ofMillis(500))) {
            assertEquals(StorageTest.sha256(data), StorageTest.sha256(in.readAllBytes()));
        }
        long millis = (System.nanoTime() - t0) / 1_000_000;
        assertTrue(millis < 5_000, "resumed when the read timed out, not when the server gave up: " + millis + " ms");
        List<String> seen = ranges.get("stalled");
        assertEquals(2, seen.size(), "two stalls, two resumes: " + seen);
        assertTrue(seen.get(0).matches("bytes=\\d+-") && !seen.get(0).equals("bytes=0-"), seen.toString());
    }

    @Test
    void theBytesAreCheckedAgainstTheMd5InTheETagAcrossResumedRanges() throws IOException {
        byte[] data = StorageTest.random(300_000, 8);
        put("checked", data);
        checkedAcrossRanges("checked", data, "MD5", S3Test::md5, "ETag");
    }

    /**
     * {@code key} (holding {@code data}) read through a cut connection announces {@code algorithm}
     * from {@code from}; a byte flipped before the cut is caught at the end, though the rest came in
     * another response, in an error naming both digests.
     */
    static void checkedAcrossRanges(String key, byte[] data, String algorithm, java.util.function.Function<byte[], String> digest,
                                    String from) throws IOException {
        cutNext.put(key, new AtomicInteger(2));
        try (RetryingSource in = S3Objects.open("s3://data/" + key, FAST)) {
            assertArrayEquals(data, in.readAllBytes());
            assertEquals(new RetryingSource.Digest(algorithm, digest.apply(data), from), in.announcedDigest());
        }
        cutNext.put(key, new AtomicInteger(1));
        corruptNext.put(key, new AtomicInteger(1));
        byte[] flipped = data.clone();
        flipped[12_345] ^= 0x01;
        try (RetryingSource in = S3Objects.open("s3://data/" + key, FAST)) {
            RetryingSource.DigestMismatch e = assertThrows(RetryingSource.DigestMismatch.class, in::readAllBytes);
            assertEquals("s3://data/" + key + ": " + algorithm + " mismatch over " + data.length + " bytes: expected "
                    + digest.apply(data) + " (" + from + "), got " + digest.apply(flipped), e.getMessage());
        }
    }

    @Test
    void aCorruptedDownloadIsTriedOnceMoreThenFailsNamingTheObjectAndBothDigests() throws IOException {
        byte[] data = StorageTest.random(200_000, 9);
        put("corrupt/once.tar", data);
        put("corrupt/twice.tar", data);
        corruptNext.put("corrupt/once.tar", new AtomicInteger(1));
        corruptNext.put("corrupt/twice.tar", new AtomicInteger(2));
        gets.remove("corrupt/once.tar");
        Path dir = tmp.resolve("cache-corrupt");
        try (ShardCache cache = new ShardCache(dir, 10_000_000, 1)) {
            Path p = cache.acquire("s3://data/corrupt/once.tar");
            assertArrayEquals(data, Files.readAllBytes(p), "the second download was clean");
            assertEquals(2, gets.get("corrupt/once.tar").get());
            cache.release("s3://data/corrupt/once.tar");

            IOException e = assertThrows(IOException.class, () -> cache.acquire("s3://data/corrupt/twice.tar"));
            assertTrue(e instanceof RetryingSource.DigestMismatch, String.valueOf(e));
            byte[] flipped = data.clone();
            flipped[12_345] ^= 0x01;
            assertEquals("s3://data/corrupt/twice.tar: MD5 mismatch over 200000 bytes: expected " + md5(data)
                    + " (ETag), got " + md5(flipped), e.getMessage());
            assertEquals(1, e.getSuppressed().length, "the first try's mismatch is kept with it");
            try (var left = Files.list(dir)) {
                assertEquals(List.of(), left.map(f -> f.getFileName().toString())
                        .filter(f -> f.contains("twice") && !f.endsWith(".lock")).toList(), "nothing kept of the corrupt copy");
            }
        }
        corruptNext.put("corrupt/twice.tar", new AtomicInteger(2));
        Path dest = tmp.resolve("staged-corrupt");
        IOException e = assertThrows(IOException.class,
                () -> Stager.stage(Stager.plan("s3://data/corrupt/twice.tar"), dest, n -> { }));
        assertTrue(e.getMessage().contains("MD5 mismatch"), e.getMessage());
        try (var left = Files.list(dest)) {
            assertEquals(0, left.count(), "no partial file left by staging");
        }
    }

    @Test
    void anObjectReplacedBetweenResumedRangesFailsRatherThanMixingTwoVersions() throws IOException {
        byte[] first = StorageTest.random(300_000, 10);
        byte[] second = StorageTest.random(300_000, 11);
        put("replaced", first);
        cutNext.put("replaced", new AtomicInteger(1));
        try (RetryingSource in = S3Objects.open("s3://data/replaced", FAST)) {
            byte[] start = in.readNBytes(50_000); // the first response, cut at 100 kB, is open
            assertArrayEquals(java.util.Arrays.copyOf(first, 50_000), start);
            put("replaced", second);
            IOException e = assertThrows(IOException.class, in::readAllBytes);
            // the cut (at 100 kB, less what the server had not sent yet), then the resume that found another object
            assertTrue(in.position() > 50_000 && in.position() <= 100_000, "at " + in.position());
            // the resume asked for the first version only (If-Match), and S3 refused it
            assertTrue(e.getMessage().startsWith("s3://data/replaced: failed at byte " + in.position()
                    + " after 2 attempts: the object changed while it was read: first ETag \"" + md5(first) + "\", now another"),
                    e.getMessage());
        }
    }

    static String crc32c(byte[] data) {
        SdkChecksum crc = SdkChecksum.forAlgorithm(DefaultChecksumAlgorithm.CRC32C);
        crc.update(data, 0, data.length);
        return java.util.HexFormat.of().formatHex(crc.getChecksumBytes());
    }

    /**
     * {@code key}, holding {@code data}, announces its full-object {@code algorithm} checksum
     * ({@code hex} of the bytes): it is checked instead of the ETag, across resumed ranges.
     */
    static void fullObjectChecksumChecked(String key, byte[] data, String algorithm,
                                          java.util.function.Function<byte[], String> hex) throws IOException {
        put(key, data);
        checksumOf.put(key, Map.entry(algorithm, java.util.Base64.getEncoder().encodeToString(java.util.HexFormat.of().parseHex(hex.apply(data)))));
        checkedAcrossRanges(key, data, algorithm, hex, "x-amz-checksum-" + algorithm.toLowerCase(java.util.Locale.ROOT));
    }

    @Test
    void aFullObjectChecksumIsCheckedInsteadOfTheETagAcrossResumedRanges() throws IOException {
        fullObjectChecksumChecked("crc", StorageTest.random(250_000, 12), "CRC32C", S3Test::crc32c);
    }

    static String crc64nvme(byte[] data) {
        return String.format("%016x", Crc64NvmeTest.reference(data, 0, data.length));
    }

    @Test
    void theCrc64nvmeS3ComputesForEveryObjectIsCheckedAcrossResumedRanges() throws IOException {
        fullObjectChecksumChecked("crc64", StorageTest.random(260_000, 13), "CRC64NVME", S3Test::crc64nvme);
    }

    @Test
    void onlyAFullObjectChecksumOrAnUnencryptedSinglePartETagIsAnnounced() {
        String hex = "0123456789abcdef0123456789ABCDEF";
        assertEquals(new RetryingSource.Digest("MD5", hex.toLowerCase(), "ETag"), announced("ETag", "\"" + hex + "\""));
        assertEquals(null, announced("ETag", "\"" + hex + "-12\""), "multipart");
        assertEquals(null, announced("ETag", hex, "x-amz-server-side-encryption", "aws:kms"), "KMS");
        assertEquals(null, announced("ETag", hex, "x-amz-server-side-encryption", "aws:kms:dsse"), "KMS, dual-layer");
        assertEquals(new RetryingSource.Digest("MD5", hex.toLowerCase(), "ETag"),
                announced("ETag", hex, "x-amz-server-side-encryption", "AES256"), "S3-managed keys keep the MD5");
        assertEquals(null, announced("ETag", hex, "x-amz-server-side-encryption-customer-algorithm", "AES256"), "SSE-C");
        assertEquals(null, announced(), "no ETag");
        assertEquals(new RetryingSource.Digest("CRC32", "0a0b0c0d", "x-amz-checksum-crc32"),
                announced("ETag", hex, "x-amz-checksum-crc32", "CgsMDQ=="), "a checksum before the ETag");
        assertEquals(new RetryingSource.Digest("CRC64NVME", "0102030405060708", "x-amz-checksum-crc64nvme"),
                announced("x-amz-checksum-crc32", "CgsMDQ==", "x-amz-checksum-crc64nvme", "AQIDBAUGBwg=",
                        "x-amz-checksum-type", "FULL_OBJECT"));
        assertEquals(null, announced("x-amz-checksum-crc32c", "CgsMDQ==-3", "x-amz-checksum-type", "COMPOSITE"),
                "a multipart upload's checksum of its parts' checksums");
    }

    /** What S3Objects.announced makes of a response with these headers (name, value, ...; looked up regardless of case). */
    static RetryingSource.Digest announced(String... headers) {
        return S3Objects.announced(name -> {
            for (int i = 0; i < headers.length; i += 2) {
                if (headers[i].equalsIgnoreCase(name)) {
                    return headers[i + 1];
                }
            }
            return null;
        });
    }

    @Test
    void anS3ErrorIsNamedByItsCode() {
        assertEquals(" NoSuchKey", S3Objects.errorCode(
                "<?xml version=\"1.0\"?><Error><Code>NoSuchKey</Code><Message>The key does not exist</Message></Error>"));
        assertEquals("", S3Objects.errorCode(""));
    }

    @Test
    void keysThatNeedEncodingAreSignedAsS3SignsThem() throws IOException {
        // S3 signs the path as sent (encoded once): spaces, unicode, '+', '=', '~', parentheses must
        // reach the object they name. (Keys with '//' or dot segments, which S3 keeps and the signer
        // must not normalize either, cannot be tested here: S3Proxy's servlet container normalizes
        // them and refuses even the SDK's own requests.)
        for (String key : List.of("with space/a b.tar", "unicodé/ß-ü.tar", "plus+and=equals.tar", "tilde~/(paren)!.tar")) {
            byte[] data = StorageTest.random(10_000 + key.length(), key.hashCode());
            put(key, data);
            try (RetryingSource in = S3Objects.open("s3://data/" + key, FAST)) {
                assertArrayEquals(data, in.readAllBytes(), key);
            }
            assertEquals(data.length, S3Objects.size("s3://data/" + key, v -> { }), key);
        }
    }

    @Test
    void aMissingObjectFailsAtOnceNamingIt() {
        gets.remove("nope");
        IOException e = assertThrows(IOException.class, () -> S3Objects.open("s3://data/nope", FAST).readAllBytes());
        assertTrue(e.getMessage().contains("s3://data/nope") && e.getMessage().contains("S3 404 NoSuchKey"), e.getMessage());
        assertEquals(1, gets.getOrDefault("nope", new AtomicInteger(1)).get(), "no retry for a missing object");
    }

    @Test
    void listingAPrefixFollowsEveryPageInKeyOrder() throws IOException {
        List<String> want = new ArrayList<>();
        for (int i = 0; i < 23; i++) {
            String key = String.format("listed/part-%03d", i);
            put(key, new byte[] {(byte) i});
            want.add("s3://data/" + key);
        }
        put("listedother", new byte[1]);
        assertEquals(want, S3Objects.list("s3://data/listed/", 5).stream().map(Storage.Entry::location).toList());
        assertEquals(want, Storage.list("s3://data/listed/part-"));
        assertEquals(List.of("s3://data/listed/part-003", "s3://data/listed/part-013"), Storage.list("s3://data/listed/part-0?3"));
        assertEquals(want.subList(10, 20), Storage.list("s3://data/listed/*-01*"));
        assertEquals(List.of(), Storage.list("s3://data/list*/nothing"));
    }

    @Test
    void aRangedReadAsksForItsBytesOnlyAndResumesWithinTheRange() throws IOException {
        byte[] data = new byte[400_000];
        new Random(9).nextBytes(data);
        put("ranged.bin", data);
        cutNext.put("ranged.bin", new AtomicInteger(1));
        java.nio.ByteBuffer dst = java.nio.ByteBuffer.allocate(250_000);
        Storage.readFully("s3://data/ranged.bin", 100_000, dst);
        assertArrayEquals(java.util.Arrays.copyOfRange(data, 100_000, 350_000), dst.array());
        List<String> asked = ranges.get("ranged.bin");
        assertEquals(2, asked.size(), asked.toString());
        assertEquals("bytes=100000-349999", asked.get(0));
        long resumedAt = Long.parseLong(asked.get(1).substring(6, asked.get(1).indexOf('-')));
        assertTrue(resumedAt > 100_000 && resumedAt <= 200_000 && asked.get(1).endsWith("-349999"),
                "cut after at most 100 kB, the rest of the range asked for again: " + asked);
    }

    @Test
    void stagingAPrefixCopiesItsTreeChecksSpaceAndKeepsWhatIsAlreadyThere() throws IOException {
        put("staged/a.bin", new byte[1000]);
        put("staged/sub/b.bin", new byte[2000]);
        List<Stager.Item> plan = Stager.plan("s3://data/staged/");
        assertEquals(List.of("a.bin", "sub/b.bin"), plan.stream().map(Stager.Item::relative).toList());
        assertEquals(List.of(new Stager.Item("s3://data/staged/a.bin", "a.bin", 1000)), Stager.plan("s3://data/staged/*.bin"));
        Path dest = tmp.resolve("dest");
        java.util.concurrent.atomic.AtomicLong seen = new java.util.concurrent.atomic.AtomicLong();
        Stager.Result first = Stager.stage(plan, dest, seen::addAndGet);
        assertEquals(new Stager.Result(2, 2, 0, 3000, 3000), first);
        assertEquals(3000, seen.get());
        assertEquals(2000, Files.size(dest.resolve("sub/b.bin")));
        Files.delete(dest.resolve("a.bin"));
        assertEquals(new Stager.Result(2, 1, 1, 1000, 3000), Stager.stage(plan, dest, n -> { }));

        Files.delete(dest.resolve("a.bin"));
        java.nio.file.FileStore tiny = new java.nio.file.FileStore() {
            // a store with 999 bytes free, for the check; everything else unused
            public String name() { return "tiny"; }
            public String type() { return "test"; }
            public boolean isReadOnly() { return false; }
            public long getTotalSpace() { return 999; }
            public long getUsableSpace() { return 999; }
            public long getUnallocatedSpace() { return 999; }
            public boolean supportsFileAttributeView(Class<? extends java.nio.file.attribute.FileAttributeView> t) { return false; }
            public boolean supportsFileAttributeView(String name) { return false; }
            public <V extends java.nio.file.attribute.FileStoreAttributeView> V getFileStoreAttributeView(Class<V> t) { return null; }
            public Object getAttribute(String a) { return null; }
        };
        IOException e = assertThrows(IOException.class, () -> Stager.stage(plan, dest, n -> { }, tiny));
        assertTrue(e.getMessage().contains("needs 1000 bytes") && e.getMessage().contains("999 bytes free"), e.getMessage());
        assertTrue(!Files.exists(dest.resolve("a.bin")), "nothing copied when space is short");
        Path fresh = tmp.resolve("fresh/dest");
        assertThrows(IOException.class, () -> Stager.stage(plan, fresh, n -> { }, tiny));
        assertTrue(!Files.exists(tmp.resolve("fresh")), "no folder made for a staging refused");
    }
}
