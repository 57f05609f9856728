package dev.stoker.storage;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

/**
 * One way to open and list data by location: a local path, {@code file://}, {@code http://},
 * {@code https://} or {@code s3://bucket/key} (see {@link S3Objects} for how S3 is configured).
 */
public final class Storage {
    private Storage() {
    }

    public static boolean isRemote(String location) {
        return location.startsWith("http://") || location.startsWith("https://") || location.startsWith("s3://");
    }

    /** A stream of the object's bytes; remote reads retry and resume (see {@link RetryingSource}). */
    public static InputStream open(String location) throws IOException {
        if (location.startsWith("s3://")) {
            return S3Objects.open(location, RetryingSource.Retry.standard());
        }
        if (isRemote(location)) {
            return new HttpSource(URI.create(location), RetryingSource.Retry.standard(), Duration.ofSeconds(30));
        }
        return Files.newInputStream(localPath(location));
    }

    /**
     * The objects a location names, in order: every object under an {@code s3://} prefix; every
     * regular file in a local directory, or in its parent whose name starts with the last
     * component. HTTP has no listing: name the shards one by one.
     */
    public static List<String> list(String location) throws IOException {
        if (location.startsWith("s3://")) {
            return S3Objects.list(location);
        }
        if (isRemote(location)) {
            throw new IllegalArgumentException(location + ": HTTP servers cannot be listed; give each shard's URL");
        }
        Path p = localPath(location);
        Path dir = Files.isDirectory(p) ? p : p.toAbsolutePath().getParent();
        String start = Files.isDirectory(p) ? "" : p.getFileName().toString();
        if (dir == null || !Files.isDirectory(dir)) {
            throw new NoSuchFileException(location, null, "no such directory");
        }
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(f -> Files.isRegularFile(f) && f.getFileName().toString().startsWith(start))
                    .map(Path::toString).sorted().toList();
        }
    }

    /** A location and its size in bytes. */
    public record Entry(String location, long size) {
    }

    /** The object's size in bytes (a HEAD request for HTTP, HeadObject for S3). */
    public static long size(String location) throws IOException {
        if (location.startsWith("s3://")) {
            return S3Objects.size(location);
        }
        if (isRemote(location)) {
            return HttpSource.size(URI.create(location));
        }
        return Files.size(localPath(location));
    }

    static Path localPath(String location) {
        return location.startsWith("file://") ? Path.of(URI.create(location)) : Path.of(location);
    }

    /** The last path component, for names and errors. */
    static String baseName(String location) {
        String s = location;
        int q = s.indexOf('?');
        if (q >= 0) {
            s = s.substring(0, q);
        }
        return s.substring(s.lastIndexOf('/') + 1);
    }
}
