package dev.stoker;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The collator hand-off (NOTE [Background collation] in StreamPass): filled batches in order, from
 * the collator thread to the consumer. One producer, one consumer, at most {@code capacity}
 * (the pool's buffers) in it. The consumer parks with a flag set before it re-checks, and the
 * collator reads the flag after publishing, so no wake-up is lost.
 */
final class FilledQueue {
    /** A batch filled by the collating thread, with where the stream stands after it (or why it stopped). */
    static final class Filled {
        Batch batch;
        /** The position after the batch: the shard position and sample offset, and with a shuffle window how much of the block there went out. */
        long shard;
        long offset;
        long emitted;
        long collateNanos;
        long displacement;
        long displaced;
        double shardShare;
        long skipped;
        Throwable error;
        boolean end;
    }

    private final Filled[] ring;
    private volatile long head;
    private volatile long tail;
    private volatile boolean consumerWaiting;
    private volatile Thread consumer;

    FilledQueue(int capacity) {
        this.ring = new Filled[capacity];
    }

    /** Collator: hands over the next filled batch and wakes the consumer if it waits. */
    void put(Filled f) {
        long t = tail;
        ring[(int) (t % ring.length)] = f;
        tail = t + 1;
        Thread waiting = consumer;
        if (consumerWaiting && waiting != null) {
            LockSupport.unpark(waiting);
        }
    }

    /** What a waiting consumer checks between naps. */
    interface Waiting {
        /** Fails if the pass was stopped. */
        void checkCurrent();

        /** The error for a wait of {@code waited} ns that reached the deadline. */
        RuntimeException timeout(long waited);
    }

    /** Consumer: the next filled batch, waiting for it (since {@code t0}) until {@code deadline}. */
    Filled take(long t0, long deadline, Waiting w) {
        consumer = Thread.currentThread();
        while (true) {
            long h = head;
            if (h < tail) {
                int i = (int) (h % ring.length);
                Filled f = ring[i];
                ring[i] = null;
                head = h + 1;
                return f;
            }
            w.checkCurrent();
            long now = System.nanoTime();
            if (now >= deadline) {
                throw w.timeout(now - t0);
            }
            consumerWaiting = true;
            if (head == tail) { // re-checked after publishing that it waits
                LockSupport.parkNanos(this, Math.min(deadline - now, TimeUnit.MILLISECONDS.toNanos(100)));
            }
            consumerWaiting = false;
        }
    }
}
