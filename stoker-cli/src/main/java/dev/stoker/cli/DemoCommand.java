package dev.stoker.cli;

import dev.stoker.Batch;
import dev.stoker.DType;
import dev.stoker.DirectDataset;
import dev.stoker.Field;
import dev.stoker.Loader;
import dev.stoker.LoaderBuilder;
import dev.stoker.LoaderStats;
import dev.stoker.Row;
import dev.stoker.Schema;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Iterator;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.zip.CRC32C;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code stoker demo}: the problem Stoker solves, in ten seconds. The same data and the same
 * simulated training step, loaded the naive way (on the training thread, nothing ahead) and the
 * Stoker way (workers and a prefetch window, both autotuned), with throughput, accelerator idle
 * time and the time a full training run would take side by side; a trace of the Stoker run and a
 * chart of both are written.
 */
@Command(name = "demo", description = "Load a generated dataset naively and with Stoker against a simulated training step; compare.")
final class DemoCommand implements Callable<Integer> {
    static final int RECORD = 4096;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    @Option(names = "--out", paramLabel = "DIR", description = "Where to write the generated dataset (default: stoker-demo-USER in the system temp directory, the user's own).")
    Path out;

    @Option(names = "--samples", defaultValue = "6400", description = "Records to generate (default ${DEFAULT-VALUE}).")
    int samples;

    @Option(names = "--batch", defaultValue = "64", description = "Samples per batch (default ${DEFAULT-VALUE}).")
    int batch;

    @Option(names = "--step-ms", defaultValue = "20", description = "Simulated training step per batch (default ${DEFAULT-VALUE} ms).")
    double stepMs;

    @Option(names = "--decode-us", defaultValue = "400", description = "CPU time to decode one sample, like a JPEG (default ${DEFAULT-VALUE} us).")
    double decodeUs;

    @Option(names = "--workers", description = "Stoker's workers (default: autotuned, up to one per core).")
    Integer workers;

    @Option(names = "--pytorch", description = "Tell the story with a real PyTorch training loop (python/examples/"
            + "train_resnet.py), fed by the DataLoader and by stoker.Loader; needs Python with torch and torchvision.")
    boolean pytorch;

    @Option(names = "--steps", defaultValue = "30", description = "With --pytorch: training steps per loader (default ${DEFAULT-VALUE}).")
    int steps;

    /** The run an ETA is given for: 90 epochs of ImageNet-1k's training set. */
    static final long RUN_SAMPLES = 90L * 1_281_167;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws IOException {
        if (samples < 1 || batch < 1 || stepMs < 0 || decodeUs < 0 || workers != null && workers < 1) {
            throw new Main.UsageException("--samples, --batch and --workers must be >= 1; --step-ms and --decode-us >= 0");
        }
        PrintWriter o = spec.commandLine().getOut();
        Path dir = out != null ? out : dev.stoker.storage.io.UserCache.ownFolder(Path.of(System.getProperty("java.io.tmpdir"),
                "stoker-demo-" + System.getProperty("user.name"))); // a folder of /tmp another user made is refused
        if (pytorch) {
            if (steps < 2) {
                throw new Main.UsageException("--steps must be >= 2");
            }
            try {
                return PytorchDemo.run(o, dir.resolve("shards"), steps, batch == 64 ? 32 : batch);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return 1;
            }
        }
        Files.createDirectories(dir);
        Path file = dir.resolve("demo.rec");
        generate(file, samples);
        Path tracePath = dir.resolve("stoker-trace.json");
        Path plotPath = dir.resolve("demo.png");
        o.printf(Locale.ROOT, "Stoker demo: %,d records of %d KiB in %s%n", samples, RECORD / 1024, file);
        o.printf(Locale.ROOT, "each sample is checked (CRC32C) and decoded (~%.0f us of CPU, like a small JPEG);%n", decodeUs);
        o.printf(Locale.ROOT, "each batch of %d feeds a simulated training step of %.0f ms.%n%n", batch, stepMs);

        try (RecordFile data = new RecordFile(file, Math.round(decodeUs * 1000))) {
            Outcome naive = run(o, "naive ", data, 0, null);
            ChromeTrace trace = new ChromeTrace(200_000);
            Outcome stoker = run(o, "stoker", data, workers, trace);
            trace.write(tracePath);
            SweepPlot.write(plotPath, "demo", java.util.List.of(naive.result("naive"), stoker.result("stoker")));
            o.println();
            for (String t : stoker.tuning) {
                o.println("autotune " + t);
            }
            String how = (stoker.auto ? "auto: " : "") + stoker.workers + " workers, " + stoker.prefetch + " ahead";
            double ideal = stepMs <= 0 ? 0 : RUN_SAMPLES / (batch * 1000.0 / stepMs);
            o.printf(Locale.ROOT, "%n%-26s %20s %26s%n", "", "naive", "stoker");
            o.printf(Locale.ROOT, "%-26s %20s %26s%n", "loading", "training thread", how);
            o.printf(Locale.ROOT, "%-26s %20s %26s%n", "throughput", rate(naive), rate(stoker));
            o.printf(Locale.ROOT, "%-26s %17.1f ms %23.1f ms%n", "time per step", naive.msPerStep(), stoker.msPerStep());
            o.printf(Locale.ROOT, "%-26s %19.1f%% %25.1f%%%n", "accelerator idle", 100 * naive.stats.waitFraction(),
                    100 * stoker.stats.waitFraction());
            o.printf(Locale.ROOT, "%-26s %20s %26s%n", "ETA, 90 ImageNet epochs", eta(naive), eta(stoker));
            o.printf(Locale.ROOT, "%-26s %20s %25.2fx%n", "speed-up", "", naive.seconds() / stoker.seconds());
            if (ideal > 0) {
                o.printf(Locale.ROOT, "(the step alone would take %s: every hour above it is the accelerator waiting for data)%n",
                        EstimateCommand.duration(ideal));
            }
            o.printf(Locale.ROOT, "%nSame %s batches both ways (digest %s).%n",
                    naive.digest.equals(stoker.digest) ? "bytes in the same" : "DIFFERENT", stoker.digest.substring(0, 16));
            o.println("trace: " + tracePath + " (open in https://ui.perfetto.dev or chrome://tracing)");
            o.println("plot:  " + plotPath);
            o.println("Try: ./stoker bench synthetic --work-us 400 --step-ms 20 --batch 64 --workers 0,1,2,auto");
            o.println(" or: ./stoker demo --pytorch   (a real PyTorch training loop, fed by the DataLoader and by stoker.Loader)");
            o.flush();
            return naive.digest.equals(stoker.digest) ? 0 : 1;
        }
    }

    private record Outcome(LoaderStats stats, long batches, String digest, int workers, int prefetch, boolean auto,
                           java.util.List<String> tuning) {
        double seconds() {
            return stats.wallNanos() / 1e9;
        }

        BenchRunner.Result result(String name) {
            return new BenchRunner.Result(workers, prefetch, auto, auto && workers > 0, tuning, batches, stats,
                    seconds(), digest, BenchRunner.FirstBatch.NONE);
        }

        double msPerStep() {
            return batches == 0 ? 0 : stats.wallNanos() / 1e6 / batches;
        }
    }

    private static String rate(Outcome r) {
        return String.format(Locale.ROOT, "%,.0f samples/s", r.stats.samplesPerSecond());
    }

    private static String eta(Outcome r) {
        double rate = r.stats.samplesPerSecond();
        return rate <= 0 ? "-" : EstimateCommand.duration(RUN_SAMPLES / rate);
    }

    /** One run: {@code workers} threads, each two batches ahead, or, when null, both autotuned. */
    private Outcome run(PrintWriter o, String label, RecordFile data, Integer workers, ChromeTrace trace) {
        java.security.MessageDigest md = BenchRunner.sha256();
        java.security.MessageDigest all = BenchRunner.sha256();
        long stepNanos = Math.round(stepMs * 1e6);
        LoaderBuilder builder = Loader.builder(data).batchSize(batch).shuffle().seed(1);
        if (workers == null) {
            builder.workers(Loader.AUTO).prefetch(Loader.AUTO);
        } else if (workers > 0) {
            builder.workers(workers).prefetch(2 * workers);
        }
        if (trace != null) {
            builder.tracer(trace);
        }
        try (Loader loader = builder.build()) {
            long total = loader.batches();
            ProgressBar bar = System.console() != null
                    ? new ProgressBarBuilder().setTaskName(label).setInitialMax(total).setStyle(ProgressBarStyle.ASCII)
                    .setUpdateIntervalMillis(100).setUnit(" batches", 1).showSpeed().build()
                    : null;
            long n = 0;
            try {
                Iterator<Batch> it = loader.iterator();
                while (it.hasNext()) {
                    Batch b = it.next();
                    b.digest(md);
                    all.update(md.digest());
                    BenchRunner.step(stepNanos);
                    n++;
                    if (bar != null) {
                        bar.step();
                    }
                }
            } finally {
                if (bar != null) {
                    bar.close();
                }
            }
            LoaderStats s = loader.stats();
            String how = workers != null && workers == 0 ? "on the training thread, nothing ahead"
                    : (loader.autotuned() ? "autotuned to " : "") + loader.workers() + " workers, " + loader.prefetch()
                    + " batches ahead";
            if (bar == null) {
                o.printf(Locale.ROOT, "%s  %d batches in %.2f s (%s)%n", label, n, s.wallNanos() / 1e9, how);
                o.flush();
            }
            return new Outcome(s, n, java.util.HexFormat.of().formatHex(all.digest()), loader.workers(), loader.prefetch(),
                    loader.autotuned(), loader.tuningHistory());
        }
    }

    /** Writes {@code n} records: index (int64), CRC32C of the payload (int32), payload. Skips if present and complete. */
    static void generate(Path file, int n) throws IOException {
        if (Files.exists(file) && Files.size(file) == (long) n * RECORD) {
            return;
        }
        dev.stoker.storage.io.PendingFile.write(file, out -> {
            ByteBuffer rec = ByteBuffer.allocate(RECORD).order(ByteOrder.LITTLE_ENDIAN);
            CRC32C crc = new CRC32C();
            java.util.SplittableRandom r = new java.util.SplittableRandom(42);
            for (long i = 0; i < n; i++) {
                rec.clear();
                rec.putLong(i);
                rec.putInt(0);
                while (rec.remaining() >= 8) {
                    rec.putLong(r.nextLong());
                }
                while (rec.hasRemaining()) {
                    rec.put((byte) r.nextInt());
                }
                crc.reset();
                crc.update(rec.array(), 12, RECORD - 12);
                rec.putInt(8, (int) crc.getValue());
                out.write(rec.array(), 0, RECORD);
            }
        });
    }

    /** The demo's record file, memory-mapped; a sample is a checked, "decoded" record. */
    static final class RecordFile implements DirectDataset, AutoCloseable {
        private final Path path;
        private final Arena arena = Arena.ofShared();
        private final MemorySegment map;
        private final long workNanos;
        private final Schema schema = Schema.of(Field.tensor("payload", DType.UINT8, RECORD - 12),
                Field.scalar("id", DType.INT64));

        RecordFile(Path path, long workNanos) throws IOException {
            this.path = path;
            this.workNanos = workNanos;
            try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
                this.map = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size(), arena);
            }
        }

        @Override
        public long size() {
            return map.byteSize() / RECORD;
        }

        @Override
        public Schema schema() {
            return schema;
        }

        @Override
        public String name() {
            return path.toString();
        }

        @Override
        public void read(long index, Row row) throws IOException {
            long at = index * RECORD;
            long id = map.get(LONG, at);
            if (id != index) {
                throw new IOException(path + ": record " + index + " at byte " + at + " has id " + id);
            }
            CRC32C crc = new CRC32C();
            crc.update(map.asSlice(at + 12, RECORD - 12).asByteBuffer());
            if ((int) crc.getValue() != map.get(INT, at + 8)) {
                throw new IOException(path + ": record " + index + " at byte " + at + ": checksum mismatch");
            }
            long end = System.nanoTime() + workNanos;
            while (System.nanoTime() < end) {
                Thread.onSpinWait();
            }
            row.copy(0, map, at + 12, RECORD - 12);
            row.putLong(1, 0, id);
        }

        @Override
        public void close() {
            arena.close();
        }
    }
}
