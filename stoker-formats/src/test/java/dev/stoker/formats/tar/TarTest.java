package dev.stoker.formats.tar;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.github.luben.zstd.ZstdOutputStream;
import dev.stoker.CorruptShardException;
import dev.stoker.StreamingDataset;
import dev.stoker.formats.Fixtures;
import dev.stoker.formats.io.TarReader;
import dev.stoker.formats.io.TarWriter;
import dev.stoker.storage.ShardPattern;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import net.jpountz.lz4.LZ4FrameOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Tar shards: interop with Python's tarfile and GNU tar, grouping, index, writer, errors, fuzzing. */
class TarTest {
    @TempDir
    Path tmp;

    static final String[] FIXTURES = {"python-ustar.tar", "python-gnu.tar", "python-pax.tar", "gnutar-gnu.tar",
        "gnutar-posix.tar", "python-pax.tar.gz"};

    static Path fixture(String name) {
        return Fixtures.dir().resolve("tar").resolve(name);
    }

    static Map<String, Map<String, String>> expected() throws IOException {
        JsonNode root = new ObjectMapper().readTree(fixture("expected.json").toFile());
        Map<String, Map<String, String>> out = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = root.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            Map<String, String> fields = new TreeMap<>();
            e.getValue().fields().forEachRemaining(f -> fields.put(f.getKey(), f.getValue().asText()));
            out.put(e.getKey(), fields);
        }
        return out;
    }

    static String text(MemorySegment s) {
        return new String(s.toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8);
    }

    static Map<String, Map<String, String>> read(StreamingDataset.ShardReader<TarSample> r) throws IOException {
        Map<String, Map<String, String>> out = new LinkedHashMap<>();
        for (TarSample s; (s = r.next()) != null; ) {
            Map<String, String> fields = new TreeMap<>();
            s.fields().forEach((k, v) -> fields.put(k, text(v)));
            assertTrue(out.put(s.key(), fields) == null, "key " + s.key() + " once");
        }
        return out;
    }

    @Test
    void readsWhatPythonsTarfileAndGnuTarWrote() throws IOException {
        Map<String, Map<String, String>> want = expected();
        for (String f : FIXTURES) {
            TarShards shards = new TarShards(List.of(fixture(f)));
            try (var r = shards.open(0)) {
                assertEquals(want, read(r), f);
            }
        }
    }

    @Test
    void zstdAndLz4ShardsAreRecognisedByTheirMagic() throws IOException {
        byte[] tar = Files.readAllBytes(fixture("python-pax.tar"));
        Path zst = tmp.resolve("a.tar.zst");
        try (OutputStream o = new ZstdOutputStream(Files.newOutputStream(zst))) {
            o.write(tar);
        }
        Path lz4 = tmp.resolve("b.bin"); // no telling suffix: the magic decides
        try (OutputStream o = new LZ4FrameOutputStream(Files.newOutputStream(lz4))) {
            o.write(tar);
        }
        for (Path p : List.of(zst, lz4)) {
            try (var r = new TarShards(List.of(p)).open(0)) {
                assertEquals(expected(), read(r), p.toString());
            }
        }
    }

    @Test
    void randomAccessThroughTheIndexEqualsTheStream() throws IOException {
        Map<String, Map<String, String>> want = expected();
        for (String f : FIXTURES) {
            if (f.endsWith(".gz")) {
                Path copy = tmp.resolve(f);
                Files.copy(fixture(f), copy);
                assertThrows(IllegalArgumentException.class, () -> new TarDataset(List.of(copy)));
                continue;
            }
            Path copy = tmp.resolve(f);
            Files.copy(fixture(f), copy);
            try (TarDataset d = new TarDataset(List.of(copy))) {
                assertEquals(want.size(), d.size(), f);
                Map<String, Map<String, String>> got = new LinkedHashMap<>();
                for (long i = d.size() - 1; i >= 0; i--) {
                    TarSample s = d.get(i);
                    Map<String, String> fields = new TreeMap<>();
                    s.fields().forEach((k, v) -> fields.put(k, text(v)));
                    got.put(s.key(), fields);
                }
                assertEquals(new TreeMap<>(want), new TreeMap<>(got), f);
            }
            assertTrue(Files.exists(copy.resolveSibling(".stoker.stkidx")), "the index is kept in the shard's folder");
        }
    }

    @Test
    void theIndexIsRebuiltWhenTheShardChanges() throws IOException {
        Path shard = tmp.resolve("s.tar");
        write(shard, 3, 0);
        try (TarDataset d = new TarDataset(List.of(shard))) {
            assertEquals(3, d.size());
        }
        write(shard, 5, 0);
        Files.setLastModifiedTime(shard, java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() + 5000));
        try (TarDataset d = new TarDataset(List.of(shard))) {
            assertEquals(5, d.size(), "a stale index is not trusted");
        }
    }

    @Test
    void anIndexOfAShardRewrittenWithTheSameSizeAndMtimeIsNotTrusted() throws IOException {
        // the same members' sizes in another order: the same size, other offsets for each key
        Path shard = tmp.resolve("same.tar");
        writeSized(shard, new int[] {700, 100, 300});
        java.nio.file.attribute.FileTime mtime = Files.getLastModifiedTime(shard);
        long size = Files.size(shard);
        try (TarDataset d = new TarDataset(List.of(shard))) {
            assertEquals(700, d.get(0).fields().get("bin").byteSize());
        }
        writeSized(shard, new int[] {100, 300, 700});
        Files.setLastModifiedTime(shard, mtime);
        assertEquals(size, Files.size(shard));
        try (TarDataset d = new TarDataset(List.of(shard))) {
            for (int i = 0; i < 3; i++) {
                assertEquals(new int[] {100, 300, 700}[i], d.get(i).fields().get("bin").byteSize(), "sample " + i + " at its new place");
            }
        }
    }

    @Test
    void aShardRewrittenInPlaceWithItsSizeAndMtimeKeptIsReadAsItIsNow() throws IOException {
        // 40 samples of 100 bytes; samples 8 and 9 rewritten as 50 and 150 bytes: every member stays where it was, but
        // their headers and sizes change, and neither is a header the content fingerprint samples
        int[] before = new int[40];
        java.util.Arrays.fill(before, 100);
        int[] after = before.clone();
        after[8] = 50;
        after[9] = 150;
        Path other = tmp.resolve("other.tar");
        writeSized(other, after);
        Path shard = tmp.resolve("inplace.tar");
        writeSized(shard, before);
        java.nio.file.attribute.FileTime mtime = Files.getLastModifiedTime(shard);
        try (TarDataset d = new TarDataset(List.of(shard))) {
            assertEquals(100, d.get(8).fields().get("bin").byteSize());
        }
        Object changed = ctime(shard);
        Files.write(shard, Files.readAllBytes(other)); // in place: the same file, written over
        Files.setLastModifiedTime(shard, mtime);
        while (changed != null && changed.equals(ctime(shard))) { // a file system clock coarser than two writes
            Files.setLastModifiedTime(shard, mtime);
        }
        assertEquals(Files.size(other), Files.size(shard));
        try (TarDataset d = new TarDataset(List.of(shard))) {
            assertEquals(50, d.get(8).fields().get("bin").byteSize());
            assertEquals(150, d.get(9).fields().get("bin").byteSize());
        }
    }

    /** The file's status change time, where the file system keeps one; null where not. */
    private static Object ctime(Path p) throws IOException {
        try {
            return Files.getAttribute(p, "unix:ctime");
        } catch (UnsupportedOperationException | IllegalArgumentException e) {
            return null;
        }
    }

    /** Samples k0, k1, ... with a {@code bin} field of the given sizes. */
    private static void writeSized(Path shard, int[] sizes) throws IOException {
        try (TarWriter w = new TarWriter(shard)) {
            for (int i = 0; i < sizes.length; i++) {
                w.write("k" + i, Map.of("bin", new byte[sizes[i]]));
            }
        }
    }

    @Test
    void aShardCutBetweenMembersOrEmptyIsAnErrorOrLeftOutAndCounted() throws IOException {
        Path good = tmp.resolve("good.tar");
        write(good, 4, 0);
        byte[] whole = Files.readAllBytes(good);
        // the last member ends where its padded data ends: cut there, before the end-of-archive blocks
        long end;
        try (TarReader r = TarReader.open(good)) {
            TarReader.Member last = null;
            for (TarReader.Member m; (m = r.next(false)) != null; ) {
                last = m;
            }
            end = (last.dataOffset() + last.size() + 511) / 512 * 512;
        }
        Path cut = tmp.resolve("cut.tar");
        Files.write(cut, java.util.Arrays.copyOf(whole, (int) end));
        Path empty = Files.createFile(tmp.resolve("empty.tar"));
        for (Path bad : List.of(cut, empty)) {
            CorruptShardException e = assertThrows(CorruptShardException.class, () -> read(new TarShards(List.of(bad)).open(0)));
            assertTrue(e.getMessage().startsWith(bad + ": ") && e.offset() == (bad == cut ? end : 0), e.getMessage());
            assertTrue(e.getMessage().contains(bad == cut ? "without the end-of-archive blocks" : "0 bytes"), e.getMessage());
            assertThrows(CorruptShardException.class, () -> new TarDataset(List.of(bad)));
        }
        List<Path> three = List.of(cut, good, empty);
        try (TarDataset d = new TarDataset(three, three.stream().map(Path::toString).toList(), true, dev.stoker.ErrorPolicy.SKIP_SAMPLE)) {
            assertEquals(4, d.size(), "the good shard's samples only");
            assertEquals(2, d.shardsLeftOut());
            dev.stoker.Collator<TarSample> one = new dev.stoker.Collator<>() {
                @Override
                public dev.stoker.Schema schema() {
                    return dev.stoker.Schema.of(dev.stoker.Field.scalar("one", dev.stoker.DType.INT64));
                }

                @Override
                public void write(TarSample t, dev.stoker.Row row) {
                    row.putLong(0, 0, 1);
                }
            };
            try (dev.stoker.Loader l = dev.stoker.Loader.builder(d, one).batchSize(2).build()) {
                assertEquals(2, l.stats().skippedShards(), "counted once the loader exists");
                l.forEach(b -> { });
                assertEquals(4, l.stats().samples());
                assertEquals(2, l.stats().skippedShards());
            }
        }
        IOException none = assertThrows(IOException.class,
                () -> new TarDataset(List.of(cut, empty), List.of(cut.toString(), empty.toString()), true, dev.stoker.ErrorPolicy.SKIP_SAMPLE));
        assertTrue(none.getMessage().startsWith("every shard is unreadable (2)"), none.getMessage());
    }

    @Test
    void manyShardsIndexedInParallelKeepTheirOrderAndTheFirstErrorInItIsTheOneReported() throws IOException {
        List<Path> shards = new java.util.ArrayList<>();
        for (int s = 0; s < 40; s++) { // more shards than indexing threads, of varied sizes
            Path p = tmp.resolve(String.format("many-%03d.tar", s));
            write(p, 1 + s % 5, 100 * s);
            shards.add(p);
        }
        List<String> want = new java.util.ArrayList<>();
        for (Path p : shards) {
            try (var r = new TarShards(List.of(p)).open(0)) {
                for (TarSample t; (t = r.next()) != null; ) {
                    want.add(t.key());
                }
            }
        }
        for (int round = 0; round < 2; round++) { // indexes built, then read back
            try (TarDataset d = new TarDataset(shards)) {
                List<String> got = new java.util.ArrayList<>();
                for (long i = 0; i < d.size(); i++) {
                    got.add(d.get(i).key());
                }
                assertEquals(want, got, round == 0 ? "built" : "stored");
            }
        }
        List<Path> damaged = new java.util.ArrayList<>(shards);
        for (int s : new int[] {31, 7, 19}) {
            Path bad = tmp.resolve(String.format("bad-%03d.tar", s));
            write(bad, 3, 0);
            Files.write(bad, java.util.Arrays.copyOf(Files.readAllBytes(bad), 700)); // cut inside its first member
            damaged.set(s, bad);
        }
        IOException e = assertThrows(IOException.class, () -> new TarDataset(damaged));
        assertTrue(e.getMessage().startsWith(tmp.resolve("bad-007.tar") + ": "), "the first in the shards' order: " + e.getMessage());
        List<String> names = damaged.stream().map(p -> "s3://bucket/" + p.getFileName()).toList();
        try (TarDataset d = new TarDataset(damaged, names, true, dev.stoker.ErrorPolicy.SKIP_SAMPLE)) {
            assertEquals(3, d.shardsLeftOut());
            assertEquals(want.size() - 3 - 2 - 5, d.size(), "every sample of the other 37 shards");
        }
    }

    static void write(Path shard, int n, int from) throws IOException {
        try (TarWriter w = new TarWriter(shard)) {
            for (int i = from; i < from + n; i++) {
                w.write(String.format("k%05d", i), Map.of("cls", ("" + i).getBytes(), "bin", new byte[i * 100]));
            }
        }
    }

    @Test
    void writtenShardsAreReproducibleAndReadByPythonAndGnuTar() throws Exception {
        Path a = tmp.resolve("a.tar");
        Path b = tmp.resolve("b.tar");
        Map<String, byte[]> fields = new LinkedHashMap<>();
        fields.put("txt", "hello".getBytes());
        fields.put("cls", "4".getBytes());
        fields.put("empty", new byte[0]);
        String longKey = "very/".repeat(40) + "deep";
        for (Path p : List.of(a, b)) {
            try (TarWriter w = new TarWriter(p)) {
                w.write("x0", fields);
                w.write(longKey, Map.of("txt", "long name".getBytes()));
                w.write("naïve", Map.of("txt", "unicode".getBytes()));
            }
        }
        assertArrayEquals(Files.readAllBytes(a), Files.readAllBytes(b), "same samples, same bytes");
        assertEquals(0, Files.size(a) % 10240, "padded to tar's record size");
        try (var r = new TarShards(List.of(a)).open(0)) {
            Map<String, Map<String, String>> got = read(r);
            assertEquals(Map.of("cls", "4", "empty", "", "txt", "hello"), got.get("x0"));
            assertEquals(Map.of("txt", "long name"), got.get(longKey));
        }
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/python3")), "python3 is not installed: skipping tarfile's read-back");
        String py = Fixtures.python("""
                import tarfile, sys
                with tarfile.open(sys.argv[1]) as tf:
                    for m in tf.getmembers():
                        print(m.name, m.size, m.mtime, m.uid, tf.extractfile(m).read().decode())
                """, a.toString());
        List<String> lines = py.lines().toList();
        assertEquals("x0.cls 1 1700000000 0 4", lines.get(0), "fields sorted within a sample");
        assertEquals("x0.empty 0 1700000000 0 ", lines.get(1));
        assertEquals(longKey + ".txt 9 1700000000 0 long name", lines.get(3));
        assertEquals("naïve.txt 7 1700000000 0 unicode", lines.get(4));
        if (Files.isExecutable(Path.of("/usr/bin/tar")) || Files.isExecutable(Path.of("/bin/tar"))) {
            Process p = new ProcessBuilder("tar", "-tf", a.toString()).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(0, p.waitFor(), out);
            assertEquals(5, out.lines().count(), out);
            assertTrue(out.contains(longKey + ".txt"), out);
        }
    }

    @Test
    void theShardWriterRollsOverByCountAndBySize() throws IOException {
        try (ShardWriter w = new ShardWriter(tmp.resolve("train-%06d.tar").toString(), 10, 1_000_000)) {
            for (int i = 0; i < 25; i++) {
                w.write("s" + i, Map.of("bin", new byte[1000]));
            }
            w.close();
            assertEquals(3, w.shards().size());
        }
        try (ShardWriter w = new ShardWriter(tmp.resolve("big-%03d.tar").toString(), 1000, 10_000)) {
            for (int i = 0; i < 10; i++) {
                w.write("s" + i, Map.of("bin", new byte[3000]));
            }
            w.close();
            assertEquals(5, w.shards().size(), "two 3 KB samples per 10 KB shard");
            for (Path p : w.shards()) {
                assertTrue(Files.size(p) <= 10_240 + 10_240, p + " " + Files.size(p));
            }
        }
        List<String> shards = ShardPattern.expand(tmp.resolve("train-{000000..000002}.tar").toString());
        try (TarDataset d = new TarDataset(shards.stream().map(Path::of).toList())) {
            assertEquals(25, d.size());
            assertEquals("s24", d.get(24).key());
        }
    }

    @Test
    void corruptShardsNameTheShardAndTheOffset() throws IOException {
        byte[] good = Files.readAllBytes(fixture("python-gnu.tar"));
        Path bad = tmp.resolve("bad.tar");
        byte[] flipped = good.clone();
        flipped[512 * 3 + 10] ^= 0x40; // inside a later header
        Files.write(bad, flipped);
        CorruptShardException e = assertThrows(CorruptShardException.class, () -> read(new TarShards(List.of(bad)).open(0)));
        assertTrue(e.getMessage().startsWith(bad + ": bad header checksum") && e.offset() == 1536, e.getMessage());

        Path cut = tmp.resolve("cut.tar");
        Files.write(cut, java.util.Arrays.copyOf(good, 512 * 2 + 5));
        e = assertThrows(CorruptShardException.class, () -> read(new TarShards(List.of(cut)).open(0)));
        assertTrue(e.getMessage().contains("cut short") || e.getMessage().contains("truncated header"), e.getMessage());

        Path garbage = tmp.resolve("garbage.tar");
        byte[] g = good.clone();
        g[g.length - 7] = 'x';
        Files.write(garbage, g);
        e = assertThrows(CorruptShardException.class, () -> read(new TarShards(List.of(garbage)).open(0)));
        assertTrue(e.getMessage().contains("garbage after the end") && e.offset() == g.length - 7, e.getMessage());
    }

    @Test
    void aDuplicateFieldInOneSampleIsAnError() throws IOException {
        Path p = tmp.resolve("dup.tar");
        try (TarWriter w = new TarWriter(p)) {
            w.write("a", Map.of("txt", "1".getBytes()));
            w.write("a", Map.of("txt", "2".getBytes())); // consecutive: the same sample, twice the field
        }
        CorruptShardException e = assertThrows(CorruptShardException.class, () -> read(new TarShards(List.of(p)).open(0)));
        assertTrue(e.getMessage().contains("duplicate field 'txt' in sample 'a'"), e.getMessage());
        assertThrows(CorruptShardException.class, () -> new TarDataset(List.of(p)));
    }

    @Test
    @Timeout(60)
    void fuzzedShardsOnlyEverFailWithTheDocumentedExceptions() throws IOException {
        byte[] good = Files.readAllBytes(fixture("python-pax.tar"));
        SplittableRandom r = new SplittableRandom(3);
        Path p = tmp.resolve("fuzz.tar");
        int failures = 0;
        for (int n = 0; n < 2000; n++) {
            byte[] b = r.nextBoolean() ? java.util.Arrays.copyOf(good, r.nextInt(good.length)) : good.clone();
            int flips = r.nextInt(4);
            for (int k = 0; k < flips && b.length > 0; k++) {
                b[r.nextInt(b.length)] = (byte) r.nextInt(256);
            }
            Files.write(p, b);
            try (var reader = new TarShards(List.of(p)).open(0)) {
                // every sample, its fields' bytes touched; a mutation may make two samples share a
                // key (no reader failure), so keys are not checked here, and nothing is caught but
                // the documented exception
                for (TarSample s; (s = reader.next()) != null; ) {
                    s.fields().values().forEach(v -> text(v));
                }
            } catch (CorruptShardException e) {
                assertNotNull(e.getMessage());
                assertTrue(e.getMessage().startsWith(p.toString()), e.getMessage());
                failures++;
            }
        }
        assertTrue(failures > 200, "mutations detected: " + failures);
    }

    @Test
    void aLoaderOverTarShardsResumesExactly() throws IOException {
        List<Path> shards = new ArrayList<>();
        for (int s = 0; s < 3; s++) {
            Path p = tmp.resolve("t-" + s + ".tar");
            write(p, 20 + s, s * 100);
            shards.add(p);
        }
        dev.stoker.Collator<TarSample> keys = new dev.stoker.Collator<>() {
            final dev.stoker.Schema schema = dev.stoker.Schema.of(dev.stoker.Field.bytes("key", 8));

            @Override
            public dev.stoker.Schema schema() {
                return schema;
            }

            @Override
            public void write(TarSample s, dev.stoker.Row row) {
                row.append(0, s.key().getBytes());
                row.append(0, s.field("cls").toArray(ValueLayout.JAVA_BYTE));
            }
        };
        try (TarDataset d = new TarDataset(shards)) {
            List<String> full = new ArrayList<>();
            try (dev.stoker.Loader l = dev.stoker.Loader.builder(d, keys).batchSize(4).workers(2).shuffle().seed(5).build()) {
                for (dev.stoker.Batch b : l) {
                    for (int i = 0; i < b.size(); i++) {
                        full.add(text(b.bytes(0, i)));
                    }
                }
            }
            assertEquals(63, new java.util.HashSet<>(full).size());
            String state;
            List<String> got = new ArrayList<>();
            try (dev.stoker.Loader l = dev.stoker.Loader.builder(d, keys).batchSize(4).workers(2).shuffle().seed(5).build()) {
                Iterator<dev.stoker.Batch> it = l.iterator();
                for (int k = 0; k < 7; k++) {
                    dev.stoker.Batch b = it.next();
                    for (int i = 0; i < b.size(); i++) {
                        got.add(text(b.bytes(0, i)));
                    }
                }
                state = l.state().toJson();
            }
            try (dev.stoker.Loader l = dev.stoker.Loader.builder(d, keys).batchSize(4).workers(1).shuffle()
                    .resume(dev.stoker.LoaderState.fromJson(state)).build()) {
                for (dev.stoker.Batch b : l) {
                    for (int i = 0; i < b.size(); i++) {
                        got.add(text(b.bytes(0, i)));
                    }
                }
            }
            assertEquals(full, got);
        }
    }

    /**
     * A stream's state inside a shard skips that shard's delivered samples when it resumes, so it
     * resumes only on the shard it was saved in: a shard rewritten under its name with its size
     * kept is refused, naming it, where the names alone (the stream's fingerprint) still match.
     */
    @Test
    void aStreamStateInsideAShardRewrittenUnderItsNameIsRefusedNotSkippedInto() throws IOException {
        Path a = tmp.resolve("s-0.tar");
        Path b = tmp.resolve("s-1.tar");
        write(a, 10, 0);
        write(b, 10, 100);
        dev.stoker.Collator<TarSample> keys = new dev.stoker.Collator<>() {
            final dev.stoker.Schema schema = dev.stoker.Schema.of(dev.stoker.Field.bytes("key", 8));

            @Override
            public dev.stoker.Schema schema() {
                return schema;
            }

            @Override
            public void write(TarSample s, dev.stoker.Row row) {
                row.append(0, s.field("cls").toArray(ValueLayout.JAVA_BYTE));
            }
        };
        TarShards shards = new TarShards(List.of(a, b));
        String state;
        List<String> got = new ArrayList<>();
        try (dev.stoker.Loader l = dev.stoker.Loader.builder(shards, keys).batchSize(4).workers(1).build()) {
            Iterator<dev.stoker.Batch> it = l.iterator();
            for (int k = 0; k < 3; k++) { // 12 samples: all of s-0, 2 of s-1
                dev.stoker.Batch batch = it.next();
                for (int i = 0; i < batch.size(); i++) {
                    got.add(text(batch.bytes(0, i)));
                }
            }
            state = l.state().toJson();
        }
        assertTrue(state.contains("shardCheck"), state);
        try (dev.stoker.Loader l = dev.stoker.Loader.builder(shards, keys).batchSize(4).workers(1)
                .resume(dev.stoker.LoaderState.fromJson(state)).build()) {
            for (dev.stoker.Batch batch : l) {
                for (int i = 0; i < batch.size(); i++) {
                    got.add(text(batch.bytes(0, i)));
                }
            }
        }
        assertEquals(20, new java.util.HashSet<>(got).size(), "resumed on the same shards: every sample once " + got);
        byte[] bytes = Files.readAllBytes(b);
        try (TarWriter w = new TarWriter(b)) { // other samples, the same keys and member sizes
            for (int i = 100; i < 110; i++) {
                w.write(String.format("k%05d", i), Map.of("cls", ("" + (i + 500)).getBytes(), "bin", new byte[i * 100]));
            }
        }
        assertEquals(bytes.length, Files.size(b));
        dev.stoker.ResumeException e = assertThrows(dev.stoker.ResumeException.class,
                () -> dev.stoker.Loader.builder(shards, keys).batchSize(4).workers(1)
                        .resume(dev.stoker.LoaderState.fromJson(state)).build().close());
        assertTrue(e.getMessage().contains(b.toString()) && e.getMessage().contains("not the shard the state was saved in"),
                e.getMessage());
    }

    /**
     * Sparse members, as GNU tar writes them (its own 'S' type, and PAX's GNU.sparse records under
     * a made-up name), are refused naming the member and its offset: read as they are, the first
     * would be a shorter, different file and the second a sample under the wrong key.
     */
    @Test
    void sparseMembersGnuTarWroteAreRefusedNamingTheMember() throws Exception {
        assumeTrue(new ProcessBuilder("tar", "--version").start().waitFor() == 0, "no GNU tar here");
        Path dir = Files.createDirectories(tmp.resolve("sparse-src"));
        Files.writeString(dir.resolve("a.cls"), "3");
        try (var f = new java.io.RandomAccessFile(dir.resolve("a.bin").toFile(), "rw")) {
            f.setLength(4 << 20);
            f.seek(3 << 20);
            f.write("the only bytes".getBytes(StandardCharsets.US_ASCII));
        }
        for (String format : new String[] {"gnu", "pax"}) {
            Path shard = tmp.resolve("sparse-" + format + ".tar");
            Process p = new ProcessBuilder("tar", "--sparse", "--format=" + format, "-cf", shard.toString(), "-C", dir.toString(),
                    "a.cls", "a.bin").redirectErrorStream(true).start();
            assertEquals(0, p.waitFor(), new String(p.getInputStream().readAllBytes()));
            String raw = new String(Files.readAllBytes(shard), StandardCharsets.ISO_8859_1);
            int header = raw.indexOf("a.bin"); // the member's header starts with its name
            assumeTrue(format.equals("gnu") ? header % 512 == 0 && raw.charAt(header + 156) == 'S' : raw.contains("GNU.sparse"),
                    "this file system kept no holes: tar wrote a.bin whole");
            var e = assertThrows(CorruptShardException.class, () -> new TarDataset(List.of(shard)).close(), format);
            assertTrue(e.getMessage().contains("'a.bin'") && e.getMessage().contains("sparse") && e.getMessage().contains(shard.toString()),
                    e.getMessage());
            var streamed = assertThrows(IOException.class, () -> {
                try (var r = new TarShards(List.of(shard)).open(0)) {
                    while (r.next() != null) {
                        // read to the sparse member
                    }
                }
            }, format);
            assertTrue(streamed.getMessage().contains("'a.bin'"), streamed.getMessage());
        }
    }

    /** A set of shards is published whole: nothing under a final name before close(), nothing at all after abandon(). */
    @Test
    void aShardSetIsPublishedWholeOrNotAtAll() throws IOException {
        Path dir = Files.createDirectories(tmp.resolve("set"));
        for (boolean finish : new boolean[] {true, false}) {
            ShardWriter w = new ShardWriter(dir.resolve("s-%03d.tar").toString(), 2, 1 << 30);
            for (int i = 0; i < 5; i++) {
                w.write("k" + i, Map.of("txt", ("sample " + i).getBytes(StandardCharsets.UTF_8)));
            }
            try (var files = Files.list(dir)) {
                assertEquals(List.of(), files.filter(f -> !f.getFileName().toString().startsWith(".")).toList(),
                        "no shard is under its final name while the set is written");
            }
            if (finish) {
                w.close();
                try (TarDataset d = new TarDataset(w.shards())) {
                    assertEquals(3, w.shards().size());
                    assertEquals(5, d.size());
                }
                for (Path p : w.shards()) {
                    Files.delete(p);
                }
                Files.deleteIfExists(dir.resolve(".stoker.stkidx"));
                Files.deleteIfExists(dir.resolve(".stoker.stkidx.lock")); // the index the reading above made
            } else {
                w.abandon(); // the run failed (or was stopped) half-way
            }
            try (var files = Files.list(dir)) {
                assertEquals(List.of(), files.toList(), "nothing is left behind");
            }
        }
    }
}
