package dev.stoker;

/**
 * The loader's counters. Consumer-side counters are written by the consumer thread only; worker
 * counters live in each worker and are added here when a pass ends.
 */
final class Stats {
    volatile long batches;
    volatile long samples;
    volatile long bytes;
    volatile long waitNanos;
    volatile long wallNanos;
    // shuffle quality: summed |delivery position - stream position| of streamed samples
    volatile double displacementSum;
    volatile long displacementCount;
    // summed per batch: the largest share of its samples from one shard
    volatile double shardShareSum;
    volatile long shardShareCount;
    // retired worker counters (workers of finished passes)
    private long skipped;
    private long skippedShards;
    private final StageTimes stages = new StageTimes();

    synchronized void retire(WorkerCounters w) {
        if (!w.retired) {
            w.retired = true;
            skipped += w.skipped;
            skippedShards += w.skippedShards;
            stages.fetch += w.fetchNanos;
            stages.transform += w.transformNanos;
            stages.collate += w.collateNanos;
        }
    }

    /** Consumer thread only: {@code b} went to the consumer after {@code waitNanos} waiting, {@code wallNanos} since the last. */
    void delivered(Batch b, long waitNanos, long wallNanos) {
        this.waitNanos += waitNanos;
        this.wallNanos += wallNanos;
        batches++;
        samples += b.rows;
        bytes += b.byteSize();
    }

    /** Consumer thread only: {@code samples} samples moved {@code sum} positions in all. */
    void displacement(long sum, long samples) {
        displacementSum += sum;
        displacementCount += samples;
    }

    /** Consumer thread only: a batch of which {@code share} of the samples came from one shard (the most from any). */
    void shardShare(double share) {
        shardShareSum += share;
        shardShareCount++;
    }

    synchronized void addStages(StageTimes t) {
        stages.add(t);
    }

    synchronized void addSkipped(long samples, long shards) {
        skipped += samples;
        skippedShards += shards;
    }

    synchronized LoaderStats snapshot(Pass active, PadLayout pad) {
        long sk = skipped;
        long shards = skippedShards;
        long f = stages.fetch;
        long t = stages.transform;
        long c = stages.collate;
        if (active != null) {
            for (WorkerCounters w : active.counters()) {
                if (!w.retired) {
                    sk += w.skipped;
                    shards += w.skippedShards;
                    f += w.fetchNanos;
                    t += w.transformNanos;
                    c += w.collateNanos;
                }
            }
        }
        return new LoaderStats(batches, samples, bytes, sk, shards, f, t, c, waitNanos, wallNanos,
                displacementCount == 0 ? Double.NaN : displacementSum / displacementCount,
                shardShareCount == 0 ? Double.NaN : shardShareSum / shardShareCount,
                pad == null ? 0 : pad.truncatedSamples.sum(), pad == null ? 0 : pad.droppedValues.sum());
    }
}
