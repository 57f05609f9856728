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
    /**
     * For {@link Builder#workers} and {@link Builder#prefetch}: chosen while the loader runs, from
     * measured stage times, within the {@link Builder#budget} (NOTE [Autotune] in Tuner).
     */
    public static final int AUTO = -1;
    private static final String THREAD_PREFIX = "stoker-worker-";
    private static final int MAX_AUTO_PREFETCH = 64;
    /** The bytes of batches an autotuned window may hold beyond four batches per worker. */
    private static final long WINDOW_FOOTPRINT_BYTES = 1 << 20;
    /** Batch buffers of a streaming pass with workers and one held batch: one delivered, one ready, one being collated. */
    private static final int STREAM_BATCHES = 3;

    /** The random-access source, or null for a streaming one. */
    final Source source;
    /** The streaming source, or null for a random-access one. */
    final StreamSource<?, ?> stream;
    final Sampler sampler;
    final int batchSize;
    /** Worker threads: the fixed number, or the CPU budget when the number is tuned. */
    final int workers;
    /** The prefetch depth: fixed, or the first one when it is tuned (streams: the fixed window). */
    final int prefetch;
    /** Chooses active workers and prefetch depth; null when both are fixed. */
    final Tuner tuner;
    final boolean dropLast;
    final long seed;
    final int rank;
    final int worldSize;
    final Partition.Tail tail;
    final long timeoutNanos;
    /** A streaming pass's collator thread: null to decide while running, else always or never (tests). */
    final Boolean collatorThread;
    final ErrorPolicy errorPolicy;
    final boolean ordered;
    final long length;
    /** Delivered batches the consumer may hold at once (NOTE [Holding batches]). */
    final int holds;
    final int shardBuffer;
    final int shuffleWindow;
    /** The shuffle window's byte budget (0: none). */
    final long shuffleBytes;
    /** Whether the window is the default one, where a sample that does not tell its size counts as {@link Sized#UNSIZED}. */
    final boolean defaultWindow;

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
    final Tracer tracer;

    /** The batch buffers; for a tuned prefetch depth, allocated as the window grows. */
    private final Batch[] buffers;
    private final FreeList free;
    private final Allocator allocator;
    private final Stats stats = new Stats();

    // Where the next pass starts (see LoaderState). Changed by the consumer thread.
    private long epoch;
    private long segmentStart;
    private long rankOffset;
    private long sampleInShard;
    private long blockEmitted;
    private long[] done;
    private long delivered;

    private volatile Pass run;
    private boolean closed;
    /** The content fingerprint of the data ({@link Dataset#fingerprint}), recorded in states and checked on resume. */
    private final long dataFingerprint;

    private Loader(Builder b) {
        this.source = b.source;
        this.stream = b.stream;
        if (b.source != null) {
            stats.addSkipped(0, b.source.shardsLeftOut());
        }
        this.sampler = b.sampler;
        this.batchSize = b.batchSize;
        boolean autoWorkers = b.workers == AUTO;
        boolean autoPrefetch = b.prefetch == AUTO;
        this.workers = autoWorkers ? b.cores : b.workers;
        int firstWorkers = autoWorkers ? 1 : workers;
        this.holds = b.holds;
        this.allocator = b.allocator;
        this.dropLast = b.dropLast;
        this.rank = b.rank;
        this.worldSize = b.worldSize;
        this.tail = b.tail;
        this.timeoutNanos = b.timeout == null ? 0 : b.timeout.toNanos();
        this.collatorThread = b.collatorThread;
        this.errorPolicy = b.errorPolicy;
        this.ordered = b.ordered;
        this.length = sampler.length(source != null ? source.size() : stream.shards());
        this.shardBuffer = b.shardBuffer > 0 ? b.shardBuffer : Math.max(64, 2 * b.batchSize);
        // a shuffled stream gets the default window unless one was set (NOTE [Default shuffle window])
        long bytes = b.shuffleBytes;
        if (bytes < 0) {
            bytes = stream != null && b.shuffleWindow == 0 && sampler != Sampler.sequential() ? DEFAULT_SHUFFLE_WINDOW_BYTES : 0;
        }
        this.shuffleBytes = bytes;
        this.defaultWindow = b.shuffleBytes < 0 && bytes > 0;
        // a budget in bytes alone: as many samples as fit
        this.shuffleWindow = b.shuffleWindow == 0 && bytes > 0 ? Integer.MAX_VALUE : b.shuffleWindow;
        this.tracer = b.tracer;
        if (shuffleWindow > 0 && stream == null) {
            throw new IllegalArgumentException("shuffleWindow is for streaming datasets; a random-access dataset "
                    + "is shuffled whole by Sampler.shuffle()");
        }
        this.dataFingerprint = source != null ? source.fingerprint() : stream.dataset.fingerprint();
        LoaderState s = b.resume;
        if (s == null) {
            this.seed = b.seed;
            this.epoch = b.epoch;
            this.segmentStart = 0;
            this.rankOffset = 0;
            this.done = new long[0];
            this.delivered = 0;
        } else {
            if (!s.sampler().equals(sampler.id())) {
                throw new IllegalArgumentException("cannot resume: the state was saved with sampler " + s.sampler()
                        + ", this loader uses " + sampler.id());
            }
            if (s.size() != length) {
                throw new IllegalArgumentException("cannot resume: the state's epoch has " + s.size()
                        + " positions, this loader's has " + length + " (a different dataset?)");
            }
            if (s.data() != 0 && dataFingerprint != 0 && s.data() != dataFingerprint) {
                throw new IllegalArgumentException("cannot resume: the state was saved from other data (fingerprint "
                        + Long.toHexString(s.data()) + ", this dataset's " + Long.toHexString(dataFingerprint)
                        + "): the same number of samples, other content");
            }
            if (product(s.rankOffset(), s.worldSize()) > length - s.segmentStart() + (long) s.worldSize() * s.batchSize()) {
                throw new IllegalArgumentException("cannot resume: the state's position (" + s.rankOffset() + " samples a rank from "
                        + s.segmentStart() + ") lies past the end of an epoch of " + length);
            }
            if (b.seedSet && b.seed != s.seed()) {
                throw new IllegalArgumentException("cannot resume: seed " + b.seed + " was set, the state has seed " + s.seed());
            }
            if (s.segmentStart() < 0 || s.segmentStart() > length || s.rankOffset() < 0 || s.worldSize() < 1) {
                throw new IllegalArgumentException("cannot resume: inconsistent state " + s.toJson());
            }
            this.seed = s.seed();
            this.epoch = s.epoch();
            this.delivered = s.delivered();
            boolean sameSplit = s.worldSize() == worldSize;
            if (s.done().length > 0 && (!sameSplit || s.batchSize() != batchSize)) {
                throw new IllegalArgumentException("cannot resume: the state holds batches an unordered loader delivered "
                        + "ahead of others; resume it with the same world size and batch size");
            }
            if ((stream != null || s.done().length > 0) && s.rank() != rank) {
                throw new IllegalArgumentException("cannot resume: the state is rank " + s.rank() + "'s and this is rank "
                        + rank + "; " + (stream != null ? "ranks of a streaming dataset progress independently"
                        : "an unordered loader's out-of-order batches are per rank") + ", so each rank resumes its own state");
            }
            if (stream != null && !sameSplit) {
                throw new IllegalArgumentException("cannot resume: a streaming dataset resumes with the world size it was "
                        + "saved with (" + s.worldSize() + "); elastic resume needs a random-access dataset");
            }
            if (sameSplit) {
                this.segmentStart = s.segmentStart();
                this.rankOffset = s.rankOffset();
                this.sampleInShard = s.sampleInShard();
                this.blockEmitted = s.blockEmitted();
                this.done = s.done();
            } else {
                // NOTE [Elastic]: every rank of the old run consumed the prefix of its split; the
                // new world splits what is left of the epoch afresh.
                long remaining = length - s.segmentStart();
                long consumed = Math.min(remaining, Math.multiplyExact(s.rankOffset(), (long) s.worldSize()));
                this.segmentStart = s.segmentStart() + consumed;
                this.rankOffset = 0;
                this.done = new long[0];
            }
        }
        Pool pool = Pool.of(b);
        this.prefetch = pool.prefetch();
        int maxPrefetch = pool.maxPrefetch();
        this.tuner = workers > 0 && (autoWorkers || autoPrefetch)
                ? new Tuner(firstWorkers, workers, autoWorkers, prefetch, maxPrefetch, autoPrefetch && stream == null,
                Runtime.getRuntime().availableProcessors())
                : null;
        this.buffers = new Batch[pool.buffers()];
        this.free = new FreeList(pool.buffers(), 0);
        try {
            ensureBuffers(stream != null ? pool.buffers() : prefetch + holds);
        } catch (RuntimeException | Error e) {
            for (Batch batch : buffers) {
                if (batch != null) {
                    batch.free();
                }
            }
            throw e;
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
            int workers = b.workers == AUTO ? b.cores : b.workers;
            int firstWorkers = b.workers == AUTO ? 1 : workers;
            boolean autoPrefetch = b.prefetch == AUTO;
            int prefetch;
            int maxPrefetch;
            if (workers == 0) {
                prefetch = 1;
                maxPrefetch = 1;
            } else if (b.stream != null) {
                prefetch = autoPrefetch || b.prefetch == 0 ? 2 * workers : b.prefetch; // rings are not resized while running
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
            // collation] in StreamRun), one ready and one being collated, one within a tight budget
            int buffers = b.stream == null ? maxPrefetch + b.holds
                    : workers == 0 ? b.holds
                    : (int) Math.clamp(b.memoryBudget / perBatch, 2, STREAM_BATCHES) - 1 + b.holds;
            // checked before anything is allocated: past the machine's memory, the kernel's OOM killer ends the process without a word
            long need = product(perBatch, buffers);
            if (need > b.memoryLimit) {
                throw new IllegalArgumentException(String.format(java.util.Locale.ROOT, "%d batch buffers of %,d bytes (batches of"
                        + " %,d samples) need %,d bytes, more than the memory limit of %,d bytes (%s): a smaller batch or"
                        + " prefetch, or a higher limit", buffers, perBatch, b.batchSize, need, b.memoryLimit,
                        b.memoryLimitSet ? "as set" : "three quarters of this machine's memory"));
            }
            return new Pool(prefetch, maxPrefetch, buffers);
        }
    }

    // NOTE [Holding batches]: a consumer that passes batches on (stoker serve hands them to a
    // Python process through a shared-memory ring and gets them back, on its own thread) must keep
    // several without a round trip per batch. With holds(n), a batch goes back to the pool only
    // by its close(); the pool has n - 1 more buffers, so the prefetch window stays as deep as
    // with one held batch, and asking for a batch while holding n is refused rather than left to
    // starve the workers. A new pass (iterator() or close()) takes every buffer back, and a batch
    // of the old pass closed afterwards gives nothing back: it is the consumer's to stop reading
    // held batches before starting a new pass.

    /** Makes at least {@code n} buffers exist (consumer thread: a pass grows its window). */
    void ensureBuffers(int n) {
        for (int i = free.size(); i < Math.min(n, buffers.length); i++) {
            Batch batch = new Batch(schema(), batchSize, allocator, this::release);
            batch.slot = i;
            buffers[i] = batch;
            free.grow(i + 1);
        }
    }

    /** A loader over objects: each sample is fetched with {@code get} and written by {@code collator}. */
    public static <T> Builder builder(Dataset<T> dataset, Collator<? super T> collator) {
        return new Builder(Source.of(dataset, null, collator));
    }

    /** A loader over objects with a per-sample transform between fetch and collate. */
    public static <T, R> Builder builder(Dataset<T> dataset, Transform<? super T, ? extends R> transform,
                                         Collator<? super R> collator) {
        return new Builder(Source.of(dataset, Objects.requireNonNull(transform, "transform"), collator));
    }

    /** A loader over a dataset that writes samples straight into batch rows. */
    public static Builder builder(DirectDataset dataset) {
        return new Builder(Source.of(dataset));
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
        stopRun();
        Pass p = stream == null
                ? new Run(this, buffers, free, epoch, segmentStart, rankOffset, done, delivered)
                : new StreamRun(this, stream, buffers, free, epoch, segmentStart, rankOffset, sampleInShard, blockEmitted,
                delivered);
        run = p;
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
        if (run != null && !run.finished()) {
            return run.state().withData(dataFingerprint);
        }
        return new LoaderState(sampler.id(), length, seed, epoch, worldSize, rank, batchSize, segmentStart,
                rankOffset, sampleInShard, blockEmitted, done, delivered, dataFingerprint);
    }

    /**
     * Batches the current pass delivers in all (or the next pass, if none is running); -1 for a
     * streaming dataset, whose shards' sizes are not known in advance.
     */
    public synchronized long batches() {
        if (run != null && !run.finished()) {
            return run.batches();
        }
        return stream != null ? -1 : Run.batchesFor(this, segmentStart, rankOffset, done);
    }

    /** Measurements since this loader was built. */
    public LoaderStats stats() {
        Pass r;
        synchronized (this) {
            r = run;
        }
        return stats.snapshot(r);
    }

    /** The fields of every batch. */
    public Schema schema() {
        return source != null ? source.schema() : stream.schema;
    }

    /** Buffers in the pool that no one holds: all of them once the loader is idle. */
    public int freeBuffers() {
        return free.free();
    }

    /** The prefetch depth in use now (tuned while running under {@link #AUTO}). */
    public int prefetch() {
        return tuner != null ? tuner.prefetch() : prefetch;
    }

    /** Workers active now (tuned while running under {@link #AUTO}). */
    public int workers() {
        return tuner != null ? tuner.workers() : workers;
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
        if (!stopRun()) {
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

    /** Called by a run when its last batch was delivered: the next pass is the next epoch. */
    synchronized void finished(Pass r) {
        if (run == r) {
            epoch++;
            segmentStart = 0;
            rankOffset = 0;
            sampleInShard = 0;
            blockEmitted = 0;
            done = new long[0];
            delivered = 0;
        }
    }

    /** Stops the current pass, keeping its position; false if a worker would not stop (closing only). */
    private boolean stopRun() {
        if (run != null) {
            Pass r = run;
            if (!r.finished()) {
                LoaderState s = r.state();
                epoch = s.epoch();
                segmentStart = s.segmentStart();
                rankOffset = s.rankOffset();
                sampleInShard = s.sampleInShard();
                blockEmitted = s.blockEmitted();
                done = s.done();
                delivered = s.delivered();
            }
            boolean stopped = r.stop(closed);
            run = null;
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
        Pass r = run;
        if (r != null) {
            r.release(b);
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("loader is closed");
        }
    }

    /** Builds a {@link Loader}; every option is checked as it is set. */
    public static final class Builder {
        private final Source source;
        private final StreamSource<?, ?> stream;
        private Sampler sampler = Sampler.sequential();
        private int batchSize = 1;
        private int workers = 0;
        private int prefetch = 0;
        private boolean dropLast;
        private long seed;
        private boolean seedSet;
        private long epoch;
        private int rank = 0;
        private int worldSize = 1;
        private Partition.Tail tail = Partition.Tail.PAD;
        private Duration timeout;
        private Boolean collatorThread;
        private ErrorPolicy errorPolicy = ErrorPolicy.FAIL;
        private boolean ordered = true;
        private Allocator allocator = Allocator.offHeap();
        private LoaderState resume;
        private int shardBuffer;
        private int shuffleWindow;
        private long shuffleBytes = -1;
        private Tracer tracer;
        private int cores = Runtime.getRuntime().availableProcessors();
        private long memoryBudget = 512L << 20;
        private long memoryLimit = defaultMemoryLimit();
        private boolean memoryLimitSet;
        private int holds = 1;

        private Builder(Source source) {
            this.source = source;
            this.stream = null;
        }

        private Builder(StreamSource<?, ?> stream) {
            this.source = null;
            this.stream = stream;
        }

        /** How an epoch orders the dataset (default {@link Sampler#sequential()}). */
        public Builder sampler(Sampler sampler) {
            this.sampler = Objects.requireNonNull(sampler, "sampler");
            return this;
        }

        /** {@code true}: {@link Sampler#shuffle()}; {@code false}: {@link Sampler#sequential()}. */
        public Builder shuffle(boolean shuffle) {
            return sampler(shuffle ? Sampler.shuffle() : Sampler.sequential());
        }

        public Builder batchSize(int batchSize) {
            if (batchSize < 1) {
                throw new IllegalArgumentException("batchSize must be >= 1, got " + batchSize);
            }
            this.batchSize = batchSize;
            return this;
        }

        /**
         * Worker threads; 0 loads on the consumer's thread (default 0); {@link #AUTO}: between 1
         * and the budget's cores, chosen while running to keep the consumer from waiting.
         */
        public Builder workers(int workers) {
            if ((workers < 0 || workers > 1024) && workers != AUTO) {
                throw new IllegalArgumentException("workers must be in [0, 1024] or AUTO, got " + workers);
            }
            this.workers = workers;
            return this;
        }

        /**
         * Batches prepared ahead of the consumer (default {@code 2 × workers}; ignored with 0
         * workers); {@link #AUTO}: chosen while running, within the budget's bytes of batch
         * buffers and at most four batches per worker thread (a streaming dataset's window of
         * shards is not resized: AUTO is {@code 2 × workers} there).
         */
        public Builder prefetch(int prefetch) {
            if ((prefetch < 1 || prefetch > 4096) && prefetch != AUTO) {
                throw new IllegalArgumentException("prefetch must be in [1, 4096] or AUTO, got " + prefetch);
            }
            this.prefetch = prefetch;
            return this;
        }

        /** Leave out the last batch of an epoch when it would be short (default: keep it). */
        public Builder dropLast(boolean dropLast) {
            this.dropLast = dropLast;
            return this;
        }

        public Builder seed(long seed) {
            this.seed = seed;
            this.seedSet = true;
            return this;
        }

        /** The first epoch (default 0). */
        public Builder epoch(long epoch) {
            if (epoch < 0) {
                throw new IllegalArgumentException("epoch must be >= 0, got " + epoch);
            }
            this.epoch = epoch;
            return this;
        }

        public Builder rank(int rank) {
            if (rank < 0) {
                throw new IllegalArgumentException("rank must be >= 0, got " + rank);
            }
            this.rank = rank;
            return this;
        }

        public Builder worldSize(int worldSize) {
            if (worldSize < 1) {
                throw new IllegalArgumentException("worldSize must be >= 1, got " + worldSize);
            }
            this.worldSize = worldSize;
            return this;
        }

        /** What happens when an epoch does not divide among ranks (default {@link Partition.Tail#PAD}). */
        public Builder tail(Partition.Tail tail) {
            this.tail = Objects.requireNonNull(tail, "tail");
            return this;
        }

        /** The longest the consumer waits for one batch before a {@link LoaderTimeoutException} (default: forever). */
        /** Tests: a streaming pass with workers always (true) or never (false) collates on a thread of its own. */
        Builder collatorThread(Boolean always) {
            this.collatorThread = always;
            return this;
        }

        public Builder timeout(Duration timeout) {
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("timeout must be positive, got " + timeout);
            }
            this.timeout = timeout;
            return this;
        }

        public Builder errorPolicy(ErrorPolicy policy) {
            this.errorPolicy = Objects.requireNonNull(policy, "errorPolicy");
            return this;
        }

        /**
         * {@code true} (default): batches arrive in order. {@code false}: in completion order, so
         * one slow batch does not hold up the others; the set of batches is the same.
         */
        public Builder ordered(boolean ordered) {
            this.ordered = ordered;
            return this;
        }

        /**
         * For a {@link StreamingDataset}: samples each shard read ahead may hold (default
         * {@code max(64, 2 × batchSize)}). A worker reading a shard ahead of the consumer stops
         * when its buffer is full and helps transform the samples of earlier shards; memory is
         * bounded by {@code prefetch × shardBuffer} samples.
         */
        public Builder shardBuffer(int samples) {
            if (samples < 1) {
                throw new IllegalArgumentException("shardBuffer must be >= 1, got " + samples);
            }
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
            this.shuffleWindow = samples;
            return this;
        }

        /**
         * For a {@link StreamingDataset}: bounds the shuffle window's block in bytes as well (alone,
         * it sets the window: as many samples as fit). A block ends at the sample that brings its
         * samples' sizes ({@link Sized#of}: after the transform) to {@code bytes} or more, so it
         * holds at most {@code bytes} plus one sample. Sizes depend only on the samples, so blocks
         * and their orders are still a pure function of the stream, and resume is exact. 0: no
         * byte bound (and no window unless {@link #shuffleWindow} sets one). Unset: a shuffled
         * stream with no {@link #shuffleWindow} gets {@link Loader#DEFAULT_SHUFFLE_WINDOW_BYTES}.
         */
        public Builder shuffleWindowBytes(long bytes) {
            if (bytes < 0) {
                throw new IllegalArgumentException("shuffleWindowBytes must be >= 0, got " + bytes);
            }
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
            this.memoryLimit = bytes;
            this.memoryLimitSet = true;
            return this;
        }

        private static long defaultMemoryLimit() {
            java.lang.management.OperatingSystemMXBean os = java.lang.management.ManagementFactory.getOperatingSystemMXBean();
            long total = os instanceof com.sun.management.OperatingSystemMXBean m ? m.getTotalMemorySize() : 0;
            return total > 0 ? total / 4 * 3 : Long.MAX_VALUE;
        }

        /** Receives a span per batch filled and per consumer wait (default: none, at no cost). */
        public Builder tracer(Tracer tracer) {
            this.tracer = Objects.requireNonNull(tracer, "tracer");
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
            this.holds = batches;
            return this;
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
            this.allocator = Objects.requireNonNull(allocator, "allocator");
            return this;
        }

        /**
         * Continue from a saved {@link LoaderState}. Seed and epoch come from the state; rank and
         * world size come from this builder and may differ from the saved run's (elastic resume:
         * give every rank of the new run the state of any rank of the old one).
         */
        public Builder resume(LoaderState state) {
            this.resume = Objects.requireNonNull(state, "state");
            return this;
        }

        public Loader build() {
            if (rank >= worldSize) {
                throw new IllegalArgumentException("rank " + rank + " is not in a world of " + worldSize);
            }
            return new Loader(this);
        }
    }
}
