package dev.stoker.spark;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.stoker.storage.io.PendingFile;
import java.io.IOException;
import java.io.InputStream;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaRDD;

/**
 * How a job's tasks leave their shards, and how the driver publishes them ({@link Published}).
 *
 * <p>NOTE [Task commit]: every task attempt writes into a folder of its own under the job's
 * staging folder ({@code DIR/.stoker-staging-NAME-UUID/part-00003-attempt-1/}) and reports its
 * files, sizes and SHA-256 digests to the driver. Spark hands the driver exactly one result per
 * partition, that of the attempt that succeeded first; so a retried task's failed attempt, and
 * the losing copy of a speculative task, are never published. Once every partition has succeeded
 * the driver moves the winners' files to their final names in partition order (a rename within
 * one folder: atomic), deletes the staging folder with whatever the other attempts left in it,
 * and only then writes the manifest ({@code NAME.manifest.json}) atomically. A failed job deletes
 * the staging folder and publishes nothing. So no partial, duplicate or orphaned shard is ever
 * under a final name, and a manifest lists exactly the shards of one complete run. The output
 * folder must be one the driver and every executor see (a local folder in local mode; a shared
 * file system on a cluster).
 */
final class TaskCommit {

    /** A file a task wrote: its path in the staging folder, size and SHA-256. */
    record File(String path, long bytes, String sha256) implements Serializable {
        static File of(Path p) throws IOException {
            MessageDigest md;
            try {
                md = MessageDigest.getInstance("SHA-256");
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException(e);
            }
            long n = 0;
            byte[] buf = new byte[1 << 16];
            try (InputStream in = Files.newInputStream(p)) {
                for (int r; (r = in.read(buf)) > 0; ) {
                    md.update(buf, 0, r);
                    n += r;
                }
            }
            return new File(p.toString(), n, HexFormat.of().formatHex(md.digest()));
        }
    }

    /** What one successful task attempt wrote, and counted: documents or samples, tokens (0 for samples), records skipped. */
    record Part(int partition, int attempt, List<File> files, long count, long tokens, long skipped)
            implements Serializable {
        /** The attempt's files {@code written}, each measured and hashed for the manifest. */
        static Part of(int partition, int attempt, List<Path> written, long count, long tokens, long skipped) throws IOException {
            List<File> files = new ArrayList<>();
            for (Path p : written) {
                files.add(File.of(p));
            }
            return new Part(partition, attempt, files, count, tokens, skipped);
        }
    }

    /** A shard's final name (in the output folder), from its task's result and file. */
    @FunctionalInterface
    interface Namer {
        String name(Part part, File file);
    }

    private final Path dir;
    private final String name;
    private final Path staging;

    private TaskCommit(Path dir, String name, Path staging) {
        this.dir = dir;
        this.name = name;
        this.staging = staging;
    }

    /** A job writing into {@code dir}, its manifest {@code NAME.manifest.json}: makes its staging folder. */
    static TaskCommit begin(Path dir, String name) throws IOException {
        if (!Files.isDirectory(dir)) {
            throw new java.nio.file.NoSuchFileException(dir.toString(), null, "the output folder does not exist");
        }
        Path staging = dir.resolve(".stoker-staging-" + name + "-" + UUID.randomUUID());
        Files.createDirectory(staging);
        return new TaskCommit(dir, name, staging);
    }

    Path staging() {
        return staging;
    }

    /** The attempt number of the Spark task running this (0 outside one: a test calling a task itself). */
    static int attempt() {
        TaskContext t = TaskContext.get();
        return t == null ? 0 : t.attemptNumber();
    }

    /**
     * Makes the folder of one task attempt, in the staging folder: only the attempt's own, so an
     * attempt that starts after the job ended (and the staging folder was deleted) writes nothing.
     */
    static Path attemptDir(String staging, int partition, int attempt) throws IOException {
        return Files.createDirectory(Path.of(staging).resolve(String.format(java.util.Locale.ROOT, "part-%05d-attempt-%d",
                partition, attempt)));
    }

    /** The tasks' results: a failed job (any exception) deletes the staging folder, and its failure goes on. */
    List<Part> collect(JavaRDD<Part> tasks) {
        try {
            return tasks.collect();
        } catch (Exception e) { // Spark's own SparkException is a checked one, thrown unchecked
            abort();
            throw e;
        }
    }

    /**
     * A failed job: the staging folder and everything in it deleted; nothing published. Spark
     * stops a failed job's running tasks without waiting for them, so one may still be writing:
     * the deletion is tried again for up to two seconds.
     */
    void abort() {
        for (int i = 0; ; i++) {
            try {
                delete(staging);
                return;
            } catch (UncheckedIOException e) {
                if (i == 20) {
                    throw e;
                }
                try {
                    Thread.sleep(100);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    /**
     * Moves each part's files to the names {@code namer} gives, in partition order; deletes the
     * staging folder; writes the manifest: {@code head}'s entries, the totals (the parts' counts
     * under the name {@code counted}: documents, samples) and the shards.
     */
    Published publish(List<Part> parts, Namer namer, Map<String, Object> head, String counted, double seconds)
            throws IOException {
        List<Part> ordered = new ArrayList<>(parts);
        ordered.sort(Comparator.comparingInt(Part::partition));
        for (int i = 0; i < ordered.size(); i++) {
            if (ordered.get(i).partition() != i) {
                abort();
                throw new IllegalStateException("partition " + i + " has " + (ordered.get(i).partition() < i ? "two results" : "no result"));
            }
        }
        List<Path> shards = new ArrayList<>();
        List<Map<String, Object>> entries = new ArrayList<>();
        long count = 0;
        long tokens = 0;
        long skipped = 0;
        long bytes = 0;
        try {
            for (Part p : ordered) {
                for (File f : p.files()) {
                    Path target = dir.resolve(namer.name(p, f));
                    PendingFile.publish(Path.of(f.path()), target);
                    shards.add(target);
                    Map<String, Object> e = new java.util.LinkedHashMap<>();
                    e.put("name", target.getFileName().toString());
                    e.put("partition", p.partition());
                    e.put("bytes", f.bytes());
                    e.put("sha256", f.sha256());
                    entries.add(e);
                    bytes += f.bytes();
                }
                count += p.count();
                tokens += p.tokens();
                skipped += p.skipped();
            }
        } finally {
            abort();
        }
        Path manifest = dir.resolve(name + ".manifest.json");
        PendingFile file = new PendingFile(manifest);
        try {
            try (JsonGenerator g = new JsonFactory().createGenerator(file.out())) {
                g.disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
                g.useDefaultPrettyPrinter();
                g.writeStartObject();
                for (Map.Entry<String, Object> e : head.entrySet()) {
                    g.writeFieldName(e.getKey());
                    write(g, e.getValue());
                }
                g.writeNumberField("partitions", ordered.size());
                g.writeNumberField(counted, count);
                if (tokens > 0) {
                    g.writeNumberField("tokens", tokens);
                }
                g.writeNumberField("skipped", skipped);
                g.writeNumberField("bytes", bytes);
                g.writeFieldName("shards");
                write(g, entries);
                g.writeEndObject();
            }
            file.out().write('\n');
            file.commit();
        } catch (IOException | RuntimeException e) {
            file.abandon();
            throw e;
        }
        return new Published(shards, count, tokens, skipped, bytes, seconds, manifest);
    }

    private static void write(JsonGenerator g, Object v) throws IOException {
        switch (v) {
            case null -> g.writeNull();
            case String s -> g.writeString(s);
            case Integer i -> g.writeNumber(i);
            case Long l -> g.writeNumber(l);
            case Map<?, ?> m -> {
                g.writeStartObject();
                for (Map.Entry<?, ?> e : m.entrySet()) {
                    g.writeFieldName(e.getKey().toString());
                    write(g, e.getValue());
                }
                g.writeEndObject();
            }
            case List<?> l -> {
                g.writeStartArray();
                for (Object o : l) {
                    write(g, o);
                }
                g.writeEndArray();
            }
            default -> throw new IllegalArgumentException("no JSON for " + v.getClass());
        }
    }

    private static void delete(Path root) {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> s = Files.walk(root)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("deleting the staging folder " + root, e);
        }
    }
}
