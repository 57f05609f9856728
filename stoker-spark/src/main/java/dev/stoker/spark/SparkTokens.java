package dev.stoker.spark;

import dev.stoker.ErrorPolicy;
import dev.stoker.formats.io.TextRange;
import dev.stoker.formats.io.TokenPreparer;
import dev.stoker.formats.tokens.Tokenizer;
import dev.stoker.storage.Storage;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * {@code stoker prepare tokens} as a Spark job: text and JSON lines files (plain, {@code .gz},
 * {@code .zst}; local, or anywhere {@link Storage} reads: {@code s3://}, {@code http(s)://}) to token shards, each task tokenizing a contiguous part of the input with
 * {@link TokenPreparer}, as {@code stoker prepare} does on one machine. So one partition writes
 * the same bytes as {@code stoker prepare}, and N partitions write N shards whose concatenation,
 * document for document, is the same tokens.
 *
 * <p>Partitions: the files in order, an uncompressed JSON lines file cut at newlines
 * ({@link TextRange#cut}) into pieces of about the input's bytes / partitions, the pieces dealt out
 * in order by their bytes. The same input and partition count give the same partitions, so the same
 * bytes. Tasks commit as {@link TaskCommit} says (NOTE [Task commit]).
 */
public final class SparkTokens {

    /** How to tokenize and what to write: as {@code stoker prepare tokens}' options. */
    public record Options(String tokenizer, TokenPreparer.Format format, String field, ErrorPolicy errors)
            implements Serializable {
        public Options {
            Tokenizer.named(tokenizer); // refused on the driver, not in every task
            java.util.Objects.requireNonNull(format, "format");
            java.util.Objects.requireNonNull(field, "field");
            java.util.Objects.requireNonNull(errors, "errors");
        }
    }

    private SparkTokens() {
    }

    /** The pieces of each partition, in order; no partition is empty. */
    static List<List<TextRange>> plan(List<String> inputs, int partitions) throws IOException {
        if (partitions < 1) {
            throw new IllegalArgumentException("partitions must be >= 1, got " + partitions);
        }
        long total = 0;
        for (String p : inputs) {
            total += Storage.size(p); // a missing file is named here, on the driver
        }
        long share = Math.max(1, (total + partitions - 1) / partitions);
        List<List<TextRange>> out = new ArrayList<>();
        List<TextRange> current = new ArrayList<>();
        long at = 0;
        int group = 0;
        for (TextRange r : TextRange.cut(inputs, share)) {
            // a piece goes to the partition its first byte falls in, counted over the whole input
            int g = (int) Math.min(partitions - 1, at / share);
            if (g != group && !current.isEmpty()) {
                out.add(current);
                current = new ArrayList<>();
            }
            group = g;
            current.add(r);
            at += r.bytes();
        }
        if (!current.isEmpty()) {
            out.add(current);
        }
        return out;
    }

    /**
     * Tokenizes {@code inputs} into shards {@code PREFIX-00000.bin} ... (and {@code .idx} for
     * Megatron, {@code .npy} for npy) and the manifest {@code PREFIX.manifest.json}, in
     * {@code partitions} tasks of {@code spark}.
     */
    public static Published run(SparkSession spark, List<String> inputs, Path prefix, Options options,
                                           int partitions) throws IOException {
        return run(spark, inputs, prefix, options, partitions, -1);
    }

    /** {@link #run}, the first attempt of partition {@code failOnce} failing after it wrote part of its shard (for tests). */
    static Published run(SparkSession spark, List<String> inputs, Path prefix, Options options, int partitions,
                                    int failOnce) throws IOException {
        long t0 = System.nanoTime();
        Path out = prefix.toAbsolutePath();
        List<List<TextRange>> plan = plan(inputs, partitions);
        TaskCommit commit = TaskCommit.begin(out.getParent(), out.getFileName().toString());
        String staging = commit.staging().toString();
        List<TaskCommit.Part> parts = commit.collect(SparkJobs.tasks(spark, plan.size(),
                "stoker prepare tokens: " + inputs.size() + " files, " + plan.size() + " partitions").map(i -> {
                    int attempt = TaskCommit.attempt();
                    return task(i, attempt, staging, options, i == failOnce && attempt == 0, pieces(plan.get(i)));
                }));
        return commit.publish(parts, shardNames(out), manifestHead(options, inputs), "documents", (System.nanoTime() - t0) / 1e9);
    }

    /** What a task tokenizes: its part of the input, into the files of {@code prefix}. */
    @FunctionalInterface
    interface Work {
        TokenPreparer.Summary run(TokenPreparer preparer, Path prefix) throws IOException;
    }

    static Work pieces(List<TextRange> pieces) {
        return (prep, prefix) -> prep.runRanges(pieces, prefix);
    }

    /** One attempt at partition {@code part}: its shard written under the attempt's own name in the staging folder. */
    static TaskCommit.Part task(int part, int attempt, String staging, Options o, boolean fail, Work work) {
        Tokenizer tok = Tokenizer.named(o.tokenizer());
        TokenPreparer prep = new TokenPreparer(tok, o.format(), o.field(), o.errors(), 1);
        try {
            Path dir = TaskCommit.attemptDir(staging, part, attempt);
            if (fail) {
                Files.write(dir.resolve("shard.bin"), new byte[4096]); // a partial output the failure leaves
                throw new IOException("partition " + part + ", attempt " + attempt + ": failing once, as asked");
            }
            TokenPreparer.Summary s = work.run(prep, dir.resolve("shard"));
            return TaskCommit.Part.of(part, attempt, s.outputs(), s.documents(), s.tokens(), s.skipped());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The string column {@code column} of {@code rows} (a Parquet file's, say: {@code
     * spark.read().parquet(...)}), each of their partitions in its order, to shards
     * {@code PREFIX-00000.bin} ... and {@code PREFIX.manifest.json}. A null is a malformed
     * record: it stops the job naming its partition and row, or is skipped and counted, as
     * {@link Options#errors()} says.
     */
    public static Published rows(Dataset<Row> rows, String column, Path prefix, Options options) throws IOException {
        long t0 = System.nanoTime();
        Path out = prefix.toAbsolutePath();
        int at = rows.schema().fieldIndex(column);
        TaskCommit commit = TaskCommit.begin(out.getParent(), out.getFileName().toString());
        String staging = commit.staging().toString();
        List<TaskCommit.Part> parts = commit.collect(rows.select(column).javaRDD().mapPartitionsWithIndex(
                (Integer i, java.util.Iterator<Row> it) -> {
                    long[] skipped = {0};
                    TaskCommit.Part p = task(i, TaskCommit.attempt(), staging, options, false, (prep, pre) ->
                            prep.runDocuments(texts(it, i, column, options.errors(), skipped), pre));
                    return List.of(new TaskCommit.Part(p.partition(), p.attempt(), p.files(), p.count(), p.tokens(),
                            p.skipped() + skipped[0])).iterator();
                }, true));
        java.util.Map<String, Object> head = manifestHead(options, List.of());
        head.put("inputs", "rows: column " + column);
        return commit.publish(parts, shardNames(out), head, "documents", (System.nanoTime() - t0) / 1e9);
    }

    /** The texts of a partition's rows, nulls refused or skipped (and counted) as {@code errors} says. */
    private static java.util.Iterator<String> texts(java.util.Iterator<Row> rows, int partition, String column, ErrorPolicy errors,
                                                    long[] skipped) {
        return new java.util.Iterator<>() {
            private long row = -1;
            private String next = advance();

            private String advance() {
                while (rows.hasNext()) {
                    row++;
                    Row r = rows.next();
                    if (!r.isNullAt(0)) {
                        return r.getString(0);
                    }
                    if (errors == ErrorPolicy.FAIL) {
                        throw new IllegalArgumentException("partition " + partition + ", row " + row + ": column " + column
                                + " is null (expected a text)");
                    }
                    skipped[0]++;
                }
                return null;
            }

            @Override
            public boolean hasNext() {
                return next != null;
            }

            @Override
            public String next() {
                String n = next;
                next = advance();
                return n;
            }
        };
    }

    /** {@code PREFIX-00003.bin} (and {@code .idx}) for partition 3. */
    private static TaskCommit.Namer shardNames(Path prefix) {
        String name = prefix.getFileName().toString();
        return (part, file) -> String.format(java.util.Locale.ROOT, "%s-%05d%s", name, part.partition(),
                file.path().substring(file.path().lastIndexOf('.')));
    }

    private static java.util.Map<String, Object> manifestHead(Options o, List<String> inputs) {
        java.util.Map<String, Object> m = new java.util.LinkedHashMap<>();
        m.put("kind", "tokens");
        m.put("tokenizer", o.tokenizer());
        m.put("format", o.format().name().toLowerCase(java.util.Locale.ROOT));
        m.put("dtype", new TokenPreparer(Tokenizer.named(o.tokenizer()), o.format(), o.field(), o.errors(), 1).outputType().numpy());
        m.put("inputs", inputs);
        return m;
    }
}
