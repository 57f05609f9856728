package dev.stoker.spark;

import dev.stoker.formats.image.ImageFolder;
import dev.stoker.formats.tar.ShardWriter;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.StructField;

/**
 * {@code stoker prepare shards} as a Spark job: samples to WebDataset tar shards, each task
 * writing its part of the samples with a {@link ShardWriter} (a new shard at {@code maxCount}
 * samples or {@code maxSize} bytes), the driver numbering every task's shards in order with
 * {@code pattern} when it publishes them (NOTE [Task commit]). Two sources:
 * <ul>
 *   <li>an image folder ({@link #folder}): its samples in sorted path order, cut into
 *       {@code partitions} contiguous ranges; one partition writes the bytes
 *       {@code stoker prepare shards} writes;</li>
 *   <li>rows ({@link #rows}): a key column and fields, each other column a member
 *       {@code KEY.COLUMN} (binary as it is, anything else as its text in UTF-8; null: no
 *       member), each of the rows' partitions in its order.</li>
 * </ul>
 */
public final class SparkShards {

    /** Where shards go and when a new one starts, as {@code stoker prepare shards}' options. */
    public record Options(String pattern, long maxCount, long maxSize) implements Serializable {
        public Options {
            new ShardWriter(pattern, maxCount, maxSize); // refused on the driver, not in every task
        }

        Path dir() {
            Path p = Path.of(pattern).toAbsolutePath();
            return p.getParent();
        }

        /** The manifest's name: the pattern's file name up to its shard number, e.g. {@code train} for {@code train-%06d.tar}. */
        String name() {
            String f = Path.of(pattern).getFileName().toString();
            String n = f.substring(0, Math.max(0, f.indexOf('%'))).replaceAll("[-_.]+$", "");
            return n.isEmpty() ? "shards" : n;
        }
    }

    private SparkShards() {
    }

    /** An image folder ({@code root/CLASS/IMAGE}, local or an {@code s3://} prefix) in {@code partitions} tasks. */
    public static Published folder(SparkSession spark, String root, Options o, int partitions) throws IOException {
        long t0 = System.nanoTime();
        long n = new ImageFolder(root).size();
        int parts = (int) Math.max(1, Math.min(partitions, n));
        TaskCommit commit = TaskCommit.begin(o.dir(), o.name());
        String staging = commit.staging().toString();
        List<TaskCommit.Part> written = commit.collect(SparkJobs.tasks(spark, parts,
                "stoker prepare shards: " + root + ", " + n + " samples, " + parts + " partitions").map(i -> {
                    ImageFolder folder = new ImageFolder(root);
                    long from = i * n / parts;
                    long to = (i + 1) * n / parts;
                    return task(i, staging, o, w -> {
                        folder.writeTo(w, from, to, () -> { });
                        return to - from;
                    });
                }));
        return publish(commit, written, o, root, t0);
    }

    /** Rows with a string column {@code key}: each of their partitions, in order, to shards. */
    public static Published rows(Dataset<Row> rows, String key, Options o) throws IOException {
        long t0 = System.nanoTime();
        StructField[] fields = rows.schema().fields();
        int keyAt = rows.schema().fieldIndex(key);
        TaskCommit commit = TaskCommit.begin(o.dir(), o.name());
        String staging = commit.staging().toString();
        List<TaskCommit.Part> written = commit.collect(rows.javaRDD().mapPartitionsWithIndex((Integer i, Iterator<Row> it) -> {
            TaskCommit.Part p = task(i, staging, o, w -> {
                long count = 0;
                while (it.hasNext()) {
                    Row r = it.next();
                    Map<String, byte[]> m = new LinkedHashMap<>();
                    for (int c = 0; c < fields.length; c++) {
                        if (c != keyAt && !r.isNullAt(c)) {
                            Object v = r.get(c);
                            byte[] b = v instanceof byte[] a ? a : v.toString().getBytes(StandardCharsets.UTF_8);
                            m.put(fields[c].name(), b);
                        }
                    }
                    w.write(r.getString(keyAt), m);
                    count++;
                }
                return count;
            });
            return List.of(p).iterator();
        }, true));
        return publish(commit, written, o, "rows", t0);
    }

    private static Published publish(TaskCommit commit, List<TaskCommit.Part> parts, Options o, String source,
                                                long t0) throws IOException {
        int[] next = {0};
        Map<String, Object> h = new LinkedHashMap<>(); // in this order: the manifest's bytes depend on nothing else
        h.put("kind", "shards");
        h.put("source", source);
        h.put("pattern", Path.of(o.pattern()).getFileName().toString());
        return commit.publish(parts, (part, file) -> Path.of(String.format(o.pattern(), next[0]++)).getFileName().toString(), h,
                "samples", (System.nanoTime() - t0) / 1e9);
    }

    /** What a task writes: its samples into the shard writer, returning how many. */
    @FunctionalInterface
    interface Samples extends Serializable {
        long write(ShardWriter w) throws IOException;
    }

    /** One attempt at partition {@code part}: its shards under the attempt's own names in the staging folder. */
    static TaskCommit.Part task(int part, String staging, Options o, Samples samples) {
        int attempt = TaskCommit.attempt();
        try {
            Path dir = TaskCommit.attemptDir(staging, part, attempt);
            ShardWriter w = new ShardWriter(dir.resolve("shard-%06d.tar").toString(), o.maxCount(), o.maxSize());
            long count;
            try {
                count = samples.write(w);
                w.close();
            } catch (IOException | RuntimeException e) {
                w.abandon();
                throw e;
            }
            return TaskCommit.Part.of(part, attempt, w.shards(), count, 0, 0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
