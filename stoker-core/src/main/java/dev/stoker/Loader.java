package dev.stoker;

import java.time.Duration;
import java.util.Iterator;
import java.util.Objects;

/**
 * Loads batches from a dataset on a pool of worker threads, a bounded number of batches ahead
 * of the consumer, in a deterministic order.
 *
 * <pre>{@code
 * try (Loader loader = Loader.builder(dataset, collator)
 *         .batchSize(256).workers(4).prefetch(8).shuffle(true).seed(42).build()) {
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
 *       batch buffers ({@code holds} is 1 unless {@link Builder#holds} says more), allocated
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
         * For {@link Builder#workers(Auto)} and {@link Builder#prefetch(Auto)}: chosen while the
         * loader runs, from measured stage times, within the {@link Builder#budget} (NOTE
         * [Autotune] in Tuner).
         */
        AUTO
    }

    /** {@link Auto#AUTO}, for {@code .workers(Loader.AUTO)}. */
    public static final Auto AUTO = Auto.AUTO;
    private static final String THREAD_PREFIX = "stoker-worker-";
    private static final int MAX_AUTO_PREFETCH = 64;
    /** The bytes of batches an autotuned window may hold beyond four batches per worker. */
    private static final long WINDOW_FOOTPRINT_BYTES = 1 << 20;
    /** Batch buffers of a streaming pass with workers and one held batch: one delivered, one ready, one being collated. */
    private static final int STREAM_BATCHES = 3;

    /** The random-access source, or null for a streaming one. */
    final RowSource source;
    /** The streaming source, or null for a random-access one. */
    final StreamSource<?, ?> stream;
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

    private Loader(Builder b) {
        this.source = b.source;
        this.stream = b.stream;
        if (b.source != null) {
            stats.addSkipped(0, b.source.shardsLeftOut());
        }
        Sampler sampler = b.sampler;
        int workers = b.autoWorkers ? b.cores : b.workers;
        long length = sampler.length(source != null ? source.size() : stream.shards());
        // a shuffled stream gets the default window unless one was set (NOTE [Default shuffle window])
        long shuffleBytes = b.shuffleBytes;
        boolean defaultWindow = stream != null && b.shuffleWindow == 0 && !b.setBy.containsKey("shuffleWindowBytes")
                && sampler != Sampler.sequential();
        if (defaultWindow) {
            shuffleBytes = DEFAULT_SHUFFLE_WINDOW_BYTES;
        }
        // a budget in bytes alone: as many samples as fit
        int shuffleWindow = b.shuffleWindow == 0 && shuffleBytes > 0 ? Integer.MAX_VALUE : b.shuffleWindow;
        this.allocator = b.allocator;
        this.dataFingerprint = source != null ? source.fingerprint() : stream.dataset.fingerprint();
        long seed = b.seed;
        LoaderState s = b.resume;
        if (s == null) {
            this.epoch = b.epoch;
            this.position = start();
            this.delivered = 0;
        } else {
            seed = s.seed();
            this.epoch = s.epoch();
            this.delivered = s.delivered();
            this.position = resumed(s, b, sampler, length);
        }
        Pool pool = Pool.of(b);
        this.options = new Options(sampler, b.batchSize, workers, pool.prefetch(), b.dropLast, seed, b.rank, b.worldSize,
                b.tail, length, b.timeout == null ? 0 : b.timeout.toNanos(), b.collatorThread, b.errorPolicy, b.ordered,
                b.holds, b.shardBuffer > 0 ? b.shardBuffer : Math.max(64, 2 * b.batchSize), shuffleWindow, shuffleBytes,
                defaultWindow, b.tracer);
        this.tuner = workers > 0 && (b.autoWorkers || b.autoPrefetch)
                ? new Tuner(b.autoWorkers ? 1 : workers, workers, b.autoWorkers, pool.prefetch(), pool.maxPrefetch(),
                b.autoPrefetch && stream == null, Runtime.getRuntime().availableProcessors())
                : null;
        this.buffers = new Batch[pool.buffers()];
        this.free = new FreeList(pool.buffers(), 0);
        try {
            ensureBuffers(stream != null ? pool.buffers() - b.holds + 1 : pool.prefetch() + 1); // NOTE [Holding batches]
        } catch (RuntimeException | Error e) {
            for (Batch batch : buffers) {
                if (batch != null) {
                    batch.free();
                }
            }
            throw e;
        }
    }

    /** The start of an epoch, in this loader's kind of position. */
    private LoaderState.Position start() {
        return stream != null ? LoaderState.Streamed.START : LoaderState.Indexed.START;
    }

    /** The position a resumed loader starts from: the state's, checked against this loader's options. */
    private LoaderState.Position resumed(LoaderState s, Builder b, Sampler sampler, long length) {
        if (!s.sampler().equals(sampler.id())) {
            throw new ResumeException("cannot resume: the state was saved with sampler " + s.sampler()
                    + ", this loader uses " + sampler.id());
        }
        if (s.size() != length) {
            throw new ResumeException("cannot resume: the state's epoch has " + s.size()
                    + " positions, this loader's has " + length + " (a different dataset?)");
        }
        if (b.setBy.containsKey("seed") && b.seed != s.seed()) {
            throw new ResumeException("cannot resume: seed " + b.seed + " was set, the state has seed " + s.seed());
        }
        boolean sameSplit = s.worldSize() == b.worldSize;
        if (stream != null) {
            LoaderState.Streamed p = s.streamed();
            checkData(s);
            if (s.rank() != b.rank) {
                throw new ResumeException("cannot resume: the state is rank " + s.rank() + "'s and this is rank " + b.rank
                        + "; ranks of a streaming dataset progress independently, so each rank resumes its own state");
            }
            if (!sameSplit) {
                throw new ResumeException("cannot resume: a streaming dataset resumes with the world size it was "
                        + "saved with (" + s.worldSize() + "); elastic resume needs a random-access dataset");
            }
            if (p.shards() < 0 || p.samples() < 0 || p.blockEmitted() < 0 || p.shards() > length) {
                throw new ResumeException("cannot resume: the state's position (shard " + p.shards()
                        + ") lies past the end of an epoch of " + length);
            }
            return p;
        }
        LoaderState.Indexed p = s.indexed();
        checkData(s);
        long[] done = p.done();
        if (product(p.rankOffset(), s.worldSize()) > length - p.segmentStart() + (long) s.worldSize() * s.batchSize()) {
            throw new ResumeException("cannot resume: the state's position (" + p.rankOffset() + " samples a rank from "
                    + p.segmentStart() + ") lies past the end of an epoch of " + length);
        }
        if (p.segmentStart() < 0 || p.segmentStart() > length || p.rankOffset() < 0 || s.worldSize() < 1) {
            throw new ResumeException("cannot resume: inconsistent state " + s.toJson());
        }
        if (done.length > 0 && (!sameSplit || s.batchSize() != b.batchSize)) {
            throw new ResumeException("cannot resume: the state holds batches an unordered loader delivered "
                    + "ahead of others; resume it with the same world size and batch size");
        }
        if (done.length > 0 && s.rank() != b.rank) {
            throw new ResumeException("cannot resume: the state is rank " + s.rank() + "'s and this is rank " + b.rank
                    + "; an unordered loader's out-of-order batches are per rank, so each rank resumes its own state");
        }
        if (sameSplit) {
            return p;
        }
        // NOTE [Elastic]: every rank of the old run consumed the prefix of its split; the
        // new world splits what is left of the epoch afresh.
        long remaining = length - p.segmentStart();
        long consumed = Math.min(remaining, Math.multiplyExact(p.rankOffset(), (long) s.worldSize()));
        return new LoaderState.Indexed(p.segmentStart() + consumed, 0, new long[0]);
    }

    /** The state was saved from this dataset, as far as fingerprints tell (after its kind of position was checked). */
    private void checkData(LoaderState s) {
        if (s.data() == 0 && dataFingerprint != 0) {
            throw new ResumeException("cannot resume: the state holds no data fingerprint, so nothing shows it was saved"
                    + " from this dataset (fingerprint " + Long.toHexString(dataFingerprint) + "); every state Stoker saves"
                    + " over a dataset with a fingerprint holds one (an edited state, or one of an older Stoker?)");
        }
        if (s.data() != 0 && dataFingerprint != 0 && s.data() != dataFingerprint) {
            throw new ResumeException("cannot resume: the state was saved from other data (fingerprint "
                    + Long.toHexString(s.data()) + ", this dataset's " + Long.toHexString(dataFingerprint)
                    + "): the same number of samples, other content");
        }
    }

    /** {@code a × b} for non-negative numbers, or Long.MAX_VALUE where it would overflow. */
    private static long product(long a, long b) {
        try {
            return Math.multiplyExact(a, b);
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }

    /**
     * The prefetch depth, the deepest a tuner may make it, and the batch buffers of the pool: one
     * rule for the loader and for {@link Builder#buffers()}.
     */
    private record Pool(int prefetch, int maxPrefetch, int buffers) {
        static Pool of(Builder b) {
            long perBatch = Math.max(1, Batch.bytesFor(b.schema(), b.batchSize));
            int workers = b.autoWorkers ? b.cores : b.workers;
            int firstWorkers = b.autoWorkers ? 1 : workers;
            boolean autoPrefetch = b.autoPrefetch;
            int prefetch;
            int maxPrefetch;
            if (workers == 0) {
                prefetch = 1;
                maxPrefetch = 1;
            } else if (b.stream != null) {
                prefetch = b.shardsAhead > 0 ? b.shardsAhead : 2 * workers; // rings are not resized while running
                maxPrefetch = prefetch;
            } else if (autoPrefetch) {
                // within the memory budget, and at most four batches per worker thread or, for small
                // batches, WINDOW_FOOTPRINT_BYTES of them: deeper windows of large batches cost cache
                // footprint and measured no gain; small ones from bursty workers (a Parquet row group
                // decoded every hundred batches) gain (BENCHMARKS.md, autotuning)
                long deepest = Math.max(4L * workers, WINDOW_FOOTPRINT_BYTES / perBatch);
                maxPrefetch = (int) Math.clamp(Math.min(Math.min(b.memoryBudget, b.memoryLimit) / perBatch - 1, deepest), 1, MAX_AUTO_PREFETCH);
                prefetch = Math.min(maxPrefetch, 2 * firstWorkers);
            } else {
                prefetch = b.prefetch > 0 ? b.prefetch : 2 * workers;
                maxPrefetch = prefetch;
            }
            // the consumer's buffers, plus: the prefetch window; for a streaming pass with workers,
            // which may collate on a thread of its own a few batches ahead (NOTE [Background
            // collation] in StreamPass), one ready and one being collated, one within a tight budget
            int buffers = b.stream == null ? maxPrefetch + b.holds
                    : workers == 0 ? b.holds
                    : (int) Math.clamp(b.memoryBudget / perBatch, 2, STREAM_BATCHES) - 1 + b.holds;
            // checked before anything is allocated: past the machine's memory, the kernel's OOM killer ends the process without a word
            long need = product(perBatch, buffers);
            if (need > b.memoryLimit) {
                throw new IllegalArgumentException(String.format(java.util.Locale.ROOT, "%d batch buffers of %,d bytes (batches of"
                        + " %,d samples) need %,d bytes, more than the memory limit of %,d bytes (%s): a smaller batch or"
                        + " prefetch, or a higher limit", buffers, perBatch, b.batchSize, need, b.memoryLimit,
                        b.setBy.containsKey("memoryLimit") ? "as set" : "three quarters of this machine's memory"));
            }
            return new Pool(prefetch, maxPrefetch, buffers);
        }
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
            Batch batch = new Batch(schema(), options.batchSize(), allocator, this::release);
            batch.slot = i;
            buffers[i] = batch;
            free.grow(i + 1);
        }
    }

    /** A loader over objects: each sample is fetched with {@code get} and written by {@code collator}. */
    public static <T> Builder builder(Dataset<T> dataset, Collator<? super T> collator) {
        return new Builder(RowSource.of(dataset, null, collator));
    }

    /** A loader over objects with a per-sample transform between fetch and collate. */
    public static <T, R> Builder builder(Dataset<T> dataset, Transform<? super T, ? extends R> transform,
                                         Collator<? super R> collator) {
        return new Builder(RowSource.of(dataset, Objects.requireNonNull(transform, "transform"), collator));
    }

    /** A loader over a dataset that writes samples straight into batch rows. */
    public static Builder builder(DirectDataset dataset) {
        return new Builder(RowSource.of(dataset));
    }

    /**
     * A loader over a streaming dataset: the sampler orders its shards, ranks split the shards,
     * {@code prefetch} is the number of shards read ahead (each into a ring of
     * {@link Builder#shardBuffer} samples, whose transforms any free worker takes on), and
     * batches are collated from the rings in order: on the consumer's thread, or, once the
     * consumer is seen spending time between batches (a training step), on a collator thread a
     * few batches ahead. Keep a streaming collator to copying, and put costly work in the
     * transform.
     */
    public static <T> Builder builder(StreamingDataset<T> dataset, Collator<? super T> collator) {
        return new Builder(new StreamSource<>(dataset, null, collator));
    }

    /** A loader over a streaming dataset with a per-sample transform, run on the workers. */
    public static <T, R> Builder builder(StreamingDataset<T> dataset, Transform<? super T, ? extends R> transform,
                                         Collator<? super R> collator) {
        return new Builder(new StreamSource<>(dataset, Objects.requireNonNull(transform, "transform"), collator));
    }

    /**
     * Runs the rest of the current epoch. Starting a new iterator stops the previous one (its
     * position is kept). Batches are released by the next {@code hasNext()}/{@code next()} call
     * (with {@link Builder#holds} above 1, by their {@code close()}; a new pass takes them all back).
     */
    @Override
    public synchronized Iterator<Batch> iterator() {
        checkOpen();
        stopPass();
        Pass p = switch (position) {
            case LoaderState.Indexed i -> new IndexedPass(this, buffers, free, epoch, i, delivered);
            case LoaderState.Streamed st -> new StreamPass(this, stream, buffers, free, epoch, st, delivered);
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
     * The loader's position: a new loader built with {@link Builder#resume} continues from here,
     * after the last batch handed out. Call it from the consuming thread, between batches.
     */
    public synchronized LoaderState state() {
        if (pass != null && !pass.finished()) {
            return pass.state().withData(dataFingerprint);
        }
        return stateAt(epoch, position, delivered);
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
        return source != null ? IndexedPass.batchesFor(options, LoaderState.Indexed.START) : -1;
    }

    /** Measurements since this loader was built. */
    public LoaderStats stats() {
        Pass r;
        synchronized (this) {
            r = pass;
        }
        return stats.snapshot(r);
    }

    /** The fields of every batch. */
    public Schema schema() {
        return source != null ? source.schema() : stream.schema;
    }

    /** Buffers made so far (the tests' TestHooks): NOTE [Holding batches]. */
    int madeBuffers() {
        return free.size();
    }

    /** Buffers in the pool that no one holds: all of them once the loader is idle. */
    public int freeBuffers() {
        return free.free();
    }

    /**
     * The batches prepared ahead now (tuned while running under {@link #AUTO}); for a streaming
     * dataset, the shards read ahead ({@link Builder#shardsAhead}).
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
    // both calls, so `.sampler(weighted).shuffle(false)` cannot silently drop the weights), and
    // build() refuses an option that does not apply to this loader (naming the option and what
    // makes it not apply) rather than ignore it. Values are checked as they are set; build()
    // resolves them into one immutable Options value, which is all the passes read.

    /** Builds a {@link Loader}: each option is set at most once, checked as it is set, and refused by {@link #build()} where it does not apply. */
    public static final class Builder {
        private final RowSource source;
        private final StreamSource<?, ?> stream;
        /** The options set so far, each with the call that set it, in order. */
        private final java.util.Map<String, String> setBy = new java.util.LinkedHashMap<>();
        private Sampler sampler = Sampler.sequential();
        private int batchSize = 1;
        private int workers = 0;
        private boolean autoWorkers;
        private int prefetch = 0;
        private boolean autoPrefetch;
        private int shardsAhead = 0;
        private boolean dropLast;
        private long seed;
        private long epoch;
        private int rank = 0;
        private int worldSize = 1;
        private Partition.Tail tail = Partition.Tail.PAD;
        private Duration timeout;
        /** Tests only (TestHooks in the tests): a streaming pass with workers always (true) or never (false) collates on a thread of its own. */
        Boolean collatorThread;
        private ErrorPolicy errorPolicy = ErrorPolicy.FAIL;
        private boolean ordered = true;
        private Allocator allocator = Allocator.offHeap();
        private LoaderState resume;
        private int shardBuffer;
        private int shuffleWindow;
        private long shuffleBytes;
        private Tracer tracer;
        private int cores = Runtime.getRuntime().availableProcessors();
        private long memoryBudget = 512L << 20;
        private long memoryLimit = defaultMemoryLimit();
        private int holds = 1;

        private Builder(RowSource source) {
            this.source = source;
            this.stream = null;
        }

        private Builder(StreamSource<?, ?> stream) {
            this.source = null;
            this.stream = stream;
        }

        /** Records that {@code call} sets {@code option}; refused if an earlier call set it. */
        private void set(String option, String call) {
            String before = setBy.putIfAbsent(option, call);
            if (before != null) {
                throw new IllegalStateException(option + " is set twice: by " + before + " and by " + call);
            }
        }

        /** How an epoch orders the dataset (default {@link Sampler#sequential()}). */
        public Builder sampler(Sampler sampler) {
            Objects.requireNonNull(sampler, "sampler");
            set("sampler", "sampler(" + sampler.id() + ")");
            this.sampler = sampler;
            return this;
        }

        /** {@code true}: {@link Sampler#shuffle()}; {@code false}: {@link Sampler#sequential()}. Sets the sampler. */
        public Builder shuffle(boolean shuffle) {
            set("sampler", "shuffle(" + shuffle + ")");
            this.sampler = shuffle ? Sampler.shuffle() : Sampler.sequential();
            return this;
        }

        public Builder batchSize(int batchSize) {
            if (batchSize < 1) {
                throw new IllegalArgumentException("batchSize must be >= 1, got " + batchSize);
            }
            set("batchSize", "batchSize(" + batchSize + ")");
            this.batchSize = batchSize;
            return this;
        }

        /** Worker threads; 0 loads on the consumer's thread (default 0). */
        public Builder workers(int workers) {
            if (workers < 0 || workers > 1024) {
                throw new IllegalArgumentException("workers must be in [0, 1024], got " + workers);
            }
            set("workers", "workers(" + workers + ")");
            this.workers = workers;
            return this;
        }

        /** Worker threads chosen while running: between 1 and the {@link #budget}'s cores, to keep the consumer from waiting. */
        public Builder workers(Auto auto) {
            Objects.requireNonNull(auto, "auto");
            set("workers", "workers(AUTO)");
            this.autoWorkers = true;
            return this;
        }

        /**
         * Batches prepared ahead of the consumer, for a dataset read by index with workers
         * (default {@code 2 × workers}); a streaming dataset reads {@link #shardsAhead} instead.
         */
        public Builder prefetch(int batches) {
            if (batches < 1 || batches > 4096) {
                throw new IllegalArgumentException("prefetch must be in [1, 4096], got " + batches);
            }
            set("prefetch", "prefetch(" + batches + ")");
            this.prefetch = batches;
            return this;
        }

        /**
         * Batches ahead chosen while running, within the {@link #budget}'s bytes of batch buffers
         * and at most four batches per worker thread (small batches: up to 1 MiB of them).
         */
        public Builder prefetch(Auto auto) {
            Objects.requireNonNull(auto, "auto");
            set("prefetch", "prefetch(AUTO)");
            this.autoPrefetch = true;
            return this;
        }

        /**
         * For a {@link StreamingDataset} with workers: shards read ahead of the one the batches
         * come from, each into a ring of {@link #shardBuffer} samples (default {@code 2 × workers};
         * not resized while running).
         */
        public Builder shardsAhead(int shards) {
            if (shards < 1 || shards > 4096) {
                throw new IllegalArgumentException("shardsAhead must be in [1, 4096], got " + shards);
            }
            set("shardsAhead", "shardsAhead(" + shards + ")");
            this.shardsAhead = shards;
            return this;
        }

        /** Leave out the last batch of an epoch when it would be short (default: keep it). */
        public Builder dropLast(boolean dropLast) {
            set("dropLast", "dropLast(" + dropLast + ")");
            this.dropLast = dropLast;
            return this;
        }

        /** The seed of the order (default 0); a resumed loader takes the state's, and may set only the same. */
        public Builder seed(long seed) {
            set("seed", "seed(" + seed + ")");
            this.seed = seed;
            return this;
        }

        /** The first epoch (default 0); not with {@link #resume}, whose state holds it. */
        public Builder epoch(long epoch) {
            if (epoch < 0) {
                throw new IllegalArgumentException("epoch must be >= 0, got " + epoch);
            }
            set("epoch", "epoch(" + epoch + ")");
            this.epoch = epoch;
            return this;
        }

        public Builder rank(int rank) {
            if (rank < 0) {
                throw new IllegalArgumentException("rank must be >= 0, got " + rank);
            }
            set("rank", "rank(" + rank + ")");
            this.rank = rank;
            return this;
        }

        public Builder worldSize(int worldSize) {
            if (worldSize < 1) {
                throw new IllegalArgumentException("worldSize must be >= 1, got " + worldSize);
            }
            set("worldSize", "worldSize(" + worldSize + ")");
            this.worldSize = worldSize;
            return this;
        }

        /** What happens when an epoch does not divide among ranks (default {@link Partition.Tail#PAD}). */
        public Builder tail(Partition.Tail tail) {
            Objects.requireNonNull(tail, "tail");
            set("tail", "tail(" + tail + ")");
            this.tail = tail;
            return this;
        }

        /** The longest the consumer waits for one batch before a {@link LoaderTimeoutException} (default: forever). */
        public Builder timeout(Duration timeout) {
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("timeout must be positive, got " + timeout);
            }
            set("timeout", "timeout(" + timeout + ")");
            this.timeout = timeout;
            return this;
        }

        /** What a failed sample or shard does (default {@link ErrorPolicy#FAIL}). */
        public Builder errorPolicy(ErrorPolicy policy) {
            Objects.requireNonNull(policy, "errorPolicy");
            set("errorPolicy", "errorPolicy(" + policy + ")");
            this.errorPolicy = policy;
            return this;
        }

        /**
         * For a dataset read by index: {@code true} (default): batches arrive in order.
         * {@code false}: in completion order, so one slow batch does not hold up the others; the
         * set of batches is the same.
         */
        public Builder ordered(boolean ordered) {
            set("ordered", "ordered(" + ordered + ")");
            this.ordered = ordered;
            return this;
        }

        /**
         * For a {@link StreamingDataset} with workers: samples each shard read ahead may hold
         * (default {@code max(64, 2 × batchSize)}). A worker reading a shard ahead of the consumer
         * stops when its buffer is full and helps transform the samples of earlier shards; memory
         * is bounded by {@code shardsAhead × shardBuffer} samples.
         */
        public Builder shardBuffer(int samples) {
            if (samples < 1) {
                throw new IllegalArgumentException("shardBuffer must be >= 1, got " + samples);
            }
            set("shardBuffer", "shardBuffer(" + samples + ")");
            this.shardBuffer = samples;
            return this;
        }

        /**
         * For a {@link StreamingDataset}: the second tier of a two-tier shuffle. The sampler
         * shuffles the shard order (use {@code shuffle(true)}); then samples are handed out in a
         * keyed random order within blocks of {@code samples} consecutive samples of the stream
         * (0: in stream order, or the default window of a shuffled stream: NOTE [Default shuffle
         * window]). Memory: one block of samples on the consumer side.
         */
        public Builder shuffleWindow(int samples) {
            if (samples < 0) {
                throw new IllegalArgumentException("shuffleWindow must be >= 0, got " + samples);
            }
            set("shuffleWindow", "shuffleWindow(" + samples + ")");
            this.shuffleWindow = samples;
            return this;
        }

        /**
         * For a {@link StreamingDataset}: bounds the shuffle window's block in bytes as well (alone,
         * it sets the window: as many samples as fit). A block ends at the sample that brings its
         * samples' sizes ({@link Sized#of}: after the transform) to {@code bytes} or more, so it
         * holds at most {@code bytes} plus one sample. Sizes depend only on the samples, so blocks
         * and their orders are still a pure function of the stream, and resume is exact. 0: no
         * byte bound (and no window unless {@link #shuffleWindow} sets one). Neither set: a shuffled
         * stream gets {@link Loader#DEFAULT_SHUFFLE_WINDOW_BYTES}.
         */
        public Builder shuffleWindowBytes(long bytes) {
            if (bytes < 0) {
                throw new IllegalArgumentException("shuffleWindowBytes must be >= 0, got " + bytes);
            }
            set("shuffleWindowBytes", "shuffleWindowBytes(" + bytes + ")");
            this.shuffleBytes = bytes;
            return this;
        }

        /**
         * What {@link #AUTO} may use: at most {@code cores} worker threads and {@code bytes} of
         * batch buffers (default: the available processors and 512 MiB).
         */
        public Builder budget(int cores, long bytes) {
            if (cores < 1 || cores > 1024) {
                throw new IllegalArgumentException("budget cores must be in [1, 1024], got " + cores);
            }
            if (bytes < 1) {
                throw new IllegalArgumentException("budget bytes must be >= 1, got " + bytes);
            }
            set("budget", "budget(" + cores + ", " + bytes + ")");
            this.cores = cores;
            this.memoryBudget = bytes;
            return this;
        }

        /**
         * The most bytes of batch buffers this loader may allocate, checked when it is built, so
         * that a configuration too large for the machine is refused with its numbers rather than
         * ended by the kernel's OOM killer (default: three quarters of the machine's memory, as
         * the JVM sees it, container limits included).
         */
        public Builder memoryLimit(long bytes) {
            if (bytes < 1) {
                throw new IllegalArgumentException("a memory limit must be >= 1 byte, got " + bytes);
            }
            set("memoryLimit", "memoryLimit(" + bytes + ")");
            this.memoryLimit = bytes;
            return this;
        }

        private static long defaultMemoryLimit() {
            java.lang.management.OperatingSystemMXBean os = java.lang.management.ManagementFactory.getOperatingSystemMXBean();
            long total = os instanceof com.sun.management.OperatingSystemMXBean m ? m.getTotalMemorySize() : 0;
            return total > 0 ? total / 4 * 3 : Long.MAX_VALUE;
        }

        /** Receives a span per batch filled and per consumer wait (default: none, at no cost). */
        public Builder tracer(Tracer tracer) {
            Objects.requireNonNull(tracer, "tracer");
            set("tracer", "tracer(" + tracer.getClass().getSimpleName() + ")");
            this.tracer = tracer;
            return this;
        }

        /**
         * Delivered batches the consumer may hold at once (default 1). With 1, each batch is
         * released by the next {@code hasNext()}/{@code next()} call. With more, a batch is released
         * only by its {@link Batch#close()}, and asking for a batch while holding {@code batches}
         * is an error ({@code next()}, and a streaming pass's {@code hasNext()}, which prepares
         * it): for a consumer that hands batches on to another process and gets them back later
         * (NOTE [Holding batches]). The pool has {@code batches - 1} more buffers. Batches are
         * closed on the consuming thread, as everything else of the loader's consumer side.
         */
        public Builder holds(int batches) {
            if (batches < 1 || batches > 4096) {
                throw new IllegalArgumentException("holds must be in [1, 4096], got " + batches);
            }
            set("holds", "holds(" + batches + ")");
            this.holds = batches;
            return this;
        }

        /** Whether the dataset is a {@link StreamingDataset}: read ahead by {@link #shardsAhead}, not {@link #prefetch}. */
        public boolean streams() {
            return stream != null;
        }

        /** The fields of every batch the loader will deliver. */
        public Schema schema() {
            return source != null ? source.schema() : stream.schema;
        }

        /**
         * The most batch buffers the loader will allocate with the options set so far, each of
         * {@link Batch#bytesFor} bytes from {@link Allocator#newBatchArena}: what a ring of slots
         * must hold.
         */
        public int buffers() {
            return Pool.of(this).buffers();
        }

        /** Where batch buffers come from (default {@link Allocator#offHeap()}). */
        public Builder allocator(Allocator allocator) {
            Objects.requireNonNull(allocator, "allocator");
            set("allocator", "allocator(" + allocator.getClass().getSimpleName() + ")");
            this.allocator = allocator;
            return this;
        }

        /**
         * Continue from a saved {@link LoaderState}. Seed and epoch come from the state; rank and
         * world size come from this builder and may differ from the saved run's (elastic resume:
         * give every rank of the new run the state of any rank of the old one).
         */
        public Builder resume(LoaderState state) {
            Objects.requireNonNull(state, "state");
            set("resume", "resume(epoch " + state.epoch() + ")");
            this.resume = state;
            return this;
        }

        /**
         * The loader these options describe.
         *
         * @throws IllegalArgumentException for an option that does not apply to this loader
         *                                  (naming it and why), or a rank outside the world
         * @throws ResumeException          for a {@link #resume} state that does not fit it
         */
        public Loader build() {
            if (rank >= worldSize) {
                throw new IllegalArgumentException("rank " + rank + " is not in a world of " + worldSize);
            }
            String name = source != null ? source.name() : stream.name();
            if (stream == null) {
                for (String o : new String[] {"shardsAhead", "shardBuffer", "shuffleWindow", "shuffleWindowBytes"}) {
                    refuse(o, "is for streaming datasets; " + name + " is read by index, and a Sampler shuffles it whole");
                }
            } else {
                refuse("prefetch", "is batches ahead of a dataset read by index; " + name
                        + " streams, and shardsAhead(n) says how many of its shards are read ahead");
                refuse("ordered", "is for datasets read by index; a stream's batches always come in stream order");
            }
            if (workers == 0 && !autoWorkers) {
                String why = "does not apply with " + setBy.getOrDefault("workers", "no workers (the default)")
                        + ": batches are loaded on the consumer's thread";
                for (String o : new String[] {"prefetch", "shardsAhead", "shardBuffer"}) {
                    refuse(o, why);
                }
            }
            if (!autoWorkers && !autoPrefetch) {
                refuse("budget", "is what AUTO may use, and neither workers nor prefetch is AUTO");
            }
            if (resume != null) {
                refuse("epoch", "does not apply with " + setBy.get("resume") + ": the state holds the epoch");
            }
            return new Loader(this);
        }

        /** Fails if {@code option} was set: it does not apply, for the reason {@code why}. */
        private void refuse(String option, String why) {
            String call = setBy.get(option);
            if (call != null) {
                throw new IllegalArgumentException(call + " " + why);
            }
        }
    }
}
