package dev.stoker.cli;

import static dev.stoker.cli.MainTest.field;
import static dev.stoker.cli.MainTest.stoker;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.formats.io.TarWriter;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TarCommandsTest {
    @TempDir
    Path tmp;

    void shard(String name, int n) throws IOException {
        try (TarWriter w = new TarWriter(tmp.resolve(name))) {
            for (int i = 0; i < n; i++) {
                w.write("k" + i, Map.of("jpg", new byte[] {1}, "cls", ("" + i).getBytes()));
            }
        }
    }

    @Test
    void lsListsSamplesInShardOrderWithSortedFields() throws IOException {
        shard("a-000.tar", 2);
        shard("a-001.tar", 1);
        MainTest.Outcome o = stoker("ls", tmp.resolve("a-{000..001}.tar").toString());
        assertEquals(0, o.code(), o.err());
        assertEquals(List.of("k0\tcls,jpg", "k1\tcls,jpg", "k0\tcls,jpg"), o.out().lines().toList());
        assertEquals(1, stoker("ls", tmp.resolve("missing.tar").toString()).code());
    }

    @Test
    void inspectCountsFieldsAndWarnsAboutUnevenShards() throws IOException {
        shard("s-0.tar", 10);
        shard("s-1.tar", 10);
        shard("s-2.tar", 3);
        MainTest.Outcome o = stoker("inspect", "--json", tmp.resolve("s-0.tar").toString(), tmp.resolve("s-1.tar").toString(),
                tmp.resolve("s-2.tar").toString());
        assertEquals(0, o.code(), o.err());
        List<String> lines = o.out().lines().toList();
        assertEquals("tar", field(lines.get(0), "format"));
        assertEquals("10", field(lines.get(0), "samples"));
        assertTrue(lines.get(0).contains("\"fields\":{\"cls\":10,\"jpg\":10}"), lines.get(0));
        assertTrue(lines.get(0).contains("\"keys\":[\"k0\",\"k1\",\"k2\""), lines.get(0));
        assertTrue(lines.get(0).contains("\"warnings\":[]"), lines.get(0));
        assertTrue(lines.get(2).contains("uneven shard: 3 samples where the median shard has 10"), lines.get(2));
    }

    @Test
    void inspectTakesTheBracePatternsLsTakes() throws IOException {
        shard("b-000.tar", 2);
        shard("b-001.tar", 5);
        MainTest.Outcome o = stoker("inspect", "--json", tmp.resolve("b-{000..001}.tar").toString());
        assertEquals(0, o.code(), o.err());
        List<String> lines = o.out().lines().toList();
        assertEquals(2, lines.size(), o.out());
        assertEquals(tmp.resolve("b-000.tar").toString(), field(lines.get(0), "path"));
        assertEquals("5", field(lines.get(1), "samples"));
        assertEquals(2, stoker("inspect", tmp.resolve("b-{000..001.tar").toString()).code(), "an unclosed brace is a usage error");
    }

    @Test
    void inspectOfAnUnknownFileNamesEveryFormatItReads() throws IOException {
        Path odd = tmp.resolve("notes.txt");
        java.nio.file.Files.writeString(odd, "hello");
        MainTest.Outcome o = stoker("inspect", odd.toString());
        assertEquals(1, o.code());
        for (String format : List.of("HDF5", "Parquet", "Arrow", "TFRecord", "ArrayRecord", "MDS", "LitData", "JSON lines", ".npy")) {
            assertTrue(o.err().contains(format), format + " named: " + o.err());
        }
        assertEquals(1, o.err().lines().count(), o.err());
    }

    @Test
    void inspectPlotDrawsTheDistributionsAndJsonListsTheSameCounts() throws IOException {
        shard("p-0.tar", 10);
        shard("p-1.tar", 4);
        Path png = tmp.resolve("dist.png");
        Path megatron = TokensCommandsTest.fixture("megatron/docs.idx");
        MainTest.Outcome o = stoker("inspect", "--json", "--plot", png.toString(), tmp.resolve("p-0.tar").toString(),
                tmp.resolve("p-1.tar").toString(), megatron.toString());
        assertEquals(0, o.code(), o.err());
        List<String> lines = o.out().lines().toList();
        // each sample is 1 byte of jpg and its label's digits: sizes 2 (k0..k9) and 3 (k10..)
        assertTrue(lines.get(0).contains("\"sampleBytes\":{\"labels\":[\"2\"],\"counts\":[10]}"), lines.get(0));
        assertTrue(lines.get(0).contains("\"labels\":{\"labels\":["), lines.get(0));
        assertTrue(lines.get(2).contains("\"documentTokens\""), lines.get(2));
        java.awt.image.BufferedImage image = javax.imageio.ImageIO.read(png.toFile());
        assertEquals(900, image.getWidth());
        assertEquals(4 * 360, image.getHeight(), "sizes, labels and samples per shard of the tar shards, document lengths");
        MainTest.Outcome none = stoker("inspect", "--plot", tmp.resolve("none.png").toString(),
                TokensCommandsTest.fixture("npy/b1_na.npy").toString());
        assertEquals(1, none.code(), none.out());
        assertTrue(none.err().contains("nothing to plot"), none.err());
    }

    @Test
    void benchShardsReadsPlainShardsThroughTheIndexAndCompressedOnesAsStreams() throws IOException {
        shard("p-0.tar", 30);
        java.nio.file.Path gz = tmp.resolve("p-1.tar.gz");
        try (var out = new java.util.zip.GZIPOutputStream(java.nio.file.Files.newOutputStream(gz))) {
            out.write(java.nio.file.Files.readAllBytes(tmp.resolve("p-0.tar")));
        }
        MainTest.Outcome plain = stoker("bench", "shards", tmp.resolve("p-0.tar").toString(), "--transform", "none",
                "--batch", "8", "--json", "--digest");
        MainTest.Outcome stream = stoker("bench", "shards", gz.toString(), "--transform", "none", "--batch", "8",
                "--order", "sequential", "--json", "--digest");
        assertEquals(0, plain.code(), plain.err());
        assertEquals(0, stream.code(), stream.err());
        assertEquals("30", field(plain.out().strip(), "samples"));
        assertEquals("30", field(stream.out().strip(), "samples"));
        MainTest.Outcome ordered = stoker("bench", "shards", tmp.resolve("p-0.tar").toString(), "--transform", "none",
                "--batch", "8", "--order", "sequential", "--json", "--digest");
        assertEquals(field(ordered.out().strip(), "digest"), field(stream.out().strip(), "digest"),
                "the same bytes in the same order either way");
        // a shuffle window of ~40 bytes (samples of 4-6 bytes: key, one byte of jpg, the label)
        MainTest.Outcome window = stoker("bench", "shards", gz.toString(), "--transform", "none", "--batch", "8",
                "--order", "sequential", "--shuffle-window-bytes", "40", "--json", "--digest");
        assertEquals(0, window.code(), window.err());
        assertEquals("30", field(window.out().strip(), "samples"));
        double moved = Double.parseDouble(field(window.out().strip(), "meanDisplacement"));
        assertTrue(moved > 0 && moved < 10, "samples moved within blocks of about eight: " + moved);
        assertNotEquals(field(stream.out().strip(), "digest"), field(window.out().strip(), "digest"));
        // a plain shard read as a stream on request (or for a shuffle window): the stream's order and bytes
        MainTest.Outcome streamed = stoker("bench", "shards", tmp.resolve("p-0.tar").toString(), "--stream", "--transform",
                "none", "--batch", "8", "--order", "sequential", "--json", "--digest");
        assertEquals(0, streamed.code(), streamed.err());
        assertEquals(field(stream.out().strip(), "digest"), field(streamed.out().strip(), "digest"));
        MainTest.Outcome plainWindow = stoker("bench", "shards", tmp.resolve("p-0.tar").toString(), "--transform", "none",
                "--batch", "8", "--order", "sequential", "--shuffle-window-bytes", "40", "--json", "--digest");
        assertEquals(0, plainWindow.code(), plainWindow.err());
        assertEquals(field(window.out().strip(), "digest"), field(plainWindow.out().strip(), "digest"));
    }

    @Test
    void benchShardsStreamsHttpShardsThroughTheCacheWithTheSameBytesAsLocalOnes() throws IOException {
        Path served = java.nio.file.Files.createDirectories(tmp.resolve("served"));
        for (int i = 0; i < 3; i++) {
            try (TarWriter w = new TarWriter(served.resolve("r-" + i + ".tar"))) {
                for (int k = 0; k < 10; k++) {
                    w.write("s" + i + "k" + k, Map.of("jpg", new byte[] {(byte) k}, "cls", ("" + k).getBytes()));
                }
            }
        }
        var server = com.sun.net.httpserver.SimpleFileServer.createFileServer(
                new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0), served.toAbsolutePath(),
                com.sun.net.httpserver.SimpleFileServer.OutputLevel.NONE);
        server.start();
        try {
            String base = "http://127.0.0.1:" + server.getAddress().getPort() + "/";
            String[] common = {"--transform", "none", "--batch", "4", "--order", "sequential", "--json"};
            MainTest.Outcome remote = stoker(concat(new String[] {"bench", "shards", base + "r-{0..2}.tar",
                    "--cache-dir", tmp.resolve("cache").toString()}, common));
            assertEquals(0, remote.code(), remote.err());
            assertEquals("30", field(remote.out().strip(), "samples"));
            var m = java.util.regex.Pattern.compile("(\\d+) hits, (\\d+) misses").matcher(remote.err());
            assertTrue(m.find(), remote.err());
            assertEquals(3, Integer.parseInt(m.group(1)) + Integer.parseInt(m.group(2)), "each shard acquired once: " + remote.err());
            assertTrue(remote.err().contains("MB downloaded") && !remote.err().contains(" 0.0 MB"), remote.err());
            assertTrue(java.nio.file.Files.exists(tmp.resolve("cache")), "the cache directory was used");
            MainTest.Outcome again = stoker(concat(new String[] {"bench", "shards", base + "r-{0..2}.tar",
                    "--cache-dir", tmp.resolve("cache").toString()}, common));
            assertEquals(field(remote.out().strip(), "digest"), field(again.out().strip(), "digest"), "same bytes, same order");
            assertTrue(again.err().contains("3 hits, 0 misses"), again.err());
            MainTest.Outcome staged = stoker("stage", base + "r-{0..2}.tar", tmp.resolve("staged").toString(), "--json");
            assertEquals(0, staged.code(), staged.err());
            assertEquals("3", field(staged.out().strip(), "copied"));
            for (int i = 0; i < 3; i++) {
                assertEquals(java.util.Arrays.toString(java.nio.file.Files.readAllBytes(served.resolve("r-" + i + ".tar"))),
                        java.util.Arrays.toString(java.nio.file.Files.readAllBytes(tmp.resolve("staged/r-" + i + ".tar"))));
            }
            MainTest.Outcome restaged = stoker("stage", served.toString(), tmp.resolve("staged").toString(), "--json");
            assertEquals("3", field(restaged.out().strip(), "kept"), restaged.out());
            MainTest.Outcome missing = stoker("bench", "shards", base + "nope.tar", "--cache-dir", tmp.resolve("cache").toString());
            assertEquals(1, missing.code());
            assertTrue(missing.err().contains("nope.tar") && missing.err().contains("404"), missing.err());
        } finally {
            server.stop(0);
        }
    }

    static String[] concat(String[] a, String... b) {
        String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    /** Shards served by a real HTTP server on loopback (the JDK's file server). */
    static <T> T overHttp(Path dir, java.util.function.Function<String, T> run) {
        var server = com.sun.net.httpserver.SimpleFileServer.createFileServer(
                new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0), dir.toAbsolutePath(),
                com.sun.net.httpserver.SimpleFileServer.OutputLevel.NONE);
        server.start();
        try {
            return run.apply("http://127.0.0.1:" + server.getAddress().getPort() + "/");
        } finally {
            server.stop(0);
        }
    }

    @Test
    void remoteShardsGiveTheLocalBatchesWithTheSameOptions() throws IOException {
        Path shards = java.nio.file.Files.createDirectories(tmp.resolve("served"));
        for (int s = 0; s < 3; s++) {
            shard("served/w-" + s + ".tar", 10 + 7 * s);
        }
        String local = shards.resolve("w-{0..2}.tar").toString();
        String cache = tmp.resolve("cache").toString();
        for (String[] mode : new String[][] {{}, {"--stream"}, {"--shuffle-window-bytes", "40"}}) {
            String[] opts = concat(new String[] {"--transform", "none", "--batch", "5", "--seed", "3", "--json", "--digest",
                    "--cache-dir", cache}, mode);
            MainTest.Outcome here = stoker(concat(new String[] {"bench", "shards", local}, opts));
            MainTest.Outcome there = overHttp(shards, url -> stoker(concat(new String[] {"bench", "shards", url + "w-{0..2}.tar"},
                    opts)));
            assertEquals(0, here.code(), here.err());
            assertEquals(0, there.code(), there.err());
            assertEquals(field(here.out().strip(), "digest"), field(there.out().strip(), "digest"),
                    "the same batches from disk and over HTTP, " + (mode.length == 0 ? "shuffled through the index" : mode[0]));
            assertEquals("51", field(there.out().strip(), "samples"));
        }
    }

    @Test
    void aGlobalShuffleOfRemoteShardsThatDoNotFitTheCacheSaysWhatToDo() throws IOException {
        Path shards = java.nio.file.Files.createDirectories(tmp.resolve("served"));
        shard("served/w-0.tar", 50);
        MainTest.Outcome o = overHttp(shards, url -> stoker("bench", "shards", url + "w-0.tar", "--transform", "none",
                "--cache-dir", tmp.resolve("cache").toString(), "--cache-size", "1000"));
        assertEquals(2, o.code(), o.err());
        assertTrue(o.err().contains("--shard-cache-bytes is too small") && o.err().contains("raise it, or read them as a stream "
                + "(--stream, with --shuffle-window-bytes"), o.err());
    }

    @Test
    void aRunSavedWhileReadingOverHttpResumesFromTheLocalCopyByteForByte() throws IOException {
        Path shards = java.nio.file.Files.createDirectories(tmp.resolve("served"));
        for (int s = 0; s < 3; s++) {
            shard("served/w-" + s + ".tar", 9 + 4 * s);
        }
        savedOverHttpResumesLocallyByteForByte(shards, "--transform", "none", "--batch", "4", "--seed", "8", "--workers", "2");
    }

    /**
     * Runs {@code w-{0..2}.tar} of {@code shards} with {@code common} options three ways: whole
     * and local; saved after 3 batches while read over HTTP; resumed from that state locally. The
     * saved and the resumed batches together must be the whole run's. Returns the state file.
     */
    private Path savedOverHttpResumesLocallyByteForByte(Path shards, String... common) throws IOException {
        String local = shards.resolve("w-{0..2}.tar").toString();
        Path whole = tmp.resolve("whole.txt");
        Path head = tmp.resolve("head.txt");
        Path tail = tmp.resolve("tail.txt");
        Path state = tmp.resolve("state.json");
        assertEquals(0, stoker(concat(new String[] {"bench", "shards", local, "--digests", whole.toString()}, common)).code());
        MainTest.Outcome saved = overHttp(shards, url -> stoker(concat(new String[] {"bench", "shards", url + "w-{0..2}.tar",
                "--cache-dir", tmp.resolve("cache").toString(), "--stop-after", "3", "--save-state", state.toString(),
                "--digests", head.toString()}, common)));
        assertEquals(0, saved.code(), saved.err());
        MainTest.Outcome resumed = stoker(concat(new String[] {"bench", "shards", local, "--resume", state.toString(),
                "--digests", tail.toString()}, common));
        assertEquals(0, resumed.code(), resumed.err());
        List<String> both = new java.util.ArrayList<>(java.nio.file.Files.readAllLines(head));
        both.addAll(java.nio.file.Files.readAllLines(tail));
        assertEquals(java.nio.file.Files.readAllLines(whole), both);
        return state;
    }

    @Test
    void anImageDtypeWithoutAnImageTransformIsBadUsage() throws IOException {
        shard("a.tar", 2);
        MainTest.Outcome o = stoker("bench", "shards", tmp.resolve("a.tar").toString(), "--transform", "none", "--image-dtype", "uint8");
        assertEquals(2, o.code(), o.err());
        assertTrue(o.err().contains("--image-dtype, --size, --scale, --ratio, --flip, --resize and --label are for --transform train or eval, not none"), o.err());
        MainTest.Outcome bad = stoker("bench", "shards", tmp.resolve("a.tar").toString(), "--image-dtype", "int4");
        assertEquals(2, bad.code(), bad.err());
        assertTrue(bad.err().contains("--image-dtype must be float32 or uint8, got 'int4'"), bad.err());
    }

    @Test
    void aStreamSavedOverHttpResumesOnALocalCopyAndIsRefusedOnOtherShards() throws IOException {
        Path shards = java.nio.file.Files.createDirectories(tmp.resolve("served"));
        Path others = java.nio.file.Files.createDirectories(tmp.resolve("others"));
        for (int s = 0; s < 3; s++) {
            shard("served/w-" + s + ".tar", 9 + 4 * s);
            shard("others/v-" + s + ".tar", 9 + 4 * s); // the same sizes and samples, other shards
        }
        String[] common = {"--stream", "--transform", "none", "--batch", "4", "--seed", "8", "--workers", "2"};
        Path state = savedOverHttpResumesLocallyByteForByte(shards, common);
        MainTest.Outcome refused = stoker(concat(new String[] {"bench", "shards", others.resolve("v-{0..2}.tar").toString(),
                "--resume", state.toString()}, common));
        assertTrue(refused.code() != 0 && refused.err().contains("the state was saved from other data"), refused.err());
    }

    @Test
    void aStreamOfStreamsResumesAtAnotherWorldSizeFromEveryOldRanksState() throws IOException {
        for (int s = 0; s < 7; s++) {
            shard("e-" + s + ".tar", 5 + 3 * s);
        }
        String[] common = {"bench", "shards", tmp.resolve("e-{0..6}.tar").toString(), "--stream", "--transform", "none",
            "--batch", "3", "--seed", "5", "--workers", "2", "--streams", "6", "--shuffle-window", "7"};
        Map<Long, Integer> whole = new java.util.HashMap<>();
        for (int rank = 0; rank < 2; rank++) {
            Path ids = tmp.resolve("whole-" + rank);
            MainTest.Outcome o = stoker(concat(common, "--world-size", "2", "--rank", "" + rank, "--ids", ids.toString()));
            assertEquals(0, o.code(), o.err());
            count(ids, whole);
        }
        Map<Long, Integer> seen = new java.util.HashMap<>();
        String[] states = new String[2];
        for (int rank = 0; rank < 2; rank++) {
            Path ids = tmp.resolve("before-" + rank);
            states[rank] = tmp.resolve("state-" + rank + ".json").toString();
            MainTest.Outcome o = stoker(concat(common, "--world-size", "2", "--rank", "" + rank, "--stop-after", "" + (3 + 4 * rank),
                    "--save-state", states[rank], "--ids", ids.toString()));
            assertEquals(0, o.code(), o.err());
            count(ids, seen);
        }
        MainTest.Outcome one = stoker(concat(common, "--world-size", "3", "--rank", "0", "--resume", states[0]));
        assertTrue(one.code() != 0 && one.err().contains("reads streams [0, 3] of 6, and the state holds only [0, 2, 4]"),
                one.err());
        for (int rank = 0; rank < 3; rank++) {
            Path ids = tmp.resolve("after-" + rank);
            MainTest.Outcome o = stoker(concat(common, "--world-size", "3", "--rank", "" + rank, "--resume", states[0],
                    "--resume", states[1], "--ids", ids.toString()));
            assertEquals(0, o.code(), o.err());
            count(ids, seen);
        }
        assertEquals(whole, seen, "each sample of the epoch once, across the change from 2 ranks to 3");
    }

    private static void count(Path ids, Map<Long, Integer> seen) throws IOException {
        for (String line : java.nio.file.Files.readAllLines(ids)) {
            for (String id : line.split(" ")) {
                seen.merge(Long.parseLong(id), 1, Integer::sum);
            }
        }
    }

    @Test
    void skippedShardsAndSkippedLinesAreCountedInTheJsonAndTheTable() throws IOException {
        shard("good.tar", 5);
        Path empty = java.nio.file.Files.createFile(tmp.resolve("empty.tar"));
        String good = tmp.resolve("good.tar").toString();
        for (String[] mode : new String[][] {{}, {"--stream"}}) {
            MainTest.Outcome failed = stoker(concat(new String[] {"bench", "shards", good, empty.toString(), "--transform", "none"}, mode));
            assertEquals(1, failed.code(), failed.err());
            assertTrue(failed.err().startsWith("stoker: " + empty + ": ") && failed.err().contains("empty: 0 bytes, not a tar archive")
                    && failed.err().indexOf(empty.toString()) == failed.err().lastIndexOf(empty.toString()), failed.err()); // named once
            MainTest.Outcome json = stoker(concat(new String[] {"bench", "shards", good, empty.toString(), "--transform", "none",
                    "--errors", "skip-shard", "--json"}, mode));
            assertEquals(0, json.code(), json.err());
            assertEquals("5", field(json.out().strip(), "samples"));
            assertEquals("1", field(json.out().strip(), "skippedShards"));
            MainTest.Outcome table = stoker(concat(new String[] {"bench", "shards", good, empty.toString(), "--transform", "none",
                    "--errors", "skip-shard"}, mode));
            assertTrue(table.out().contains("skipped 1 unreadable shards"), table.out());
        }
        Path lines = tmp.resolve("some-bad.jsonl");
        java.nio.file.Files.writeString(lines, "{\"text\": \"a fine line of text\"}\n{oops\n".repeat(20));
        for (String f : new String[] {lines.toString(), gzip(lines).toString()}) {
            MainTest.Outcome j = stoker("bench", "jsonl", f, "--seq-len", "8", "--batch", "2", "--skip-bad", "--json");
            assertEquals(0, j.code(), j.err());
            assertEquals("20", field(j.out().strip(), "skipped"), f);
        }
    }

    private Path gzip(Path p) throws IOException {
        Path gz = Path.of(p + ".gz");
        try (var out = new java.util.zip.GZIPOutputStream(java.nio.file.Files.newOutputStream(gz))) {
            out.write(java.nio.file.Files.readAllBytes(p));
        }
        return gz;
    }

    @Test
    void lsAndInspectReadShardsAtAUrlAsTheLocalOnes() throws IOException {
        Path shards = java.nio.file.Files.createDirectories(tmp.resolve("served"));
        shard("served/w-0.tar", 3);
        shard("served/w-1.tar", 2);
        String cache = tmp.resolve("cache").toString();
        MainTest.Outcome here = stoker("ls", shards.resolve("w-{0..1}.tar").toString());
        MainTest.Outcome there = overHttp(shards, url -> stoker("ls", url + "w-{0..1}.tar", "--cache-dir", cache));
        assertEquals(0, there.code(), there.err());
        assertEquals(here.out(), there.out());
        MainTest.Outcome inspect = overHttp(shards, url -> stoker("inspect", "--json", url + "w-1.tar", "--cache-dir", cache));
        assertEquals(0, inspect.code(), inspect.err());
        assertEquals("2", field(inspect.out().strip(), "samples"));
        assertTrue(field(inspect.out().strip(), "path").startsWith("http://127.0.0.1:"), inspect.out());
    }
}
