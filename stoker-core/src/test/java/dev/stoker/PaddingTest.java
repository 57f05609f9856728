package dev.stoker;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The pad and stack stage: ragged fields become padded tensors, in the batch's columns. */
@Timeout(60)
class PaddingTest {
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    static int jets(long i) {
        return (int) (i % 7);
    }

    static int particles(long i) {
        return (int) (i % 5);
    }

    static float jetPt(long i, int j) {
        return i * 10 + j;
    }

    static float jetEta(long i, int j) {
        return -(i + j / 8f);
    }

    static double partPx(long i, int j) {
        return i + j / 4.0;
    }

    static float partPy(long i, int j) {
        return -i - j;
    }

    static int partQ(long i, int j) {
        return (int) (i * 3 + j) % 5 - 2;
    }

    /**
     * Events: an id, jets (pt and eta, float32, 0 to 6 a sample), particles (px float64, py
     * float32, q int32, 0 to 4 a sample), a name as bytes. Jets are appended one value at a time,
     * particles in one run, so both ways of appending are read. {@code unequalAt}: that sample's
     * Part_py has one value fewer.
     */
    static final class Events implements DirectDataset {
        static final Schema SCHEMA = Schema.of(Field.scalar("id", DType.INT64), Field.ragged("Jet_pt", DType.FLOAT32, 16),
                Field.ragged("Jet_eta", DType.FLOAT32, 16), Field.ragged("Part_px", DType.FLOAT64, 32),
                Field.ragged("Part_py", DType.FLOAT32, 16), Field.ragged("Part_q", DType.INT32, 16), Field.bytes("name", 8));
        final long n;
        final long unequalAt;

        Events(long n, long unequalAt) {
            this.n = n;
            this.unequalAt = unequalAt;
        }

        @Override
        public long size() {
            return n;
        }

        @Override
        public Schema schema() {
            return SCHEMA;
        }

        @Override
        public void read(long i, Row row) {
            row.putLong(0, 0, i);
            MemorySegment one = MemorySegment.ofArray(new float[1]);
            for (int j = 0; j < jets(i); j++) {
                one.set(F32, 0, jetPt(i, j));
                row.append(1, one, 0, 4);
                one.set(F32, 0, jetEta(i, j));
                row.append(2, one, 0, 4);
            }
            int p = particles(i);
            double[] px = new double[p];
            float[] py = new float[p];
            int[] q = new int[p];
            for (int j = 0; j < p; j++) {
                px[j] = partPx(i, j);
                py[j] = partPy(i, j);
                q[j] = partQ(i, j);
            }
            row.append(3, MemorySegment.ofArray(px), 0, 8L * p);
            row.append(4, MemorySegment.ofArray(py), 0, 4L * (i == unequalAt ? p - 1 : p));
            row.append(5, MemorySegment.ofArray(q), 0, 4L * p);
            row.append(6, ("e" + i).getBytes());
        }

        @Override
        public String name() {
            return "events";
        }
    }

    static LoaderBuilder events(long n, Padding padding) {
        return Loader.builder(new Events(n, -1)).padding(padding);
    }

    @Test
    void paddedFieldsAreTensorsOfTheirLengthWithPadValueLengthsAndMask() {
        Padding p = Padding.of().pad("Jet_*", 4).value(-1).lengths(true).mask(true);
        long n = 50;
        try (Loader l = events(n, p).batchSize(8).build()) {
            Schema s = l.schema();
            assertEquals(List.of("id", "Jet_pt", "Jet_pt_len", "Jet_pt_mask", "Jet_eta", "Jet_eta_len", "Jet_eta_mask",
                    "Part_px", "Part_py", "Part_q", "name"), s.fields().stream().map(Field::name).toList());
            assertEquals(Field.tensor("Jet_pt", DType.FLOAT32, 4), s.field(1));
            assertEquals(Field.tensor("Jet_pt_mask", DType.BOOL, 4), s.field(3));
            assertTrue(s.field(7).isRagged(), "a ragged field no glob names stays ragged");
            long seen = 0;
            for (Batch b : l) {
                assertArrayEquals(new long[] {b.size(), 4}, b.shape(1));
                for (int r = 0; r < b.size(); r++) {
                    long i = b.data(0).getAtIndex(I64, r);
                    int kept = Math.min(jets(i), 4);
                    assertEquals(kept, b.data(2).getAtIndex(I64, r), "Jet_pt_len of sample " + i);
                    for (int j = 0; j < 4; j++) {
                        assertEquals(j < kept ? jetPt(i, j) : -1f, b.data(1).getAtIndex(F32, r * 4L + j), "Jet_pt " + i + "/" + j);
                        assertEquals(j < kept ? jetEta(i, j) : -1f, b.data(4).getAtIndex(F32, r * 4L + j));
                        assertEquals(j < kept ? 1 : 0, b.data(3).get(ValueLayout.JAVA_BYTE, r * 4L + j));
                    }
                    // the unpadded ragged field is as the dataset wrote it
                    MemorySegment px = b.bytes(7, r);
                    assertEquals(8L * particles(i), px.byteSize());
                    for (int j = 0; j < particles(i); j++) {
                        assertEquals(partPx(i, j), px.getAtIndex(F64, j));
                    }
                    assertEquals("e" + i, new String(b.bytes(10, r).toArray(ValueLayout.JAVA_BYTE)));
                    seen++;
                }
            }
            assertEquals(n, seen);
            long cut = 0;
            long dropped = 0;
            for (long i = 0; i < n; i++) {
                if (jets(i) > 4) {
                    cut++;
                    dropped += 2L * (jets(i) - 4); // Jet_pt and Jet_eta
                }
            }
            assertEquals(cut, l.stats().truncatedSamples());
            assertEquals(dropped, l.stats().droppedValues());
        }
    }

    @Test
    void aStackIsOneTensorOfEntriesByFeaturesConvertedToItsType() {
        Padding p = Padding.of().stack("particles", "Part_px", "Part_py", "Part_q").pad("particles", 3).lengths(true);
        try (Loader l = events(40, p).batchSize(5).workers(2).build()) {
            Schema s = l.schema();
            assertEquals(Field.tensor("particles", DType.FLOAT32, 3, 3), s.field(s.indexOf("particles")));
            assertEquals(s.indexOf("particles") + 1, s.indexOf("particles_len"));
            assertThrows(IllegalArgumentException.class, () -> s.indexOf("Part_px"), "stacked fields are gone");
            int at = s.indexOf("particles");
            long dropped = 0;
            for (Batch b : l) {
                assertArrayEquals(new long[] {b.size(), 3, 3}, b.shape(at));
                for (int r = 0; r < b.size(); r++) {
                    long i = b.data(0).getAtIndex(I64, r);
                    int kept = Math.min(particles(i), 3);
                    dropped += 3L * (particles(i) - kept);
                    assertEquals(kept, b.data(at + 1).getAtIndex(I64, r));
                    for (int j = 0; j < 3; j++) {
                        long e = r * 9L + j * 3L;
                        assertEquals(j < kept ? (float) partPx(i, j) : 0f, b.data(at).getAtIndex(F32, e));
                        assertEquals(j < kept ? partPy(i, j) : 0f, b.data(at).getAtIndex(F32, e + 1));
                        assertEquals(j < kept ? (float) partQ(i, j) : 0f, b.data(at).getAtIndex(F32, e + 2));
                    }
                }
            }
            assertEquals(dropped, l.stats().droppedValues());
        }
    }

    @Test
    void aStackAppendedAValueAtATimeIsStagedCutAndPaddedInEveryReusedBuffer() {
        // Jet_pt and Jet_eta come one value an append (0 to 6 a sample): a float32 stack, staged
        Padding p = Padding.of().stack("jets", "Jet_eta", "Jet_pt").pad("jets", 4).value(-1).mask(true);
        try (Loader l = events(300, p).batchSize(7).workers(2).prefetch(2).shuffle().seed(5).build()) {
            int at = l.schema().indexOf("jets");
            long cut = 0;
            long seen = 0;
            for (Batch b : l) {
                for (int r = 0; r < b.size(); r++) {
                    long i = b.data(0).getAtIndex(I64, r);
                    int kept = Math.min(jets(i), 4);
                    cut += jets(i) > 4 ? 1 : 0;
                    for (int j = 0; j < 4; j++) {
                        long e = r * 8L + j * 2L;
                        assertEquals(j < kept ? jetEta(i, j) : -1f, b.data(at).getAtIndex(F32, e), "sample " + i);
                        assertEquals(j < kept ? jetPt(i, j) : -1f, b.data(at).getAtIndex(F32, e + 1), "sample " + i);
                        assertEquals(j < kept, b.data(at + 1).get(ValueLayout.JAVA_BYTE, r * 4L + j) != 0);
                    }
                    seen++;
                }
            }
            assertEquals(300, seen);
            assertEquals(cut, l.stats().truncatedSamples());
        }
    }

    /**
     * Particles a, b, c (float32, 0 to 5 a sample): field by field, or, once told the loader stacks
     * fields ({@link DirectDataset#willStack}), those entry by entry through {@link Row#appendEntries}.
     */
    static final class Particles implements DirectDataset {
        static final Schema SCHEMA = Schema.of(Field.scalar("id", DType.INT64), Field.ragged("a", DType.FLOAT32, 16),
                Field.ragged("b", DType.FLOAT32, 16), Field.ragged("c", DType.FLOAT32, 16));
        final boolean takesHints;
        volatile int[] stacked;

        Particles(boolean takesHints) {
            this.takesHints = takesHints;
        }

        static float value(long i, int field, long e) {
            return i * 100 + field * 10 + e;
        }

        @Override
        public void willStack(List<String> fields) {
            if (takesHints) {
                stacked = fields.stream().mapToInt(SCHEMA::indexOf).toArray();
            }
        }

        @Override
        public long size() {
            return 90;
        }

        @Override
        public Schema schema() {
            return SCHEMA;
        }

        @Override
        public void read(long i, Row row) {
            row.putLong(0, 0, i);
            int n = (int) (i % 6);
            int[] s = stacked;
            for (int f = 1; f <= 3; f++) {
                final int field = f;
                if (s != null && java.util.Arrays.stream(s).anyMatch(x -> x == field)) {
                    continue;
                }
                float[] v = new float[n];
                for (int e = 0; e < n; e++) {
                    v[e] = value(i, f, e);
                }
                row.append(f, MemorySegment.ofArray(v), 0, 4L * n);
            }
            if (s != null) {
                float[] v = new float[n * s.length];
                for (int e = 0; e < n; e++) {
                    for (int j = 0; j < s.length; j++) {
                        v[e * s.length + j] = value(i, s[j], e);
                    }
                }
                row.appendEntries(s, MemorySegment.ofArray(v), 0, n);
            }
        }
    }

    @Test
    void fieldsHeldEntryByEntryGiveTheSameBatchesAsFieldByFieldInAnyPadding() {
        Padding[] paddings = {
            Padding.of().stack("p", "a", "b", "c").pad("p", 4).lengths(true), // the stack the data is told of: one copy
            Padding.of().stack("p", "c", "a").pad("p", 3).mask(true), // told of, then read into another stack's order
            Padding.of().stack("p", "a", "b").pad("p", 8).value(-2), // a part of the fields
        };
        for (Padding p : paddings) {
            List<String> byField = new ArrayList<>();
            List<String> byEntry = new ArrayList<>();
            Particles told = new Particles(true);
            for (Particles d : new Particles[] {new Particles(false), told}) {
                try (Loader l = Loader.builder(d).padding(p).batchSize(7).workers(2).shuffle().seed(3).build()) {
                    for (Batch b : l) {
                        (d.takesHints ? byEntry : byField).add(Runs.digest(b));
                    }
                }
            }
            assertTrue(told.stacked != null, "the dataset was told of the stack");
            assertEquals(byField, byEntry, p.toString());
        }
        // held as a stack of a, b, c but read into one of a and b, or unpadded: the entries come apart into each field's values
        for (Padding p : new Padding[] {Padding.of().stack("p", "a", "b").pad("p", 3), Padding.of()}) {
            Particles held = new Particles(false);
            held.stacked = new int[] {1, 2, 3};
            List<String> a = new ArrayList<>();
            List<String> b = new ArrayList<>();
            try (Loader l = Loader.builder(new Particles(false)).padding(p).batchSize(5).build();
                 Loader m = Loader.builder(held).padding(p).batchSize(5).build()) {
                l.forEach(x -> a.add(Runs.digest(x)));
                m.forEach(x -> b.add(Runs.digest(x)));
            }
            assertEquals(a, b, p.toString());
        }
    }

    @Test
    void aStackKeepsIntegersExactInAnIntegerType() {
        Padding p = Padding.of().stack("q", "Part_q").pad("q", 5).stackType(DType.INT64).value(-7);
        try (Loader l = events(20, p).batchSize(20).build()) {
            int at = l.schema().indexOf("q");
            assertEquals(Field.tensor("q", DType.INT64, 5, 1), l.schema().field(at));
            Batch b = l.iterator().next();
            for (int r = 0; r < b.size(); r++) {
                long i = b.data(0).getAtIndex(I64, r);
                for (int j = 0; j < 5; j++) {
                    assertEquals(j < particles(i) ? partQ(i, j) : -7L, b.data(at).getAtIndex(I64, r * 5L + j));
                }
            }
        }
    }

    @Test
    void aStackOfUnequalLengthsFailsNamingTheSampleAndFields() {
        Padding p = Padding.of().stack("particles", "Part_px", "Part_py").pad("particles", 8);
        try (Loader l = Loader.builder(new Events(30, 13)).padding(p).batchSize(4).workers(2).build()) {
            LoaderException e = assertThrows(LoaderException.class, () -> l.forEach(b -> { }));
            assertEquals(13, e.index());
            String m = e.getMessage();
            assertTrue(m.contains("sample 13") && m.contains("stack 'particles'") && m.contains("'Part_px' has 3 values")
                    && m.contains("'Part_py' 2"), m);
        }
        // under skip-sample it is left out and counted, and the others come through
        try (Loader l = Loader.builder(new Events(30, 13)).padding(p).batchSize(4).errorPolicy(ErrorPolicy.SKIP_SAMPLE)
                .build()) {
            long rows = 0;
            for (Batch b : l) {
                rows += b.size();
            }
            assertEquals(29, rows);
            assertEquals(1, l.stats().skipped());
        }
    }

    @Test
    void anyWorkerCountGivesTheSameBatches() {
        Padding p = Padding.of().pad("Jet_pt", 3).stack("particles", "Part_px", "Part_py").pad("particles", 2).mask(true);
        List<String> first = null;
        for (int workers : new int[] {0, 1, 3}) {
            try (Loader l = events(101, p).batchSize(7).workers(workers).shuffle().seed(5).build()) {
                List<String> digests = new ArrayList<>();
                for (Batch b : l) {
                    digests.add(Runs.digest(b));
                }
                if (first == null) {
                    first = digests;
                } else {
                    assertEquals(first, digests, workers + " workers");
                }
            }
        }
    }

    @Test
    void aResumedLoaderContinuesWithTheSamePaddedBatches() {
        Padding p = Padding.of().pad("Jet_*", 2).lengths(true);
        List<String> whole = new ArrayList<>();
        try (Loader l = events(60, p).batchSize(6).workers(2).shuffle().build()) {
            for (Batch b : l) {
                whole.add(Runs.digest(b));
            }
        }
        String saved;
        try (Loader l = events(60, p).batchSize(6).workers(2).shuffle().build()) {
            Iterator<Batch> it = l.iterator();
            for (int k = 0; k < 4; k++) {
                it.next();
            }
            saved = l.state().toJson();
        }
        List<String> rest = new ArrayList<>();
        try (Loader l = events(60, p).batchSize(6).workers(3).shuffle().resume(LoaderState.fromJson(saved)).build()) {
            for (Batch b : l) {
                rest.add(Runs.digest(b));
            }
        }
        assertEquals(whole.subList(4, whole.size()), rest);
    }

    @Test
    void aPaddedBufferReusedHoldsNoEarlierBatchsValues() {
        // one buffer, no workers: each batch is written over the last; short samples must show pad values only
        Padding p = Padding.of().pad("Jet_pt", 6).value(9);
        try (Loader l = events(70, p).batchSize(7).build()) {
            for (Batch b : l) {
                for (int r = 0; r < b.size(); r++) {
                    long i = b.data(0).getAtIndex(I64, r);
                    for (int j = jets(i); j < 6; j++) {
                        assertEquals(9f, b.data(1).getAtIndex(F32, r * 6L + j));
                    }
                }
            }
        }
    }

    @Test
    void objectsCollatedThroughACollatorArePaddedToo() {
        Schema schema = Schema.of(Field.ragged("hits", DType.INT32, 16));
        Collator<int[]> c = new Collator<>() {
            @Override
            public Schema schema() {
                return schema;
            }

            @Override
            public void write(int[] sample, Row row) {
                row.append(0, MemorySegment.ofArray(sample), 0, 4L * sample.length);
            }
        };
        Dataset<int[]> data = new Dataset<>() {
            @Override
            public long size() {
                return 4;
            }

            @Override
            public int[] get(long index) {
                int[] v = new int[(int) index * 2];
                java.util.Arrays.fill(v, (int) index);
                return v;
            }
        };
        try (Loader l = Loader.builder(data, c).padding(Padding.of().pad("hits", 4).lengths(true)).batchSize(4).build()) {
            Batch b = l.iterator().next();
            int[] hits = b.data(0).asSlice(0, 4L * 16).toArray(ValueLayout.JAVA_INT);
            assertArrayEquals(new int[] {0, 0, 0, 0, 1, 1, 0, 0, 2, 2, 2, 2, 3, 3, 3, 3}, hits);
            assertArrayEquals(new long[] {0, 2, 4, 4}, b.data(1).asSlice(0, 32).toArray(ValueLayout.JAVA_LONG));
            assertEquals(1, l.stats().truncatedSamples());
            assertEquals(2, l.stats().droppedValues());
        }
    }

    @Test
    void paddingThatDoesNotFitTheFieldsIsRefusedNamingIt() {
        DirectDataset d = new Events(10, -1);
        String m = assertThrows(IllegalArgumentException.class,
                () -> Loader.builder(d).padding(Padding.of().pad("Muon_*", 4))).getMessage();
        assertTrue(m.contains("pad 'Muon_*' names no ragged field") && m.contains("Jet_pt, Jet_eta"), m);
        m = assertThrows(IllegalArgumentException.class,
                () -> Loader.builder(d).padding(Padding.of().stack("s", "Jet_pt", "id").pad("s", 4))).getMessage();
        assertTrue(m.contains("field 'id'") && m.contains("not a ragged list"), m);
        m = assertThrows(IllegalArgumentException.class,
                () -> Loader.builder(d).padding(Padding.of().stack("s", "Jet_pt", "Jet_eta"))).getMessage();
        assertTrue(m.contains("stack 's' needs a length"), m);
        m = assertThrows(IllegalArgumentException.class,
                () -> Loader.builder(d).padding(Padding.of().stack("name", "Jet_pt").pad("name", 2))).getMessage();
        assertTrue(m.contains("two fields named 'name'"), m);
        m = assertThrows(IllegalArgumentException.class,
                () -> Loader.builder(d).padding(Padding.of().stack("a", "Jet_pt").stack("b", "Jet_pt").pad("?", 2))).getMessage();
        assertTrue(m.contains("'Jet_pt' is in two stacks"), m);
        assertThrows(IllegalArgumentException.class, () -> Padding.of().pad("x", 0));
    }

    @Test
    void globsMatchWholeNamesAndTheFirstGlobCounts() {
        assertTrue(Padding.matches("Jet_*", "Jet_pt"));
        assertTrue(!Padding.matches("Jet_*", "FatJet_pt"));
        assertTrue(Padding.matches("Jet_p?", "Jet_pt"));
        assertTrue(Padding.matches("a.b", "a.b") && !Padding.matches("a.b", "axb"));
        assertEquals(2, Padding.of().pad("Jet_pt", 2).pad("Jet_*", 9).lengthOf("Jet_pt"));
        assertEquals(9, Padding.of().pad("Jet_pt", 2).pad("Jet_*", 9).lengthOf("Jet_eta"));
    }

    @Test
    void theBatchBufferIsSizedForThePaddedSchema() {
        Padding p = Padding.of().pad("Jet_*", 100).mask(true);
        LoaderBuilder b = events(10, p).batchSize(4);
        assertEquals(Field.tensor("Jet_pt", DType.FLOAT32, 100), b.schema().field(1));
        try (Arena unused = Arena.ofConfined(); Loader l = b.build()) {
            assertEquals(b.schema(), l.schema());
            Batch first = l.iterator().next();
            assertTrue(first.data(1).byteSize() >= 4 * 100 * 4);
        }
    }

    @Test
    void aStreamsSamplesArePaddedAsTheCollatorWritesThem() {
        Schema schema = Schema.of(Field.scalar("v", DType.INT64), Field.ragged("hits", DType.INT16, 8));
        Collator<Long> c = new Collator<>() {
            @Override
            public Schema schema() {
                return schema;
            }

            @Override
            public void write(Long v, Row row) {
                row.putLong(0, 0, v);
                for (int j = 0; j < (v & 0xfffff) % 6; j++) {
                    row.append(1, MemorySegment.ofArray(new short[] {(short) (v + j)}), 0, 2);
                }
            }
        };
        Padding p = Padding.of().pad("hits", 3).mask(true).value(7);
        List<String> first = null;
        for (int workers : new int[] {0, 2}) {
            LoaderBuilder b = Loader.builder(new StreamingTest.Shards(9, 4, -1, -1), c).padding(p).batchSize(5).shuffle()
                    .shuffleWindow(16);
            if (workers > 0) {
                b.workers(workers);
            }
            List<String> digests = new ArrayList<>();
            long rows = 0;
            try (Loader l = b.build()) {
                assertEquals(Field.tensor("hits", DType.INT16, 3), l.schema().field(1));
                for (Batch batch : l) {
                    for (int r = 0; r < batch.size(); r++, rows++) {
                        long v = batch.data(0).getAtIndex(I64, r);
                        long n = (v & 0xfffff) % 6;
                        for (int j = 0; j < 3; j++) {
                            short got = batch.data(1).getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 3L * r + j);
                            assertEquals(j < n ? (short) (v + j) : (short) 7, got, "sample " + v + ", entry " + j);
                            assertEquals(j < n ? 1 : 0, batch.data(2).get(ValueLayout.JAVA_BYTE, 3L * r + j));
                        }
                    }
                    digests.add(Runs.digest(batch));
                }
            }
            assertTrue(rows > 0);
            if (first == null) {
                first = digests;
            } else {
                assertEquals(first, digests, workers + " workers");
            }
        }
    }
}
