package dev.stoker;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The collator thread of a {@link StreamPass}, and when to start it.
 *
 * <p>NOTE [Background collation]: a pass starts out collating on the caller's thread, in
 * {@code hasNext()}. Once it sees the caller spend time away between batches (a training step:
 * on average at least {@link #AWAY_NANOS} over {@link #SWITCH_BATCHES} batches whose collation
 * took at least {@link #COLLATE_NANOS} each), and it has workers, it hands the rings to a collator
 * thread of its own, which collates into a few buffers ahead, so that the training loop only
 * takes finished batches, as it does from a map-style pass: collating on the caller's thread
 * costs a training loop its collation time every step. A caller that is never away (a benchmark
 * of the loader alone) keeps collating itself: a thread in between would only add a hand-off per
 * batch (BENCHMARKS.md, "The engine before and after its refactor", measures both). Only one thread at a time takes samples from the
 * rings, fills batches, closes spent readers and keeps the shuffle window: the caller's until the
 * switch, which happens between batches, the collator's after. The consumer moves the delivered
 * position when it takes a batch, so a state, a stop or a failure never counts a batch that was
 * collated but not delivered; the loader's timeout bounds the consumer's wait for a batch, not
 * the collator's (which may start one a training step or two before it is asked for).
 */
final class CollatorThread {
    /** Caller away between batches, on average, for the switch to a collator thread. */
    static final long AWAY_NANOS = 200_000;
    /** Collation per batch, on average, for the switch: below it, a collator saves less than its hand-offs cost. */
    static final long COLLATE_NANOS = 20_000;
    static final int SWITCH_BATCHES = 8;

    private final StreamPass pass;
    private final FreeList free;
    /** A collator thread may be started: with workers and more than one buffer, unless the loader says never. */
    private final boolean allowed;
    private volatile Thread thread;
    /** The collator thread fills (set once, by the consumer, before that thread starts). */
    private volatile boolean running;
    private volatile boolean parked;
    /** Stopping: the collator stops before the workers do, since a worker that stops closes its reader. */
    private volatile boolean stopping;
    // the consumer's observations of the caller
    private long lastHandedOut = -1;
    private long awaySum;
    private long collateSum;
    private int observed;

    CollatorThread(StreamPass pass, FreeList free, boolean allowed) {
        this.pass = pass;
        this.free = free;
        this.allowed = allowed;
    }

    /** Whether the collator thread fills the batches (from the switch on). */
    boolean running() {
        return running;
    }

    boolean stopping() {
        return stopping;
    }

    /** Consumer, between batches: from now on the collator thread fills them, if it may. */
    void startIfAllowed() {
        if (!allowed || running) {
            return;
        }
        running = true;
        Thread t = new Thread(this::collate, "stoker-collator");
        t.setDaemon(true);
        thread = t;
        t.start();
    }

    /** Consumer, before it prepares a batch: whether the caller's time away calls for the collator thread. */
    void observe(long now) {
        if (running || !allowed || lastHandedOut < 0) {
            return;
        }
        awaySum += now - lastHandedOut;
        if (++observed == SWITCH_BATCHES) {
            if (awaySum >= AWAY_NANOS * SWITCH_BATCHES && collateSum >= COLLATE_NANOS * SWITCH_BATCHES) {
                startIfAllowed();
            }
            observed = 0;
            awaySum = 0;
            collateSum = 0;
        }
    }

    /** Consumer: the time the caller's thread spent collating a batch. */
    void collated(long nanos) {
        collateSum += nanos;
    }

    /** Consumer: a batch went to the caller now. */
    void handedOut(long now) {
        lastHandedOut = now;
    }

    /** A buffer went back to the free list: the collator, if it waits for one, goes on. */
    void bufferFreed() {
        if (parked) {
            LockSupport.unpark(thread);
        }
    }

    /** Wakes the collator (the pass was cancelled). */
    void wake() {
        Thread t = thread;
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    /** Stops the collator thread and waits for it; false if it is stuck in a collate call. */
    boolean stop(boolean closing) {
        Thread t = thread;
        if (t == null) {
            return true;
        }
        stopping = true;
        LockSupport.unpark(t);
        return t.getState() == Thread.State.NEW || PassWorker.join(t, closing);
    }

    /** The collator thread: fills free buffers with the next batches, in order, until the epoch ends or fails. */
    private void collate() {
        while (!pass.cancelled() && !stopping) {
            int slot = awaitFreeBuffer();
            if (slot < 0 || pass.fillSlot(slot)) {
                return;
            }
        }
    }

    /** A free buffer's slot, now taken; -1 once the pass is cancelled. */
    private int awaitFreeBuffer() {
        while (!pass.cancelled() && !stopping) {
            int slot = free.acquire();
            if (slot >= 0) {
                return slot;
            }
            parked = true;
            if ((slot = free.acquire()) >= 0) { // re-checked after publishing that it parks
                parked = false;
                return slot;
            }
            if (!pass.cancelled() && !stopping) {
                LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(100));
            }
            parked = false;
        }
        return -1;
    }
}
