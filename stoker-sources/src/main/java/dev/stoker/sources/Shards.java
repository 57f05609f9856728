package dev.stoker.sources;

import dev.stoker.ErrorPolicy;
import dev.stoker.formats.io.RemoteShards;
import dev.stoker.formats.io.TarReader;
import dev.stoker.formats.tar.TarDataset;
import dev.stoker.formats.tar.TarShards;
import dev.stoker.storage.Locations;
import dev.stoker.storage.ShardCache;
import dev.stoker.storage.ShardPattern;
import dev.stoker.storage.Storage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * WebDataset tar shards: brace patterns ({@code train-{000000..000146}.tar}), local paths,
 * http(s):// and s3:// URLs, an {@code s3://bucket/prefix/} ending in / for every object under it,
 * or a glob ({@code s3://bucket/train/*.tar}); each sample's members made a batch row by
 * {@code images}.
 *
 * <p>Local plain tars are read at random through an index; compressed ones, and all of them with
 * {@code stream} or a shuffle window, as a stream (shard order shuffled, each shard front to back).
 * Remote shards stream through the local shard cache; read through the index (a global shuffle, as
 * local shards) when every shard is plain, none is streamed, and all of them fit the cache.
 */
public record Shards(List<String> paths, boolean stream, Images images, RemoteCache cache) implements SourceSpec {
    public Shards {
        paths = paths == null ? List.of() : List.copyOf(paths);
        images = images == null ? Images.DEFAULT : images;
        cache = cache == null ? RemoteCache.DEFAULT : cache;
    }

    /** The shards {@code patterns} name, with training crops of 224, through the index where it can. */
    public static Shards of(String... patterns) {
        return new Shards(List.of(patterns), false, Images.DEFAULT, RemoteCache.DEFAULT);
    }

    /** The same, made batches by {@code images}. */
    public Shards withImages(Images images) {
        return new Shards(paths, stream, images, cache);
    }

    /** The same, read as a stream ({@code true}) or through the index where it can. */
    public Shards withStream(boolean stream) {
        return new Shards(paths, stream, images, cache);
    }

    @Override
    public Recipe open(LoaderSpec loader) throws IOException {
        if (paths.isEmpty()) {
            throw new SpecException("paths", "needs at least one shard or pattern");
        }
        boolean streamed = stream || loader.windowed();
        ErrorPolicy errors = loader.errorPolicy();
        if (paths.stream().anyMatch(Locations::isRemote)) {
            return remote(streamed, errors);
        }
        List<Path> shards = new ArrayList<>();
        for (String s : expand(paths)) {
            shards.add(Path.of(s));
        }
        return Recipe.open(kind(), r -> {
            if (!streamed) {
                try {
                    // opening stats every shard, and names one that is missing
                    TarDataset data = r.hold(new TarDataset(shards, shards.stream().map(Path::toString).toList(), true,
                            errors));
                    images.serve(r, data);
                    return;
                } catch (TarDataset.CompressedShardException e) {
                    // compressed shards are read as streams: shard order shuffled, a shuffle window for samples
                }
            }
            for (Path p : shards) {
                if (!Files.isRegularFile(p)) {
                    throw new NoSuchFileException(p.toString());
                }
            }
            images.serve(r, new TarShards(shards));
        });
    }

    private Recipe remote(boolean streamed, ErrorPolicy errors) throws IOException {
        List<String> locations = new ArrayList<>();
        for (String p : paths) {
            locations.addAll(Locations.isListing(p) ? Storage.list(p) : expand(List.of(p)));
        }
        if (locations.isEmpty()) {
            throw new SpecException(null, "no shards under " + String.join(" ", paths));
        }
        return Recipe.open(kind(), r -> {
            Path dir = cache.dir();
            ShardCache shardCache = r.hold(new ShardCache(dir, cache.shardCacheBytes(), 4));
            r.report(() -> {
                var st = shardCache.stats();
                return String.format(Locale.ROOT, "shard cache %s: %d hits, %d misses, %.1f MB downloaded, %.2f s waited",
                        dir, st.hits(), st.misses(), st.bytesDownloaded() / 1e6, st.waitNanos() / 1e9);
            });
            // compressed shards have no index: they stream, as local ones
            if (streamed || !locations.stream().allMatch(l -> Locations.baseName(l).endsWith(".tar"))) {
                images.serve(r, RemoteShards.tar(locations, shardCache, 2));
            } else {
                throughIndex(r, locations, shardCache, errors);
            }
        });
    }

    /**
     * Remote plain shards in the same order as local ones (a global shuffle through the index):
     * every shard in the cache first, pinned while the recipe is open, then read as local shards
     * under their URLs.
     */
    private void throughIndex(Recipe r, List<String> locations, ShardCache shardCache, ErrorPolicy errors)
            throws IOException {
        long total = 0;
        for (String l : locations) {
            total += Storage.size(l);
        }
        if (total > cache.shardCacheBytes()) {
            throw SpecException.naming("shard_cache_bytes", String.format(Locale.ROOT, "is too small for a shuffle over all %d "
                    + "shards, read through the cache: their %,d bytes do not fit its %,d; raise it, or read them as a "
                    + "stream ({stream}, with {shuffle_window_bytes} for a window of samples)", locations.size(), total,
                    cache.shardCacheBytes()));
        }
        locations.forEach(shardCache::prefetch); // downloads run in parallel
        List<Path> local = new ArrayList<>();
        for (String l : locations) {
            // a copy that is no tar archive (an error page sent as a success) is fetched again, once
            local.add(shardCache.acquire(l, TarReader::checkStart));
            r.hold(() -> shardCache.release(l));
        }
        images.serve(r, r.hold(new TarDataset(local, locations, false, errors)));
    }

    private static List<String> expand(List<String> patterns) {
        try {
            return ShardPattern.expand(patterns);
        } catch (IllegalArgumentException e) {
            throw new SpecException(null, e.getMessage());
        }
    }
}
