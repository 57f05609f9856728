package dev.stoker.hdf5;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.Batch;
import dev.stoker.DType;
import dev.stoker.Loader;
import dev.stoker.Sampler;
import dev.stoker.formats.Mutants;
import io.jhdf.HdfFile;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** HDF5 files that h5py wrote (fixtures/hdf5/make_h5.py): values are formulas of the index. */
class Hdf5DatasetTest {
    @TempDir
    Path tmp;

    static Path fixture(String name) {
        try {
            return Path.of(Hdf5DatasetTest.class.getResource("/fixtures/hdf5/" + name).toURI());
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void readsContiguousAndChunkedDatasetsSampleBySample() throws IOException {
        for (String f : new String[] {"default.h5", "latest.h5"}) {
            try (Hdf5Dataset d = new Hdf5Dataset(fixture(f), List.of("/x", "/y", "/z"))) {
                assertEquals(100, d.size());
                assertEquals(DType.FLOAT32, d.schema().field(0).dtype());
                assertEquals(DType.INT64, d.schema().field(1).dtype());
                assertEquals(DType.INT16, d.schema().field(2).dtype());
                try (Loader l = Loader.builder(d).batchSize(9).workers(2).shuffle().build()) {
                    int seen = 0;
                    for (Batch b : l) {
                        for (int r = 0; r < b.size(); r++) {
                            long i = b.index(r);
                            for (int j = 0; j < 8; j++) {
                                assertEquals(i * 10 + j, b.data(0).get(ValueLayout.JAVA_FLOAT_UNALIGNED, 4L * (r * 8 + j)), 0, f);
                            }
                            assertEquals(i % 7, b.data(1).get(ValueLayout.JAVA_LONG_UNALIGNED, 8L * r));
                            for (int a = 0; a < 3; a++) {
                                for (int c = 0; c < 4; c++) {
                                    assertEquals(i * 100 + a * 10 + c,
                                            b.data(2).get(ValueLayout.JAVA_SHORT_UNALIGNED, 2L * (r * 12 + a * 4 + c)), f + " z");
                                }
                            }
                            seen++;
                        }
                    }
                    assertEquals(100, seen);
                }
            }
        }
    }

    /**
     * Contiguous datasets (h5py's default) are read from a mapping of where they lie, a batch of
     * them at once (NOTE [Contiguous]): the same values in any order, and a chunked one among
     * them sends the batch through decoded blocks.
     */
    @Test
    void contiguousDatasetsAreReadWholeBatchesAtOnceFromTheirMapping() throws IOException {
        for (String f : new String[] {"default.h5", "latest.h5"}) {
            try (Hdf5Dataset d = new Hdf5Dataset(fixture(f), List.of("/x", "/y"))) {
                for (boolean shuffle : new boolean[] {false, true}) {
                    try (Loader l = Loader.builder(d).batchSize(16).workers(2).sampler(shuffle ? Sampler.shuffle() : Sampler.sequential()).build()) {
                        java.util.Set<Long> seen = new java.util.HashSet<>();
                        for (Batch b : l) {
                            for (int r = 0; r < b.size(); r++) {
                                long i = b.index(r);
                                assertTrue(seen.add(i));
                                for (int j = 0; j < 8; j++) {
                                    assertEquals(i * 10 + j, b.data(0).get(ValueLayout.JAVA_FLOAT_UNALIGNED, 4L * (r * 8 + j)), 0, f);
                                }
                                assertEquals(i % 7, b.data(1).get(ValueLayout.JAVA_LONG_UNALIGNED, 8L * r), f);
                            }
                        }
                        assertEquals(100, seen.size());
                    }
                }
                assertTrue(readsWholeBatches(d), f + ": contiguous datasets are mapped");
            }
            try (Hdf5Dataset d = new Hdf5Dataset(fixture(f), List.of("/x", "/z"))) {
                assertTrue(!readsWholeBatches(d), f + ": a chunked dataset goes through blocks");
            }
        }
    }

    /** Whether {@code d} reads a batch of samples at once. */
    private static boolean readsWholeBatches(Hdf5Dataset d) throws IOException {
        boolean[] whole = {false};
        try (Loader l = Loader.builder(new dev.stoker.DirectDataset() {
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

            @Override
            public boolean readAll(long[] indices, int from, int count, dev.stoker.Row row) throws IOException {
                boolean all = d.readAll(indices, from, count, row);
                whole[0] |= all;
                return all;
            }
        }).batchSize(8).workers(0).build()) {
            l.iterator().next();
        }
        return whole[0];
    }

    @Test
    void shuffleFilterAndAPartialLastChunk() throws IOException {
        try (Hdf5Dataset d = new Hdf5Dataset(fixture("default.h5"), List.of("/w"));
             Loader l = Loader.builder(d).batchSize(10).build()) {
            assertEquals(103, d.size());
            for (Batch b : l) {
                for (int r = 0; r < b.size(); r++) {
                    long i = b.index(r);
                    for (int j = 0; j < 5; j++) {
                        assertEquals(i - j * 1000, b.data(0).get(ValueLayout.JAVA_INT_UNALIGNED, 4L * (r * 5 + j)));
                    }
                }
            }
        }
    }

    @Test
    void groupsAttributesAndErrors() throws IOException {
        try (HdfFile f = new HdfFile(fixture("latest.h5"))) {
            assertEquals(List.of("/group/u", "/w", "/x", "/y", "/z"), Hdf5Dataset.datasetPaths(f).stream().sorted().toList());
            assertEquals("halves", f.getDatasetByPath("/group/u").getAttribute("unit").getData());
        }
        try (Hdf5Dataset d = new Hdf5Dataset(fixture("default.h5"), List.of("/group/u"));
             Loader l = Loader.builder(d).batchSize(100).build()) {
            Batch b = l.iterator().next();
            assertEquals(49.5, b.data(0).get(ValueLayout.JAVA_DOUBLE_UNALIGNED, 8L * 99));
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new Hdf5Dataset(fixture("default.h5"), List.of("/nope")));
        assertTrue(e.getMessage().contains("no dataset /nope") && e.getMessage().contains("/x"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new Hdf5Dataset(fixture("default.h5"), List.of("/x", "/w")));
        Path junk = tmp.resolve("junk.h5");
        Files.write(junk, new byte[100]);
        assertThrows(dev.stoker.CorruptShardException.class, () -> new Hdf5Dataset(junk, List.of("/x")));
    }

    @Test
    @org.junit.jupiter.api.Timeout(60)
    void aTruncatedFileGivesAnErrorNamingItNotAHang() throws Exception {
        for (String name : new String[] {"default.h5", "latest.h5"}) {
            byte[] whole = Files.readAllBytes(fixture(name));
            for (int cut : new int[] {whole.length / 10, whole.length / 4, whole.length / 2, 3 * whole.length / 4, whole.length - 100}) {
                Path p = tmp.resolve("cut-" + cut + "-" + name);
                Files.write(p, java.util.Arrays.copyOf(whole, cut));
                try (Hdf5Dataset d = new Hdf5Dataset(p, List.of("/x", "/y"));
                     Loader l = Loader.builder(d).batchSize(50).workers(2).build()) {
                    for (Batch b : l) {
                        assertTrue(b.size() > 0);
                    }
                    throw new AssertionError(p + ": a file cut at " + cut + " of " + whole.length + " bytes read without an error");
                } catch (dev.stoker.CorruptShardException | dev.stoker.LoaderException e) {
                    assertTrue(e.getMessage().contains(p.toString()), e.getMessage());
                }
            }
        }
    }

    /** Every damaged copy is read or refused with an IOException (the formats' mutation fuzz: Mutants). */
    @Test
    void damagedFilesAreReadOrRefusedWithAnIoError() throws IOException {
        for (String f : List.of("default.h5", "latest.h5")) {
            Mutants.fuzz(tmp, "h5-" + f, Files.readAllBytes(fixture(f)), ".h5", 150, p -> {
                try (Hdf5Dataset d = new Hdf5Dataset(p, List.of("/x"));
                     Loader l = Loader.builder(d).batchSize(16).workers(0).build()) {
                    l.forEach(b -> { });
                }
            });
        }
    }

    /** Each row of {@code names} of dtypes.h5, read through a loader in order, as {@code read} sees field 0. */
    private static void eachRow(List<String> names, RowCheck check) throws IOException {
        try (Hdf5Dataset d = new Hdf5Dataset(fixture("dtypes.h5"), names);
             Loader l = Loader.builder(d).batchSize(7).workers(2).shuffle().build()) {
            int seen = 0;
            for (Batch b : l) {
                for (int r = 0; r < b.size(); r++) {
                    check.row(b, r, b.index(r));
                    seen++;
                }
            }
            assertEquals(100, seen);
        }
    }

    @FunctionalInterface
    private interface RowCheck {
        void row(Batch b, int r, long i);
    }

    @Test
    void float16IsDeliveredAsFloat16WithItsValues() throws IOException {
        try (Hdf5Dataset d = new Hdf5Dataset(fixture("dtypes.h5"), List.of("/half", "/halfz"))) {
            assertEquals(DType.FLOAT16, d.schema().field(0).dtype());
            assertEquals(DType.FLOAT16, d.schema().field(1).dtype());
        }
        eachRow(List.of("/half", "/halfz"), (b, r, i) -> {
            for (int j = 0; j < 2; j++) {
                short bits = b.data(0).get(ValueLayout.JAVA_SHORT_UNALIGNED, 2L * (r * 2 + j));
                assertEquals(i * 0.5 + j, Float.float16ToFloat(bits), 0, "half[" + i + ", " + j + "]");
            }
            assertEquals(i * 0.25, Float.float16ToFloat(b.data(1).get(ValueLayout.JAVA_SHORT_UNALIGNED, 2L * r)), 0, "halfz");
        });
    }

    @Test
    void boolMasksBigEndianAndUint64PastInt64AreDeliveredExactly() throws IOException {
        try (Hdf5Dataset d = new Hdf5Dataset(fixture("dtypes.h5"), List.of("/mask", "/be", "/bigu"))) {
            assertEquals(DType.BOOL, d.schema().field(0).dtype());
            assertEquals(DType.INT32, d.schema().field(1).dtype());
            assertEquals(DType.UINT64, d.schema().field(2).dtype());
        }
        eachRow(List.of("/mask", "/be", "/bigu"), (b, r, i) -> {
            assertEquals(i % 3 == 0 ? 1 : 0, b.data(0).get(ValueLayout.JAVA_BYTE, r), "mask[" + i + "]");
            assertEquals(i * 1000 - 7, b.data(1).get(ValueLayout.JAVA_INT_UNALIGNED, 4L * r), "be[" + i + "]");
            assertEquals(Long.MIN_VALUE + i, b.data(2).get(ValueLayout.JAVA_LONG_UNALIGNED, 8L * r), "bigu[" + i + "] (2**63 + i)");
        });
    }

    @Test
    void unwrittenChunksReadAsTheFillValue() throws IOException {
        eachRow(List.of("/sparse"), (b, r, i) ->
                assertEquals(i < 32 ? i : -7, b.data(0).get(ValueLayout.JAVA_INT_UNALIGNED, 4L * r), "sparse[" + i + "]"));
    }

    @Test
    void externalStorageIsRefusedByName() {
        var e = assertThrows(dev.stoker.CorruptShardException.class,
                () -> new Hdf5Dataset(fixture("external.h5"), List.of("/outside")).close());
        assertTrue(e.getMessage().contains("external.h5") && e.getMessage().contains("external storage"), e.getMessage());
    }
}
