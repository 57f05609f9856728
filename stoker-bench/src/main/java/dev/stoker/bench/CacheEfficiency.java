package dev.stoker.bench;

import dev.stoker.storage.testing.CacheReplay;
import dev.stoker.storage.ShardCache;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * Bytes downloaded per epoch by a shard cache under next-use eviction versus LRU, for the same
 * shuffled shard orders. Usage: {@code CacheEfficiency [SHARDS] [CACHE_FRACTION] [EPOCHS] [SEED]}
 * (defaults 100 shards of 1 MB, a cache of 0.3 of the data, 5 epochs, seed 1).
 */
public final class CacheEfficiency {
    public static void main(String[] args) throws Exception {
        int shards = args.length > 0 ? Integer.parseInt(args[0]) : 100;
        double fraction = args.length > 1 ? Double.parseDouble(args[1]) : 0.3;
        int epochs = args.length > 2 ? Integer.parseInt(args[2]) : 5;
        long seed = args.length > 3 ? Long.parseLong(args[3]) : 1;
        int shardBytes = 1 << 20;
        Path root = Files.createTempDirectory("stoker-cache-efficiency");
        try {
            List<String> locations = new ArrayList<>();
            byte[] data = new byte[shardBytes];
            for (int i = 0; i < shards; i++) {
                Path p = root.resolve(String.format("shard-%05d.tar", i));
                Files.write(p, data);
                locations.add(p.toString());
            }
            var orders = shuffledEpochs(locations, seed, epochs);
            long limit = (long) (fraction * shards * shardBytes);
            long[] next;
            long[] lru;
            try (ShardCache c = new ShardCache(root.resolve("next"), limit, 1)) {
                next = CacheReplay.bytesPerEpoch(orders, c, true);
            }
            try (ShardCache c = new ShardCache(root.resolve("lru"), limit, 1)) {
                lru = CacheReplay.bytesPerEpoch(orders, c, false);
            }
            System.out.printf("%d shards of 1 MiB, cache %.0f%% of the data, seed %d%n", shards, fraction * 100, seed);
            System.out.println("epoch  next-use MiB  LRU MiB");
            long tn = 0;
            long tl = 0;
            for (int e = 0; e < epochs; e++) {
                System.out.printf("%5d  %12d  %7d%n", e, next[e] >> 20, lru[e] >> 20);
                if (e > 0) {
                    tn += next[e];
                    tl += lru[e];
                }
            }
            System.out.printf("epochs 1..%d: next-use %d MiB, LRU %d MiB (%.0f%% less)%n", epochs - 1, tn >> 20, tl >> 20,
                    100.0 * (tl - tn) / Math.max(tl, 1));
        } finally {
            try (Stream<Path> all = Files.walk(root)) {
                for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    /** The shard orders of {@code epochs} epochs of a shuffled loader over {@code locations}. */
    static List<List<String>> shuffledEpochs(List<String> locations, long seed, int epochs) {
        List<List<String>> out = new java.util.ArrayList<>();
        for (int e = 0; e < epochs; e++) {
            var order = dev.stoker.Sampler.shuffle().order(locations.size(), seed, e);
            List<String> epoch = new java.util.ArrayList<>(locations.size());
            for (int i = 0; i < locations.size(); i++) {
                epoch.add(locations.get((int) order.index(i)));
            }
            out.add(epoch);
        }
        return out;
    }
}
