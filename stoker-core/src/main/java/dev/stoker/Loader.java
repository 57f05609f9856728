package dev.stoker;

import java.util.Objects;

/**
 * Loads batches from a dataset on a pool of worker threads, a bounded number of batches ahead
 * of the consumer, in a deterministic order.
 *
 * <pre>{@code
 * try (Loader loader = Loader.builder(dataset, collator)
 *         .batchSize(256).workers(4).prefetch(8).shuffle().seed(42).build()) {
 *     for (int epoch = 0; epoch < 3; epoch++) {
 *         for (Batch batch : loader) {      // one epoch; the next loop is the next epoch
 *             step(batch.data("x"));         // valid until the next hasNext()/next()
 *         }
 *     }
 * }
 * }</pre>
 *
 * <p>Contracts:
 * <ul>
 *   <li>Order is a pure function of {@code (sampler, seed, epoch, rank, worldSize, position)}: the
 *       batches are the same, byte for byte, for any number of workers and any prefetch depth.</li>
 *   <li>Each {@link #iterator()} runs the rest of the current epoch; when it ends, the loader moves
 *       to the next epoch (so reshuffling needs no {@code set_epoch} call). Leaving a loop early
 *       keeps the position: the next iterator (or a loader built from {@link #state()}) continues
 *       with the next batch.</li>
 *   <li>At most {@code prefetch} batches are prepared ahead; the pool holds {@code prefetch + holds}
 *       batch buffers ({@code holds} is 1 unless {@link LoaderBuilder#holds} says more), allocated
 *       once for a fixed depth and as the window grows for an autotuned one (never beyond its
 *       memory budget), then reused. A slow consumer causes back-pressure, never growth.</li>
 *   <li>{@link #close()} is idempotent, stops the workers and frees the buffers.</li>
 * </ul>
 *
 * <p>One thread consumes: it iterates, reads {@link #state()} and closes batches. Workers are
 * the loader's own threads; {@link #stats()} may be read from any thread.
 */
public final class Loader implements Iterable<Batch>, AutoCloseable {
    /** Chosen while running: the one value of {@link #AUTO}. */
    public enum Auto {
        /**
         * For {@link LoaderBuilder#workers(Auto)} and {@link LoaderBuilder#prefetch(Auto)}: chosen while the
         * loader runs, from measured stage times, within the {@link LoaderBuilder#budget} (NOTE
         * [Autotune] in Tuner).
         */
        AUTO
    }

    /** {@link Auto#AUTO}, for {@code .workers(Loader.AUTO)}. */
    public static final Auto AUTO = Auto.AUTO;
    private static final String THREAD_PREFIX = "stoker-worker-";
    /** What the loader reads: a dataset by index, or a stream of shards. */
    final Plan plan;
    /** The padding between the dataset's fields and the batches', or null (NOTE [Padding]). */
    final PadLayout pad;
    /** What the loader was built with; its passes read nothing else of it. */
    final Options options;
    /** Chooses active workers and prefetch depth; null when both are fixed. */
    final Tuner tuner;

    // NOTE [Default shuffle window]: a stream read in a shuffled shard order hands out its samples
    // in a keyed random order within windows of 64 MiB of samples (after the transform) unless a
    // window is set, so that a batch mixes the shards open at once instead of holding consecutive
    // samples of one shard, and a stream's batches do not depend on how its shards were split.
    // 64 MiB holds about a thousand WebDataset-sized samples (64 KB; WebDataset's customary
    // shuffle(1000)) or a hundred 224x224 float images, and bounds memory whatever the samples'
    // size (a sample that does not tell its size, not being Sized, counts as 64 KiB). Sequential
    // order, or shuffleWindowBytes(0), keeps stream order.
    /** The shuffle window a shuffled stream gets when none is set: 64 MiB. */
    public static final long DEFAULT_SHUFFLE_WINDOW_BYTES = 64L << 20;

    /** The batch buffers; for a tuned prefetch depth, allocated as the window grows. */
    private final Batch[] buffers;
    private final FreeList free;
    private final Allocator allocator;
    private final Stats stats = new Stats();

    // Where the next pass starts (see LoaderState). Changed by the consumer thread.
    private long epoch;
    private LoaderState.Position position;
    private long delivered;

    private volatile Pass pass;
    private boolean closed;
    /** The content fingerprint of the data ({@link Dataset#fingerprint}), recorded in states and checked on resume. */
    private final long dataFingerprint;
    /** How a stream's epoch is split among its streams. */
    private final Tail streamTail;

    Loader(LoaderBuilder b) {
        this.plan = b.plan;
        this.pad = b.padding == null ? null : b.padding.layout(plan.schema(), plan.name()); // counters of its own
        stats.addSkipped(0, plan.shardsLeftOut());
        boolean streams = plan instanceof Plan.Streamed;
        Sampler sampler = b.sampler;
        int workers = b.autoWorkers ? b.cores : b.workers;
        long length = sampler.length(plan.positions());
        // a shuffled stream gets the default window unless one was set (NOTE [Default shuffle window])
        long shuffleBytes = b.shuffleBytes;
        boolean defaultWindow = streams && b.shuffleWindow == 0 && !b.setBy.containsKey("shuffleWindowBytes")
                && sampler != Sampler.sequential();
        if (defaultWindow) {
            shuffleBytes = DEFAULT_SHUFFLE_WINDOW_BYTES;
        }
        // a budget in bytes alone: as many samples as fit
        int shuffleWindow = b.shuffleWindow == 0 && shuffleBytes > 0 ? Integer.MAX_VALUE : b.shuffleWindow;
        this.allocator = b.allocator;
        this.dataFingerprint = plan.fingerprint();
        LoaderState s = b.resume;
        BufferPool pool = BufferPool.of(b);
        // one stream a rank: the ranks' shares of shards, as DistributedSampler's (padded or
        // dropped); more streams than ranks: each shard once (NOTE [Elastic streams])
        this.streamTail = streams(b) == b.worldSize || b.setBy.containsKey("tail") ? b.tail : Tail.NONE;
        this.options = new Options(sampler, b.batchSize, workers, pool.prefetch(), b.dropLast, s == null ? b.seed : s.seed(),
                b.rank, b.worldSize, b.tail, length, b.timeout == null ? 0 : b.timeout.toNanos(), b.collatorThread,
                b.errorPolicy, b.ordered, b.holds, b.wakeRun, b.shardBuffer > 0 ? b.shardBuffer : Math.max(64, 2 * b.batchSize),
                shuffleWindow, shuffleBytes, defaultWindow, b.tracer, streams(b));
        if (s == null) {
            this.epoch = b.epoch;
            this.position = start();
            this.delivered = 0;
        } else {
            this.epoch = s.epoch();
            this.delivered = s.delivered();
            this.position = Resume.position(s, b, sampler, length, dataFingerprint);
        }
        this.tuner = workers > 0 && (b.autoWorkers || b.autoPrefetch)
                ? new Tuner(b.autoWorkers ? 1 : workers, workers, b.autoWorkers, pool.prefetch(), pool.maxPrefetch(),
                b.autoPrefetch && !streams, Runtime.getRuntime().availableProcessors())
                : null;
        this.buffers = new Batch[pool.buffers()];
        this.free = new FreeList(pool.buffers(), 0);
        try {
            ensureBuffers(streams ? pool.buffers() - b.holds + 1 : pool.prefetch() + 1); // NOTE [Holding batches]
        } catch (RuntimeException | Error e) {
            for (Batch batch : buffers) {
                if (batch != null) {
                    batch.free();
                }
            }
            throw e;
        }
    }

    /** The start of an epoch, in this loader's kind of position: a stream's split into {@code options.streams()}. */
    private LoaderState.Position start() {
        return plan instanceof Plan.Streamed
                ? LoaderState.Streams.start(options.streams(), streamTail, options.rank(), options.worldSize())
                : LoaderState.Indexed.START;
    }

    /**
     * The streams each epoch is split into: those set, else a resumed state's (a job keeps its
     * streams across changes of world size), else one a rank.
     */
    private static int streams(LoaderBuilder b) {
        if (b.streams > 0) {
            return b.streams;
        }
        if (b.resume != null && b.resume.position() instanceof LoaderState.Streams s) {
            return s.count();
        }
        return b.worldSize;
    }

    // NOTE [Holding batches]: a consumer that passes batches on (stoker serve hands them to a
    // Python process through a shared-memory ring and gets them back, on its own thread) must keep
    // several without a round trip per batch. With holds(n), a batch goes back to the pool only
    // by its close(); the pool may have n - 1 more buffers, so the prefetch window stays as deep as
    // with one held batch, and asking for a batch while holding n is refused rather than left to
    // starve the workers. Those buffers are made as the consumer comes to hold batches (before it
    // asks for the next one), never ahead: holds(n) is a bound, and a consumer that gives each batch
    // back soon costs the memory of one held batch however large n is. A new pass (iterator() or close()) takes every buffer back, and a batch
    // of the old pass closed afterwards gives nothing back: it is the consumer's to stop reading
    // held batches before starting a new pass.

    /** Makes at least {@code n} buffers exist (consumer thread: a pass grows its window). */
    void ensureBuffers(int n) {
        for (int i = free.size(); i < Math.min(n, buffers.length); i++) {
            Batch batch = new Batch(schema(), pad, options.batchSize(), allocator, this::release);
            batch.slot = i;
            buffers[i] = batch;
            free.grow(i + 1);
        }
    }

    /** A loader over objects: each sample is fetched with {@code get} and written by {@code collator}. */
    public static <T> LoaderBuilder builder(Dataset<T> dataset, Collator<? super T> collator) {
        return new LoaderBuilder(new Plan.Indexed(RowSource.of(dataset, null, collator)));
    }

    /** A loader over objects with a per-sample transform between fetch and collate. */
    public static <T, R> LoaderBuilder builder(Dataset<T> dataset, Transform<? super T, ? extends R> transform,
                                         Collator<? super R> collator) {
        return new LoaderBuilder(new Plan.Indexed(RowSource.of(dataset, Objects.requireNonNull(transform, "transform"),
                collator)));
    }

    /** A loader over a dataset that writes samples straight into batch rows. */
    public static LoaderBuilder builder(DirectDataset dataset) {
        return new LoaderBuilder(new Plan.Indexed(RowSource.of(dataset)));
    }

    /**
     * A loader over a streaming dataset: the sampler orders its shards, ranks split the shards,
     * {@code prefetch} is the number of shards read ahead (each into a ring of
     * {@link LoaderBuilder#shardBuffer} samples, whose transforms any free worker takes on), and
     * batches are collated from the rings in order: on the consumer's thread, or, once the
     * consumer is seen spending time between batches (a training step), on a collator thread a
     * few batches ahead. Keep a streaming collator to copying, and put costly work in the
     * transform.
     */
    public static <T> LoaderBuilder builder(StreamingDataset<T> dataset, Collator<? super T> collator) {
        return new LoaderBuilder(new Plan.Streamed(new StreamSource<>(dataset, null, collator)));
    }

    /** A loader over a streaming dataset with a per-sample transform, run on the workers. */
    public static <T, R> LoaderBuilder builder(StreamingDataset<T> dataset, Transform<? super T, ? extends R> transform,
                                         Collator<? super R> collator) {
        return new LoaderBuilder(new Plan.Streamed(new StreamSource<>(dataset, Objects.requireNonNull(transform, "transform"),
                collator)));
    }

    /**
     * Runs the rest of the current epoch. Starting a new iterator stops the previous one (its
     * position is kept). Batches are released by the next {@code hasNext()}/{@code next()} call
     * (with {@link LoaderBuilder#holds} above 1, by their {@code close()}; a new pass takes them all back).
     */
    @Override
    public synchronized Batches iterator() {
        checkOpen();
        stopPass();
        Pass p = switch (position) {
            case LoaderState.Indexed i -> new IndexedPass(this, buffers, free, epoch, i, delivered);
            case LoaderState.Streams st -> new StreamPass(this, ((Plan.Streamed) plan).stream(), buffers, free, epoch, st,
                    delivered);
            case LoaderState.Streamed st -> throw new AssertionError("a loader keeps a stream's position as Streams");
        };
        pass = p;
        p.start();
        return p;
    }

    /** The epoch the next (or current) pass runs. */
    public synchronized long epoch() {
        return epoch;
    }

    /**
     * The loader's position: a new loader built with {@link LoaderBuilder#resume} continues from here,
     * after the last batch handed out. Call it from the consuming thread, between batches.
     */
    public synchronized LoaderState state() {
        LoaderState s = pass != null && !pass.finished() ? pass.state() : stateAt(epoch, position, delivered);
        // one stream a rank (no streams set, no elastic resume): the position of JSON before streams
        if (s.position() instanceof LoaderState.Streams st && st.count() == s.worldSize() && st.at().size() == 1
                && st.at().containsKey(s.rank()) && st.tail() == Tail.PAD) {
            s = stateAt(s.epoch(), st.at().get(s.rank()), s.delivered());
        }
        return s.withData(dataFingerprint);
    }

    /** A state of this loader at {@code position} of {@code epoch}, after {@code delivered} batches of it. */
    LoaderState stateAt(long epoch, LoaderState.Position position, long delivered) {
        return new LoaderState(options.sampler().id(), options.length(), options.seed(), epoch, options.worldSize(),
                options.rank(), options.batchSize(), position, delivered, dataFingerprint);
    }

    /**
     * Batches the current pass delivers in all (or the next pass, if none is running); -1 for a
     * streaming dataset, whose shards' sizes are not known in advance.
     */
    public synchronized long batches() {
        if (pass != null && !pass.finished()) {
            return pass.batches();
        }
        return position instanceof LoaderState.Indexed i ? IndexedPass.batchesFor(options, i) : -1;
    }

    /**
     * Batches a whole epoch delivers (to this rank), from its start; -1 for a streaming dataset.
     * {@link #batches()} is what is left of the current one.
     */
    public long batchesPerEpoch() {
        return plan instanceof Plan.Indexed ? IndexedPass.batchesFor(options, LoaderState.Indexed.START) : -1;
    }

    /** Measurements since this loader was built. */
    public LoaderStats stats() {
        Pass r;
        synchronized (this) {
            r = pass;
        }
        return stats.snapshot(r, pad);
    }

    /** The fields of every batch. */
    public Schema schema() {
        return pad == null ? plan.schema() : pad.output;
    }

    /** Buffers made so far (the tests' TestHooks): NOTE [Holding batches]. */
    int madeBuffers() {
        return free.size();
    }

    /** Buffers in the pool that no one holds: all of them once the loader is idle. */
    int freeBuffers() {
        return free.free();
    }

    /**
     * The batches prepared ahead now (tuned while running under {@link #AUTO}); for a streaming
     * dataset, the shards read ahead ({@link LoaderBuilder#shardsAhead}).
     */
    public int prefetch() {
        return tuner != null ? tuner.prefetch() : options.ahead();
    }

    /** Workers active now (tuned while running under {@link #AUTO}). */
    public int workers() {
        return tuner != null ? tuner.workers() : options.workers();
    }

    /** Whether workers or prefetch depth are chosen while running. */
    public boolean autotuned() {
        return tuner != null;
    }

    /**
     * What the autotuner changed and why, oldest first (at most the last 64 changes); empty when
     * nothing is tuned or nothing changed.
     */
    public java.util.List<String> tuningHistory() {
        return tuner != null ? tuner.history() : java.util.List.of();
    }

    /** Stops the workers (waiting for the samples they are reading) and frees the buffers. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (!stopPass()) {
            // NOTE [Shutdown]: a worker stuck in a read that ignores interrupts may still write
            // into a batch; freeing the buffers under it could crash the JVM. Leak them instead.
            System.getLogger(Loader.class.getName()).log(System.Logger.Level.WARNING,
                    "a worker of " + schema() + " did not stop within its grace period; its batch buffers are not freed");
            return;
        }
        for (Batch b : buffers) {
            if (b != null) {
                b.free();
            }
        }
    }

    static boolean isWorkerThread(Thread t) {
        return t.getName().startsWith(THREAD_PREFIX);
    }

    static String workerName(int i) {
        return THREAD_PREFIX + i;
    }

    Stats statsSink() {
        return stats;
    }

    /** Called by a pass when its last batch was delivered: the next pass is the next epoch. */
    synchronized void finished(Pass r) {
        if (pass == r) {
            epoch++;
            position = start();
            delivered = 0;
        }
    }

    /** Stops the current pass, keeping its position; false if a worker would not stop (closing only). */
    private boolean stopPass() {
        if (pass != null) {
            Pass r = pass;
            if (!r.finished()) {
                LoaderState s = r.state();
                epoch = s.epoch();
                position = s.position();
                delivered = s.delivered();
            }
            boolean stopped = r.stop(closed);
            pass = null;
            free.reset();
            for (Batch b : buffers) {
                if (b != null) {
                    b.delivered = false; // a batch of the stopped pass closed later gives nothing back
                }
            }
            return stopped;
        }
        return true;
    }

    private void release(Batch b) {
        Pass r = pass;
        if (r != null) {
            r.release(b);
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("loader is closed");
        }
    }

    // NOTE [Strict builder]: each option is set at most once (a second setting is an error naming
    // both calls, so `.sampler(weighted).sampler(Sampler.sequential())` cannot silently drop the weights), and
    // build() refuses an option that does not apply to this loader (naming the option and what
    // makes it not apply) rather than ignore it. Values are checked as they are set; build()
    // resolves them into one immutable Options value, which is all the passes read.
}
