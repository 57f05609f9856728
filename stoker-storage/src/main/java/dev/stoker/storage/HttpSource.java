package dev.stoker.storage;

import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.time.Duration;

/**
 * An HTTP(S) object as a {@link RetryingSource}: 5xx and 429 responses are retried (after a
 * {@code Retry-After}'s time), and a resumed transfer asks for the rest with a ranged GET (a server
 * that ignores the range has the bytes already delivered skipped) of the version read so far. A
 * response is checked before its body is taken ({@link Http#checkBody}: no encoding, no HTML page,
 * the range asked for). The timeout bounds connecting, the wait for the response and every
 * read of the body (the socket's own read timeout): a body that stalls longer fails the read,
 * which is retried from the last byte received. The transport is {@link Http}'s.
 */
final class HttpSource extends RetryingSource {
    private final URI uri;
    private final Duration timeout;

    public HttpSource(URI uri, Retry retry, Duration timeout) {
        super(Http.redact(uri.toString()), retry);
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("a read timeout must be positive: " + timeout);
        }
        this.uri = uri;
        this.timeout = timeout;
    }

    /** The object's size from a HEAD request. */
    static long size(URI uri, java.util.function.Consumer<String> version) throws IOException {
        return Http.headSize(Http.connect(uri, "HEAD", 30_000), Http.redact(uri.toString()), "HTTP", version);
    }

    @Override
    protected InputStream openAt(long position) throws IOException {
        int millis = Http.millis(timeout);
        HttpURLConnection c = Http.connect(uri, "GET", millis);
        c.setRequestProperty("Accept-Encoding", "identity");
        String range = rangeHeader(position);
        if (range != null) {
            c.setRequestProperty("Range", range);
        }
        String pinned = version();
        Http.requireVersion(c, pinned);
        int code = c.getResponseCode();
        if (code == 412 && pinned != null) {
            Http.errorBody(c);
            throw changed(null);
        }
        if (code != 200 && code != 206) {
            Http.errorBody(c);
            throw Http.failure(c, code, "HTTP " + code);
        }
        Http.checkBody(c, code, position, "HTTP");
        try {
            learnVersion(Http.version(c));
        } catch (Permanent e) {
            c.disconnect(); // do not read the rest of another object
            throw e;
        }
        learnLength(Http.objectLength(c, code));
        return Http.body(c, code, position, millis);
    }
}
