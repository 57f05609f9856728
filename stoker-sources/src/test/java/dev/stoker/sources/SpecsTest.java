package dev.stoker.sources;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.Batch;
import dev.stoker.Loader;
import dev.stoker.LoaderBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Specs are plain data: JSON round trips, defaults for what is left out, errors that name the option. */
class SpecsTest {
    @Test
    void everyKindRoundTripsThroughJsonEqual() {
        List<SourceSpec> specs = List.of(new Synthetic(10, 8, 1.5),
                new Tokens(List.of("a.bin", "b.npy"), 64, "uint32", "int32", Tokens.Windows.RANDOM, List.of(0.25, 0.75), 50256, true,
                        new RemoteCache("/tmp/c", 1000)),
                new Jsonl(List.of("a.jsonl.gz"), "gpt2", 128, "body", 64, 32, "int64", "disk", RemoteCache.DEFAULT),
                Shards.of("s-{000..009}.tar").withImages(new Images(Images.Transform.EVAL, 160, null, null, 0.0, 180, "json:label", true,
                        null, "uint8", "device", null, null, null)).withStream(true),
                new Folder("/data/train", Images.none()),
                Hdf5.of("s3://b/x.h5", List.of("/x", "/y")),
                new Parquet("https://h/t.parquet", List.of("a", "b"), "a >= 3", 64, 4),
                new Root(List.of("a.root", "s3://b/c.root"), "dir/events", List.of("Jet_*", "NJet"), 64));
        for (SourceSpec s : specs) {
            assertEquals(s, Specs.source(Specs.json(s)), Specs.json(s));
        }
        LoaderSpec l = LoaderSpec.builder().batchSize(8).workers(0).seed(7L).epoch(3L).rank(1).worldSize(4)
                .order(LoaderSpec.Order.SEQUENTIAL).shuffleWindow(100).shuffleWindowBytes(1L << 20).timeoutMs(5000L).dropLast(true)
                .errors(LoaderSpec.Errors.SKIP_SHARD).cores(2).memoryLimit(1L << 30).streams(8).inMemory(true).build();
        assertEquals(l, Specs.loader(Specs.json(l)));
    }

    @Test
    void whatIsLeftOutTakesItsDefault() {
        Tokens t = (Tokens) Specs.source("{\"kind\": \"tokens\", \"paths\": [\"a.bin\"]}");
        assertEquals(Tokens.of(List.of("a.bin")), t);
        Shards s = (Shards) Specs.source("{\"kind\": \"shards\", \"paths\": [\"a.tar\"], \"images\": {\"size\": 96}}");
        assertEquals(96, s.images().size());
        assertEquals(Images.Transform.TRAIN, s.images().transform());
        assertNull(s.images().flip());
        assertEquals(RemoteCache.DEFAULT, s.cache());
        assertEquals(LoaderSpec.DEFAULT, Specs.loader("{}"));
        assertEquals(LoaderSpec.DEFAULT.withBatchSize(4), Specs.loader("{\"batch_size\": 4, \"workers\": null}"));
    }

    @Test
    void aBadSpecNamesTheOption() {
        assertEquals("seq_len", option("{\"kind\": \"tokens\", \"paths\": [\"a\"], \"seq_len\": 0}"));
        assertEquals("seq_lenn", option("{\"kind\": \"tokens\", \"paths\": [\"a\"], \"seq_lenn\": 8}"));
        assertEquals("seq_len", option("{\"kind\": \"tokens\", \"paths\": [\"a\"], \"seq_len\": 8.5}"));
        assertEquals("seq_len", option("{\"kind\": \"tokens\", \"paths\": [\"a\"], \"seq_len\": \"8\"}"));
        assertEquals("size", option("{\"kind\": \"shards\", \"paths\": [\"a\"], \"images\": {\"size\": -1}}"));
        assertEquals("image_dtype", option("{\"kind\": \"folder\", \"path\": \"d\", \"images\": {\"image_dtype\": \"int4\"}}"));
        assertEquals("kind", option("{\"kind\": \"images\"}"));
        assertEquals("kind", option("{\"paths\": [\"a\"]}"));
        SpecException e = assertThrows(SpecException.class, () -> Specs.loader("{\"errors\": \"ignore\"}"));
        assertEquals("errors", e.option());
        assertEquals("--errors must be fail, skip-sample or skip-shard, got 'ignore'", e.message(o -> "--" + o));
        assertEquals("rank", assertThrows(SpecException.class, () -> Specs.loader("{\"rank\": 2, \"world_size\": 2}")).option());
        assertThrows(SpecException.class, () -> Specs.source("[1, 2]"));
        assertThrows(SpecException.class, () -> Specs.source("{\"kind\": \"synthetic\"} trailing"));
    }

    @Test
    void aFolderOptionTakesItsWordsOrAPathAndRefusesAnotherWord() {
        SpecException e = assertThrows(SpecException.class,
                () -> Specs.source("{\"kind\": \"shards\", \"paths\": [\"a\"], \"images\": {\"image_cache\": \"bogus\"}}"));
        assertEquals("image_cache", e.option());
        assertEquals("--image_cache must be ram or disk, or a folder: a path with a '/' (./bogus), got 'bogus'", e.message(o -> "--" + o));
        assertEquals("window_cache", option("{\"kind\": \"jsonl\", \"paths\": [\"a\"], \"window_cache\": \"ram\"}"));
        for (String ok : List.of("ram", "disk", "./kept", "/tmp/kept")) {
            Specs.source("{\"kind\": \"shards\", \"paths\": [\"a\"], \"images\": {\"image_cache\": \"" + ok + "\"}}");
        }
        Specs.source("{\"kind\": \"jsonl\", \"paths\": [\"a\"], \"window_cache\": \"w/\"}");
    }

    @Test
    void aRequiredOptionIsCheckedWhenTheSourceOpens() {
        SpecException e = assertThrows(SpecException.class, () -> Tokens.of(List.of()).open(LoaderSpec.DEFAULT));
        assertEquals("paths", e.option());
        assertEquals("datasets", assertThrows(SpecException.class, () -> Hdf5.of("x.h5", List.of()).open(LoaderSpec.DEFAULT)).option());
        assertEquals("tree", assertThrows(SpecException.class, () -> Root.of(List.of("x.root"), null).open(LoaderSpec.DEFAULT)).option());
        assertEquals("paths", assertThrows(SpecException.class, () -> Root.of(List.of(), "t").open(LoaderSpec.DEFAULT)).option());
    }

    @Test
    void theOptionsOfEachKindAreItsRecordsFlattened() {
        assertEquals("images", Specs.options("shards").get("size"));
        assertEquals("cache", Specs.options("shards").get("shard_cache"));
        assertEquals("", Specs.options("shards").get("stream"));
        assertTrue(Specs.loaderOptions().contains("batch_size"));
    }

    @Test
    void aTokenSpecOpensToTheWindowsItDescribes(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("t.bin");
        byte[] tokens = new byte[2 * 100];
        for (int i = 0; i < 100; i++) {
            tokens[2 * i] = (byte) i;
        }
        Files.write(file, tokens);
        Tokens spec = Tokens.of(List.of(file.toString())).withSeqLen(9);
        LoaderSpec loader = LoaderSpec.DEFAULT.withBatchSize(2).withWorkers(0, null);
        try (Recipe r = spec.open(loader)) {
            assertEquals(9, r.tokensPerSample());
            assertEquals("tokens", r.name());
            // two loaders from one recipe: the same batches
            List<Long> first = firstTokens(r.builder(loader).epoch(0));
            assertEquals(first, firstTokens(r.builder(loader).epoch(0)));
            assertEquals(11, first.size()); // (100 - 1) / 9 windows
            assertEquals(List.of(0L, 9L, 18L, 27L, 36L, 45L, 54L, 63L, 72L, 81L, 90L), first.stream().sorted().toList());
        }
    }

    /**
     * windows="offset": each of the disjoint windows once an epoch, shifted by an offset below
     * seq_len that changes with the epoch; order="blocks": each batch a contiguous run. Both resume
     * exactly (their orders are pure functions of seed and epoch).
     */
    @Test
    void offsetWindowsAndBlockOrderReadEachChunkOnceAndResumeExactly(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("t.bin");
        byte[] tokens = new byte[2 * 1000];
        for (int i = 0; i < 1000; i++) {
            tokens[2 * i] = (byte) i;
            tokens[2 * i + 1] = (byte) (i >> 8);
        }
        Files.write(file, tokens);
        Tokens t = Tokens.of(List.of(file.toString())).withSeqLen(9);
        Tokens offset = new Tokens(t.paths(), 9, t.dtype(), t.outDtype(), Tokens.Windows.OFFSET, null, t.separator(), t.raw(), t.cache());
        LoaderSpec loader = LoaderSpec.DEFAULT.withBatchSize(4).withWorkers(0, null);
        try (Recipe r = offset.open(loader)) {
            List<Long> first = firstTokens(r.builder(loader).epoch(0));
            List<Long> second = firstTokens(r.builder(loader).epoch(1));
            assertEquals(110, first.size()); // (1000 - 9) / 9 chunks
            assertEquals(java.util.stream.LongStream.range(0, 110).boxed().toList(),
                    first.stream().map(x -> x / 9).sorted().toList(), "each chunk once");
            assertTrue(first.stream().anyMatch(x -> x % 9 != 0), "shifted: " + first);
            assertTrue(!first.stream().sorted().toList().equals(second.stream().sorted().toList()), "other offsets next epoch");
            assertResumes(r, loader);
        }
        LoaderSpec blocks = LoaderSpec.builder().batchSize(4).workers(0).seed(5L).order(LoaderSpec.Order.BLOCKS).build();
        try (Recipe r = t.open(blocks)) {
            List<Long> first = firstTokens(r.builder(blocks).epoch(0));
            assertEquals(111, first.size()); // (1000 - 1) / 9 + 1 windows
            for (int b = 0; b + 4 <= first.size(); b += 4) { // whole blocks, the short one last; one may wrap
                long head = first.get(b);
                List<Long> run = first.subList(b, b + 4).stream().map(x -> (x - head + 999) % 999).toList();
                assertEquals(List.of(0L, 9L, 18L, 27L), run, "batch " + b / 4 + ": " + first);
            }
            assertEquals(java.util.stream.LongStream.range(0, 111).map(i -> i * 9).boxed().toList(), first.stream().sorted().toList());
            assertResumes(r, blocks);
        }
    }

    /** A loader resumed from its state after 5 batches delivers what the uninterrupted run did after them. */
    private static void assertResumes(Recipe r, LoaderSpec spec) throws Exception {
        List<Long> whole = firstTokens(r.builder(spec).epoch(0));
        List<Long> got = new java.util.ArrayList<>();
        dev.stoker.LoaderState state;
        try (Loader l = r.builder(spec).epoch(0).build()) {
            java.util.Iterator<Batch> it = l.iterator();
            for (int k = 0; k < 5; k++) {
                Batch batch = it.next();
                for (int row = 0; row < batch.size(); row++) {
                    got.add(batch.data("x").getAtIndex(java.lang.foreign.ValueLayout.JAVA_LONG, (long) row * 9));
                }
            }
            state = dev.stoker.LoaderState.fromJson(l.state().toJson());
        }
        got.addAll(firstTokens(r.builder(spec).resume(state)));
        assertEquals(whole, got);
    }

    @Test
    void anImageCacheIsEstimatedFirstAndRefusedPastItsBoundWithTheNumbers(@TempDir Path dir) throws Exception {
        Path shard = dir.resolve("img-000000.tar");
        try (var w = new dev.stoker.formats.io.TarWriter(shard)) {
            for (int i = 0; i < 8; i++) {
                var img = new java.awt.image.BufferedImage(64, 48, java.awt.image.BufferedImage.TYPE_INT_RGB);
                img.setRGB(i, i, 0xff0000);
                var out = new java.io.ByteArrayOutputStream();
                javax.imageio.ImageIO.write(img, "jpg", out);
                w.write("s" + i, java.util.Map.of("jpg", out.toByteArray(), "cls", ("" + i).getBytes()));
            }
        }
        LoaderSpec loader = LoaderSpec.DEFAULT.withBatchSize(4).withWorkers(0, null);
        Images tiny = Images.train(32).withImageCache("ram", null, 1000L);
        SpecException e = assertThrows(SpecException.class, () -> Shards.of(shard.toString()).withImages(tiny).open(loader).close());
        assertEquals("image_cache", e.option());
        assertTrue(e.getMessage().contains("98,304 bytes") && e.getMessage().contains("1,000 bytes"), e.getMessage());
        Images room = Images.train(32).withImageCache("ram", null, 1L << 20);
        assertEquals("image_cache", assertThrows(SpecException.class,
                () -> Shards.of(shard.toString()).withImages(room).withStream(true).open(loader).close()).option());
        try (Recipe r = Shards.of(shard.toString()).withImages(room).open(loader); Loader l = r.builder(loader).build()) {
            int rows = 0;
            for (Batch b : l) {
                rows += b.size();
            }
            assertEquals(8, rows);
        }
        assertEquals("image_cache_max_side", assertThrows(SpecException.class,
                () -> Images.train(32).withImageCache(null, 64, null)).option());
    }

    /**
     * NOTE [In memory]: a source opened in memory reads a copy of its files in the memory file
     * system (a pattern's files, a Megatron pair, a folder), gives the batches of the originals,
     * and leaves nothing behind when it closes; files that would not fit are refused first.
     */
    @Test
    void aSourceInMemoryReadsACopyThatGoesWithItAndIsRefusedWhenItWouldNotFit(@TempDir Path dir) throws Exception {
        Path shm = InMemory.shmRoot();
        for (int s = 0; s < 3; s++) {
            try (var w = new dev.stoker.formats.io.TarWriter(dir.resolve("t-" + s + ".tar"))) {
                for (int i = 0; i < 5; i++) {
                    w.write("s" + s + "i" + i, java.util.Map.of("bin", new byte[] {(byte) s, (byte) i}));
                }
            }
        }
        Path file = dir.resolve("t.bin");
        byte[] tokens = new byte[2 * 100];
        for (int i = 0; i < 100; i++) {
            tokens[2 * i] = (byte) i;
        }
        Files.write(file, tokens);
        LoaderSpec disk = LoaderSpec.DEFAULT.withBatchSize(2).withWorkers(0, null);
        LoaderSpec memory = disk.toBuilder().inMemory(true).build();
        Tokens spec = Tokens.of(List.of(file.toString())).withSeqLen(9);
        List<Long> expected;
        try (Recipe r = Specs.open(spec, disk)) {
            expected = firstTokens(r.builder(disk).epoch(0));
        }
        List<Path> before = ours(shm);
        try (Recipe r = Specs.open(spec, memory)) {
            List<Path> copies = ours(shm);
            assertEquals(before.size() + 1, copies.size(), "one folder of copies while it is open");
            assertEquals(expected, firstTokens(r.builder(memory).epoch(0)));
        }
        assertEquals(before, ours(shm), "nothing left in " + shm);
        Shards shards = Shards.of(dir.resolve("t-{0..2}.tar").toString()).withImages(new Images(Images.Transform.NONE, null, null, null,
                null, null, null, true, null, null, null, null, null, null));
        try (Recipe a = Specs.open(shards, disk); Recipe b = Specs.open(shards, memory);
             Loader la = a.builder(disk).seed(3).build(); Loader lb = b.builder(memory).seed(3).build()) {
            assertEquals(keys(la), keys(lb));
        }
        assertEquals(before, ours(shm));
        // a file that would not fit: refused with the numbers before anything is copied
        Path huge = dir.resolve("huge.bin");
        try (var f = new java.io.RandomAccessFile(huge.toFile(), "rw")) {
            f.setLength(1L << 43); // sparse: 8 TiB that take no disk
        }
        SpecException e = assertThrows(SpecException.class,
                () -> Specs.open(Tokens.of(List.of(huge.toString())).withSeqLen(9), memory).close());
        assertEquals("in_memory", e.option());
        assertTrue(e.getMessage().contains("8,796,093,022,208 bytes") && e.getMessage().contains("do not fit"),
                e.getMessage());
        assertEquals(before, ours(shm));
    }

    @Test
    void aCopyInMemoryThatAKilledProcessLeftGoesWhenAnySourceOpens(@TempDir Path dir) throws Exception {
        Path shm = InMemory.shmRoot();
        Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        Path left = Files.createDirectories(shm.resolve("stoker-memory-" + gone.pid() + "-left/0"));
        Files.write(left.resolve("t.bin"), new byte[200]);
        Path file = Files.write(dir.resolve("t.bin"), new byte[200]);
        try (Recipe r = Specs.open(Tokens.of(List.of(file.toString())).withSeqLen(9), LoaderSpec.DEFAULT)) {
            assertTrue(!Files.exists(left.getParent()), "swept as a source (not in memory) opened");
        }
    }

    /** NOTE [Folders of one's own]: entries another user put in the memory file system, under Stoker's names, are left alone. */
    @Test
    void aSourceInMemoryLeavesAnotherUsersEntriesUnreadAndFollowsNoLink(@TempDir Path dir) throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue("root".equals(System.getProperty("user.name")),
                "needs root, to give a folder to another user");
        Path shm = InMemory.shmRoot();
        Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        Path planted = Files.createDirectories(shm.resolve("stoker-memory-" + gone.pid() + "-planted"));
        Path link = shm.resolve("stoker-memory-" + gone.pid() + "-link");
        try {
            Files.writeString(planted.resolve("data"), "x");
            Files.setOwner(planted, planted.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody"));
            Path target = Files.createDirectories(dir.resolve("elsewhere"));
            Files.writeString(target.resolve("precious"), "x");
            Files.createSymbolicLink(link, target);
            Path file = Files.write(dir.resolve("t.bin"), new byte[200]);
            LoaderSpec memory = LoaderSpec.builder().batchSize(2).workers(0).seed(0L).inMemory(true).build();
            try (Recipe r = Specs.open(Tokens.of(List.of(file.toString())).withSeqLen(9), memory)) {
                assertEquals(11, firstTokens(r.builder(memory).epoch(0)).size(), "100 tokens: 11 windows of 9");
            }
            assertTrue(Files.exists(planted.resolve("data")), "another user's folder is not Stoker's to sweep");
            assertTrue(Files.isSymbolicLink(link) && Files.exists(target.resolve("precious")), "a link is not followed");
        } finally {
            Files.deleteIfExists(planted.resolve("data"));
            Files.deleteIfExists(planted);
            Files.deleteIfExists(link);
        }
    }

    private static List<Path> ours(Path shm) throws java.io.IOException {
        try (var s = Files.list(shm)) {
            return s.filter(p -> p.getFileName().toString().startsWith("stoker-memory-" + ProcessHandle.current().pid()))
                    .sorted().toList();
        }
    }

    private static List<String> keys(Loader l) {
        List<String> out = new java.util.ArrayList<>();
        for (Batch b : l) {
            for (int r = 0; r < b.size(); r++) {
                out.add(b.index(r) + ":" + b.size());
            }
        }
        return out;
    }

    /** The first token of each window of an epoch, in order. */
    private static List<Long> firstTokens(LoaderBuilder b) {
        List<Long> out = new java.util.ArrayList<>();
        try (Loader l = b.build()) {
            for (Batch batch : l) {
                for (int r = 0; r < batch.size(); r++) {
                    out.add(batch.data("x").getAtIndex(java.lang.foreign.ValueLayout.JAVA_LONG, (long) r * 9));
                }
            }
        }
        return out;
    }

    @Test
    void paddingIsPlainDataThatMakesAPadding() {
        LoaderSpec l = Specs.loader("{\"pad\": {\"Jet_*\": 128, \"particles\": 64}, \"stack\": {\"particles\": [\"Part_px\", "
                + "\"Part_py\"]}, \"stack_dtype\": \"float64\", \"pad_value\": -1, \"lengths\": true, \"mask\": true}");
        assertEquals(l, Specs.loader(Specs.json(l)));
        assertEquals(List.of("Jet_*", "particles"), List.copyOf(l.pad().keySet()), "the order given: the first glob that matches counts");
        dev.stoker.Padding want = dev.stoker.Padding.of().pad("Jet_*", 128).pad("particles", 64)
                .stack("particles", "Part_px", "Part_py").stackType(dev.stoker.DType.FLOAT64).value(-1).lengths(true).mask(true);
        assertEquals(want, l.padding());
        assertTrue(LoaderSpec.DEFAULT.padding().isEmpty());
        assertEquals("pad", assertThrows(SpecException.class, () -> Specs.loader("{\"pad\": {\"x\": 0}}")).option());
        assertEquals("stack", assertThrows(SpecException.class, () -> Specs.loader("{\"stack\": {\"s\": []}}")).option());
        assertEquals("stack_dtype", assertThrows(SpecException.class, () -> Specs.loader("{\"stack_dtype\": \"int4\"}")).option());
    }

    @Test
    void lengthsWithoutPaddingAreRefusedWhenTheLoaderIsMade() throws Exception {
        LoaderSpec l = Specs.loader("{\"lengths\": true, \"workers\": 0}");
        try (Recipe r = Specs.open(Synthetic.of(), l)) {
            SpecException e = assertThrows(SpecException.class, () -> r.builder(l));
            assertEquals("lengths", e.option());
            assertTrue(e.getMessage().contains("give pad (and stack) too"), e.getMessage());
        }
    }

    private static String option(String json) {
        return assertThrows(SpecException.class, () -> Specs.source(json)).option();
    }
}
