package dev.stoker.formats.tar;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.CorruptShardException;
import dev.stoker.formats.io.TarWriter;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The folder index of tar shards (TarCatalog) as TarDataset uses it. */
class TarCatalogTest {
    @TempDir
    Path tmp;

    /** Shards of 1 to 5 samples (one of none) with fields of varied sizes, in {@code dir}. */
    private static List<Path> shards(Path dir, String prefix, int n) throws IOException {
        Files.createDirectories(dir);
        List<Path> out = new ArrayList<>();
        for (int s = 0; s < n; s++) {
            Path p = dir.resolve(String.format("%s-%03d.tar", prefix, s));
            try (TarWriter w = new TarWriter(p)) {
                int samples = s == 2 ? 0 : 1 + s % 5; // an archive with no sample: its place in the numbering is empty
                for (int i = 0; i < samples; i++) {
                    byte[] bin = new byte[(s * 37 + i * 101) % 900];
                    new SplittableRandom(s * 1000L + i).nextBytes(bin);
                    w.write(String.format("%s%03d_%d", prefix, s, i), Map.of("cls", ("" + (s + i)).getBytes(), "bin", bin));
                }
            }
            out.add(p);
        }
        return out;
    }

    /** Every sample of the shards, in order, by reading them as streams: key to field to bytes. */
    private static Map<String, Map<String, byte[]>> streamed(List<Path> shards) throws IOException {
        Map<String, Map<String, byte[]>> out = new LinkedHashMap<>();
        for (Path p : shards) {
            try (var r = new TarShards(List.of(p)).open(0)) {
                for (TarSample t; (t = r.next()) != null; ) {
                    out.put(t.key(), bytes(t));
                }
            }
        }
        return out;
    }

    private static Map<String, byte[]> bytes(TarSample t) {
        Map<String, byte[]> f = new TreeMap<>();
        t.fields().forEach((k, v) -> f.put(k, v.toArray(ValueLayout.JAVA_BYTE)));
        return f;
    }

    private static void assertSame(Map<String, Map<String, byte[]>> want, TarDataset d) throws IOException {
        assertEquals(want.size(), d.size());
        List<String> keys = new ArrayList<>(want.keySet());
        for (long i = d.size() - 1; i >= 0; i--) { // backwards: no shard is met in its own order first
            TarSample t = d.get(i);
            assertEquals(keys.get((int) i), t.key(), "sample " + i);
            Map<String, byte[]> got = bytes(t);
            assertEquals(want.get(t.key()).keySet(), got.keySet());
            for (String f : got.keySet()) {
                assertArrayEquals(want.get(t.key()).get(f), got.get(f), t.key() + "." + f);
            }
        }
    }

    private static TarDataset open(List<Path> shards, int mappedLimit) throws IOException {
        return new TarDataset(shards, shards.stream().map(Path::toString).toList(), true, false, mappedLimit);
    }

    @Test
    void mappedOrReadByPositionEverySampleIsTheStreamsAndNoShardIsMappedPastTheLimit() throws IOException {
        List<Path> shards = shards(tmp.resolve("d"), "a", 12);
        Map<String, Map<String, byte[]>> want = streamed(shards);
        for (int limit : new int[] {TarDataset.MAPPED_LIMIT, 0}) {
            try (TarDataset d = open(shards, limit)) {
                assertSame(want, d);
                long mapped = Files.readAllLines(Path.of("/proc/self/maps")).stream().filter(l -> l.contains(tmp.resolve("d").toString())
                        && l.contains(".tar")).map(l -> l.substring(l.indexOf('/'))).distinct().count();
                assertEquals(limit == 0 ? 0 : shards.size() - 1, mapped, "mapped shards (the empty one is never read)");
            }
        }
    }

    @Test
    void concurrentFirstReadsOfEachShardAgree() throws Exception {
        List<Path> shards = shards(tmp.resolve("c"), "c", 30);
        Map<String, Map<String, byte[]>> want = streamed(shards);
        List<String> keys = new ArrayList<>(want.keySet());
        for (int limit : new int[] {TarDataset.MAPPED_LIMIT, 0}) {
            try (TarDataset d = open(shards, limit)) {
                Map<String, Boolean> seen = new ConcurrentHashMap<>();
                Thread[] threads = new Thread[8];
                List<Throwable> errors = java.util.Collections.synchronizedList(new ArrayList<>());
                for (int t = 0; t < threads.length; t++) {
                    threads[t] = Thread.ofPlatform().start(() -> {
                        try {
                            for (long i = 0; i < d.size(); i++) { // every thread reads every sample: all open each shard at once
                                TarSample s = d.get(i);
                                assertEquals(keys.get((int) i), s.key());
                                assertArrayEquals(want.get(s.key()).get("bin"), s.field("bin").toArray(ValueLayout.JAVA_BYTE));
                                seen.put(s.key(), true);
                            }
                        } catch (Throwable e) {
                            errors.add(e);
                        }
                    });
                }
                for (Thread t : threads) {
                    t.join();
                }
                assertEquals(List.of(), errors);
                assertEquals(want.keySet(), seen.keySet());
            }
        }
    }

    @Test
    void aFolderIndexServesEveryDatasetOfItsShardsAndOnlyNewShardsAreIndexed() throws IOException {
        Path dir = tmp.resolve("grow");
        List<Path> all = shards(dir, "g", 8);
        Path catalog = dir.resolve(".stoker.stkidx");
        try (TarDataset d = new TarDataset(all.subList(0, 5))) {
            assertSame(streamed(all.subList(0, 5)), d);
            assertEquals(5, d.shardsIndexed());
        }
        try (TarDataset d = new TarDataset(all.subList(1, 4))) {
            assertEquals(0, d.shardsIndexed(), "every index stored");
        }
        assertTrue(Files.isRegularFile(catalog), "the folder's index is kept in the folder");
        try (TarDataset d = new TarDataset(all)) {
            assertSame(streamed(all), d);
            assertEquals(3, d.shardsIndexed(), "the new shards only");
        }
    }

    /** {@code p} written over in place with noise of its size, its mtime set back as it was. */
    private static void noiseWithSizeAndMtimeKept(Path p) throws IOException {
        FileTime mtime = Files.getLastModifiedTime(p);
        byte[] noise = new byte[(int) Files.size(p)];
        new SplittableRandom(3).nextBytes(noise);
        Files.write(p, noise);
        Files.setLastModifiedTime(p, mtime);
    }

    @Test
    void aShardWrittenOverWithItsSizeAndMtimeKeptIsIndexedAgainAndNamed() throws IOException {
        Path dir = tmp.resolve("over");
        List<Path> all = shards(dir, "o", 5);
        try (TarDataset d = new TarDataset(all)) {
            assertEquals(5, d.shardsIndexed());
        }
        Path three = all.get(3);
        noiseWithSizeAndMtimeKept(three);
        // its stat says the file was written (ctime, where the file system keeps one); else its first read finds it out
        IOException e = assertThrows(IOException.class, () -> {
            try (TarDataset d = new TarDataset(all)) {
                d.get(streamed(all.subList(0, 3)).size());
            }
        });
        assertTrue(e.getMessage().startsWith(three + ": "), e.getMessage());
    }

    @Test
    void aShardWrittenOverAfterTheDatasetOpenedIsCheckedOnItsFirstReadAndItsFolderIndexRemoved() throws IOException {
        Path dir = tmp.resolve("late");
        List<Path> all = shards(dir, "l", 5);
        Path catalog = dir.resolve(".stoker.stkidx");
        try (TarDataset d = new TarDataset(all)) {
            Path three = all.get(3);
            noiseWithSizeAndMtimeKept(three);
            // its first read checks its content against the index, finds it changed, and says which shard
            IOException e = assertThrows(IOException.class, () -> d.get(streamed(all.subList(0, 3)).size()));
            assertTrue(e.getMessage().startsWith(three + ": "), e.getMessage());
            assertFalse(Files.exists(catalog), "the folder's index, wrong about shard 3, is removed");
        }
        // the next open indexes the folder again and meets shard 3 as it is
        CorruptShardException e = assertThrows(CorruptShardException.class, () -> new TarDataset(all).close());
        assertTrue(e.getMessage().startsWith(all.get(3) + ": ") && e.offset() < 512, "in its first header: " + e.getMessage());
    }

    @Test
    void threadsOpeningTheSameShardsAtOnceIndexEachOnce() throws Exception {
        List<Path> shards = shards(tmp.resolve("threads"), "t", 60);
        Map<String, Map<String, byte[]>> want = streamed(shards);
        int[] indexed = new int[4];
        List<Throwable> errors = java.util.Collections.synchronizedList(new ArrayList<>());
        java.util.concurrent.CyclicBarrier go = new java.util.concurrent.CyclicBarrier(indexed.length);
        Thread[] threads = new Thread[indexed.length];
        for (int t = 0; t < threads.length; t++) {
            int me = t;
            threads[t] = Thread.ofPlatform().start(() -> {
                try {
                    go.await();
                    try (TarDataset d = new TarDataset(shards)) {
                        indexed[me] = d.shardsIndexed();
                        assertSame(want, d);
                    }
                } catch (Throwable e) {
                    errors.add(e);
                }
            });
        }
        for (Thread t : threads) {
            t.join();
        }
        assertEquals(List.of(), errors);
        assertEquals(shards.size(), java.util.Arrays.stream(indexed).sum(), "each shard indexed by one thread: " + java.util.Arrays.toString(indexed));
    }

    /** Processes (ranks) opening the same shards at once: each shard is indexed by one of them, and all read the same dataset. */
    @Test
    void processesOpeningTheSameShardsAtOnceIndexEachOnce() throws Exception {
        List<Path> shards = shards(tmp.resolve("ranks"), "r", 400);
        List<Process> ranks = new ArrayList<>();
        for (int r = 0; r < 3; r++) {
            ranks.add(new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                    System.getProperty("java.class.path"), TarCatalogTest.class.getName(), tmp.resolve("ranks").toString(), "400")
                    .redirectError(ProcessBuilder.Redirect.INHERIT).start());
        }
        List<java.io.BufferedReader> out = new ArrayList<>();
        for (Process p : ranks) {
            out.add(new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream())));
            assertEquals("ready", out.get(out.size() - 1).readLine());
        }
        for (Process p : ranks) { // every rank started and waiting: all open at once
            p.getOutputStream().write('\n');
            p.getOutputStream().flush();
        }
        int indexed = 0;
        java.util.Set<String> datasets = new java.util.HashSet<>();
        for (int r = 0; r < ranks.size(); r++) {
            String[] line = out.get(r).readLine().split(" ");
            assertEquals(0, ranks.get(r).waitFor());
            indexed += Integer.parseInt(line[0]);
            datasets.add(line[1] + " " + line[2]);
        }
        assertEquals(shards.size(), indexed, "each shard indexed by one rank");
        try (TarDataset d = new TarDataset(shards)) {
            assertEquals(java.util.Set.of(d.size() + " " + d.fingerprint()), datasets);
        }
    }

    /** A rank of {@link #processesOpeningTheSameShardsAtOnceIndexEachOnce}: opens the folder's shards when told to. */
    public static void main(String[] args) throws IOException {
        List<Path> shards = new ArrayList<>();
        for (int s = 0; s < Integer.parseInt(args[1]); s++) {
            shards.add(Path.of(args[0], String.format("r-%03d.tar", s)));
        }
        System.out.println("ready");
        System.out.flush();
        System.in.read();
        try (TarDataset d = new TarDataset(shards)) {
            System.out.println(d.shardsIndexed() + " " + d.size() + " " + d.fingerprint());
        }
    }

    @Test
    void aDamagedOrCutFolderIndexIsBuiltAgain() throws IOException {
        Path dir = tmp.resolve("damaged");
        List<Path> shards = shards(dir, "x", 6);
        Map<String, Map<String, byte[]>> want = streamed(shards);
        Path catalog = dir.resolve(".stoker.stkidx");
        new TarDataset(shards).close();
        byte[] good = Files.readAllBytes(catalog);
        for (int damage = 0; damage < 3; damage++) {
            byte[] bad = good.clone();
            switch (damage) {
                case 0 -> bad[bad.length / 3] ^= 0x10; // inside a shard's entry
                case 1 -> bad[bad.length - 2] ^= 0x01; // in the file names
                default -> bad = java.util.Arrays.copyOf(good, good.length / 2);
            }
            Files.write(catalog, bad);
            try (TarDataset d = new TarDataset(shards)) {
                assertSame(want, d);
            }
            assertArrayEquals(good, Files.readAllBytes(catalog), "written again, as it was");
        }
    }

    @Test
    void anIndexKeptInMemoryWritesNothingAndShardsInSeveralFoldersKeepTheirOrder() throws IOException {
        List<Path> shards = new ArrayList<>(shards(tmp.resolve("one"), "p", 4));
        shards.addAll(shards(tmp.resolve("two"), "q", 3));
        shards.add(1, shards.remove(5)); // a shard of folder two among those of folder one
        Map<String, Map<String, byte[]>> want = streamed(shards);
        List<String> names = shards.stream().map(p -> "https://host/" + p.getFileName()).toList();
        try (TarDataset d = new TarDataset(shards, names, false, dev.stoker.ErrorPolicy.FAIL)) {
            assertSame(want, d);
            assertEquals(names.get(1), d.get(streamed(shards.subList(0, 1)).size()).url(), "samples name a shard as its reader knows it");
        }
        assertFalse(Files.exists(tmp.resolve("one/.stoker.stkidx")) || Files.exists(tmp.resolve("two/.stoker.stkidx")));
        try (TarDataset d = new TarDataset(shards)) {
            assertSame(want, d);
        }
        assertTrue(Files.exists(tmp.resolve("one/.stoker.stkidx")) && Files.exists(tmp.resolve("two/.stoker.stkidx")));
        try (TarDataset d = new TarDataset(shards)) {
            assertSame(want, d); // from both folders' stored indexes
        }
    }

    @Test
    void theDatasetsFingerprintIsTheSameWhereverItsIndexComesFrom() throws IOException {
        List<Path> shards = shards(tmp.resolve("f"), "f", 5);
        long built;
        try (TarDataset d = new TarDataset(shards)) {
            built = d.fingerprint();
        }
        try (TarDataset stored = new TarDataset(shards);
                TarDataset memory = new TarDataset(shards, shards.stream().map(Path::toString).toList(), false, dev.stoker.ErrorPolicy.FAIL)) {
            assertEquals(built, stored.fingerprint());
            assertEquals(built, memory.fingerprint());
        }
        // other content: another fingerprint
        try (TarDataset fewer = new TarDataset(shards.subList(0, 4))) {
            assertTrue(fewer.fingerprint() != built);
        }
    }

    @Test
    void closeIsIdempotentAndAReadAfterItIsAnErrorNotACrash() throws IOException {
        List<Path> shards = shards(tmp.resolve("closed"), "z", 3);
        for (int limit : new int[] {TarDataset.MAPPED_LIMIT, 0}) {
            TarDataset d = open(shards, limit);
            MemorySegment f = d.get(0).field("cls");
            d.close();
            d.close();
            assertThrows(IllegalStateException.class, () -> d.get(d.size() - 1));
            if (limit != 0) {
                assertThrows(IllegalStateException.class, () -> f.get(ValueLayout.JAVA_BYTE, 0), "the mapping is gone");
            }
        }
    }
}
