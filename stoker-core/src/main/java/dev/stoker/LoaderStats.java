package dev.stoker;

/**
 * What a loader measured since it was built; read at any time with {@link Loader#stats()}.
 *
 * @param batches       batches delivered to the consumer
 * @param samples       samples delivered
 * @param bytes         bytes delivered (valid column bytes)
 * @param skipped       samples left out under {@link ErrorPolicy#SKIP_SAMPLE}
 * @param skippedShards shards of a {@link StreamingDataset} whose rest was left out after an error,
 *     and shards a dataset left out when opened ({@link Dataset#shardsLeftOut})
 * @param fetchNanos    worker time spent reading samples (summed over workers)
 * @param transformNanos worker time spent in transforms
 * @param collateNanos  worker time spent writing samples into batches
 * @param waitNanos     consumer time spent waiting for a batch: the accelerator's idle time
 * @param wallNanos     consumer wall time from the first request of each pass to its last batch
 * @param meanDisplacement for a streaming dataset, the mean distance (in samples) between where a
 *                      sample arrived in the stream and where it was delivered: 0 in stream order,
 *                      about a third of the shuffle window for a full shuffle of each block; NaN
 *                      when not measured (random-access datasets are shuffled whole)
 * @param shardShare    for a streaming dataset, the mean over batches of the largest share of a
 *                      batch's samples that came from one shard: 1 when every batch is read from
 *                      one shard (stream order), near 1/open shards when a window mixes them;
 *                      NaN when not measured
 * @param truncatedSamples samples with a padded ragged field or stack longer than its length
 *                      ({@link Padding}), cut to it
 * @param droppedValues the values those samples lost (a stack's entry counts its features)
 */
public record LoaderStats(long batches, long samples, long bytes, long skipped, long skippedShards, long fetchNanos,
                          long transformNanos, long collateNanos, long waitNanos, long wallNanos,
                          double meanDisplacement, double shardShare, long truncatedSamples,
                          long droppedValues) {

    public double seconds() {
        return wallNanos / 1e9;
    }

    public double samplesPerSecond() {
        return wallNanos == 0 ? 0 : samples / (wallNanos / 1e9);
    }

    public double bytesPerSecond() {
        return wallNanos == 0 ? 0 : bytes / (wallNanos / 1e9);
    }

    /** Share of the consumer's wall time spent waiting for data, in [0, 1]. */
    public double waitFraction() {
        return wallNanos == 0 ? 0 : Math.min(1.0, (double) waitNanos / wallNanos);
    }
}
