package dev.stoker.storage;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * An HTTP(S) object as a {@link RetryingSource}: 5xx and 429 responses are retried, and a resumed
 * transfer asks for the rest with a ranged GET (a server that ignores the range has the bytes
 * already delivered skipped). The timeout bounds the wait for the response headers and, through
 * {@link ReadTimeout}, every read of the body: a body that stalls longer fails the read, which is
 * retried from the last byte received.
 */
public final class HttpSource extends RetryingSource {
    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10))
            .followRedirects(HttpClient.Redirect.NORMAL).build();

    private final URI uri;
    private final Duration timeout;

    public HttpSource(URI uri, Retry retry, Duration timeout) {
        super(uri.toString(), retry);
        this.uri = uri;
        this.timeout = timeout;
    }

    /** The object's size from a HEAD request. */
    static long size(URI uri) throws IOException {
        HttpResponse<Void> r;
        try {
            r = CLIENT.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30))
                    .method("HEAD", HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.discarding());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException(uri + ": interrupted");
        }
        if (r.statusCode() != 200) {
            throw new IOException(uri + ": HTTP " + r.statusCode());
        }
        return r.headers().firstValueAsLong("Content-Length")
                .orElseThrow(() -> new IOException(uri + ": the server does not tell the size (no Content-Length)"));
    }

    @Override
    protected InputStream openAt(long position) throws IOException {
        HttpRequest.Builder req = HttpRequest.newBuilder(uri).timeout(timeout).GET();
        if (position > 0) {
            req.header("Range", "bytes=" + position + "-");
        }
        HttpResponse<InputStream> r;
        try {
            r = CLIENT.send(req.build(), HttpResponse.BodyHandlers.ofInputStream());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException(uri + ": interrupted");
        }
        int code = r.statusCode();
        InputStream body = new ReadTimeout(r.body(), timeout);
        if (code == 200 && position > 0) {
            // the server ignored the range: skip what was already delivered
            try {
                body.skipNBytes(position);
            } catch (IOException e) {
                body.close();
                throw e;
            }
        } else if (code == 206) {
            r.headers().firstValue("Content-Range").ifPresent(cr -> {
                int slash = cr.lastIndexOf('/');
                if (slash > 0 && !cr.endsWith("*")) {
                    learnLength(Long.parseLong(cr.substring(slash + 1).trim()));
                }
            });
        } else if (code != 200) {
            body.close();
            String what = "HTTP " + code;
            if (code == 429 || code >= 500) {
                throw new IOException(what);
            }
            throw new Permanent(what);
        }
        if (code == 200) {
            learnLength(r.headers().firstValueAsLong("Content-Length").orElse(-1));
        }
        return body;
    }
}
