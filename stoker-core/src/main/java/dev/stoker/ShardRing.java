package dev.stoker;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

/**
 * One shard position's samples: read by one worker, transformed by any, taken in order by the
 * thread that collates.
 *
 * <p>NOTE [Helping]: a ring holds one shard position's samples in stream order. Its reader (the
 * worker that claimed the position) appends raw samples at {@code tail} while there is room; the
 * transforms are claimed in order by a compare-and-set on {@code claimed}, by whichever worker is
 * free: one whose own ring is full, one waiting for the window, one with no shard left to claim.
 * A transformed slot is published by writing its sequence number + 1 into {@code done}, and the
 * taker takes slots at {@code head} in order once they are done. Sequence numbers only grow (a
 * ring moving to its next position keeps counting), so a claim can never land on a slot of an
 * earlier or later use of the ring. A worker with nothing to do parks as idle and is woken by
 * whatever could give it work: a new raw sample, the window moving, room in its ring.
 *
 * <p>NOTE [Hand-off]: waking a parked thread costs microseconds of CPU on both sides, as much as
 * reading a cheap sample, so the ring wakes threads for runs of samples, not for each one. A
 * taker that finds its next sample missing parks until the samples it still needs for the batch
 * (or shuffle block) are in, at most half a ring ({@code wakeAt}), or the shard ends; transforms
 * finish out of order, so once the last of those is done, every earlier one that finishes wakes
 * it again until it has them all. Once the reader has finished, the shard's last sample bounds
 * what the taker waits for, on both sides: without that, a taker needing more samples than the
 * shard had left slept out its timed park (100 ms) when the last transforms finished after the
 * reader did. A reader resting on a full ring is woken when a quarter of it is free again
 * ({@code wakeRoom}). Before parking, either side re-checks what it waits for after
 * publishing that it parks, so no wake-up is lost; the condition it was woken for is re-checked,
 * never assumed.
 */
final class ShardRing {
    /** What a ring needs of the pass it belongs to. */
    interface Owner {
        /** The thread that takes samples (and so is woken by the ring): the consumer's, or the collator's. */
        Thread taker();

        /** Samples the taker still needs before it can deliver: how long it may sleep. */
        int needed();

        /** Fails if the pass was stopped. */
        void checkCurrent();

        /** Wakes the workers that wait for work of any kind. */
        void wakeIdle();
    }

    private final StreamEpoch stream;
    private final Owner owner;
    private final int capacity;
    private final Object[] values;
    private final Throwable[] errors;
    private final long[] offsets;
    private final int[] shards;
    private final AtomicLongArray done;
    private final AtomicLong claimed = new AtomicLong();
    private volatile long head;
    private volatile long tail;
    /** The shard position this ring holds now. */
    private volatile long position = -1;
    /** The reader is finished with this position: no sample will be appended. */
    private volatile boolean fetched;
    /** The taker drops the rest of this shard (SKIP_SHARD after a failed transform). */
    private volatile boolean abandoned;
    /** The position's reader once it is finished (before {@code fetched}), for the taker to close. */
    private StreamingDataset.ShardReader<?> spent;
    private Throwable error;
    private volatile boolean takerParked;
    /** While the taker is parked: the sequence number whose append wakes it (NOTE [Hand-off]). */
    private volatile long wakeAt = Long.MAX_VALUE;
    /** Room (free slots) at which a reader waiting for room is woken: a run of appends per wake-up. */
    private final int wakeRoom;

    ShardRing(StreamEpoch stream, Owner owner, int capacity) {
        this.stream = stream;
        this.owner = owner;
        this.capacity = capacity;
        this.wakeRoom = Math.max(1, capacity / 4);
        values = new Object[capacity];
        errors = new Throwable[capacity];
        offsets = new long[capacity];
        shards = new int[capacity];
        done = new AtomicLongArray(capacity);
    }

    // ---- the reader --------------------------------------------------------------------------

    /** Reader: starts position {@code m}; the taker has drained and released the previous one. */
    void open(long m) {
        position = m;
    }

    boolean full() {
        return tail - head >= capacity;
    }

    /** Raw samples appended and not yet claimed for a transform. */
    long unclaimed() {
        return tail - claimed.get();
    }

    boolean abandoned() {
        return abandoned;
    }

    /** Reader: appends a raw sample (there is room); with no transform, it is ready as it is. */
    void append(Object raw, int shard, long offset) {
        long t = tail;
        int i = (int) (t % capacity);
        values[i] = raw;
        errors[i] = null;
        offsets[i] = offset;
        shards[i] = shard;
        boolean ready = !stream.transforms();
        if (ready) {
            claimed.set(t + 1); // before tail moves, so no helper ever sees it unclaimed
            done.set(i, t + 1);
        }
        tail = t + 1;
        if (ready && takerParked && t >= wakeAt) {
            LockSupport.unpark(owner.taker());
        }
    }

    /**
     * Reader: no more samples for this position; {@code e} is the reason it stopped early, if
     * any; {@code reader} is for the taker to close once the samples are done with.
     */
    void finish(Throwable e, StreamingDataset.ShardReader<?> reader) {
        error = e;
        spent = reader;
        fetched = true;
        if (takerParked) {
            LockSupport.unpark(owner.taker());
        }
    }

    // ---- any worker --------------------------------------------------------------------------

    /** Whether this ring holds position {@code p} and has a raw sample to transform. */
    boolean hasWork(long p) {
        return position == p && claimed.get() < tail;
    }

    /** Any worker: claims and transforms the next raw sample of position {@code p}; false if there is none. */
    boolean transformOne(long p, SampleContext context, StageTimes times) {
        if (position != p) {
            return false;
        }
        long c = claimed.get();
        if (c >= tail || !claimed.compareAndSet(c, c + 1)) {
            return false;
        }
        int i = (int) (c % capacity);
        long t0 = System.nanoTime();
        try {
            if (!abandoned) {
                stream.contextFor(context, shards[i], offsets[i]);
                values[i] = stream.transform(values[i], context);
            }
        } catch (Throwable e) {
            values[i] = null;
            errors[i] = e;
        }
        times.transform += System.nanoTime() - t0;
        done.set(i, c + 1);
        if (takerParked) {
            // transforms finish out of order: wake the taker when the last sample it waits for
            // is done, and after that at each one done before it (NOTE [Hand-off])
            long w = wakeAt;
            if (fetched) {
                w = Math.min(w, tail - 1); // the shard's last sample is the last it can wait for
            }
            if (c >= w || done.get((int) (w % capacity)) == w + 1) {
                LockSupport.unpark(owner.taker());
            }
        }
        return true;
    }

    // ---- the taker ---------------------------------------------------------------------------

    /**
     * Taker: the next sample in order into {@code item}; false when the position is finished and
     * drained. Waits at most until {@code deadline} (System.nanoTime), then fails with the pass's
     * timeout for {@code t0}.
     */
    boolean take(StreamItem item, long t0, long deadline) {
        while (true) {
            long h = head;
            if (h < tail && done.get((int) (h % capacity)) == h + 1) {
                int i = (int) (h % capacity);
                item.value = values[i];
                item.error = errors[i];
                item.offset = offsets[i];
                item.shard = shards[i];
                item.shardPosition = position;
                values[i] = null;
                errors[i] = null;
                head = h + 1;
                if (tail - h - 1 == capacity - wakeRoom) {
                    owner.wakeIdle(); // room in the ring for a run of samples (NOTE [Hand-off])
                }
                if (abandoned) {
                    item.error = null;
                    continue;
                }
                return true;
            }
            if (fetched && head == tail) {
                return false;
            }
            owner.checkCurrent();
            // sleep until the samples this batch still needs are in (at most half the ring), or
            // the shard ends
            long want = head + Math.max(1, Math.min(owner.needed(), capacity / 2)) - 1;
            wakeAt = fetched ? Math.min(want, tail - 1) : want;
            takerParked = true;
            if (!(head < tail && done.get((int) (head % capacity)) == head + 1) && !(fetched && head == tail)) {
                long now = System.nanoTime();
                if (now >= deadline) {
                    takerParked = false;
                    throw stream.timeout(position, now - t0);
                }
                LockSupport.parkNanos(this, Math.min(deadline - now, TimeUnit.MILLISECONDS.toNanos(100)));
            }
            takerParked = false;
        }
    }

    /** Taker: drops the rest of this shard (its reader stops; what it read already is drained and dropped). */
    void abandon() {
        abandoned = true;
    }

    /**
     * Taker, after draining this ring and taking its reader ({@link #takeSpent}): makes it ready
     * for its next position (before the window moves, so before any reader can open it) and
     * returns why the reader stopped early, if it did.
     */
    Throwable release() {
        Throwable e = error;
        error = null;
        abandoned = false;
        fetched = false;
        return e;
    }

    /** The reader a finished position left, for the taker to close (or null); the ring forgets it. */
    StreamingDataset.ShardReader<?> takeSpent() {
        var r = spent;
        spent = null;
        return r;
    }
}
