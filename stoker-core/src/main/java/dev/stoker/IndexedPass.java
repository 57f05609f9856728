package dev.stoker;

import java.util.Arrays;
import java.util.NoSuchElementException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

/**
 * One pass of a loader over (the rest of) an epoch: the workers, the prefetch window and the
 * consumer's side of the hand-off. Iterating it is iterating the loader.
 *
 * <p>NOTE [Ordering]: the pass is a list of batch numbers {@code b}; batch {@code b} holds this
 * rank's samples {@code rankOffset + b*B ... + B - 1}, each mapped through the {@link Partition}
 * and the epoch's {@link Order}. Workers claim batches by number from one counter and may finish
 * them in any order; each finished batch is parked in its buffer with its number, and the consumer
 * takes number {@code taken} next (or, unordered, the lowest number that is ready). So the bytes of
 * batch {@code b} depend only on {@code b}, never on which worker wrote it or when.
 *
 * <p>NOTE [Window]: a worker may start batch {@code s} only when {@code s < taken + prefetch}.
 * Then at most {@code prefetch} batches are being written or waiting, and the consumer holds at
 * most {@code holds} (one unless asked), so {@code prefetch + holds} buffers always suffice and a
 * worker never waits for a buffer, only for the window. Waits are {@link LockSupport#park} with a flag set before re-checking the
 * condition (the waker writes the condition, then reads the flag), so no wake-up is lost and
 * nothing is allocated per batch.
 *
 * <p>NOTE [Shutdown]: stopping sets {@code cancelled}, wakes every worker and joins them. Workers
 * check the flag between samples; a sample being read is allowed to finish (interrupting a thread
 * inside a {@code FileChannel} read would close the channel for every other reader). Only when the
 * loader itself closes and a worker has not stopped after a grace period is it interrupted.
 */
final class IndexedPass extends Pass {
    private static final long SPIN_NANOS = TimeUnit.MICROSECONDS.toNanos(50);

    private final Loader loader;
    private final Options o;
    private final Batch[] buffers;
    private final FreeList free;
    private final RowSource source;
    private final Stats stats;
    private final long epoch;
    private final Order order;
    private final Partition partition;
    private final long rankOffset;
    private final long endOffset;
    private final long total;
    private final long[] skip;
    private final long count;
    private final long deliveredBase;
    private final long sequenceBase;
    private final int batchSize;
    private final Tuner tuner;
    private final int cores = Runtime.getRuntime().availableProcessors();
    /** Positions below {@code taken + window} may be worked on (the prefetch depth, tuned or fixed). */
    private volatile int window;

    private final AtomicLong claim = new AtomicLong();
    private final AtomicLongArray ready;
    /**
     * Ordered hand-off: position {@code s} is ready in buffer {@code slotOf[s % length] - 1}. At
     * most {@code window} positions past {@code taken} are in flight and the window is smaller
     * than the number of buffers, so no two of them share an entry; the consumer finds its batch
     * in one read, however deep the window (a tuned one can be hundreds).
     */
    private final java.util.concurrent.atomic.AtomicIntegerArray slotOf;
    private final Throwable[] errors;
    private final Worker[] workers;
    private volatile long taken;
    private volatile boolean cancelled;
    private volatile Thread consumer;
    private volatile boolean consumerParked;
    /** How many batches from {@code taken} must be ready before a worker wakes the parked consumer (NOTE [Wake]). */
    private volatile int wakeAfter = 1;

    // consumer-side
    private final DeliveredSet deliveredSet = new DeliveredSet();
    private final SampleContext inlineContext = new SampleContext();
    private final StageTimes inlineTimes = new StageTimes();
    private final long[] inlineSamples;
    private final HeldBatches held;
    private boolean finished;
    private boolean failed;
    private long lastMark = -1;

    IndexedPass(Loader loader, Batch[] buffers, FreeList free, long epoch, LoaderState.Indexed at, long delivered) {
        this.loader = loader;
        this.o = loader.options;
        this.buffers = buffers;
        this.free = free;
        this.held = new HeldBatches(o.holds(), b -> this.free.release(b.slot));
        this.source = ((Plan.Indexed) loader.plan).source();
        this.stats = loader.statsSink();
        this.epoch = epoch;
        this.order = o.sampler().order(source.size(), o.seed(), epoch);
        this.partition = o.partition(at.segmentStart());
        this.batchSize = o.batchSize();
        this.inlineSamples = new long[batchSize];
        this.rankOffset = Math.min(at.rankOffset(), partition.length());
        this.endOffset = endOffset(partition.length(), this.rankOffset, batchSize, o.dropLast());
        this.total = (endOffset - this.rankOffset + batchSize - 1) / batchSize;
        long[] s = at.done();
        Arrays.sort(s);
        this.skip = Arrays.stream(s).filter(b -> b >= 0 && b < total).distinct().toArray();
        this.count = total - skip.length;
        for (long b : skip) {
            deliveredSet.add(b);
        }
        this.deliveredBase = delivered;
        this.sequenceBase = delivered - skip.length;
        this.tuner = loader.tuner;
        this.ready = new AtomicLongArray(buffers.length);
        for (int i = 0; i < buffers.length; i++) {
            ready.set(i, -1);
        }
        this.errors = new Throwable[buffers.length];
        this.slotOf = new java.util.concurrent.atomic.AtomicIntegerArray(buffers.length);
        this.workers = new Worker[o.workers()];
        for (int i = 0; i < workers.length; i++) {
            workers[i] = new Worker(i);
        }
        if (tuner != null) {
            tuner.restart();
            loader.ensureBuffers(tuner.prefetch() + 1);
            this.window = tuner.prefetch();
            this.active = tuner.workers();
        } else {
            this.window = o.ahead();
        }
    }

    private static long endOffset(long perRank, long rankOffset, int batchSize, boolean dropLast) {
        long rest = perRank - rankOffset;
        return dropLast ? rankOffset + rest / batchSize * batchSize : perRank;
    }

    /** Batches a pass from this position would deliver. */
    static long batchesFor(Options o, LoaderState.Indexed at) {
        Partition p = o.partition(at.segmentStart());
        long off = Math.min(at.rankOffset(), p.length());
        long end = endOffset(p.length(), off, o.batchSize(), o.dropLast());
        long t = (end - off + o.batchSize() - 1) / o.batchSize();
        return t - Arrays.stream(at.done()).filter(b -> b >= 0 && b < t).distinct().count();
    }

    @Override
    void start() {
        for (Worker w : workers) {
            w.thread.start();
        }
    }

    @Override
    long batches() {
        return count;
    }

    @Override
    boolean finished() {
        return finished;
    }

    @Override
    WorkerCounters[] counters() {
        return workers;
    }

    @Override
    long windowEnd() {
        return taken + window;
    }

    @Override
    boolean cancelled() {
        return cancelled;
    }

    @Override
    LoaderState state() {
        if (taken == count) {
            // everything delivered: the position is the start of the next epoch
            return loader.stateAt(epoch + 1, LoaderState.Indexed.START, 0);
        }
        long frontier = deliveredSet.frontier();
        long offset = Math.min(endOffset, rankOffset + frontier * batchSize);
        return loader.stateAt(epoch, new LoaderState.Indexed(partition.start(), offset, deliveredSet.above()),
                deliveredBase + taken);
    }

    /** The batches taken, when they come in order (their states then follow from their number). */
    @Override
    public long mark() {
        return o.ordered() ? taken : -1;
    }

    /**
     * The state after the first {@code mark} batches of an ordered pass, as {@link #state()} gave
     * it then: the t-th batch delivered is the t-th not among those a resumed state had delivered
     * ({@link #batchNumber}), so the frontier after t is batch {@code batchNumber(t)}, and the
     * delivered batches above it are those of the resumed state's above it. Nothing is kept per
     * batch for it (the bridge's session asks for the state at any notice its client took).
     */
    @Override
    public LoaderState stateAfter(long mark) {
        if (!o.ordered() || mark < 0 || mark > taken) {
            throw new IllegalArgumentException("no state after " + mark + " batches of this pass (" + taken + " taken"
                    + (o.ordered() ? ")" : ", unordered)"));
        }
        if (mark == count) {
            return loader.stateAt(epoch + 1, LoaderState.Indexed.START, 0);
        }
        long frontier = batchNumber(mark);
        long[] done = Arrays.stream(skip).filter(d -> d > frontier).map(d -> d - frontier).toArray();
        long offset = Math.min(endOffset, rankOffset + frontier * batchSize);
        return loader.stateAt(epoch, new LoaderState.Indexed(partition.start(), offset, done), deliveredBase + mark);
    }

    // ---- consumer side ----------------------------------------------------------------------

    @Override
    public boolean hasNext() {
        if (finished || failed) {
            return false;
        }
        checkCurrent();
        held.releaseLast();
        if (taken == count) {
            finish();
            return false;
        }
        return true;
    }

    @Override
    public boolean nextReady() {
        return !finished && !failed && !cancelled && taken < count && findReady() >= 0;
    }

    @Override
    public Batch next() {
        if (!hasNext()) {
            throw new NoSuchElementException("epoch " + epoch + " is done");
        }
        held.checkRoom();
        if (held.holding() > 0) {
            loader.ensureBuffers(window + held.holding() + 1); // NOTE [Holding batches]: made as they are held
        }
        long t0 = System.nanoTime();
        if (lastMark < 0) {
            lastMark = t0;
        }
        int buf = workers.length == 0 ? loadInline() : awaitReady(t0);
        long t1 = System.nanoTime();
        Tracer tracer = o.tracer();
        if (tracer != null) {
            tracer.span(new Tracer.Span(Thread.currentThread().getName(), workers.length == 0 ? "load batch (inline)" : "wait for a batch",
                    t0, t1, 0, 0, 0));
        }
        ready.set(buf, -1);
        slotOf.set((int) (taken % buffers.length), 0);
        Batch batch = buffers[buf];
        taken = taken + 1;
        PassWorker.wakeParked(workers);
        deliveredSet.add(batch.sequence - sequenceBase);
        stats.delivered(batch, t1 - t0, t1 - lastMark);
        lastMark = t1;
        if (batch.skipped > 0) {
            stats.addSkipped(batch.skipped, 0);
        }
        held.delivered(batch);
        if (tuner != null && tuner.due(t1, stats.batches)
                && tuner.observe(t1, stats.batches, stats.waitNanos, busyNanos(workers), blockedNanos(workers))) {
            retune();
        }
        return batch;
    }

    /** Takes on the tuner's choices: buffers first, then the wider window, then the workers. */
    private void retune() {
        int p = tuner.prefetch();
        loader.ensureBuffers(p + held.holding() + 1);
        window = p;
        active = tuner.workers();
        PassWorker.wakeParked(workers);
    }

    /** A pass stopped by a newer iterator or by close() can not go on: say so instead of hanging. */
    private void checkCurrent() {
        if (cancelled) {
            throw new IllegalStateException("this iterator is stale: the loader was closed or a newer iterator() took over");
        }
    }

    @Override
    void release(Batch b) {
        held.release(b);
    }

    private int loadInline() {
        long s = taken;
        int buf = free.acquire();
        inlineTimes.clear();
        try {
            fill(buffers[buf], s, inlineContext, inlineTimes, inlineSamples);
        } catch (RuntimeException | Error e) {
            free.release(buf);
            failed = true;
            throw e instanceof LoaderException le ? le : wrap(e);
        } finally {
            stats.addStages(inlineTimes);
        }
        return buf;
    }

    private int awaitReady(long t0) {
        consumer = Thread.currentThread();
        long deadline = o.timeoutNanos() > 0 ? t0 + o.timeoutNanos() : Long.MAX_VALUE;
        long spinUntil = t0 + (Math.min(active, workers.length) < cores ? SPIN_NANOS : 0);
        while (true) {
            int buf = findReady();
            if (buf >= 0) {
                Throwable err = errors[buf];
                if (err != null) {
                    errors[buf] = null;
                    ready.set(buf, -1);
                    failed = true;
                    cancel();
                    throw err instanceof LoaderException le ? le : wrap(err);
                }
                return buf;
            }
            // NOTE [Spin]: waking a parked thread takes tens of microseconds on a virtual machine,
            // longer than a small batch takes to make. When a core is left over for the consumer,
            // it spins a little before parking; when the workers use every core, spinning would
            // only slow them down.
            if (System.nanoTime() < spinUntil) {
                Thread.onSpinWait();
                continue;
            }
            checkCurrent();
            // NOTE [Wake]: waking the consumer costs a worker's core a context switch and, on a
            // virtual machine, an interrupt between processors: a tenth of the time at twenty
            // thousand batches a second. When the workers are behind (the consumer parks), it
            // makes no difference to the rate whether the consumer takes each batch as it comes
            // or several at once; so, ordered and past the pass's first batch, it sleeps until a
            // run of batches is ready in a row from its next batch: a quarter of the window (at
            // most 8), or the consumer's own run (LoaderBuilder.wakeRun) where every wake-up costs
            // more (the bridge's session wakes a second process), within what the window leaves
            // beside the active workers, so that they never wait for the sleeping consumer.
            wakeAfter = o.ordered() && taken > 0 ? run() : 1;
            consumerParked = true;
            if (!wakeReady()) {
                long now = System.nanoTime();
                if (now >= deadline) {
                    consumerParked = false;
                    throw timeout(now - t0);
                }
                // waiting for a run of batches, it looks again every 2 ms: its next batch may be
                // ready while a later one is slow (a straggling read), and it should not wait on that
                LockSupport.parkNanos(this, Math.min(deadline - now, wakeAfter > 1 ? WAKE_LOOK_NANOS : TimeUnit.MILLISECONDS.toNanos(100)));
            }
            consumerParked = false;
        }
    }

    private LoaderException wrap(Throwable e) {
        return new LoaderException(source.name() + ": " + describe(e, source.name()), source.name(), -1, e);
    }

    private static final int WAKE_AFTER = 8;

    /** The batches ready in a row that wake a waiting consumer (NOTE [Wake]). */
    private int run() {
        int w = window;
        return o.wakeRun() > 0 ? Math.clamp(w - Math.min(active, workers.length), 1, o.wakeRun()) : Math.max(1, Math.min(WAKE_AFTER, w / 4));
    }

    private static final long WAKE_LOOK_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

    /**
     * Whether the parked consumer should wake: the {@link #wakeAfter} batches from {@code taken}
     * (or as many as the pass has left) are ready; unordered, any is. Written after the ready
     * marks and read after {@code consumerParked} by the consumer (and the other way round by a
     * worker), so the last batch of the run is seen by one side or the other.
     */
    private boolean wakeReady() {
        if (!o.ordered()) {
            return findReady() >= 0;
        }
        if (cancelled) {
            return true;
        }
        long t = taken;
        long end = Math.min(count, t + wakeAfter);
        for (long s = t; s < end; s++) {
            int b = slotOf.get((int) (s % buffers.length)) - 1;
            if (b < 0 || ready.get(b) != s) {
                return false;
            }
        }
        return true;
    }

    private int findReady() {
        if (o.ordered()) {
            long s = taken;
            int b = slotOf.get((int) (s % buffers.length)) - 1;
            return b >= 0 && ready.get(b) == s ? b : -1;
        }
        int best = -1;
        long bestSeq = Long.MAX_VALUE;
        for (int i = 0, n = free.size(); i < n; i++) {
            long s = ready.get(i);
            if (s >= 0 && s < bestSeq) {
                bestSeq = s;
                best = i;
            }
        }
        return best;
    }

    private LoaderTimeoutException timeout(long waited) {
        long s = taken;
        long b = o.ordered() ? batchNumber(s) : -1;
        String what = b >= 0
                ? "batch " + (sequenceBase + b) + " of epoch " + epoch + " (this rank's samples "
                + (rankOffset + b * batchSize) + ".." + (Math.min(endOffset, rankOffset + (b + 1) * batchSize) - 1) + ")"
                : "any of the next batches of epoch " + epoch;
        long inFlight = Math.max(0, Math.min(claim.get(), count) - taken);
        return new LoaderTimeoutException(source.name() + ": timed out after " + TimeUnit.NANOSECONDS.toMillis(waited)
                + " ms waiting for " + what + " (rank " + o.rank() + " of " + o.worldSize() + ", "
                + workers.length + " workers, " + inFlight + " batches in progress)", source.name());
    }

    private void finish() {
        finished = true;
        stop(false);
        loader.finished(this);
    }

    /** Stops the workers and waits for them; the pass can not be continued afterwards. */
    /** Tells the workers to stop, without waiting for them (a worker may be stuck in a read). */
    private void cancel() {
        cancelled = true;
        PassWorker.wakeAll(workers);
    }

    @Override
    boolean stop(boolean closing) {
        cancel();
        boolean stopped = true;
        for (Worker w : workers) {
            stopped &= PassWorker.join(w.thread, closing);
            stats.retire(w);
        }
        held.clear();
        return stopped;
    }


    // ---- filling a batch ----------------------------------------------------------------------

    /** The batch number of the {@code s}-th batch this pass delivers (skipping those delivered before). */
    private long batchNumber(long s) {
        long b = s;
        for (long d : skip) {
            if (d <= b) {
                b++;
            } else {
                break;
            }
        }
        return b;
    }

    private void fill(Batch batch, long s, SampleContext context, StageTimes times, long[] samples) {
        long b = batchNumber(s);
        batch.reset(epoch, sequenceBase + b);
        long from = rankOffset + b * batchSize;
        long to = Math.min(endOffset, from + batchSize);
        long t0 = source.timesStages() ? 0 : System.nanoTime();
        long seed = o.seed();
        if (source.readsBatches() && to > from && !cancelled) {
            // the whole batch at once; if that fails, one sample at a time, so that the error policy sees the failing one
            int n = (int) (to - from);
            for (int i = 0; i < n; i++) {
                samples[i] = partition.position(from + i);
            }
            order.indices(samples, n);
            try {
                if (source.loadAll(samples, n, batch.beginAll(samples, n))) {
                    batch.commitAll(n);
                    times.fetch += System.nanoTime() - t0;
                    return;
                }
            } catch (Exception e) {
                // read again below, sample by sample
            }
        }
        for (long m = from; m < to; m++) {
            if (cancelled) {
                return;
            }
            long index = order.index(partition.position(m));
            Row row = batch.beginRow(index);
            context.set(seed, epoch, index);
            try {
                source.load(index, row, context, times);
                batch.commitRow();
            } catch (Exception e) {
                if (!cancelled && interrupted(e) && strayInterrupts.incrementAndGet() <= MAX_STRAY_INTERRUPTS) {
                    // NOTE [Stray interrupts]: the loader interrupts a worker only when it closes, after
                    // cancelling the pass; an interrupt while the pass goes on is not the loader's (seen,
                    // rarely, in a pass over a small block cache, its sender not found) and fails no
                    // sample: it is cleared and the sample read again
                    Thread.interrupted();
                    batch.abandonRow();
                    m--;
                    continue;
                }
                if (!o.errorPolicy().raises(e)) {
                    batch.abandonRow();
                    batch.skipped++;
                } else {
                    throw new LoaderException(source.name() + ": sample " + index + " (batch " + (sequenceBase + b)
                            + " of epoch " + epoch + ", rank " + o.rank() + "): " + describe(e, source.name()), source.name(), index, e);
                }
            } catch (Error e) {
                throw new LoaderException(source.name() + ": sample " + index + " (batch " + (sequenceBase + b)
                        + " of epoch " + epoch + "): " + describe(e, source.name()), source.name(), index, e);
            }
        }
        if (!source.timesStages()) {
            times.fetch += System.nanoTime() - t0;
        }
    }

    /** An interrupted read or wait, anywhere in the cause chain. */
    private static boolean interrupted(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof java.io.InterruptedIOException || t instanceof java.nio.channels.ClosedByInterruptException
                    || t instanceof InterruptedException) {
                return true;
            }
        }
        return false;
    }

    /** Stray interrupts cleared in this pass (NOTE [Stray interrupts]); past the bound, they fail the sample. */
    private final java.util.concurrent.atomic.AtomicInteger strayInterrupts = new java.util.concurrent.atomic.AtomicInteger();
    private static final int MAX_STRAY_INTERRUPTS = 100;

    /** A worker thread: claims batch numbers, fills buffers, parks them for the consumer. */
    final class Worker extends PassWorker {
        private final StageTimes times = new StageTimes();
        private final SampleContext context = new SampleContext();
        /** The sample indices of the batch being filled. */
        private final long[] samples = new long[batchSize];

        Worker(int i) {
            super(i);
        }

        @Override
        public void run() {
            while (!cancelled) {
                if (!awaitActive(IndexedPass.this)) {
                    return;
                }
                long s = claim.getAndIncrement();
                if (s >= count) {
                    return;
                }
                if (!awaitWindow(s, IndexedPass.this)) {
                    return;
                }
                int buf = free.acquire();
                if (buf < 0) {
                    // cannot happen inside the window (NOTE [Window]); end this worker loudly
                    throw new IllegalStateException("no free batch buffer inside the prefetch window");
                }
                Tracer tracer = o.tracer();
                long f0 = tracer == null ? 0 : System.nanoTime();
                long n0 = times.fetch;
                long n1 = times.transform;
                long n2 = times.collate;
                try {
                    fill(buffers[buf], s, context, times, samples);
                } catch (Throwable e) {
                    errors[buf] = e;
                }
                if (tracer != null) {
                    tracer.span(new Tracer.Span(thread.getName(), "batch " + (sequenceBase + batchNumber(s)), f0, System.nanoTime(),
                            times.fetch - n0, times.transform - n1, times.collate - n2));
                }
                publish(times);
                if (cancelled) {
                    return;
                }
                ready.set(buf, s);
                slotOf.set((int) (s % buffers.length), buf + 1);
                if (consumerParked && wakeReady()) {
                    LockSupport.unpark(consumer);
                }
            }
        }
    }
}
