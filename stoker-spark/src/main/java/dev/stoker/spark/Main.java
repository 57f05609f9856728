package dev.stoker.spark;

import dev.stoker.ErrorPolicy;
import dev.stoker.formats.io.TokenPreparer;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.apache.spark.sql.SparkSession;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code stoker prepare tokens ... --spark MASTER}: the {@code stoker} launcher runs this module's
 * jar for a command line with {@code --spark}; under {@code spark-submit} it is the main class.
 * Options as {@code stoker prepare tokens}' (CLI.md), plus {@code --spark} and {@code --partitions}.
 */
@Command(name = "stoker", subcommands = Main.Prepare.class, mixinStandardHelpOptions = true)
public final class Main {

    @Option(names = "--debug", scope = CommandLine.ScopeType.INHERIT,
            description = "Print stack traces of errors, and Spark's log of failed tasks.")
    boolean debug;

    public static void main(String[] args) {
        boolean debug = java.util.Arrays.asList(args).contains("--debug");
        if (debug) {
            System.setProperty("stoker.spark.taskLog", "warn"); // before Spark's logging starts (log4j2.properties)
        }
        CommandLine cl = new CommandLine(new Main());
        cl.setExecutionExceptionHandler((e, line, parsed) -> {
            String m = e.getMessage();
            for (Throwable t = e; t != null; t = t.getCause()) {
                if (t instanceof dev.stoker.CorruptRecordException || t instanceof java.nio.file.NoSuchFileException) {
                    m = t.getMessage();
                }
            }
            line.getErr().println("stoker: " + m);
            if (debug) {
                e.printStackTrace(line.getErr());
            }
            return e instanceof IllegalArgumentException ? 2 : 1;
        });
        System.exit(cl.execute(args));
    }

    @Command(name = "prepare", subcommands = {Tokens.class, Shards.class}, description = "Prepare data as a Spark job.")
    static final class Prepare {
    }

    @Command(name = "tokens", description = "Text and JSON lines files to token shards PREFIX-00000.bin ... and PREFIX.manifest.json, as a Spark job.")
    static final class Tokens implements Callable<Integer> {
        @Parameters(paramLabel = "INPUT", arity = "1..*", description = "Input files (.txt, .jsonl; plain, .gz or .zst), in order: paths every "
                + "executor sees, or s3:// and http(s):// URLs; or Parquet files and folders (all of them), their column --field read by Spark.")
        List<String> inputs;

        @Option(names = "--out", required = true, paramLabel = "PREFIX")
        Path out;

        @Option(names = "--tokenizer", defaultValue = "r50k_base")
        String tokenizer;

        @Option(names = "--format", defaultValue = "bin", paramLabel = "bin|npy|megatron")
        String format;

        @Option(names = "--field", defaultValue = "text")
        String field;

        @Option(names = "--skip-bad", description = "Leave out malformed JSON lines (counted) instead of stopping at the first.")
        boolean skipBad;

        @Option(names = "--spark", required = true, paramLabel = "MASTER", description = "local[N] (in this JVM), or the master spark-submit was given: pass ''.")
        String master;

        @Option(names = "--partitions", description = "Tasks, one shard each (default: the cluster's default parallelism).")
        Integer partitions;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            TokenPreparer.Format fmt = TokenPreparer.Format.named(format);
            SparkTokens.Options o = new SparkTokens.Options(tokenizer, fmt, field, skipBad ? ErrorPolicy.SKIP_SAMPLE : ErrorPolicy.FAIL);
            if (!Files.isDirectory(out.toAbsolutePath().getParent())) {
                throw new IllegalArgumentException("--out: no such directory " + out.toAbsolutePath().getParent());
            }
            boolean parquet = inputs.stream().allMatch(f -> f.endsWith(".parquet") || Files.isDirectory(Path.of(f)));
            if (parquet && partitions != null) {
                throw new IllegalArgumentException("--partitions: Parquet inputs are read in the splits Spark makes of them "
                        + "(spark.sql.files.maxPartitionBytes), so that the documents keep their order");
            }
            SparkSession spark = SparkJobs.session(master, "stoker prepare tokens");
            try {
                int n = partitions != null ? partitions : spark.sparkContext().defaultParallelism();
                // Parquet: a partition per split Spark makes of the files (spark.sql.files.maxPartitionBytes), in order
                Published p = parquet
                        ? SparkTokens.rows(spark.read().parquet(inputs.toArray(String[]::new)), field, out, o)
                        : SparkTokens.run(spark, inputs, out, o, n);
                PrintWriter w = spec.commandLine().getOut();
                w.printf(Locale.ROOT, "%,d documents, %,d tokens (%s) in %.2f s: %,.0f tokens/s, %d partitions on %s%n",
                        p.count(), p.tokens(), tokenizer, p.seconds(), p.tokensPerSecond(), p.shards().stream()
                                .filter(s -> !s.toString().endsWith(".idx")).count(), spark.sparkContext().master());
                if (p.skipped() > 0) {
                    w.printf(Locale.ROOT, "skipped %,d malformed lines%n", p.skipped());
                }
                return wrote(w, p);
            } finally {
                SparkJobs.stop(spark);
            }
        }
    }

    @Command(name = "shards", description = "An image folder (root/CLASS/IMAGE.jpg) to WebDataset tar shards, as a Spark job: "
            + "each image with its class number as field cls, keys in sorted path order, shards numbered in order.")
    static final class Shards implements Callable<Integer> {
        @Parameters(paramLabel = "SRC", description = "The image folder, local (seen by every executor) or an s3:// prefix.")
        String src;

        @Option(names = "--out", required = true, paramLabel = "PATTERN", description = "Shard names as a printf pattern, e.g. train-%06d.tar.")
        String out;

        @Option(names = "--maxcount", defaultValue = "10000")
        long maxCount;

        @Option(names = "--maxsize", defaultValue = "1000000000")
        long maxSize;

        @Option(names = "--spark", required = true, paramLabel = "MASTER")
        String master;

        @Option(names = "--partitions", description = "Tasks (default: the cluster's default parallelism).")
        Integer partitions;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            SparkShards.Options o = new SparkShards.Options(out, maxCount, maxSize);
            SparkSession spark = SparkJobs.session(master, "stoker prepare shards");
            try {
                int n = partitions != null ? partitions : spark.sparkContext().defaultParallelism();
                Published p = SparkShards.folder(spark, src, o, n);
                PrintWriter w = spec.commandLine().getOut();
                w.printf(Locale.ROOT, "%,d samples (%,.1f MB) in %d shards, %.2f s, on %s%n", p.count(), p.bytes() / 1e6,
                        p.shards().size(), p.seconds(), spark.sparkContext().master());
                return wrote(w, p);
            } finally {
                SparkJobs.stop(spark);
            }
        }
    }

    /** The job's shards and manifest, a line each, after its summary; the command's exit code. */
    private static int wrote(PrintWriter w, Published p) {
        for (Path s : p.shards()) {
            w.println("wrote " + s);
        }
        w.println("wrote " + p.manifest());
        w.flush();
        return 0;
    }
}
