package dev.stoker;

import java.util.NoSuchElementException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * One pass over (the rest of) an epoch of a {@link StreamingDataset}.
 *
 * <p>NOTE [Streaming]: this rank's shards are positions {@code m = 0, 1, ...} of its streams
 * (each a {@link Partition} of the epoch's shard {@link Order}, read one after another: NOTE
 * [Elastic streams]). Workers claim shard positions in order
 * (at most {@code shardsAhead} ahead of the one the consumer reads) and read each shard's samples
 * into a bounded ring of its own; the transforms of a ring's samples are claimed one by one by
 * any worker with nothing better to do, earliest ring first (NOTE [Helping]), so one shard keeps
 * every worker busy; one thread (the caller's, or a collator's: NOTE [Background collation])
 * drains the rings in position order and collates the samples into batches. So batch contents
 * depend only on the shard order and the shards' contents, never on worker timing, and memory is
 * bounded by {@code shardsAhead × shardBuffer} samples. The position after a batch is (shard
 * position, sample offset in that shard), told as each stream's; resuming reopens that shard and
 * skips the offset.
 *
 * <p>The filling side is the caller's thread or a collator's ({@link CollatorThread}, NOTE
 * [Background collation]); the workers are {@link StreamWorker}s.
 */
final class StreamPass extends Pass implements ShardRing.Owner, FilledQueue.Waiting {
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

    // consumer side
    private final StageTimes consumerTimes = new StageTimes();
    private final WorkerCounters[] allCounters;
    /** The position after the last batch delivered (once one was); the prepared batch's is in its Filled. */
    private long positionShard;
    private long positionOffset;
    private long positionEmitted;
    /** The prepared batch's fill, or null. */
    private FilledQueue.Filled prepared;
    private long delivered;
    private final HeldBatches held;
    private boolean finished;
    private boolean failed;
    private long lastMark = -1;
    private long pendingWait;

    // the filling side (the collator thread, or the consumer's without one)
    private final CollatorThread collator;
    /** One per buffer, by slot: a filled batch with where the stream stands after it. */
    private final FilledQueue.Filled[] filled;
    private final FilledQueue ready;
    /** Takes the samples in order and fills the batches (whichever thread collates). */
    private final StreamFill fill;

    StreamPass(Loader loader, StreamSource<?, ?> source, Batch[] buffers, FreeList free, long epoch,
              LoaderState.Streams at, long delivered) {
        this.loader = loader;
        this.o = loader.options;
        this.stats = loader.statsSink();
        this.pool = buffers; // the loader's: the buffers of held batches are added as they are held
        this.buffer = buffers[0];
        this.free = free;
        this.epoch = epoch;
        this.stream = StreamEpoch.of(source, o, epoch, at);
        this.shardCount = stream.shards();
        this.window = o.ahead();
        this.claim = new AtomicLong(0);
        this.current = 0;
        this.held = new HeldBatches(o.holds(), this::giveBack);
        this.deliveredBase = delivered;
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
        this.fill = new StreamFill(this, o, stream, epoch, delivered);
        this.allCounters = java.util.Arrays.copyOf(workers, workers.length + 1, WorkerCounters[].class);
        allCounters[workers.length] = fill.counters();
        this.filled = new FilledQueue.Filled[pool.length];
        for (int i = 0; i < pool.length; i++) {
            filled[i] = new FilledQueue.Filled();
        }
        this.ready = new FilledQueue(pool.length);
        this.collator = new CollatorThread(this, free,
                workers.length > 0 && pool.length > 1 && !Boolean.FALSE.equals(o.collatorThread()));
    }

    @Override
    void start() {
        stream.announce();
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
        return loader.stateAt(epoch, delivered == 0 ? stream.startPosition() : stream.positionAt(positionShard,
                positionOffset, positionEmitted, shardCheck(positionShard, positionOffset, positionEmitted)),
                deliveredBase + delivered);
    }

    /** The shard whose check was taken last, and its check: states are taken often, a check costs two reads. */
    private int checkedShard = -1;
    private long checked;

    /**
     * The check of the shard at position {@code m} when a state there lies inside it (NOTE [Shard
     * check]), else 0.
     */
    private synchronized long shardCheck(long m, long offset, long emitted) {
        if (offset == 0 && emitted == 0 || m >= stream.shards()) {
            return 0;
        }
        int shard = stream.shardAt(m);
        if (shard != checkedShard) {
            try {
                checked = stream.source().dataset.shardCheck(shard);
            } catch (java.io.IOException e) {
                String name = stream.source().dataset.shardName(shard);
                throw new LoaderException(name + ": reading the shard's check for the loader's state: "
                        + Pass.describe(e, name), name, -1, e);
            }
            checkedShard = shard;
        }
        return checked;
    }

    // ---- ShardRing.Owner, FilledQueue.Waiting -------------------------------------------------

    @Override
    public Thread taker() {
        return fill.taker();
    }

    @Override
    public int needed() {
        return fill.needed();
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
        held.releaseLast();
        held.checkRoom();
        if (held.holding() > 0) { // NOTE [Holding batches]: the buffers of held batches are made as they are held
            loader.ensureBuffers(pool.length - o.holds() + held.holding() + 1);
        }
        collator.observe(System.nanoTime());
        return prepare();
    }

    @Override
    public boolean nextReady() {
        return false; // a stream's batches are made as they are asked for: never known ahead
    }

    @Override
    public Batch next() {
        if (!hasNext()) {
            throw new NoSuchElementException("epoch " + epoch + " is done");
        }
        FilledQueue.Filled f = prepared;
        prepared = null;
        long now = System.nanoTime();
        stats.delivered(buffer, pendingWait, now - lastMark);
        stats.addStages(consumerTimes);
        consumerTimes.clear();
        stats.displacement(f.displacement, f.displaced);
        if (!Double.isNaN(f.shardShare)) {
            stats.shardShare(f.shardShare);
        }
        lastMark = now;
        positionShard = f.shard;
        positionOffset = f.offset;
        positionEmitted = f.emitted;
        delivered++;
        held.delivered(buffer);
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
        held.release(b);
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
            int slot = free.acquire(); // the consumer holds fewer buffers than the pool has
            buffer = pool[slot];
            f = filled[slot];
            try {
                fill.fill(buffer, f, t0);
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
                tracer.span(new Tracer.Span(Thread.currentThread().getName(), "wait for a batch", t0, System.nanoTime(), 0, 0, 0));
            }
        }
        if (f.end) {
            finish();
            return false;
        }
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
        FilledQueue.Filled f = filled[slot];
        try {
            fill.fill(pool[slot], f, System.nanoTime());
        } catch (Throwable e) {
            f.batch = pool[slot];
            f.error = e;
        }
        ready.put(f);
        return f.end || f.error != null;
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
                PassWorker.join(w.thread, closing);
            }
            return false;
        }
        cancel();
        boolean stopped = true;
        for (StreamWorker w : workers) {
            stopped &= PassWorker.join(w.thread, closing);
            stats.retire(w);
        }
        for (ShardRing r : rings) {
            ShardCursor.closeQuietly(r.takeSpent());
        }
        fill.close();
        stats.retire(fill.counters());
        stats.addStages(consumerTimes);
        consumerTimes.clear();
        prepared = null;
        held.clear();
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

    /** The shard position samples are taken from now. */
    long current() {
        return current;
    }

    /** The filling side is done with the current shard position: the window moves on. */
    void advance() {
        current = current + 1;
        wakeIdle();
    }

    /** Whether the collator thread fills the batches (its waits are not the consumer's to time). */
    boolean collatorRunning() {
        return collator.running();
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
