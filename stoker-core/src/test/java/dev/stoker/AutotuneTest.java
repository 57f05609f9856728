package dev.stoker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/** Workers and prefetch depth chosen while running (NOTE [Autotune] in Tuner). */
class AutotuneTest {
    private static final double MS = 1e6;

    /** A tuner for 1..4 workers and a window of 2..16 that tunes both. */
    private static Tuner tuner() {
        return new Tuner(1, 4, true, 2, 16, true, 8);
    }

    @Test
    void aWaitingConsumerWithBusyWorkersGetsTheWorkersTheModelAsksFor() {
        Tuner t = tuner();
        // a batch takes 6 ms of worker time and 3 ms of the consumer's: 1.1 * 6 / 3 -> 3 workers
        assertTrue(t.decide(0, 100, 0.5, 1.0, 0, 6 * MS, 3 * MS));
        assertEquals(3, t.workers());
        assertEquals(6, t.prefetch(), "the window grows with the workers, two batches each");
        assertEquals(1, t.history().size());
        assertTrue(t.history().getFirst().contains("workers 1 -> 3"), t.history().toString());
    }

    @Test
    void oneJumpGoesNoFurtherThanTheCoresAndThenOneWorkerAtATime() {
        Tuner t = new Tuner(1, 8, true, 2, 16, true, 2);
        assertTrue(t.decide(0, 100, 0.9, 1.0, 0, 6 * MS, 0));
        assertEquals(2, t.workers());
        t.decide(0, 200, 0.9, 2.0, 0, 6 * MS, 0);
        t.decide(0, 200, 0.9, 2.0, 0, 6 * MS, 0);
        t.decide(0, 200, 0.9, 2.0, 0, 6 * MS, 0); // kept: twice the rate
        assertTrue(t.decide(0, 200, 0.9, 2.0, 0, 6 * MS, 0));
        assertEquals(3, t.workers(), "past the cores, one at a time");
    }

    @Test
    void aConsumerThatTakesNoTimeGetsTheWholeBudget() {
        Tuner t = tuner();
        assertTrue(t.decide(0, 100, 0.9, 1.0, 0, 6 * MS, 0));
        assertEquals(4, t.workers());
    }

    @Test
    void aRaiseThatBuysNothingIsUndoneAndNotRetriedAtOnce() {
        Tuner t = tuner();
        t.decide(0, 100, 0.5, 1.0, 0, 6 * MS, 3 * MS);
        assertEquals(3, t.workers());
        assertFalse(t.decide(0, 101, 0.5, 2.0, 0, 6 * MS, 3 * MS), "the first interval after a change settles");
        assertFalse(t.decide(0, 101, 0.5, 2.0, 0, 6 * MS, 3 * MS), "judged over two intervals");
        assertTrue(t.decide(0, 101, 0.5, 2.0, 0, 6 * MS, 3 * MS), "1% more is not worth two workers");
        assertEquals(1, t.workers());
        assertEquals(2, t.prefetch());
        t.decide(0, 100, 0.5, 1.0, 0, 6 * MS, 3 * MS); // settles after the undo
        // still waiting, but more workers are not tried again during the back-off; busy workers
        // that are never blocked gain nothing from a deeper window
        assertFalse(t.decide(0, 100, 0.5, 1.0, 0, 6 * MS, 3 * MS));
        // with some blocking, the window deepens instead
        assertTrue(t.decide(0, 100, 0.5, 1.0, 0.1, 6 * MS, 3 * MS));
        assertEquals(1, t.workers());
        assertEquals(4, t.prefetch());
        assertTrue(t.history().get(1).contains("undone"), t.history().toString());
    }

    @Test
    void aRaiseThatPaysIsKept() {
        Tuner t = tuner();
        t.decide(0, 100, 0.5, 1.0, 0, 6 * MS, 3 * MS);
        t.decide(0, 150, 0.2, 2.0, 0, 6 * MS, 3 * MS);
        t.decide(0, 150, 0.2, 2.0, 0, 6 * MS, 3 * MS);
        assertFalse(t.decide(0, 150, 0.2, 2.0, 0, 6 * MS, 3 * MS));
        assertEquals(3, t.workers());
        // the consumer still waits: the next raise goes to the budget's end
        assertTrue(t.decide(0, 150, 0.2, 3.0, 0, 6 * MS, 3 * MS));
        assertEquals(4, t.workers());
    }

    @Test
    void workersBlockedAtTheWindowWhileTheConsumerWaitsDeepenTheWindow() {
        Tuner t = tuner();
        assertTrue(t.decide(0, 100, 0.2, 0.5, 0.4, 1 * MS, 3 * MS));
        assertEquals(1, t.workers());
        assertEquals(4, t.prefetch());
        assertTrue(t.history().getFirst().contains("blocked"), t.history().toString());
    }

    @Test
    void aCalmConsumerGivesBackAWorkerAndTakesItAgainIfTheRateDrops() {
        Tuner t = new Tuner(3, 4, true, 6, 16, true, 8);
        assertFalse(t.decide(0, 100, 0.001, 0.5, 0, 5 * MS, 10 * MS));
        assertFalse(t.decide(0, 100, 0.001, 0.5, 0, 5 * MS, 10 * MS));
        assertTrue(t.decide(0, 100, 0.001, 0.5, 0, 5 * MS, 10 * MS), "three calm intervals, 0.5 cores busy of 3");
        assertEquals(2, t.workers());
        t.decide(0, 80, 0.2, 0.5, 0, 5 * MS, 10 * MS); // settles
        assertFalse(t.decide(0, 80, 0.2, 0.5, 0, 5 * MS, 10 * MS));
        assertTrue(t.decide(0, 80, 0.2, 0.5, 0, 5 * MS, 10 * MS), "the rate fell: undone");
        assertEquals(3, t.workers());
    }

    @Test
    void aLoweringThatCostsNothingIsKept() {
        Tuner t = new Tuner(2, 4, true, 4, 16, true, 8);
        for (int i = 0; i < 3; i++) {
            t.decide(0, 100, 0, 0.3, 0, 1 * MS, 10 * MS);
        }
        assertEquals(1, t.workers());
        t.decide(0, 100, 0, 0.3, 0, 1 * MS, 10 * MS);
        t.decide(0, 100, 0, 0.3, 0, 1 * MS, 10 * MS);
        assertFalse(t.decide(0, 100, 0, 0.3, 0, 1 * MS, 10 * MS));
        assertEquals(1, t.workers());
    }

    @Test
    void choicesStayWithinTheBudgetWhateverIsMeasured() {
        SplittableRandom r = new SplittableRandom(7);
        for (int run = 0; run < 50; run++) {
            int maxWorkers = r.nextInt(1, 9);
            int maxPrefetch = r.nextInt(1, 40);
            boolean tw = r.nextBoolean();
            boolean tp = r.nextBoolean();
            int w0 = tw ? 1 : maxWorkers;
            int p0 = Math.min(maxPrefetch, 2 * w0);
            Tuner t = new Tuner(w0, maxWorkers, tw, p0, maxPrefetch, tp, 8);
            for (int i = 0; i < 500; i++) {
                t.decide(i, r.nextDouble(0, 1000), r.nextDouble(), r.nextDouble(0, 8), r.nextDouble(),
                        r.nextDouble(0, 10 * MS), r.nextInt(4) == 0 ? 0 : r.nextDouble(0, 10 * MS));
                assertTrue(t.workers() >= 1 && t.workers() <= maxWorkers, "workers " + t.workers());
                assertTrue(t.prefetch() >= 1 && t.prefetch() <= maxPrefetch, "prefetch " + t.prefetch());
                assertTrue(tw || t.workers() == w0, "workers are fixed");
                assertTrue(tp || t.prefetch() == p0, "prefetch is fixed");
            }
        }
    }

    // ---- loaders ------------------------------------------------------------------------------

    /** Synthetic samples that take {@code nanos} of waiting each (like a read), not CPU. */
    record Slow(SyntheticDataset data, long nanos) implements DirectDataset {
        @Override
        public long size() {
            return data.size();
        }

        @Override
        public Schema schema() {
            return data.schema();
        }

        @Override
        public void read(long index, Row row) throws IOException {
            LockSupport.parkNanos(nanos);
            data.read(index, row);
        }
    }

    @Test
    void slowSamplesAndAQuickConsumerGetMoreWorkers() {
        Slow d = new Slow(new SyntheticDataset(8000, 64, 0), 200_000);
        try (Loader l = Loader.builder(d).batchSize(8).workers(Loader.AUTO).prefetch(Loader.AUTO).budget(4, 64 << 20)
                .build()) {
            assertTrue(l.autotuned());
            assertEquals(1, l.workers(), "starts with one worker");
            List<Runs.Delivered> got = Runs.all(l);
            assertEquals(1000, got.size());
            assertTrue(l.workers() >= 3, "workers " + l.workers() + "; " + l.tuningHistory());
            assertFalse(l.tuningHistory().isEmpty());
        }
    }

    @Test
    void aSlowConsumerKeepsOneWorker() {
        SyntheticDataset d = new SyntheticDataset(2000, 64, 0);
        try (Loader l = Loader.builder(d).batchSize(8).workers(Loader.AUTO).prefetch(Loader.AUTO).budget(4, 64 << 20)
                .build()) {
            var it = l.iterator();
            int n = 0;
            while (it.hasNext() && n < 150) {
                it.next();
                n++;
                LockSupport.parkNanos(2_000_000);
            }
            assertEquals(1, l.workers(), l.tuningHistory().toString());
        }
    }

    @Test
    void autotunedLoadersDeliverTheSameBatchesAsFixedOnes() {
        SplittableRandom r = new SplittableRandom(11);
        for (int i = 0; i < 6; i++) {
            int batch = r.nextInt(1, 9);
            long seed = r.nextLong();
            int world = r.nextInt(1, 3);
            int rank = r.nextInt(world);
            Slow d = new Slow(new SyntheticDataset(r.nextInt(200, 1200), 24, 0), r.nextInt(0, 100_000));
            List<String> fixed;
            try (Loader l = Loader.builder(d).batchSize(batch).workers(2).shuffle().seed(seed).worldSize(world)
                    .rank(rank).build()) {
                fixed = Runs.digests(Runs.all(l));
            }
            try (Loader l = Loader.builder(d).batchSize(batch).workers(Loader.AUTO).prefetch(Loader.AUTO)
                    .budget(r.nextInt(1, 6), r.nextInt(1, 64) * 1024L).shuffle().seed(seed).worldSize(world)
                    .rank(rank).build()) {
                for (int epoch = 0; epoch < 2; epoch++) {
                    List<String> got = Runs.digests(Runs.all(l));
                    if (epoch == 0) {
                        assertEquals(fixed, got, "config " + i + ", tuning " + l.tuningHistory());
                    }
                }
                assertTrue(l.freeBuffers() >= l.prefetch() + 1, "every buffer is back once the loader is idle");
            }
        }
    }

    @Test
    void autotunedStreamsDeliverTheSameBatchesAsFixedOnes() {
        StreamingTest.Shards d = new StreamingTest.Shards(40, 3, -1, -1);
        Transform<Long, Long> slow = (v, ctx) -> {
            LockSupport.parkNanos(50_000);
            return v;
        };
        List<List<Long>> fixed;
        try (Loader l = Loader.builder(d, slow, StreamingTest.VALUE).batchSize(5).workers(2).shuffle().seed(5)
                .build()) {
            fixed = StreamingTest.take(l, Long.MAX_VALUE);
        }
        try (Loader l = Loader.builder(d, slow, StreamingTest.VALUE).batchSize(5).workers(Loader.AUTO)
                .budget(4, 1 << 20).shuffle().seed(5).build()) {
            assertEquals(fixed, StreamingTest.take(l, Long.MAX_VALUE), l.tuningHistory().toString());
        }
    }

    @Test
    void theMemoryBudgetBoundsTheBatchBuffers() {
        Slow d = new Slow(new SyntheticDataset(3000, 1000, 0), 100_000);
        long batchBytes = 8 * 1000;
        try (Loader l = Loader.builder(d).batchSize(8).workers(Loader.AUTO).prefetch(Loader.AUTO)
                .budget(4, 5 * batchBytes).build()) {
            List<Integer> depths = new ArrayList<>();
            var it = l.iterator();
            while (it.hasNext()) {
                it.next();
                depths.add(l.prefetch());
            }
            assertTrue(depths.stream().allMatch(p -> p >= 1 && p <= 4), depths.toString());
            assertTrue(l.freeBuffers() <= 5, "buffers " + l.freeBuffers());
        }
    }
}
