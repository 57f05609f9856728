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
 * bursts of 503, a connection dropped mid-body, a body that trickles or stalls, missing objects.
 */
public final class TestServer implements AutoCloseable {
    final HttpServer server;
    final Path root;
    public final Map<String, AtomicInteger> requests = new ConcurrentHashMap<>();
    public final Map<String, AtomicInteger> rangeRequests = new ConcurrentHashMap<>();
    /** Body bytes sent, all objects together. */
    public final java.util.concurrent.atomic.AtomicLong bytesSent = new java.util.concurrent.atomic.AtomicLong();
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
            AtomicInteger fail = failNext.get(name);
            if (fail != null && fail.getAndDecrement() > 0) {
                ex.sendResponseHeaders(503, -1);
                return;
            }
            Path p = root.resolve(name);
            if (!Files.isRegularFile(p)) {
                ex.sendResponseHeaders(404, -1);
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
