package dev.stoker.storage;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A remote object read as a stream that survives the network: a transient failure (a 5xx or 429
 * response, a connection reset, a timeout, a body cut short) is retried with exponential backoff
 * and jitter, and the transfer resumes from the last byte received, so no byte is lost or read
 * twice. After the last attempt the error names the object, the byte offset and the cause.
 * Subclasses say only how to open the object at a byte offset.
 */
public abstract class RetryingSource extends InputStream {
    private final String name;
    private final Retry retry;
    private InputStream body;
    private long position;
    private long length = -1;
    private boolean closed;

    /**
     * How often and how patiently to retry: {@code attempts} tries in a row may fail without a
     * byte delivered between them (a transfer that moves forward between failures goes on).
     */
    public record Retry(int attempts, Duration initialBackoff, Duration maxBackoff) {
        public static Retry standard() {
            return new Retry(6, Duration.ofMillis(100), Duration.ofSeconds(5));
        }
    }

    /** An error no retry can help (not found, forbidden, a bad range). */
    public static final class Permanent extends IOException {
        public Permanent(String message) {
            super(message);
        }
    }

    protected RetryingSource(String name, Retry retry) {
        this.name = name;
        this.retry = retry;
    }

    /**
     * Opens the object from byte {@code position} to its end. Throws {@link Permanent} for errors
     * no retry can help, any other {@link IOException} for those worth another attempt; reports
     * the object's full length through {@link #learnLength} when the response tells it.
     */
    protected abstract InputStream openAt(long position) throws IOException;

    protected final void learnLength(long length) {
        if (this.length < 0 && length >= 0) {
            this.length = length;
        }
    }

    /** The object's length, once a response has told it (-1 before, or if none did). */
    public final long length() {
        return length;
    }

    /** Bytes delivered so far. */
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
        IOException last = null;
        for (int attempt = 0; attempt < retry.attempts(); attempt++) {
            try {
                if (body == null) {
                    if (length >= 0 && position >= length) {
                        return -1;
                    }
                    body = openAt(position);
                }
                int n = body.read(b, off, len);
                if (n < 0) {
                    if (length >= 0 && position < length) {
                        throw new IOException("body ended at byte " + position + " of " + length);
                    }
                    return -1;
                }
                position += n;
                return n;
            } catch (IOException e) {
                last = e;
                closeBody();
                if (e instanceof Permanent || interrupted(e)) {
                    break;
                }
                if (attempt + 1 < retry.attempts()) {
                    backoff(attempt);
                }
            }
        }
        throw new IOException(name + ": failed at byte " + position + " after " + retry.attempts() + " attempts: "
                + (last == null ? "unknown" : last.getMessage()), last);
    }

    /** An interrupt, which ends the read; a timeout (an {@link InterruptedIOException} too) is retried. */
    private static boolean interrupted(IOException e) {
        return e instanceof InterruptedIOException && !(e instanceof java.net.SocketTimeoutException);
    }

    private void backoff(int attempt) throws IOException {
        long base = Math.min(retry.maxBackoff().toMillis(), retry.initialBackoff().toMillis() << Math.min(attempt, 20));
        long sleep = base / 2 + ThreadLocalRandom.current().nextLong(base / 2 + 1);
        try {
            Thread.sleep(sleep);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException(name + ": interrupted while waiting to retry");
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
