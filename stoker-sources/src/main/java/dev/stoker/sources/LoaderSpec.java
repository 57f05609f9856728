package dev.stoker.sources;

import dev.stoker.ErrorPolicy;
import dev.stoker.Loader;
import dev.stoker.LoaderBuilder;
import dev.stoker.Sampler;
import java.time.Duration;

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
 */
public record LoaderSpec(int batchSize, Integer workers, Integer prefetch, Long seed, Long epoch, int rank, int worldSize,
                         String order, int shuffleWindow, Long shuffleWindowBytes, Long timeoutMs, boolean dropLast,
                         String errors, Integer cores, Long memoryLimit, Integer streams, boolean inMemory) {

    /** The defaults: batches of 32, workers and prefetch tuned, shuffled with seed 0, epoch 0, one rank, errors fail. */
    public static final LoaderSpec DEFAULT = new LoaderSpec(32, null, null, null, null, 0, 1, "shuffle", 0, null, null, false,
            "fail", null, null, null, false);

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
        order = SpecException.oneOf("order", order == null ? "shuffle" : order, "shuffle", "sequential", "blocks");
        SpecException.atLeast("shuffle_window", shuffleWindow, 0);
        if (shuffleWindowBytes != null) {
            SpecException.atLeast("shuffle_window_bytes", shuffleWindowBytes, 0);
        }
        if (timeoutMs != null) {
            SpecException.atLeast("timeout_ms", timeoutMs, 1);
        }
        errors = SpecException.oneOf("errors", errors == null ? "fail" : errors, "fail", "skip-sample", "skip-shard");
        if (cores != null) {
            SpecException.atLeast("cores", cores, 1);
        }
        if (memoryLimit != null) {
            SpecException.atLeast("memory_limit", memoryLimit, 1);
        }
        if (streams != null) {
            SpecException.atLeast("streams", streams, worldSize);
        }
    }

    /** The same with {@code batchSize} samples per batch. */
    public LoaderSpec withBatchSize(int batchSize) {
        return new LoaderSpec(batchSize, workers, prefetch, seed, epoch, rank, worldSize, order, shuffleWindow,
                shuffleWindowBytes, timeoutMs, dropLast, errors, cores, memoryLimit, streams, inMemory);
    }

    /** The same with these workers and prefetch (null: {@code auto}). */
    public LoaderSpec withWorkers(Integer workers, Integer prefetch) {
        return new LoaderSpec(batchSize, workers, prefetch, seed, epoch, rank, worldSize, order, shuffleWindow,
                shuffleWindowBytes, timeoutMs, dropLast, errors, cores, memoryLimit, streams, inMemory);
    }

    /** The same for {@code rank} of {@code worldSize}. */
    public LoaderSpec withRank(int rank, int worldSize) {
        return new LoaderSpec(batchSize, workers, prefetch, seed, epoch, rank, worldSize, order, shuffleWindow,
                shuffleWindowBytes, timeoutMs, dropLast, errors, cores, memoryLimit, streams, inMemory);
    }

    /** The error policy {@link #errors} names. */
    public ErrorPolicy errorPolicy() {
        return switch (errors) {
            case "skip-sample" -> ErrorPolicy.SKIP_SAMPLE;
            case "skip-shard" -> ErrorPolicy.SKIP_SHARD;
            default -> ErrorPolicy.FAIL;
        };
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
            case "shuffle" -> Sampler.shuffle();
            case "blocks" -> Sampler.blocks((long) batchSize * worldSize);
            default -> Sampler.sequential();
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
     */
    LoaderBuilder configure(LoaderBuilder b, Sampler sampler) {
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
        b.dropLast(dropLast).errorPolicy(errorPolicy());
        if (shuffleWindow > 0) {
            b.shuffleWindow(shuffleWindow);
        }
        if (shuffleWindowBytes != null) {
            b.shuffleWindowBytes(shuffleWindowBytes);
        }
        if (streams != null) {
            b.streams(streams);
        }
        return b;
    }
}
