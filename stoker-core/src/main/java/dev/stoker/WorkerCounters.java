package dev.stoker;

/** What one worker measured; written by the worker only, read by anyone. */
class WorkerCounters {
    volatile long fetchNanos;
    volatile long transformNanos;
    volatile long collateNanos;
    volatile long skipped;
    volatile long skippedShards;
    /** Time spent waiting for the prefetch window to move (work ready to do, no room for it). */
    volatile long blockedNanos;
    /** Guarded by the {@link Stats} lock: true once added to the loader's totals. */
    boolean retired;

    /** Publishes a worker's running totals. */
    final void publish(StageTimes t) {
        fetchNanos = t.fetch;
        transformNanos = t.transform;
        collateNanos = t.collate;
    }
}
