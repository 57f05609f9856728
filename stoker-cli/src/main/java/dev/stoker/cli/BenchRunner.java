package dev.stoker.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.stoker.Batch;
import dev.stoker.Loader;
import dev.stoker.LoaderBuilder;
import dev.stoker.LoaderState;
import dev.stoker.LoaderStats;
import dev.stoker.sources.LoaderSpec;
import dev.stoker.sources.Recipe;
import dev.stoker.sources.SourceSpec;
import dev.stoker.storage.io.PendingFile;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.locks.LockSupport;
import picocli.CommandLine;

/** Runs one or more loader configurations over a source and reports what each measured. */
final class BenchRunner {
    private static final JsonFactory JSON = new JsonFactory();

    private final BenchOptions o;
    private final PrintWriter out;
    private String source;
    /** The order's seed: the resumed state's, or the one given. */
    private long seed;
    /** Tokens per sample, for token sources (tokens/s is reported); 0 otherwise. */
    private double tokensPerSample;

    BenchRunner(BenchOptions options, PrintWriter out) {
        this.o = options;
        this.out = out;
    }

    /**
     * {@code stoker bench SOURCE}: opens {@code source} with the loader spec {@code options} give,
     * runs the configurations, and prints what the source reports (its cache, its traffic) to stderr.
     */
    static int bench(SourceSpec source, BenchOptions options, CommandLine cl) throws IOException {
        LoaderSpec loader = options.loader();
        try (Recipe recipe = dev.stoker.sources.Specs.open(source, loader)) {
            int rc = new BenchRunner(options, cl.getOut()).run(recipe, loader);
            recipe.report().forEach(cl.getErr()::println);
            return rc;
        }
    }

    /**
     * One configuration's outcome; {@code workers} and {@code prefetch} are those in use at the
     * end, which the autotuner chose where {@code autoWorkers}/{@code autoPrefetch}.
     */
    record Result(int workers, int prefetch, boolean autoWorkers, boolean autoPrefetch, List<String> tuning,
                  long batches, LoaderStats stats, double seconds, String digest, FirstBatch first) {
        String workersLabel() {
            return autoWorkers ? "auto:" + workers : String.valueOf(workers);
        }

        String prefetchLabel() {
            return autoPrefetch && workers > 0 ? "auto:" + prefetch : String.valueOf(prefetch);
        }

        double samplesPerSec() {
            return seconds == 0 ? 0 : stats.samples() / seconds;
        }

        double waitFraction() {
            return seconds == 0 ? 0 : Math.min(1, stats.waitNanos() / 1e9 / seconds);
        }
    }

    /**
     * The first batch and the rates around it. {@code seconds}: from the command's start
     * ({@link CommandClock}; for a later run of a sweep, from its own set-up) to the first batch,
     * as a user waits for it: the JVM, opening, listing and indexing the data included.
     * {@code startSeconds}: the part of it before the loader's first pass; {@code loaderSeconds}:
     * the rest, from the first request (before the first {@code iterator()}) to the first batch.
     * The rates are on the consumer's clock, as the PyTorch peer reads it
     * ({@code bench/peers/torch_peer.py}): samples/s from the first batch's arrival to the end of
     * the loop, the first batch's samples left out (the peer's headline, {@code rate_steady});
     * samples/s from the first request to the end of the loop (the peer's {@code rate}); with
     * {@code --epochs}, samples/s from the end of the first epoch to the end of the loop (NaN with
     * one epoch). A fresh process's start-up (worker threads or processes, and for Stoker the
     * JIT's first compilations) weighs on the first batch, and for about a second of compiling, on
     * the first epoch.
     */
    record FirstBatch(double seconds, double startSeconds, double loaderSeconds, double samplesPerSecAfter,
                      double samplesPerSecFromStart, double samplesPerSecAfterFirstEpoch) {
        static final FirstBatch NONE = new FirstBatch(Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN);
    }

    /** Runs every configuration of the sweep {@code --workers} and {@code --prefetch} give over {@code recipe}. */
    int run(Recipe recipe, LoaderSpec loader) throws IOException {
        this.source = recipe.name();
        this.tokensPerSample = recipe.tokensPerSample();
        List<Integer> workerList = parseList("--workers", o.workers);
        List<Integer> prefetchList = parseList("--prefetch", o.prefetch);
        boolean sweep = workerList.size() * prefetchList.size() > 1;
        if (sweep && (o.digests != null || o.ids != null || o.stopAfter != null || o.saveState != null || o.resume != null)) {
            throw new Main.UsageException("--digests, --ids, --stop-after, --save-state and --resume take one configuration, not a sweep");
        }
        if (o.resume != null && o.epoch != null) {
            throw new Main.UsageException("--epoch does not go with --resume: the state holds the epoch it resumes");
        }
        if (o.epochs < 1) {
            throw new Main.UsageException("--epochs must be >= 1, got " + o.epochs);
        }
        if (o.epochs > 1 && o.steps != null) {
            throw new Main.UsageException("--steps counts batches of one epoch; it does not go with --epochs");
        }
        if ((o.stopAfter == null) != (o.saveState == null)) {
            throw new Main.UsageException("--stop-after and --save-state go together");
        }
        if (o.stopAfter != null && o.stopAfter < 0 || o.steps != null && o.steps < 0 || o.stepMs < 0) {
            throw new Main.UsageException("--stop-after, --steps and --step-ms must be >= 0");
        }
        if (sweep && o.trace != null) {
            throw new Main.UsageException("--trace takes one configuration, not a sweep");
        }
        for (Path p : new Path[] {o.saveState, o.digests, o.ids, o.plot, o.trace}) {
            if (p != null && !Files.isDirectory(p.toAbsolutePath().getParent())) {
                throw new Main.UsageException(p + ": no such directory " + p.toAbsolutePath().getParent());
            }
            if (p != null) {
                PendingFile.check(p); // before the run: a device, a FIFO or a folder is refused
            }
        }
        LoaderState resumeState = o.resume == null ? null : readStates(o.resume);
        this.seed = resumeState != null ? resumeState.seed() : loader.orderSeed();
        // a digest only when asked for: hashing every batch costs the consumer more than a W1 batch (CLI.md)
        boolean hashing = o.json && o.digest || o.digests != null;

        List<Result> results = new ArrayList<>();
        for (Integer w : workerList) {
            for (Integer p : prefetchList) {
                long commandStart = CommandClock.claimForFirstRun();
                long from = commandStart >= 0 ? commandStart : System.nanoTime();
                Result r = runOne(recipe.builder(loader.withWorkers(w, p)), loader, from, w, p, resumeState, hashing);
                LoaderStats st = r.stats;
                if (st.samples() == 0 && resumeState == null && o.stopAfter == null && o.steps == null) {
                    // an empty run is a failure to say, not a success to report
                    throw new IOException(source + ": nothing to deliver: " + (st.skipped() + st.skippedShards() > 0
                            ? "every sample was left out as unreadable (" + st.skipped() + " samples, " + st.skippedShards() + " shards)"
                            : "the input gives no sample (shorter than one? a --seq-len longer than its tokens or text, or no record in it)"));
                }
                results.add(r);
                if (o.json) {
                    out.println(json(r));
                } else {
                    if (results.size() == 1) {
                        printHeader();
                    }
                    printRow(r);
                }
                out.flush();
            }
        }
        if (o.plot != null) {
            SweepPlot.write(o.plot, source, results);
            if (!o.json) {
                out.println("plot: " + o.plot);
            }
        }
        if (sweep && !o.json) {
            Result best = results.stream().max(java.util.Comparator.comparingDouble(Result::samplesPerSec)).orElseThrow();
            out.printf(Locale.ROOT, "best: workers %s, prefetch %s: %s samples/s, consumer waited %.1f%%%n",
                    best.workersLabel(), best.prefetchLabel(), grouped(best.samplesPerSec()), 100 * best.waitFraction());
        }
        return 0;
    }

    private Result runOne(LoaderBuilder b, LoaderSpec spec, long from, Integer workers, Integer prefetch, LoaderState resume,
                          boolean hashing) throws IOException {
        ChromeTrace trace = o.trace == null ? null : new ChromeTrace(2_000_000);
        if (trace != null) {
            b.tracer(trace);
        }
        spec.start(b, resume);
        Loader loader;
        try {
            loader = b.build();
        } catch (IllegalArgumentException e) {
            if (e instanceof dev.stoker.ResumeException) {
                throw new Main.BadDataException(String.join(", ", o.resume.stream().map(Path::toString).toList()) + ": "
                        + e.getMessage(), e);
            }
            throw new Main.UsageException(e.getMessage());
        }
        MessageDigest md = sha256();
        MessageDigest all = sha256();
        HexFormat hex = HexFormat.of();
        long delivered = 0;
        long firstAt = 0;
        long firstSamples = 0;
        long samples = 0;
        long epochEndedAt = 0; // when the first epoch ended, and its samples
        long epochSamples = 0;
        long startedAt = System.nanoTime();
        PendingFile digestsFile = o.digests == null ? null : new PendingFile(o.digests);
        PendingFile idsFile = o.ids == null ? null : new PendingFile(o.ids);
        try (loader;
             BufferedWriter digests = text(digestsFile);
             BufferedWriter ids = text(idsFile)) {
            long before = loader.state().delivered();
            long stepNanos = Math.round(o.stepMs * 1e6);
            long perEpoch = loader.batches();
            me.tongfei.progressbar.ProgressBar bar = !o.json && System.console() != null && perEpoch > 0
                    ? new me.tongfei.progressbar.ProgressBarBuilder().setTaskName(source + " w" + (workers == null ? "auto" : String.valueOf(workers)))
                    .setInitialMax(perEpoch * o.epochs).setStyle(me.tongfei.progressbar.ProgressBarStyle.ASCII)
                    .setUnit(" batches", 1).setUpdateIntervalMillis(250).showSpeed().clearDisplayOnFinish().build()
                    : null;
            epochs:
            for (int e = 0; e < o.epochs; e++) {
                Iterator<Batch> it = loader.iterator();
                while (it.hasNext()) {
                    if (o.steps != null && before + delivered >= o.steps || o.stopAfter != null && delivered >= o.stopAfter) {
                        break epochs;
                    }
                    Batch batch = it.next();
                    delivered++;
                    samples += batch.size();
                    if (delivered == 1) {
                        firstAt = System.nanoTime();
                        firstSamples = batch.size();
                    }
                    if (hashing) {
                        batch.digest(md);
                        byte[] d = md.digest();
                        all.update(d);
                        if (digests != null) {
                            digests.write(hex.formatHex(d));
                            digests.write('\n');
                        }
                    }
                    if (ids != null) {
                        StringBuilder line = new StringBuilder();
                        for (int r = 0; r < batch.size(); r++) {
                            if (r > 0) {
                                line.append(' ');
                            }
                            line.append(batch.index(r));
                        }
                        ids.write(line.append('\n').toString());
                    }
                    if (stepNanos > 0) {
                        step(stepNanos);
                    }
                    if (bar != null && (delivered & 63) == 0) {
                        bar.stepTo(delivered);
                    }
                }
                if (e == 0) {
                    epochEndedAt = System.nanoTime();
                    epochSamples = samples;
                }
            }
            long endedAt = System.nanoTime();
            if (bar != null) {
                bar.close();
            }
            for (BufferedWriter w : new BufferedWriter[] {digests, ids}) {
                if (w != null) {
                    w.flush();
                }
            }
            for (PendingFile f : new PendingFile[] {digestsFile, idsFile}) {
                if (f != null) {
                    f.commit();
                }
            }
            if (o.saveState != null) {
                loader.state().write(o.saveState);
            }
            if (trace != null) {
                loader.close(); // every worker's last span is in
                trace.write(o.trace);
            }
            LoaderStats s = loader.stats();
            double seconds = s.wallNanos() / 1e9;
            // the rate after the first epoch: with --epochs, the loader past the JVM's warm-up
            double afterEpoch = samples > epochSamples && epochSamples > 0
                    ? (samples - epochSamples) / ((endedAt - epochEndedAt) / 1e9) : Double.NaN;
            FirstBatch first = delivered < 2 ? FirstBatch.NONE : new FirstBatch((firstAt - from) / 1e9,
                    (startedAt - from) / 1e9, (firstAt - startedAt) / 1e9,
                    (s.samples() - firstSamples) / ((endedAt - firstAt) / 1e9), s.samples() / ((endedAt - startedAt) / 1e9),
                    afterEpoch);
            return new Result(loader.workers(), loader.prefetch(), workers == null,
                    prefetch == null && !Integer.valueOf(0).equals(workers), loader.tuningHistory(), delivered, s, seconds,
                    hashing ? hex.formatHex(all.digest()) : null, first);
        } finally {
            for (PendingFile f : new PendingFile[] {digestsFile, idsFile}) {
                if (f != null) {
                    f.abandon(); // a run that failed leaves neither
                }
            }
        }
    }

    /** A text file's writer over {@code file}'s stream, or null for none. */
    private static BufferedWriter text(PendingFile file) {
        return file == null ? null : new BufferedWriter(new java.io.OutputStreamWriter(file.out(), StandardCharsets.UTF_8));
    }

    /**
     * The decompression ceiling of {@code source}'s projection on {@code threads} threads, printed
     * to {@code err} as a line "ceiling: …": a dataset of its own, after the loader's runs.
     */
    static void ceiling(dev.stoker.sources.Parquet source, int threads, PrintWriter err) throws IOException, InterruptedException {
        try (var data = source.dataset()) {
            var c = dev.stoker.parquet.ParquetCeiling.of(data, threads);
            err.printf(Locale.ROOT, "ceiling: %d threads decompressed %.2f MB into %.2f MB in %.3f s: %.0f MB/s, %.2f M "
                    + "rows/s%n", c.threads(), c.compressedBytes() / 1e6, c.uncompressedBytes() / 1e6, c.seconds(),
                    c.uncompressedBytes() / 1e6 / c.seconds(), data.size() / 1e6 / c.seconds());
        }
    }

    /** A simulated accelerator step: the host thread waits, as it would for a device. */
    static void step(long nanos) {
        long end = System.nanoTime() + nanos;
        long left;
        while ((left = end - System.nanoTime()) > 0) {
            LockSupport.parkNanos(left);
        }
    }

    private void printHeader() {
        out.printf(Locale.ROOT, "%-10s %7s %8s %6s %8s %10s %8s %12s %9s %6s   %s%n", "source", "workers", "prefetch",
                "batch", "batches", "samples", "seconds", "samples/s", "MB/s", "wait%", "stage share: fetch / transform / collate");
    }

    private void printRow(Result r) {
        LoaderStats s = r.stats;
        double work = Math.max(1, s.fetchNanos() + s.transformNanos() + s.collateNanos());
        out.printf(Locale.ROOT, "%-10s %7s %8s %6d %8d %10d %8.3f %12s %9.1f %6.1f   %3.0f%% / %3.0f%% / %3.0f%%%n", source,
                r.workersLabel(), r.prefetchLabel(), o.batch, r.batches, s.samples(), r.seconds, grouped(r.samplesPerSec()),
                r.seconds == 0 ? 0 : s.bytes() / r.seconds / 1e6, 100 * r.waitFraction(),
                100 * s.fetchNanos() / work, 100 * s.transformNanos() / work, 100 * s.collateNanos() / work);
        if (!Double.isNaN(r.first.seconds())) {
            out.printf(Locale.ROOT, "%-10s first batch %.2f s from the start (%.2f s before the loader's first pass: "
                    + "the JVM, opening and indexing the data)%n", "", r.first.seconds(), r.first.startSeconds());
        }
        if (s.skippedShards() > 0) {
            out.printf(Locale.ROOT, "%-10s skipped %d unreadable shards (or their rest)%n", "", s.skippedShards());
        }
        if (s.skipped() > 0) {
            out.printf(Locale.ROOT, "%-10s skipped %d bad samples%n", "", s.skipped());
        }
        if (s.truncatedSamples() > 0) {
            out.printf(Locale.ROOT, "%-10s padding cut %,d samples (%.1f%%) to their length, dropping %,d values%n", "",
                    s.truncatedSamples(), s.samples() == 0 ? 0 : 100.0 * s.truncatedSamples() / s.samples(), s.droppedValues());
        }
        if (!Double.isNaN(s.shardShare())) {
            out.printf(Locale.ROOT, "%-10s shuffle: %.0f%% of a batch from its most frequent shard, samples moved %.1f places"
                    + " on average%n", "", 100 * s.shardShare(), s.meanDisplacement());
        }
        for (String t : r.tuning) {
            out.printf(Locale.ROOT, "%-10s autotune %s%n", "", t);
        }
        out.printf(Locale.ROOT, "%-10s -> %s%n", "", Diagnosis.of(s, r.workers, r.seconds, o.stepMs,
                Runtime.getRuntime().availableProcessors()));
    }

    private String json(Result r) throws IOException {
        LoaderStats s = r.stats;
        StringWriter w = new StringWriter();
        try (JsonGenerator g = JSON.createGenerator(w)) {
            g.writeStartObject();
            g.writeStringField("source", source);
            g.writeNumberField("workers", r.workers);
            g.writeNumberField("prefetch", r.prefetch);
            g.writeBooleanField("autoWorkers", r.autoWorkers);
            g.writeBooleanField("autoPrefetch", r.autoPrefetch);
            g.writeArrayFieldStart("tuning");
            for (String t : r.tuning) {
                g.writeString(t);
            }
            g.writeEndArray();
            g.writeNumberField("batch", o.batch);
            g.writeNumberField("batches", r.batches);
            g.writeNumberField("samples", s.samples());
            g.writeNumberField("seconds", r.seconds);
            g.writeNumberField("samplesPerSec", r.samplesPerSec());
            if (!Double.isNaN(r.first.seconds())) {
                g.writeNumberField("firstBatchSeconds", r.first.seconds());
                g.writeNumberField("startSeconds", r.first.startSeconds());
                g.writeNumberField("loaderFirstBatchSeconds", r.first.loaderSeconds());
                g.writeNumberField("samplesPerSecAfterFirst", r.first.samplesPerSecAfter());
                g.writeNumberField("samplesPerSecFromStart", r.first.samplesPerSecFromStart());
                if (tokensPerSample > 0) {
                    g.writeNumberField("tokensPerSecAfterFirst", r.first.samplesPerSecAfter() * tokensPerSample);
                }
                if (!Double.isNaN(r.first.samplesPerSecAfterFirstEpoch())) {
                    g.writeNumberField("samplesPerSecAfterFirstEpoch", r.first.samplesPerSecAfterFirstEpoch());
                }
            }
            g.writeNumberField("bytesPerSec", r.seconds == 0 ? 0 : s.bytes() / r.seconds);
            if (tokensPerSample > 0) {
                g.writeNumberField("tokensPerSec", r.samplesPerSec() * tokensPerSample);
            }
            g.writeNumberField("consumerWaitFraction", r.waitFraction());
            if (!Double.isNaN(s.shardShare())) {
                g.writeNumberField("shardShare", s.shardShare());
            }
            if (!Double.isNaN(s.meanDisplacement())) {
                g.writeNumberField("meanDisplacement", s.meanDisplacement());
            }
            g.writeNumberField("skipped", s.skipped());
            g.writeNumberField("skippedShards", s.skippedShards());
            g.writeNumberField("truncatedSamples", s.truncatedSamples());
            g.writeNumberField("droppedValues", s.droppedValues());
            g.writeStringField("digest", r.digest);
            g.writeStringField("diagnosis", Diagnosis.of(s, r.workers, r.seconds, o.stepMs, Runtime.getRuntime().availableProcessors()));
            g.writeObjectFieldStart("stages");
            g.writeNumberField("fetch", s.fetchNanos() / 1e9);
            g.writeNumberField("transform", s.transformNanos() / 1e9);
            g.writeNumberField("collate", s.collateNanos() / 1e9);
            g.writeNumberField("wait", s.waitNanos() / 1e9);
            g.writeEndObject();
            g.writeNumberField("seed", seed);
            g.writeNumberField("epoch", o.epoch == null ? 0 : o.epoch);
            g.writeNumberField("rank", o.rank);
            g.writeNumberField("worldSize", o.worldSize);
            g.writeEndObject();
        }
        return w.toString();
    }

    /** Numbers, and {@code auto} as null. */
    private static List<Integer> parseList(String option, String value) {
        List<Integer> out = new ArrayList<>();
        for (String part : value.split(",")) {
            String p = part.trim();
            if (p.equals("auto")) {
                out.add(null);
                continue;
            }
            try {
                int v = Integer.parseInt(p);
                if (v < 0 || option.equals("--prefetch") && v == 0) {
                    throw new NumberFormatException();
                }
                out.add(v);
            } catch (NumberFormatException e) {
                throw new Main.UsageException(option + " takes auto, a number or a comma-separated list; got '" + value + "'");
            }
        }
        return out;
    }

    /** One state file, or the {@link LoaderState#merge} of every old rank's (elastic resume of a stream). */
    private static LoaderState readStates(java.util.List<Path> files) throws IOException {
        java.util.List<LoaderState> states = new java.util.ArrayList<>();
        for (Path f : files) {
            states.add(readState(f));
        }
        if (states.size() == 1) {
            return states.get(0);
        }
        try {
            return LoaderState.merge(states);
        } catch (IllegalArgumentException e) {
            throw new Main.BadDataException(String.join(", ", files.stream().map(Path::toString).toList()) + ": "
                    + e.getMessage(), e);
        }
    }

    private static LoaderState readState(Path file) throws IOException {
        try {
            return LoaderState.read(file);
        } catch (NoSuchFileException e) {
            throw new Main.BadDataException(file + ": no such state file", e);
        } catch (java.nio.charset.CharacterCodingException e) {
            throw new Main.BadDataException(file + ": loader state: not text (a state file is JSON written by --save-state)", e);
        } catch (IllegalArgumentException e) {
            throw new Main.BadDataException(e.getMessage(), e); // it names the file
        } catch (IOException e) {
            throw new IOException(file + ": " + (e.getMessage() != null ? e.getMessage() : e.toString()), e);
        }
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    static String grouped(double v) {
        return String.format(Locale.ROOT, "%,.0f", v);
    }
}
