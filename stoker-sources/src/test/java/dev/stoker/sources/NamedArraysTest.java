package dev.stoker.sources;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.stoker.Batch;
import dev.stoker.CorruptShardException;
import dev.stoker.DType;
import dev.stoker.Loader;
import dev.stoker.formats.npy.Npy;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The arrays source: PolarBERT's raw memmaps with their properties JSON, .npy of any rank, tensor files, and refusals. */
class NamedArraysTest {
    private static final Path TORCH = Path.of("../../shared/physics-data/torch-save").toAbsolutePath().normalize();
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final int N = 37;
    private static final int L = 6;
    private static final int F = 3;

    @TempDir
    Path dir;

    private static float x(int i, int j, int k) {
        return i * 100 + j * 10 + k;
    }

    private static int length(int i) {
        return i % (L + 1);
    }

    /** The arrays PolarBERT writes with np.memmap (no header, .npy names) and its memmap_properties.json. */
    private void polarBert() throws IOException {
        ByteBuffer x = ByteBuffer.allocate(4 * N * L * F).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer l = ByteBuffer.allocate(4 * N).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer c = ByteBuffer.allocate(4 * N).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer y = ByteBuffer.allocate(8 * N).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < N; i++) {
            for (int j = 0; j < L; j++) {
                for (int k = 0; k < F; k++) {
                    x.putFloat(j < length(i) ? x(i, j, k) : 0);
                }
            }
            l.putInt(length(i));
            c.putFloat(i * 0.5f);
            y.putFloat(i).putFloat(-i);
        }
        Files.write(dir.resolve("x.npy"), x.array());
        Files.write(dir.resolve("l.npy"), l.array());
        Files.write(dir.resolve("c.npy"), c.array());
        Files.write(dir.resolve("y.npy"), y.array());
        Files.writeString(dir.resolve("memmap_properties.json"), """
                {
                    "x": {"shape": [%d, %d, %d], "dtype": "float32"},
                    "l": {"shape": [%d], "dtype": "int32"},
                    "c": {"shape": [%d], "dtype": "float32"},
                    "y": {"shape": [%d, 2], "dtype": "float32"}
                }""".formatted(N, L, F, N, N, N));
    }

    private NamedArrays spec(Map<String, NamedArrays.ArrayFile> files, boolean properties) {
        return new NamedArrays(null, files, properties ? dir.resolve("memmap_properties.json").toString() : null, null);
    }

    private NamedArrays.ArrayFile file(String name) {
        return NamedArrays.ArrayFile.of(dir.resolve(name).toString());
    }

    private static LoaderSpec loader(int batch, int workers, String order) {
        return LoaderSpec.builder().batchSize(batch).workers(workers).seed(5L).order(LoaderSpec.Order.of(order)).build();
    }

    @Test
    void readsPolarBertsRawArraysWithTheirPropertiesExactlyAPaddedArrayAndItsLengthsRagged() throws IOException {
        polarBert();
        Map<String, NamedArrays.ArrayFile> files = new LinkedHashMap<>();
        files.put("x", new NamedArrays.ArrayFile(dir.resolve("x.npy").toString(), null, null, file("l.npy")));
        files.put("l", file("l.npy"));
        files.put("c", file("c.npy"));
        files.put("y", file("y.npy"));
        LoaderSpec loader = loader(5, 2, "shuffle");
        Set<Long> seen = new HashSet<>();
        try (Recipe r = Specs.open(Specs.source(Specs.json(spec(files, true))), loader); Loader l = r.builder(loader).build()) {
            for (Batch b : l) {
                for (int row = 0; row < b.size(); row++) {
                    int i = (int) b.index(row);
                    assertTrue(seen.add((long) i));
                    MemorySegment xs = b.bytes(0, row);
                    assertEquals(4L * length(i) * F, xs.byteSize(), "sample " + i);
                    for (int j = 0; j < length(i); j++) {
                        for (int k = 0; k < F; k++) {
                            assertEquals(x(i, j, k), xs.get(F32, 4L * (j * F + k)));
                        }
                    }
                    assertEquals(length(i), b.data("l").get(I32, 4L * row));
                    assertEquals(i * 0.5f, b.data("c").get(F32, 4L * row));
                    assertEquals((float) i, b.data("y").get(F32, 8L * row));
                    assertEquals((float) -i, b.data("y").get(F32, 8L * row + 4));
                }
            }
        }
        assertEquals(N, seen.size());
    }

    @Test
    void readsThePaddedArrayAsATensorByWholeBatchesInAnyOrder() throws IOException {
        polarBert();
        Map<String, NamedArrays.ArrayFile> files = Map.of("x", file("x.npy"), "y", file("y.npy"));
        for (String order : List.of("sequential", "shuffle")) {
            LoaderSpec loader = loader(8, 0, order);
            try (Recipe r = spec(files, true).open(loader); Loader l = r.builder(loader).build()) {
                int count = 0;
                for (Batch b : l) {
                    for (int row = 0; row < b.size(); row++, count++) {
                        int i = (int) b.index(row);
                        long base = 4L * row * L * F;
                        for (int j = 0; j < L; j++) {
                            for (int k = 0; k < F; k++) {
                                assertEquals(j < length(i) ? x(i, j, k) : 0, b.data("x").get(F32, base + 4L * (j * F + k)));
                            }
                        }
                        assertEquals((float) -i, b.data("y").get(F32, 8L * row + 4));
                    }
                }
                assertEquals(N, count);
            }
        }
    }

    @Test
    void aStructuredDtypeInThePropertiesMakesAFieldOfEachMember() throws IOException {
        // ORCA/Prometheus: y as np.dtype([('azimuth', np.float16), ('energy', np.float32), ('interaction', np.int8)]).descr
        ByteBuffer y = ByteBuffer.allocate(7 * N).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < N; i++) {
            y.putShort(Float.floatToFloat16(i / 2f)).putFloat(i * 10f).put((byte) (i - 20));
        }
        Files.write(dir.resolve("y.npy"), y.array());
        Files.writeString(dir.resolve("memmap_properties.json"), "{\"y\": {\"shape\": [" + N + "], \"dtype\": "
                + "[[\"azimuth\", \"<f2\"], [\"energy\", \"<f4\"], [\"interaction\", \"|i1\"]]}}");
        LoaderSpec loader = loader(4, 0, "shuffle");
        try (Recipe r = spec(Map.of("y", file("y.npy")), true).open(loader); Loader l = r.builder(loader).build()) {
            int count = 0;
            for (Batch b : l) {
                assertEquals(DType.FLOAT16, b.schema().field(b.schema().indexOf("y.azimuth")).dtype());
                for (int row = 0; row < b.size(); row++, count++) {
                    int i = (int) b.index(row);
                    assertEquals(i / 2f, Float.float16ToFloat(b.data("y.azimuth").get(ValueLayout.JAVA_SHORT_UNALIGNED, 2L * row)));
                    assertEquals(i * 10f, b.data("y.energy").get(F32, 4L * row));
                    assertEquals(i - 20, b.data("y.interaction").get(ValueLayout.JAVA_BYTE, row));
                }
            }
            assertEquals(N, count);
        }
    }

    @Test
    void readsANpyOfAnyRankAndARawFileWithItsShapeGiven() throws IOException {
        float[] v = new float[N * 2 * 3 * 2];
        for (int i = 0; i < v.length; i++) {
            v[i] = i;
        }
        Npy.write(dir.resolve("a.npy"), DType.FLOAT32, new long[] {N, 2, 3, 2}, MemorySegment.ofArray(v));
        ByteBuffer raw = ByteBuffer.allocate(8 * N).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < N; i++) {
            raw.putLong(1000L + i);
        }
        Files.write(dir.resolve("ids.bin"), raw.array());
        Map<String, NamedArrays.ArrayFile> files = new LinkedHashMap<>();
        files.put("a", file("a.npy"));
        files.put("ids", NamedArrays.ArrayFile.parse("{\"path\": \"" + dir.resolve("ids.bin") + "\", \"dtype\": \"<i8\", \"shape\": [-1]}"));
        LoaderSpec loader = loader(N, 0, "sequential");
        try (Recipe r = spec(files, false).open(loader); Loader l = r.builder(loader).build()) {
            Batch b = l.iterator().next();
            assertArrayEquals(new long[] {2, 3, 2}, b.schema().field(0).shape());
            for (int i = 0; i < v.length; i++) {
                assertEquals(v[i], b.data("a").get(F32, 4L * i));
            }
            assertEquals(1000L + N - 1, b.data("ids").get(ValueLayout.JAVA_LONG_UNALIGNED, 8L * (N - 1)));
        }
    }

    @Test
    void readsTheNamedTensorsOfOneTorchSaveFile() throws IOException {
        assumeTrue(Files.isDirectory(TORCH), "no ../shared/physics-data/torch-save");
        NamedArrays spec = new NamedArrays(TORCH.resolve("dict_of_tensors.pt").toString(), null, null, null);
        LoaderSpec loader = loader(3, 0, "sequential");
        try (Recipe r = spec.open(loader); Loader l = r.builder(loader).build()) {
            Batch b = l.iterator().next();
            assertEquals("[x: float32[4], y: uint8[]]", b.schema().toString());
            assertEquals(11f, b.data("x").get(F32, 4L * 11));
            assertEquals(3, b.data("y").get(ValueLayout.JAVA_BYTE, 2));
        }
    }

    private String refused(NamedArrays spec) {
        IOException e = assertThrows(IOException.class, () -> spec.open(loader(2, 0, "sequential")).close());
        assertTrue(!e.getMessage().contains("\n"), e.getMessage());
        return e.getMessage();
    }

    @Test
    void refusesEachProblemInOneLineNamingTheFile() throws IOException {
        polarBert();
        String m = refused(spec(Map.of("x", file("x.npy")), false));
        assertTrue(m.startsWith(dir.resolve("x.npy") + ": no .npy header (the magic \\x93NUMPY is missing)"), m);
        assertTrue(m.contains("give its dtype and shape"), m);
        Files.writeString(dir.resolve("memmap_properties.json"), "{\"x\": {\"shape\": [" + (N + 1) + ", " + L + ", " + F
                + "], \"dtype\": \"float32\"}}");
        m = refused(spec(Map.of("x", file("x.npy")), true));
        assertTrue(m.contains("x.npy: a raw array of shape [" + (N + 1) + ", 6, 3] of float32 is " + 4 * (N + 1) * L * F
                + " bytes, the file has " + 4 * N * L * F), m);
        Map<String, NamedArrays.ArrayFile> uneven = new LinkedHashMap<>();
        uneven.put("c", NamedArrays.ArrayFile.parse("{\"path\": \"" + dir.resolve("c.npy") + "\", \"dtype\": \"float32\", \"shape\": [" + N + "]}"));
        uneven.put("y", NamedArrays.ArrayFile.parse("{\"path\": \"" + dir.resolve("y.npy") + "\", \"dtype\": \"float32\", \"shape\": [" + 2 * N + "]}"));
        m = refused(spec(uneven, false));
        assertTrue(m.contains("field 'y' has " + 2 * N + " samples") && m.contains("field 'c'"), m);
        // a length longer than the padded axis, named with its sample
        Files.write(dir.resolve("bad_l.npy"), ByteBuffer.allocate(4 * N).order(ByteOrder.LITTLE_ENDIAN).putInt(4 * 3, L + 1).array());
        Map<String, NamedArrays.ArrayFile> ragged = Map.of("x", new NamedArrays.ArrayFile(dir.resolve("x.npy").toString(),
                "float32", List.of((long) N, (long) L, (long) F), NamedArrays.ArrayFile.parse(
                "{\"path\": \"" + dir.resolve("bad_l.npy") + "\", \"dtype\": \"int32\", \"shape\": [" + N + "]}")));
        LoaderSpec loader = loader(N, 0, "sequential");
        try (Recipe r = spec(ragged, false).open(loader); Loader l = r.builder(loader).build()) {
            Exception e = assertThrows(Exception.class, () -> l.iterator().next());
            Throwable t = e;
            while (!(t instanceof CorruptShardException) && t.getCause() != null) {
                t = t.getCause();
            }
            assertTrue(t.getMessage().contains("bad_l.npy: sample 3 of ragged field 'x' has length " + (L + 1)), t.getMessage());
        }
        // a Fortran-order .npy, refused by name
        byte[] header = Npy.header(DType.FLOAT32, new long[] {2, 2});
        String h = new String(header, java.nio.charset.StandardCharsets.ISO_8859_1).replace("'fortran_order': False", "'fortran_order': True ");
        Files.write(dir.resolve("f.npy"), concat(h.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1), new byte[16]));
        m = refused(spec(Map.of("f", file("f.npy")), false));
        assertTrue(m.contains("f.npy: a Fortran-order array"), m);
        Files.write(dir.resolve("h.npy"), new byte[] {(byte) 0x89, 'H', 'D', 'F', '\r', '\n', 0x1A, '\n', 0, 0, 0, 0});
        m = refused(spec(Map.of("h", file("h.npy")), false));
        assertTrue(m.contains("h.npy: an HDF5 file, not an array"), m);
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    @Test
    void inMemoryCopiesEachFieldsFilesAndTheirLengthsAndReadsTheSame() throws IOException {
        polarBert();
        Map<String, NamedArrays.ArrayFile> files = new LinkedHashMap<>();
        files.put("x", new NamedArrays.ArrayFile(dir.resolve("x.npy").toString(), null, null, file("l.npy")));
        files.put("y", file("y.npy"));
        LoaderSpec disk = loader(N, 0, "sequential");
        LoaderSpec memory = disk.toBuilder().inMemory(true).build();
        byte[] want;
        try (Recipe r = Specs.open(spec(files, true), disk); Loader l = r.builder(disk).build()) {
            Batch b = l.iterator().next();
            want = concat(b.bytes(0, N - 1).toArray(ValueLayout.JAVA_BYTE), b.data("y").toArray(ValueLayout.JAVA_BYTE));
        }
        try (Recipe r = Specs.open(spec(files, true), memory); Loader l = r.builder(memory).build()) {
            assertTrue(r.report().stream().anyMatch(s -> s.startsWith("in memory: " + String.format(java.util.Locale.ROOT, "%,d",
                    4L * N * (L * F + 1 + 2)) + " bytes")), r.report().toString());
            Batch b = l.iterator().next();
            assertArrayEquals(want, concat(b.bytes(0, N - 1).toArray(ValueLayout.JAVA_BYTE), b.data("y").toArray(ValueLayout.JAVA_BYTE)));
        }
    }

    @Test
    void aSpecNamesEachFieldsFileByItsPathOrAnObjectAndReadsBackEqual() {
        NamedArrays spec = (NamedArrays) Specs.source("{\"kind\": \"arrays\", \"files\": {\"x\": \"x.npy\", "
                + "\"y\": {\"path\": \"y.bin\", \"dtype\": \"float32\", \"shape\": [-1, 2], \"lengths\": \"l.npy\"}}, "
                + "\"properties\": \"p.json\"}");
        assertEquals(NamedArrays.ArrayFile.of("x.npy"), spec.files().get("x"));
        assertEquals(new NamedArrays.ArrayFile("y.bin", "float32", List.of(-1L, 2L), NamedArrays.ArrayFile.of("l.npy")),
                spec.files().get("y"));
        assertEquals(spec, Specs.source(Specs.json(spec)));
        assertEquals("files", assertThrows(SpecException.class, () -> Specs.source("{\"kind\": \"arrays\", \"files\": "
                + "{\"1x\": \"x.npy\"}}")).option());
        assertEquals(null, assertThrows(SpecException.class, () -> new NamedArrays("a.pt", Map.of("x", file("x.npy")), null, null)
                .open(LoaderSpec.DEFAULT)).option());
    }

    @Test
    void theFingerprintFollowsTheContent() throws IOException {
        polarBert();
        Map<String, NamedArrays.ArrayFile> files = Map.of("y", file("y.npy"));
        LoaderSpec loader = loader(2, 0, "sequential");
        long before;
        try (Recipe r = spec(files, true).open(loader); Loader l = r.builder(loader).build()) {
            before = l.state().data();
        }
        byte[] y = Files.readAllBytes(dir.resolve("y.npy"));
        y[5] ^= 1;
        Files.write(dir.resolve("y.npy"), y);
        try (Recipe r = spec(files, true).open(loader); Loader l = r.builder(loader).build()) {
            assertNotEquals(before, l.state().data());
        }
    }

    @Test
    void aTokenFileThatIsATorchSaveIsReadAsItsTensorAndOtherContainersAreRefusedByName() throws IOException {
        assumeTrue(Files.isDirectory(TORCH), "no ../shared/physics-data/torch-save");
        LoaderSpec loader = loader(4, 0, "sequential");
        Tokens pt = Tokens.of(List.of(TORCH.resolve("babylm_like_tokens_int64.pt").toString())).withSeqLen(8);
        try (Recipe r = pt.open(loader); Loader l = r.builder(loader).build()) {
            Batch b = l.iterator().next();
            long[] first = {0, 7919, 15838, 7757, 15676};
            for (int i = 0; i < first.length; i++) {
                assertEquals(first[i], b.data("x").get(ValueLayout.JAVA_LONG_UNALIGNED, 8L * i));
            }
        }
        Path renamed = dir.resolve("tokens.bin"); // a torch.save under a raw file's name: still its tensor
        Files.copy(TORCH.resolve("babylm_like_tokens_int64.pt"), renamed);
        try (Recipe r = Tokens.of(List.of(renamed.toString())).withSeqLen(8).open(loader)) {
            assertEquals(8, r.tokensPerSample());
        }
        Path st = dir.resolve("tokens.safetensors"); // a safetensors file of one int64 tensor, written by the format's spec
        String header = "{\"ids\":{\"dtype\":\"I64\",\"shape\":[40],\"data_offsets\":[0,320]}}";
        ByteBuffer b = ByteBuffer.allocate(8 + header.length() + 320).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(header.length()).put(header.getBytes());
        for (int i = 0; i < 40; i++) {
            b.putLong(3L * i);
        }
        Files.write(st, b.array());
        try (Recipe r = Tokens.of(List.of(st.toString())).withSeqLen(8).open(loader); Loader l = r.builder(loader).build()) {
            Batch batch = l.iterator().next();
            assertEquals(3L * 9, batch.data("x").get(ValueLayout.JAVA_LONG_UNALIGNED, 8L * 9)); // window 1 starts at token 8
        }
        assertTrue(refusedTokens(TORCH.resolve("counter_global.pt")).contains("refuses global 'collections.Counter'"));
        assertTrue(refusedTokens(TORCH.resolve("legacy_nonzip.pt")).contains("legacy format"));
        assertTrue(refusedTokens(TORCH.resolve("dict_of_tensors.pt")).contains("holds 2 tensors"));
        Path zip = dir.resolve("data.bin");
        try (ZipOutputStream z = new ZipOutputStream(Files.newOutputStream(zip))) {
            z.putNextEntry(new ZipEntry("a.txt"));
            z.write(new byte[100]);
        }
        assertTrue(refusedTokens(zip).startsWith(zip + ": a zip archive, not tokens (no torch.save data.pkl in it)"));
        Map<String, byte[]> magics = Map.of("an HDF5 file", new byte[] {(byte) 0x89, 'H', 'D', 'F', '\r', '\n', 0x1A, '\n'},
                "a Parquet file", "PAR1".getBytes(), "an SQLite database", "SQLite format 3\0".getBytes(),
                "an Arrow IPC file", "ARROW1\0\0".getBytes(), "a ROOT file", new byte[] {'r', 'o', 'o', 't', 0, 0, (byte) 0xF2, 0x6C, 0, 0, 0, 100});
        for (var e : magics.entrySet()) {
            Path p = dir.resolve("t-" + e.getKey().replace(' ', '_') + ".bin");
            Files.write(p, concat(e.getValue(), new byte[4000]));
            String m = refusedTokens(p);
            assertTrue(m.startsWith(p + ": " + e.getKey() + ", not raw token ids"), m);
        }
    }

    private static String refusedTokens(Path p) {
        IOException e = assertThrows(IOException.class, () -> Tokens.of(List.of(p.toString())).withSeqLen(8)
                .open(loader(2, 0, "sequential")).close());
        return e.getMessage();
    }
}
