package dev.stoker.storage.testing;

import dev.stoker.storage.Locations;
import dev.stoker.storage.Storage;
import dev.stoker.storage.Store;
import dev.stoker.storage.TestTransport;

import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;

/**
 * Objects held in memory under {@code mem://NAME/}, with faults injected on demand: the store the
 * contract tests run every format against, beside local files, HTTP and S3. Its streams are
 * retrying streams ({@link TestTransport#retrying}), as remote ones are, so an injected fault is retried and resumed by the
 * same code: reads that deliver at most {@link #chunk} bytes (1: one byte at a time), bodies cut
 * after {@link #cutAfter} bytes (every request fails mid-read and is resumed from its last byte),
 * and opens that fail ({@link #failOpens}). Close to unmount it.
 */
public final class MemoryStore implements Store, AutoCloseable {
    private final String prefix;
    private final Map<String, byte[]> objects = new ConcurrentSkipListMap<>();
    private final Map<String, AtomicInteger> requests = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> failOpens = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> pageOpens = new ConcurrentHashMap<>();
    private final Map<String, byte[]> pages = new ConcurrentHashMap<>();
    private volatile int chunk = Integer.MAX_VALUE;
    private volatile long cutAfter = Long.MAX_VALUE;

    private MemoryStore(String name) {
        this.prefix = "mem://" + name + "/";
    }

    /** A new, empty store mounted at {@code mem://NAME/}. */
    public static MemoryStore mount(String name) {
        MemoryStore s = new MemoryStore(name);
        Storage.mount(s.prefix, s);
        return s;
    }

    /** The location of {@code key} in this store. */
    public String location(String key) {
        return prefix + key;
    }

    public void put(String key, byte[] bytes) {
        objects.put(key, bytes.clone());
    }

    public void delete(String key) {
        objects.remove(key);
    }

    /** Every read delivers at most {@code bytes} bytes (1: one byte at a time). */
    public MemoryStore chunk(int bytes) {
        if (bytes < 1) {
            throw new IllegalArgumentException("a chunk is at least one byte: " + bytes);
        }
        this.chunk = bytes;
        return this;
    }

    /** Every body fails, as a dropped connection does, once it has delivered {@code bytes} bytes (Long.MAX_VALUE: never). */
    public MemoryStore cutAfter(long bytes) {
        if (bytes < 1) {
            throw new IllegalArgumentException("a body is cut after at least one byte: " + bytes);
        }
        this.cutAfter = bytes;
        return this;
    }

    /** The next {@code n} requests for {@code key} fail, as a 503 does. */
    public MemoryStore failOpens(String key, int n) {
        failOpens.computeIfAbsent(key, k -> new AtomicInteger()).set(n);
        return this;
    }

    /**
     * The next {@code n} requests for {@code key} succeed with {@code page} instead of the object,
     * its size announced as theirs: a server's error page sent with a success status.
     */
    public MemoryStore sendsInstead(String key, byte[] page, int n) {
        pages.put(key, page.clone());
        pageOpens.computeIfAbsent(key, k -> new AtomicInteger()).set(n);
        return this;
    }

    /** The requests made for {@code key} so far (each open and each resumed range). */
    public int requests(String key) {
        AtomicInteger n = requests.get(key);
        return n == null ? 0 : n.get();
    }

    private String key(String location) {
        if (!location.startsWith(prefix)) {
            throw new IllegalArgumentException(location + ": not under " + prefix);
        }
        return location.substring(prefix.length());
    }

    private byte[] object(String location) throws IOException {
        byte[] b = objects.get(key(location));
        if (b == null) {
            throw TestTransport.permanent("404 no such object");
        }
        return b;
    }

    @Override
    public InputStream open(String location, long offset, long length) {
        String key = key(location);
        return TestTransport.retrying(location, 6, Duration.ofMillis(1), Duration.ofMillis(10), (position, objectLength) -> {
            requests.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
            AtomicInteger fail = failOpens.get(key);
            if (fail != null && fail.getAndDecrement() > 0) {
                throw new IOException("injected: 503 Slow Down");
            }
            AtomicInteger page = pageOpens.get(key);
            byte[] b = page != null && page.getAndDecrement() > 0 ? pages.get(key) : object(location);
            objectLength.accept(b.length);
            return new Body(b, (int) Math.min(position, b.length));
        }, offset, length);
    }

    /** An object's bytes from a position, delivered in chunks and cut where the faults say. */
    private final class Body extends InputStream {
        private final byte[] bytes;
        private int at;
        private long sent;

        Body(byte[] bytes, int from) {
            this.bytes = bytes;
            this.at = from;
        }

        @Override
        public int read() {
            throw new UnsupportedOperationException("read in chunks");
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (at >= bytes.length) {
                return -1;
            }
            if (sent >= cutAfter) {
                throw new IOException("injected: connection lost after " + sent + " bytes");
            }
            int n = (int) Math.min(Math.min(len, chunk), Math.min(bytes.length - at, cutAfter - sent));
            System.arraycopy(bytes, at, b, off, n);
            at += n;
            sent += n;
            return n;
        }
    }

    @Override
    public long size(String location) throws IOException {
        if (!objects.containsKey(key(location))) {
            throw new java.nio.file.NoSuchFileException(location, null, "404 no such object");
        }
        return object(location).length;
    }

    @Override
    public List<Storage.Entry> list(String location) {
        String key = key(location);
        int glob = Locations.firstWildcard(key);
        String start = glob < 0 ? key : key.substring(0, glob);
        Pattern keep = glob < 0 ? null : Pattern.compile(Locations.globToRegex(key));
        List<Storage.Entry> out = new ArrayList<>();
        for (Map.Entry<String, byte[]> e : objects.entrySet()) {
            if (e.getKey().startsWith(start) && (keep == null || keep.matcher(e.getKey()).matches())) {
                out.add(new Storage.Entry(prefix + e.getKey(), e.getValue().length));
            }
        }
        return out;
    }

    @Override
    public void close() {
        Storage.unmount(prefix, this);
    }
}
