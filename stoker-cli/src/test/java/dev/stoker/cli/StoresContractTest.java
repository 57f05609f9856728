package dev.stoker.cli;

import dev.stoker.storage.testing.MemoryStore;
import static dev.stoker.cli.MainTest.field;
import static dev.stoker.cli.MainTest.stoker;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.formats.io.TarWriter;
import dev.stoker.storage.testing.S3Fixture;
import dev.stoker.storage.testing.TestServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The contract every store keeps for every format: the same options give the same batches
 * (digests) wherever the bytes live. One tree of files (tar shards, an image folder, JSON lines,
 * raw tokens, .npy, a Megatron pair, Parquet, HDF5) is read from local disk, a real HTTP server on
 * loopback, S3 (S3Proxy on loopback), the in-memory store, the in-memory store delivering one byte
 * per read, and the in-memory store cutting every response after 3,000 bytes (each resumed). From
 * a store whose every read fails, every format fails as the command-line contract says: exit 1,
 * one line naming the object, no stack trace, no hang.
 */
@Timeout(600)
class StoresContractTest {
    @TempDir
    static Path tmp;
    static Path data;
    static TestServer http;
    static S3Fixture s3;
    static MemoryStore mem;
    static MemoryStore oneByte;
    static MemoryStore cut;
    static MemoryStore failing;
    static final Map<String, String> localDigests = new ConcurrentHashMap<>();

    /** Each format's command, {@code @} standing for the root the files are under. */
    static final Map<String, String[]> FORMATS = new java.util.LinkedHashMap<>();

    static {
        FORMATS.put("tar", new String[] {"shards", "@w-{0..2}.tar", "--transform", "none", "--batch", "5"});
        FORMATS.put("tar-stream", new String[] {"shards", "@w-{0..2}.tar", "--stream", "--shuffle-window-bytes", "3000",
                "--transform", "none", "--batch", "5"});
        FORMATS.put("folder", new String[] {"folder", "@images", "--transform", "none", "--batch", "4"});
        FORMATS.put("jsonl", new String[] {"jsonl", "@docs.jsonl", "--seq-len", "16", "--batch", "4"});
        FORMATS.put("tokens", new String[] {"tokens", "@tokens.bin", "--seq-len", "32", "--batch", "4"});
        FORMATS.put("npy", new String[] {"tokens", "@tokens_u2.npy", "--seq-len", "8", "--batch", "4"});
        FORMATS.put("megatron", new String[] {"tokens", "@docs.idx", "--seq-len", "8", "--batch", "4"});
        FORMATS.put("parquet", new String[] {"parquet", "@rows.parquet", "--columns", "id,label,x", "--batch", "64"});
        FORMATS.put("hdf5", new String[] {"hdf5", "@default.h5", "--dataset", "/x", "--dataset", "/y", "--batch", "8"});
        // other loaders' formats, as their own writers wrote them (an MDS index over sub-folders, zstd chunks, gzip)
        FORMATS.put("mds", new String[] {"mds", "@mds", "--fields", "bytes,int,str", "--batch", "3"});
        FORMATS.put("litdata", new String[] {"litdata", "@litdata", "--fields", "name,label,raw", "--batch", "3"});
        FORMATS.put("arrow", new String[] {"arrow", "@hf-0.arrow", "@hf-1.arrow", "--fields", "id,u64,text,ints,vec3", "--batch", "3"});
        FORMATS.put("tfrecord", new String[] {"tfrecord", "@examples.tfrecord.gz", "--decode", "raw", "--batch", "3"});
    }

    static final List<String> STORES = List.of("http", "s3", "memory", "one-byte", "cut-mid-read");

    @BeforeAll
    static void start() throws Exception {
        data = Files.createDirectories(tmp.resolve("data"));
        Random r = new Random(5);
        for (int s = 0; s < 3; s++) {
            try (TarWriter w = new TarWriter(data.resolve("w-" + s + ".tar"))) {
                for (int i = 0; i < 8 + 5 * s; i++) {
                    byte[] b = new byte[100 + r.nextInt(400)];
                    r.nextBytes(b);
                    w.write("s" + s + "k" + i, Map.of("bin", b, "cls", Integer.toString(i % 3).getBytes(StandardCharsets.US_ASCII)));
                }
            }
        }
        for (String cls : List.of("cat", "dog", "emu")) {
            Path d = Files.createDirectories(data.resolve("images/" + cls));
            for (int i = 0; i < 5; i++) {
                byte[] b = new byte[50 + r.nextInt(200)];
                r.nextBytes(b);
                Files.write(d.resolve(cls + i + ".jpg"), b);
            }
        }
        StringBuilder jsonl = new StringBuilder();
        for (int i = 0; i < 40; i++) {
            jsonl.append("{\"text\": \"document ").append(i).append(' ').append("words ".repeat(r.nextInt(20))).append("\"}\n");
        }
        Files.writeString(data.resolve("docs.jsonl"), jsonl);
        byte[] tokens = new byte[2 * 4000];
        r.nextBytes(tokens);
        Files.write(data.resolve("tokens.bin"), tokens);
        Files.copy(TokensCommandsTest.fixture("npy/tokens_u2.npy"), data.resolve("tokens_u2.npy"));
        Files.copy(TokensCommandsTest.fixture("megatron/docs.idx"), data.resolve("docs.idx"));
        Files.copy(TokensCommandsTest.fixture("megatron/docs.bin"), data.resolve("docs.bin"));
        Files.copy(TokensCommandsTest.fixture("hdf5/default.h5"), data.resolve("default.h5"));
        Files.copy(TokensCommandsTest.root().resolve("stoker-parquet/src/test/resources/parquet/rows-zstd.parquet"),
                data.resolve("rows.parquet"));
        Path interop = TokensCommandsTest.root().resolve("stoker-formats/src/test/resources/interop");
        copyTree(interop.resolve("mds/merged"), data.resolve("mds"));
        copyTree(interop.resolve("litdata/zstd"), data.resolve("litdata"));
        Files.copy(interop.resolve("arrow/saved/data-00000-of-00002.arrow"), data.resolve("hf-0.arrow"));
        Files.copy(interop.resolve("arrow/saved/data-00001-of-00002.arrow"), data.resolve("hf-1.arrow"));
        Files.copy(interop.resolve("tfrecord/examples.tfrecord.gz"), data.resolve("examples.tfrecord.gz"));

        http = new TestServer(data);
        s3 = S3Fixture.start(Files.createDirectories(tmp.resolve("s3")), "data");
        mem = MemoryStore.mount("contract");
        oneByte = MemoryStore.mount("contract-one-byte").chunk(1);
        cut = MemoryStore.mount("contract-cut").cutAfter(3_000);
        failing = MemoryStore.mount("contract-failing");
        try (Stream<Path> files = Files.walk(data)) {
            for (Path f : files.filter(Files::isRegularFile).toList()) {
                String key = data.relativize(f).toString();
                byte[] b = Files.readAllBytes(f);
                s3.put(key, b);
                mem.put(key, b);
                oneByte.put(key, b);
                cut.put(key, b);
                failing.put(key, b);
                failing.failOpens(key, Integer.MAX_VALUE); // every request a 503: retried, then given up
            }
        }
    }

    private static void copyTree(Path from, Path to) throws java.io.IOException {
        try (Stream<Path> files = Files.walk(from)) {
            for (Path f : files.filter(Files::isRegularFile).toList()) {
                Path t = to.resolve(from.relativize(f).toString());
                Files.createDirectories(t.getParent());
                Files.copy(f, t);
            }
        }
    }

    @AfterAll
    static void stop() throws Exception {
        http.close();
        s3.close();
        mem.close();
        oneByte.close();
        cut.close();
        failing.close();
    }

    static String root(String store) {
        return switch (store) {
            case "local" -> data + "/";
            case "http" -> http.url("");
            case "s3" -> s3.location("");
            case "memory" -> mem.location("");
            case "one-byte" -> oneByte.location("");
            case "cut-mid-read" -> cut.location("");
            case "failing" -> failing.location("");
            default -> throw new IllegalArgumentException(store);
        };
    }

    static String[] command(String format, String store, String... more) {
        String[] f = FORMATS.get(format);
        List<String> args = new ArrayList<>(List.of("bench"));
        for (String a : f) {
            args.add(a.startsWith("@") ? root(store) + a.substring(1) : a);
        }
        args.addAll(List.of("--seed", "3", "--workers", "2", "--prefetch", "2", "--json", "--digest"));
        if (!f[0].equals("parquet") && !f[0].equals("folder")) {
            args.addAll(List.of("--cache-dir", tmp.resolve("cache-" + store).toString()));
        }
        args.addAll(List.of(more));
        return args.toArray(String[]::new);
    }

    static String localDigest(String format) {
        return localDigests.computeIfAbsent(format, f -> {
            MainTest.Outcome o = stoker(command(f, "local"));
            assertEquals(0, o.code(), f + " locally: " + o.err());
            return field(o.out().strip(), "digest") + " " + field(o.out().strip(), "samples");
        });
    }

    static Stream<Arguments> formatsAndStores() {
        List<Arguments> out = new ArrayList<>();
        for (String format : FORMATS.keySet()) {
            for (String store : STORES) {
                if (format.equals("folder") && store.equals("http")) {
                    continue; // an HTTP server has no listing: a folder is read from disk or a store that lists
                }
                out.add(Arguments.of(format, store));
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} from {1}")
    @MethodSource("formatsAndStores")
    void everyFormatGivesTheLocalBatchesFromEveryStore(String format, String store) {
        String want = localDigest(format);
        MainTest.Outcome o = stoker(command(format, store));
        assertEquals(0, o.code(), format + " from " + store + ": " + o.err());
        String got = field(o.out().strip(), "digest") + " " + field(o.out().strip(), "samples");
        assertEquals(want, got, format + " from " + store + " gives the local batches");
    }

    static Stream<String> formats() {
        return FORMATS.keySet().stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("formats")
    @Timeout(120)
    void everyFormatFromAFailingStoreFailsWithOneLineNamingTheObject(String format) {
        MainTest.Outcome o = stoker(command(format, "failing"));
        String err = o.err().strip();
        assertEquals(1, o.code(), format + ": " + o.err());
        assertEquals(1, err.lines().count(), format + ": one line: " + o.err());
        assertTrue(err.startsWith("stoker: ") && err.contains(failing.location("")), format + ": names the object: " + err);
        assertTrue(!err.contains("Exception") && !err.contains("\tat "), format + ": no stack trace: " + err);
    }

    @Test
    void aRunSavedWhileReadingFromS3ResumesOnTheStagedLocalCopyByteForByte() throws IOException {
        Path staged = tmp.resolve("staged");
        MainTest.Outcome stage = stoker("stage", s3.location(""), staged.toString());
        assertEquals(0, stage.code(), stage.err());
        for (String format : List.of("tar", "tar-stream", "jsonl", "parquet")) {
            Path whole = tmp.resolve(format + "-whole.txt");
            Path head = tmp.resolve(format + "-head.txt");
            Path tail = tmp.resolve(format + "-tail.txt");
            Path state = tmp.resolve(format + "-state.json");
            assertEquals(0, stoker(command(format, "local", "--digests", whole.toString())).code());
            MainTest.Outcome saved = stoker(command(format, "s3", "--stop-after", "3", "--save-state", state.toString(),
                    "--digests", head.toString()));
            assertEquals(0, saved.code(), saved.err());
            String[] resume = command(format, "local", "--resume", state.toString(), "--digests", tail.toString());
            for (int i = 0; i < resume.length; i++) {
                resume[i] = resume[i].replace(data.toString(), staged.toString());
            }
            MainTest.Outcome resumed = stoker(resume);
            assertEquals(0, resumed.code(), format + ": " + resumed.err());
            List<String> both = new ArrayList<>(Files.readAllLines(head));
            both.addAll(Files.readAllLines(tail));
            assertEquals(3, Files.readAllLines(head).size());
            assertEquals(Files.readAllLines(whole), both, format + ": saved reading S3, resumed on the staged copy");
        }
    }

    @Test
    void whatARemoteSourceReportsAfterARunShowsNoSecretOfItsUrl() {
        String url = http.url("rows.parquet").replace("http://", "http://alice:s3cr3t@") + "?X-Amz-Signature=f00d";
        MainTest.Outcome o = stoker("bench", "parquet", url, "--columns", "id,label,x", "--batch", "64", "--workers", "1");
        assertEquals(0, o.code(), o.err());
        assertTrue(o.err().contains("parquet http://alice:***@") && o.err().contains("X-Amz-Signature=***"), o.err());
        assertTrue(!o.err().contains("s3cr3t") && !o.err().contains("f00d") && !o.out().contains("s3cr3t"), o.err() + o.out());
    }

    @Test
    void prepareReadsItsInputsFromAStoreAsFromDisk() throws IOException {
        Path here = tmp.resolve("prep-local");
        Path there = tmp.resolve("prep-s3");
        MainTest.Outcome a = stoker("prepare", "tokens", data.resolve("docs.jsonl").toString(), "--out", here.toString(),
                "--tokenizer", "bytes", "--workers", "2");
        MainTest.Outcome b = stoker("prepare", "tokens", s3.location("docs.jsonl"), "--out", there.toString(),
                "--tokenizer", "bytes", "--workers", "2", "--cache-dir", tmp.resolve("cache-prep").toString());
        assertEquals(0, a.code(), a.err());
        assertEquals(0, b.code(), b.err());
        assertTrue(Files.size(Path.of(here + ".bin")) > 0);
        assertEquals(-1, Files.mismatch(Path.of(here + ".bin"), Path.of(there + ".bin")), "the same tokens from S3");

        List<String> digests = new ArrayList<>();
        for (String src : List.of(data.resolve("images").toString(), cut.location("images/"))) {
            Path out = Files.createDirectories(tmp.resolve("prep-shards-" + digests.size()));
            MainTest.Outcome p = stoker("prepare", "shards", src, "--out", out.resolve("s-%03d.tar").toString(),
                    "--maxcount", "4");
            assertEquals(0, p.code(), p.err());
            MainTest.Outcome o = stoker("bench", "shards", out.resolve("s-{000..003}.tar").toString(), "--transform", "none",
                    "--batch", "3", "--seed", "1", "--workers", "1", "--prefetch", "1", "--json", "--digest");
            assertEquals(0, o.code(), o.err());
            digests.add(field(o.out().strip(), "digest"));
        }
        assertEquals(digests.get(0), digests.get(1), "the same shards from an image folder under a store's prefix");
    }
}
