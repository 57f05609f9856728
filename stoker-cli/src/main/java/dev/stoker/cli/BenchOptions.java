package dev.stoker.cli;

import dev.stoker.sources.LoaderSpec;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * The options every {@code stoker bench SOURCE} shares: the loader spec's (a flag is its option's
 * name, dashed; {@code --batch} is {@code batch_size}), and the bench loop's own.
 */
final class BenchOptions {
    @Option(names = {"--batch", "--batch-size"}, paramLabel = "N", description = "Samples per batch (default ${DEFAULT-VALUE}).")
    int batch;

    @Option(names = "--workers", paramLabel = "N|auto|A,B,...", description = "Worker threads; 0 loads on the calling thread; a list runs a sweep (default auto: chosen while running, up to one per core).")
    String workers;

    @Option(names = "--prefetch", paramLabel = "N|auto|A,B,...", description = "Batches prepared ahead; a list runs a sweep (default auto: chosen while running, within 512 MiB of batches).")
    String prefetch;

    @Option(names = "--seed", description = "Seed of the order (default 0; with --resume, the state's, and no other).")
    Long seed;

    @Option(names = "--epoch", description = "Epoch (default 0; not with --resume, whose state holds it).")
    Long epoch;

    @Option(names = "--rank", description = "This process's rank (default ${DEFAULT-VALUE}).")
    int rank;

    @Option(names = "--world-size", description = "Number of ranks (default ${DEFAULT-VALUE}).")
    int worldSize;

    @Option(names = "--order", paramLabel = "shuffle|sequential|blocks",
            description = "Order of the epoch: shuffled, in storage order, or contiguous blocks of a batch in a random "
                    + "order, their grid shifted each epoch (default ${DEFAULT-VALUE}).")
    String order;

    @Option(names = "--memory-limit", paramLabel = "BYTES", description = "The most bytes of batch buffers the loader may "
            + "allocate; a larger configuration is refused before it starts (default: three quarters of the machine's memory).")
    Long memoryLimit;

    @Option(names = "--cores", paramLabel = "N", description = "The cores the autotuner may give workers (default: all of them).")
    Integer cores;

    @Option(names = "--drop-last", description = "Leave out the last batch of an epoch when it would be short.")
    boolean dropLast;

    @Option(names = "--errors", paramLabel = "fail|skip-sample|skip-shard", description = "A sample that cannot be read: fail (default), or leave it (or the rest of its shard) out, counted; "
                    + "under a skip policy a file of any format that cannot be opened (a shard, chunk or file) is left out, counted "
                    + "(an MDS or LitData dataset, whose shards show damage only when read, is read through once as it opens, "
                    + "under skip-shard only).")
    String errors;

    @Option(names = "--epochs", paramLabel = "E", defaultValue = "1", description = "Epochs to run, one after the other (default ${DEFAULT-VALUE}).")
    int epochs;

    @Option(names = "--shuffle-window", paramLabel = "N", description = "Streaming sources: shuffle samples within blocks of N (after the shard order is shuffled).")
    int shuffleWindow;

    @Option(names = "--shuffle-window-bytes", paramLabel = "BYTES",
            description = "Streaming sources: end a shuffle block when its samples reach BYTES (after the transform); "
                    + "alone, it sets the window; 0: stream order (default: 64 MiB when the order is shuffled and "
                    + "--shuffle-window is not given, else no byte bound).")
    Long shuffleWindowBytes;

    @Option(names = "--steps", paramLabel = "N", description = "Stop after batch N of the epoch (a resumed run counts the batches delivered before its state was saved).")
    Long steps;

    @Option(names = "--step-ms", paramLabel = "X", defaultValue = "0", description = "Simulated accelerator step per batch, in milliseconds (default ${DEFAULT-VALUE}).")
    double stepMs;

    @Option(names = "--json", description = "One JSON object per configuration on stdout (its digest: with --digest or --digests).")
    boolean json;

    @Option(names = "--digest", description = "With --json: a SHA-256 of every batch, computed on the consuming thread "
            + "(its time counts in the measured time); without it (or --digests) --json measures the loader alone.")
    boolean digest;

    @Option(names = "--no-digest", hidden = true, description = "The default now; kept so that older scripts run.")
    boolean noDigest;

    @Option(names = "--digests", paramLabel = "FILE", description = "Write the SHA-256 of each delivered batch, one per line.")
    Path digests;

    @Option(names = "--ids", paramLabel = "FILE", description = "Write the sample ids of each delivered batch, one batch per line.")
    Path ids;

    @Option(names = "--stop-after", paramLabel = "N", description = "Deliver N batches, write the loader state (--save-state), exit 0.")
    Long stopAfter;

    @Option(names = "--save-state", paramLabel = "FILE", description = "Where --stop-after writes the loader state.")
    Path saveState;

    @Option(names = "--resume", paramLabel = "FILE", description = "Continue from a saved state; --rank/--world-size may "
            + "differ (elastic resume) when it holds every old rank's part: mid-epoch, another rank or world size takes "
            + "every old rank's state, --resume once per file.")
    java.util.List<Path> resume;

    @Option(names = "--in-memory", description = "Copy the source's local files into memory (/dev/shm, or $STOKER_SHM_DIR) "
            + "before the first epoch, their size checked first against the free memory; no epoch reads the disk again. "
            + "The copy is deleted when the run ends.")
    boolean inMemory;

    @Option(names = "--streams", paramLabel = "N", description = "Streaming sources: split each epoch's shards into N "
            + "streams (default: one a rank), the unit a state records; a job that may resume at another world size "
            + "sets N (a number each world size divides, such as 48).")
    Integer streams;

    @Option(names = "--pad", paramLabel = "GLOB=N", description = "Pad the ragged fields (variable-length lists of numbers) "
            + "whose names match GLOB to N values: a tensor [N] a sample, values past N dropped and counted; repeat for "
            + "several globs (the first that matches a name counts); a stack takes its N from the glob that names it.")
    java.util.Map<String, Integer> pad;

    @Option(names = "--stack", paramLabel = "NAME=F1,F2,...", description = "Stack ragged fields of one length a sample "
            + "into one field NAME, a tensor [N, F] a sample (feature j the j-th field named), N given by the pad glob that names NAME; "
            + "repeatable.")
    java.util.Map<String, String> stack;

    @Option(names = "--stack-dtype", paramLabel = "DTYPE", description = "The dtype of stacks (default float32).")
    String stackDtype;

    @Option(names = "--pad-value", paramLabel = "X", description = "The value past a sample's last "
            + "entry in a padded field or stack (default ${DEFAULT-VALUE}).")
    double padValue;

    @Option(names = "--lengths", description = "Follow each padded field or stack NAME with NAME_len, int64: the entries it holds.")
    boolean lengths;

    @Option(names = "--mask", description = "Follow each padded field or stack NAME with NAME_mask, bool [N]: true where it holds an entry.")
    boolean mask;

    @Option(names = "--plot", paramLabel = "FILE.png", description = "Draw throughput and accelerator idle time per configuration.")
    Path plot;

    @Option(names = "--trace", paramLabel = "FILE.json", description = "Per-worker spans (each batch, with its stage times) "
            + "and the consumer's waits, in Chrome trace-event format (Perfetto, chrome://tracing).")
    Path trace;

    @Option(names = "--timeout-ms", paramLabel = "MS", description = "Fail when one batch takes longer than this to arrive.")
    Long timeoutMs;

    /**
     * The loader spec these flags give, workers and prefetch {@code auto} (each configuration of a
     * sweep sets its own).
     */
    LoaderSpec loader() {
        return new LoaderSpec(batch, null, null, seed, epoch, rank, worldSize, LoaderSpec.Order.of(order), shuffleWindow,
                shuffleWindowBytes, timeoutMs, dropLast, LoaderSpec.Errors.of(errors), cores, memoryLimit, streams, inMemory, pad,
                stacks(), stackDtype, padValue, lengths, mask);
    }

    /** The flags of padding alone (what {@code stoker cat} takes of the loader's options). */
    static final java.util.Set<String> PADDING = java.util.Set.of("--pad", "--stack", "--stack-dtype", "--pad-value",
            "--lengths", "--mask");

    /** {@code --stack NAME=F1,F2}: each stack's fields. */
    private java.util.Map<String, java.util.List<String>> stacks() {
        java.util.Map<String, java.util.List<String>> out = new java.util.LinkedHashMap<>();
        if (stack != null) {
            stack.forEach((name, fields) -> out.put(name, java.util.Arrays.stream(fields.split(",", -1)).map(String::trim).toList()));
        }
        return out;
    }
}
