package dev.stoker;

import java.util.NoSuchElementException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * One pass over (the rest of) an epoch of a {@link StreamingDataset}.
 *
 * <p>NOTE [Streaming]: this rank's shards are positions {@code m = 0, 1, ...} of its
 * {@link Partition} of the epoch's shard {@link Order}. Workers claim shard positions in order
 * (at most {@code shardsAhead} ahead of the one the consumer reads) and read each shard's samples
 * into a bounded ring of its own; the transforms of a ring's samples are claimed one by one by
 * any worker with nothing better to do, earliest ring first (NOTE [Helping]), so one shard keeps
 * every worker busy; one thread (the caller's, or a collator's: NOTE [Background collation])
 * drains the rings in position order and collates the samples into batches. So batch contents
 * depend only on the shard order and the shards' contents, never on worker timing, and memory is
 * bounded by {@code shardsAhead × shardBuffer} samples. The position after a batch is (shard
 * position, sample offset in that shard); resuming reopens that shard and skips the offset.
 *
 * <p>The filling side is the caller's thread or a collator's ({@link CollatorThread}, NOTE
 * [Background collation]); the workers are {@link StreamWorker}s.
 */
final class StreamPass extends Pass implements ShardRing.Owner, ShuffleWindow.Stream, FilledQueue.Waiting {
    private final Loader loader;
    private final Options o;
    private final StreamEpoch stream;
    private final Stats stats;
    /** The batch prepared or delivered now (with a collator, one of {@code pool}). */
    private Batch buffer;
    private final Batch[] pool;
    private final FreeList free;
    private final long epoch;
    private final long shardCount;
    private final int window;
    private final ShardRing[] rings;
    private final StreamWorker[] workers;
    private final long deliveredBase;

    private final AtomicLong claim;
    /** The shard position samples are taken from now. */
    private volatile long current;
    private volatile boolean cancelled;
    /** The thread that takes samples from the rings (they wake it): the caller's, or the collator after the switch. */
    private volatile Thread taker;

    // consumer side
    private final StageTimes consumerTimes = new StageTimes();
    private final WorkerCounters inlineCounters = new WorkerCounters();
    private final ShardCursor inline;
    private final WorkerCounters[] allCounters;
    /** The position after the last batch delivered; the prepared batch's is in its Filled. */
    private long positionShard;
    private long positionOffset;
    private long positionEmitted;
    /** The prepared batch's fill, or null. */
    private FilledQueue.Filled prepared;
    private long delivered;
    private boolean held;
    /** Delivered batches not yet closed, when the consumer may hold several (Loader.holds > 1). */
    private int holding;
    private boolean finished;
    private boolean failed;
    private long lastMark = -1;
    private long pendingWait;
    /** Samples the collating thread will take before it delivers (the rest of a batch or block): how long it can sleep. */
    private int needed = 1;
    private final StreamItem item = new StreamItem();

    // the filling side (the collator thread, or the consumer's without one)
    private final CollatorThread collator;
    /** One per buffer, by slot: a filled batch with where the stream stands after it. */
    private final FilledQueue.Filled[] filled;
    private final FilledQueue ready;
    /** Where the next batch's first sample comes from, without a shuffle window. */
    private long fillShard;
    private long fillOffset;
    private long fillCount;
    /** The shard of each sample taken for the batch being filled (sorted in place to count them). */
    private int[] fillShards = new int[0];
    /** The shuffle window's blocks, or null for stream order. */
    private final ShuffleWindow block;
    // shuffle quality of the samples taken since the last delivery, added to the stats per batch
    private long displacement;
    private long displacedSamples;
    private double shardShare = Double.NaN;

    StreamPass(Loader loader, StreamSource<?, ?> source, Batch[] buffers, FreeList free, long epoch,
              LoaderState.Streamed at, long delivered) {
        this.loader = loader;
        this.o = loader.options;
        this.stats = loader.statsSink();
        this.pool = buffers; // the loader's: the buffers of held batches are added as they are held
        this.buffer = buffers[0];
        this.free = free;
        this.epoch = epoch;
        Partition partition = o.partition(0);
        long first = Math.min(at.shards(), partition.length());
        this.stream = new StreamEpoch(source, o, epoch, o.sampler().order(source.shards(), o.seed(), epoch), partition,
                first, at.samples());
        this.shardCount = partition.length();
        this.window = o.ahead();
        this.claim = new AtomicLong(first);
        this.current = first;
        this.positionShard = first;
        this.positionOffset = at.samples();
        this.fillShard = first;
        this.fillOffset = at.samples();
        this.block = o.shuffleWindow() > 0
                ? new ShuffleWindow(o.shuffleWindow(), o.shuffleBytes(), o.defaultWindow(), Keys.key(o.seed(), epoch, o.rank()),
                new StreamPosition(first, at.samples()), at.blockEmitted())
                : null;
        this.positionEmitted = block != null ? at.blockEmitted() : 0;
        this.deliveredBase = delivered;
        this.inline = new ShardCursor(stream, this, inlineCounters, new StageTimes(), true);
        this.rings = new ShardRing[o.workers() == 0 ? 0 : window];
        for (int i = 0; i < rings.length; i++) {
            rings[i] = new ShardRing(stream, this, o.shardBuffer());
        }
        this.workers = new StreamWorker[o.workers()];
        for (int i = 0; i < workers.length; i++) {
            workers[i] = new StreamWorker(this, i);
        }
        if (loader.tuner != null) {
            loader.tuner.restart();
            this.active = loader.tuner.workers();
        }
        this.allCounters = java.util.Arrays.copyOf(workers, workers.length + 1, WorkerCounters[].class);
        allCounters[workers.length] = inlineCounters;
        this.filled = new FilledQueue.Filled[pool.length];
        for (int i = 0; i < pool.length; i++) {
            filled[i] = new FilledQueue.Filled();
        }
        this.ready = new FilledQueue(pool.length);
        this.collator = new CollatorThread(this, free,
                workers.length > 0 && pool.length > 1 && !Boolean.FALSE.equals(o.collatorThread()));
    }

    /** At most this many shard positions are announced to {@link StreamingDataset#plan} (endless streams). */
    static final int PLAN_LIMIT = 1 << 16;

    @Override
    void start() {
        long first = stream.first();
        int[] upcoming = new int[(int) Math.min(shardCount - first, PLAN_LIMIT)];
        for (int i = 0; i < upcoming.length; i++) {
            upcoming[i] = stream.shardAt(first + i);
        }
        stream.source().dataset.plan(upcoming);
        for (StreamWorker w : workers) {
            w.thread.start();
        }
        if (Boolean.TRUE.equals(o.collatorThread())) {
            collator.startIfAllowed();
        }
    }

    @Override
    boolean finished() {
        return finished;
    }

    @Override
    long batches() {
        return -1;
    }

    @Override
    WorkerCounters[] counters() {
        return allCounters;
    }

    @Override
    long windowEnd() {
        return current + window;
    }

    @Override
    boolean cancelled() {
        return cancelled;
    }

    @Override
    LoaderState state() {
        return loader.stateAt(epoch, new LoaderState.Streamed(positionShard, positionOffset, positionEmitted),
                deliveredBase + delivered);
    }

    // ---- ShardRing.Owner, FilledQueue.Waiting -------------------------------------------------

    @Override
    public Thread taker() {
        return taker;
    }

    @Override
    public int needed() {
        return needed;
    }

    @Override
    public void checkCurrent() {
        if (cancelled || collator.stopping()) {
            throw new IllegalStateException("this iterator is stale: the loader was closed or a newer iterator() took over");
        }
    }

    @Override
    public RuntimeException timeout(long waited) {
        return stream.timeout(current, waited);
    }

    /** Wakes the workers that wait for work of any kind. */
    @Override
    public void wakeIdle() {
        for (StreamWorker w : workers) {
            if (w.idle) {
                LockSupport.unpark(w.thread);
            }
        }
    }

    // ---- consumer side ----------------------------------------------------------------------

    @Override
    public boolean hasNext() {
        if (prepared != null) {
            return true;
        }
        if (finished || failed) {
            return false;
        }
        checkCurrent();
        releaseHeld();
        if (holding >= o.holds()) {
            throw new IllegalStateException("the consumer holds " + holding + " batches, as many as the loader's holds(): "
                    + "close one before asking for the next");
        }
        if (holding > 0) { // NOTE [Holding batches]: the buffers of held batches are made as they are held
            loader.ensureBuffers(pool.length - o.holds() + holding + 1);
        }
        collator.observe(System.nanoTime());
        return prepare();
    }

    @Override
    public Batch next() {
        if (!hasNext()) {
            throw new NoSuchElementException("epoch " + epoch + " is done");
        }
        FilledQueue.Filled f = prepared;
        prepared = null;
        long now = System.nanoTime();
        stats.waitNanos += pendingWait;
        stats.wallNanos += now - lastMark;
        lastMark = now;
        stats.batches++;
        stats.samples += buffer.rows;
        stats.bytes += buffer.byteSize();
        stats.addStages(consumerTimes);
        consumerTimes.clear();
        stats.displacement(displacement, displacedSamples);
        displacement = 0;
        displacedSamples = 0;
        if (!Double.isNaN(shardShare)) {
            stats.shardShare(shardShare);
        }
        positionShard = f.shard;
        positionOffset = f.offset;
        positionEmitted = f.emitted;
        delivered++;
        buffer.delivered = true;
        if (o.holds() == 1) {
            held = true;
        } else {
            holding++;
        }
        Tuner tuner = loader.tuner;
        if (tuner != null && tuner.due(now, stats.batches)
                && tuner.observe(now, stats.batches, stats.waitNanos, busyNanos(workers), 0)) {
            active = tuner.workers(); // the window of shards is not resized while running
            PassWorker.wakeParked(workers);
        }
        collator.handedOut(System.nanoTime());
        return buffer;
    }

    /** Tells the workers (and the collator) to stop, without waiting for them (one may be stuck in a read). */
    private void cancel() {
        cancelled = true;
        PassWorker.wakeAll(workers);
        collator.wake();
    }

    @Override
    void release(Batch b) {
        if (o.holds() > 1) {
            holding--;
            giveBack(b);
        } else if (held && b == buffer) {
            held = false;
            giveBack(b);
        }
    }

    private void releaseHeld() {
        if (held) {
            buffer.delivered = false;
            held = false;
            giveBack(buffer);
        }
    }

    /** A buffer the consumer is done with: free for the collator to fill again. */
    private void giveBack(Batch b) {
        free.release(b.slot);
        collator.bufferFreed();
    }

    /** Takes the next batch (or, without a collator, fills the buffer with it); false at the end of the epoch. */
    private boolean prepare() {
        long t0 = System.nanoTime();
        if (lastMark < 0) {
            lastMark = t0;
        }
        FilledQueue.Filled f;
        boolean background = collator.running();
        if (!background) {
            taker = Thread.currentThread();
            int slot = free.acquire(); // the consumer holds fewer buffers than the pool has
            buffer = pool[slot];
            f = filled[slot];
            try {
                fill(buffer, f, t0);
            } catch (LoaderException e) {
                // the samples taken for this batch are gone from the rings: end the pass here,
                // at the last batch delivered, so that a new iterator resumes exactly
                free.release(slot);
                failed = true;
                cancel();
                throw e;
            } catch (RuntimeException | Error e) {
                free.release(slot);
                throw e;
            } finally {
                count(f);
                collator.collated(f.collateNanos);
            }
            if (f.end) {
                free.release(slot);
            }
        } else {
            try {
                f = ready.take(t0, o.timeoutNanos() > 0 ? t0 + o.timeoutNanos() : Long.MAX_VALUE, this);
            } catch (LoaderException e) {
                failed = true; // timed out: as above
                cancel();
                throw e;
            }
            if (f.end || f.error != null) {
                free.release(f.batch.slot);
            }
            count(f);
            if (f.error != null) {
                // as above; the collator has stopped at the failure
                failed = true;
                cancel();
                if (f.error instanceof Error e) {
                    throw e;
                }
                throw f.error instanceof RuntimeException r ? r : new IllegalStateException(f.error);
            }
            buffer = f.batch;
            Tracer tracer = o.tracer();
            if (tracer != null && !f.end) {
                tracer.span(Thread.currentThread().getName(), "wait for a batch", t0, System.nanoTime(), 0, 0, 0);
            }
        }
        if (f.end) {
            finish();
            return false;
        }
        displacement += f.displacement;
        displacedSamples += f.displaced;
        shardShare = f.shardShare;
        pendingWait = System.nanoTime() - t0 - (background ? 0 : f.collateNanos);
        prepared = f;
        return true;
    }

    /** Consumer: a fill's collation time and skipped samples into the stats, whether it ended, failed or filled a batch. */
    private void count(FilledQueue.Filled f) {
        consumerTimes.collate += f.collateNanos;
        if (f.skipped > 0) {
            stats.addSkipped(f.skipped, 0);
        }
    }

    /** The collator thread: fills the buffer of {@code slot} with the next batch and hands it over; true at the end or a failure. */
    boolean fillSlot(int slot) {
        taker = Thread.currentThread();
        FilledQueue.Filled f = filled[slot];
        try {
            fill(pool[slot], f, System.nanoTime());
        } catch (Throwable e) {
            f.batch = pool[slot];
            f.error = e;
        }
        ready.put(f);
        return f.end || f.error != null;
    }

    // ---- the collating thread: fill, take ------------------------------------------------------

    /**
     * Fills {@code batch} with the next samples of the pass, collated, and tells in {@code f}
     * where the stream stands after them ({@code f.end} when none was left).
     */
    private void fill(Batch batch, FilledQueue.Filled f, long t0) {
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
            checkCurrent(); // a stopping collator takes no further sample
            // the stream's next sample, or the next of the shuffled block
            if (block == null ? !take(item, t0, o.batchSize() - batch.rows) : !block.next(item, this, t0)) {
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
                if (o.errorPolicy() == ErrorPolicy.FAIL) {
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
            tracer.span(Thread.currentThread().getName(), "batch " + (deliveredBase + fillCount), t0, System.nanoTime(), 0, 0,
                    f.collateNanos);
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
        long deadline = o.timeoutNanos() > 0 && !collator.running() ? t0 + o.timeoutNanos() : Long.MAX_VALUE;
        while (current < shardCount) {
            if (workers.length == 0) {
                if (takeInline(item)) {
                    return true;
                }
            } else {
                ShardRing ring = rings[(int) (current % window)];
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
            current = current + 1;
            wakeIdle();
        }
        return false;
    }

    /** A sample whose transform failed (on a worker), under the error policy, in stream order. */
    private void failedTransform(ShardRing ring, StreamItem item) {
        Throwable e = item.error;
        item.error = null;
        if (o.errorPolicy() == ErrorPolicy.FAIL || !(e instanceof Exception)) {
            throw stream.sampleError(item.shard, item.offset, e);
        }
        inlineCounters.skipped++;
        if (o.errorPolicy() == ErrorPolicy.SKIP_SHARD && !ring.abandoned()) {
            inlineCounters.skippedShards++;
            ring.abandon(); // its reader stops; what it read already is drained and dropped
        }
    }

    private boolean takeInline(StreamItem item) {
        long m = current;
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

    private void finish() {
        finished = true;
        stop(false);
        loader.finished(this);
    }

    @Override
    boolean stop(boolean closing) {
        if (!collator.stop(closing)) {
            // stuck in a collate call: its samples may borrow from the readers, and it keeps
            // the spent ones; leave those open (the loader leaks its buffers the same way)
            cancel();
            for (StreamWorker w : workers) {
                IndexedPass.joinWorker(w.thread, closing);
            }
            return false;
        }
        cancel();
        boolean stopped = true;
        for (StreamWorker w : workers) {
            stopped &= IndexedPass.joinWorker(w.thread, closing);
            stats.retire(w);
        }
        inline.close();
        for (ShardRing r : rings) {
            ShardCursor.closeQuietly(r.takeSpent());
        }
        blocksDone();
        inline.publish();
        stats.retire(inlineCounters);
        stats.addStages(consumerTimes);
        consumerTimes.clear();
        prepared = null;
        held = false;
        return stopped;
    }

    // ---- for the workers (StreamWorker) ---------------------------------------------------------

    /** Transforms one raw sample of the earliest ring that has one; false if none has. */
    boolean helpOne(SampleContext context, StageTimes times) {
        long first = current;
        for (long p = first; p < first + window; p++) {
            if (rings[(int) (p % window)].transformOne(p, context, times)) {
                return true;
            }
        }
        return false;
    }

    /** Whether a ring in the window has a sample to transform or room to read into. */
    boolean workAvailable() {
        long first = current;
        for (long p = first; p < first + window; p++) {
            if (rings[(int) (p % window)].hasWork(p)) {
                return true;
            }
        }
        return false;
    }

    /** The next shard position for a worker to read. */
    long claimShard() {
        return claim.getAndIncrement();
    }

    long shardCount() {
        return shardCount;
    }

    ShardRing ring(long m) {
        return rings[(int) (m % window)];
    }

    int workerCount() {
        return workers.length;
    }

    StreamEpoch stream() {
        return stream;
    }
}
