package dev.stoker;

import java.time.Duration;
import java.util.Objects;

/** Builds a {@link Loader}: each option is set at most once, checked as it is set, and refused by {@link #build()} where it does not apply. */
public final class LoaderBuilder {
    final Plan plan;
    /** The options set so far, each with the call that set it, in order. */
    final java.util.Map<String, String> setBy = new java.util.LinkedHashMap<>();
    Sampler sampler = Sampler.sequential();
    int batchSize = 1;
    int workers = 0;
    boolean autoWorkers;
    int prefetch = 0;
    boolean autoPrefetch;
    int shardsAhead = 0;
    boolean dropLast;
    long seed;
    long epoch;
    int rank = 0;
    int worldSize = 1;
    Tail tail = Tail.PAD;
    Duration timeout;
    /** Tests only (TestHooks in the tests): a streaming pass with workers always (true) or never (false) collates on a thread of its own. */
    Boolean collatorThread;
    ErrorPolicy errorPolicy = ErrorPolicy.FAIL;
    boolean ordered = true;
    Allocator allocator = Allocator.offHeap();
    LoaderState resume;
    int shardBuffer;
    int shuffleWindow;
    long shuffleBytes;
    Tracer tracer;
    int cores = Runtime.getRuntime().availableProcessors();
    long memoryBudget = 512L << 20;
    long memoryLimit = defaultMemoryLimit();
    int holds = 1;
    int wakeRun;
    int streams;
    /** The padding of ragged fields, or null; {@link #padded} is it applied to the dataset's schema. */
    Padding padding;
    private PadLayout padded;

    LoaderBuilder(Plan plan) {
        this.plan = plan;
    }

    /** Records that {@code call} sets {@code option}; refused if an earlier call set it. */
    private void set(String option, String call) {
        String before = setBy.putIfAbsent(option, call);
        if (before != null) {
            throw new IllegalStateException(option + " is set twice: by " + before + " and by " + call);
        }
    }

    /** How an epoch orders the dataset (default {@link Sampler#sequential()}). */
    public LoaderBuilder sampler(Sampler sampler) {
        Objects.requireNonNull(sampler, "sampler");
        set("sampler", "sampler(" + sampler.id() + ")");
        this.sampler = sampler;
        return this;
    }

    /** Each epoch in its own keyed permutation: {@link Sampler#shuffle()}. Sets the sampler. */
    public LoaderBuilder shuffle() {
        set("sampler", "shuffle()");
        this.sampler = Sampler.shuffle();
        return this;
    }

    public LoaderBuilder batchSize(int batchSize) {
        if (batchSize < 1) {
            throw new IllegalArgumentException("batchSize must be >= 1, got " + batchSize);
        }
        set("batchSize", "batchSize(" + batchSize + ")");
        this.batchSize = batchSize;
        return this;
    }

    /** Worker threads; 0 loads on the consumer's thread (default 0). */
    public LoaderBuilder workers(int workers) {
        if (workers < 0 || workers > 1024) {
            throw new IllegalArgumentException("workers must be in [0, 1024], got " + workers);
        }
        set("workers", "workers(" + workers + ")");
        this.workers = workers;
        return this;
    }

    /** Worker threads chosen while running: between 1 and the {@link #budget}'s cores, to keep the consumer from waiting. */
    public LoaderBuilder workers(Loader.Auto auto) {
        Objects.requireNonNull(auto, "auto");
        set("workers", "workers(AUTO)");
        this.autoWorkers = true;
        return this;
    }

    /**
     * Batches prepared ahead of the consumer, for a dataset read by index with workers
     * (default {@code 2 × workers}); a streaming dataset reads {@link #shardsAhead} instead.
     */
    public LoaderBuilder prefetch(int batches) {
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
    public LoaderBuilder prefetch(Loader.Auto auto) {
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
    public LoaderBuilder shardsAhead(int shards) {
        if (shards < 1 || shards > 4096) {
            throw new IllegalArgumentException("shardsAhead must be in [1, 4096], got " + shards);
        }
        set("shardsAhead", "shardsAhead(" + shards + ")");
        this.shardsAhead = shards;
        return this;
    }

    /** Leave out the last batch of an epoch when it would be short (default: keep it). */
    public LoaderBuilder dropLast() {
        set("dropLast", "dropLast()");
        this.dropLast = true;
        return this;
    }

    /** The seed of the order (default 0); a resumed loader takes the state's, and may set only the same. */
    public LoaderBuilder seed(long seed) {
        set("seed", "seed(" + seed + ")");
        this.seed = seed;
        return this;
    }

    /** The first epoch (default 0); not with {@link #resume}, whose state holds it. */
    public LoaderBuilder epoch(long epoch) {
        if (epoch < 0) {
            throw new IllegalArgumentException("epoch must be >= 0, got " + epoch);
        }
        set("epoch", "epoch(" + epoch + ")");
        this.epoch = epoch;
        return this;
    }

    public LoaderBuilder rank(int rank) {
        if (rank < 0) {
            throw new IllegalArgumentException("rank must be >= 0, got " + rank);
        }
        set("rank", "rank(" + rank + ")");
        this.rank = rank;
        return this;
    }

    public LoaderBuilder worldSize(int worldSize) {
        if (worldSize < 1) {
            throw new IllegalArgumentException("worldSize must be >= 1, got " + worldSize);
        }
        set("worldSize", "worldSize(" + worldSize + ")");
        this.worldSize = worldSize;
        return this;
    }

    /** What happens when an epoch does not divide among ranks (default {@link Tail#PAD}). */
    public LoaderBuilder tail(Tail tail) {
        Objects.requireNonNull(tail, "tail");
        set("tail", "tail(" + tail + ")");
        this.tail = tail;
        return this;
    }

    /** The longest the consumer waits for one batch before a {@link LoaderTimeoutException} (default: forever). */
    public LoaderBuilder timeout(Duration timeout) {
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive, got " + timeout);
        }
        set("timeout", "timeout(" + timeout + ")");
        this.timeout = timeout;
        return this;
    }

    /** What a failed sample or shard does (default {@link ErrorPolicy#FAIL}). */
    public LoaderBuilder errorPolicy(ErrorPolicy policy) {
        Objects.requireNonNull(policy, "errorPolicy");
        set("errorPolicy", "errorPolicy(" + policy + ")");
        this.errorPolicy = policy;
        return this;
    }

    /**
     * For a dataset read by index: batches in completion order instead of in order (the default),
     * so one slow batch does not hold up the others; the set of batches is the same.
     */
    public LoaderBuilder unordered() {
        set("ordered", "unordered()");
        this.ordered = false;
        return this;
    }

    /**
     * For a {@link StreamingDataset} with workers: samples each shard read ahead may hold
     * (default {@code max(64, 2 × batchSize)}). A worker reading a shard ahead of the consumer
     * stops when its buffer is full and helps transform the samples of earlier shards; memory
     * is bounded by {@code shardsAhead × shardBuffer} samples.
     */
    public LoaderBuilder shardBuffer(int samples) {
        if (samples < 1) {
            throw new IllegalArgumentException("shardBuffer must be >= 1, got " + samples);
        }
        set("shardBuffer", "shardBuffer(" + samples + ")");
        this.shardBuffer = samples;
        return this;
    }

    /**
     * For a {@link StreamingDataset}: the second tier of a two-tier shuffle. The sampler
     * shuffles the shard order (use {@code shuffle()}); then samples are handed out in a
     * keyed random order within blocks of {@code samples} consecutive samples of the stream
     * (0: in stream order, or the default window of a shuffled stream: NOTE [Default shuffle
     * window]). Memory: one block of samples on the consumer side.
     */
    public LoaderBuilder shuffleWindow(int samples) {
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
    public LoaderBuilder shuffleWindowBytes(long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("shuffleWindowBytes must be >= 0, got " + bytes);
        }
        set("shuffleWindowBytes", "shuffleWindowBytes(" + bytes + ")");
        this.shuffleBytes = bytes;
        return this;
    }

    /**
     * What {@link Loader#AUTO} may use: at most {@code cores} worker threads and {@code bytes} of
     * batch buffers (default: the available processors and 512 MiB).
     */
    public LoaderBuilder budget(int cores, long bytes) {
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
    public LoaderBuilder memoryLimit(long bytes) {
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
    public LoaderBuilder tracer(Tracer tracer) {
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
    public LoaderBuilder holds(int batches) {
        if (batches < 1 || batches > 4096) {
            throw new IllegalArgumentException("holds must be in [1, 4096], got " + batches);
        }
        set("holds", "holds(" + batches + ")");
        this.holds = batches;
        return this;
    }

    /**
     * For a consumer that is dear to wake (the Python bridge's session, behind which another
     * process waits): when it waits, it is woken for a run of this many batches ready in a row,
     * not for each (NOTE [Wake] in {@code IndexedPass}), and the default prefetch window leaves the
     * workers room beside a run. Default: a quarter of the window, at most 8. A dataset read by
     * index only; a streaming pass hands over each batch as it is collated.
     */
    public LoaderBuilder wakeRun(int batches) {
        if (batches < 1 || batches > 64) {
            throw new IllegalArgumentException("wakeRun must be in [1, 64], got " + batches);
        }
        set("wakeRun", "wakeRun(" + batches + ")");
        this.wakeRun = batches;
        return this;
    }

    /** Whether the dataset is a {@link StreamingDataset}: read ahead by {@link #shardsAhead}, not {@link #prefetch}. */
    public boolean streams() {
        return plan instanceof Plan.Streamed;
    }

    /** The fields of every batch the loader will deliver (after {@link #padding}). */
    public Schema schema() {
        return padded == null ? plan.schema() : padded.output;
    }

    /**
     * Pads or stacks the dataset's ragged fields ({@link Padding}); refused at once, naming the
     * glob or field, when it does not fit the dataset's fields (a glob that names no ragged field,
     * a stack of a field that is not ragged or without a length). An empty padding changes nothing.
     */
    public LoaderBuilder padding(Padding padding) {
        Objects.requireNonNull(padding, "padding");
        PadLayout layout = padding.isEmpty() ? null : padding.layout(plan.schema(), plan.name());
        set("padding", "padding(" + padding + ")");
        this.padding = layout == null ? null : padding;
        this.padded = layout;
        if (layout != null && plan instanceof Plan.Indexed indexed && padding.stackType() == DType.FLOAT32) {
            padding.stacks().values().forEach(indexed.source()::willStack);
        }
        return this;
    }

    /**
     * The most batch buffers the loader will allocate with the options set so far, each of
     * {@link Batch#bytesFor} bytes from {@link Allocator#newBatchArena}: what a ring of slots
     * must hold.
     */
    public int buffers() {
        return BufferPool.of(this).buffers();
    }

    /** Where batch buffers come from (default {@link Allocator#offHeap()}). */
    public LoaderBuilder allocator(Allocator allocator) {
        Objects.requireNonNull(allocator, "allocator");
        set("allocator", "allocator(" + allocator.getClass().getSimpleName() + ")");
        this.allocator = allocator;
        return this;
    }

    /**
     * For a {@link StreamingDataset}: splits each epoch's shards into {@code count} streams
     * (default: one a rank, or a resumed state's count), stream {@code c} taking positions
     * {@code c, c + count, ...} of the epoch's shard order (with more streams than ranks, each
     * shard once, unless {@link #tail} is set); rank {@code r} of {@code W} reads streams
     * {@code r, r + W, ...}, one after the other, each with its own shuffle window. A stream is the unit a state records, so
     * the {@link LoaderState#merge} of every rank's states resumes mid-epoch at any world size up
     * to {@code count} (NOTE [Elastic streams]): choose a count every world size the job may run
     * at divides (48, say), so that ranks get equal shares. At least the world size.
     */
    public LoaderBuilder streams(int count) {
        if (count < 1) {
            throw new IllegalArgumentException("streams must be >= 1, got " + count);
        }
        set("streams", "streams(" + count + ")");
        this.streams = count;
        return this;
    }

    /**
     * Continue from a saved {@link LoaderState}. Seed and epoch come from the state; rank and
     * world size come from this builder and may differ from the saved run's (elastic resume:
     * for a dataset read by index, give every rank of the new run the state of any rank of the
     * old one; for a streaming dataset, the {@link LoaderState#merge} of all the old ranks').
     */
    public LoaderBuilder resume(LoaderState state) {
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
        String name = plan.name();
        if (plan instanceof Plan.Indexed) {
            for (String o : new String[] {"shardsAhead", "shardBuffer", "shuffleWindow", "shuffleWindowBytes", "streams"}) {
                refuse(o, "is for streaming datasets; " + name + " is read by index, and a Sampler shuffles it whole");
            }
            if (tail == Tail.NONE) {
                refuse("tail", "is for streaming datasets: ranks of " + name + " move in lockstep, so each takes as many samples");
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
        if (streams > 0 && streams < worldSize) {
            throw new IllegalArgumentException(setBy.get("streams") + " gives fewer streams than the world's " + worldSize
                    + " ranks: each rank reads at least one");
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
