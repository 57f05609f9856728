package dev.stoker;

import java.util.concurrent.TimeUnit;

/**
 * One epoch of this rank's stream of shards, as every part of a {@link StreamPass} sees it: the
 * shard at each position, the transform under its seed, and failures that name the shard and
 * sample. Immutable.
 *
 * @param first     the first position of the pass (where it resumes)
 * @param skipFirst samples of the first position that the saved pass already delivered
 */
record StreamEpoch(StreamSource<?, ?> source, Options options, long epoch, Order order, Partition partition,
                   long first, long skipFirst) {

    /** This rank's shard positions in the epoch. */
    long shards() {
        return partition.length();
    }

    /** At most this many shard positions are announced to {@link StreamingDataset#plan} (endless streams). */
    static final int PLAN_LIMIT = 1 << 16;

    /** Tells the dataset which shards the pass reads, in order, from its first position. */
    void announce() {
        int[] upcoming = new int[(int) Math.min(shards() - first, PLAN_LIMIT)];
        for (int i = 0; i < upcoming.length; i++) {
            upcoming[i] = shardAt(first + i);
        }
        source.dataset.plan(upcoming);
    }

    /** The shard at position {@code m} of this rank's stream. */
    int shardAt(long m) {
        return (int) order.index(partition.position(m));
    }

    String name() {
        return source.name();
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    Object transform(Object raw, SampleContext context) throws Exception {
        return ((StreamSource) source).transform(raw, context);
    }

    boolean transforms() {
        return source.transform != null;
    }

    /** Sets {@code context} for sample {@code offset} of {@code shard}: the transform's seeded randomness. */
    void contextFor(SampleContext context, int shard, long offset) {
        context.set(options.seed(), epoch, StreamSource.sampleIndex(shard, offset));
    }

    LoaderException sampleError(int shard, long offset, Throwable e) {
        String name = source.dataset.shardName(shard);
        return new LoaderException(name + ": sample " + offset + " of the shard (epoch " + epoch + ", rank "
                + options.rank() + "): " + Pass.describe(e, name), name, StreamSource.sampleIndex(shard, offset), e);
    }

    LoaderException shardError(int shard, long offset, Throwable e) {
        String name = source.dataset.shardName(shard);
        return new LoaderException(name + ": reading sample " + offset + " of the shard (epoch " + epoch + ", rank "
                + options.rank() + "): " + Pass.describe(e, name), name, StreamSource.sampleIndex(shard, offset), e);
    }

    /** The consumer waited {@code waited} ns for a sample at position {@code m}. */
    LoaderTimeoutException timeout(long m, long waited) {
        String shard = m < shards() ? source.dataset.shardName(shardAt(m)) : "?";
        return new LoaderTimeoutException(source.name() + ": timed out after " + TimeUnit.NANOSECONDS.toMillis(waited)
                + " ms waiting for a sample of " + shard + " (this rank's shard " + m + " of " + shards()
                + ", epoch " + epoch + ", rank " + options.rank() + " of " + options.worldSize() + ")", source.name());
    }
}
