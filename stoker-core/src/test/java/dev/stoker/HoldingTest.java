package dev.stoker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** NOTE [Holding batches]: a consumer that keeps several batches and gives them back out of order. */
@Timeout(120)
class HoldingTest {

    /** Takes every batch while holding up to {@code holds}, closing a random held one when full. */
    static List<String> takeHolding(Loader l, int holds, SplittableRandom r) {
        List<String> digests = new ArrayList<>();
        List<Batch> held = new ArrayList<>();
        Iterator<Batch> it = l.iterator();
        while (true) {
            if (held.size() == holds) {
                held.remove(r.nextInt(held.size())).close();
            }
            if (!it.hasNext()) {
                break;
            }
            Batch b = it.next();
            Runs.checkSynthetic(b);
            digests.add(Runs.digest(b));
            held.add(b);
            for (Batch h : held) { // a held batch is not overwritten while others are made
                Runs.checkSynthetic(h);
            }
        }
        held.forEach(Batch::close);
        return digests;
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5, 6})
    void batchesHeldAndClosedOutOfOrderAreTheBatchesOfAPlainRun(long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        int workers = r.nextInt(0, 4);
        int holds = r.nextInt(2, 6);
        int batch = r.nextInt(1, 40);
        SyntheticDataset data = new SyntheticDataset(r.nextInt(0, 2000), 24, 0);
        List<String> plain;
        try (Loader l = Loader.builder(data).batchSize(batch).workers(workers).shuffle().seed(seed).build()) {
            plain = Runs.digests(Runs.all(l));
        }
        try (Loader l = Loader.builder(data).batchSize(batch).workers(workers).shuffle().seed(seed).holds(holds).build()) {
            assertEquals(plain, takeHolding(l, holds, r), "workers " + workers + ", holds " + holds);
            assertEquals(l.freeBuffers(), TestHooks.madeBuffers(l), "every buffer back in the pool");
            assertTrue(TestHooks.madeBuffers(l) <= Loader.builder(data).batchSize(batch).workers(workers).holds(holds).buffers(),
                    "no more buffers than the pool's bound");
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5, 6})
    void aStreamingPassHeldOutOfOrderGivesThePlainBatches(long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        StreamingTest.Shards d = new StreamingTest.Shards(r.nextInt(1, 20), seed, -1, -1);
        int workers = r.nextInt(0, 4);
        int holds = r.nextInt(2, 6);
        int batch = r.nextInt(1, 9);
        List<List<Long>> plain;
        try (Loader l = Loader.builder(d, StreamingTest.VALUE).batchSize(batch).workers(workers).shuffle().seed(seed)
                .build()) {
            plain = StreamingTest.take(l, Long.MAX_VALUE);
        }
        List<List<Long>> held = new ArrayList<>();
        try (Loader l = TestHooks.collatorThread(Loader.builder(d, StreamingTest.VALUE).batchSize(batch).workers(workers).shuffle().seed(seed)
                .holds(holds), (seed & 1) == 0 ? Boolean.TRUE : null).build()) {
            ArrayDeque<Batch> out = new ArrayDeque<>();
            Iterator<Batch> it = l.iterator();
            while (true) {
                if (out.size() == holds) {
                    out.pollFirst().close();
                }
                if (!it.hasNext()) {
                    break;
                }
                Batch b = it.next();
                List<Long> values = new ArrayList<>();
                for (int i = 0; i < b.size(); i++) {
                    values.add(b.data(0).getAtIndex(java.lang.foreign.ValueLayout.JAVA_LONG, i));
                }
                held.add(values);
                out.addLast(b);
            }
            out.forEach(Batch::close);
        }
        assertEquals(plain, held, "workers " + workers + ", holds " + holds);
    }

    @Test
    void askingWhileHoldingAsManyAsAllowedIsRefused() {
        try (Loader l = Loader.builder(new SyntheticDataset(100, 8, 0)).batchSize(5).workers(2).holds(2).build()) {
            Iterator<Batch> it = l.iterator();
            Batch a = it.next();
            it.next();
            IllegalStateException e = assertThrows(IllegalStateException.class, it::next);
            assertTrue(e.getMessage().contains("holds 2 batches"), e.getMessage());
            a.close();
            assertEquals(2, it.next().sequence());
        }
    }

    @Test
    void aBatchOfAStoppedPassClosedLaterGivesNothingBack() {
        try (Loader l = Loader.builder(new SyntheticDataset(100, 8, 0)).batchSize(5).workers(2).holds(3).build()) {
            Iterator<Batch> it = l.iterator();
            Batch a = it.next();
            Iterator<Batch> next = l.iterator(); // takes every buffer back
            a.close();                           // must not free a buffer the new pass owns
            int n = 0;
            while (next.hasNext()) {
                next.next().close();
                n++;
            }
            assertEquals(19, n, "the rest of the epoch after the one batch taken");
        }
    }

    @Test
    void eachBufferTakesOneBatchArenaOfTheSizeItsColumnsNeed() {
        CountingAllocator counting = new CountingAllocator();
        AtomicInteger arenas = counting.arenas;
        AtomicLong asked = counting.asked;
        Schema schema = Schema.of(Field.tensor("x", DType.INT64, 3), Field.bytes("b", 10), Field.scalar("y", DType.UINT8));
        Dataset<byte[]> d = new Dataset<>() {
            @Override
            public long size() {
                return 10;
            }

            @Override
            public byte[] get(long index) {
                return new byte[] {(byte) index};
            }
        };
        LoaderBuilder b = Loader.builder(d, Collator.bytes("b", 10)).batchSize(7).workers(3).prefetch(5).holds(4)
                .allocator(counting);
        int planned = b.buffers();
        try (Loader l = b.build()) {
            assertEquals(5 + 4, planned);
            assertEquals(5 + 1, arenas.get(), "the window and one held batch; the others as batches are held");
            assertEquals(Batch.bytesFor(l.schema(), 7), asked.get());
            Iterator<Batch> it = l.iterator();
            List<Batch> held = new ArrayList<>();
            for (int i = 0; i < 2 && it.hasNext(); i++) {
                held.add(it.next());
            }
            assertTrue(arenas.get() <= planned, arenas.get() + " arenas");
            held.forEach(Batch::close);
        }
        // 64-byte aligned columns: x 7*24=168 -> 192; b offsets 64 -> 64, data 70 -> 128; y 7 -> 64
        assertEquals(192 + 64 + 128 + 64, Batch.bytesFor(schema, 7));
    }

    /** Counts the batch arenas a loader asks its allocator for, and the size of the last. */
    private static final class CountingAllocator implements Allocator {
        final AtomicInteger arenas = new AtomicInteger();
        final AtomicLong asked = new AtomicLong();

        @Override
        public Arena newArena() {
            return Arena.ofShared();
        }

        @Override
        public Arena newBatchArena(long bytes) {
            arenas.incrementAndGet();
            asked.set(bytes);
            return Arena.ofShared();
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 3})
    void aLargeHoldsCostsOnlyTheBatchesHeld(int workers) {
        CountingAllocator counting = new CountingAllocator();
        int oneHeld = TestHooks.ahead(Loader.builder(new SyntheticDataset(2000, 16, 0)).batchSize(10).workers(workers), workers, 4)
                .buffers();
        try (Loader l = TestHooks.ahead(Loader.builder(new SyntheticDataset(2000, 16, 0)).batchSize(10).workers(workers), workers, 4)
                .holds(1000).allocator(counting).build()) {
            Iterator<Batch> it = l.iterator();
            while (it.hasNext()) {
                it.next().close(); // given back before the next is asked for
            }
            assertTrue(counting.arenas.get() <= oneHeld + 1, counting.arenas.get() + " buffers for a consumer that holds one");
            List<Batch> held = new ArrayList<>();
            it = l.iterator();
            while (it.hasNext()) { // the next epoch, every batch kept
                Batch b = it.next();
                held.add(b);
                for (Batch h : held) {
                    Runs.checkSynthetic(h);
                }
            }
            assertEquals(200, held.size());
            assertTrue(counting.arenas.get() <= oneHeld + 200, counting.arenas.get() + " buffers for 200 held batches");
            held.forEach(Batch::close);
        }
    }

    @Test
    void aStreamingPassMakesTheBuffersOfHeldBatchesAsTheyAreHeld() {
        CountingAllocator counting = new CountingAllocator();
        StreamingTest.Shards d = new StreamingTest.Shards(12, 3, -1, -1);
        List<List<Long>> plain;
        try (Loader l = Loader.builder(d, StreamingTest.VALUE).batchSize(3).workers(2).build()) {
            plain = StreamingTest.take(l, Long.MAX_VALUE);
        }
        try (Loader l = Loader.builder(d, StreamingTest.VALUE).batchSize(3).workers(2).holds(500).allocator(counting).build()) {
            int start = counting.arenas.get();
            List<Batch> held = new ArrayList<>();
            List<List<Long>> got = new ArrayList<>();
            Iterator<Batch> it = l.iterator();
            while (it.hasNext()) {
                Batch b = it.next();
                held.add(b);
                List<Long> values = new ArrayList<>();
                for (int i = 0; i < b.size(); i++) {
                    values.add(b.data(0).getAtIndex(java.lang.foreign.ValueLayout.JAVA_LONG, i));
                }
                got.add(values);
            }
            for (int k = 0; k < held.size(); k++) { // none of the kept batches was overwritten
                Batch b = held.get(k);
                for (int i = 0; i < b.size(); i++) {
                    assertEquals(got.get(k).get(i), b.data(0).getAtIndex(java.lang.foreign.ValueLayout.JAVA_LONG, i));
                }
            }
            assertEquals(plain, got);
            assertTrue(counting.arenas.get() <= start + held.size(), counting.arenas.get() + " buffers");
            held.forEach(Batch::close);
        }
    }
}
