package dev.stoker.formats.tar;

import dev.stoker.formats.io.RemoteShards;
import dev.stoker.formats.io.TarWriter;
import dev.stoker.storage.testing.MemoryStore;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.Batch;
import dev.stoker.Collator;
import dev.stoker.Field;
import dev.stoker.Loader;
import dev.stoker.LoaderException;
import dev.stoker.Row;
import dev.stoker.Schema;
import dev.stoker.storage.ShardCache;
import dev.stoker.storage.Storage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Shards in a store (here the in-memory one, with faults) read through the shard cache by a loader. */
@Timeout(120)
class RemoteShardsTest {
    @TempDir
    Path tmp;
    MemoryStore store;

    @BeforeEach
    void mount() {
        store = MemoryStore.mount("remote-shards");
    }

    @AfterEach
    void unmount() {
        store.close();
    }

    /** {@code n} tar shards of {@code samples} samples each, written locally and put in the store; the local paths. */
    List<Path> shards(String dir, int n, int samples) throws IOException {
        Path root = Files.createDirectories(tmp.resolve(dir));
        List<Path> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Path p = root.resolve("s" + i + ".tar");
            try (TarWriter w = new TarWriter(p)) {
                for (int k = 0; k < samples; k++) {
                    w.write("s" + i + "k" + k, Map.of("bin", new byte[1000], "cls", Integer.toString(k).getBytes()));
                }
            }
            store.put(dir + "/s" + i + ".tar", Files.readAllBytes(p));
            out.add(p);
        }
        return out;
    }

    @Test
    void aLoaderStreamsShardsThroughTheCacheWithTheLocalSamplesThoughEveryBodyIsCut() throws IOException {
        List<Path> local = shards("train", 4, 25);
        List<String> want = keys(Loader.builder(new TarShards(local), KEYS).batchSize(7).workers(2).build());
        store.cutAfter(10_000).failOpens("train/s2.tar", 2);
        try (ShardCache cache = new ShardCache(tmp.resolve("cache"), 10_000_000, 2)) {
            List<String> locations = Storage.list(store.location("train/"));
            assertEquals(4, locations.size());
            List<String> got = keys(Loader.builder(RemoteShards.tar(locations, cache, 2), KEYS).batchSize(7).workers(2).build());
            assertEquals(want, got);
            assertEquals(100, got.size());
        }
        assertTrue(store.requests("train/s0.tar") > 5, "each shard's download resumed after every cut");
    }

    @Test
    void anErrorPageSentAsASuccessIsFetchedAgainOnceAndNeverKept() throws IOException {
        List<Path> local = shards("pages", 2, 10);
        List<String> want = keys(Loader.builder(new TarShards(local), KEYS).batchSize(4).build());
        byte[] page = "<html><body>503 Service Unavailable, try again</body></html>".getBytes();
        List<String> locations = List.of(store.location("pages/s0.tar"), store.location("pages/s1.tar"));
        store.sendsInstead("pages/s1.tar", page, 1);
        try (ShardCache cache = new ShardCache(tmp.resolve("c1"), 10_000_000, 2)) {
            assertEquals(want, keys(Loader.builder(RemoteShards.tar(locations, cache, 0), KEYS).batchSize(4).build()));
        }
        assertEquals(2, store.requests("pages/s1.tar"), "the page, then the shard");
        store.sendsInstead("pages/s1.tar", page, 2);
        Path dir = tmp.resolve("c2");
        try (ShardCache cache = new ShardCache(dir, 10_000_000, 2)) {
            LoaderException e = assertThrows(LoaderException.class,
                    () -> keys(Loader.builder(RemoteShards.tar(locations, cache, 0), KEYS).batchSize(4).build()));
            assertTrue(e.getMessage().startsWith(locations.get(1) + ": ")
                    && e.getMessage().contains("): truncated header: 60 of 512 bytes (at byte 0)")
                    && e.getMessage().contains("fetched twice, and neither copy was readable"), e.getMessage());
        }
        try (var files = Files.list(dir)) {
            assertEquals(List.of(), files.map(f -> f.getFileName().toString()).filter(n -> n.contains("s1.tar")
                    && n.endsWith(".shard")).toList(), "the page is not kept as the shard");
        }
    }

    @Test
    // the working set: up to two shards open (the one read and one ahead) and two downloading ahead
    void shuffledShardsAreFetchedInTheLoadersOrderSoATightCacheDownloadsEachOnce() throws IOException {
        List<Path> local = shards("tight", 10, 20);
        long shardSize = Files.size(local.get(0));
        List<String> locations = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            locations.add(store.location("tight/s" + i + ".tar"));
        }
        for (int epoch = 0; epoch < 2; epoch++) {
            // stream order within the shuffled shard order: a window would keep its shards open, and this
            // cache holds four
            List<String> want = keys(Loader.builder(new TarShards(local), KEYS).batchSize(5).workers(1).shardsAhead(1)
                    .shuffle().shuffleWindowBytes(0).seed(7).epoch(epoch).build());
            int[] before = new int[10];
            for (int i = 0; i < 10; i++) {
                before[i] = store.requests("tight/s" + i + ".tar");
            }
            try (ShardCache cache = new ShardCache(tmp.resolve("tight" + epoch), 4 * shardSize, 2)) {
                AtomicLong peak = new AtomicLong();
                var sampler = Executors.newSingleThreadScheduledExecutor();
                sampler.scheduleAtFixedRate(() -> peak.accumulateAndGet(cache.stats().usedBytes(), Math::max), 0, 200,
                        TimeUnit.MICROSECONDS);
                List<String> got;
                try {
                    got = keys(Loader.builder(RemoteShards.tar(locations, cache, 2), KEYS).batchSize(5).workers(1)
                            .shardsAhead(1).shuffle().shuffleWindowBytes(0).seed(7).epoch(epoch).build());
                } finally {
                    sampler.shutdownNow();
                }
                assertTrue(peak.get() > 0 && peak.get() <= 4 * shardSize, "the limit held throughout: peak " + peak.get());
                assertEquals(want, got);
                for (int i = 0; i < 10; i++) {
                    assertEquals(1, store.requests("tight/s" + i + ".tar") - before[i], "s" + i + " downloaded once");
                }
            }
        }
    }

    @Test
    void anObjectDeletedDuringAnEpochStopsTheLoaderWithAnErrorNamingIt() throws IOException {
        shards("gone", 3, 10);
        List<String> locations = Storage.list(store.location("gone/"));
        store.delete("gone/s2.tar");
        try (ShardCache cache = new ShardCache(tmp.resolve("cache-del"), 10_000_000, 1)) {
            LoaderException e = assertThrows(LoaderException.class, () -> keys(
                    Loader.builder(RemoteShards.tar(locations, cache, 0), KEYS).batchSize(4).workers(1).build()));
            assertTrue(e.getMessage().contains(store.location("gone/s2.tar")) && e.getMessage().contains("404"), e.getMessage());
        }
    }

    @Test
    void aCorruptShardIsNamedByItsLocationNotItsCachedCopy() throws IOException {
        shards("bad", 1, 5);
        store.put("bad/s0.tar", "not a tar at all, but long enough to be read as one header?".repeat(20).getBytes());
        try (ShardCache cache = new ShardCache(tmp.resolve("cache-bad"), 10_000_000, 1)) {
            LoaderException e = assertThrows(LoaderException.class, () -> keys(
                    Loader.builder(RemoteShards.tar(List.of(store.location("bad/s0.tar")), cache, 0), KEYS).batchSize(4).build()));
            assertTrue(e.getMessage().contains(store.location("bad/s0.tar")), e.getMessage());
            assertTrue(!e.getMessage().contains(tmp.resolve("cache-bad").toString()), e.getMessage());
        }
    }

    /** Collates each sample's key, to compare what loaders deliver. */
    static final Collator<TarSample> KEYS = new Collator<>() {
        final Schema schema = Schema.of(Field.bytes("key", 8));

        @Override
        public Schema schema() {
            return schema;
        }

        @Override
        public void write(TarSample t, Row row) {
            row.append(0, t.key().getBytes());
        }
    };

    static List<String> keys(Loader l) {
        List<String> out = new ArrayList<>();
        try (l) {
            for (Batch b : l) {
                for (int r = 0; r < b.size(); r++) {
                    out.add(new String(b.bytes(0, r).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)));
                }
            }
        }
        return out;
    }
}
