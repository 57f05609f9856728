package dev.stoker.formats.io;

import dev.stoker.StreamingDataset;
import dev.stoker.formats.tar.TarSample;
import dev.stoker.formats.tar.TarShards;
import dev.stoker.storage.ShardCache;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * Shards at remote locations (any store: HTTP, S3, a mounted one), read through a
 * {@link ShardCache} by a format's local reader: each shard is downloaded (or found) whole, read
 * locally, and released; when a shard opens, the next
 * {@code ahead} shards are downloaded in the background: the next ones in the loader's order
 * (from {@link #plan}, so shuffled shards are fetched in the order they will be read), or of the
 * list when no plan was given. The cache is told the order still to come, so it evicts the shards
 * needed latest (or never again) first.
 */
public final class RemoteShards<T> implements StreamingDataset<T> {
    /** How a format reads one shard once it is a local file. */
    @FunctionalInterface
    public interface Opener<T> {
        /** A reader of the shard at {@code local}, whose errors name it {@code name}. */
        ShardReader<T> open(Path local, String name) throws IOException;
    }

    private final List<String> locations;
    private final ShardCache cache;
    private final int ahead;
    private final Opener<T> opener;
    private final ShardCache.Check check;
    private int[] plan;
    private int cursor;

    public RemoteShards(List<String> locations, ShardCache cache, int ahead, Opener<T> opener) {
        this(locations, cache, ahead, opener, (local, name) -> { });
    }

    /** With {@code check}, a cached copy its format cannot read is evicted and fetched again once ({@link ShardCache#acquire(String, ShardCache.Check)}). */
    public RemoteShards(List<String> locations, ShardCache cache, int ahead, Opener<T> opener, ShardCache.Check check) {
        this.locations = List.copyOf(locations);
        this.cache = cache;
        this.ahead = ahead;
        this.opener = opener;
        this.check = check;
    }

    /** WebDataset tar shards (plain or compressed) at these locations. */
    public static RemoteShards<TarSample> tar(List<String> locations, ShardCache cache, int ahead) {
        return new RemoteShards<>(locations, cache, ahead,
                (local, name) -> new TarShards(List.of(local), List.of(name)).open(0), TarReader::checkStart);
    }

    @Override
    public int shards() {
        return locations.size();
    }

    @Override
    public String shardName(int shard) {
        return locations.get(shard);
    }

    /** The shards' names ({@link Fingerprints#names}): the same as {@link TarShards}' for a local copy. */
    @Override
    public long fingerprint() {
        return Fingerprints.names(locations);
    }

    /**
     * The shard's ends ({@link Fingerprints#ends}) in its local copy (fetched if the cache does
     * not hold it): the same as {@link TarShards}' for the same bytes.
     */
    @Override
    public long shardCheck(int shard) throws IOException {
        String location = locations.get(shard);
        Path local = cache.acquire(location, check);
        try {
            return Fingerprints.ends(local);
        } finally {
            cache.release(location);
        }
    }

    @Override
    public String name() {
        return locations.isEmpty() ? "remote" : locations.get(0);
    }

    @Override
    public synchronized void plan(int[] shards) {
        this.plan = shards.clone();
        this.cursor = 0;
        List<String> order = new java.util.ArrayList<>(shards.length);
        for (int s : shards) {
            order.add(locations.get(s));
        }
        cache.plan(order);
    }

    /**
     * Tells the cache where the reader is and downloads the next {@code ahead} shards: of the
     * plan, from this shard's next occurrence in it (a little back from the last one opened, as
     * parallel opens arrive slightly out of order), or of the list when it is not in the plan.
     */
    private synchronized void lookAhead(int shard) {
        int at = -1;
        if (plan != null) {
            for (int i = Math.max(0, cursor - 8); i < plan.length && at < 0; i++) {
                if (plan[i] == shard) {
                    at = i;
                }
            }
        }
        if (at < 0) {
            for (int k = 1; k <= ahead && shard + k < locations.size(); k++) {
                cache.prefetch(locations.get(shard + k));
            }
            return;
        }
        cursor = Math.max(cursor, at + 1);
        cache.reached(at);
        for (int k = 1; k <= ahead && at + k < plan.length; k++) {
            cache.prefetch(locations.get(plan[at + k]));
        }
    }

    @Override
    public ShardReader<T> open(int shard) throws IOException {
        String location = locations.get(shard);
        lookAhead(shard);
        Path local = cache.acquire(location, check);
        ShardReader<T> inner;
        try {
            inner = opener.open(local, location);
        } catch (IOException | RuntimeException e) {
            cache.release(location);
            throw e;
        }
        return new ShardReader<>() {
            @Override
            public T next() throws IOException {
                return inner.next();
            }

            @Override
            public void close() throws IOException {
                try {
                    inner.close();
                } finally {
                    cache.release(location);
                }
            }
        };
    }
}
