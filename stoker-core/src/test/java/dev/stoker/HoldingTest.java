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
        try (Loader l = Loader.builder(data).batchSize(batch).workers(workers).shuffle(true).seed(seed).build()) {
            plain = Runs.digests(Runs.all(l));
        }
        try (Loader l = Loader.builder(data).batchSize(batch).workers(workers).shuffle(true).seed(seed).holds(holds).build()) {
            assertEquals(plain, takeHolding(l, holds, r), "workers " + workers + ", holds " + holds);
            assertEquals(l.freeBuffers(), Loader.builder(data).batchSize(batch).workers(workers).holds(holds).buffers(),
                    "every buffer back in the pool");
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
        try (Loader l = Loader.builder(d, StreamingTest.VALUE).batchSize(batch).workers(workers).shuffle(true).seed(seed)
                .build()) {
            plain = StreamingTest.take(l, Long.MAX_VALUE);
        }
        List<List<Long>> held = new ArrayList<>();
        try (Loader l = TestHooks.collatorThread(Loader.builder(d, StreamingTest.VALUE).batchSize(batch).workers(workers).shuffle(true).seed(seed)
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
        AtomicInteger arenas = new AtomicInteger();
        AtomicLong asked = new AtomicLong();
        Allocator counting = new Allocator() {
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
        };
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
        Loader.Builder b = Loader.builder(d, Collator.bytes("b", 10)).batchSize(7).workers(3).prefetch(5).holds(4)
                .allocator(counting);
        int planned = b.buffers();
        try (Loader l = b.build()) {
            assertEquals(5 + 4, planned);
            assertEquals(planned, arenas.get());
            assertEquals(Batch.bytesFor(l.schema(), 7), asked.get());
        }
        // 64-byte aligned columns: x 7*24=168 -> 192; b offsets 64 -> 64, data 70 -> 128; y 7 -> 64
        assertEquals(192 + 64 + 128 + 64, Batch.bytesFor(schema, 7));
    }
}
