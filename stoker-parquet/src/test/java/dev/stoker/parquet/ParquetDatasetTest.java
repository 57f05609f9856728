package dev.stoker.parquet;

import dev.stoker.storage.testing.MemoryStore;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.Batch;
import dev.stoker.CorruptShardException;
import dev.stoker.DType;
import dev.stoker.Loader;
import dev.stoker.LoaderBuilder;
import dev.stoker.LoaderException;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Against files DuckDB wrote (src/test/fixtures/MakeParquetFixtures.java, which documents every
 * column as a function of the row number i): 10,000 rows in five row groups (2,048 rows each, the
 * last 1,808).
 */
@Timeout(60)
class ParquetDatasetTest {
    static final String[] CODECS = {"snappy", "zstd", "gzip", "uncompressed", "v2"};

    @TempDir
    Path tmp;

    static Path fixture(String codec) throws IOException {
        Path p = Path.of("src/test/resources/parquet/rows-" + codec + ".parquet");
        assertTrue(Files.isRegularFile(p), p + " is missing");
        return p;
    }

    static long i64(Batch b, String f, int r) {
        return b.data(f).get(ValueLayout.JAVA_LONG_UNALIGNED, 8L * r);
    }

    static int i32(Batch b, String f, int r) {
        return b.data(f).get(ValueLayout.JAVA_INT_UNALIGNED, 4L * r);
    }

    static String text(Batch b, String f, int r) {
        return new String(b.bytes(b.schema().indexOf(f), r).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8);
    }

    static boolean bool(Batch b, String f, int r) {
        return b.data(f).get(ValueLayout.JAVA_BYTE, r) != 0;
    }

    /** Checks every column of a row against the generator's formula. */
    static void checkRow(Batch b, int r, long i) {
        assertEquals(i, i64(b, "id", r));
        assertEquals(i * 0.5, b.data("x").get(ValueLayout.JAVA_DOUBLE_UNALIGNED, 8L * r));
        assertEquals((float) (i / 4.0), b.data("f").get(ValueLayout.JAVA_FLOAT_UNALIGNED, 4L * r));
        assertEquals(i * 3 - 500, i32(b, "k", r));
        assertEquals(i % 3 == 0, bool(b, "flag", r));
        assertEquals("class" + (i % 5), text(b, "label", r));
        assertEquals(i % 7 != 0, bool(b, "maybe_valid", r), "row " + i);
        assertEquals(i % 7 == 0 ? 0 : i, i32(b, "maybe", r));
        assertEquals(i % 11 != 0, bool(b, "note_valid", r));
        assertEquals(i % 11 == 0 ? "" : "n" + i + "é".repeat((int) (i % 4)), text(b, "note", r));
        assertEquals("b" + i, text(b, "blob", r));
        assertEquals(i * 0.25, b.data("price").get(ValueLayout.JAVA_DOUBLE_UNALIGNED, 8L * r), 1e-9);
    }

    @Test
    void readsEveryCodecAsDuckDbWroteIt() throws Exception {
        for (String codec : CODECS) {
            try (ParquetDataset d = ParquetDataset.open(fixture(codec).toString(), ParquetDataset.Options.of())) {
                assertEquals(10_000, d.size(), codec);
                assertEquals(5, d.rowGroups(), codec);
                assertEquals(List.of("id", "x", "f", "k", "flag", "label", "maybe", "maybe_valid", "note", "note_valid", "blob", "price"),
                        d.schema().fields().stream().map(dev.stoker.Field::name).toList());
                assertEquals(DType.INT64, d.schema().field(0).dtype());
                assertEquals(DType.FLOAT32, d.schema().field(2).dtype());
                assertTrue(d.schema().field(5).isVariable());
                TreeSet<Long> seen = new TreeSet<>();
                try (Loader l = Loader.builder(d).batchSize(64).workers(2).shuffle().seed(7).build()) {
                    for (Batch b : l) {
                        for (int r = 0; r < b.size(); r++) {
                            long i = b.index(r);
                            checkRow(b, r, i);
                            assertTrue(seen.add(i), "row " + i + " twice");
                        }
                    }
                }
                assertEquals(10_000, seen.size(), codec);
            }
        }
    }

    @Test
    void theSameBatchesForAnyWorkerCount() throws Exception {
        List<String> ref = null;
        for (int workers : new int[] {0, 1, 3}) {
            try (ParquetDataset d = ParquetDataset.open(fixture("zstd").toString(), ParquetDataset.Options.of().withCacheBytes(1 << 14))) {
                List<String> digests = digests(Loader.builder(d).batchSize(50).workers(workers));
                if (ref == null) {
                    ref = digests;
                } else {
                    assertEquals(ref, digests, workers + " workers (a cache of 16 KiB, so row groups are decoded again and again)");
                }
            }
        }
    }

    /** The dataset with its runs hidden: the loader reads it one row at a time. */
    private record RowsOnly(ParquetDataset d) implements dev.stoker.DirectDataset {
        @Override
        public long size() {
            return d.size();
        }

        @Override
        public dev.stoker.Schema schema() {
            return d.schema();
        }

        @Override
        public void read(long index, dev.stoker.Row row) throws IOException {
            d.read(index, row);
        }
    }

    @Test
    void runsCopiedByColumnGiveTheBatchesOfRowsReadOneByOne() throws Exception {
        // numeric columns only (so the loader asks for runs), one with nulls
        List<String> numeric = List.of("id", "x", "f", "k", "flag", "maybe", "price");
        for (String codec : new String[] {"zstd", "v2"}) {
            for (Where where : new Where[] {null, Where.parse("k >= 100")}) {
                for (int order = 0; order < 3; order++) {
                    // sequential: a cache of 16 KiB drops groups under the other worker; shuffles: room for the file
                    try (ParquetDataset d = ParquetDataset.open(fixture(codec).toString(), new ParquetDataset.Options(numeric, where, order == 0 ? 1 << 14 : 8 << 20))) {
                        dev.stoker.Sampler sampler = order == 0 ? dev.stoker.Sampler.sequential()
                                : order == 1 ? dev.stoker.Sampler.blockShuffle(d.rowGroupStarts(), 2) : dev.stoker.Sampler.shuffle();
                        List<String> rows = digests(Loader.builder(new RowsOnly(d)).sampler(sampler).batchSize(300).workers(2).seed(9));
                        List<String> runs = digests(Loader.builder(d).sampler(sampler).batchSize(300).workers(2).seed(9));
                        assertEquals(rows, runs, codec + ", " + where + ", " + sampler);
                        assertEquals((d.size() + 299) / 300, runs.size());
                    }
                }
            }
        }
    }

    @Test
    void decodedMemoryIsReusedAndStillHoldsEachRowsOwnValuesANullAsZero() throws Exception {
        // a cache of 16 KiB holds one row group: every group is decoded again into memory another
        // group used, so a value (or a null's zero) not written by its own decode would show
        for (String codec : new String[] {"zstd", "v2"}) {
            try (ParquetDataset d = ParquetDataset.open(fixture(codec).toString(), ParquetDataset.Options.of().withCacheBytes(1 << 14))) {
                long rows = 0;
                for (int epoch = 0; epoch < 2; epoch++) {
                    try (Loader l = Loader.builder(d).sampler(dev.stoker.Sampler.sequential()).batchSize(700).workers(2)
                            .epoch(epoch).build()) {
                        for (Batch b : l) {
                            for (int r = 0; r < b.size(); r++) {
                                checkRow(b, r, b.index(r));
                            }
                            rows += b.size();
                        }
                    }
                }
                assertEquals(2 * d.size(), rows, codec);
            }
        }
    }

    private static List<String> digests(LoaderBuilder b) throws Exception {
        List<String> out = new ArrayList<>();
        try (Loader l = b.build()) {
            for (Batch batch : l) {
                var md = java.security.MessageDigest.getInstance("SHA-256");
                batch.digest(md);
                out.add(java.util.HexFormat.of().formatHex(md.digest()));
            }
        }
        return out;
    }

    @Test
    void theDecompressionCeilingDecompressesEveryProjectedChunk() throws Exception {
        for (String codec : new String[] {"zstd", "snappy", "gzip", "uncompressed", "v2"}) {
            try (ParquetDataset d = ParquetDataset.open(fixture(codec).toString(), new ParquetDataset.Options(List.of("id", "label"), null, 1 << 20))) {
                ParquetCeiling c = ParquetCeiling.of(d, 2);
                assertTrue(c.uncompressedBytes() >= (codec.equals("v2") ? 1000 : 8 * 10_000), codec + ": " + c); // v2: ids delta-encoded
                assertTrue(c.compressedBytes() > 0 && c.seconds() > 0, codec + ": " + c);
            }
        }
    }

    static List<String> digests(ParquetDataset d, int workers) throws Exception {
        return digests(Loader.builder(d).batchSize(100).workers(workers).shuffle().seed(3));
    }

    @Test
    void aRemoteFileGivesTheLocalBatchesAndFetchesOnlyTheFooterAndTheProjectedChunks() throws Exception {
        Path local = fixture("uncompressed");
        List<String> columns = List.of("id", "k");
        List<String> want;
        try (ParquetDataset d = ParquetDataset.open(local.toString(), new ParquetDataset.Options(columns, null, 1 << 20))) {
            want = digests(d, 2);
            assertEquals(new ParquetDataset.Traffic(0, 0, d.traffic().projectionBytes(), Files.size(local)), d.traffic(),
                    "a local file is not fetched");
        }
        try (dev.stoker.storage.testing.TestServer http = new dev.stoker.storage.testing.TestServer(local.getParent());
             dev.stoker.storage.testing.MemoryStore mem = dev.stoker.storage.testing.MemoryStore.mount("parquet-test")) {
            mem.put("rows.parquet", Files.readAllBytes(local));
            mem.chunk(1_000).cutAfter(30_000); // every request fails after 30 kB and is resumed
            for (String location : List.of(http.url(local.getFileName().toString()), mem.location("rows.parquet"))) {
                try (ParquetDataset d = ParquetDataset.open(location, new ParquetDataset.Options(columns, null, 1 << 20))) {
                    assertEquals(want, digests(d, 2), location);
                    ParquetDataset.Traffic t = d.traffic();
                    assertTrue(t.bytesFetched() >= t.projectionBytes(), location + ": " + t);
                    assertTrue(t.bytesFetched() <= t.projectionBytes() + ParquetInput.TAIL,
                            location + ": no more than the file's tail beyond the projection: " + t);
                    assertTrue(t.bytesFetched() < t.fileBytes() / 3, location + ": two narrow columns of twelve: " + t);
                    assertTrue(t.requests() <= 2 + 5 * 2 * 2, location + ": the footer, then each group's chunks once per worker: " + t);
                }
            }
            assertTrue(http.bytesSent.get() > 0 && http.bytesSent.get() < Files.size(local) / 3, "bytes sent " + http.bytesSent);
            IOException missing = assertThrows(IOException.class,
                    () -> ParquetDataset.open(http.url("none.parquet"), new ParquetDataset.Options(columns, null, 1 << 20)));
            assertTrue(missing.getMessage().contains(http.url("none.parquet")) && missing.getMessage().contains("404"),
                    missing.getMessage());
            mem.put("cut.parquet", java.util.Arrays.copyOf(Files.readAllBytes(local), 100_000));
            CorruptShardException cut = assertThrows(CorruptShardException.class,
                    () -> ParquetDataset.open(mem.location("cut.parquet"), new ParquetDataset.Options(columns, null, 1 << 20)));
            assertTrue(cut.getMessage().startsWith(mem.location("cut.parquet") + ": not a readable Parquet file"), cut.getMessage());
        }
    }

    @Test
    void projectsColumnsInTheOrderAsked() throws Exception {
        try (ParquetDataset d = ParquetDataset.open(fixture("snappy").toString(), ParquetDataset.Options.of().withColumns(List.of("k", "id")));
             Loader l = Loader.builder(d).batchSize(1000).build()) {
            assertEquals(List.of("k", "id"), d.schema().fields().stream().map(dev.stoker.Field::name).toList());
            Batch b = l.iterator().next();
            for (int r = 0; r < 1000; r++) { // the first batch: rows 0..999
                assertEquals(r * 3 - 500, i32(b, "k", r));
                assertEquals(r, i64(b, "id", r));
            }
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ParquetDataset.open(fixture("snappy").toString(), new ParquetDataset.Options(List.of("nope"), null, 1 << 20)));
        assertTrue(e.getMessage().contains("no column 'nope'") && e.getMessage().contains("label"), e.getMessage());
    }

    @Test
    void aFilterSkipsRowGroupsByStatisticsAndKeepsExactlyTheMatchingRows() throws Exception {
        // k = 3i - 500 >= 15000 <=> i >= 5167: the statistics rule out the first two row groups
        try (ParquetDataset d = ParquetDataset.open(fixture("zstd").toString(), new ParquetDataset.Options(List.of("id"), Where.parse("k >= 15000"), 1 << 20))) {
            assertEquals(10_000 - 5167, d.size());
            assertEquals(3, d.rowGroups());
            assertEquals(range(5167, 10_000, 1), ids(d));
        }
        // a condition no statistics can decide: every group read, one row in five kept
        try (ParquetDataset d = ParquetDataset.open(fixture("snappy").toString(), new ParquetDataset.Options(List.of("id"), Where.parse("label == 'class3'"), 1 << 20))) {
            assertEquals(2000, d.size());
            assertEquals(5, d.rowGroups());
            assertEquals(range(3, 10_000, 5), ids(d));
        }
        // nulls never match; only the first group can hold maybe < 2500... and the second, in part
        try (ParquetDataset d = ParquetDataset.open(fixture("gzip").toString(), new ParquetDataset.Options(List.of("id"), Where.parse("maybe < 2500"), 1 << 20))) {
            List<Long> want = new ArrayList<>();
            for (long i = 0; i < 2500; i++) {
                if (i % 7 != 0) {
                    want.add(i);
                }
            }
            assertEquals(want, ids(d));
            assertEquals(2, d.rowGroups());
        }
        try (ParquetDataset d = ParquetDataset.open(fixture("v2").toString(), new ParquetDataset.Options(List.of("id"), Where.parse("x > 1e9"), 1 << 20))) {
            assertEquals(0, d.size());
        }
        assertThrows(IllegalArgumentException.class, () -> Where.parse("k >>> 3"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ParquetDataset.open(fixture("zstd").toString(), new ParquetDataset.Options(List.of(), Where.parse("k > lots"), 1 << 20)));
        assertTrue(e.getMessage().contains("'lots' is not a INT32 value"), e.getMessage());
    }

    static List<Long> range(long from, long to, long step) {
        List<Long> out = new ArrayList<>();
        for (long i = from; i < to; i += step) {
            out.add(i);
        }
        return out;
    }

    static List<Long> ids(ParquetDataset d) {
        List<Long> out = new ArrayList<>();
        try (Loader l = Loader.builder(d).batchSize(97).workers(2).build()) {
            for (Batch b : l) {
                for (int r = 0; r < b.size(); r++) {
                    out.add(i64(b, "id", r));
                }
            }
        }
        return out;
    }

    @Test
    void describesTheFileForInspect() throws Exception {
        ParquetInfo info = ParquetInfo.of(fixture("snappy"));
        assertEquals(10_000, info.rows());
        assertEquals(5, info.rowGroups());
        assertEquals("int64", info.columns().get(0).type());
        assertEquals("string", info.columns().get(5).type());
        assertEquals("blob", info.columns().get(8).name());
        assertEquals("decimal(10,2)", info.columns().get(9).type());
        assertEquals("int32", info.columns().get(3).type());
        assertTrue(info.createdBy().toLowerCase().contains("duckdb"), info.createdBy());
    }

    @Test
    void aDamagedFileGivesAnErrorNamingItNotAHang() throws Exception {
        byte[] good = Files.readAllBytes(fixture("snappy"));
        // cut short: the footer is gone
        Path cut = tmp.resolve("cut.parquet");
        Files.write(cut, java.util.Arrays.copyOf(good, good.length / 2));
        CorruptShardException e = assertThrows(CorruptShardException.class, () -> ParquetDataset.open(cut.toString(), ParquetDataset.Options.of()));
        assertTrue(e.getMessage().contains("cut.parquet") && e.getMessage().contains("not a readable Parquet file"), e.getMessage());
        // a footer whose length points before the file's start
        byte[] huge = good.clone();
        huge[good.length - 8] = (byte) 0xff;
        huge[good.length - 7] = (byte) 0xff;
        huge[good.length - 6] = (byte) 0xff;
        huge[good.length - 5] = (byte) 0x7f;
        Path big = tmp.resolve("big.parquet");
        Files.write(big, huge);
        e = assertThrows(CorruptShardException.class, () -> ParquetDataset.open(big.toString(), ParquetDataset.Options.of()));
        assertTrue(e.getMessage().contains("big.parquet"), e.getMessage());
        // garbage inside the footer's metadata
        int footerLength = java.nio.ByteBuffer.wrap(good, good.length - 8, 4).order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt();
        for (int k = 0; k < 20; k++) {
            byte[] bad = good.clone();
            java.util.SplittableRandom r = new java.util.SplittableRandom(k);
            for (int j = 0; j < 16; j++) {
                bad[good.length - 8 - footerLength + r.nextInt(footerLength)] = (byte) r.nextInt(256);
            }
            Path p = tmp.resolve("footer" + k + ".parquet");
            Files.write(p, bad);
            try (ParquetDataset d = ParquetDataset.open(p.toString(), ParquetDataset.Options.of()); Loader l = Loader.builder(d).batchSize(100).build()) {
                for (Batch b : l) {
                    assertFalse(b.size() < 0);
                }
            } catch (CorruptShardException | LoaderException | IllegalArgumentException ok) {
                String m = ok.getMessage();
                assertTrue(m.contains("footer" + k + ".parquet") || m.contains("column"), m);
            }
        }
        // a damaged data page: the row group is named, under the loader's error
        byte[] page = good.clone();
        for (int j = 200; j < 400; j++) {
            page[j] = (byte) (page[j] ^ 0x5a);
        }
        Path p = tmp.resolve("page.parquet");
        Files.write(p, page);
        try (ParquetDataset d = ParquetDataset.open(p.toString(), ParquetDataset.Options.of()); Loader l = Loader.builder(d).batchSize(100).build()) {
            LoaderException le = assertThrows(LoaderException.class, () -> {
                for (Batch b : l) {
                    assertTrue(b.size() > 0);
                }
            });
            assertTrue(le.getMessage().contains("page.parquet") && le.getMessage().contains("row group 0"), le.getMessage());
        }
    }

    @Test
    @Timeout(120)
    void mutantsOfRealFilesAreReadOrRefusedWithAnIoErrorNeverAnotherException() throws Exception {
        for (String codec : new String[] {"zstd", "v2", "snappy"}) {
            byte[] good = Files.readAllBytes(fixture(codec));
            java.util.SplittableRandom r = new java.util.SplittableRandom(codec.hashCode());
            int refused = 0;
            for (int i = 0; i < 150; i++) {
                byte[] b = good.clone();
                switch (r.nextInt(3)) {
                    case 0 -> b = java.util.Arrays.copyOf(b, r.nextInt(b.length));
                    case 1 -> {
                        for (int k = 1 + r.nextInt(6); k > 0; k--) {
                            b[r.nextInt(b.length)] ^= (byte) (1 << r.nextInt(8));
                        }
                    }
                    default -> {
                        int at = r.nextInt(b.length - 4);
                        int v = new int[] {0, -1, Integer.MAX_VALUE, Integer.MIN_VALUE, 1 << 30}[r.nextInt(5)];
                        java.nio.ByteBuffer.wrap(b, at, 4).order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(v);
                    }
                }
                Path p = tmp.resolve(codec + "-mutant-" + i + ".parquet");
                Files.write(p, b);
                try (ParquetDataset d = ParquetDataset.open(p.toString(), ParquetDataset.Options.of().withCacheBytes(1 << 20));
                     Loader l = Loader.builder(d).batchSize(500).workers(0).build()) {
                    l.forEach(batch -> { });
                } catch (IOException e) {
                    refused++;
                    assertTrue(e.getMessage() != null && e.getMessage().contains(p.getFileName().toString()), e.getMessage());
                } catch (LoaderException e) {
                    refused++;
                    assertTrue(e.getCause() instanceof IOException, codec + " mutant " + i + ": " + e);
                } catch (RuntimeException | OutOfMemoryError e) {
                    throw new AssertionError(codec + " mutant " + i + ": " + e, e);
                } finally {
                    Files.deleteIfExists(p);
                }
            }
            assertTrue(refused > 15, codec + ": only " + refused + " of 150 mutants refused");
        }
    }

    @Test
    void closeIsIdempotentAndReadsAfterItFail() throws Exception {
        ParquetDataset d = ParquetDataset.open(fixture("zstd").toString(), ParquetDataset.Options.of());
        d.close();
        d.close();
        RuntimeException e = assertThrows(RuntimeException.class, () -> {
            try (Loader l = Loader.builder(d).batchSize(10).build()) {
                l.iterator().next();
            }
        });
        assertTrue(e.getMessage().contains("is closed"), e.getMessage());
    }

    @Test
    void bytesAreCopiedNotShared() throws Exception {
        try (ParquetDataset d = ParquetDataset.open(fixture("uncompressed").toString(), new ParquetDataset.Options(List.of("blob"), null, 1 << 20));
             Loader l = Loader.builder(d).batchSize(3).build()) {
            Batch b = l.iterator().next();
            assertArrayEquals("b0".getBytes(), b.bytes(0, 0).toArray(ValueLayout.JAVA_BYTE));
            assertArrayEquals("b2".getBytes(), b.bytes(0, 2).toArray(ValueLayout.JAVA_BYTE));
        }
    }
}
