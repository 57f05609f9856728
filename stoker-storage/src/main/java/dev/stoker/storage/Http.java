package dev.stoker.storage;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * What HTTP and S3 reads share: a connection with timeouts, a response's status turned into an
 * error worth retrying or not, a body positioned at the byte asked for, and the object's length.
 *
 * <p>Through {@link HttpURLConnection}, whose blocking socket reads cost a third of the CPU of
 * the JDK's {@code java.net.http} client for a large body (measured: 1.2–1.7 s against
 * 3.3–4.7 s for 520 MB over loopback), which matters when downloads share the cores with
 * decoding. The socket's own read timeout bounds every read of a body. Connections are kept
 * alive and reused when a body is read to its end.
 */
final class Http {
    private static final int CONNECT_MILLIS = 10_000;
    private static final int ERROR_BODY_LIMIT = 64 * 1024;

    private Http() {
    }

    /**
     * A connection to {@code uri}. NOTE [Credentials in a URL]: {@code user:password@} in the URL
     * is sent as HTTP basic authentication (the URL without it is what is requested), redirects
     * are then not followed (a redirect to another host would carry the password there: it is an
     * error instead), and the password appears in no message ({@link Storage#redact}).
     */
    static HttpURLConnection connect(URI uri, String method, int readMillis) throws IOException {
        String credentials = uri.getUserInfo();
        URI target = credentials == null ? uri : URI.create(uri.toString().replaceFirst("//[^/@]*@", "//"));
        HttpURLConnection c = (HttpURLConnection) target.toURL().openConnection();
        c.setRequestMethod(method);
        c.setConnectTimeout(Math.min(CONNECT_MILLIS, readMillis));
        c.setReadTimeout(readMillis);
        c.setInstanceFollowRedirects(credentials == null);
        c.setUseCaches(false);
        if (credentials != null) {
            c.setRequestProperty("Authorization", "Basic " + java.util.Base64.getEncoder()
                    .encodeToString(credentials.getBytes(StandardCharsets.UTF_8)));
        }
        return c;
    }

    /**
     * {@code location} (or any text holding URLs) with its secrets replaced by {@code ***}: the
     * password of a {@code scheme://user:password@} part, and the signatures, credentials and
     * tokens of presigned and token URLs (S3's {@code X-Amz-Signature}, {@code X-Amz-Credential},
     * {@code X-Amz-Security-Token}, GCS's {@code X-Goog-*}, Azure's {@code sig}, {@code token}).
     */
    static String redact(String location) {
        return location == null ? null
                : SECRET_PARAMETER.matcher(REDACT.matcher(location).replaceAll("$1:***@")).replaceAll("$1***");
    }

    private static final java.util.regex.Pattern REDACT =
            java.util.regex.Pattern.compile("([A-Za-z][A-Za-z0-9+.-]*://[^/:@\\s]*):[^/@\\s]*@");
    private static final java.util.regex.Pattern SECRET_PARAMETER = java.util.regex.Pattern.compile(
            "(?i)([?&](?:X-Amz-Signature|X-Amz-Credential|X-Amz-Security-Token|X-Goog-Signature|X-Goog-Credential"
                    + "|Signature|sig|token|access_token|AWSAccessKeyId)=)[^&#\\s]*");

    static int millis(Duration d) {
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, d.toMillis()));
    }

    /** The start of an error response's body (the rest is skipped, so that the connection can be reused); "" if none. */
    static String errorBody(HttpURLConnection c) {
        try (InputStream err = c.getResponseCode() >= 400 ? c.getErrorStream() : c.getInputStream()) {
            if (err == null) {
                return "";
            }
            String text = new String(err.readNBytes(ERROR_BODY_LIMIT), StandardCharsets.UTF_8);
            err.skip(Long.MAX_VALUE);
            return text;
        } catch (IOException e) {
            return ""; // the status is what matters
        }
    }

    /**
     * The object's size from the response to a HEAD request on {@code c} (disconnected after);
     * errors name the object and the status ({@code protocol + " " + code}); a 404, and only a
     * 404, is a {@link java.nio.file.NoSuchFileException}: the object does not exist.
     */
    static long headSize(HttpURLConnection c, String name, String protocol, java.util.function.Consumer<String> version)
            throws IOException {
        try {
            int code = c.getResponseCode();
            if (code == 404) {
                throw new java.nio.file.NoSuchFileException(name, null, protocol + " 404"); // no object: a clear no
            }
            if (code != 200) {
                throw failure(c, code, name + ": " + protocol + " " + code); // worth another request, or not
            }
            version.accept(version(c));
            long n = c.getContentLengthLong();
            if (n < 0) {
                throw new IOException(name + ": the server does not tell the size (no Content-Length)");
            }
            return n;
        } finally {
            c.disconnect();
        }
    }

    /**
     * A failed response as an error: worth retrying (408, 429, 5xx; after at least the time a
     * {@code Retry-After} asks for) or {@link RetryingSource.Permanent}.
     */
    static IOException failure(HttpURLConnection c, int code, String what) {
        if (code == 408 || code == 429 || code >= 500) {
            long wait = retryAfterMillis(c.getHeaderField("Retry-After"));
            return wait > 0 ? new RetryingSource.RetryAfter(what + " (Retry-After: " + (wait + 999) / 1000 + " s)", wait)
                    : new IOException(what);
        }
        return new RetryingSource.Permanent(what);
    }

    /** A {@code Retry-After} value (seconds, or an HTTP date) in milliseconds from now; 0 when absent or unreadable. */
    static long retryAfterMillis(String value) {
        if (value == null || value.isBlank()) {
            return 0;
        }
        String v = value.strip();
        try {
            return Math.max(0, Math.multiplyExact(Long.parseLong(v), 1000L));
        } catch (NumberFormatException | ArithmeticException e) {
            try {
                var at = java.time.ZonedDateTime.parse(v, java.time.format.DateTimeFormatter.RFC_1123_DATE_TIME);
                return Math.max(0, java.time.Duration.between(java.time.Instant.now(), at.toInstant()).toMillis());
            } catch (java.time.format.DateTimeParseException d) {
                return 0;
            }
        }
    }

    /**
     * The object's version as a response names it: {@code ETag "…"}, else {@code Last-Modified …};
     * null when it names none (NOTE [One version]).
     */
    static String version(HttpURLConnection c) {
        String etag = c.getHeaderField("ETag");
        if (etag != null && !etag.isBlank()) {
            return "ETag " + etag.strip();
        }
        String modified = c.getHeaderField("Last-Modified");
        return modified != null && !modified.isBlank() ? "Last-Modified " + modified.strip() : null;
    }

    /**
     * Asks for {@code version} only (NOTE [One version]): {@code If-Match} for a strong ETag,
     * {@code If-Unmodified-Since} for a date; a weak ETag can only be compared on the response.
     */
    static void requireVersion(HttpURLConnection c, String version) {
        if (version == null) {
            return;
        }
        if (version.startsWith("ETag \"")) {
            c.setRequestProperty("If-Match", version.substring("ETag ".length()));
        } else if (version.startsWith("Last-Modified ")) {
            c.setRequestProperty("If-Unmodified-Since", version.substring("Last-Modified ".length()));
        }
    }

    /**
     * A 200 or 206 response checked before its body is taken as the object's bytes from
     * {@code position}: a body encoded otherwise than asked ({@code Content-Encoding}), an HTML
     * page (an error page sent as a success; worth another attempt) and a range that starts
     * elsewhere than asked are errors naming what came.
     */
    static void checkBody(HttpURLConnection c, int code, long position, String protocol) throws IOException {
        String encoding = c.getHeaderField("Content-Encoding");
        if (encoding != null && !encoding.isBlank() && !encoding.strip().equalsIgnoreCase("identity")) {
            errorBody(c);
            throw new RetryingSource.Permanent(protocol + " " + code + " with the body encoded (Content-Encoding: "
                    + encoding.strip() + "), though only the object's own bytes were asked for (Accept-Encoding: identity)");
        }
        String type = c.getHeaderField("Content-Type");
        if (type != null && type.strip().toLowerCase(java.util.Locale.ROOT).startsWith("text/html")) {
            String page = errorBody(c).replaceAll("\\s+", " ").strip();
            throw new IOException(protocol + " " + code + " with an HTML page (Content-Type: " + type.strip()
                    + "), not the object's bytes: " + (page.length() > 120 ? page.substring(0, 120) + "…" : page));
        }
        if (code == 206) {
            String cr = c.getHeaderField("Content-Range");
            java.util.regex.Matcher m = cr == null ? null : CONTENT_RANGE.matcher(cr.strip());
            if (m == null || !m.matches()) {
                errorBody(c);
                throw new RetryingSource.Permanent(protocol + " 206 without a readable Content-Range (" + cr + ")");
            }
            if (Long.parseLong(m.group(1)) != position) {
                errorBody(c);
                throw new RetryingSource.Permanent(protocol + " 206 with bytes from " + m.group(1) + " (Content-Range: "
                        + cr.strip() + "), but byte " + position + " was asked for");
            }
        }
    }

    private static final java.util.regex.Pattern CONTENT_RANGE = java.util.regex.Pattern.compile("bytes (\\d+)-(\\d+)/(\\d+|\\*)");

    /** The whole object's length as a 200 or 206 response to a GET tells it; -1 if it does not. */
    static long objectLength(HttpURLConnection c, int code) {
        if (code == 206) {
            String cr = c.getHeaderField("Content-Range");
            int slash = cr == null ? -1 : cr.lastIndexOf('/');
            return slash > 0 && !cr.endsWith("*") ? Long.parseLong(cr.substring(slash + 1).trim()) : -1;
        }
        return c.getContentLengthLong();
    }

    /**
     * The body of a 200 or 206 response to a GET from byte {@code position}, at that byte: a
     * server that ignored the range (200) has the bytes already delivered skipped. Its stalled
     * reads fail saying how long nothing came.
     */
    static InputStream body(HttpURLConnection c, int code, long position, int readMillis) throws IOException {
        InputStream body = new Timed(c.getInputStream(), readMillis);
        if (code == 200 && position > 0) {
            try {
                body.skipNBytes(position);
            } catch (IOException e) {
                body.close();
                throw e;
            }
        }
        return body;
    }

    /** A body whose stalled reads (the socket's read timeout) fail saying how long nothing came. */
    private static final class Timed extends FilterInputStream {
        private final int millis;

        Timed(InputStream in, int millis) {
            super(in);
            this.millis = millis;
        }

        private SocketTimeoutException timedOut(SocketTimeoutException e) {
            var t = new SocketTimeoutException("read timed out: no bytes for " + millis + " ms");
            t.initCause(e);
            return t;
        }

        @Override
        public int read() throws IOException {
            try {
                return in.read();
            } catch (SocketTimeoutException e) {
                throw timedOut(e);
            }
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            try {
                return in.read(b, off, len);
            } catch (SocketTimeoutException e) {
                throw timedOut(e);
            }
        }

        @Override
        public long skip(long n) throws IOException {
            try {
                return in.skip(n);
            } catch (SocketTimeoutException e) {
                throw timedOut(e);
            }
        }
    }
}
