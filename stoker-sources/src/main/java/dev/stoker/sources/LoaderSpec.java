package dev.stoker.sources;

import dev.stoker.DType;
import dev.stoker.ErrorPolicy;
import dev.stoker.Loader;
import dev.stoker.LoaderBuilder;
import dev.stoker.Padding;
import dev.stoker.Sampler;
import dev.stoker.sources.Schema.Auto;
import dev.stoker.sources.Schema.Choices;
import dev.stoker.sources.Schema.Format;
import dev.stoker.sources.Schema.Min;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The loader's options as plain data, apart from the source's ({@code DataLoader(dataset, ...)}
 * keeps them apart too): what {@code stoker bench}'s common flags and {@code stoker.Loader}'s
 * keywords set. Null is the default: {@code workers} and {@code prefetch} null are {@code auto}
 * (tuned while running), {@code seed} and {@code epoch} null are 0 (a resumed loader takes the
 * state's seed, and refuses another one set), the others the loader's own defaults.
 *
 * <p>{@code prefetch} is batches ahead, for a stream shards ahead; with no workers it does not
 * apply. {@code cores} bounds what the autotuner may give workers.
 *
 * @param order        {@code shuffle}, {@code sequential} or {@code blocks} (contiguous runs of a
 *                     batch in a random order: {@link Sampler#blocks}); a source with an order of
 *                     its own, such as random windows, replaces it
 * @param errors       {@code fail}, {@code skip-sample} or {@code skip-shard}
 * @param streams      the streams a streaming source's epoch is split into (null: one a rank), the
 *                     unit its states record, so a job may resume at another world size
 * @param inMemory     the source's local files copied into memory before the first epoch, their
 *                     size checked first ({@link Specs#open}; NOTE [In memory])
 * @param pad          ragged fields padded: glob of names → length ({@code {"Jet_*": 128}}); a
 *                     stack takes its length from the glob that names it ({@link Padding})
 * @param stack        ragged fields stacked into one {@code [N, F]} field: name → fields
 * @param stackDtype   the dtype of stacks (null: float32)
 * @param padValue     the value past a sample's last entry
 * @param lengths      each padded field or stack {@code NAME} followed by {@code NAME_len} (int64)
 * @param mask         each padded field or stack {@code NAME} followed by {@code NAME_mask} (bool {@code [N]})
 */
public record LoaderSpec(@Min(1) int batchSize, @Min(0) @Auto Integer workers, @Min(1) @Auto Integer prefetch, Long seed,
                         @Min(0) Long epoch, @Min(0) int rank, @Min(1) int worldSize, Order order, @Min(0) int shuffleWindow,
                         @Min(0) Long shuffleWindowBytes, @Min(1) Long timeoutMs, boolean dropLast, Errors errors,
                         @Min(1) Integer cores, @Min(1) Long memoryLimit, @Min(1) Integer streams, boolean inMemory,
                         @Format("pads") Map<String, Integer> pad, @Format("stacks") Map<String, List<String>> stack,
                         @Choices({"float32", "float64", "float16", "bfloat16", "int8", "uint8", "int16", "int32", "int64", "bool"})
                         String stackDtype, double padValue, boolean lengths, boolean mask) {

    /** The defaults: batches of 32, workers and prefetch tuned, shuffled with seed 0, epoch 0, one rank, errors fail. */
    public static final LoaderSpec DEFAULT = new LoaderSpec(32, null, null, null, null, 0, 1, Order.SHUFFLE, 0, null, null, false,
            Errors.FAIL, null, null, null, false, Map.of(), Map.of(), null, 0, false, false);


    /** A builder of a spec, from {@link #DEFAULT}'s options. */
    public static Builder builder() {
        return DEFAULT.toBuilder();
    }

    /** A builder of a spec, from these options. */
    public Builder toBuilder() {
        return new Builder(this);
    }

    /** A spec's options set one by one (each named as its component); {@link #build} checks them as the constructor does. */
    public static final class Builder {
        private int batchSize;
        private Integer workers;
        private Integer prefetch;
        private Long seed;
        private Long epoch;
        private int rank;
        private int worldSize;
        private Order order;
        private int shuffleWindow;
        private Long shuffleWindowBytes;
        private Long timeoutMs;
        private boolean dropLast;
        private Errors errors;
        private Integer cores;
        private Long memoryLimit;
        private Integer streams;
        private boolean inMemory;
        private Map<String, Integer> pad;
        private Map<String, List<String>> stack;
        private String stackDtype;
        private double padValue;
        private boolean lengths;
        private boolean mask;

        private Builder(LoaderSpec s) {
            batchSize = s.batchSize;
            workers = s.workers;
            prefetch = s.prefetch;
            seed = s.seed;
            epoch = s.epoch;
            rank = s.rank;
            worldSize = s.worldSize;
            order = s.order;
            shuffleWindow = s.shuffleWindow;
            shuffleWindowBytes = s.shuffleWindowBytes;
            timeoutMs = s.timeoutMs;
            dropLast = s.dropLast;
            errors = s.errors;
            cores = s.cores;
            memoryLimit = s.memoryLimit;
            streams = s.streams;
            inMemory = s.inMemory;
            pad = s.pad;
            stack = s.stack;
            stackDtype = s.stackDtype;
            padValue = s.padValue;
            lengths = s.lengths;
            mask = s.mask;
        }

        public Builder batchSize(int batchSize) {
            this.batchSize = batchSize;
            return this;
        }

        public Builder workers(Integer workers) {
            this.workers = workers;
            return this;
        }

        public Builder prefetch(Integer prefetch) {
            this.prefetch = prefetch;
            return this;
        }

        public Builder seed(Long seed) {
            this.seed = seed;
            return this;
        }

        public Builder epoch(Long epoch) {
            this.epoch = epoch;
            return this;
        }

        public Builder rank(int rank) {
            this.rank = rank;
            return this;
        }

        public Builder worldSize(int worldSize) {
            this.worldSize = worldSize;
            return this;
        }

        public Builder order(Order order) {
            this.order = order;
            return this;
        }

        public Builder shuffleWindow(int shuffleWindow) {
            this.shuffleWindow = shuffleWindow;
            return this;
        }

        public Builder shuffleWindowBytes(Long shuffleWindowBytes) {
            this.shuffleWindowBytes = shuffleWindowBytes;
            return this;
        }

        public Builder timeoutMs(Long timeoutMs) {
            this.timeoutMs = timeoutMs;
            return this;
        }

        public Builder dropLast(boolean dropLast) {
            this.dropLast = dropLast;
            return this;
        }

        public Builder errors(Errors errors) {
            this.errors = errors;
            return this;
        }

        public Builder cores(Integer cores) {
            this.cores = cores;
            return this;
        }

        public Builder memoryLimit(Long memoryLimit) {
            this.memoryLimit = memoryLimit;
            return this;
        }

        public Builder streams(Integer streams) {
            this.streams = streams;
            return this;
        }

        public Builder inMemory(boolean inMemory) {
            this.inMemory = inMemory;
            return this;
        }

        public Builder pad(Map<String, Integer> pad) {
            this.pad = pad;
            return this;
        }

        public Builder stack(Map<String, List<String>> stack) {
            this.stack = stack;
            return this;
        }

        public Builder stackDtype(String stackDtype) {
            this.stackDtype = stackDtype;
            return this;
        }

        public Builder padValue(double padValue) {
            this.padValue = padValue;
            return this;
        }

        public Builder lengths(boolean lengths) {
            this.lengths = lengths;
            return this;
        }

        public Builder mask(boolean mask) {
            this.mask = mask;
            return this;
        }

        /** The spec. */
        public LoaderSpec build() {
            return new LoaderSpec(batchSize, workers, prefetch, seed, epoch, rank, worldSize, order, shuffleWindow, shuffleWindowBytes, timeoutMs, dropLast, errors, cores, memoryLimit, streams, inMemory, pad, stack, stackDtype, padValue, lengths, mask);
        }
    }

    /** The order of an epoch's samples ({@code order}). */
    public enum Order implements Specs.Word {
        /** Shuffled, a new order each epoch. */
        SHUFFLE,
        /** In storage order. */
        SEQUENTIAL,
        /** Contiguous blocks of a batch, in a random order ({@link Sampler#blocks}). */
        BLOCKS;

        /** The order named {@code word} ({@code shuffle}, ...). */
        public static Order of(String word) {
            return Specs.Word.of(Order.class, "order", word);
        }
    }

    /** What a sample that cannot be read does ({@code errors}): the {@link ErrorPolicy} of the same name. */
    public enum Errors implements Specs.Word {
        /** The run fails, naming it. */
        FAIL,
        /** The sample is left out, counted. */
        SKIP_SAMPLE,
        /** The rest of its shard is left out, counted. */
        SKIP_SHARD;

        @Override
        public String word() {
            return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
        }

        /** The policy named {@code word} ({@code fail}, {@code skip-sample}, {@code skip-shard}). */
        public static Errors of(String word) {
            return Specs.Word.of(Errors.class, "errors", word);
        }

        /** The loader's policy. */
        public ErrorPolicy policy() {
            return ErrorPolicy.valueOf(name());
        }
    }

    public LoaderSpec {
        SpecException.atLeast("batch_size", batchSize, 1);
        if (workers != null) {
            SpecException.atLeast("workers", workers, 0);
        }
        if (prefetch != null) {
            SpecException.atLeast("prefetch", prefetch, 1);
        }
        if (epoch != null) {
            SpecException.atLeast("epoch", epoch, 0);
        }
        SpecException.atLeast("rank", rank, 0);
        SpecException.atLeast("world_size", worldSize, 1);
        if (rank >= worldSize) {
            throw SpecException.naming("rank", rank + " is not in a world of " + worldSize + " ({world_size})");
        }
        order = order == null ? Order.SHUFFLE : order;
        SpecException.atLeast("shuffle_window", shuffleWindow, 0);
        if (shuffleWindowBytes != null) {
            SpecException.atLeast("shuffle_window_bytes", shuffleWindowBytes, 0);
        }
        if (timeoutMs != null) {
            SpecException.atLeast("timeout_ms", timeoutMs, 1);
        }
        errors = errors == null ? Errors.FAIL : errors;
        if (cores != null) {
            SpecException.atLeast("cores", cores, 1);
        }
        if (memoryLimit != null) {
            SpecException.atLeast("memory_limit", memoryLimit, 1);
        }
        if (streams != null) {
            SpecException.atLeast("streams", streams, worldSize);
        }
        pad = pad == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(pad));
        for (var e : pad.entrySet()) {
            if (e.getKey() == null || e.getKey().isEmpty()) {
                throw SpecException.naming("pad", "a glob must not be empty");
            }
            if (e.getValue() == null || e.getValue() < 1) {
                throw SpecException.naming("pad", "'" + e.getKey() + "' needs a length >= 1, got " + e.getValue());
            }
        }
        Map<String, List<String>> stacks = new LinkedHashMap<>();
        if (stack != null) {
            for (var e : stack.entrySet()) {
                if (e.getValue() == null || e.getValue().isEmpty() || e.getValue().stream().anyMatch(f -> f == null || f.isEmpty())) {
                    throw SpecException.naming("stack", "'" + e.getKey() + "' needs a list of field names");
                }
                stacks.put(e.getKey(), List.copyOf(e.getValue()));
            }
        }
        stack = Collections.unmodifiableMap(stacks);
        if (stackDtype != null) {
            stackDtype = SpecException.oneOf("stack_dtype", stackDtype, "float32", "float64", "float16", "bfloat16", "int8",
                    "uint8", "int16", "int32", "int64", "bool");
        }
        if (!Double.isFinite(padValue)) {
            throw SpecException.naming("pad_value", "must be a finite number, got " + padValue);
        }
    }

    /** The {@link Padding} that {@link #pad}, {@link #stack} and their options describe. */
    public Padding padding() {
        Padding p = Padding.of();
        for (var e : pad.entrySet()) {
            p = p.pad(e.getKey(), e.getValue());
        }
        for (var e : stack.entrySet()) {
            p = p.stack(e.getKey(), e.getValue());
        }
        if (stackDtype != null) {
            p = p.stackType(DType.valueOf(stackDtype.toUpperCase(java.util.Locale.ROOT)));
        }
        return p.value(padValue).lengths(lengths).mask(mask);
    }

    /** The same with {@code batchSize} samples per batch. */
    public LoaderSpec withBatchSize(int batchSize) {
        return toBuilder().batchSize(batchSize).build();
    }

    /** The same with these workers and prefetch (null: {@code auto}). */
    public LoaderSpec withWorkers(Integer workers, Integer prefetch) {
        return toBuilder().workers(workers).prefetch(prefetch).build();
    }

    /** The same for {@code rank} of {@code worldSize}. */
    public LoaderSpec withRank(int rank, int worldSize) {
        return toBuilder().rank(rank).worldSize(worldSize).build();
    }

    /** The error policy {@link #errors} names. */
    public ErrorPolicy errorPolicy() {
        return errors.policy();
    }

    /**
     * Where the loader {@code b} builds starts: {@code state}, resumed (its epoch is the state's;
     * a seed this spec sets must be the state's, or the build refuses it naming both), or, when it
     * is null, this spec's seed and first epoch.
     */
    public LoaderBuilder start(LoaderBuilder b, dev.stoker.LoaderState state) {
        if (state == null) {
            return b.seed(orderSeed()).epoch(firstEpoch());
        }
        if (seed != null) {
            b.seed(seed);
        }
        return b.resume(state);
    }

    /**
     * The sampler {@link #order} names. {@code blocks}: contiguous runs of a batch of samples a
     * rank (of {@code batchSize * worldSize} samples, rank {@code r} taking every
     * {@code worldSize}-th of each from its {@code r}-th), in a random order.
     */
    Sampler sampler() {
        return switch (order) {
            case SHUFFLE -> Sampler.shuffle();
            case BLOCKS -> Sampler.blocks((long) batchSize * worldSize);
            case SEQUENTIAL -> Sampler.sequential();
        };
    }

    /** The seed of the order: {@link #seed}, or 0. */
    public long orderSeed() {
        return seed == null ? 0 : seed;
    }

    /** The first epoch: {@link #epoch}, or 0. */
    public long firstEpoch() {
        return epoch == null ? 0 : epoch;
    }

    /** A shuffle window is asked for: a sharded source is then read as a stream. */
    public boolean windowed() {
        return shuffleWindow > 0 || shuffleWindowBytes != null && shuffleWindowBytes > 0;
    }

    /**
     * Sets these options on {@code b}, the order from {@code sampler} when the source has one of its
     * own (null: {@link #order}); not where the loader starts, which is the caller's ({@link #start}).
     * It is the one way a spec's options, and its defaults, reach a builder ({@link Recipe#builder}):
     * every option is set, so the builder's own defaults (a sequential order, no workers) never
     * stand in for the spec's.
     */
    LoaderBuilder applyTo(LoaderBuilder b, Sampler sampler) {
        b.batchSize(batchSize).rank(rank).worldSize(worldSize)
                .sampler(sampler != null ? sampler : sampler());
        if (workers == null) {
            b.workers(Loader.AUTO);
        } else if (workers > 0) {
            b.workers(workers);
        }
        if (workers == null || workers > 0) {
            if (b.streams()) {
                if (prefetch != null) {
                    b.shardsAhead(prefetch);
                }
            } else if (prefetch == null) {
                b.prefetch(Loader.AUTO);
            } else {
                b.prefetch(prefetch);
            }
        }
        if (timeoutMs != null) {
            b.timeout(Duration.ofMillis(timeoutMs));
        }
        if (memoryLimit != null) {
            b.memoryLimit(memoryLimit);
        }
        if (cores != null && (workers == null || prefetch == null && workers > 0 && !b.streams())) {
            b.budget(cores, 512L << 20); // what AUTO may use: with nothing on AUTO there is no budget
        }
        if (dropLast) {
            b.dropLast();
        }
        b.errorPolicy(errorPolicy());
        if (shuffleWindow > 0) {
            b.shuffleWindow(shuffleWindow);
        }
        if (shuffleWindowBytes != null) {
            b.shuffleWindowBytes(shuffleWindowBytes);
        }
        if (streams != null) {
            b.streams(streams);
        }
        Padding padding = padding();
        if (!padding.isEmpty()) {
            try {
                b.padding(padding);
            } catch (IllegalArgumentException e) {
                throw new SpecException(null, e.getMessage()); // it names the glob, stack or field
            }
        } else if (lengths || mask) {
            throw SpecException.naming(lengths ? "lengths" : "mask", "is for padded fields: give {pad} (and {stack}) too");
        }
        return b;
    }
}
