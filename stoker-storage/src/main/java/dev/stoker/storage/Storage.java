package dev.stoker.storage;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/** One way to open data by location: a local path, {@code file://}, {@code http://} or {@code https://}. */
public final class Storage {
    private Storage() {
    }

    public static boolean isRemote(String location) {
        return location.startsWith("http://") || location.startsWith("https://");
    }

    /** A stream of the object's bytes; remote reads retry and resume (see {@link HttpSource}). */
    public static InputStream open(String location) throws IOException {
        if (isRemote(location)) {
            return new HttpSource(URI.create(location), HttpSource.Retry.standard(), Duration.ofSeconds(30));
        }
        return Files.newInputStream(localPath(location));
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
