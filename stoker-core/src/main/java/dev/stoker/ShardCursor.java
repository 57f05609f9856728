package dev.stoker;

/**
 * Reads the samples of one shard position at a time: opens the shard (skipping what the saved
 * pass already delivered), fetches each sample and times it. On the consumer (a pass without
 * workers) it also transforms them under the loader's error policy; a worker's cursor hands raw
 * samples to a {@link ShardRing}, whose transforms report their failures in order.
 */
final class ShardCursor {
    private final StreamEpoch stream;
    private final WorkerCounters counters;
    private final StageTimes times;
    private final boolean transform;
    private final Pass pass;
    private final SampleContext context = new SampleContext();
    private StreamingDataset.ShardReader<?> reader;
    /** The shard position being read, or -1. */
    long position = -1;
    private int shard;
    private long offset;

    ShardCursor(StreamEpoch stream, Pass pass, WorkerCounters counters, StageTimes times, boolean transform) {
        this.stream = stream;
        this.pass = pass;
        this.counters = counters;
        this.times = times;
        this.transform = transform;
    }

    void open(long m) {
        close();
        position = m;
        shard = stream.shardAt(m);
        offset = 0;
    }

    /**
     * The next sample of the shard into {@code item}; false at its end or when its rest is
     * skipped. The reader stays open (its samples may borrow its memory): see {@link #detach}.
     */
    boolean next(StreamItem item) {
        ErrorPolicy policy = stream.options().errorPolicy();
        try {
            if (reader == null) {
                reader = stream.source().dataset.open(shard);
                long skip = stream.skipAt(position);
                if (skip > 0) {
                    offset = reader.skip(skip);
                }
            }
            while (!pass.cancelled()) {
                long f0 = System.nanoTime();
                Object raw;
                try {
                    raw = reader.next();
                } catch (CorruptRecordException e) {
                    // the reader is past the bad record: the policy decides whether to go on
                    times.fetch += System.nanoTime() - f0;
                    if (policy.raises(e)) {
                        throw stream.shardError(shard, offset, e);
                    }
                    if (policy.leaveOut(counters, true)) {
                        break;
                    }
                    continue;
                }
                long f1 = System.nanoTime();
                times.fetch += f1 - f0;
                if (raw == null) {
                    break;
                }
                long at = offset++;
                if (!transform) {
                    item.set(raw, shard, at);
                    return true;
                }
                stream.contextFor(context, shard, at);
                try {
                    item.set(stream.transform(raw, context), shard, at);
                } catch (Exception e) {
                    if (policy.raises(e)) {
                        throw stream.sampleError(shard, at, e);
                    }
                    if (policy.leaveOut(counters, true)) {
                        break;
                    }
                    continue;
                } finally {
                    times.transform += System.nanoTime() - f1;
                }
                return true;
            }
            return false;
        } catch (LoaderException e) {
            throw e;
        } catch (Exception e) {
            if (policy.raises(e)) {
                throw stream.shardError(shard, offset, e);
            }
            counters.skippedShards++; // a broken stream can not go on, whatever the skip policy
            return false;
        } catch (Error e) {
            throw stream.shardError(shard, offset, e);
        }
    }

    /**
     * The reader, no longer this cursor's: the caller closes it once the shard's samples are
     * done with (NOTE [Spent readers] in StreamPass); null if none was opened.
     */
    StreamingDataset.ShardReader<?> detach() {
        var r = reader;
        reader = null;
        return r;
    }

    void publish() {
        counters.publish(times);
    }

    void close() {
        closeQuietly(detach());
    }

    /** Closes a reader whose shard is done with. */
    static void closeQuietly(StreamingDataset.ShardReader<?> reader) {
        if (reader != null) {
            try {
                reader.close();
            } catch (Exception ignored) {
                // the shard is finished with; a failure to close it loses no sample
            }
        }
    }
}
