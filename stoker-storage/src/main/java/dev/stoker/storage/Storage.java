package dev.stoker.storage;

import dev.stoker.storage.io.PendingFile;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * One way to open, size, list and read ranges of data by location: a local path,
 * {@code file://}, {@code http://}, {@code https://}, {@code s3://bucket/key} (see
 * {@code S3Objects} for how S3 is configured), or a prefix another {@link Store} was mounted at
 * (an in-memory store in tests: the test-jar's {@code testing.MemoryStore}). Every format reads its bytes through here, so none
 * knows where they live.
 */
public final class Storage {
    private static final Map<String, Store> MOUNTS = new ConcurrentHashMap<>();

    private Storage() {
    }

    /** Serves every location that starts with {@code prefix} (such as {@code mem://name/}) from {@code store}. */
    public static void mount(String prefix, Store store) {
        if (MOUNTS.putIfAbsent(prefix, store) != null) {
            throw new IllegalStateException(prefix + " is mounted already");
        }
    }

    /** Undoes {@link #mount}, if {@code store} is still the one mounted there. */
    public static void unmount(String prefix, Store store) {
        MOUNTS.remove(prefix, store);
    }

    /** The mounted store that serves {@code location}, or null. */
    static Store mounted(String location) {
        if (MOUNTS.isEmpty()) {
            return null;
        }
        for (Map.Entry<String, Store> e : MOUNTS.entrySet()) {
            if (location.startsWith(e.getKey())) {
                return e.getValue();
            }
        }
        return null;
    }

    /**
     * How long a remote read waits for its next bytes (and an HTTP request for its response)
     * before it fails and is retried: the system property {@code stoker.read.timeout} in seconds
     * ({@code -Dstoker.read.timeout=5}, or {@code 0.5}), 30 by default.
     */
    static Duration readTimeout() {
        String s = System.getProperty("stoker.read.timeout");
        if (s == null || s.isBlank()) {
            return Duration.ofSeconds(30);
        }
        double seconds;
        try {
            seconds = Double.parseDouble(s.trim());
        } catch (NumberFormatException e) {
            seconds = -1;
        }
        if (!(seconds > 0 && seconds < 1e9)) {
            throw new IllegalArgumentException("stoker.read.timeout=" + s + ": expected a positive number of seconds");
        }
        return Duration.ofMillis(Math.max(1, Math.round(seconds * 1000)));
    }

    /** Whether the bytes are anywhere but in a local file: HTTP, S3 or a mounted store. */

    /**
     * A stream of the object's bytes; remote reads retry and resume (see {@code RetryingSource}),
     * and each waits at most {@link #readTimeout()} for its next bytes.
     */
    public static InputStream open(String location) throws IOException {
        return open(location, 0, -1);
    }

    /**
     * The bytes {@code [offset, offset + length)} of the object (to its end when {@code length}
     * is -1), as a stream: a ranged request for remote objects, retried and resumed within the range.
     */
    public static InputStream open(String location, long offset, long length) throws IOException {
        try {
            return openAt(location, offset, length);
        } catch (IOException e) {
            throw named(location, e);
        }
    }

    private static InputStream openAt(String location, long offset, long length) throws IOException {
        Store store = mounted(location);
        if (store != null) {
            return store.open(location, offset, length);
        }
        if (location.startsWith("s3://")) {
            return pinned(location, S3Objects.open(location, RetryingSource.Retry.standard(), readTimeout()).range(offset, length));
        }
        if (Locations.isRemote(location)) {
            return pinned(location, new HttpSource(URI.create(location), RetryingSource.Retry.standard(), readTimeout())
                    .range(offset, length));
        }
        FileChannel ch = FileChannel.open(Locations.localPath(location));
        try {
            ch.position(offset);
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
        InputStream in = Channels.newInputStream(ch);
        return length < 0 ? in : new Bounded(in, length);
    }

    /**
     * NOTE [One version]: a remote object is read as the version this process first saw, whole
     * downloads, their resumed ranges and the separate ranged reads of one file (a Parquet file's
     * footer, then its row groups) alike. The first response's ETag (or, without one, its
     * Last-Modified) is kept per location; every later request asks for that version only
     * ({@code If-Match}, {@code If-Unmodified-Since}) and every response is compared with it. An
     * object replaced meanwhile fails the read, naming both versions: never a splice of the two.
     */
    private static final java.util.concurrent.ConcurrentHashMap<String, String> VERSIONS = new java.util.concurrent.ConcurrentHashMap<>();

    private static RetryingSource pinned(String location, RetryingSource source) {
        String pinned = VERSIONS.get(location);
        return source.pin(pinned, v -> VERSIONS.putIfAbsent(location, v),
                () -> VERSIONS.remove(location)); // changed: a later read takes the new version
    }

    /**
     * Fills {@code dst} with the object's bytes from {@code offset}: one ranged request for a
     * remote object, a positioned read of a local file. Fails naming the location and the offset
     * where the object ends first.
     */
    public static void readFully(String location, long offset, ByteBuffer dst) throws IOException {
        int want = dst.remaining();
        if (!Locations.isRemote(location)) {
            try (FileChannel ch = FileChannel.open(Locations.localPath(location))) {
                for (long at = offset; dst.hasRemaining(); ) {
                    int n = ch.read(dst, at);
                    if (n < 0) {
                        throw new EOFException(location + ": ends at byte " + at + ", " + dst.remaining()
                                + " bytes short of " + (offset + want));
                    }
                    at += n;
                }
            }
            return;
        }
        try (InputStream in = open(location, offset, want)) {
            byte[] chunk = dst.hasArray() ? null : new byte[Math.min(want, 1 << 16)];
            while (dst.hasRemaining()) {
                int n = chunk == null
                        ? in.read(dst.array(), dst.arrayOffset() + dst.position(), dst.remaining())
                        : in.read(chunk, 0, Math.min(chunk.length, dst.remaining()));
                if (n < 0) {
                    throw new EOFException(location + ": ends at byte " + (offset + want - dst.remaining()) + ", "
                            + dst.remaining() + " bytes short of " + (offset + want));
                }
                if (chunk == null) {
                    dst.position(dst.position() + n);
                } else {
                    dst.put(chunk, 0, n);
                }
            }
        }
    }

    /** The first {@code limit} bytes of a stream. */
    private static final class Bounded extends java.io.FilterInputStream {
        private long left;

        Bounded(InputStream in, long limit) {
            super(in);
            this.left = limit;
        }

        @Override
        public int read() throws IOException {
            if (left <= 0) {
                return -1;
            }
            int b = super.read();
            left -= b < 0 ? 0 : 1;
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (left <= 0) {
                return -1;
            }
            int n = super.read(b, off, (int) Math.min(len, left));
            left -= Math.max(n, 0);
            return n;
        }
    }

    /**
     * The objects a location names, in order: every object under an {@code s3://} prefix; every
     * regular file in a local directory, or in its parent whose name starts with the last
     * component. A last component with a glob ({@code *} within a name, {@code **} across
     * {@code /}, {@code ?}) keeps only the names it matches: {@code s3://bucket/train/*.tar}.
     * HTTP has no listing: name the shards one by one or with a brace pattern.
     */
    public static List<String> list(String location) throws IOException {
        if (location.startsWith("s3://") || mounted(location) != null) {
            return entries(location).stream().map(Entry::location).toList();
        }
        if (Locations.isRemote(location)) {
            throw new IllegalArgumentException(location + ": HTTP servers cannot be listed; give each shard's URL");
        }
        // local: a directory, or a directory and a name prefix or glob
        int glob = Locations.firstWildcard(location);
        boolean whole = glob < 0 && Files.isDirectory(Locations.localPath(location));
        int slash = location.lastIndexOf('/', glob < 0 ? location.length() - 1 : glob);
        Path dir = whole ? Locations.localPath(location) : Locations.localPath(slash < 0 ? "" : location.substring(0, slash + 1));
        String name = whole ? "" : location.substring(slash + 1);
        if (!Files.isDirectory(dir)) {
            throw new NoSuchFileException(location, null, "no such directory");
        }
        Pattern keep = glob < 0 ? null : Pattern.compile(Locations.globToRegex(name));
        try (Stream<Path> files = name.contains("**") ? Files.walk(dir) : Files.list(dir)) {
            return files.filter(Files::isRegularFile)
                    .filter(f -> {
                        String rel = dir.relativize(f).toString();
                        return keep == null ? rel.startsWith(name) : keep.matcher(rel).matches();
                    })
                    .map(Path::toString).sorted().toList();
        }
    }

    /**
     * The objects under a prefix of a store that lists (S3 or a mounted one), or matching a glob
     * in its last component, with their sizes, in name order.
     */
    public static List<Entry> entries(String location) throws IOException {
        Store store = mounted(location);
        if (store != null) {
            return store.list(location);
        }
        if (location.startsWith("s3://")) {
            return S3Objects.list(location, 1000);
        }
        throw new IllegalArgumentException(location + ": only S3 prefixes are listed with their sizes");
    }

    /**
     * Copies the object at {@code location} into a {@link PendingFile} for {@code target}, calling
     * {@code progress} with each chunk, and returns it finished (on disk, not yet in place: the
     * caller commits it) with the bytes copied, checked against the length the server announced
     * and, where it announced one, the object's digest (computed as the bytes are written, see
     * {@link RetryingSource}). A copy whose digest does not match is made once more from the start;
     * if that fails too, the mismatch is thrown and nothing is left.
     */
    static Copy copy(String location, Path target, java.util.function.LongConsumer progress) throws IOException {
        return copy(location, target, progress, n -> { });
    }

    /** A copy, finished under its temporary name, and its length. */
    record Copy(PendingFile file, long bytes) {
    }

    /** Told the object's size once the source has announced it, before any byte is written. */
    interface SizeKnown {
        /** {@code bytes}: the announced length, or -1 when the source announced none. */
        void accept(long bytes) throws IOException;
    }

    /** {@link #copy}, telling {@code sizeKnown} the object's size before the first byte is written. */
    static Copy copy(String location, Path target, java.util.function.LongConsumer progress, SizeKnown sizeKnown)
            throws IOException {
        try {
            return copyOnce(location, target, progress, sizeKnown);
        } catch (RetryingSource.DigestMismatch first) {
            try {
                // the first copy reported every byte before its end showed the mismatch
                return copyOnce(location, target, n -> { }, sizeKnown);
            } catch (RetryingSource.DigestMismatch again) {
                again.addSuppressed(first);
                throw again;
            }
        }
    }

    private static Copy copyOnce(String location, Path target, java.util.function.LongConsumer progress,
                                 SizeKnown sizeKnown) throws IOException {
        long n = 0;
        byte[] buf = new byte[1 << 16];
        boolean told = false;
        PendingFile file = new PendingFile(target);
        boolean copied = false;
        try (InputStream in = open(location)) {
            java.io.OutputStream out = file.out();
            for (int r; (r = in.read(buf)) > 0; ) {
                if (!told) {
                    // the first response has told the length (remote), or the file has one (local)
                    told = true;
                    sizeKnown.accept(in instanceof RetryingSource s ? s.length() : Files.size(Locations.localPath(location)));
                }
                out.write(buf, 0, r); // a full disk: the error names the target
                n += r;
                progress.accept(r);
            }
            if (!told) {
                sizeKnown.accept(0);
            }
            long announced = in instanceof RetryingSource s ? s.length() : -1;
            if (announced >= 0 && announced != n) {
                throw new IOException(location + ": copied " + n + " bytes, the server announced " + announced);
            }
            file.finish();
            copied = true;
            return new Copy(file, n);
        } finally {
            if (!copied) {
                file.abandon();
            }
        }
    }

    /** A location and its size in bytes. */
    public record Entry(String location, long size) {
    }

    /**
     * The object's size in bytes (a HEAD request for HTTP, HeadObject for S3, retried as reads are);
     * {@link NoSuchFileException} when the object does not exist, and only then.
     */
    public static long size(String location) throws IOException {
        try {
            return sizeOf(location);
        } catch (IOException e) {
            throw named(location, e);
        }
    }

    /**
     * An error that names its location: a library's own (a refused connection, an unknown host)
     * says only what failed, not where.
     */
    /** {@code e}, naming {@code location} in words unless its message already does (a file system's own exceptions do). */
    public static IOException named(String location, IOException e) {
        String m = e.getMessage();
        if (m != null && m.contains(location) || e instanceof NoSuchFileException) {
            return e;
        }
        return new IOException(location + ": " + inWords(e), e);
    }

    /** What a network or I/O failure was, in words: a bare host name becomes "unknown host HOST". */
    static String inWords(Throwable e) {
        String m = e.getMessage();
        return e instanceof java.net.UnknownHostException ? "unknown host " + m : m != null ? m : e.getClass().getSimpleName();
    }

    private static long sizeOf(String location) throws IOException {
        Store store = mounted(location);
        if (store != null) {
            return store.size(location);
        }
        if (location.startsWith("s3://")) {
            return RetryingSource.retried(() -> S3Objects.size(location, v -> seen(location, v)));
        }
        if (Locations.isRemote(location)) {
            return RetryingSource.retried(() -> HttpSource.size(URI.create(location), v -> seen(location, v)));
        }
        return Files.size(Locations.localPath(location));
    }

    private static void seen(String location, String version) {
        if (version != null) {
            VERSIONS.putIfAbsent(location, version);
        }
    }

    /**
     * The version of a remote object this process reads (NOTE [One version]): the one it first
     * saw, or, when it has read none of it yet, the one the server names now (a HEAD request);
     * null for a local file, a mounted store, or a server that names none.
     */
    public static String version(String location) throws IOException {
        if (!Locations.isRemote(location) || mounted(location) != null) {
            return null;
        }
        String v = VERSIONS.get(location);
        if (v == null) {
            size(location);
            v = VERSIONS.get(location);
        }
        return v;
    }

    /** Tests only: forgets the versions seen, as a new process would start. */
    static void forgetVersions() {
        VERSIONS.clear();
    }
}
