package dev.stoker.sources;

import java.nio.file.Path;

/**
 * Where a source's remote files (HTTP, S3) are cached locally, and the cache's bound in bytes.
 *
 * @param cacheDir  the cache's folder; null: {@code stoker-shard-cache} in the temporary directory
 * @param cacheSize the most bytes it holds
 */
public record RemoteCache(String cacheDir, long cacheSize) {
    /** The temporary directory's {@code stoker-shard-cache}, up to 10 GB. */
    public static final RemoteCache DEFAULT = new RemoteCache(null, 10_000_000_000L);

    public RemoteCache {
        SpecException.atLeast("cache_size", cacheSize, 1);
    }

    /** The cache's folder. */
    public Path dir() {
        return cacheDir != null ? Path.of(cacheDir) : Path.of(System.getProperty("java.io.tmpdir"), "stoker-shard-cache");
    }
}
