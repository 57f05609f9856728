package dev.stoker.storage;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * An HTTP(S) object read as a stream that survives the network: a response of 5xx or 429, a
 * connection reset, a timeout or a body cut short is retried with exponential backoff and jitter,
 * and the transfer resumes with a ranged GET from the last byte received, so no byte is lost or
 * read twice. After the last attempt the error names the URL, the byte offset and the cause.
 */
public final class HttpSource extends InputStream {
    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10))
            .followRedirects(HttpClient.Redirect.NORMAL).build();

    private final URI uri;
    private final Retry retry;
    private final Duration timeout;
    private InputStream body;
    private long position;
    private long length = -1;
    private boolean closed;

    /** How often and how patiently to retry. */
    public record Retry(int attempts, Duration initialBackoff, Duration maxBackoff) {
        public static Retry standard() {
            return new Retry(6, Duration.ofMillis(100), Duration.ofSeconds(5));
        }
    }

    public HttpSource(URI uri, Retry retry, Duration timeout) {
        this.uri = uri;
        this.retry = retry;
        this.timeout = timeout;
    }

    /** The object's length, once the first response has told it (-1 before, or if it did not). */
    public long length() {
        return length;
    }

    /** Bytes delivered so far. */
    public long position() {
        return position;
    }

    @Override
    public int read() throws IOException {
        byte[] one = new byte[1];
        int n = read(one, 0, 1);
        return n < 0 ? -1 : one[0] & 0xFF;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        if (closed) {
            throw new IOException(uri + ": stream closed");
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
                    body = open();
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
                if (e instanceof Permanent) {
                    break;
                }
                backoff(attempt);
            }
        }
        throw new IOException(uri + ": failed at byte " + position + " after " + retry.attempts() + " attempts: "
                + (last == null ? "unknown" : last.getMessage()), last);
    }

    /** An error no retry can help (404, 403, a bad range). */
    static final class Permanent extends IOException {
        Permanent(String message) {
            super(message);
        }
    }

    private InputStream open() throws IOException {
        HttpRequest.Builder req = HttpRequest.newBuilder(uri).timeout(timeout).GET();
        if (position > 0) {
            req.header("Range", "bytes=" + position + "-");
        }
        HttpResponse<InputStream> r;
        try {
            r = CLIENT.send(req.build(), HttpResponse.BodyHandlers.ofInputStream());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException(uri + ": interrupted");
        }
        int code = r.statusCode();
        if (code == 200 && position > 0) {
            // the server ignored the range: skip what was already delivered
            r.body().skipNBytes(position);
        } else if (code == 206) {
            r.headers().firstValue("Content-Range").ifPresent(cr -> {
                int slash = cr.lastIndexOf('/');
                if (slash > 0 && !cr.endsWith("*")) {
                    length = Long.parseLong(cr.substring(slash + 1).trim());
                }
            });
        } else if (code != 200) {
            r.body().close();
            String what = "HTTP " + code;
            if (code == 429 || code >= 500) {
                throw new IOException(what);
            }
            throw new Permanent(what);
        }
        if (code == 200 && length < 0) {
            length = r.headers().firstValueAsLong("Content-Length").orElse(-1);
        }
        return r.body();
    }

    private void backoff(int attempt) throws IOException {
        long base = Math.min(retry.maxBackoff().toMillis(), retry.initialBackoff().toMillis() << Math.min(attempt, 20));
        long sleep = base / 2 + ThreadLocalRandom.current().nextLong(base / 2 + 1);
        try {
            Thread.sleep(sleep);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException(uri + ": interrupted while waiting to retry");
        }
    }

    private void closeBody() {
        if (body != null) {
            try {
                body.close();
            } catch (IOException ignored) {
                // a broken connection: nothing more to read from it
            }
            body = null;
        }
    }

    @Override
    public void close() {
        closed = true;
        closeBody();
    }
}
