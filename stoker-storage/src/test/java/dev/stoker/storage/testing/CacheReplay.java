package dev.stoker.storage.testing;

import dev.stoker.storage.*;

import java.io.IOException;
import java.util.List;

/**
 * Replays a loader's shard order through a {@link ShardCache}, shard by shard, and reports the
 * bytes downloaded in each epoch: the measure of how well a cache size and eviction policy serve a
 * training run. With {@code plan}, the cache is told the rest of the epoch's order before each
 * epoch's order and how far the reader is (next-use eviction, as the formats' remote shards do);
 * without, it evicts the least recently used shard.
 */
public final class CacheReplay {
    private CacheReplay() {
    }

    /** Bytes downloaded per epoch when {@code epochs} (each a list of locations, in order) are read through {@code cache}. */
    public static long[] bytesPerEpoch(List<List<String>> epochs, ShardCache cache, boolean plan) throws IOException {
        long[] out = new long[epochs.size()];
        for (int e = 0; e < epochs.size(); e++) {
            List<String> order = epochs.get(e);
            long before = cache.stats().bytesDownloaded();
            if (plan) {
                cache.plan(order);
            }
            for (int i = 0; i < order.size(); i++) {
                if (plan) {
                    cache.reached(i);
                }
                cache.acquire(order.get(i));
                cache.release(order.get(i));
            }
            out[e] = cache.stats().bytesDownloaded() - before;
        }
        return out;
    }
}
