package dev.stoker;

/** What a loader does when reading or transforming a sample fails. */
public enum ErrorPolicy {
    /** Stop: the consumer gets a {@link LoaderException} naming the source, sample and cause (the default). */
    FAIL,
    /**
     * Leave the sample out and count it in {@link LoaderStats#skipped()}: the batch that would have
     * held it is one row shorter. Positions are still consumed, so order and resume are unaffected.
     */
    SKIP_SAMPLE,
    /**
     * For a {@link StreamingDataset}: on an error, leave out the rest of the shard and count it in
     * {@link LoaderStats#skippedShards()} (and the failing sample in {@link LoaderStats#skipped()}).
     * A random-access dataset treats it as {@link #SKIP_SAMPLE}. Under {@code SKIP_SAMPLE}, a shard
     * whose reader fails is left out the same way, since a broken stream can not go on.
     */
    SKIP_SHARD;

    // NOTE [Error policy]: every site where a sample or a shard fails asks the policy here, so
    // that what stops the loader and what is counted as left out is decided in one place.

    /** Whether this failure stops the loader: always under {@link #FAIL}, and for an {@link Error} under any policy. */
    boolean raises(Throwable e) {
        return this == FAIL || !(e instanceof Exception);
    }

    /**
     * Counts a sample left out (a malformed record or a failed transform) in {@code c}; true when
     * the rest of its shard goes too ({@link #SKIP_SHARD}), which is counted once, while the shard
     * is still being read ({@code shardOpen}).
     */
    boolean leaveOut(WorkerCounters c, boolean shardOpen) {
        c.skipped++;
        if (this == SKIP_SHARD && shardOpen) {
            c.skippedShards++;
            return true;
        }
        return false;
    }
}
