package dev.stoker.storage.testing;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real HTTP server on loopback (the JDK's) serving a folder, with ranged GETs
 * ({@code bytes=a-}, {@code bytes=a-b}), a count of the body bytes sent, and injected faults:
 * bursts of 503, a connection dropped mid-body, a body that trickles or stalls, missing objects,
 * and the responses a loader must not take as data: an HTML error page sent as a success, a gzip
 * encoding nobody asked for, a range from the wrong byte, a 503 with {@code Retry-After}, an
 * object replaced between two requests. Each response names the object's version (an ETag of its
 * bytes, or with {@link #lastModifiedOnly} its modification time) and honours {@code If-Match}
 * and {@code If-Unmodified-Since}.
 */
public final class TestServer implements AutoCloseable {
    final HttpServer server;
    final Path root;
    public final Map<String, AtomicInteger> requests = new ConcurrentHashMap<>();
    public final Map<String, AtomicInteger> rangeRequests = new ConcurrentHashMap<>();
    /** Body bytes sent, all objects together. */
    public final java.util.concurrent.atomic.AtomicLong bytesSent = new java.util.concurrent.atomic.AtomicLong();
    /** Path -> the status every request for it answers (no body): a 500, a 403. */
    public final Map<String, Integer> status = new ConcurrentHashMap<>();
    /** Path -> how many more requests answer 503. */
    public final Map<String, AtomicInteger> failNext = new ConcurrentHashMap<>();
    /** Path -> how many more full responses are cut after half the body. */
    public final Map<String, AtomicInteger> dropNext = new ConcurrentHashMap<>();
    /** Path -> the Range header of each request that had one, in order. */
    public final Map<String, List<String>> ranges = new ConcurrentHashMap<>();
    /** Path -> a body sent in small pieces with a pause before each. */
    public final Map<String, Trickle> trickle = new ConcurrentHashMap<>();
    /** Path -> byte offsets: each response takes the next one, sends the body up to it, then nothing for {@link #stallMillis}. */
    public final Map<String, Queue<Integer>> stallAt = new ConcurrentHashMap<>();
    public volatile long stallMillis = 5_000;
    /** When set, a request without exactly this Authorization header is answered 401. */
    public volatile String requireAuthorization;
    /** Path -> how many more GETs get 200 with an HTML error page. */
    public final Map<String, AtomicInteger> htmlNext = new ConcurrentHashMap<>();
    /** Path -> how many more GETs get the body gzip-encoded. */
    public final Map<String, AtomicInteger> gzipNext = new ConcurrentHashMap<>();
    /** Path -> how many more ranged GETs get a 206 from the byte after the one asked for. */
    public final Map<String, AtomicInteger> wrongRangeNext = new ConcurrentHashMap<>();
    /** Path -> how many more requests get 503 with {@code Retry-After: }{@link #retryAfterSeconds}. */
    public final Map<String, AtomicInteger> retryAfterNext = new ConcurrentHashMap<>();
    public volatile int retryAfterSeconds = 1;
    /** Path -> new bytes the object takes before its second request is answered (once). */
    public final Map<String, byte[]> replaceOnSecondRequest = new ConcurrentHashMap<>();
    /** Versions are modification times only (no ETag). */
    public volatile boolean lastModifiedOnly;

    public record Trickle(int pieceBytes, long pauseMillis) {
    }

    public TestServer(Path root) throws IOException {
        this.root = root;
        this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", this::handle);
        server.setExecutor(java.util.concurrent.Executors.newCachedThreadPool()); // stalled responses hold threads
        server.start();
    }

    public String url(String name) {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/" + name;
    }

    private void handle(HttpExchange ex) throws IOException {
        String name = ex.getRequestURI().getPath().substring(1);
        requests.computeIfAbsent(name, k -> new AtomicInteger()).incrementAndGet();
        try (ex) {
            String auth = requireAuthorization;
            if (auth != null && !auth.equals(ex.getRequestHeaders().getFirst("Authorization"))) {
                ex.sendResponseHeaders(401, -1);
                return;
            }
            Integer fixed = status.get(name);
            if (fixed != null) {
                ex.sendResponseHeaders(fixed, -1);
                return;
            }
            AtomicInteger fail = failNext.get(name);
            if (fail != null && fail.getAndDecrement() > 0) {
                ex.sendResponseHeaders(503, -1);
                return;
            }
            AtomicInteger later = retryAfterNext.get(name);
            if (later != null && later.getAndDecrement() > 0) {
                ex.getResponseHeaders().add("Retry-After", Integer.toString(retryAfterSeconds));
                ex.sendResponseHeaders(503, -1);
                return;
            }
            Path p = root.resolve(name);
            byte[] replacement = requests.get(name).get() >= 2 ? replaceOnSecondRequest.remove(name) : null;
            if (replacement != null) {
                Files.write(p, replacement);
                Files.setLastModifiedTime(p, java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() + 60_000));
            }
            if (!Files.isRegularFile(p)) {
                ex.sendResponseHeaders(404, -1);
                return;
            }
            if (!versionHeaders(ex, p)) {
                ex.sendResponseHeaders(412, -1);
                return;
            }
            AtomicInteger html = htmlNext.get(name);
            if (html != null && html.getAndDecrement() > 0 && ex.getRequestMethod().equals("GET")) {
                byte[] page = "<html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1></body></html>"
                        .getBytes(java.nio.charset.StandardCharsets.UTF_8);
                ex.getResponseHeaders().set("Content-Type", "text/html; charset=utf-8");
                ex.sendResponseHeaders(200, page.length);
                ex.getResponseBody().write(page);
                return;
            }
            AtomicInteger gz = gzipNext.get(name);
            if (gz != null && gz.getAndDecrement() > 0 && ex.getRequestMethod().equals("GET")) {
                java.io.ByteArrayOutputStream zipped = new java.io.ByteArrayOutputStream();
                try (var z = new java.util.zip.GZIPOutputStream(zipped)) {
                    z.write(Files.readAllBytes(p));
                }
                ex.getResponseHeaders().set("Content-Encoding", "gzip");
                ex.sendResponseHeaders(200, zipped.size());
                ex.getResponseBody().write(zipped.toByteArray());
                return;
            }
            if (ex.getRequestMethod().equals("HEAD")) {
                ex.getResponseHeaders().add("Content-Length", Long.toString(Files.size(p)));
                ex.sendResponseHeaders(200, -1);
                return;
            }
            byte[] all = Files.readAllBytes(p);
            String range = ex.getRequestHeaders().getFirst("Range");
            int from = 0;
            if (range != null) {
                rangeRequests.computeIfAbsent(name, k -> new AtomicInteger()).incrementAndGet();
                ranges.computeIfAbsent(name, k -> new CopyOnWriteArrayList<>()).add(range);
                from = Integer.parseInt(range.substring("bytes=".length(), range.indexOf('-')));
                AtomicInteger wrong = wrongRangeNext.get(name);
                if (wrong != null && wrong.getAndDecrement() > 0) {
                    from++; // a proxy that lost count: the bytes from the next one, labelled as such
                }
                String last = range.substring(range.indexOf('-') + 1);
                if (!last.isEmpty()) {
                    all = java.util.Arrays.copyOf(all, Math.min(all.length, Integer.parseInt(last) + 1)); // the body ends there
                }
                ex.getResponseHeaders().add("Content-Range", "bytes " + from + "-" + (all.length - 1) + "/" + Files.size(p));
                ex.sendResponseHeaders(206, all.length - from);
                bytesSent.addAndGet(all.length - from);
            } else {
                bytesSent.addAndGet(all.length);
                ex.sendResponseHeaders(200, all.length);
            }
            OutputStream out = ex.getResponseBody();
            AtomicInteger drop = dropNext.get(name);
            if (range == null && drop != null && drop.getAndDecrement() > 0) {
                out.write(all, 0, all.length / 2);
                out.flush();
                // cut the connection mid-body
                throw new IOException("dropped on purpose");
            }
            Integer stall = stallAt.getOrDefault(name, new ArrayDeque<>()).poll();
            if (stall != null && stall >= from) {
                out.write(all, from, Math.min(all.length, stall) - from);
                out.flush();
                pause(stallMillis);
                // the client has given up on this response by now and asked for the rest again
                throw new IOException("stalled on purpose");
            }
            Trickle t = trickle.get(name);
            for (int at = from; t != null && at < all.length; at += t.pieceBytes()) {
                pause(t.pauseMillis());
                out.write(all, at, Math.min(t.pieceBytes(), all.length - at));
                out.flush();
            }
            if (t == null) {
                out.write(all, from, all.length - from);
            }
        }
    }

    /** Sets the version headers; false when the request asks for another version (If-Match, If-Unmodified-Since). */
    private boolean versionHeaders(HttpExchange ex, Path p) throws IOException {
        long modified = Files.getLastModifiedTime(p).toMillis() / 1000 * 1000;
        String date = java.time.format.DateTimeFormatter.RFC_1123_DATE_TIME.format(
                java.time.ZonedDateTime.ofInstant(java.time.Instant.ofEpochMilli(modified), java.time.ZoneOffset.UTC));
        String etag = "\"" + Integer.toHexString(java.util.Arrays.hashCode(Files.readAllBytes(p))) + "\"";
        ex.getResponseHeaders().set("Last-Modified", date);
        if (!lastModifiedOnly) {
            ex.getResponseHeaders().set("ETag", etag);
        }
        String ifMatch = ex.getRequestHeaders().getFirst("If-Match");
        if (ifMatch != null && !ifMatch.equals(etag)) {
            return false;
        }
        String since = ex.getRequestHeaders().getFirst("If-Unmodified-Since");
        if (since != null) {
            long asked = java.time.ZonedDateTime.parse(since, java.time.format.DateTimeFormatter.RFC_1123_DATE_TIME)
                    .toInstant().toEpochMilli();
            return modified <= asked;
        }
        return true;
    }

    private static void pause(long millis) throws IOException {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("server closing");
        }
    }

    @Override
    public void close() {
        server.stop(0);
        ((java.util.concurrent.ExecutorService) server.getExecutor()).shutdownNow();
    }
}
