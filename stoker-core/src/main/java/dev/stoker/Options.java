package dev.stoker;

/**
 * A loader's options, resolved by {@link LoaderBuilder#build()}: the one immutable value its
 * passes read.
 *
 * @param workers        worker threads: the fixed number, or the CPU budget when it is tuned
 * @param ahead          batches prepared ahead of the consumer ({@link IndexedPass}: fixed, or the first
 *                       depth when tuned) or shards read ahead ({@link StreamPass})
 * @param length         positions in an epoch's order: samples, or a stream's shards
 * @param timeoutNanos   the longest the consumer waits for a batch; 0: forever
 * @param collatorThread a streaming pass's collator thread: null to decide while running, else
 *                       always or never (tests)
 * @param holds          delivered batches the consumer may hold at once (NOTE [Holding batches])
 * @param wakeRun        a waiting consumer is woken for this many batches ready in a row (0: a quarter
 *                       of the window; NOTE [Wake] in {@link IndexedPass})
 * @param shardBuffer    samples each shard's ring holds
 * @param shuffleWindow  samples a shuffle block holds at most (0: stream order)
 * @param shuffleBytes   a shuffle block's byte budget (0: none)
 * @param defaultWindow  the window is the default one, where a sample that does not tell its size
 *                       counts as {@link Sized#UNSIZED}
 * @param tracer         receives spans, or null
 * @param streams        streams a streaming dataset's epoch is split into (NOTE [Elastic streams])
 */
record Options(Sampler sampler, int batchSize, int workers, int ahead, boolean dropLast, long seed, int rank,
               int worldSize, Tail tail, long length, long timeoutNanos, Boolean collatorThread,
               ErrorPolicy errorPolicy, boolean ordered, int holds, int wakeRun, int shardBuffer, int shuffleWindow,
               long shuffleBytes, boolean defaultWindow, Tracer tracer, int streams) {

    /** This rank's part of the epoch from {@code segmentStart}. */
    Partition partition(long segmentStart) {
        return new Partition(segmentStart, length, worldSize, rank, tail);
    }
}
