package dev.stoker;

/**
 * The filling side of a {@link StreamPass}: takes the stream's samples in order (from the rings
 * the workers fill, or read inline without workers), keeps the shuffle window, closes spent
 * readers (NOTE [Spent readers]) and collates the samples into batches, telling where the stream
 * stands after each. One thread at a time uses it: the caller's, or the collator thread after the
 * switch (NOTE [Background collation]).
 */
final class StreamFill implements ShuffleWindow.Stream {
    private final StreamPass pass;
    private final Options o;
    private final StreamEpoch stream;
    private final long epoch;
    private final long deliveredBase;
    private final long shardCount;
    /** Reads shards on this thread when the pass has no workers; its counters are the filling side's. */
    private final WorkerCounters counters = new WorkerCounters();
    private final ShardCursor inline;
    private final StreamItem item = new StreamItem();
    /** The thread that takes samples from the rings (they wake it): the caller's, or the collator after the switch. */
    private volatile Thread taker;
    /** Samples the filling thread will take before it delivers (the rest of a batch or block): how long it can sleep. */
    private int needed = 1;
    /** Where the next batch's first sample comes from, without a shuffle window. */
    private long fillShard;
    private long fillOffset;
    private long fillCount;
    /** The shard of each sample taken for the batch being filled (sorted in place to count them). */
    private int[] fillShards = new int[0];
    /** The shuffle window's blocks (of the current segment's stream), or null for stream order. */
    private ShuffleWindow block;
    /** The segment of the pass ({@link StreamEpoch#segments}) samples are taken from: a block ends with its stream. */
    private int segment;

    StreamFill(StreamPass pass, Options o, StreamEpoch stream, long epoch, long deliveredBase) {
        this.pass = pass;
        this.o = o;
        this.stream = stream;
        this.epoch = epoch;
        this.deliveredBase = deliveredBase;
        this.shardCount = pass.shardCount();
        StreamEpoch.Segment first = stream.segments().length > 0 ? stream.segments()[0] : null;
        this.fillShard = 0;
        this.fillOffset = first != null ? first.skip() : 0;
        this.block = o.shuffleWindow() > 0 && first != null ? window(0) : null;
        this.inline = new ShardCursor(stream, pass, counters, new StageTimes(), true);
    }

    /** The shuffle window of segment {@code i}'s stream, from where the pass resumes it. */
    private ShuffleWindow window(int i) {
        StreamEpoch.Segment s = stream.segments()[i];
        return new ShuffleWindow(o.shuffleWindow(), o.shuffleBytes(), o.defaultWindow(), stream.blockKey(i),
                s.first() - s.base(), new StreamPosition(s.base(), s.skip()), s.blockEmitted());
    }

    /** The next sample of the shuffled blocks into {@code item}, moving on to the next segment's window at a segment's end. */
    private boolean nextShuffled(StreamItem item, long t0) {
        while (!block.next(item, this, t0)) {
            if (segment + 1 >= stream.segments().length) {
                return false;
            }
            long displacement = block.displacement;
            block = window(++segment);
            block.displacement = displacement;
        }
        return true;
    }

    WorkerCounters counters() {
        return counters;
    }

    Thread taker() {
        return taker;
    }

    int needed() {
        return needed;
    }

    /**
     * Fills {@code batch} with the next samples of the pass, collated, and tells in {@code f}
     * where the stream stands after them ({@code f.end} when none was left).
     */
    void fill(Batch batch, FilledQueue.Filled f, long t0) {
        taker = Thread.currentThread();
        f.batch = batch;
        f.error = null;
        f.end = false;
        f.skipped = 0;
        f.collateNanos = 0;
        batch.reset(epoch, deliveredBase + fillCount);
        long shard = fillShard;
        long offset = fillOffset;
        StreamItem item = this.item;
        int taken = 0;
        while (batch.rows < o.batchSize()) {
            pass.checkCurrent(); // a stopping collator takes no further sample
            // the stream's next sample, or the next of the shuffled block
            if (block == null ? !take(item, t0, o.batchSize() - batch.rows) : !nextShuffled(item, t0)) {
                break;
            }
            if (taken == fillShards.length) {
                fillShards = java.util.Arrays.copyOf(fillShards, Math.max(16, 2 * taken));
            }
            fillShards[taken++] = item.shard;
            long c0 = System.nanoTime();
            shard = item.shardPosition;
            offset = item.offset + 1;
            Row row = batch.beginRow(StreamSource.sampleIndex(item.shard, item.offset));
            try {
                stream.source().collate(item.value, row);
                batch.commitRow();
            } catch (Exception e) {
                if (o.errorPolicy().raises(e)) {
                    throw stream.sampleError(item.shard, item.offset, e);
                }
                batch.abandonRow();
                f.skipped++;
            } catch (Error e) {
                throw stream.sampleError(item.shard, item.offset, e);
            } finally {
                item.value = null;
                f.collateNanos += System.nanoTime() - c0;
            }
        }
        inline.publish();
        f.displacement = block != null ? block.displacement : 0;
        f.displaced = taken;
        f.shardShare = largestShare(fillShards, taken);
        if (block != null) {
            block.displacement = 0;
        }
        if (batch.rows == 0 || o.dropLast() && batch.rows < o.batchSize()) {
            f.end = true;
            return;
        }
        Tracer tracer = o.tracer();
        if (tracer != null) { // the samples' fetch and transform ran on the workers, per shard: not this batch's
            tracer.span(new Tracer.Span(Thread.currentThread().getName(), "batch " + (deliveredBase + fillCount), t0, System.nanoTime(), 0, 0,
                    f.collateNanos));
        }
        if (block != null) {
            // the position is the block's start and how much of it went out (or the next block's start)
            StreamPosition at = block.resumeAt();
            f.shard = at.shard();
            f.offset = at.offset();
            f.emitted = block.resumeEmitted();
        } else {
            f.shard = shard;
            f.offset = offset;
            f.emitted = 0;
            fillShard = shard;
            fillOffset = offset;
        }
        fillCount++;
    }

    /** The largest share of {@code n} samples' shards that is one shard (NaN for none); sorts them in place. */
    static double largestShare(int[] shards, int n) {
        if (n == 0) {
            return Double.NaN;
        }
        java.util.Arrays.sort(shards, 0, n);
        int most = 1;
        for (int i = 1, run = 1; i < n; i++) {
            run = shards[i] == shards[i - 1] ? run + 1 : 1;
            most = Math.max(most, run);
        }
        return (double) most / n;
    }

    /** Takes the next sample of the stream into {@code item}; false when no shard has any left. */
    @Override
    public boolean take(StreamItem item, long t0, int needed) {
        this.needed = needed;
        // with a collator, the consumer's own wait is what the timeout bounds (FilledQueue.take):
        // the collator may start a batch a training step or two before the consumer asks for it
        long deadline = o.timeoutNanos() > 0 && !pass.collatorRunning() ? t0 + o.timeoutNanos() : Long.MAX_VALUE;
        // a shuffle block ends with its segment's stream
        long end = block != null ? stream.segments()[segment].end() : shardCount;
        while (pass.current() < end) {
            if (pass.workerCount() == 0) {
                if (takeInline(item)) {
                    return true;
                }
            } else {
                ShardRing ring = pass.ring(pass.current());
                if (ring.take(item, t0, deadline)) {
                    if (item.error == null) {
                        return true;
                    }
                    failedTransform(ring, item);
                    continue;
                }
                retire(ring.takeSpent());
                Throwable err = ring.release();
                if (err != null) {
                    throw err instanceof LoaderException le ? le
                            : new LoaderException(stream.name() + ": " + Pass.describe(err, stream.name()), stream.name(), -1, err);
                }
            }
            pass.advance();
        }
        return false;
    }

    /** A sample whose transform failed (on a worker), under the error policy, in stream order. */
    private void failedTransform(ShardRing ring, StreamItem item) {
        Throwable e = item.error;
        item.error = null;
        if (o.errorPolicy().raises(e)) {
            throw stream.sampleError(item.shard, item.offset, e);
        }
        if (o.errorPolicy().leaveOut(counters, !ring.abandoned())) {
            ring.abandon(); // its reader stops; what it read already is drained and dropped
        }
    }

    private boolean takeInline(StreamItem item) {
        long m = pass.current();
        if (inline.position != m) {
            inline.open(m);
        }
        if (inline.next(item)) {
            item.shardPosition = m;
            return true;
        }
        retire(inline.detach());
        return false;
    }

    // NOTE [Spent readers]: a sample may borrow memory from its shard's reader (a tar member is a
    // slice of the mapped shard; a remote shard stays pinned in the cache while its reader is
    // open), so a reader is closed only once every sample it returned is done with: when the
    // collating thread has taken the shard's last sample (each sample taken is collated before
    // the next is taken), or, with a shuffle window, when the blocks holding its samples have all gone out
    // (the next block starts filling). The reader that finished a shard hands it over with its
    // ring; the collating thread closes it. Stopping closes whatever is left.
    private final java.util.ArrayList<StreamingDataset.ShardReader<?>> spentReaders = new java.util.ArrayList<>();

    /** Collating thread: a finished shard's reader, closed now, or when its samples' shuffle block is out. */
    private void retire(StreamingDataset.ShardReader<?> reader) {
        if (reader == null) {
            return;
        }
        if (block == null) {
            ShardCursor.closeQuietly(reader);
        } else {
            spentReaders.add(reader);
        }
    }

    @Override
    public void blocksDone() {
        for (var r : spentReaders) {
            ShardCursor.closeQuietly(r);
        }
        spentReaders.clear();
    }

    /** The pass stopped: the inline reader and every spent one closed, the counters published. */
    void close() {
        inline.close();
        blocksDone();
        inline.publish();
    }
}
