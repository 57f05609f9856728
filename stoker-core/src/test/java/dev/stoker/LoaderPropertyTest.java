package dev.stoker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The loader's invariants over many random configurations (dataset size, batch size, workers
 * 0..8, prefetch 1..8, world size 1..8, seed, sampler, tail rule, drop-last).
 */
class LoaderPropertyTest {
    private static final int CONFIGS = 120;

    record Config(long n, int batch, int workers, int prefetch, int world, long seed, boolean shuffle,
                  Tail tail, boolean dropLast, long epoch) {

        /** The loader from the start of {@code epoch}. */
        LoaderBuilder builder(int rank) {
            return base(rank).epoch(epoch);
        }

        /** The loader's options but the epoch: for a resume, or another epoch. */
        LoaderBuilder base(int rank) {
            return TestHooks.order(TestHooks.ahead(Loader.builder(new SyntheticDataset(n, 16, 0))
                    .batchSize(batch).workers(workers), workers, prefetch).worldSize(world).rank(rank)
                    .seed(seed).tail(tail), shuffle, dropLast);
        }

        Config withWorkers(int w, int p) {
            return new Config(n, batch, w, p, world, seed, shuffle, tail, dropLast, epoch);
        }

        Config withWorld(int w) {
            return new Config(n, batch, workers, prefetch, w, seed, shuffle, tail, dropLast, epoch);
        }
    }

    static Config random(SplittableRandom r) {
        return new Config(r.nextInt(0, 400), r.nextInt(1, 17), r.nextInt(0, 9), r.nextInt(1, 9), r.nextInt(1, 9),
                r.nextLong(), r.nextBoolean(), r.nextBoolean() ? Tail.PAD : Tail.DROP,
                r.nextInt(4) == 0, r.nextInt(3));
    }

    static List<Runs.Delivered> run(Config c, int rank) {
        try (Loader l = c.builder(rank).build()) {
            return Runs.all(l);
        }
    }

    @Test
    void everySampleOncePerEpochAcrossRanks() {
        SplittableRandom r = new SplittableRandom(1);
        for (int i = 0; i < CONFIGS; i++) {
            Config c = random(r);
            Map<Long, Integer> seen = new HashMap<>();
            long batchesPerRank = -1;
            for (int rank = 0; rank < c.world; rank++) {
                List<Runs.Delivered> batches = run(c, rank);
                if (batchesPerRank < 0) {
                    batchesPerRank = batches.size();
                }
                assertEquals(batchesPerRank, batches.size(), "every rank gets the same number of batches: " + c);
                for (Runs.Delivered d : batches) {
                    assertTrue(d.indices().length <= c.batch, c.toString());
                    if (c.dropLast) {
                        assertEquals(c.batch, d.indices().length, "drop-last batches are full: " + c);
                    }
                    for (long idx : d.indices()) {
                        assertTrue(idx >= 0 && idx < c.n, c.toString());
                        seen.merge(idx, 1, Integer::sum);
                    }
                }
            }
            long perRank = c.tail == Tail.PAD ? (c.n + c.world - 1) / c.world : c.n / c.world;
            long expected = c.dropLast ? perRank / c.batch * c.batch * c.world : perRank * c.world;
            long total = seen.values().stream().mapToLong(Integer::intValue).sum();
            assertEquals(expected, total, "samples delivered: " + c);
            if (!c.dropLast) {
                long pad = perRank * c.world - c.n;
                if (c.tail == Tail.PAD) {
                    assertEquals(c.n, seen.size(), "pad: every sample delivered: " + c);
                    long repeats = total - seen.size();
                    assertEquals(Math.max(0, pad), repeats, "pad: only the padding repeats: " + c);
                } else {
                    assertEquals(total, seen.size(), "drop: no sample twice: " + c);
                    assertEquals(c.n - c.n % c.world, seen.size(), "drop: all but n mod W samples: " + c);
                }
            } else if (c.tail == Tail.DROP) {
                assertEquals(total, seen.size(), "drop: no sample twice: " + c);
            }
        }
    }

    @Test
    void sameBatchesForEveryWorkerCountAndPrefetchDepth() {
        SplittableRandom r = new SplittableRandom(2);
        for (int i = 0; i < CONFIGS; i++) {
            Config c = random(r);
            int rank = r.nextInt(c.world);
            List<String> reference = Runs.digests(run(c.withWorkers(0, 1), rank));
            Config other = c.withWorkers(r.nextInt(1, 9), r.nextInt(1, 9));
            assertEquals(reference, Runs.digests(run(other, rank)), "digests differ for " + other + " rank " + rank);
        }
    }

    @Test
    void resumeAtARandomPositionEqualsTheUninterruptedRun() {
        SplittableRandom r = new SplittableRandom(3);
        for (int i = 0; i < CONFIGS; i++) {
            Config c = random(r);
            int rank = r.nextInt(c.world);
            List<Runs.Delivered> full = run(c, rank);
            if (full.isEmpty()) {
                continue;
            }
            int k = r.nextInt(full.size()); // a state after the last batch is the next epoch's start (tested below)
            String saved;
            try (Loader l = c.builder(rank).build()) {
                List<Runs.Delivered> first = Runs.take(l, k);
                assertEquals(Runs.digests(full.subList(0, k)), Runs.digests(first), c.toString());
                saved = l.state().toJson();
            }
            Config resumed = c.withWorkers(r.nextInt(0, 9), r.nextInt(1, 9));
            try (Loader l = resumed.base(rank).resume(LoaderState.fromJson(saved)).build()) {
                List<Runs.Delivered> rest = Runs.all(l);
                assertEquals(Runs.digests(full.subList(k, full.size())), Runs.digests(rest),
                        "resume after " + k + " of " + full.size() + " batches: " + resumed + " state " + saved);
                for (int j = 0; j < rest.size(); j++) {
                    assertEquals(full.get(k + j).sequence(), rest.get(j).sequence(), "batch numbers continue");
                }
            }
        }
    }

    @Test
    void elasticResumeCoversTheRemainderExactlyOnce() {
        SplittableRandom r = new SplittableRandom(4);
        for (int i = 0; i < CONFIGS; i++) {
            Config c = random(r);
            c = new Config(c.n, c.batch, c.workers, c.prefetch, c.world, c.seed, c.shuffle, Tail.PAD, false, c.epoch);
            long maxK = c.n / ((long) c.batch * c.world); // stop while every rank is inside real data
            long k = r.nextLong(maxK + 1);
            if (k > 0 && k * c.batch * c.world >= c.n) {
                k--; // everything consumed would make the state the next epoch's start
            }
            List<Long> before = new ArrayList<>();
            List<LoaderState> states = new ArrayList<>();
            for (int rank = 0; rank < c.world; rank++) {
                try (Loader l = c.builder(rank).build()) {
                    before.addAll(Runs.indices(Runs.take(l, k)));
                    states.add(LoaderState.fromJson(l.state().toJson()));
                }
            }
            String saved = LoaderState.merge(states).toJson(); // every rank's part
            int w2 = r.nextInt(1, 9);
            Config after = c.withWorld(w2).withWorkers(r.nextInt(0, 9), r.nextInt(1, 9));
            List<Long> rest = new ArrayList<>();
            for (int rank = 0; rank < w2; rank++) {
                try (Loader l = after.base(rank).resume(LoaderState.fromJson(saved)).build()) {
                    rest.addAll(Runs.indices(Runs.all(l)));
                }
            }
            // the model: the epoch's order, the consumed prefix, the remainder split with padding
            Order order = (c.shuffle ? Sampler.shuffle() : Sampler.sequential()).order(c.n, c.seed, c.epoch);
            long consumed = k * c.batch * c.world;
            Map<Long, Integer> expectBefore = new HashMap<>();
            for (long p = 0; p < consumed; p++) {
                expectBefore.merge(order.index(p), 1, Integer::sum);
            }
            assertEquals(expectBefore, counts(before), "before the state: " + c + " k=" + k);
            // same world size: the split of the whole epoch goes on (padding repeats its start);
            // another world size: the remainder is split afresh (padding repeats the remainder's start)
            long splitStart = w2 == c.world ? 0 : consumed;
            long span = c.n - splitStart;
            long pad = span == 0 ? 0 : (span + w2 - 1) / w2 * w2 - span;
            Map<Long, Integer> expectRest = new HashMap<>();
            for (long p = consumed; p < c.n; p++) {
                expectRest.merge(order.index(p), 1, Integer::sum);
            }
            for (long p = 0; p < pad; p++) {
                expectRest.merge(order.index(splitStart + p % span), 1, Integer::sum);
            }
            assertEquals(expectRest, counts(rest), "remainder after W " + c.world + " -> " + w2 + ": " + after + " k=" + k);
            Map<Long, Integer> union = counts(before);
            counts(rest).forEach((key, v) -> union.merge(key, v, Integer::sum));
            assertEquals(c.n, union.size(), "every sample of the epoch delivered: " + after);
        }
    }

    @Test
    void unorderedDeliversTheSameBatchesAndResumesWithoutLossOrRepeat() {
        SplittableRandom r = new SplittableRandom(5);
        for (int i = 0; i < CONFIGS / 2; i++) {
            Config c = random(r);
            int rank = r.nextInt(c.world);
            List<String> ordered = Runs.digests(run(c, rank));
            List<String> got = new ArrayList<>();
            String saved;
            int k = ordered.isEmpty() ? 0 : r.nextInt(ordered.size());
            try (Loader l = c.builder(rank).unordered().build()) {
                got.addAll(Runs.digests(Runs.take(l, k)));
                saved = l.state().toJson();
            }
            try (Loader l = c.withWorkers(r.nextInt(0, 9), r.nextInt(1, 9)).base(rank).unordered()
                    .resume(LoaderState.fromJson(saved)).build()) {
                got.addAll(Runs.digests(Runs.all(l)));
            }
            assertEquals(ordered.stream().sorted().toList(), got.stream().sorted().toList(), c + " state " + saved);
        }
    }

    @Test
    void aStateSavedAfterTheLastBatchIsTheStartOfTheNextEpoch() {
        SplittableRandom r = new SplittableRandom(6);
        for (int i = 0; i < 30; i++) {
            Config c = random(r);
            int rank = r.nextInt(c.world);
            try (Loader l = c.builder(rank).build()) {
                java.util.Iterator<Batch> it = l.iterator();
                long n = 0;
                while (n < l.batches()) {
                    it.next();
                    n++;
                }
                LoaderState before = l.state();   // after the last next(), before hasNext() says false
                boolean more = it.hasNext();
                assertTrue(!more, c.toString());
                assertEquals(l.state(), before, "the same position either way: " + c);
                assertEquals(c.epoch + 1, before.epoch(), c.toString());
                assertEquals(LoaderState.Indexed.START, before.position());
                try (Loader resumed = c.base(rank).resume(before).build()) {
                    try (Loader next = c.base(rank).epoch(c.epoch + 1).build()) {
                        assertEquals(Runs.digests(Runs.all(next)), Runs.digests(Runs.all(resumed)), c.toString());
                    }
                }
            }
        }
    }

    @Test
    void consecutiveEpochsReshuffleAndEachCoversTheDataset() {
        Config c = new Config(1000, 32, 3, 4, 1, 9, true, Tail.PAD, false, 0);
        try (Loader l = c.builder(0).build()) {
            List<Long> e0 = Runs.indices(Runs.all(l));
            assertEquals(1, l.epoch());
            List<Long> e1 = Runs.indices(Runs.all(l));
            assertEquals(1000, new java.util.HashSet<>(e0).size());
            assertEquals(1000, new java.util.HashSet<>(e1).size());
            assertTrue(!e0.equals(e1), "epoch 1 is a different permutation");
            try (Loader l1 = c.base(0).epoch(1).build()) {
                assertEquals(e1, Runs.indices(Runs.all(l1)), "epoch 1 is a function of (seed, epoch)");
            }
        }
    }

    private static Map<Long, Integer> counts(List<Long> xs) {
        Map<Long, Integer> m = new HashMap<>();
        for (long x : xs) {
            m.merge(x, 1, Integer::sum);
        }
        return m;
    }
}
