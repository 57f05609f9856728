package dev.stoker.storage;

import dev.stoker.StreamingDataset;
import dev.stoker.formats.TarSample;
import dev.stoker.formats.TarShards;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * WebDataset tar shards at remote locations, read through a {@link ShardCache}: each shard is
 * downloaded (or found) whole, read locally, and released; when a shard opens, the next
 * {@code ahead} shards of the list are downloaded in the background.
 */
public final class RemoteShards implements StreamingDataset<TarSample> {
    private final List<String> locations;
    private final ShardCache cache;
    private final int ahead;

    public RemoteShards(List<String> locations, ShardCache cache, int ahead) {
        this.locations = List.copyOf(locations);
        this.cache = cache;
        this.ahead = ahead;
    }

    @Override
    public int shards() {
        return locations.size();
    }

    @Override
    public String shardName(int shard) {
        return locations.get(shard);
    }

    @Override
    public String name() {
        return locations.isEmpty() ? "remote" : locations.get(0);
    }

    @Override
    public ShardReader<TarSample> open(int shard) throws IOException {
        String location = locations.get(shard);
        for (int k = 1; k <= ahead && shard + k < locations.size(); k++) {
            cache.prefetch(locations.get(shard + k));
        }
        Path local = cache.acquire(location);
        ShardReader<TarSample> inner;
        try {
            inner = new TarShards(List.of(local)).open(0);
        } catch (IOException | RuntimeException e) {
            cache.release(location);
            throw e;
        }
        return new ShardReader<>() {
            @Override
            public TarSample next() throws IOException {
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
