package dev.stoker.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.ErrorPolicy;
import dev.stoker.formats.tokens.Megatron;
import dev.stoker.formats.io.TokenPreparer;
import dev.stoker.formats.tokens.Tokenizer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import java.util.zip.GZIPOutputStream;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The token job on Spark in local mode, against {@code stoker prepare}'s own preparer and the documents it was given. */
class SparkTokensTest {
    private static SparkSession spark;
    private static final Tokenizer GPT2 = Tokenizer.named("gpt2");

    @TempDir
    Path dir;

    @BeforeAll
    static void start() {
        // two cores; a failed task is tried up to three times
        spark = SparkJobs.session("local[2,3]", "stoker-spark tests");
    }

    @AfterAll
    static void stop() {
        spark.stop();
    }

    /** Three inputs (a JSON lines file large enough to be cut, a gzipped one, a text file); their documents in order. */
    private List<String> inputs(List<Path> files) throws IOException {
        SplittableRandom r = new SplittableRandom(11);
        String[] words = {"the", "stoker", "feeds", "accelerators", "données", "日本語", "tokens", "shard", "épreuve", "x"};
        List<String> docs = new ArrayList<>();
        StringBuilder a = new StringBuilder();
        for (int i = 0; i < 3000; i++) {
            String d = sentence(r, words);
            docs.add(d);
            a.append("{\"id\": ").append(i).append(", \"text\": \"").append(d.replace("\"", "\\\"")).append("\"}\n");
        }
        Path fa = dir.resolve("a.jsonl");
        Files.writeString(fa, a);
        ByteArrayOutputStream gz = new ByteArrayOutputStream();
        try (OutputStream o = new GZIPOutputStream(gz)) {
            for (int i = 0; i < 200; i++) {
                String d = sentence(r, words);
                docs.add(d);
                o.write(("{\"text\": \"" + d + "\"}\n").getBytes(StandardCharsets.UTF_8));
            }
        }
        Path fb = dir.resolve("b.jsonl.gz");
        Files.write(fb, gz.toByteArray());
        Path fc = dir.resolve("c.txt");
        String c = sentence(r, words) + "\n" + sentence(r, words);
        Files.writeString(fc, c);
        docs.add(c);
        files.addAll(List.of(fa, fb, fc));
        return docs;
    }

    private static String sentence(SplittableRandom r, String[] words) {
        StringBuilder s = new StringBuilder();
        for (int n = 1 + r.nextInt(60); n > 0; n--) {
            s.append(words[r.nextInt(words.length)]).append(n > 1 ? " " : ".");
        }
        return s.toString();
    }

    private static SparkTokens.Options options(TokenPreparer.Format f, ErrorPolicy e) {
        return new SparkTokens.Options("gpt2", f, "text", e);
    }

    @Test
    void onePartitionWritesTheBytesStokerPrepareWrites() throws IOException {
        List<Path> files = new ArrayList<>();
        inputs(files);
        for (TokenPreparer.Format f : TokenPreparer.Format.values()) {
            Path local = dir.resolve("local-" + f);
            new TokenPreparer(GPT2, f, "text", ErrorPolicy.FAIL, 2).run(files, local);
            Published p = SparkTokens.run(spark, strings(files), dir.resolve("spark-" + f), options(f, ErrorPolicy.FAIL), 1);
            List<Path> want = new TokenPreparer(GPT2, f, "text", ErrorPolicy.FAIL, 1).outputs(local);
            assertEquals(want.size(), p.shards().size(), f + ": " + p.shards());
            for (int i = 0; i < want.size(); i++) {
                assertArrayEquals(Files.readAllBytes(want.get(i)), Files.readAllBytes(p.shards().get(i)), f + ": " + p.shards().get(i));
            }
        }
        assertOnlyPublished();
    }

    @Test
    void manyPartitionsHoldEveryDocumentOnceInOrder() throws Exception {
        List<Path> files = new ArrayList<>();
        List<String> docs = inputs(files);
        Published p = SparkTokens.run(spark, strings(files), dir.resolve("train"), options(TokenPreparer.Format.BIN, ErrorPolicy.FAIL), 4);
        assertTrue(p.shards().size() >= 3, "the large file is cut: " + p.shards());
        assertEquals(docs.size(), p.count());
        // read back by numpy, shard by shard as the manifest lists them
        Path got = dir.resolve("numpy.bin");
        Process py = new ProcessBuilder("/usr/bin/python3", "-c", String.join("\n",
                "import json, sys, numpy as np, os",
                "m = json.load(open(sys.argv[1]))",
                "d = os.path.dirname(sys.argv[1])",
                "a = np.concatenate([np.fromfile(os.path.join(d, s['name']), dtype=m['dtype']) for s in m['shards']])",
                "assert a.size == m['tokens'], (a.size, m['tokens'])",
                "a.astype(np.uint16).tofile(sys.argv[2])"), p.manifest().toString(), got.toString()).inheritIO().start();
        assertEquals(0, py.waitFor(), "numpy read the shards");
        ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(got)).order(ByteOrder.LITTLE_ENDIAN);
        List<String> back = new ArrayList<>();
        List<Integer> doc = new ArrayList<>();
        while (b.hasRemaining()) {
            int t = Short.toUnsignedInt(b.getShort());
            if (t == GPT2.endOfText()) {
                back.add(GPT2.decode(doc.stream().mapToInt(Integer::intValue).toArray()));
                doc.clear();
            } else {
                doc.add(t);
            }
        }
        assertTrue(doc.isEmpty(), "every document ends with end-of-text");
        assertEquals(docs, back, "document for document");
        String manifest = Files.readString(p.manifest());
        for (Path s : p.shards()) {
            assertTrue(manifest.contains(s.getFileName().toString()), s + " in the manifest");
        }
        assertOnlyPublished();
    }

    @Test
    void megatronShardsReadBackByStoker() throws IOException {
        List<Path> files = new ArrayList<>();
        List<String> docs = inputs(files);
        Published p = SparkTokens.run(spark, strings(files), dir.resolve("mg"), options(TokenPreparer.Format.MEGATRON, ErrorPolicy.FAIL), 3);
        long documents = 0;
        long tokens = 0;
        for (Path s : p.shards()) {
            if (s.toString().endsWith(".bin")) {
                try (Megatron m = Megatron.open(s)) {
                    documents += m.documents();
                    tokens += m.tokens();
                }
            }
        }
        assertEquals(docs.size(), documents);
        assertEquals(p.tokens(), tokens);
    }

    @Test
    void aTaskThatFailsOnceLeavesExactlyTheShardsOfARunThatDidNot() throws IOException {
        List<Path> files = new ArrayList<>();
        inputs(files);
        Published clean = SparkTokens.run(spark, strings(files), dir.resolve("clean"), options(TokenPreparer.Format.MEGATRON, ErrorPolicy.FAIL), 3);
        Published retried = SparkTokens.run(spark, strings(files), dir.resolve("retried"), options(TokenPreparer.Format.MEGATRON, ErrorPolicy.FAIL), 3, 1);
        assertEquals(clean.shards().size(), retried.shards().size());
        for (int i = 0; i < clean.shards().size(); i++) {
            assertArrayEquals(Files.readAllBytes(clean.shards().get(i)), Files.readAllBytes(retried.shards().get(i)));
        }
        assertOnlyPublished();
    }

    @Test
    void twoAttemptsAtOnePartitionPublishOne() throws IOException {
        // what speculative execution does (Spark's local mode never launches a speculative copy):
        // two attempts at the same partition both finish; the driver publishes the one Spark reports
        List<Path> files = new ArrayList<>();
        inputs(files);
        SparkTokens.Options o = options(TokenPreparer.Format.BIN, ErrorPolicy.FAIL);
        List<List<dev.stoker.formats.io.TextRange>> plan = SparkTokens.plan(strings(files), 2);
        TaskCommit commit = TaskCommit.begin(dir, "spec");
        List<TaskCommit.Part> reported = new ArrayList<>();
        for (int part = 0; part < plan.size(); part++) {
            TaskCommit.Part first = SparkTokens.task(part, 0, commit.staging().toString(), o, false, SparkTokens.pieces(plan.get(part)));
            TaskCommit.Part copy = SparkTokens.task(part, 1, commit.staging().toString(), o, false, SparkTokens.pieces(plan.get(part)));
            assertEquals(first.files().get(0).sha256(), copy.files().get(0).sha256(), "both attempts wrote the same bytes");
            reported.add(part == 0 ? copy : first);
        }
        Published p = commit.publish(reported, (part, f) -> "spec-" + part.partition() + ".bin", java.util.Map.of(), "documents", 0);
        assertEquals(plan.size(), p.shards().size());
        assertOnlyPublished();
        TaskCommit again = TaskCommit.begin(dir, "twice");
        TaskCommit.Part one = SparkTokens.task(0, 0, again.staging().toString(), o, false, SparkTokens.pieces(plan.get(0)));
        assertThrows(IllegalStateException.class, () -> again.publish(List.of(one, one), (part, f) -> "x.bin", java.util.Map.of(), "documents", 0));
        assertOnlyPublished();
    }

    @Test
    void aMalformedLineIsNamedOrSkippedAndCounted() throws IOException {
        Path bad = dir.resolve("bad.jsonl");
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < 2000; i++) {
            s.append(i == 1500 ? "{\"text\": \"unterminated}\n" : "{\"text\": \"document " + i + "\"}\n");
        }
        Files.writeString(bad, s);
        long lineStart = s.indexOf("{\"text\": \"unterminated");
        Exception e = assertThrows(Exception.class,
                () -> SparkTokens.run(spark, List.of(bad.toString()), dir.resolve("bad"), options(TokenPreparer.Format.BIN, ErrorPolicy.FAIL), 2));
        String msg = messages(e);
        assertTrue(msg.contains(bad + ": line ") && msg.contains("(at byte " + lineStart + ")"), msg);
        assertFalse(Files.exists(dir.resolve("bad.manifest.json")));
        assertOnlyPublished();
        Published p = SparkTokens.run(spark, List.of(bad.toString()), dir.resolve("skip"), options(TokenPreparer.Format.BIN, ErrorPolicy.SKIP_SAMPLE), 2);
        assertEquals(1, p.skipped());
        assertEquals(1999, p.count());
        assertTrue(Files.readString(p.manifest()).contains("\"skipped\" : 1"), Files.readString(p.manifest()));
    }

    @Test
    void inputsOverHttpGiveTheBytesOfLocalFiles() throws IOException {
        List<Path> files = new ArrayList<>();
        inputs(files);
        SparkTokens.Options o = options(TokenPreparer.Format.MEGATRON, ErrorPolicy.FAIL);
        Published local = SparkTokens.run(spark, strings(files), dir.resolve("local"), o, 3);
        try (dev.stoker.storage.testing.TestServer http = new dev.stoker.storage.testing.TestServer(dir)) {
            List<String> urls = files.stream().map(f -> http.url(f.getFileName().toString())).toList();
            Published remote = SparkTokens.run(spark, urls, dir.resolve("remote"), o, 3);
            assertEquals(local.shards().size(), remote.shards().size());
            for (int i = 0; i < local.shards().size(); i++) {
                assertArrayEquals(Files.readAllBytes(local.shards().get(i)), Files.readAllBytes(remote.shards().get(i)));
            }
            assertTrue(http.rangeRequests.getOrDefault("a.jsonl", new java.util.concurrent.atomic.AtomicInteger()).get() >= 3,
                    "the large file read in ranges: " + http.rangeRequests);
        }
        assertOnlyPublished();
    }

    @Test
    void aParquetColumnToShards() throws IOException {
        List<Path> files = new ArrayList<>();
        List<String> docs = inputs(files);
        List<org.apache.spark.sql.Row> rows = new ArrayList<>();
        for (int i = 0; i < docs.size(); i++) {
            rows.add(org.apache.spark.sql.RowFactory.create((long) i, docs.get(i)));
        }
        rows.add(org.apache.spark.sql.RowFactory.create((long) docs.size(), null));
        org.apache.spark.sql.types.StructType schema = new org.apache.spark.sql.types.StructType()
                .add("id", org.apache.spark.sql.types.DataTypes.LongType).add("text", org.apache.spark.sql.types.DataTypes.StringType);
        String parquet = dir.resolve("docs.parquet").toString();
        spark.createDataFrame(rows, schema).coalesce(1).write().parquet(parquet);
        org.apache.spark.sql.Dataset<org.apache.spark.sql.Row> df = spark.read().parquet(parquet);
        Exception e = assertThrows(Exception.class,
                () -> SparkTokens.rows(df, "text", dir.resolve("pq"), options(TokenPreparer.Format.BIN, ErrorPolicy.FAIL)));
        assertTrue(messages(e).contains("column text is null"), messages(e));
        assertOnlyPublished();
        Published p = SparkTokens.rows(df, "text", dir.resolve("pq"), options(TokenPreparer.Format.BIN, ErrorPolicy.SKIP_SAMPLE));
        assertEquals(docs.size(), p.count());
        assertEquals(1, p.skipped());
        // one Parquet file, one partition: the documents in the file's order, as stoker prepare tokenizes them
        Path local = dir.resolve("local");
        new TokenPreparer(GPT2, TokenPreparer.Format.BIN, "text", ErrorPolicy.FAIL, 1).runDocuments(docs.iterator(), local);
        assertEquals(List.of(p.shards().get(0).getFileName().toString()), p.shards().stream().map(f -> f.getFileName().toString()).toList());
        assertArrayEquals(Files.readAllBytes(dir.resolve("local.bin")), Files.readAllBytes(p.shards().get(0)));
        assertArrayEquals(Files.readAllBytes(dir.resolve("local.bin")),
                Files.readAllBytes(new TokenPreparer(GPT2, TokenPreparer.Format.BIN, "text", ErrorPolicy.FAIL, 1)
                        .run(files, dir.resolve("files")).outputs().get(0)), "documents from a table, documents from files: the same bytes");
    }

    private static List<String> strings(List<Path> files) {
        return files.stream().map(Path::toString).toList();
    }

    private static String messages(Throwable e) {
        StringBuilder b = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            b.append(t.getMessage()).append(" | ");
        }
        return b.toString();
    }

    /** No staging folder left, nor any file under a name that is not a final one. */
    private void assertOnlyPublished() throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            List<String> stray = s.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(".")).toList();
            assertTrue(stray.isEmpty(), "left behind: " + stray);
        }
    }
}
