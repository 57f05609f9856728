package dev.stoker.cli;

import dev.stoker.sources.RemoteCache;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** The flags of {@link RemoteCache}: where the sources that read remote files cache them. */
final class CacheOptions {
    @Option(names = {"--shard-cache", "--cache-dir"}, paramLabel = "DIR", description = "Where remote files are cached, a folder of your own (default: ~/.cache/stoker/shards).")
    Path cacheDir;

    @Option(names = {"--shard-cache-bytes", "--cache-size"}, paramLabel = "BYTES", description = "The cache's limit in bytes (default ${DEFAULT-VALUE}).")
    long cacheSize;

    RemoteCache spec() {
        return new RemoteCache(cacheDir == null ? null : cacheDir.toString(), cacheSize);
    }
}
