package dev.stoker.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class BlockCacheTest {

    @Test
    void eachBlockIsDecodedOnceWhileItFitsAndTheBoundHolds() throws Exception {
        int blocks = 40;
        AtomicIntegerArray decoded = new AtomicIntegerArray(blocks);
        long[] maxHeld = new long[1];
        // every block is 100 bytes: a bound of 1,000 holds ten
        BlockCache<long[]> cache = new BlockCache<>("t", blocks, 1000, k -> {
            decoded.incrementAndGet(k);
            java.util.concurrent.locks.LockSupport.parkNanos(20_000);
            return new long[] {k};
        }, v -> 100);
        Thread[] threads = new Thread[4];
        Throwable[] failure = new Throwable[1];
        for (int t = 0; t < threads.length; t++) {
            int seed = t;
            threads[t] = new Thread(() -> {
                try {
                    SplittableRandom r = new SplittableRandom(seed);
                    for (int i = 0; i < 2000; i++) {
                        int k = r.nextInt(8); // a working set that fits
                        assertEquals(k, cache.get(k)[0]);
                        synchronized (maxHeld) {
                            maxHeld[0] = Math.max(maxHeld[0], cache.heldBytes());
                        }
                    }
                } catch (Throwable e) {
                    failure[0] = e;
                }
            });
            threads[t].start();
        }
        for (Thread t : threads) {
            t.join();
        }
        assertEquals(null, failure[0]);
        for (int k = 0; k < 8; k++) {
            assertEquals(1, decoded.get(k), "block " + k + " decoded once");
        }
        assertTrue(maxHeld[0] <= 1000, "held " + maxHeld[0]);
        // a pass through all forty: never more than the bound held, the least recently used dropped
        for (int k = 0; k < blocks; k++) {
            assertEquals(k, cache.get(k)[0]);
            assertTrue(cache.heldBytes() <= 1000);
        }
        assertEquals(1, decoded.get(39));
        cache.get(0);
        assertEquals(2, decoded.get(0), "block 0 was dropped and decoded again");
    }

    @Test
    void aFailedDecodeIsReportedToEveryWaiterAndNotKept() throws Exception {
        int[] calls = new int[1];
        BlockCache<String> cache = new BlockCache<>("t", 3, 1 << 20, k -> {
            calls[0]++;
            if (calls[0] == 1) {
                throw new IOException("block " + k + " is damaged");
            }
            return "ok" + k;
        }, v -> 10);
        IOException e = assertThrows(IOException.class, () -> cache.get(1));
        assertEquals("block 1 is damaged", e.getMessage());
        assertEquals("ok1", cache.get(1), "tried again, not cached as failed");
        cache.close();
        cache.close();
        assertThrows(IllegalStateException.class, () -> cache.get(0));
    }
}
