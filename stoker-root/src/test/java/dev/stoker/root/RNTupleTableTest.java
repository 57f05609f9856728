package dev.stoker.root;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.DType;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The RNTuple fixtures read back to the values their maker macros wrote (scikit-hep-testdata's dev/make-root). */
class RNTupleTableTest {
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    static Path file(String name) {
        return PhysicsData.folder("rntuple").resolve(name);
    }

    static RootColumn column(RootTable t, String name) {
        return t.columns().stream().filter(c -> c.name().equals(name)).findFirst().orElseThrow();
    }

    static int[] ints(MemorySegment s) {
        int[] a = new int[(int) (s.byteSize() / 4)];
        for (int i = 0; i < a.length; i++) {
            a[i] = s.get(I32, 4L * i);
        }
        return a;
    }

    static float[] floats(MemorySegment s) {
        float[] a = new float[(int) (s.byteSize() / 4)];
        for (int i = 0; i < a.length; i++) {
            a[i] = s.get(F32, 4L * i);
        }
        return a;
    }

    @Test
    void intFloatGivesNineDownToZero() throws IOException {
        try (RootFile f = RootFile.open(file("test_int_float_rntuple_v1-0-0-0.root").toString());
                RootTable t = f.table("ntuple")) {
            assertEquals("ntuple", t.name());
            assertEquals(10, t.entries());
            assertEquals(List.of(new RootColumn("one_integers", DType.INT32, 1, false, "std::int32_t"),
                    new RootColumn("two_floats", DType.FLOAT32, 1, false, "float")), t.columns());
            assertEquals(Map.of(), t.refused());
            assertArrayEquals(new long[] {0}, t.clusterStarts());
            ColumnData ints = t.read(column(t, "one_integers"), 0, 10);
            assertNull(ints.offsets());
            assertArrayEquals(new int[] {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}, ints(ints.values()));
            assertArrayEquals(new float[] {9.9f, 8.8f, 7.7f, 6.6f, 5.5f, 4.4f, 3.3f, 2.2f, 1.1f, 0f},
                    floats(t.read(column(t, "two_floats"), 0, 10).values()));
            assertArrayEquals(new int[] {6, 5, 4}, ints(t.read(column(t, "one_integers"), 3, 6).values()));
            assertEquals(0, t.read(column(t, "one_integers"), 4, 4).values().byteSize());
        }
    }

    @Test
    void vectorsAreRaggedWithTheirMakersOffsets() throws IOException {
        // for i = 100..1: clear when i % 10 == 0, fill, then push i (and i / 10.0)
        List<List<Integer>> want = new ArrayList<>();
        List<Integer> v = new ArrayList<>();
        for (int i = 100; i > 0; i--) {
            if (i % 10 == 0) {
                v.clear();
            }
            want.add(List.copyOf(v));
            v.add(i);
        }
        try (RootFile f = RootFile.open(file("test_1jag_int_float_rntuple_v1-0-0-0.root").toString());
                RootTable t = f.table("ntuple")) {
            assertEquals(100, t.entries());
            RootColumn ci = column(t, "one_v_integers");
            RootColumn cf = column(t, "two_v_floats");
            assertEquals(new RootColumn("one_v_integers", DType.INT32, 1, true, "std::vector<std::int32_t>"), ci);
            assertEquals(new RootColumn("two_v_floats", DType.FLOAT32, 1, true, "std::vector<float>"), cf);
            for (long[] range : new long[][] {{0, 100}, {0, 1}, {7, 23}, {99, 100}, {50, 50}}) {
                int from = (int) range[0];
                int to = (int) range[1];
                ColumnData di = t.read(ci, from, to);
                ColumnData df = t.read(cf, from, to);
                assertEquals(to - from + 1, di.offsets().length);
                assertArrayEquals(di.offsets(), df.offsets());
                int[] ints = ints(di.values());
                float[] floats = floats(df.values());
                for (int e = from; e < to; e++) {
                    List<Integer> w = want.get(e);
                    long start = di.offsets()[e - from];
                    assertEquals(w.size(), di.offsets()[e - from + 1] - start, "entry " + e);
                    for (int j = 0; j < w.size(); j++) {
                        assertEquals(w.get(j), ints[(int) start + j]);
                        assertEquals((float) (w.get(j) / 10.0), floats[(int) start + j]);
                    }
                }
            }
        }
    }

    @Test
    void split3e4DecodesSplitZigzagAndDeltaOverThirtyThousandEntries() throws IOException {
        try (RootFile f = RootFile.open(file("test_split_3e4_rntuple_v1-0-0-0.root").toString());
                RootTable t = f.table("ntuple")) {
            assertEquals(30000, t.entries());
            for (int x : ints(t.read(column(t, "one_int32"), 0, 30000).values())) {
                assertEquals(67305985, x);
            }
            RootColumn u = column(t, "two_uint32");
            assertEquals(DType.UINT32, u.dtype());
            for (int x : ints(t.read(u, 0, 30000).values())) {
                assertEquals((int) 4293844428L, x);
            }
            // i = 30000..1: push 0.099967316f, clear when i % 10 == 0, fill: sizes 0, 1, ..., 9, 0, 1, ...
            ColumnData v = t.read(column(t, "three_vint32"), 0, 30000);
            for (int e = 0; e < 30000; e++) {
                assertEquals(e % 10, v.offsets()[e + 1] - v.offsets()[e], "entry " + e);
            }
            assertEquals(135000, v.offsets()[30000]);
            for (float x : floats(v.values())) {
                assertEquals(0.099967316f, x);
            }
            ColumnData tail = t.read(column(t, "three_vint32"), 29995, 30000);
            assertArrayEquals(new long[] {0, 5, 11, 18, 26, 35}, tail.offsets());
        }
    }

    @Test
    void multipleClusterGroupsReadAcrossEveryClusterBoundary() throws IOException {
        try (RootFile f = RootFile.open(file("test_multiple_cluster_groups_rntuple_v1-0-0-0.root").toString());
                RootTable t = f.table("ntuple")) {
            assertEquals(1000, t.entries());
            assertArrayEquals(new long[] {0, 100, 200, 300, 400, 450, 500, 600, 700, 750, 800, 900}, t.clusterStarts());
            RootColumn one = column(t, "one");
            RootColumn vec = column(t, "int_vector");
            assertEquals(new RootColumn("int_vector", DType.INT16, 1, true, "std::vector<std::int16_t>"), vec);
            for (long[] r : new long[][] {{0, 1000}, {95, 455}, {449, 451}, {999, 1000}, {300, 300}}) {
                int from = (int) r[0];
                int to = (int) r[1];
                int[] ones = ints(t.read(one, from, to).values());
                ColumnData v = t.read(vec, from, to);
                for (int e = from; e < to; e++) {
                    assertEquals(e, ones[e - from]);
                    assertEquals(2L * (e - from), v.offsets()[e - from]);
                    assertEquals(e, v.values().get(I16, 4L * (e - from)));
                    assertEquals(e + 1, v.values().get(I16, 4L * (e - from) + 2));
                }
                assertEquals(2L * (to - from), v.offsets()[to - from]);
            }
        }
    }

    static float truncated(float x, int bits) {
        return Float.intBitsToFloat(Float.floatToRawIntBits(x) & (int) (0xFFFFFFFFL << (32 - bits)));
    }

    static float quantized(float x, int bits) {
        long max = (1L << bits) - 1;
        double q = Math.rint((x - (-2.0)) * max / 5.0);
        return (float) (-2.0 + q * 5.0 / max);
    }

    @Test
    void truncatedAndQuantizedRealsGiveTheirMakersValues() throws IOException {
        float[] trunc = {1.23456789f, 1.4660155e13f, -6.2875986e-22f, -1.9060668f};
        float[] quant = {1.23456789f, 1.6666666f, -6.2875986e-22f, -1.9060668f};
        try (RootFile f = RootFile.open(file("test_float_types_rntuple_v1-0-0-0.root").toString());
                RootTable t = f.table("ntuple")) {
            assertEquals(4, t.entries());
            for (int bits : new int[] {10, 16, 24, 31}) {
                float[] got = floats(t.read(column(t, "trunc" + bits), 0, 4).values());
                for (int i = 0; i < 4; i++) {
                    assertEquals(truncated(trunc[i], bits), got[i], "trunc" + bits + " entry " + i);
                }
            }
            for (int bits : new int[] {1, 8, 16, 20, 24, 25, 32}) {
                float[] got = floats(t.read(column(t, "quant" + bits), 0, 4).values());
                for (int i = 0; i < 4; i++) {
                    assertEquals(quantized(quant[i], bits), got[i], 2.5e-7f,
                            "quant" + bits + " entry " + i);
                }
            }
            assertEquals(1.0f, floats(t.read(column(t, "trunc10"), 0, 1).values())[0]);
            assertEquals(3.0f, floats(t.read(column(t, "quant1"), 0, 1).values())[0]);
        }
    }

    @Test
    void staffReadsItsNumbersAndRefusesItsStringsByName() throws IOException {
        try (RootFile f = RootFile.open(file("ntpl001_staff_rntuple_v1-0-0-0.root").toString());
                RootTable t = f.table("Staff")) {
            assertEquals(3354, t.entries());
            assertEquals(List.of("Category", "Flag", "Age", "Service", "Children", "Grade", "Step", "Hrweek", "Cost"),
                    t.columns().stream().map(RootColumn::name).toList());
            assertEquals(DType.UINT32, column(t, "Flag").dtype());
            assertEquals(Map.of("Division", "std::string", "Nation", "std::string"), t.refused());
            // the first three lines of ROOT's tutorial data cernstaff.dat
            int[][] rows = {{202, 15, 58, 28, 0, 10, 13, 40, 11975}, {530, 15, 63, 33, 0, 9, 13, 40, 10228},
                {316, 15, 56, 31, 2, 9, 13, 40, 10730}};
            for (int j = 0; j < t.columns().size(); j++) {
                int[] all = ints(t.read(t.columns().get(j), 0, 3354).values());
                for (int i = 0; i < rows.length; i++) {
                    assertEquals(rows[i][j], all[i], t.columns().get(j).name() + " row " + i);
                }
                int[] part = ints(t.read(t.columns().get(j), 1000, 1010).values());
                assertArrayEquals(java.util.Arrays.copyOfRange(all, 1000, 1010), part);
            }
            RootColumn division = new RootColumn("Division", DType.UINT8, 1, true, "std::string");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> t.read(division, 0, 1));
            assertTrue(e.getMessage().contains("'Division'") && e.getMessage().contains("std::string"), e.getMessage());
        }
    }

    @Test
    void anUncompressedFileIsReadAndItsStringsRefused() throws IOException {
        try (RootFile f = RootFile.open(file("rntviewer-testfile-uncomp-single-rntuple-v1-0-0-0.root").toString());
                RootTable t = f.table("Contributors")) {
            assertEquals(22, t.entries());
            assertEquals(List.of(), t.columns());
            assertEquals(Map.of("firstName", "std::string", "lastName", "std::string"), t.refused());
        }
    }

    @Test
    void readingOneEntryAtATimeGivesTheWholeReadsValues() throws IOException {
        try (RootFile f = RootFile.open(file("test_multiple_cluster_groups_rntuple_v1-0-0-0.root").toString());
                RootTable t = f.table("ntuple")) {
            for (RootColumn c : t.columns()) {
                ColumnData whole = t.read(c, 0, t.entries());
                for (long e = 0; e < t.entries(); e++) {
                    ColumnData one = t.read(c, e, e + 1);
                    long start = c.ragged() ? whole.offsets()[(int) e] * 2 : e * 4;
                    long bytes = c.ragged() ? (whole.offsets()[(int) e + 1] - whole.offsets()[(int) e]) * 2 : 4;
                    assertEquals(-1, one.values().mismatch(whole.values().asSlice(start, bytes)), c.name() + " entry " + e);
                    if (c.ragged()) {
                        assertEquals(bytes / 2, one.offsets()[1]);
                    }
                }
            }
        }
    }

    @Test
    void readsOutsideTheEntriesAreRefused() throws IOException {
        try (RootFile f = RootFile.open(file("test_int_float_rntuple_v1-0-0-0.root").toString());
                RootTable t = f.table("ntuple")) {
            RootColumn c = column(t, "one_integers");
            assertThrows(IllegalArgumentException.class, () -> t.read(c, 5, 11));
            assertThrows(IllegalArgumentException.class, () -> t.read(c, 6, 5));
            t.close();
            t.close();
            assertThrows(IOException.class, () -> t.read(c, 0, 1));
        }
    }
}
