package dev.stoker.sources;

import dev.stoker.sources.Schema.Format;
import dev.stoker.sources.Schema.Min;
import dev.stoker.storage.io.UserCache;
import java.nio.file.Path;

/**
 * Where a source's remote files (HTTP, S3) are cached locally, and the cache's bound in bytes.
 *
 * @param shardCache      the cache's folder, one of the user's own (another user's is refused); null:
 *                        {@code shards} in the user's cache ({@code ~/.cache/stoker/shards})
 * @param shardCacheBytes the most bytes it holds
 */
public record RemoteCache(@Format("folder") String shardCache, @Min(1) long shardCacheBytes) {
    /** The user's {@code ~/.cache/stoker/shards} ({@code $XDG_CACHE_HOME}), up to 10 GB. */
    public static final RemoteCache DEFAULT = new RemoteCache(null, 10_000_000_000L);

    public RemoteCache {
        SpecException.atLeast("shard_cache_bytes", shardCacheBytes, 1);
    }

    /** The cache's folder. */
    public Path dir() {
        return shardCache != null ? Path.of(shardCache) : UserCache.dir("shards");
    }
}
