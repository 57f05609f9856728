package dev.stoker.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.formats.image.ImageFolder;
import dev.stoker.formats.tar.ShardWriter;
import dev.stoker.formats.io.TarReader;
import dev.stoker.formats.io.TarGrouping;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The shard job on Spark in local mode, read back by Python's tarfile, GNU tar and Stoker. */
class SparkShardsTest {
    private static SparkSession spark;

    @TempDir
    Path dir;

    @BeforeAll
    static void start() {
        spark = SparkJobs.session("local[2,3]", "stoker-spark tests");
    }

    @AfterAll
    static void stop() {
        spark.stop();
    }

    /** An image folder of 3 classes, 61 files of random bytes and sizes (the job copies bytes; it decodes nothing). */
    private Path folder() throws IOException {
        Path root = dir.resolve("images");
        SplittableRandom r = new SplittableRandom(5);
        for (int i = 0; i < 61; i++) {
            Path f = root.resolve("class_" + (i % 3)).resolve(String.format("img.%03d.%s", i, i % 5 == 0 ? "png" : "jpg"));
            Files.createDirectories(f.getParent());
            byte[] b = new byte[1 + r.nextInt(3000)];
            r.nextBytes(b);
            Files.write(f, b);
        }
        return root;
    }

    @Test
    void onePartitionWritesTheBytesStokerPrepareWrites() throws IOException {
        Path root = folder();
        Path out = Files.createDirectories(dir.resolve("out"));
        try (ShardWriter w = new ShardWriter(out.resolve("local-%06d.tar").toString(), 10, 40_000)) {
            ImageFolder f = new ImageFolder(root);
            f.writeTo(w, 0, f.size(), () -> { });
        }
        Published p = SparkShards.folder(spark, root.toString(),
                new SparkShards.Options(out.resolve("spark-%06d.tar").toString(), 10, 40_000), 1);
        assertEquals(61, p.count());
        assertTrue(p.shards().size() > 3, "rolled by count and size: " + p.shards());
        for (int i = 0; i < p.shards().size(); i++) {
            assertArrayEquals(Files.readAllBytes(out.resolve(String.format("local-%06d.tar", i))), Files.readAllBytes(p.shards().get(i)));
        }
        try (Stream<Path> s = Files.list(out)) {
            assertEquals(2L * p.shards().size() + 1, s.count(), "the shards, the manifest and the local run's shards");
        }
    }

    @Test
    void manyPartitionsReadBackByTarfileAndGnuTar() throws Exception {
        Path root = folder();
        Path out = Files.createDirectories(dir.resolve("out"));
        Published p = SparkShards.folder(spark, root.toString(),
                new SparkShards.Options(out.resolve("train-%06d.tar").toString(), 7, 1_000_000_000), 3);
        assertEquals(61, p.count());
        // Python's tarfile: every member, shard after shard in the manifest's order, against the source files
        Process py = new ProcessBuilder("/usr/bin/python3", "-c", String.join("\n",
                "import json, os, sys, tarfile",
                "m = json.load(open(sys.argv[1])); d = os.path.dirname(sys.argv[1]); root = sys.argv[2]",
                "files = sorted(os.path.relpath(os.path.join(a, f), root) for a, _, fs in os.walk(root) for f in fs)",
                "seen = []",
                "for s in m['shards']:",
                "    with tarfile.open(os.path.join(d, s['name'])) as t:",
                "        for mem in t.getmembers():",
                "            seen.append((mem.name, t.extractfile(mem).read()))",
                "images = [(n, b) for n, b in seen if not n.endswith('.cls')]",
                "assert len(images) == len(files) == m['samples'], (len(images), len(files))",
                "for (n, b), f in zip(images, files):",
                "    assert b == open(os.path.join(root, f), 'rb').read(), (n, f)",
                "    cls = dict(seen)[n[:n.rindex('.')] + '.cls']",
                "    assert int(cls) == int(f.split('/')[0].split('_')[1]), (n, cls)",
                "print(len(images))"), p.manifest().toString(), root.toString()).redirectErrorStream(true).start();
        String said = new String(py.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, py.waitFor(), said);
        assertEquals("61", said.strip());
        // GNU tar: lists and extracts every shard; members in the order Stoker wrote them
        List<String> members = new ArrayList<>();
        Path x = Files.createDirectories(dir.resolve("x"));
        for (Path s : p.shards()) {
            Process t = new ProcessBuilder("tar", "-xvf", s.toString(), "-C", x.toString()).redirectErrorStream(true).start();
            members.addAll(new String(t.getInputStream().readAllBytes(), StandardCharsets.UTF_8).lines().toList());
            assertEquals(0, t.waitFor(), s.toString());
        }
        assertEquals(122, members.size());
        try (Stream<Path> s = Files.walk(root)) {
            for (Path f : s.filter(Files::isRegularFile).toList()) {
                String rel = root.relativize(f).toString();
                String key = rel.substring(0, rel.lastIndexOf('.')).replace('.', '_');
                String ext = rel.substring(rel.lastIndexOf('.'));
                assertArrayEquals(Files.readAllBytes(f), Files.readAllBytes(x.resolve(key + ext)), rel);
            }
        }
        try (Stream<Path> s = Files.list(out)) {
            assertEquals(List.of(), s.map(f -> f.getFileName().toString()).filter(n -> n.startsWith(".")).toList(), "nothing left behind");
        }
    }

    @Test
    void rowsBecomeSamplesReadBackByStoker() throws IOException {
        StructType schema = new StructType().add("key", DataTypes.StringType).add("txt", DataTypes.StringType)
                .add("bin", DataTypes.BinaryType).add("n", DataTypes.IntegerType);
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            rows.add(RowFactory.create(String.format("s%04d", i), "text " + i + " é", new byte[] {(byte) i, 0, (byte) -i},
                    i % 10 == 0 ? null : i));
        }
        Dataset<Row> df = spark.createDataFrame(rows, schema);
        df = df.repartitionByRange(4, df.col("key")).sortWithinPartitions("key");
        Path out = Files.createDirectories(dir.resolve("rows"));
        Published p = SparkShards.rows(df, "key", new SparkShards.Options(out.resolve("rows-%04d.tar").toString(), 30, 1 << 20));
        assertEquals(100, p.count());
        // Stoker's tar reader: members KEY.FIELD, a row's fields together, rows in order
        java.util.Map<String, java.util.Map<String, byte[]>> got = new java.util.LinkedHashMap<>();
        for (Path s : p.shards()) {
            try (TarReader r = TarReader.open(s)) {
                for (TarReader.Member m; (m = r.next()) != null; ) {
                    String[] kf = TarGrouping.keyAndField(m);
                    got.computeIfAbsent(kf[0], k -> new java.util.LinkedHashMap<>()).put(kf[1], m.data());
                }
            }
        }
        int i = 0;
        for (var e : got.entrySet()) {
            assertEquals(String.format("s%04d", i), e.getKey());
            var f = e.getValue();
            assertEquals("text " + i + " é", new String(f.get("txt"), StandardCharsets.UTF_8));
            assertArrayEquals(new byte[] {(byte) i, 0, (byte) -i}, f.get("bin"));
            assertEquals(i % 10 == 0 ? null : Integer.toString(i), f.containsKey("n") ? new String(f.get("n"), StandardCharsets.US_ASCII) : null);
            i++;
        }
        assertEquals(100, i, "every row once, in order");
    }
}
