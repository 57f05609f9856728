package dev.stoker.cli;

import dev.stoker.formats.io.TokenPreparer;
import dev.stoker.formats.tokens.Tokenizer;
import dev.stoker.sources.LocalCopies;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine;

/** {@code stoker prepare ...}: turns raw data into the formats Stoker (and its peers) read fastest. */
@Command(name = "prepare", description = "Prepare data: text to token files, image folders to tar shards.")
final class PrepareCommand implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "what to prepare is needed (for example: tokens)");
    }

    @Command(name = "tokens", description = "Text (.txt: one document per file) or JSON lines (.jsonl: one document per line; "
            + "plain, .gz or .zst) to token files, an end-of-text token after each document.")
    static final class Tokens implements Callable<Integer> {
        @Parameters(paramLabel = "INPUT", arity = "1..*", description = "Input files, read in order: local paths or "
                + "http(s):// and s3:// URLs (read through the cache).")
        List<String> inputs;

        @CommandLine.Mixin
        CacheOptions cache;

        @Option(names = "--out", required = true, paramLabel = "PREFIX", description = "Output prefix (PREFIX.bin, PREFIX.npy or PREFIX.bin + PREFIX.idx).")
        Path out;

        @Option(names = "--tokenizer", defaultValue = "r50k_base", description = "r50k_base (gpt2), p50k_base, cl100k_base, o200k_base or bytes (default ${DEFAULT-VALUE}).")
        String tokenizer;

        @Option(names = "--format", defaultValue = "bin", paramLabel = "bin|npy|megatron", description = "Output format (default ${DEFAULT-VALUE}).")
        String format;

        @Option(names = "--field", defaultValue = "text", description = "The JSON field holding the text (default ${DEFAULT-VALUE}).")
        String field;

        @Option(names = "--workers", description = "Tokenizing threads (default: one per core).")
        Integer workers;

        @Option(names = "--skip-bad", description = "Leave out malformed JSON lines (counted) instead of stopping at the first.")
        boolean skipBad;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() throws IOException {
            Tokenizer tok;
            try {
                tok = Tokenizer.named(tokenizer);
            } catch (IllegalArgumentException e) {
                throw new Main.UsageException(e.getMessage());
            }
            TokenPreparer.Format fmt;
            try {
                fmt = TokenPreparer.Format.named(format);
            } catch (IllegalArgumentException e) {
                throw new Main.UsageException(e.getMessage());
            }
            int w = workers != null ? workers : Runtime.getRuntime().availableProcessors();
            if (w < 1) {
                throw new Main.UsageException("--workers must be >= 1, got " + w);
            }
            Path dir = out.toAbsolutePath().getParent();
            if (!Files.isDirectory(dir)) {
                throw new Main.UsageException("--out: no such directory " + dir);
            }
            try (LocalCopies files = new LocalCopies(inputs, cache.spec())) {
                return prepare(files.paths(), tok, fmt, w);
            }
        }

        private int prepare(List<Path> inputs, Tokenizer tok, TokenPreparer.Format fmt, int w) throws IOException {
            long total = 0;
            for (Path p : inputs) {
                if (!Files.isRegularFile(p)) {
                    throw new NoSuchFileException(p.toString());
                }
                total += Files.size(p);
            }
            TokenPreparer prep = new TokenPreparer(tok, fmt, field, skipBad ? dev.stoker.ErrorPolicy.SKIP_SAMPLE : dev.stoker.ErrorPolicy.FAIL, w);
            PrintWriter o = spec.commandLine().getOut();
            TokenPreparer.Summary s;
            ProgressBar bar = System.console() != null
                    ? new ProgressBarBuilder().setTaskName("tokenizing").setInitialMax(total).setStyle(ProgressBarStyle.ASCII)
                    .setUnit(" MB", 1_000_000).setUpdateIntervalMillis(200).showSpeed().build()
                    : null;
            ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "stoker-progress");
                t.setDaemon(true);
                return t;
            });
            if (bar != null) {
                ticker.scheduleAtFixedRate(() -> {
                    bar.stepTo(prep.bytesRead());
                    bar.setExtraMessage(String.format(Locale.ROOT, " %,d tokens", prep.tokensWritten()));
                }, 200, 200, TimeUnit.MILLISECONDS);
            }
            try {
                s = prep.run(inputs, out);
            } catch (IllegalArgumentException e) {
                throw new Main.BadDataException(e.getMessage(), e);
            } finally {
                ticker.shutdownNow();
                if (bar != null) {
                    bar.stepTo(prep.bytesRead());
                    bar.close();
                }
            }
            o.printf(Locale.ROOT, "%,d documents, %,d tokens (%s, %s) in %.2f s: %,.0f tokens/s with %d workers%n",
                    s.documents(), s.tokens(), tok.name(), prep.outputType().numpy(), s.seconds(), s.tokensPerSecond(), w);
            if (s.skipped() > 0) {
                o.printf(Locale.ROOT, "skipped %,d malformed lines%n", s.skipped());
            }
            for (Path p : s.outputs()) {
                o.println("wrote " + p);
            }
            o.flush();
            return 0;
        }
    }

    @Command(name = "shards", description = "An image folder (root/CLASS/IMAGE.jpg) to WebDataset tar shards: each image "
            + "with its class number as field cls, keys in sorted path order.")
    static final class Shards implements Callable<Integer> {
        @Parameters(paramLabel = "SRC", description = "The image folder, local or an s3:// prefix.")
        String src;

        @Option(names = "--out", required = true, paramLabel = "PATTERN", description = "Shard names as a printf pattern, e.g. train-%06d.tar.")
        String out;

        @Option(names = "--maxcount", defaultValue = "10000", description = "Samples per shard at most (default ${DEFAULT-VALUE}).")
        long maxCount;

        @Option(names = "--maxsize", defaultValue = "1000000000", description = "Bytes per shard at most (default ${DEFAULT-VALUE}).")
        long maxSize;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() throws IOException {
            if (!dev.stoker.storage.Locations.isRemote(src) && !Files.isDirectory(Path.of(src))) {
                throw new NoSuchFileException(src);
            }
            dev.stoker.formats.image.ImageFolder folder = new dev.stoker.formats.image.ImageFolder(src);
            dev.stoker.formats.tar.ShardWriter w;
            try {
                w = new dev.stoker.formats.tar.ShardWriter(out, maxCount, maxSize);
            } catch (IllegalArgumentException e) {
                throw new Main.UsageException("--out: " + e.getMessage());
            }
            long t0 = System.nanoTime();
            long bytes;
            ProgressBar bar = System.console() != null
                    ? new ProgressBarBuilder().setTaskName("sharding").setInitialMax(folder.size()).setStyle(ProgressBarStyle.ASCII)
                    .setUnit(" images", 1).setUpdateIntervalMillis(200).showSpeed().build()
                    : null;
            try {
                bytes = folder.writeTo(w, 0, folder.size(), bar != null ? bar::step : () -> { });
                w.close(); // the set is published whole, or not at all
            } catch (IOException | RuntimeException e) {
                w.abandon();
                throw e;
            } finally {
                if (bar != null) {
                    bar.close();
                }
            }
            PrintWriter o = spec.commandLine().getOut();
            o.printf(Locale.ROOT, "%,d samples (%,d classes, %,.1f MB) in %d shards, %.2f s%n", folder.size(), folder.classes().size(),
                    bytes / 1e6, w.shards().size(), (System.nanoTime() - t0) / 1e9);
            for (Path p : w.shards()) {
                o.println("wrote " + p);
            }
            o.flush();
            return 0;
        }
    }
}
