package dev.stoker;

/**
 * The prefetch depth, the deepest a tuner may make it, and the batch buffers of a loader's pool:
 * one rule for the loader and for {@link LoaderBuilder#buffers()}, checked against the memory
 * limit before anything is allocated.
 */
record BufferPool(int prefetch, int maxPrefetch, int buffers) {
    /** The deepest an autotuned prefetch window may grow. */
    static final int MAX_AUTO_PREFETCH = 64;
    /** The bytes of batches an autotuned window may hold beyond four batches per worker. */
    private static final long WINDOW_FOOTPRINT_BYTES = 1 << 20;
    /** Batch buffers of a streaming pass with workers and one held batch: one delivered, one ready, one being collated. */
    private static final int STREAM_BATCHES = 3;

    static BufferPool of(LoaderBuilder b) {
        long perBatch = Math.max(1, Batch.bytesFor(b.schema(), b.batchSize));
        int workers = b.autoWorkers ? b.cores : b.workers;
        int firstWorkers = b.autoWorkers ? 1 : workers;
        boolean autoPrefetch = b.autoPrefetch;
        int prefetch;
        int maxPrefetch;
        if (workers == 0) {
            prefetch = 1;
            maxPrefetch = 1;
        } else if (b.plan instanceof Plan.Streamed) {
            prefetch = b.shardsAhead > 0 ? b.shardsAhead : 2 * workers; // rings are not resized while running
            maxPrefetch = prefetch;
        } else if (autoPrefetch) {
            // within the memory budget, and at most four batches per worker thread or, for small
            // batches, WINDOW_FOOTPRINT_BYTES of them: deeper windows of large batches cost cache
            // footprint and measured no gain; small ones from bursty workers (a Parquet row group
            // decoded every hundred batches) gain (BENCHMARKS.md, autotuning). For a consumer woken
            // for runs (the bridge's session, NOTE [Wake] in IndexedPass), the window its run needs:
            // a deeper one hides the workers' blocking while it gets up, but costs more in cache
            // than that, with the bridge's notices ahead besides (W1's workers: 61-88 µs a batch at 6, 68-102 at 8)
            long deepest = Math.max(b.wakeRun > 1 ? defaultWindow(b, workers) : 4L * workers, WINDOW_FOOTPRINT_BYTES / perBatch);
            maxPrefetch = (int) Math.clamp(Math.min(Math.min(b.memoryBudget, b.memoryLimit) / perBatch - 1, deepest), 1, MAX_AUTO_PREFETCH);
            prefetch = Math.min(maxPrefetch, defaultWindow(b, firstWorkers));
        } else {
            prefetch = b.prefetch > 0 ? b.prefetch : defaultWindow(b, workers);
            maxPrefetch = prefetch;
        }
        // the consumer's buffers, plus: the prefetch window; for a streaming pass with workers,
        // which may collate on a thread of its own a few batches ahead (NOTE [Background
        // collation] in CollatorThread), one ready and one being collated, one within a tight budget
        int buffers = b.plan instanceof Plan.Indexed ? maxPrefetch + b.holds
                : workers == 0 ? b.holds
                : (int) Math.clamp(b.memoryBudget / perBatch, 2, STREAM_BATCHES) - 1 + b.holds;
        // checked before anything is allocated: past the machine's memory, the kernel's OOM killer ends the process without a word
        long need = Checks.product(perBatch, buffers);
        if (need > b.memoryLimit) {
            throw new IllegalArgumentException(String.format(java.util.Locale.ROOT, "%d batch buffers of %,d bytes (batches of"
                    + " %,d samples) need %,d bytes, more than the memory limit of %,d bytes (%s): a smaller batch or"
                    + " prefetch, or a higher limit", buffers, perBatch, b.batchSize, need, b.memoryLimit,
                    b.setBy.containsKey("memoryLimit") ? "as set" : "three quarters of this machine's memory"));
        }
        return new BufferPool(prefetch, maxPrefetch, buffers);
    }

    /** Two batches a worker, and room for the workers beside a consumer's run (NOTE [Wake] in IndexedPass). */
    private static int defaultWindow(LoaderBuilder b, int workers) {
        return Math.max(2 * workers, b.wakeRun + workers);
    }
}
