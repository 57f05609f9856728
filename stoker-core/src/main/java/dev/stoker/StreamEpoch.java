package dev.stoker;

import java.util.concurrent.TimeUnit;

/**
 * One epoch of this rank's streams of shards, as every part of a {@link StreamPass} sees it: the
 * shard at each position, the transform under its seed, and failures that name the shard and
 * sample. Immutable.
 *
 * <p>The rank reads its streams (NOTE [Elastic streams]) one after the other, each from where the
 * pass resumes it: the pass's positions {@code m = 0, 1, ...} run through {@link #segments} in
 * turn.
 */
record StreamEpoch(StreamSource<?, ?> source, Options options, long epoch, Order order, int streams, Tail tail,
                   Segment[] segments) {

    /**
     * The part of stream {@code stream} this pass reads: its shards from {@code first} (the
     * first {@code skip} samples of which the saved pass delivered, and {@code blockEmitted} of
     * the shuffle block starting there; {@code check} the state's check of that shard), at the
     * pass's positions from {@code base}.
     */
    record Segment(int stream, Partition partition, long first, long skip, long blockEmitted, long check, long base) {
        /** The pass's positions this segment covers. */
        long length() {
            return partition.length() - first;
        }

        long end() {
            return base + length();
        }
    }

    /** The epoch of {@code at}'s streams that {@code options.rank()} reads, from where {@code at} holds them. */
    static StreamEpoch of(StreamSource<?, ?> source, Options o, long epoch, LoaderState.Streams at) {
        java.util.List<Segment> segments = new java.util.ArrayList<>();
        long base = 0;
        for (int c = o.rank(); c < at.count(); c += o.worldSize()) {
            Partition p = new Partition(0, o.length(), at.count(), c, at.tail());
            LoaderState.Streamed s = at.at().get(c);
            long first = Math.min(s.shards(), p.length());
            Segment segment = new Segment(c, p, first, s.samples(), s.blockEmitted(), s.shardCheck(), base);
            segments.add(segment);
            base = segment.end();
        }
        return new StreamEpoch(source, o, epoch, o.sampler().order(source.shards(), o.seed(), epoch), at.count(), at.tail(),
                segments.toArray(Segment[]::new));
    }

    /** This rank's shard positions in the epoch, all its segments together. */
    long shards() {
        return segments.length == 0 ? 0 : segments[segments.length - 1].end();
    }

    /** The segment that holds position {@code m} (the last one for {@code m} at or past the end). */
    int segmentOf(long m) {
        int i = 0;
        while (i < segments.length - 1 && m >= segments[i].end()) {
            i++;
        }
        return i;
    }

    /** At most this many shard positions are announced to {@link StreamingDataset#plan} (endless streams). */
    static final int PLAN_LIMIT = 1 << 16;

    /** Tells the dataset which shards the pass reads, in order, from its first position. */
    void announce() {
        int[] upcoming = new int[(int) Math.min(shards(), PLAN_LIMIT)];
        for (int i = 0; i < upcoming.length; i++) {
            upcoming[i] = shardAt(i);
        }
        source.dataset.plan(upcoming);
    }

    /** The shard at position {@code m} of this rank's streams. */
    int shardAt(long m) {
        Segment s = segments[segmentOf(m)];
        return (int) order.index(s.partition.position(s.first + m - s.base));
    }

    /** Samples of the shard at position {@code m} the saved pass delivered (to skip when it opens). */
    long skipAt(long m) {
        Segment s = segments[segmentOf(m)];
        return m == s.base && s.length() > 0 ? s.skip : 0;
    }

    /** Where this rank's streams stood when the pass started. */
    LoaderState.Streams startPosition() {
        java.util.TreeMap<Integer, LoaderState.Streamed> at = new java.util.TreeMap<>();
        for (Segment s : segments) {
            at.put(s.stream, new LoaderState.Streamed(s.first, s.skip, s.blockEmitted, s.check));
        }
        return new LoaderState.Streams(streams, tail, at);
    }

    /**
     * Where the streams stand at sample {@code offset} of position {@code m}, {@code emitted}
     * samples of the shuffle block starting there delivered, {@code check} the check of that
     * shard: those before {@code m}'s segment done, those after it where the pass found them.
     */
    LoaderState.Streams positionAt(long m, long offset, long emitted, long check) {
        java.util.TreeMap<Integer, LoaderState.Streamed> at = new java.util.TreeMap<>();
        int k = segmentOf(m);
        for (int i = 0; i < segments.length; i++) {
            Segment s = segments[i];
            LoaderState.Streamed p;
            if (i < k || i == k && m >= s.end()) {
                p = new LoaderState.Streamed(s.partition.length(), 0, 0);
            } else if (i == k) {
                p = new LoaderState.Streamed(s.first + m - s.base, offset, emitted, offset > 0 || emitted > 0 ? check : 0);
            } else {
                p = new LoaderState.Streamed(s.first, s.skip, s.blockEmitted, s.check);
            }
            at.put(s.stream, p);
        }
        return new LoaderState.Streams(streams, tail, at);
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

    /** The shuffle blocks' key of the segment {@code i}: a function of (seed, epoch, stream). */
    long blockKey(int i) {
        return Keys.key(options.seed(), epoch, segments[i].stream);
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
