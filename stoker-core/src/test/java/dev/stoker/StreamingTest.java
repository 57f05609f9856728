package dev.stoker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(120)
class StreamingTest {

    /** Shard {@code s} holds {@code size(s)} samples; sample {@code o} of it is {@code s << 20 | o}. */
    static final class Shards implements StreamingDataset<Long> {
        final int shards;
        final long seed;
        final long failShard;
        final long failOffset;
        final List<Integer> opened = java.util.Collections.synchronizedList(new ArrayList<>());

        Shards(int shards, long seed, long failShard, long failOffset) {
            this.shards = shards;
            this.seed = seed;
            this.failShard = failShard;
            this.failOffset = failOffset;
        }

        int size(int s) {
            return (int) Math.floorMod(Keys.key(seed, s), 23L);
        }

        @Override
        public int shards() {
            return shards;
        }

        @Override
        public String shardName(int shard) {
            return String.format("train-%06d.tar", shard);
        }

        @Override
        public ShardReader<Long> open(int shard) {
            opened.add(shard);
            return new ShardReader<>() {
                long next;

                @Override
                public Long next() throws IOException {
                    if (next >= size(shard)) {
                        return null;
                    }
                    if (shard == failShard && next == failOffset) {
                        throw new IOException("bad header checksum at byte " + (next * 512));
                    }
                    return ((long) shard << 20) | next++;
                }

                @Override
                public void close() {
                }
            };
        }
    }

    static final Collator<Long> VALUE = Collator.int64("v");

    record Config(int shards, long dataSeed, int batch, int workers, int prefetch, int world, long seed, boolean shuffle,
                  Tail tail, boolean dropLast) {
        LoaderBuilder builder(StreamingDataset<Long> d, int rank) {
            // half the configurations collate on a thread of their own from the start (NOTE
            // [Background collation]); the rest on the caller's, which is never away here
            return TestHooks.collatorThread(TestHooks.order(TestHooks.ahead(Loader.builder(d, VALUE).batchSize(batch).workers(workers), workers, prefetch).worldSize(world)
                    .rank(rank).seed(seed).tail(tail), shuffle, dropLast), (seed & 1) == 0 ? Boolean.TRUE : null);
        }

        Config with(int w, int p) {
            return new Config(shards, dataSeed, batch, w, p, world, seed, shuffle, tail, dropLast);
        }
    }

    static Config random(SplittableRandom r) {
        return new Config(r.nextInt(0, 30), r.nextLong(), r.nextInt(1, 10), r.nextInt(0, 7), r.nextInt(1, 7),
                r.nextInt(1, 5), r.nextLong(), r.nextBoolean(), r.nextBoolean() ? Tail.PAD : Tail.DROP,
                r.nextInt(4) == 0);
    }

    /** The values of every delivered batch. */
    static List<List<Long>> take(Loader l, long max) {
        List<List<Long>> out = new ArrayList<>();
        Iterator<Batch> it = l.iterator();
        while (out.size() < max && it.hasNext()) {
            Batch b = it.next();
            List<Long> v = new ArrayList<>();
            for (int r = 0; r < b.size(); r++) {
                long x = b.data(0).get(ValueLayout.JAVA_LONG_UNALIGNED, 8L * r);
                assertEquals(StreamSource.sampleIndex((int) (x >>> 20), x & 0xfffff), b.index(r), "index names the sample");
                v.add(x);
            }
            out.add(v);
        }
        return out;
    }

    @Test
    void sameBatchesForEveryWorkerCountAndPrefetchDepth() {
        SplittableRandom r = new SplittableRandom(21);
        for (int i = 0; i < 80; i++) {
            Config c = random(r);
            int rank = r.nextInt(c.world);
            Shards d = new Shards(c.shards, c.dataSeed, -1, -1);
            List<List<Long>> reference;
            try (Loader l = c.with(0, 1).builder(d, rank).build()) {
                reference = take(l, Long.MAX_VALUE);
            }
            Config other = c.with(r.nextInt(1, 7), r.nextInt(1, 7));
            try (Loader l = other.builder(d, rank).build()) {
                assertEquals(reference, take(l, Long.MAX_VALUE), other.toString());
            }
        }
    }

    @Test
    void aCallerAwayForTrainingStepsHandsCollationToAThreadAndGetsTheSameBatches() {
        Shards d = new Shards(60, 5, -1, -1);
        List<List<Long>> reference;
        try (Loader l = Loader.builder(d, Collator.int64("v", Long::longValue)).batchSize(7).workers(0).build()) {
            reference = take(l, Long.MAX_VALUE);
        }
        for (boolean away : new boolean[] {true, false}) {
            // collating a sample takes 10 us: 70 us a batch, past the switch's threshold
            List<Thread> collatedBy = java.util.Collections.synchronizedList(new ArrayList<>());
            Collator<Long> slow = Collator.int64("v", v -> {
                collatedBy.add(Thread.currentThread());
                long until = System.nanoTime() + 10_000;
                while (System.nanoTime() < until) {
                    Thread.onSpinWait();
                }
                return v;
            });
            try (Loader l = TestHooks.ahead(Loader.builder(d, slow).batchSize(7).workers(2), 2, 2).shardBuffer(3).build()) {
                List<List<Long>> got = new ArrayList<>();
                for (Batch b : l) {
                    List<Long> v = new ArrayList<>();
                    for (int r = 0; r < b.size(); r++) {
                        v.add(b.data(0).get(ValueLayout.JAVA_LONG_UNALIGNED, 8L * r));
                    }
                    got.add(v);
                    if (away) {
                        java.util.concurrent.locks.LockSupport.parkNanos(2_000_000); // a training step
                    }
                }
                assertEquals(reference, got, "away " + away);
            }
            int samples = collatedBy.size();
            Thread caller = Thread.currentThread();
            int byCaller = (int) collatedBy.stream().filter(t -> t == caller).count();
            if (away) {
                // the first batches on the caller's thread, then all on one collator thread
                int first = 7 * (CollatorThread.SWITCH_BATCHES + 1);
                assertTrue(byCaller >= 7 * CollatorThread.SWITCH_BATCHES && byCaller <= first, byCaller + " of " + samples);
                assertTrue(collatedBy.subList(0, byCaller).stream().allMatch(t -> t == caller));
                assertEquals(1, collatedBy.subList(byCaller, samples).stream().distinct().count());
                assertTrue(samples - byCaller > samples / 2, "most batches collated ahead");
            } else {
                assertEquals(samples, byCaller, "a caller that is never away collates itself");
            }
        }
    }

    /** Shards of {@code size} samples whose opening takes {@code openMillis} (shard 0 opens at once). */
    record SlowToOpen(int count, int size, long openMillis) implements StreamingDataset<Long> {
        @Override
        public int shards() {
            return count;
        }

        @Override
        public String shardName(int shard) {
            return String.format("slow-%06d.tar", shard);
        }

        @Override
        public ShardReader<Long> open(int shard) {
            if (shard > 0) {
                java.util.concurrent.locks.LockSupport.parkNanos(openMillis * 1_000_000);
            }
            return new ShardReader<>() {
                int next;

                @Override
                public Long next() {
                    return next < size ? (long) shard << 20 | next++ : null;
                }

                @Override
                public void close() {
                }
            };
        }
    }

    @Test
    void theTimeoutBoundsTheConsumersWaitNotTheCollatorsWorkAhead() {
        // each batch is a shard that takes 300 ms to open; the consumer steps for 400 ms, so it
        // never waits, though the collator waits 300 ms for each shard: no timeout at 200 ms
        try (Loader l = TestHooks.collatorThread(TestHooks.ahead(Loader.builder(new SlowToOpen(5, 8, 300), Collator.int64("v")).batchSize(8).workers(2), 2, 1)
                .timeout(java.time.Duration.ofMillis(200)), true).build()) {
            int batches = 0;
            for (Batch b : l) {
                batches++;
                java.util.concurrent.locks.LockSupport.parkNanos(400_000_000L);
            }
            assertEquals(5, batches);
        }
        // a consumer that does wait longer than the timeout gets the error, naming the shard
        try (Loader l = TestHooks.collatorThread(TestHooks.ahead(Loader.builder(new SlowToOpen(5, 8, 3_000), Collator.int64("v")).batchSize(8).workers(2), 2, 1)
                .timeout(java.time.Duration.ofMillis(200)), true).build()) {
            Iterator<Batch> it = l.iterator();
            it.next();
            LoaderTimeoutException e = assertThrows(LoaderTimeoutException.class, it::next);
            assertTrue(e.getMessage().contains("timed out after") && e.getMessage().contains("slow-000001.tar"), e.getMessage());
        }
    }

    @Test
    void samplesSkippedInTheLastFillOfTheEpochAreCounted() {
        // every sample of the last shard fails to collate: the fill that finds the epoch's end
        // skipped them all, and they still count
        Collator<Long> failingLast = new Collator<>() {
            final Collator<Long> inner = Collator.int64("v");

            @Override
            public Schema schema() {
                return inner.schema();
            }

            @Override
            public void write(Long v, Row row) throws Exception {
                if (v >>> 20 == 2) {
                    throw new IllegalArgumentException("sample " + v);
                }
                inner.write(v, row);
            }
        };
        for (int mode = 0; mode < 3; mode++) { // no workers; workers, collating on the caller's thread; on a collator
            String workers = mode == 0 ? "0" : mode == 1 ? "2" : "2 and a collator";
            try (Loader l = TestHooks.collatorThread(Loader.builder(new SlowToOpen(3, 8, 0), failingLast).batchSize(8).workers(mode == 0 ? 0 : 2),
                    mode == 2 ? Boolean.TRUE : null)
                    .errorPolicy(ErrorPolicy.SKIP_SAMPLE).build()) {
                int batches = 0;
                for (Batch b : l) {
                    batches++;
                }
                assertEquals(2, batches, "workers " + workers);
                assertEquals(8, l.stats().skipped(), "workers " + workers);
                assertEquals(16, l.stats().samples(), "workers " + workers);
            }
        }
    }

    @Test
    void aTraceHasEachBatchOnTheThreadThatCollatedItAndTheConsumersWaits() {
        Shards d = new Shards(20, 9, -1, -1);
        String caller = Thread.currentThread().getName();
        for (Boolean collator : new Boolean[] {null, true}) {
            List<String> spans = java.util.Collections.synchronizedList(new ArrayList<>());
            Tracer tracer = span -> {
                if (span.end() >= span.start()) {
                    spans.add(span.thread() + "|" + span.what());
                }
            };
            int batches;
            try (Loader l = TestHooks.collatorThread(Loader.builder(d, VALUE).batchSize(5).workers(2), collator).tracer(tracer).build()) {
                batches = take(l, Long.MAX_VALUE).size();
            }
            String filler = collator == null ? caller : "stoker-collator";
            for (int k = 0; k < batches; k++) {
                assertTrue(spans.contains(filler + "|batch " + k), "batch " + k + " on " + filler + ": " + spans);
            }
            assertEquals(collator == null ? batches : 2L * batches, spans.size(), spans.toString());
            assertEquals(collator == null ? 0 : batches, spans.stream().filter(x -> x.equals(caller + "|wait for a batch")).count());
        }
    }

    @Test
    void everySampleOfEveryShardOncePerEpochAcrossRanks() {
        SplittableRandom r = new SplittableRandom(22);
        for (int i = 0; i < 80; i++) {
            Config c = random(r);
            c = new Config(c.shards, c.dataSeed, c.batch, c.workers, c.prefetch, c.world, c.seed, c.shuffle, c.tail, false);
            Shards d = new Shards(c.shards, c.dataSeed, -1, -1);
            Map<Long, Integer> seen = new HashMap<>();
            for (int rank = 0; rank < c.world; rank++) {
                try (Loader l = c.builder(d, rank).build()) {
                    for (List<Long> b : take(l, Long.MAX_VALUE)) {
                        assertTrue(b.size() <= c.batch);
                        b.forEach(x -> seen.merge(x, 1, Integer::sum));
                    }
                }
            }
            // the shards each rank got, by the partition rule over the shard order
            Order order = (c.shuffle ? Sampler.shuffle() : Sampler.sequential()).order(c.shards, c.seed, 0);
            Map<Long, Integer> expected = new HashMap<>();
            for (int rank = 0; rank < c.world; rank++) {
                Partition p = new Partition(0, c.shards, c.world, rank, c.tail);
                for (long m = 0; m < p.length(); m++) {
                    int s = (int) order.index(p.position(m));
                    for (int o = 0; o < d.size(s); o++) {
                        expected.merge(((long) s << 20) | o, 1, Integer::sum);
                    }
                }
            }
            assertEquals(expected, seen, c.toString());
            if (c.tail == Tail.PAD) {
                long total = 0;
                for (int s = 0; s < c.shards; s++) {
                    total += d.size(s);
                }
                long distinct = seen.size();
                assertEquals(total, distinct, "with padding every sample of every shard is delivered: " + c);
            }
        }
    }

    @Test
    void resumeAtARandomBatchEqualsTheUninterruptedRun() {
        SplittableRandom r = new SplittableRandom(23);
        for (int i = 0; i < 80; i++) {
            Config c = random(r);
            int rank = r.nextInt(c.world);
            Shards d = new Shards(c.shards, c.dataSeed, -1, -1);
            List<List<Long>> full;
            try (Loader l = c.builder(d, rank).build()) {
                full = take(l, Long.MAX_VALUE);
            }
            int k = r.nextInt(full.size() + 1);
            String saved;
            try (Loader l = c.builder(d, rank).build()) {
                assertEquals(full.subList(0, k), take(l, k));
                saved = l.state().toJson();
            }
            try (Loader l = c.with(r.nextInt(0, 7), r.nextInt(1, 7)).builder(d, rank)
                    .resume(LoaderState.fromJson(saved)).build()) {
                assertEquals(full.subList(k, full.size()), take(l, Long.MAX_VALUE), c + " resumed after " + k + " from " + saved);
            }
        }
    }

    @Test
    void aBrokenShardFailsWithItsNameAndSampleOffset() {
        for (int workers : new int[] {0, 3}) {
            Shards d = new Shards(10, 5, 4, 2);
            try (Loader l = Loader.builder(d, VALUE).batchSize(4).workers(workers).build()) {
                LoaderException e = assertThrows(LoaderException.class, () -> take(l, Long.MAX_VALUE));
                assertTrue(e.getMessage().startsWith("train-000004.tar: reading sample 2 of the shard")
                        && e.getMessage().contains("bad header checksum at byte 1024"), e.getMessage());
                assertEquals("train-000004.tar", e.source());
            }
        }
    }

    @Test
    void skipShardLeavesOutTheRestOfABrokenShardAndCountsIt() {
        for (int workers : new int[] {0, 2}) {
            Shards d = new Shards(10, 5, 4, 2);
            try (Loader l = Loader.builder(d, VALUE).batchSize(4).workers(workers).errorPolicy(ErrorPolicy.SKIP_SHARD).build()) {
                List<Long> all = new ArrayList<>();
                take(l, Long.MAX_VALUE).forEach(all::addAll);
                long expected = 0;
                for (int s = 0; s < 10; s++) {
                    expected += s == 4 ? 2 : d.size(s);
                }
                assertEquals(expected, all.size());
                assertTrue(all.contains(4L << 20 | 1) && !all.contains(4L << 20 | 2));
                assertEquals(1, l.stats().skippedShards());
            }
        }
    }

    @Test
    void skipSampleDropsAFailingTransformAndFillsTheBatchFromTheStream() {
        Transform<Long, Long> failOdd = (x, ctx) -> {
            if ((x & 1) == 1) {
                throw new IllegalStateException("odd sample " + x);
            }
            return x;
        };
        Shards d = new Shards(6, 9, -1, -1);
        try (Loader l = Loader.builder(d, failOdd, VALUE).batchSize(5).workers(2).errorPolicy(ErrorPolicy.SKIP_SAMPLE).build()) {
            List<List<Long>> batches = take(l, Long.MAX_VALUE);
            for (int i = 0; i + 1 < batches.size(); i++) {
                assertEquals(5, batches.get(i).size(), "streamed batches stay full");
            }
            long odd = 0;
            long total = 0;
            for (int s = 0; s < 6; s++) {
                odd += d.size(s) / 2;
                total += d.size(s);
            }
            assertEquals(odd, l.stats().skipped());
            assertEquals(total - odd, l.stats().samples());
        }
    }

    @Test
    void sharedTransformsGiveTheInlineBatchesForAnyRingSizeAndPolicy() {
        // transforms are claimed by whichever worker is free (NOTE [Helping]); with uneven transform
        // times, rings as small as one sample, and failures under every policy, the batches, the
        // skip counts and the error must be those of the consumer doing everything alone
        SplittableRandom r = new SplittableRandom(31);
        for (int i = 0; i < 60; i++) {
            int shards = r.nextInt(0, 12);
            long dataSeed = r.nextLong();
            int batch = r.nextInt(1, 8);
            ErrorPolicy policy = ErrorPolicy.values()[r.nextInt(ErrorPolicy.values().length)];
            int failEvery = r.nextInt(0, 9);
            Transform<Long, Long> t = (x, ctx) -> {
                long k = Keys.key(ctx.seed(), x);
                if (Math.floorMod(k, 7L) == 0) {
                    java.util.concurrent.locks.LockSupport.parkNanos(50_000 + Math.floorMod(k, 200_000L));
                }
                if (failEvery > 0 && Math.floorMod(k >>> 8, (long) failEvery * 5) == 0) {
                    throw new IllegalArgumentException("sample " + x + " is bad");
                }
                return x;
            };
            Shards d = new Shards(shards, dataSeed, -1, -1);
            Outcome reference = outcome(d, t, batch, 0, 1, 1, policy);
            for (int k = 0; k < 2; k++) {
                int workers = r.nextInt(1, 5);
                int prefetch = r.nextInt(1, 6);
                int ring = r.nextInt(1, 4);
                assertEquals(reference, outcome(d, t, batch, workers, prefetch, ring, policy),
                        "workers " + workers + " prefetch " + prefetch + " ring " + ring + " policy " + policy + " case " + i);
            }
        }
        assertEquals(0, LoaderBehaviourTest.liveWorkers());
    }

    record Outcome(List<List<Long>> batches, String error, long skipped, long skippedShards) {
    }

    private static Outcome outcome(Shards d, Transform<Long, Long> t, int batch, int workers, int prefetch, int ring,
                                        ErrorPolicy policy) {
        LoaderBuilder b = TestHooks.ahead(Loader.builder(d, t, VALUE).batchSize(batch).workers(workers), workers, prefetch)
                .errorPolicy(policy).seed(5).shuffle();
        if (workers > 0) {
            b.shardBuffer(ring);
        }
        try (Loader l = b.build()) {
            List<List<Long>> batches = new ArrayList<>();
            String error = null;
            try {
                batches = take(l, Long.MAX_VALUE);
            } catch (LoaderException e) {
                error = e.getMessage();
            }
            return new Outcome(batches, error, l.stats().skipped(), l.stats().skippedShards());
        }
    }

    @Test
    void closingMidStreamStopsWorkersBlockedOnFullRings() {
        Shards d = new Shards(40, 1, -1, -1);
        try (Loader l = TestHooks.ahead(Loader.builder(d, VALUE).batchSize(2).workers(4), 4, 4).build()) {
            Iterator<Batch> it = l.iterator();
            it.next();
            it.next();
        }
        assertEquals(0, LoaderBehaviourTest.liveWorkers());
    }

    @Test
    void aStreamStateResumesAtAnotherWorldSizeOnlyWithEveryStreamItsRankReads() {
        Shards d = new Shards(10, 1, -1, -1);
        LoaderState[] s = new LoaderState[2];
        for (int rank = 0; rank < 2; rank++) {
            try (Loader l = Loader.builder(d, VALUE).batchSize(2).worldSize(2).rank(rank).build()) {
                take(l, 3);
                s[rank] = l.state();
            }
        }
        // more ranks than streams: refused with the numbers
        ResumeException e = assertThrows(ResumeException.class,
                () -> Loader.builder(d, VALUE).batchSize(2).worldSize(3).resume(LoaderState.merge(List.of(s))).build());
        assertTrue(e.getMessage().contains("split into 2 streams, fewer than this run's 3 ranks"), e.getMessage());
        // another rank's state: its stream is not in it
        e = assertThrows(ResumeException.class, () -> Loader.builder(d, VALUE).batchSize(2).worldSize(2).rank(1).resume(s[0]).build());
        assertTrue(e.getMessage().contains("rank 1 of 2 reads streams [1] of 2, and the state holds only [0]"), e.getMessage());
        // one rank's state at a smaller world: the other stream is missing
        e = assertThrows(ResumeException.class, () -> Loader.builder(d, VALUE).batchSize(2).resume(s[1]).build());
        assertTrue(e.getMessage().contains("reads streams [0, 1] of 2, and the state holds only [1]"), e.getMessage());
        // states of different points of one stream do not merge
        LoaderState later;
        try (Loader l = Loader.builder(d, VALUE).batchSize(2).worldSize(2).rank(0).build()) {
            take(l, 4);
            later = l.state();
        }
        IllegalArgumentException m = assertThrows(IllegalArgumentException.class, () -> LoaderState.merge(List.of(s[0], later)));
        assertTrue(m.getMessage().contains("stream 0 is at"), m.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Loader.builder(d, VALUE).worldSize(3).streams(2).build());
        // a job keeps its streams: another count set on resume is refused
        LoaderState merged = LoaderState.merge(List.of(s));
        e = assertThrows(ResumeException.class, () -> Loader.builder(d, VALUE).batchSize(2).streams(4).resume(merged).build());
        assertTrue(e.getMessage().contains("streams(4) was set, the state's epoch is split into 2 streams"), e.getMessage());
        // a rank's state before its first batch holds its own streams alone, and merges with the others'
        LoaderState[] two = new LoaderState[2];
        for (int rank = 0; rank < 2; rank++) {
            try (Loader l = Loader.builder(d, VALUE).batchSize(2).rank(rank).worldSize(2).resume(merged).build()) {
                if (rank == 0) {
                    take(l, 1);
                }
                two[rank] = l.state();
            }
        }
        LoaderState.merge(List.of(two));
        assertThrows(IllegalArgumentException.class, () -> Loader.builder(new SyntheticDataset(6, 8, 0)).streams(2).build());
    }

    @Test
    void moreStreamsThanRanksReadEachShardOnceAnEpoch() {
        Shards d = new Shards(100, 6, -1, -1);
        Map<Long, Integer> seen = new HashMap<>();
        for (int rank = 0; rank < 4; rank++) {
            try (Loader l = Loader.builder(d, VALUE).batchSize(5).seed(2).shuffle().worldSize(4).rank(rank).streams(48)
                    .build()) {
                take(l, Long.MAX_VALUE).forEach(b -> b.forEach(x -> seen.merge(x, 1, Integer::sum)));
            }
        }
        long samples = 0;
        for (int s = 0; s < 100; s++) {
            samples += d.size(s);
        }
        assertEquals(samples, seen.size(), "every sample");
        assertTrue(seen.values().stream().allMatch(n -> n == 1), "once: no shard padded in, none dropped");
    }

    /**
     * NOTE [Elastic streams], as a property: ranks of a run of world size N stop after any number
     * of batches each; the merge of their states resumes at world size M; every sample of the
     * epoch is delivered exactly as often as by the uninterrupted run (of any world size, which
     * all deliver the same), whatever the shard count, the streams, N, M, the order and the
     * shuffle window. At M = N each rank continues exactly.
     */
    @Test
    void aMergedStreamStateResumesAtAnyWorldSizeWithEverySampleOnceAcrossTheChange() {
        SplittableRandom r = new SplittableRandom(31);
        for (int i = 0; i < 120; i++) {
            int shards = r.nextInt(0, 30);
            int streams = r.nextInt(1, 9);
            int n = r.nextInt(1, streams + 1);
            int m = r.nextInt(3) == 0 ? n : r.nextInt(1, streams + 1);
            int window = r.nextInt(3) == 0 ? 0 : r.nextInt(1, 40);
            boolean tail = r.nextBoolean(); // unset: each shard once when there are more streams than ranks
            Config c = new Config(shards, r.nextLong(), r.nextInt(1, 8), r.nextInt(0, 4), r.nextInt(1, 4), n, r.nextLong(),
                    r.nextBoolean(), r.nextBoolean() ? Tail.PAD : Tail.DROP, false);
            Shards d = new Shards(c.shards, c.dataSeed, -1, -1);
            String what = c + " streams " + streams + ", window " + window + (tail ? "" : ", tail unset");
            java.util.function.BiFunction<Integer, Integer, LoaderBuilder> builder = (world, rank) -> {
                LoaderBuilder b = Loader.builder(d, VALUE).batchSize(c.batch).workers(c.workers).worldSize(world).rank(rank)
                        .seed(c.seed).sampler(c.shuffle ? Sampler.shuffle() : Sampler.sequential()).streams(streams);
                b = tail ? b.tail(c.tail) : b;
                return window > 0 ? b.shuffleWindow(window) : b;
            };
            Map<Long, Integer> whole = new HashMap<>();
            List<List<List<Long>>> full = new ArrayList<>();
            for (int rank = 0; rank < n; rank++) {
                try (Loader l = builder.apply(n, rank).build()) {
                    full.add(take(l, Long.MAX_VALUE));
                    full.get(rank).forEach(b -> b.forEach(x -> whole.merge(x, 1, Integer::sum)));
                }
            }
            Map<Long, Integer> atM = new HashMap<>();
            for (int rank = 0; rank < m; rank++) {
                try (Loader l = builder.apply(m, rank).build()) {
                    take(l, Long.MAX_VALUE).forEach(b -> b.forEach(x -> atM.merge(x, 1, Integer::sum)));
                }
            }
            if (tail || (n == streams) == (m == streams)) { // unset, one stream a rank pads and more read each shard once
                assertEquals(whole, atM, "an epoch's samples do not depend on the world size: " + what);
            }
            // one change of world size, or two (the second resumes streams that were resumed)
            int[] worlds = r.nextInt(3) == 0 ? new int[] {n, m, r.nextInt(1, streams + 1)} : new int[] {n, m};
            Map<Long, Integer> seen = new HashMap<>();
            LoaderState merged = null;
            for (int j = 0; j < worlds.length; j++) {
                int world = worlds[j];
                boolean last = j == worlds.length - 1;
                List<LoaderState> states = new ArrayList<>();
                for (int rank = 0; rank < world; rank++) {
                    LoaderBuilder b = builder.apply(world, rank);
                    try (Loader l = (merged == null ? b : b.resume(merged)).build()) {
                        long stop = merged != null && merged.epoch() > 0 ? 0 // every rank finished epoch 0 already
                                : last ? Long.MAX_VALUE : j == 0 ? r.nextInt(full.get(rank).size() + 1) : r.nextInt(0, 6);
                        List<List<Long>> got = take(l, stop);
                        got.forEach(x -> x.forEach(v -> seen.merge(v, 1, Integer::sum)));
                        if (j == 1 && worlds[0] == worlds[1] && last) {
                            List<List<Long>> f = full.get(rank);
                            assertEquals(f.subList(f.size() - got.size(), f.size()), got, "the same world continues exactly: " + what);
                        }
                        states.add(LoaderState.fromJson(l.state().toJson()));
                    }
                }
                merged = LoaderState.fromJson(LoaderState.merge(states).toJson());
                what += ", then " + world + " ranks from " + merged.toJson();
            }
            assertEquals(whole, seen, "each sample as often as uninterrupted, across the changes: " + what);
        }
    }

    @Test
    void aShuffleWindowDeliversEverySampleOnceInABoundedRandomOrderThatResumesExactly() {
        SplittableRandom r = new SplittableRandom(24);
        for (int i = 0; i < 60; i++) {
            Config c = random(r);
            int window = r.nextInt(1, 40);
            int rank = r.nextInt(c.world);
            Shards d = new Shards(c.shards, c.dataSeed, -1, -1);
            checkShuffleWindow(c, d, rank, window, "window " + window, r,
                    (w, p) -> c.with(w, p).builder(d, rank).shuffleWindow(window));
        }
    }

    /**
     * The order of {@code windowed(workers, prefetch)} against the plain stream of {@code c}: the
     * same samples, each moved fewer than {@code most} places, the same batches for any worker
     * count, and a resume from a random batch that continues exactly.
     */
    static void checkShuffleWindow(Config c, Shards d, int rank, long most, String window, SplittableRandom r,
                                   java.util.function.BiFunction<Integer, Integer, LoaderBuilder> windowed) {
        List<List<Long>> plain;
        try (Loader l = c.builder(d, rank).shuffleWindowBytes(0).build()) { // stream order, no default window
            plain = take(l, Long.MAX_VALUE);
        }
        List<List<Long>> full;
        try (Loader l = windowed.apply(0, 1).build()) {
            full = take(l, Long.MAX_VALUE);
        }
        List<Long> a = new ArrayList<>();
        plain.forEach(a::addAll);
        List<Long> b = new ArrayList<>();
        full.forEach(b::addAll);
        if (!c.dropLast) {
            assertEquals(a.stream().sorted().toList(), b.stream().sorted().toList(), "the same samples: " + c);
        }
        if (new java.util.HashSet<>(a).size() == a.size()) { // (padding repeats shards: positions are then ambiguous)
            for (int k = 0; k < b.size(); k++) {
                int from = a.indexOf(b.get(k));
                if (from < 0) {
                    assertTrue(c.dropLast, "only drop-last leaves out samples");
                    continue;
                }
                assertTrue(Math.abs(from - k) < most, "moved less than a window: " + c + " " + window);
            }
        }
        try (Loader l = windowed.apply(r.nextInt(1, 7), r.nextInt(1, 7)).build()) {
            assertEquals(full, take(l, Long.MAX_VALUE), "the same for any worker count: " + c);
        }
        if (full.isEmpty()) {
            return;
        }
        int k = r.nextInt(full.size());
        String saved;
        try (Loader l = windowed.apply(c.workers, c.prefetch).build()) {
            assertEquals(full.subList(0, k), take(l, k));
            saved = l.state().toJson();
        }
        try (Loader l = windowed.apply(r.nextInt(0, 7), r.nextInt(1, 7)).resume(LoaderState.fromJson(saved)).build()) {
            assertEquals(full.subList(k, full.size()), take(l, Long.MAX_VALUE), c + " resumed after " + k + " from " + saved);
        }
    }

    /** A sample of 1..40 bytes (a function of its value), for windows bounded in bytes. */
    record Weighed(long v) implements Sized {
        @Override
        public long byteSize() {
            return 1 + Math.floorMod(v * 0x9E3779B97F4A7C15L, 40);
        }
    }

    static final Transform<Long, Weighed> WEIGH = (v, ctx) -> new Weighed(v);
    static final Collator<Weighed> WEIGHED = Collator.int64("v", Weighed::v);

    /** A sample that borrows from its reader: collating it after the reader closed is a violation. */
    record Lent(long v, java.util.concurrent.atomic.AtomicBoolean readerClosed) {
    }

    /** {@link Shards} whose samples are {@link Lent}s; counts readers opened and closed, and late collations. */
    static final class Lending implements StreamingDataset<Lent> {
        final Shards inner;
        final java.util.concurrent.atomic.AtomicInteger opened = new java.util.concurrent.atomic.AtomicInteger();
        final java.util.concurrent.atomic.AtomicInteger closed = new java.util.concurrent.atomic.AtomicInteger();
        final java.util.concurrent.atomic.AtomicInteger late = new java.util.concurrent.atomic.AtomicInteger();
        final Collator<Lent> collator = Collator.int64("v", s -> {
            if (s.readerClosed().get()) {
                late.incrementAndGet();
            }
            return s.v();
        });

        Lending(Shards inner) {
            this.inner = inner;
        }

        @Override
        public int shards() {
            return inner.shards();
        }

        @Override
        public ShardReader<Lent> open(int shard) throws IOException {
            ShardReader<Long> r = inner.open(shard);
            var isClosed = new java.util.concurrent.atomic.AtomicBoolean();
            opened.incrementAndGet();
            return new ShardReader<>() {
                @Override
                public Lent next() throws IOException {
                    Long v = r.next();
                    return v == null ? null : new Lent(v, isClosed);
                }

                @Override
                public void close() throws IOException {
                    if (isClosed.compareAndSet(false, true)) {
                        closed.incrementAndGet();
                    }
                    r.close();
                }
            };
        }
    }

    @Test
    void aReaderIsClosedOnlyOnceEverySampleItReturnedIsCollatedAndAllAreClosedAtTheEnd() {
        SplittableRandom r = new SplittableRandom(27);
        for (int i = 0; i < 60; i++) {
            Config c = random(r);
            int window = r.nextBoolean() ? 0 : r.nextInt(1, 60);
            boolean transform = r.nextBoolean();
            long stopAfter = r.nextInt(3) == 0 ? r.nextInt(0, 6) : Long.MAX_VALUE;
            Lending d = new Lending(new Shards(c.shards, c.dataSeed, -1, -1));
            Transform<Lent, Lent> same = (s, ctx) -> s; // the transform's output still borrows
            var b = TestHooks.collatorThread(TestHooks.ahead((transform ? Loader.builder(d, same, d.collator) : Loader.builder(d, d.collator))
                    .batchSize(c.batch).workers(c.workers), c.workers, c.prefetch).worldSize(c.world)
                    .rank(r.nextInt(c.world)).seed(c.seed).sampler(c.shuffle ? Sampler.shuffle() : Sampler.sequential()), (c.seed & 1) == 0 ? Boolean.TRUE : null);
            int ring = r.nextInt(1, 8);
            if (c.workers > 0) {
                b.shardBuffer(ring);
            }
            if (window > 0) {
                b.shuffleWindow(window);
            }
            String what = c + " window " + window + " transform " + transform + " stop after " + stopAfter;
            long batches = 0;
            try (Loader l = b.build()) {
                Iterator<Batch> it = l.iterator();
                while (batches < stopAfter && it.hasNext()) {
                    it.next();
                    batches++;
                }
            }
            assertEquals(0, d.late.get(), "samples collated after their reader closed: " + what);
            assertEquals(d.opened.get(), d.closed.get(), "every reader opened is closed: " + what);
        }
    }

    @Test
    void aShuffleWindowBoundedInBytesHoldsAtMostItsBudgetPlusOneSampleAndResumesExactly() {
        SplittableRandom r = new SplittableRandom(25);
        for (int i = 0; i < 40; i++) {
            Config c = random(r);
            long budget = r.nextLong(1, 400);
            int samples = r.nextBoolean() ? 0 : r.nextInt(1, 40); // 0: the bytes alone bound the window
            int rank = r.nextInt(c.world);
            Shards d = new Shards(c.shards, c.dataSeed, -1, -1);
            // a block holds at most the budget plus one sample, and every sample is at least a byte
            long most = Math.min(samples == 0 ? Long.MAX_VALUE : samples, budget + 1);
            checkShuffleWindow(c, d, rank, most, "budget " + budget + " samples " + samples, r, (w, p) ->
                    TestHooks.order(TestHooks.ahead(Loader.builder(d, WEIGH, WEIGHED).batchSize(c.batch).workers(w), w, p).worldSize(c.world)
                            .rank(rank).seed(c.seed).tail(c.tail), c.shuffle, c.dropLast)
                            .shuffleWindow(samples).shuffleWindowBytes(budget));
        }
    }

    @Test
    void aShuffleWindowInBytesNamesASampleWhoseSizeItCannotTell() {
        Shards d = new Shards(3, 8, -1, -1);
        try (Loader l = Loader.builder(d, VALUE).batchSize(4).workers(1).shuffleWindowBytes(100).build()) {
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> take(l, Long.MAX_VALUE));
            assertTrue(e.getMessage().contains("java.lang.Long") && e.getMessage().contains("dev.stoker.Sized"), e.getMessage());
        }
    }

    @Test
    void statsReportHowFarTheShuffleMovedSamples() {
        Shards d = new Shards(30, 8, -1, -1);
        try (Loader l = Loader.builder(d, VALUE).batchSize(4).workers(2).build()) {
            take(l, Long.MAX_VALUE);
            assertEquals(0.0, l.stats().meanDisplacement());
        }
        try (Loader l = Loader.builder(d, VALUE).batchSize(4).workers(2).shuffleWindow(60).seed(2).build()) {
            take(l, Long.MAX_VALUE);
            double m = l.stats().meanDisplacement();
            assertTrue(m > 12 && m < 28, "about a third of the window: " + m);
        }
        assertThrows(IllegalArgumentException.class,
                () -> Loader.builder(new SyntheticDataset(10, 8, 0)).shuffleWindow(5).build());
    }

    @Test
    void aShuffledStreamMixesItsShardsInTheDefaultWindowAndStatsSayHowMuch() {
        Shards d = new Shards(30, 8, -1, -1);
        double streamShare;
        try (Loader l = Loader.builder(d, VALUE).batchSize(8).workers(2).shuffle().seed(4).shuffleWindowBytes(0).build()) {
            take(l, Long.MAX_VALUE);
            assertEquals(0.0, l.stats().meanDisplacement(), "stream order, asked for");
            streamShare = l.stats().shardShare();
            assertTrue(streamShare > 0.6, "a batch mostly from one shard in stream order: " + streamShare);
        }
        List<List<Long>> defaulted;
        try (Loader l = Loader.builder(d, VALUE).batchSize(8).workers(2).shuffle().seed(4).build()) {
            defaulted = take(l, Long.MAX_VALUE);
            LoaderStats st = l.stats();
            // unsized samples count 64 KiB each: a window of 1,024 holds the whole small stream
            assertTrue(st.meanDisplacement() > 10, "moved by the default window: " + st.meanDisplacement());
            assertTrue(st.shardShare() < streamShare / 2, "shards mixed: " + st.shardShare() + " against " + streamShare);
        }
        try (Loader l = Loader.builder(d, VALUE).batchSize(8).workers(3).shuffle().seed(4)
                .shuffleWindowBytes(Loader.DEFAULT_SHUFFLE_WINDOW_BYTES).build()) {
            assertThrows(IllegalStateException.class, () -> take(l, Long.MAX_VALUE),
                    "a window asked for in bytes needs sized samples; the default counts unsized ones");
        }
        try (Loader l = Loader.builder(d, VALUE).batchSize(8).workers(1).build()) {
            take(l, Long.MAX_VALUE);
            assertEquals(0.0, l.stats().meanDisplacement(), "sequential order: no default window");
        }
        try (Loader l = TestHooks.ahead(Loader.builder(d, VALUE).batchSize(8).workers(3), 3, 4).shuffle().seed(4).build()) {
            assertEquals(defaulted, take(l, Long.MAX_VALUE), "the default window's batches for any worker count");
        }
        assertEquals(1.0, StreamFill.largestShare(new int[] {3, 3, 3}, 3));
        assertEquals(0.5, StreamFill.largestShare(new int[] {1, 2, 2, 1}, 4));
        assertEquals(0.6, StreamFill.largestShare(new int[] {5, 1, 5, 2, 5}, 5), 1e-12);
    }

    @Test
    void resampledShardsMakeAnEndlessDeterministicStream() {
        Shards d = new Shards(7, 4, -1, -1);
        List<List<Long>> first;
        // WebDataset's ResampledShards: shards drawn with replacement, as many as asked (here "forever")
        try (Loader l = Loader.builder(d, VALUE).batchSize(16).workers(3).sampler(Sampler.random(Long.MAX_VALUE)).seed(9).build()) {
            first = take(l, 300);
        }
        assertEquals(300, first.size());
        try (Loader l = Loader.builder(d, VALUE).batchSize(16).workers(1).sampler(Sampler.random(Long.MAX_VALUE)).seed(9).build()) {
            assertEquals(first, take(l, 300), "the same draws for any worker count");
        }
        java.util.Set<Long> shardsSeen = new java.util.HashSet<>();
        first.forEach(b -> b.forEach(x -> shardsSeen.add(x >>> 20)));
        assertTrue(shardsSeen.size() >= 5, "draws cover the shards: " + shardsSeen);
    }

    @Test
    void epochsReorderTheShards() {
        Shards d = new Shards(20, 3, -1, -1);
        try (Loader l = Loader.builder(d, VALUE).batchSize(7).workers(2).shuffle().seed(4).build()) {
            List<List<Long>> e0 = take(l, Long.MAX_VALUE);
            List<List<Long>> e1 = take(l, Long.MAX_VALUE);
            assertTrue(!e0.equals(e1));
            assertEquals(2, l.epoch());
        }
    }
}
