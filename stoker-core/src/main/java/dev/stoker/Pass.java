package dev.stoker;

import java.util.Iterator;

/** One pass of a loader over (the rest of) an epoch; iterating it is iterating the loader. */
abstract class Pass implements Iterator<Batch> {
    /** Workers numbered below this take work; the others wait (NOTE [Autotune] in Tuner). */
    volatile int active = Integer.MAX_VALUE;

    abstract void start();

    abstract boolean finished();

    /** Where the loader stands now: the position after the last batch delivered. */
    abstract LoaderState state();

    /** Batches this pass delivers in all, or -1 when that is not known in advance. */
    abstract long batches();

    /**
     * Stops the workers and waits for them; the pass can not be continued afterwards. False when
     * a worker did not end (closing only: stuck in a read that ignores interrupts).
     */
    abstract boolean stop(boolean closing);

    /** The consumer gives a batch back before the next call would. */
    abstract void release(Batch b);

    abstract WorkerCounters[] counters();

    /** Positions below this may be worked on now. */
    abstract long windowEnd();

    abstract boolean cancelled();

    /** The workers' busy time (fetch, transform, collate) in this pass, summed. */
    static long busyNanos(PassWorker[] workers) {
        long n = 0;
        for (PassWorker w : workers) {
            n += w.fetchNanos + w.transformNanos + w.collateNanos;
        }
        return n;
    }

    /** The workers' time blocked at the end of the prefetch window in this pass, summed. */
    static long blockedNanos(PassWorker[] workers) {
        long n = 0;
        for (PassWorker w : workers) {
            n += w.blockedNanos;
        }
        return n;
    }

    static String describe(Throwable e) {
        String m = e.getMessage();
        return m == null ? e.getClass().getSimpleName() : e.getClass().getSimpleName() + ": " + m;
    }
}
