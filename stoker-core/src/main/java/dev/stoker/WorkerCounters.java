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

    /** Publishes a worker's running totals, {@code nanos} indexed by {@link Source#FETCH} and friends. */
    final void publish(long[] nanos) {
        fetchNanos = nanos[Source.FETCH];
        transformNanos = nanos[Source.TRANSFORM];
        collateNanos = nanos[Source.COLLATE];
    }
}
