package dev.stoker;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A lock-free set of free buffer numbers {@code [0, size)}, where {@code size} may grow up to a
 * capacity: acquire and release allocate nothing.
 */
final class FreeList {
    private final AtomicLongArray bits;
    private volatile int n;

    FreeList(int n) {
        this(n, n);
    }

    FreeList(int capacity, int size) {
        this.bits = new AtomicLongArray((capacity + 63) / 64);
        this.n = size;
        reset();
    }

    /** Buffer numbers that exist. */
    int size() {
        return n;
    }

    /** Adds the numbers {@code [size, newSize)}, free (one thread grows the list). */
    void grow(int newSize) {
        for (int i = n; i < newSize; i++) {
            release(i);
        }
        n = Math.max(n, newSize);
    }

    /** Every existing number free again. */
    void reset() {
        for (int w = 0; w < bits.length(); w++) {
            int from = w * 64;
            int count = Math.clamp(n - from, 0, 64);
            bits.set(w, count == 64 ? -1L : (1L << count) - 1);
        }
    }

    /** A free buffer number, now taken, or -1 when none is free. */
    int acquire() {
        for (int w = 0; w < bits.length(); w++) {
            long v;
            while ((v = bits.get(w)) != 0) {
                long low = v & -v;
                if (bits.compareAndSet(w, v, v & ~low)) {
                    return w * 64 + Long.numberOfTrailingZeros(low);
                }
            }
        }
        return -1;
    }

    void release(int i) {
        int w = i >>> 6;
        long bit = 1L << (i & 63);
        long v;
        do {
            v = bits.get(w);
            if ((v & bit) != 0) {
                throw new IllegalStateException("buffer " + i + " released twice");
            }
        } while (!bits.compareAndSet(w, v, v | bit));
    }

    int free() {
        int c = 0;
        for (int w = 0; w < bits.length(); w++) {
            c += Long.bitCount(bits.get(w));
        }
        return c;
    }
}
