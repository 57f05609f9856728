package dev.stoker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Targeted stress tests of the engine's lock-free hand-offs, each protocol on its own, under
 * random timing: nothing lost, nothing duplicated, order kept, and no wake-up lost. Every park
 * has a timed fallback (100 ms), so a lost wake-up shows as a wait that long, not as a hang: a
 * hand-off that waited 50 ms or more while the other side was running fails the test.
 */
class HandOffStressTest {
    private static final long LOST_WAKEUP_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    /** A short random pause: mostly none, sometimes a spin, sometimes a yield or a brief park. */
    private static void jitter(java.util.SplittableRandom r) {
        switch (r.nextInt(8)) {
            case 0 -> Thread.yield();
            case 1 -> LockSupport.parkNanos(r.nextInt(1, 20_000));
            case 2 -> {
                for (int i = r.nextInt(200); i > 0; i--) {
                    Thread.onSpinWait();
                }
            }
            default -> {
            }
        }
    }

    /** FilledQueue: the collator's batches reach the consumer in order, each once, and a parked consumer is always woken. */
    @Test
    @Timeout(60)
    void theCollatorHandOffKeepsOrderAndLosesNoWakeUp() throws Exception {
        for (int round = 0; round < 20; round++) {
            int capacity = 1 + round % 4;
            int n = 5_000;
            FilledQueue q = new FilledQueue(capacity);
            java.util.concurrent.Semaphore room = new java.util.concurrent.Semaphore(capacity);
            FilledQueue.Filled[] items = new FilledQueue.Filled[n];
            for (int i = 0; i < n; i++) {
                items[i] = new FilledQueue.Filled();
                items[i].shard = i;
            }
            AtomicReference<Throwable> failed = new AtomicReference<>();
            long seed = round;
            Thread producer = new Thread(() -> {
                java.util.SplittableRandom r = new java.util.SplittableRandom(seed);
                try {
                    for (int i = 0; i < n; i++) {
                        room.acquire(); // as the collator waits for a free buffer
                        jitter(r);
                        q.put(items[i]);
                    }
                } catch (Throwable e) {
                    failed.set(e);
                }
            });
            producer.start();
            FilledQueue.Waiting never = new FilledQueue.Waiting() {
                @Override
                public void checkCurrent() {
                }

                @Override
                public RuntimeException timeout(long waited) {
                    return new IllegalStateException("timed out");
                }
            };
            java.util.SplittableRandom r = new java.util.SplittableRandom(~seed);
            long longest = 0;
            for (int i = 0; i < n; i++) {
                long t0 = System.nanoTime();
                FilledQueue.Filled f = q.take(t0, Long.MAX_VALUE, never);
                longest = Math.max(longest, System.nanoTime() - t0);
                assertEquals(i, f.shard, "in order, each once");
                room.release();
                jitter(r);
            }
            producer.join();
            assertNull(failed.get());
            assertTrue(longest < LOST_WAKEUP_NANOS, "a take waited " + longest / 1000 + " us: a lost wake-up");
        }
    }

    /**
     * ShardRing: one reader appends, several helpers transform out of order, one taker takes:
     * every sample arrives once, in stream order, transformed, and neither the taker nor the
     * reader waiting for room misses its wake-up (NOTE [Helping], NOTE [Hand-off]).
     */
    @Test
    @Timeout(60)
    void aShardRingDeliversEverySampleOnceInOrderWhateverTheHelpersTiming() throws Exception {
        for (int round = 0; round < 12; round++) {
            int capacity = 1 + round * 3;
            int n = 4_000;
            int helpers = 1 + round % 3;
            Options o = new Options(Sampler.sequential(), 8, helpers, 1, false, 1, 0, 1, Tail.PAD, 1, 0, null,
                    ErrorPolicy.FAIL, true, 1, 0, capacity, 0, 0, false, null, 1);
            StreamingDataset<Long> none = new StreamingTest.Shards(1, 1, -1, -1);
            Transform<Long, Long> negate = (v, ctx) -> -v;
            StreamEpoch epoch = StreamEpoch.of(new StreamSource<>(none, negate, StreamingTest.VALUE), o, 0,
                    LoaderState.Streams.start(1, Tail.PAD, 0, 1));
            Thread taker = Thread.currentThread();
            volatile_int needed = new volatile_int();
            ShardRing[] box = new ShardRing[1];
            java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
            Thread[] helping = new Thread[helpers];
            ShardRing ring = new ShardRing(epoch, new ShardRing.Owner() {
                @Override
                public Thread taker() {
                    return taker;
                }

                @Override
                public int needed() {
                    return needed.v;
                }

                @Override
                public void checkCurrent() {
                }

                @Override
                public void wakeIdle() {
                    for (Thread h : helping) {
                        LockSupport.unpark(h);
                    }
                }
            }, capacity);
            box[0] = ring;
            ring.open(0);
            AtomicReference<Throwable> failed = new AtomicReference<>();
            long seed = round;
            for (int h = 0; h < helpers; h++) {
                int id = h;
                helping[h] = new Thread(() -> {
                    java.util.SplittableRandom r = new java.util.SplittableRandom(seed * 31 + id);
                    SampleContext context = new SampleContext();
                    StageTimes times = new StageTimes();
                    while (!stop.get()) {
                        if (!ring.transformOne(0, context, times)) {
                            LockSupport.parkNanos(20_000);
                        }
                        jitter(r);
                    }
                });
                helping[h].start();
            }
            Thread reader = new Thread(() -> {
                java.util.SplittableRandom r = new java.util.SplittableRandom(~seed);
                try {
                    for (int i = 0; i < n; i++) {
                        while (ring.full()) {
                            LockSupport.parkNanos(20_000); // the reader's own rest, woken or timed
                        }
                        ring.append((long) i, 0, i);
                        jitter(r);
                    }
                    ring.finish(null, null);
                } catch (Throwable e) {
                    failed.set(e);
                }
            });
            reader.start();
            java.util.SplittableRandom r = new java.util.SplittableRandom(seed + 7);
            StreamItem item = new StreamItem();
            long longest = 0;
            for (int i = 0; i < n; i++) {
                needed.v = 1 + r.nextInt(16);
                long t0 = System.nanoTime();
                assertTrue(ring.take(item, t0, Long.MAX_VALUE), "sample " + i);
                longest = Math.max(longest, System.nanoTime() - t0);
                assertNull(item.error);
                assertEquals(i, item.offset, "in stream order");
                assertEquals(-(long) i, item.value, "transformed, once");
                if (r.nextInt(4) == 0) {
                    jitter(r);
                }
            }
            assertTrue(!ring.take(item, System.nanoTime(), Long.MAX_VALUE), "nothing after the last sample");
            stop.set(true);
            reader.join();
            for (Thread h : helping) {
                h.join();
            }
            assertNull(failed.get());
            assertTrue(longest < LOST_WAKEUP_NANOS, "a take waited " + longest / 1000 + " us: a lost wake-up");
        }
    }

    /** A value one thread writes and another reads. */
    private static final class volatile_int {
        volatile int v = 1;
    }

    /** FreeList: buffers acquired and released by two threads are never handed out twice. */
    @Test
    @Timeout(60)
    void theFreeListNeverHandsOutABufferTwice() throws Exception {
        int size = 5;
        FreeList free = new FreeList(size);
        java.util.concurrent.atomic.AtomicIntegerArray owner = new java.util.concurrent.atomic.AtomicIntegerArray(size);
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Thread[] threads = new Thread[3];
        for (int t = 0; t < threads.length; t++) {
            int id = t + 1;
            threads[t] = new Thread(() -> {
                java.util.SplittableRandom r = new java.util.SplittableRandom(id);
                try {
                    for (int i = 0; i < 200_000; i++) {
                        int slot = free.acquire();
                        if (slot < 0) {
                            continue;
                        }
                        if (!owner.compareAndSet(slot, 0, id)) {
                            throw new AssertionError("slot " + slot + " handed out twice");
                        }
                        if (r.nextInt(16) == 0) {
                            jitter(r);
                        }
                        owner.set(slot, 0);
                        free.release(slot);
                    }
                } catch (Throwable e) {
                    failed.set(e);
                }
            });
            threads[t].start();
        }
        for (Thread t : threads) {
            t.join();
        }
        assertNull(failed.get());
        assertEquals(size, free.free(), "every buffer back");
    }
}
