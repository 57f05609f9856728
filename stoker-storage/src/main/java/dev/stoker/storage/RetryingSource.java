package dev.stoker.storage;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;
import software.amazon.awssdk.checksums.DefaultChecksumAlgorithm;
import software.amazon.awssdk.checksums.SdkChecksum;
import software.amazon.awssdk.checksums.spi.ChecksumAlgorithm;

/**
 * A remote object read as a stream that survives the network: a transient failure (a 5xx or 429
 * response, a connection reset, a timeout, a body cut short) is retried with exponential backoff
 * and jitter, and the transfer resumes from the last byte received, so no byte is lost or read
 * twice. After the last attempt the error names the object, the byte offset and the cause.
 * Where the server announces a digest of the object (an S3 object's full-object checksum, or the
 * ETag of a single-part object, its MD5), the bytes are hashed as they are delivered and checked at the end: a mismatch fails with
 * a {@link DigestMismatch}. Subclasses say only how to open the object at a byte offset.
 */
abstract class RetryingSource extends InputStream {
    private final String name;
    private final Retry retry;
    private InputStream body;
    private long position;
    private long end = -1;
    private long length = -1;
    private boolean closed;
    private String version;
    private java.util.function.Consumer<String> versionSeen;
    private Runnable versionGone;
    private Digest expected;
    private SdkChecksum digest;

    /**
     * How often and how patiently to retry: {@code attempts} tries in a row may fail without a
     * byte delivered between them (a transfer that moves forward between failures goes on).
     */
    public record Retry(int attempts, Duration initialBackoff, Duration maxBackoff) {
        public static Retry standard() {
            return new Retry(6, Duration.ofMillis(100), Duration.ofSeconds(5));
        }
    }

    /** An error no retry can help (not found, forbidden, a bad range, an object that changed mid-read). */
    public static final class Permanent extends IOException {
        public Permanent(String message) {
            super(message);
        }
    }

    /** A 429 or 503 whose server said how long to wait ({@code Retry-After}), in milliseconds. */
    static final class RetryAfter extends IOException {
        final long millis;

        RetryAfter(String message, long millis) {
            super(message);
            this.millis = millis;
        }
    }

    /** The longest wait a {@code Retry-After} gets; a server that asks for more fails the read at once, saying so. */
    static final long RETRY_AFTER_LIMIT_MILLIS = 30_000;

    /**
     * A digest of the whole object as the server announced it: the algorithm ({@code MD5},
     * {@code CRC32}, {@code CRC32C}, {@code CRC64NVME}, {@code SHA1} or {@code SHA256}), the value
     * in hex, where it came from.
     */
    public record Digest(String algorithm, String hex, String from) {
        SdkChecksum start() {
            if (algorithm.equals("CRC64NVME")) {
                return new Crc64Nvme(); // the SDK computes it only with its CRT library
            }
            ChecksumAlgorithm a = switch (algorithm) {
                case "MD5" -> DefaultChecksumAlgorithm.MD5;
                case "CRC32" -> DefaultChecksumAlgorithm.CRC32;
                case "CRC32C" -> DefaultChecksumAlgorithm.CRC32C;
                case "SHA1" -> DefaultChecksumAlgorithm.SHA1;
                case "SHA256" -> DefaultChecksumAlgorithm.SHA256;
                default -> throw new IllegalArgumentException("unknown digest " + algorithm);
            };
            return SdkChecksum.forAlgorithm(a);
        }
    }

    /**
     * The bytes read do not match the digest the server announced: they were corrupted on the way
     * (or at rest). Only a fresh download can help, so it is not retried here.
     */
    public static final class DigestMismatch extends IOException {
        public DigestMismatch(String name, String what) {
            super(name + ": " + what);
        }
    }

    protected RetryingSource(String name, Retry retry) {
        this.name = name;
        this.retry = retry;
    }

    /**
     * Reads only the bytes {@code [offset, offset + length)} of the object (to its end when
     * {@code length} is -1): ranged requests, resumed within the range; no whole-object digest is
     * checked. Called before the first read.
     */
    public final RetryingSource range(long offset, long length) {
        if (body != null || offset < 0 || length < -1) {
            throw new IllegalArgumentException(name + ": a range is set before reading, at offset >= 0: " + offset + "+" + length);
        }
        this.position = offset;
        this.end = length < 0 ? -1 : offset + length;
        return this;
    }

    /**
     * The HTTP {@code Range} header that asks for the object from {@code position} to the end of
     * the range being read, or null for the whole object.
     */
    protected final String rangeHeader(long position) {
        if (end >= 0) {
            return "bytes=" + position + "-" + (end - 1);
        }
        return position > 0 ? "bytes=" + position + "-" : null;
    }

    /** The exclusive end of the bytes to read, -1 until known (the object's end, no range given). */
    private long limit() {
        return end >= 0 ? (length >= 0 ? Math.min(end, length) : end) : length;
    }

    /**
     * Opens the object from byte {@code position} to its end, or to the end of the range
     * being read ({@link #rangeHeader} says which, as HTTP asks for it). Throws {@link Permanent} for errors
     * no retry can help, any other {@link IOException} for those worth another attempt; reports
     * what the response tells of the whole object: its length ({@link #learnLength}), its version
     * ({@link #learnVersion}) and its digest ({@link #learnDigest}).
     */
    protected abstract InputStream openAt(long position) throws IOException;

    protected final void learnLength(long length) {
        if (this.length < 0 && length >= 0) {
            this.length = length;
        }
    }

    /**
     * Reads only the version {@code version} of the object (as {@link #learnVersion} names it: a
     * version this process saw before), tells {@code seen} the version the first response names
     * when none was pinned, and {@code gone} when the object turns out to have changed (a later
     * read may then take the new version). Called before the first read.
     */
    public final RetryingSource pin(String version, java.util.function.Consumer<String> seen, Runnable gone) {
        if (body != null) {
            throw new IllegalStateException(name + ": a version is pinned before reading");
        }
        this.version = version;
        this.versionSeen = seen;
        this.versionGone = gone;
        return this;
    }

    /** The version every response must be, once known (the first response's, or the pinned one); null before. */
    protected final String version() {
        return version;
    }

    /**
     * The object's version ({@code ETag "…"}, or {@code Last-Modified …} where there is no ETag),
     * from every response: one that differs from the first (or the pinned one) means the object
     * was replaced, and the bytes would belong to another object, which no retry can mend
     * (NOTE [One version]).
     */
    protected final void learnVersion(String tag) throws Permanent {
        if (tag == null) {
            return;
        }
        if (version == null) {
            version = tag;
            if (versionSeen != null) {
                versionSeen.accept(tag);
            }
        } else if (!version.equals(tag) && version.startsWith("ETag ") == tag.startsWith("ETag ")) {
            throw changed(tag); // (an ETag and a date cannot be compared: a server may name one on HEAD, the other on GET)
        }
    }

    /** The object is no longer the version read so far: {@code now} (null when the server only said so, a 412). */
    protected final Permanent changed(String now) {
        if (versionGone != null) {
            versionGone.run();
        }
        return new Permanent("the object changed while it was read: first " + version + ", now "
                + (now != null ? now : "another (the server refused the request for " + version + ")")
                + "; its bytes are not mixed: read it again");
    }

    /**
     * A digest of the whole object that the response announced, to check every byte against when
     * the stream ends (across resumed ranges, which continue the same stream). Only the response
     * at byte 0 can start one; later ones are ignored.
     */
    protected final void learnDigest(Digest announced) {
        if (expected != null || position > 0 || end >= 0) {
            return;
        }
        digest = announced.start();
        expected = announced;
    }

    /** The digest the server announced for the whole object, checked at its end; null when none was. */
    public final Digest announcedDigest() {
        return expected;
    }

    /** The object's length, once a response has told it (-1 before, or if none did). */
    public final long length() {
        return length;
    }

    /** The offset in the object of the next byte to deliver (bytes delivered so far, without a range). */
    public final long position() {
        return position;
    }

    @Override
    public final int read() throws IOException {
        byte[] one = new byte[1];
        int n = read(one, 0, 1);
        return n < 0 ? -1 : one[0] & 0xFF;
    }

    @Override
    public final int read(byte[] b, int off, int len) throws IOException {
        if (closed) {
            throw new IOException(name + ": stream closed");
        }
        if (len == 0) {
            return 0;
        }
        if (end >= 0) {
            // a server that ignored the range sends more: only the range is delivered
            len = (int) Math.min(len, Math.max(0, end - position));
            if (len == 0) {
                return -1;
            }
        }
        int n = readRetrying(b, off, len);
        if (n < 0) {
            checkDigest();
            return -1;
        }
        if (digest != null) {
            digest.update(b, off, n);
        }
        position += n;
        return n;
    }

    private int readRetrying(byte[] b, int off, int len) throws IOException {
        IOException last = null;
        int tries = 0;
        while (tries < retry.attempts()) {
            tries++;
            try {
                if (body == null) {
                    if (limit() >= 0 && position >= limit()) {
                        return -1;
                    }
                    body = openAt(position);
                }
                int n = body.read(b, off, len);
                if (n < 0 && limit() >= 0 && position < limit()) {
                    throw new IOException("body ended at byte " + position + " of " + limit());
                }
                return n;
            } catch (IOException e) {
                last = e;
                closeBody();
                if (e instanceof DigestMismatch m) {
                    throw m;
                }
                if (e instanceof Permanent || interrupted(e)) {
                    break;
                }
                if (e instanceof RetryAfter r && r.millis > RETRY_AFTER_LIMIT_MILLIS) {
                    throw new IOException(name + ": the server asks to retry after " + r.millis / 1000 + " s (Retry-After), "
                            + "longer than a read waits (" + RETRY_AFTER_LIMIT_MILLIS / 1000 + " s): " + Storage.inWords(e), e);
                }
                if (tries < retry.attempts()) {
                    backoff(tries - 1, e instanceof RetryAfter r ? r.millis : 0);
                }
            }
        }
        throw new IOException(name + ": failed at byte " + position + " after " + tries + (tries == 1 ? " attempt: " : " attempts: ")
                + (last == null ? "unknown" : Storage.inWords(last)), last);
    }

    /** At the end of the object: the bytes delivered against the digest the server announced, once. */
    private void checkDigest() throws DigestMismatch {
        if (digest == null) {
            return;
        }
        String actual = HexFormat.of().formatHex(digest.getChecksumBytes());
        digest = null;
        if (!actual.equalsIgnoreCase(expected.hex())) {
            throw new DigestMismatch(name, expected.algorithm() + " mismatch over " + position + " bytes: expected "
                    + expected.hex() + " (" + expected.from() + "), got " + actual);
        }
    }

    /** An interrupt, which ends the read; a timeout (an {@link InterruptedIOException} too) is retried. */
    private static boolean interrupted(IOException e) {
        return e instanceof InterruptedIOException && !(e instanceof java.net.SocketTimeoutException);
    }

    /** Waits before attempt {@code attempt + 1}: exponential backoff with jitter, and at least what the server asked. */
    private void backoff(int attempt, long serverMillis) throws IOException {
        long sleep = backoffMillis(retry, attempt, serverMillis);
        try {
            Thread.sleep(sleep);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException(name + ": interrupted while waiting to retry");
        }
    }

    /** The wait before attempt {@code attempt + 1}: exponential backoff with jitter, and at least what the server asked. */
    static long backoffMillis(Retry retry, int attempt, long serverMillis) {
        long base = Math.min(retry.maxBackoff().toMillis(), retry.initialBackoff().toMillis() << Math.min(attempt, 20));
        return Math.max(serverMillis, base / 2 + ThreadLocalRandom.current().nextLong(base / 2 + 1));
    }

    /** One request of a retried exchange. */
    interface Request<T> {
        T send() throws IOException;
    }

    /**
     * {@code request}'s answer, sent again as a read's are ({@link Retry#standard}) while it fails
     * in a way worth another attempt (a 5xx, a 429, a dropped connection, a timeout); a clear
     * answer ({@link Permanent}, a missing object) or an interrupt ends it at once.
     */
    static <T> T retried(Request<T> request) throws IOException {
        Retry retry = Retry.standard();
        for (int attempt = 1; ; attempt++) {
            try {
                return request.send();
            } catch (Permanent | java.nio.file.NoSuchFileException e) {
                throw e;
            } catch (IOException e) {
                long asked = e instanceof RetryAfter r ? r.millis : 0;
                if (attempt >= retry.attempts() || interrupted(e) || asked > RETRY_AFTER_LIMIT_MILLIS) {
                    throw e;
                }
                try {
                    Thread.sleep(backoffMillis(retry, attempt - 1, asked));
                } catch (InterruptedException i) {
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException("interrupted while waiting to retry");
                }
            }
        }
    }

    private void closeBody() {
        if (body != null) {
            try {
                body.close();
            } catch (IOException | RuntimeException ignored) {
                // a broken connection: nothing more to read from it
            }
            body = null;
        }
    }

    @Override
    public final void close() {
        closed = true;
        closeBody();
    }
}
