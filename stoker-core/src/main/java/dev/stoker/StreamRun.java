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
 * (at most {@code prefetch} ahead of the one the consumer reads) and read each shard's samples
 * into a bounded ring of its own; the transforms of a ring's samples are claimed one by one by
 * any worker with nothing better to do, earliest ring first (NOTE [Helping]), so one shard keeps
 * every worker busy; one thread (the caller's, or a collator's: NOTE [Background collation])
 * drains the rings in position order and collates the samples into batches. So batch contents
 * depend only on the shard order and the shards' contents, never on worker timing, and memory is
 * bounded by {@code prefetch × ring capacity} samples. The position after a batch is (shard
 * position, sample offset in that shard); resuming reopens that shard and skips the offset.
 *
 * <p>NOTE [Background collation]: a pass starts out collating on the caller's thread, in
 * {@code hasNext()}. Once it sees the caller spend time away between batches (a training step:
 * on average at least {@code AWAY_NANOS} over {@code SWITCH_BATCHES} batches whose collation took
 * at least {@code COLLATE_NANOS} each), and it has workers, it hands the rings to a collator
 * thread of its own, which collates into a few buffers ahead, so that the training loop only
 * takes finished batches, as it does from a map-style pass: collating on the caller's thread
 * cost a training loop its collation time every step (W2 streamed with a 20 ms step ran 15%
 * slower than from the index). A caller that is never away (a benchmark of the loader alone)
 * keeps collating itself: a thread in between would only add a hand-off per batch (W4, 32 small
 * windows a batch, ran 20% slower with one). Only one thread at a time takes samples from the
 * rings, fills batches, closes spent readers and keeps the shuffle window: the caller's until the
 * switch, which happens between batches, the collator's after. The consumer moves the delivered
 * position when it takes a batch, so a state, a stop or a failure never counts a batch that was
 * collated but not delivered; the loader's timeout bounds the consumer's wait for a batch, not
 * the collator's (which may start one a training step or two before it is asked for).
 */
final class StreamRun extends Pass {
    private final Loader loader;
    private final Options o;
    private final StreamSource<?, ?> source;
    private final Stats stats;
    /** The batch prepared or delivered now (with a collator, one of {@code pool}). */
    private Batch buffer;
    private final Batch[] pool;
    private final FreeList free;
    private final long epoch;
    private final Order order;
    private final Partition partition;
    private final long firstShard;
    private final long skipFirst;
    private final long shardCount;
    private final int window;
    private final Ring[] rings;
    private final Worker[] workers;
    private final long deliveredBase;

    private final AtomicLong claim;
    private volatile long current;
    private volatile boolean cancelled;
    /** The thread that takes samples from the rings (they wake it): the caller's, or the collator after the switch. */
    private volatile Thread consumer;

    // consumer side
    private final long[] consumerNanos = new long[3];
    private final WorkerCounters inlineCounters = new WorkerCounters();
    private final ShardCursor inline = new ShardCursor(inlineCounters, new long[3], true);
    private final WorkerCounters[] allCounters;
    private long positionShard;
    private long positionOffset;
    private long preparedShard;
    private long preparedOffset;
    private long delivered;
    private boolean prepared;
    private boolean held;
    /** Delivered batches not yet closed, when the consumer may hold several (Loader.holds > 1). */
    private int holding;
    private boolean finished;
    private boolean failed;
    private long lastMark = -1;
    private long pendingWait;
    /** Samples the consumer will take before it delivers (the rest of a batch or block): how long it can sleep. */
    private int consumerNeed = 1;
    private final Item item = new Item();

    // the filling side (the collator thread, or the consumer's without one)
    private volatile Thread collator;
    /** The collator thread fills (set once, by the consumer, before that thread starts). */
    private volatile boolean background;
    /** A collator thread may be started: with workers and more than one buffer, unless the loader says never. */
    private final boolean mayCollateAhead;
    private long lastHandedOut = -1;
    private long awaySum;
    private long collateSum;
    private int observed;
    /** Caller away between batches, on average, for the switch to a collator thread (NOTE [Background collation]). */
    static final long AWAY_NANOS = 200_000;
    /** Collation per batch, on average, for the switch: below it, a collator saves less than its hand-offs cost. */
    static final long COLLATE_NANOS = 20_000;
    static final int SWITCH_BATCHES = 8;
    private volatile boolean collatorParked;
    /** Stopping: the collator stops before the workers do, since a worker that stops closes its reader. */
    private volatile boolean collatorStop;
    /** One per buffer, by slot: a filled batch with where the stream stands after it. */
    private final Filled[] filled;
    /** Filled batches in order, from the collator to the consumer (single producer, single consumer). */
    private final Filled[] readyRing;
    private volatile long readyHead;
    private volatile long readyTail;
    private volatile boolean consumerWaiting;
    private volatile Thread caller;
    private long fillShard;
    private long fillOffset;
    private long fillCount;
    private long fillDisplacement;
    private long fillDisplaced;
    /** The shard of each sample taken for the batch being filled (sorted in place to count them). */
    private int[] fillShards = new int[0];

    // NOTE [Two-tier shuffle]: with a shuffle window, the consumer takes the stream (already in
    // the epoch's shuffled shard order: tier one) in blocks of `shuffleWindow` samples (or fewer:
    // a block also ends at the sample that brings it to `shuffleBytes`) and hands each block out
    // in a keyed random order (tier two). A block is a pure function of where it
    // starts in the stream, and its order of (seed, epoch, rank, that start), so a state holding
    // the block's start and how many of it were delivered resumes exactly.
    private final int shuffleWindow;
    private final long shuffleBytes;
    private final long skipInFirstBlock;
    private Object[] blockValues = new Object[0];
    private int[] blockShard = new int[0];
    private long[] blockOffset = new long[0];
    private long[] blockPosition = new long[0];
    private int blockSize;
    private int blockEmitted;
    private boolean blockFilled;
    private Permutation blockOrder;
    private long blockStartShard;
    private long blockStartOffset;
    private long afterBlockShard;
    private long afterBlockOffset;
    private long streamShard;
    private long streamOffset;
    private long preparedEmitted;
    private long positionEmitted;
    private boolean firstBlockDone;
    // shuffle quality of the samples taken since the last delivery, added to the stats per batch
    private long displacement;
    private long displacedSamples;
    private double shardShare = Double.NaN;

    StreamRun(Loader loader, StreamSource<?, ?> source, Batch[] buffers, FreeList free, long epoch,
              LoaderState.Streamed at, long delivered) {
        long rankOffset = at.shards();
        long sampleInShard = at.samples();
        long blockEmitted = at.blockEmitted();
        this.loader = loader;
        this.o = loader.options;
        this.source = source;
        this.stats = loader.statsSink();
        this.pool = java.util.Arrays.copyOf(buffers, free.size());
        this.buffer = buffers[0];
        this.free = free;
        this.epoch = epoch;
        this.order = o.sampler().order(source.shards(), o.seed(), epoch);
        this.partition = o.partition(0);
        this.shardCount = partition.length();
        this.firstShard = Math.min(rankOffset, shardCount);
        this.skipFirst = sampleInShard;
        this.window = o.ahead();
        this.claim = new AtomicLong(firstShard);
        this.current = firstShard;
        this.positionShard = firstShard;
        this.positionOffset = sampleInShard;
        this.fillShard = firstShard;
        this.fillOffset = sampleInShard;
        this.streamShard = firstShard;
        this.streamOffset = sampleInShard;
        this.shuffleWindow = o.shuffleWindow();
        this.shuffleBytes = o.shuffleBytes();
        this.skipInFirstBlock = shuffleWindow > 0 ? blockEmitted : 0;
        this.positionEmitted = skipInFirstBlock;
        this.deliveredBase = delivered;
        int capacity = o.shardBuffer();
        this.rings = new Ring[o.workers() == 0 ? 0 : window];
        for (int i = 0; i < rings.length; i++) {
            rings[i] = new Ring(capacity);
        }
        this.workers = new Worker[o.workers()];
        for (int i = 0; i < workers.length; i++) {
            workers[i] = new Worker(i);
        }
        if (loader.tuner != null) {
            loader.tuner.restart();
            this.active = loader.tuner.workers();
        }
        this.allCounters = java.util.Arrays.copyOf(workers, workers.length + 1, WorkerCounters[].class);
        allCounters[workers.length] = inlineCounters;
        this.filled = new Filled[pool.length];
        for (int i = 0; i < pool.length; i++) {
            pool[i].slot = i;
            filled[i] = new Filled();
        }
        this.readyRing = new Filled[pool.length];
        this.mayCollateAhead = workers.length > 0 && pool.length > 1 && !Boolean.FALSE.equals(o.collatorThread());
    }

    /** At most this many shard positions are announced to {@link StreamingDataset#plan} (endless streams). */
    static final int PLAN_LIMIT = 1 << 16;

    @Override
    void start() {
        int[] upcoming = new int[(int) Math.min(shardCount - firstShard, PLAN_LIMIT)];
        for (int i = 0; i < upcoming.length; i++) {
            upcoming[i] = shardAt(firstShard + i);
        }
        source.dataset.plan(upcoming);
        for (Worker w : workers) {
            w.thread.start();
        }
        if (mayCollateAhead && Boolean.TRUE.equals(o.collatorThread())) {
            collateAhead();
        }
    }

    /** Consumer, between batches: from now on a collator thread fills them (NOTE [Background collation]). */
    private void collateAhead() {
        background = true;
        collator = new Thread(this::collate, "stoker-collator");
        collator.setDaemon(true);
        collator.start();
    }

    /** Consumer, before it prepares a batch: whether the caller's time away calls for a collator thread. */
    private void considerCollatingAhead(long now) {
        if (background || !mayCollateAhead || lastHandedOut < 0) {
            return;
        }
        awaySum += now - lastHandedOut;
        if (++observed == SWITCH_BATCHES) {
            if (awaySum >= AWAY_NANOS * SWITCH_BATCHES && collateSum >= COLLATE_NANOS * SWITCH_BATCHES) {
                collateAhead();
            }
            observed = 0;
            awaySum = 0;
            collateSum = 0;
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

    // ---- consumer side ----------------------------------------------------------------------

    @Override
    public boolean hasNext() {
        if (prepared) {
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
        considerCollatingAhead(System.nanoTime());
        return prepare();
    }

    @Override
    public Batch next() {
        if (!hasNext()) {
            throw new NoSuchElementException("epoch " + epoch + " is done");
        }
        prepared = false;
        long now = System.nanoTime();
        stats.waitNanos += pendingWait;
        stats.wallNanos += now - lastMark;
        lastMark = now;
        stats.batches++;
        stats.samples += buffer.rows;
        stats.bytes += buffer.byteSize();
        stats.addStages(consumerNanos);
        java.util.Arrays.fill(consumerNanos, 0);
        stats.displacement(displacement, displacedSamples);
        displacement = 0;
        displacedSamples = 0;
        if (!Double.isNaN(shardShare)) {
            stats.shardShare(shardShare);
        }
        positionShard = preparedShard;
        positionOffset = preparedOffset;
        positionEmitted = preparedEmitted;
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
        lastHandedOut = System.nanoTime();
        return buffer;
    }

    private void checkCurrent() {
        if (cancelled || collatorStop) {
            throw new IllegalStateException("this iterator is stale: the loader was closed or a newer iterator() took over");
        }
    }

    /** Tells the workers (and the collator) to stop, without waiting for them (one may be stuck in a read). */
    private void cancel() {
        cancelled = true;
        PassWorker.wakeAll(workers);
        if (collator != null) {
            LockSupport.unpark(collator);
        }
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
        if (collatorParked) {
            LockSupport.unpark(collator);
        }
    }

    /** Takes the next batch (or, without a collator, fills the buffer with it); false at the end of the epoch. */
    private boolean prepare() {
        long t0 = System.nanoTime();
        if (lastMark < 0) {
            lastMark = t0;
        }
        Filled f;
        if (!background) {
            consumer = Thread.currentThread();
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
                collateSum += f.collateNanos;
            }
            if (f.end) {
                free.release(slot);
            }
        } else {
            try {
                f = awaitFilled(t0);
            } catch (LoaderException e) {
                failed = true; // timed out: as above
                cancel();
                throw e;
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
        preparedShard = f.shard;
        preparedOffset = f.offset;
        preparedEmitted = f.emitted;
        displacement += f.displacement;
        displacedSamples += f.displaced;
        shardShare = f.shardShare;
        pendingWait = System.nanoTime() - t0 - (background ? 0 : f.collateNanos);
        prepared = true;
        return true;
    }

    /** Consumer: a fill's collation time and skipped samples into the stats, whether it ended, failed or filled a batch. */
    private void count(Filled f) {
        consumerNanos[Source.COLLATE] += f.collateNanos;
        if (f.skipped > 0) {
            stats.addSkipped(f.skipped, 0);
        }
    }

    /** A batch filled by the collator, with where the stream stands after it (or why it stopped). */
    static final class Filled {
        Batch batch;
        long shard;
        long offset;
        long emitted;
        long collateNanos;
        long displacement;
        long displaced;
        double shardShare;
        long skipped;
        Throwable error;
        boolean end;
    }

    /** The collator thread: fills free buffers with the next batches, in order, until the epoch ends or fails. */
    private void collate() {
        consumer = Thread.currentThread();
        while (!cancelled && !collatorStop) {
            int slot = awaitFreeBuffer();
            if (slot < 0) {
                return;
            }
            Filled f = filled[slot];
            try {
                fill(pool[slot], f, System.nanoTime());
            } catch (Throwable e) {
                f.batch = pool[slot];
                f.error = e;
            }
            long t = readyTail;
            readyRing[(int) (t % readyRing.length)] = f;
            readyTail = t + 1;
            Thread waiting = caller;
            if (consumerWaiting && waiting != null) {
                LockSupport.unpark(waiting);
            }
            if (f.end || f.error != null) {
                return;
            }
        }
    }

    /** Collator: a free buffer's slot, now taken; -1 once the pass is cancelled. */
    private int awaitFreeBuffer() {
        while (!cancelled && !collatorStop) {
            int slot = free.acquire();
            if (slot >= 0) {
                return slot;
            }
            collatorParked = true;
            if ((slot = free.acquire()) >= 0) { // re-checked after publishing that it parks
                collatorParked = false;
                return slot;
            }
            if (!cancelled && !collatorStop) {
                LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(100));
            }
            collatorParked = false;
        }
        return -1;
    }

    /** Consumer: the next filled batch, waiting for the collator (since {@code t0}, within the loader's timeout). */
    private Filled awaitFilled(long t0) {
        long deadline = o.timeoutNanos() > 0 ? t0 + o.timeoutNanos() : Long.MAX_VALUE;
        caller = Thread.currentThread();
        while (true) {
            long h = readyHead;
            if (h < readyTail) {
                int i = (int) (h % readyRing.length);
                Filled f = readyRing[i];
                readyRing[i] = null;
                readyHead = h + 1;
                if (f.end || f.error != null) {
                    free.release(f.batch.slot);
                }
                return f;
            }
            checkCurrent();
            long now = System.nanoTime();
            if (now >= deadline) {
                throw timeout(now - t0);
            }
            consumerWaiting = true;
            if (readyHead == readyTail) { // re-checked after publishing that it waits
                LockSupport.parkNanos(this, Math.min(deadline - now, TimeUnit.MILLISECONDS.toNanos(100)));
            }
            consumerWaiting = false;
        }
    }

    /**
     * Fills {@code batch} with the next samples of the pass, collated, and tells in {@code f}
     * where the stream stands after them ({@code f.end} when none was left).
     */
    private void fill(Batch batch, Filled f, long t0) {
        f.batch = batch;
        f.error = null;
        f.end = false;
        f.skipped = 0;
        f.collateNanos = 0;
        batch.reset(epoch, deliveredBase + fillCount);
        long shard = fillShard;
        long offset = fillOffset;
        Item item = this.item;
        int taken = 0;
        while (batch.rows < o.batchSize()) {
            checkCurrent(); // a stopping collator takes no further sample
            consumerNeed = o.batchSize() - batch.rows;
            if (!nextSample(item, t0)) {
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
                source.collate(item.value, row);
                batch.commitRow();
            } catch (Exception e) {
                if (o.errorPolicy() == ErrorPolicy.FAIL) {
                    throw sampleError(item.shard, item.offset, e);
                }
                batch.abandonRow();
                f.skipped++;
            } catch (Error e) {
                throw sampleError(item.shard, item.offset, e);
            } finally {
                f.collateNanos += System.nanoTime() - c0;
            }
        }
        inline.publish();
        f.displacement = fillDisplacement;
        f.displaced = fillDisplaced;
        f.shardShare = largestShare(fillShards, taken);
        fillDisplacement = 0;
        fillDisplaced = 0;
        if (batch.rows == 0 || o.dropLast() && batch.rows < o.batchSize()) {
            f.end = true;
            return;
        }
        Tracer tracer = o.tracer();
        if (tracer != null) { // the samples' fetch and transform ran on the workers, per shard: not this batch's
            tracer.span(Thread.currentThread().getName(), "batch " + (deliveredBase + fillCount), t0, System.nanoTime(), 0, 0,
                    f.collateNanos);
        }
        if (shuffleWindow > 0) {
            // the position is the block's start and how much of it went out (or the next block's start)
            boolean exhausted = blockEmitted == blockSize;
            f.shard = exhausted ? afterBlockShard : blockStartShard;
            f.offset = exhausted ? afterBlockOffset : blockStartOffset;
            f.emitted = exhausted ? 0 : blockEmitted;
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

    /** A sample handed from a worker (or the inline reader) to the consumer. */
    static final class Item {
        Object value;
        Throwable error;
        int shard;
        long shardPosition;
        long offset;
    }

    /** The next sample to deliver: the stream's next, or the next of the shuffled block. */
    private boolean nextSample(Item out, long t0) {
        if (shuffleWindow == 0) {
            if (!take(out, t0)) {
                return false;
            }
            fillDisplaced++;
            return true;
        }
        if (!blockFilled || blockEmitted >= blockSize) {
            if (!fillBlock(t0)) {
                return false;
            }
        }
        int k = (int) blockOrder.apply(blockEmitted);
        out.value = blockValues[k];
        out.shard = blockShard[k];
        out.offset = blockOffset[k];
        out.shardPosition = blockPosition[k];
        blockValues[k] = null;
        fillDisplacement += Math.abs(blockEmitted - k);
        fillDisplaced++;
        blockEmitted++;
        return true;
    }

    /** Takes the next block of up to shuffleWindow samples (and shuffleBytes) from the stream; false if none is left. */
    private boolean fillBlock(long t0) {
        closeSpent(); // every sample of the blocks before this one went out (NOTE [Spent readers])
        blockStartShard = streamShard;
        blockStartOffset = streamOffset;
        int n = 0;
        long bytes = 0;
        Item t = new Item();
        while (n < shuffleWindow && (shuffleBytes == 0 || bytes < shuffleBytes)) {
            consumerNeed = shuffleWindow - n;
            if (!take(t, t0)) {
                break;
            }
            if (n == blockValues.length) {
                // grown as filled: a window bounded in bytes has no sample count to size it by
                int cap = (int) Math.min(shuffleWindow, Math.max(16, 2L * n));
                blockValues = java.util.Arrays.copyOf(blockValues, cap);
                blockShard = java.util.Arrays.copyOf(blockShard, cap);
                blockOffset = java.util.Arrays.copyOf(blockOffset, cap);
                blockPosition = java.util.Arrays.copyOf(blockPosition, cap);
            }
            if (shuffleBytes > 0) {
                bytes += o.defaultWindow() ? Sized.orUnsized(t.value) : Sized.of(t.value);
            }
            blockValues[n] = t.value;
            blockShard[n] = t.shard;
            blockOffset[n] = t.offset;
            blockPosition[n] = t.shardPosition;
            streamShard = t.shardPosition;
            streamOffset = t.offset + 1;
            n++;
        }
        afterBlockShard = streamShard;
        afterBlockOffset = streamOffset;
        blockSize = n;
        blockEmitted = 0;
        blockFilled = true;
        if (n == 0) {
            return false;
        }
        blockOrder = new Permutation(n, Mix.key(Mix.key(o.seed(), epoch, o.rank()), blockStartShard, blockStartOffset));
        blockEmitted = 0;
        if (!firstBlockDone) {
            firstBlockDone = true;
            // resuming inside this block: the first `skipInFirstBlock` of its order were delivered
            for (; blockEmitted < Math.min(n, skipInFirstBlock); blockEmitted++) {
                blockValues[(int) blockOrder.apply(blockEmitted)] = null;
            }
        }
        return true;
    }

    /** Takes the next sample of the pass into {@code item}; false when no shard has any left. */
    private boolean take(Item item, long t0) {
        while (current < shardCount) {
            if (workers.length == 0) {
                if (takeInline(item)) {
                    return true;
                }
            } else {
                Ring ring = rings[(int) (current % window)];
                if (ring.take(item, this, t0)) {
                    item.shardPosition = current;
                    if (item.error == null) {
                        return true;
                    }
                    failedTransform(ring, item);
                    continue;
                }
                Throwable err = ring.release();
                if (err != null) {
                    throw err instanceof LoaderException le ? le
                            : new LoaderException(source.name() + ": " + Pass.describe(err), source.name(), -1, err);
                }
            }
            current = current + 1;
            wakeIdle();
        }
        return false;
    }

    /** A sample whose transform failed (on a worker), under the error policy, in stream order. */
    private void failedTransform(Ring ring, Item item) {
        Throwable e = item.error;
        item.error = null;
        if (o.errorPolicy() == ErrorPolicy.FAIL || !(e instanceof Exception)) {
            throw sampleError(item.shard, item.offset, e);
        }
        inlineCounters.skipped++;
        if (o.errorPolicy() == ErrorPolicy.SKIP_SHARD && !ring.abandoned) {
            inlineCounters.skippedShards++;
            ring.abandoned = true; // its reader stops; what it read already is drained and dropped
        }
    }

    private boolean takeInline(Item item) {
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
        if (shuffleWindow == 0) {
            closeQuietly(reader);
        } else {
            spentReaders.add(reader);
        }
    }

    private void closeSpent() {
        for (var r : spentReaders) {
            closeQuietly(r);
        }
        spentReaders.clear();
    }

    /** Closes a reader, counting the records it left out as malformed ({@link StreamingDataset.ShardReader#skippedRecords}). */
    private void closeQuietly(StreamingDataset.ShardReader<?> reader) {
        if (reader != null) {
            long bad = reader.skippedRecords();
            if (bad > 0) {
                stats.addSkipped(bad, 0);
            }
            try {
                reader.close();
            } catch (Exception ignored) {
                // the shard is finished with; a failure to close it loses no sample
            }
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private Object transformRaw(Object raw, SampleContext context) throws Exception {
        return ((StreamSource) source).transform(raw, context);
    }

    private int shardAt(long m) {
        return (int) order.index(partition.position(m));
    }

    private LoaderException sampleError(int shard, long offset, Throwable e) {
        String name = source.dataset.shardName(shard);
        return new LoaderException(name + ": sample " + offset + " of the shard (epoch " + epoch + ", rank "
                + o.rank() + "): " + Pass.describe(e), name, StreamSource.sampleIndex(shard, offset), e);
    }

    private LoaderException shardError(int shard, long offset, Throwable e) {
        String name = source.dataset.shardName(shard);
        return new LoaderException(name + ": reading sample " + offset + " of the shard (epoch " + epoch + ", rank "
                + o.rank() + "): " + Pass.describe(e), name, StreamSource.sampleIndex(shard, offset), e);
    }

    LoaderTimeoutException timeout(long waited) {
        long m = current;
        String shard = m < shardCount ? source.dataset.shardName(shardAt(m)) : "?";
        return new LoaderTimeoutException(source.name() + ": timed out after " + TimeUnit.NANOSECONDS.toMillis(waited)
                + " ms waiting for a sample of " + shard + " (this rank's shard " + m + " of " + shardCount
                + ", epoch " + epoch + ", rank " + o.rank() + " of " + o.worldSize() + ")", source.name());
    }

    private void finish() {
        finished = true;
        stop(false);
        loader.finished(this);
    }

    @Override
    boolean stop(boolean closing) {
        if (collator != null) {
            collatorStop = true;
            LockSupport.unpark(collator);
            if (collator.getState() != Thread.State.NEW && !Run.joinWorker(collator, closing)) {
                // stuck in a collate call: its samples may borrow from the readers, and it keeps
                // the spent ones; leave those open (the loader leaks its buffers the same way)
                cancel();
                for (Worker w : workers) {
                    Run.joinWorker(w.thread, closing);
                }
                return false;
            }
        }
        cancel();
        boolean stopped = true;
        for (Worker w : workers) {
            stopped &= Run.joinWorker(w.thread, closing);
            stats.retire(w);
        }
        inline.close();
        for (Ring r : rings) {
            closeQuietly(r.spent);
            r.spent = null;
        }
        closeSpent();
        inline.publish();
        stats.retire(inlineCounters);
        stats.addStages(consumerNanos);
        java.util.Arrays.fill(consumerNanos, 0);
        prepared = false;
        held = false;
        return stopped;
    }

    // ---- the rings ----------------------------------------------------------------------------

    // NOTE [Helping]: a ring holds one shard position's samples in stream order. Its reader (the
    // worker that claimed the position) appends raw samples at `tail` while there is room; the
    // transforms are claimed in order by a compare-and-set on `claimed`, by whichever worker is
    // free: one whose own ring is full, one waiting for the window, one with no shard left to
    // claim. A transformed slot is published by writing its sequence number + 1 into `done`, and
    // the consumer takes slots at `head` in order once they are done. Sequence numbers only grow
    // (a ring moving to its next position keeps counting), so a claim can never land on a slot of
    // an earlier or later use of the ring. A worker with nothing to do parks as "idle" and is woken
    // by whatever could give it work: a new raw sample, the window moving, room in its ring.

    // NOTE [Hand-off]: waking a parked thread costs microseconds of CPU on both sides, as much as
    // reading a cheap sample, so the rings wake threads for runs of samples, not for each one.
    // A consumer that finds its next sample missing parks until the samples it still needs for
    // the batch (or shuffle block) are in, at most half a ring (`wakeAt`), or the shard ends;
    // transforms finish out of order, so once the last of those is done, every earlier one that
    // finishes wakes it again until it has them all. A reader
    // resting on a full ring is woken when a quarter of it is free again (`wakeRoom`). Before
    // parking, either side re-checks what it waits for after publishing that it parks, so no
    // wake-up is lost; the condition it was woken for is re-checked, never assumed.

    /** One shard position's samples: read by one worker, transformed by any, taken by the consumer. */
    final class Ring {
        private final int capacity;
        private final Object[] values;
        private final Throwable[] errors;
        private final long[] offsets;
        private final int[] shards;
        private final java.util.concurrent.atomic.AtomicLongArray done;
        private final AtomicLong claimed = new AtomicLong();
        private volatile long head;
        private volatile long tail;
        /** The shard position this ring holds now. */
        private volatile long position = -1;
        /** The reader is finished with this position: no sample will be appended. */
        private volatile boolean fetched;
        /** The consumer drops the rest of this shard (SKIP_SHARD after a failed transform). */
        volatile boolean abandoned;
        /** The position's reader once it is finished (before {@code fetched}), for the consumer to close. */
        private StreamingDataset.ShardReader<?> spent;
        private volatile boolean consumerParked;
        /** While the consumer is parked: the sequence number whose append wakes it (NOTE [Hand-off]). */
        private volatile long wakeAt = Long.MAX_VALUE;
        Throwable error;

        /** Room (free slots) at which a reader waiting for room is woken: a run of appends per wake-up. */
        private final int wakeRoom;

        Ring(int capacity) {
            this.capacity = capacity;
            this.wakeRoom = Math.max(1, capacity / 4);
            values = new Object[capacity];
            errors = new Throwable[capacity];
            offsets = new long[capacity];
            shards = new int[capacity];
            done = new java.util.concurrent.atomic.AtomicLongArray(capacity);
        }

        /** The reader starts position {@code m}; the consumer has drained and released the previous one. */
        void open(long m) {
            position = m;
        }

        /**
         * Consumer, after draining this ring: makes it ready for its next position (before the
         * window moves, so before any reader can open it) and returns why its reader stopped early.
         */
        Throwable release() {
            retire(spent);
            spent = null;
            Throwable e = error;
            error = null;
            abandoned = false;
            fetched = false;
            return e;
        }

        boolean full() {
            return tail - head >= capacity;
        }

        /** Reader: appends a raw sample (there is room); with no transform, it is ready as it is. */
        void append(Object raw, int shard, long offset) {
            long t = tail;
            int i = (int) (t % capacity);
            values[i] = raw;
            errors[i] = null;
            offsets[i] = offset;
            shards[i] = shard;
            if (source.transform == null) {
                claimed.set(t + 1); // before tail moves, so no helper ever sees it unclaimed
                done.set(i, t + 1);
            }
            tail = t + 1;
            if (source.transform == null && consumerParked && t >= wakeAt) {
                LockSupport.unpark(consumer);
            }
        }

        /**
         * Reader: no more samples for this position; {@code e} is the reason it stopped early, if
         * any; {@code reader} is for the consumer to close once the samples are done with.
         */
        void finish(Throwable e, StreamingDataset.ShardReader<?> reader) {
            error = e;
            spent = reader;
            fetched = true;
            if (consumerParked) {
                LockSupport.unpark(consumer);
            }
        }

        /** Any worker: claims and transforms the next raw sample; false if there is none. */
        boolean transformOne(Helper h) {
            long c = claimed.get();
            if (c >= tail || !claimed.compareAndSet(c, c + 1)) {
                return false;
            }
            int i = (int) (c % capacity);
            int shard = shards[i];
            long offset = offsets[i];
            long t0 = System.nanoTime();
            try {
                if (!abandoned) {
                    h.context.set(o.seed(), epoch, StreamSource.sampleIndex(shard, offset));
                    values[i] = transformRaw(values[i], h.context);
                }
            } catch (Throwable e) {
                values[i] = null;
                errors[i] = e;
            }
            h.nanos[Source.TRANSFORM] += System.nanoTime() - t0;
            done.set(i, c + 1);
            if (consumerParked) {
                // transforms finish out of order: wake the consumer when the last sample it waits
                // for is done, and after that at each one done before it (NOTE [Hand-off])
                long w = wakeAt;
                if (c >= w || done.get((int) (w % capacity)) == w + 1) {
                    LockSupport.unpark(consumer);
                }
            }
            return true;
        }

        /** Consumer: the next sample in order; false when the position is finished and drained. */
        boolean take(Item item, StreamRun run, long t0) {
            // with a collator, the consumer's own wait is what the timeout bounds (awaitFilled): the
            // collator may start a batch a training step or two before the consumer asks for it
            long deadline = o.timeoutNanos() > 0 && !run.background ? t0 + o.timeoutNanos() : Long.MAX_VALUE;
            while (true) {
                long h = head;
                if (h < tail && done.get((int) (h % capacity)) == h + 1) {
                    int i = (int) (h % capacity);
                    item.value = values[i];
                    item.error = errors[i];
                    item.offset = offsets[i];
                    item.shard = shards[i];
                    values[i] = null;
                    errors[i] = null;
                    head = h + 1;
                    if (tail - h - 1 == capacity - wakeRoom) {
                        run.wakeIdle(); // room in the ring for a run of samples (NOTE [Hand-off])
                    }
                    if (abandoned) {
                        item.error = null;
                        continue;
                    }
                    return true;
                }
                if (fetched && head == tail) {
                    return false;
                }
                run.checkCurrent();
                // sleep until the samples this batch still needs are in (at most half the ring),
                // or the shard ends
                wakeAt = head + Math.max(1, Math.min(run.consumerNeed, capacity / 2)) - 1;
                consumerParked = true;
                if (!(head < tail && done.get((int) (head % capacity)) == head + 1) && !(fetched && head == tail)) {
                    long now = System.nanoTime();
                    if (now >= deadline) {
                        consumerParked = false;
                        throw run.timeout(now - t0);
                    }
                    LockSupport.parkNanos(this, Math.min(deadline - now, TimeUnit.MILLISECONDS.toNanos(100)));
                }
                consumerParked = false;
            }
        }
    }

    /** What a thread needs to transform samples: its context and its stage times. */
    static final class Helper {
        final SampleContext context = new SampleContext();
        final long[] nanos = new long[3];
    }

    /** Transforms one raw sample of the earliest ring that has one; false if none has. */
    private boolean helpOne(Helper h) {
        long first = current;
        for (long p = first; p < first + window; p++) {
            Ring r = rings[(int) (p % window)];
            if (r.position == p && r.transformOne(h)) {
                return true;
            }
        }
        return false;
    }

    /** Wakes the workers that wait for work of any kind. */
    void wakeIdle() {
        for (Worker w : workers) {
            if (w.idle) {
                LockSupport.unpark(w.thread);
            }
        }
    }

    /**
     * Reads the samples of one shard position: opens the shard (skipping what the saved pass
     * already delivered) and fetches each sample, and counts into its counters. With no workers
     * (on the consumer) it also transforms them under the loader's error policy; a worker's cursor
     * hands raw samples to a ring, and the ring's transforms report their failures in order.
     */
    final class ShardCursor {
        private final WorkerCounters counters;
        private final long[] nanos;
        private final boolean transform;
        private final SampleContext context = new SampleContext();
        private StreamingDataset.ShardReader<?> reader;
        long position = -1;
        private int shard;
        private long offset;

        ShardCursor(WorkerCounters counters, long[] nanos, boolean transform) {
            this.counters = counters;
            this.nanos = nanos;
            this.transform = transform;
        }

        void open(long m) {
            close();
            position = m;
            shard = shardAt(m);
            offset = 0;
        }

        /**
         * The next sample of the shard into {@code item}; false at its end or when its rest is
         * skipped. The reader stays open (its samples may borrow its memory): see {@link #detach}.
         */
        boolean next(Item item) {
            try {
                if (reader == null) {
                    reader = source.dataset.open(shard);
                    if (position == firstShard && skipFirst > 0) {
                        offset = reader.skip(skipFirst);
                    }
                }
                while (!cancelled) {
                    long f0 = System.nanoTime();
                    Object raw = reader.next();
                    long f1 = System.nanoTime();
                    nanos[Source.FETCH] += f1 - f0;
                    if (raw == null) {
                        break;
                    }
                    long at = offset++;
                    if (!transform) {
                        item.value = raw;
                        item.shard = shard;
                        item.offset = at;
                        return true;
                    }
                    context.set(o.seed(), epoch, StreamSource.sampleIndex(shard, at));
                    try {
                        item.value = transformRaw(raw, context);
                    } catch (Exception e) {
                        if (o.errorPolicy() == ErrorPolicy.FAIL) {
                            throw sampleError(shard, at, e);
                        }
                        counters.skipped++;
                        if (o.errorPolicy() == ErrorPolicy.SKIP_SHARD) {
                            counters.skippedShards++;
                            break;
                        }
                        continue;
                    } finally {
                        nanos[Source.TRANSFORM] += System.nanoTime() - f1;
                    }
                    item.shard = shard;
                    item.offset = at;
                    return true;
                }
                return false;
            } catch (LoaderException e) {
                throw e;
            } catch (Exception e) {
                if (o.errorPolicy() == ErrorPolicy.FAIL) {
                    throw shardError(shard, offset, e);
                }
                counters.skippedShards++;
                return false;
            } catch (Error e) {
                throw shardError(shard, offset, e);
            }
        }

        /**
         * The reader, no longer this cursor's: the caller closes it once the shard's samples are
         * done with (NOTE [Spent readers]); null if none was opened.
         */
        StreamingDataset.ShardReader<?> detach() {
            var r = reader;
            reader = null;
            return r;
        }

        void publish() {
            counters.publish(nanos);
        }

        void close() {
            closeQuietly(detach());
        }
    }

    /** Reads shards into their rings, and transforms samples of any ring. */
    final class Worker extends PassWorker {
        private final Helper helper = new Helper();
        private final ShardCursor cursor = new ShardCursor(this, helper.nanos, false);
        private final Item item = new Item();
        volatile boolean idle;

        Worker(int i) {
            super(i);
        }

        @Override
        public void run() {
            try {
                while (!cancelled) {
                    if (!awaitActive(StreamRun.this)) {
                        return;
                    }
                    long m = claim.getAndIncrement();
                    if (m >= shardCount) {
                        // nothing left to read: help with the transforms until the pass ends
                        while (!cancelled) {
                            if (!helpOne(helper)) {
                                rest(() -> false);
                            }
                            publish();
                        }
                        return;
                    }
                    while (m >= windowEnd() && !cancelled) {
                        if (!helpOne(helper)) {
                            rest(() -> m < windowEnd());
                        }
                        publish();
                    }
                    if (cancelled) {
                        return;
                    }
                    read(m);
                }
            } finally {
                cursor.close();
                publish();
            }
        }

        /** Reads position {@code m} into its ring, helping with transforms whenever the ring is full. */
        private void read(long m) {
            Ring ring = rings[(int) (m % window)];
            ring.open(m);
            Throwable error = null;
            try {
                cursor.open(m);
                // read while the ring has room, keeping `lead` samples ready for whoever is free;
                // beyond that, transform (this ring's or an earlier one's), and read on only when
                // there is nothing to transform
                int lead = 2 * workers.length;
                while (!cancelled && !ring.abandoned) {
                    boolean room = !ring.full();
                    if (!(room && ring.tail - ring.claimed.get() < lead) && helpOne(helper)) {
                        publish();
                        continue;
                    }
                    if (!room) {
                        rest(() -> !ring.full());
                        continue;
                    }
                    if (!cursor.next(item)) {
                        break;
                    }
                    ring.append(item.value, item.shard, item.offset);
                    if (source.transform != null) {
                        wakeIdle();
                    }
                    publish();
                }
            } catch (Throwable e) {
                error = e; // every failure reaches the consumer, in order
            }
            publish();
            if (cancelled) {
                cursor.close(); // the consumer has stopped: no sample of it will be used
                ring.finish(error, null);
            } else {
                ring.finish(error, cursor.detach());
            }
        }

        /** Parks until woken (or briefly); {@code ready} is checked after the flag is set, so no wake-up is lost. */
        private void rest(java.util.function.BooleanSupplier ready) {
            idle = true;
            if (!cancelled && !ready.getAsBoolean() && !workAvailable()) {
                LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(10));
            }
            idle = false;
        }

        private boolean workAvailable() {
            long first = current;
            for (long p = first; p < first + window; p++) {
                Ring r = rings[(int) (p % window)];
                if (r.position == p && r.claimed.get() < r.tail) {
                    return true;
                }
            }
            return false;
        }

        private void publish() {
            cursor.publish();
        }
    }
}
