package dev.stoker.root;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.CorruptShardException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.function.Executable;

/**
 * Truncated, bit-flipped and lying RNTuple files (real fixtures, altered here) fail with one line
 * naming the file and where; well-formed layouts the fixtures lack (several pages a column in a
 * cluster, uncompressed envelopes) read back to the same values.
 */
class RNTupleCorruptionTest {
    @TempDir
    Path tmp;

    static final String INT_FLOAT = "test_int_float_rntuple_v1-0-0-0.root";
    static final String JAGGED = "test_1jag_int_float_rntuple_v1-0-0-0.root";

    static Path fixture(String name) {
        return RNTupleTableTest.file(name);
    }

    /** Opens {@code p}'s table and reads every column whole. */
    static void readAll(Path p, String table) throws IOException {
        try (RootFile f = RootFile.open(p.toString()); RootTable t = f.table(table)) {
            for (RootColumn c : t.columns()) {
                t.read(c, 0, t.entries());
            }
        }
    }

    /** Fails with an IOException of one line that names the file and contains each of {@code parts}. */
    static IOException fails(Path p, Executable e, String... parts) {
        IOException x = assertThrows(IOException.class, e);
        String m = x.getMessage();
        assertFalse(m.contains("\n"), m);
        assertTrue(m.contains(p.toString()), m);
        for (String s : parts) {
            assertTrue(m.contains(s), "expected '" + s + "' in: " + m);
        }
        return x;
    }

    static int[] ints(Path p, String table, String column, long from, long to) throws IOException {
        try (RootFile f = RootFile.open(p.toString()); RootTable t = f.table(table)) {
            return RNTupleTableTest.ints(t.read(RNTupleTableTest.column(t, column), from, to).values());
        }
    }

    static RntClusters.Cluster withPages(RntClusters.Cluster c, int column, RntClusters.Page... pages) {
        RntClusters.ColumnPages[] cols = c.columns().clone();
        RntClusters.ColumnPages old = cols[column];
        cols[column] = new RntClusters.ColumnPages(old.elementOffset(), old.suppressed(), 0, pages);
        return new RntClusters.Cluster(c.firstEntry(), c.entries(), cols);
    }

    static byte[] splitInt32(long... v) {
        long[] z = new long[v.length];
        for (int i = 0; i < v.length; i++) {
            z[i] = RntEncodingTest.zigzag(v[i]) & 0xFFFFFFFFL;
        }
        return RntEncodingTest.split(z, 4);
    }

    /** A SplitIndex64 page: delta within the page, the first element as it is. */
    static byte[] splitIndex64(long... offsets) {
        long[] d = new long[offsets.length];
        for (int i = 0; i < offsets.length; i++) {
            d[i] = offsets[i] - (i == 0 ? 0 : offsets[i - 1]);
        }
        return RntEncodingTest.split(d, 8);
    }

    @Test
    void rewrittenUncompressedEnvelopesReadTheSame() throws IOException {
        Path p = RntRewriter.of(fixture(INT_FLOAT), "ntuple").write(tmp.resolve("same.root"));
        assertArrayEquals(new int[] {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}, ints(p, "ntuple", "one_integers", 0, 10));
    }

    @Test
    void severalPagesAColumnInAClusterReadInOrder() throws IOException {
        RntRewriter r = RntRewriter.of(fixture(INT_FLOAT), "ntuple");
        RntClusters.Cluster c = r.lists.get(0).get(0);
        c = withPages(c, 0, r.appendPage(3, splitInt32(9, 8, 7)), r.appendPage(4, splitInt32(6, 5, 4, 3)),
                r.appendPage(3, splitInt32(2, 1, 0)));
        r.lists.get(0).set(0, c);
        Path p = r.write(tmp.resolve("pages.root"));
        assertArrayEquals(new int[] {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}, ints(p, "ntuple", "one_integers", 0, 10));
        assertArrayEquals(new int[] {6, 5, 4, 3, 2}, ints(p, "ntuple", "one_integers", 3, 8));
        assertArrayEquals(new int[] {7}, ints(p, "ntuple", "one_integers", 2, 3));
    }

    @Test
    void indexPagesAreDeltaDecodedPageByPage() throws IOException {
        long[] offsets;
        int[] values;
        try (RootFile f = RootFile.open(fixture(JAGGED).toString()); RootTable t = f.table("ntuple")) {
            ColumnData d = t.read(RNTupleTableTest.column(t, "one_v_integers"), 0, 100);
            offsets = Arrays.copyOfRange(d.offsets(), 1, 101);
            values = RNTupleTableTest.ints(d.values());
        }
        RntRewriter r = RntRewriter.of(fixture(JAGGED), "ntuple");
        int index = r.schema.fields.stream().filter(x -> x.name().equals("one_v_integers")).findFirst().orElseThrow().id();
        int col = r.schema.columns.stream().filter(x -> x.field() == index).findFirst().orElseThrow().id();
        assertEquals(RntEncoding.SPLIT_INDEX64, r.schema.columns.get(col).type());
        RntClusters.Cluster c = withPages(r.lists.get(0).get(0), col,
                r.appendPage(40, splitIndex64(Arrays.copyOfRange(offsets, 0, 40))),
                r.appendPage(60, splitIndex64(Arrays.copyOfRange(offsets, 40, 100))));
        long[] v = new long[values.length];
        for (int i = 0; i < v.length; i++) {
            v[i] = values[i];
        }
        c = withPages(c, col + 1, r.appendPage(200, splitInt32(Arrays.copyOfRange(v, 0, 200))),
                r.appendPage(values.length - 200, splitInt32(Arrays.copyOfRange(v, 200, values.length))));
        r.lists.get(0).set(0, c);
        Path p = r.write(tmp.resolve("index.root"));
        try (RootFile f = RootFile.open(p.toString()); RootTable t = f.table("ntuple")) {
            ColumnData d = t.read(RNTupleTableTest.column(t, "one_v_integers"), 0, 100);
            assertArrayEquals(offsets, Arrays.copyOfRange(d.offsets(), 1, 101));
            assertArrayEquals(values, RNTupleTableTest.ints(d.values()));
            ColumnData mid = t.read(RNTupleTableTest.column(t, "one_v_integers"), 38, 42);
            assertEquals(offsets[41] - offsets[37], mid.offsets()[4]);
            assertArrayEquals(Arrays.copyOfRange(values, (int) offsets[37], (int) offsets[41]),
                    RNTupleTableTest.ints(mid.values()));
        }
    }

    /** A field record: versions 0, its parent, role, flags, name, type, no alias or description, then its array size. */
    static RntRewriter.Out field(int parent, int role, int flags, String name, String type, long arraySize) {
        RntRewriter.Out f = new RntRewriter.Out();
        f.i32(0);
        f.i32(0);
        f.i32(parent);
        f.i16(role);
        f.i16(flags);
        f.string(name);
        f.string(type);
        f.string("");
        f.string("");
        if ((flags & 1) != 0) {
            f.i64(arraySize);
        }
        return f;
    }

    @Test
    void aFixedSizeArrayAddedInTheSchemaExtensionReadsNAnEntry() throws IOException {
        RntRewriter r = RntRewriter.of(fixture(INT_FLOAT), "ntuple");
        assertEquals(2, r.schema.fields.size());
        RntRewriter.Out fields = new RntRewriter.Out();
        fields.record(field(2, RntSchema.ROLE_LEAF, 0x01, "xyz", "std::array<float,3>", 3));
        fields.record(field(2, RntSchema.ROLE_LEAF, 0, "_0", "float", 0));
        RntRewriter.Out columns = new RntRewriter.Out();
        RntRewriter.Out col = new RntRewriter.Out();
        col.i16(RntEncoding.SPLIT_REAL32);
        col.i16(32);
        col.i32(3);
        col.i16(0);
        col.i16(0);
        columns.record(col);
        RntRewriter.Out ext = new RntRewriter.Out();
        ext.list(fields, 2);
        ext.list(columns, 1);
        ext.list(new RntRewriter.Out(), 0);
        ext.list(new RntRewriter.Out(), 0);
        RntRewriter.Out frame = new RntRewriter.Out();
        frame.record(ext);
        r.extension = frame.toByteArray();
        long[] bits = new long[30];
        for (int e = 0; e < 10; e++) {
            float[] xyz = {e, e + 0.5f, -e};
            for (int k = 0; k < 3; k++) {
                bits[3 * e + k] = Float.floatToRawIntBits(xyz[k]) & 0xFFFFFFFFL;
            }
        }
        RntClusters.Cluster c = r.lists.get(0).get(0);
        RntClusters.ColumnPages[] cols = Arrays.copyOf(c.columns(), 3);
        cols[2] = new RntClusters.ColumnPages(0, false, 0, new RntClusters.Page[] {
            r.appendPage(12, RntEncodingTest.split(Arrays.copyOfRange(bits, 0, 12), 4)),
            r.appendPage(18, RntEncodingTest.split(Arrays.copyOfRange(bits, 12, 30), 4))});
        r.lists.get(0).set(0, new RntClusters.Cluster(0, 10, cols));
        Path p = r.write(tmp.resolve("array.root"));
        try (RootFile f = RootFile.open(p.toString()); RootTable t = f.table("ntuple")) {
            RootColumn xyz = RNTupleTableTest.column(t, "xyz");
            assertEquals(new RootColumn("xyz", dev.stoker.DType.FLOAT32, 3, false, "std::array<float,3>"), xyz);
            ColumnData d = t.read(xyz, 3, 6);
            assertArrayEquals(new float[] {3, 3.5f, -3, 4, 4.5f, -4, 5, 5.5f, -5}, RNTupleTableTest.floats(d.values()));
            assertArrayEquals(new int[] {9, 8, 7, 6, 5, 4, 3, 2, 1, 0},
                    RNTupleTableTest.ints(t.read(RNTupleTableTest.column(t, "one_integers"), 0, 10).values()));
        }
    }

    static RntRewriter.Out columnRecord(int type, int bits, int field, int representation) {
        RntRewriter.Out c = new RntRewriter.Out();
        c.i16(type);
        c.i16(bits);
        c.i32(field);
        c.i16(0);
        c.i16(representation);
        return c;
    }

    @Test
    void bitsDouble32Int64AndASuppressedRepresentationRead() throws IOException {
        RntRewriter r = RntRewriter.of(fixture(INT_FLOAT), "ntuple");
        RntRewriter.Out fields = new RntRewriter.Out();
        fields.record(field(2, RntSchema.ROLE_LEAF, 0, "flag", "bool", 0));
        fields.record(field(3, RntSchema.ROLE_LEAF, 0, "d32", "double", 0));
        fields.record(field(4, RntSchema.ROLE_LEAF, 0, "big", "std::int64_t", 0));
        fields.record(field(5, RntSchema.ROLE_LEAF, 0, "two", "float", 0));
        RntRewriter.Out columns = new RntRewriter.Out();
        columns.record(columnRecord(RntEncoding.BIT, 1, 2, 0));
        columns.record(columnRecord(RntEncoding.SPLIT_REAL32, 32, 3, 0));
        columns.record(columnRecord(RntEncoding.SPLIT_INT64, 64, 4, 0));
        columns.record(columnRecord(RntEncoding.REAL32, 32, 5, 0));
        columns.record(columnRecord(RntEncoding.SPLIT_REAL32, 32, 5, 1));
        RntRewriter.Out ext = new RntRewriter.Out();
        ext.list(fields, 4);
        ext.list(columns, 5);
        ext.list(new RntRewriter.Out(), 0);
        ext.list(new RntRewriter.Out(), 0);
        RntRewriter.Out frame = new RntRewriter.Out();
        frame.record(ext);
        r.extension = frame.toByteArray();
        long[] flag = new long[10];
        long[] d32 = new long[10];
        long[] big = new long[10];
        long[] two = new long[10];
        for (int e = 0; e < 10; e++) {
            flag[e] = e % 3 == 0 ? 1 : 0;
            d32[e] = Float.floatToRawIntBits(e * 0.25f) & 0xFFFFFFFFL;
            big[e] = RntEncodingTest.zigzag((e - 5) * 1_000_000_000_000L);
            two[e] = Float.floatToRawIntBits(e + 0.125f) & 0xFFFFFFFFL;
        }
        RntClusters.Cluster c = r.lists.get(0).get(0);
        RntClusters.ColumnPages[] cols = Arrays.copyOf(c.columns(), 7);
        cols[2] = new RntClusters.ColumnPages(0, false, 0,
                new RntClusters.Page[] {r.appendPage(10, RntEncodingTest.pack(flag, 1))});
        cols[3] = new RntClusters.ColumnPages(0, false, 0,
                new RntClusters.Page[] {r.appendPage(10, RntEncodingTest.split(d32, 4))});
        cols[4] = new RntClusters.ColumnPages(0, false, 0,
                new RntClusters.Page[] {r.appendPage(10, RntEncodingTest.split(big, 8))});
        cols[5] = new RntClusters.ColumnPages(0, true, 0, new RntClusters.Page[0]);
        cols[6] = new RntClusters.ColumnPages(0, false, 0,
                new RntClusters.Page[] {r.appendPage(10, RntEncodingTest.split(two, 4))});
        r.lists.get(0).set(0, new RntClusters.Cluster(0, 10, cols));
        Path p = r.write(tmp.resolve("types.root"));
        try (RootFile f = RootFile.open(p.toString()); RootTable t = f.table("ntuple")) {
            assertEquals(List.of("one_integers", "two_floats", "flag", "d32", "big", "two"),
                    t.columns().stream().map(RootColumn::name).toList());
            ColumnData fl = t.read(RNTupleTableTest.column(t, "flag"), 0, 10);
            ColumnData dd = t.read(RNTupleTableTest.column(t, "d32"), 0, 10);
            ColumnData bg = t.read(RNTupleTableTest.column(t, "big"), 0, 10);
            ColumnData tw = t.read(RNTupleTableTest.column(t, "two"), 0, 10);
            assertEquals(dev.stoker.DType.FLOAT64, RNTupleTableTest.column(t, "d32").dtype());
            for (int e = 0; e < 10; e++) {
                assertEquals(e % 3 == 0 ? 1 : 0, fl.values().get(java.lang.foreign.ValueLayout.JAVA_BYTE, e));
                assertEquals(e * 0.25, dd.values().getAtIndex(java.lang.foreign.ValueLayout.JAVA_DOUBLE_UNALIGNED, e));
                assertEquals((e - 5) * 1_000_000_000_000L,
                        bg.values().getAtIndex(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, e));
                assertEquals(e + 0.125f, tw.values().getAtIndex(java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED, e));
            }
        }
    }

    @Test
    void aHundredMillionEntriesDeclaredInAFewBytesAreRefusedBeforeAllocating() throws IOException {
        RntRewriter r = RntRewriter.of(fixture(INT_FLOAT), "ntuple");
        RntClusters.Cluster c = r.lists.get(0).get(0);
        RntClusters.ColumnPages[] cols = c.columns().clone();
        for (int j = 0; j < cols.length; j++) {
            RntClusters.Page pg = cols[j].pages()[0];
            cols[j] = new RntClusters.ColumnPages(0, false, cols[j].compression(),
                    new RntClusters.Page[] {new RntClusters.Page(100_000_000, true, pg.size(), pg.offset())});
        }
        r.lists.get(0).set(0, new RntClusters.Cluster(0, 100_000_000, cols));
        Path p = r.write(tmp.resolve("bomb.root"));
        assertTrue(Files.size(p) < 3000);
        fails(p, () -> readAll(p, "ntuple"), "100000000 elements of 32 bits", "page of 40 bytes");
    }

    @Test
    void aClusterClaimingMoreEntriesThanItsPagesHoldFails() throws IOException {
        RntRewriter r = RntRewriter.of(fixture(INT_FLOAT), "ntuple");
        RntClusters.Cluster c = r.lists.get(0).get(0);
        r.lists.get(0).set(0, new RntClusters.Cluster(0, 11, c.columns()));
        Path p = r.write(tmp.resolve("entries.root"));
        fails(p, () -> readAll(p, "ntuple"), "11 entries", "holds 10 elements");
    }

    @Test
    void aPageLyingAboutItsSizeFails() throws IOException {
        RntRewriter r = RntRewriter.of(fixture(INT_FLOAT), "ntuple");
        RntClusters.Page pg = r.lists.get(0).get(0).columns()[0].pages()[0];
        r.lists.get(0).set(0, withPages(r.lists.get(0).get(0), 0,
                new RntClusters.Page(pg.elements(), true, 1 << 20, pg.offset())));
        Path big = r.write(tmp.resolve("big.root"));
        fails(big, () -> readAll(big, "ntuple"), "lies outside the file");

        RntRewriter s = RntRewriter.of(fixture(INT_FLOAT), "ntuple");
        s.lists.get(0).set(0, withPages(s.lists.get(0).get(0), 0,
                new RntClusters.Page(pg.elements(), false, pg.size() - 1, pg.offset())));
        Path small = s.write(tmp.resolve("small.root"));
        fails(small, () -> readAll(small, "ntuple"), "one_integers");

        RntRewriter n = RntRewriter.of(fixture(INT_FLOAT), "ntuple");
        n.lists.get(0).set(0, withPages(n.lists.get(0).get(0), 0,
                new RntClusters.Page(pg.elements(), true, pg.size(), n.original.length + 1L << 33)));
        Path far = n.write(tmp.resolve("far.root"));
        fails(far, () -> readAll(far, "ntuple"), "lies outside the file");
    }

    @Test
    void vectorOffsetsThatDecreaseOrOverrunTheirValuesFail() throws IOException {
        RntRewriter r = RntRewriter.of(fixture(JAGGED), "ntuple");
        long[] offsets = new long[100];
        for (int i = 0; i < 100; i++) {
            offsets[i] = i < 50 ? i : 10;
        }
        r.lists.get(0).set(0, withPages(r.lists.get(0).get(0), 0, r.appendPage(100, splitIndex64(offsets))));
        Path down = r.write(tmp.resolve("down.root"));
        fails(down, () -> readAll(down, "ntuple"), "offsets decrease at entry 50");

        RntRewriter s = RntRewriter.of(fixture(JAGGED), "ntuple");
        long[] over = new long[100];
        for (int i = 0; i < 100; i++) {
            over[i] = 1000L * i;
        }
        s.lists.get(0).set(0, withPages(s.lists.get(0).get(0), 0, s.appendPage(100, splitIndex64(over))));
        Path past = s.write(tmp.resolve("past.root"));
        fails(past, () -> readAll(past, "ntuple"), "needs 99000 elements", "its pages hold 450");
    }

    /** A copy of {@code src} with the byte at {@code at} inverted. */
    Path flipped(Path src, long at, String name) throws IOException {
        byte[] b = Files.readAllBytes(src);
        b[(int) at] ^= (byte) 0xFF;
        return Files.write(tmp.resolve(name), b);
    }

    @Test
    void aFlippedEnvelopeByteFailsItsChecksumNamingItsOffset() throws IOException {
        Path uncompressed = fixture("rntviewer-testfile-uncomp-single-rntuple-v1-0-0-0.root");
        RntRewriter r = RntRewriter.of(uncompressed, "Contributors");
        Path p = flipped(uncompressed, r.seekHeader + 30, "header.root");
        fails(p, () -> readAll(p, "Contributors"), "header", "does not match the envelope's XXH3",
                "(at byte " + r.seekHeader + ")");

        RntRewriter s = RntRewriter.of(fixture(INT_FLOAT), "ntuple");
        Path w = s.write(tmp.resolve("rewritten.root"));
        long pageList = s.original.length;
        Path q = flipped(w, pageList + 20, "pagelist.root");
        fails(q, () -> readAll(q, "ntuple"), "page list 0", "does not match", "(at byte " + pageList + ")");
    }

    @Test
    void aFlippedAnchorByteFailsItsChecksum() throws IOException {
        RntRewriter r = RntRewriter.of(fixture(INT_FLOAT), "ntuple");
        Path p = flipped(fixture(INT_FLOAT), r.anchorAt + 20, "anchor.root");
        fails(p, () -> readAll(p, "ntuple"), "anchor checksum");
    }

    @Test
    void anAnchorOfAnotherEpochOrWithBlobsSplitOverKeysIsRefusedByName() throws IOException {
        RntRewriter r = RntRewriter.of(fixture(INT_FLOAT), "ntuple");
        byte[] b = r.original.clone();
        ByteBuffer a = ByteBuffer.wrap(b).order(ByteOrder.BIG_ENDIAN);
        a.putShort((int) r.anchorAt, (short) 0);
        Path old = Files.write(tmp.resolve("epoch0.root"), b);
        fails(old, () -> readAll(old, "ntuple"), "format version 0.", "Stoker reads RNTuple 1.x");

        byte[] c = r.original.clone();
        ByteBuffer k = ByteBuffer.wrap(c).order(ByteOrder.BIG_ENDIAN);
        k.putLong((int) r.anchorAt + 56, 30);
        k.putLong((int) r.anchorAt + 64, Xxh3.hash(k, (int) r.anchorAt, 64));
        Path split = Files.write(tmp.resolve("split.root"), c);
        fails(split, () -> readAll(split, "ntuple"), "over the 30 bytes of a key");
    }

    @Test
    void aFlippedPageByteFailsItsChecksumNamingThePage() throws IOException {
        RntRewriter r = RntRewriter.of(fixture(INT_FLOAT), "ntuple");
        RntClusters.Page pg = r.lists.get(0).get(0).columns()[1].pages()[0];
        Path p = flipped(fixture(INT_FLOAT), pg.offset() + 5, "page.root");
        try (RootFile f = RootFile.open(p.toString()); RootTable t = f.table("ntuple")) {
            t.read(RNTupleTableTest.column(t, "one_integers"), 0, 10);
            fails(p, () -> t.read(RNTupleTableTest.column(t, "two_floats"), 0, 10), "field 'two_floats' cluster 0 page 0",
                    "does not match the page's XXH3", "(at byte " + pg.offset() + ")");
        }
    }

    @Test
    void anyChangedByteReadsOrFailsWithOneLine() throws IOException {
        java.util.Random rnd = new java.util.Random(53);
        for (String name : List.of(INT_FLOAT, JAGGED, "test_multiple_cluster_groups_rntuple_v1-0-0-0.root",
                "test_float_types_rntuple_v1-0-0-0.root", "rntviewer-testfile-uncomp-single-rntuple-v1-0-0-0.root")) {
            String table = name.startsWith("rntviewer") ? "Contributors" : "ntuple";
            byte[] b = Files.readAllBytes(fixture(name));
            Path p = tmp.resolve("changed-" + name);
            for (int i = 0; i < 150; i++) {
                byte[] c = b.clone();
                int at = rnd.nextInt(c.length);
                c[at] = (byte) (rnd.nextBoolean() ? c[at] ^ (1 << rnd.nextInt(8)) : rnd.nextInt(256));
                Files.write(p, c);
                try {
                    readAll(p, table);
                } catch (IOException | IllegalArgumentException e) { // IllegalArgumentException: a key's name changed
                    assertFalse(e.getMessage().contains("\n"), e.getMessage());
                    assertTrue(e.getMessage().contains(p.toString()), name + " byte " + at + ": " + e.getMessage());
                } catch (RuntimeException e) {
                    throw new AssertionError(name + " byte " + at + " changed: " + e, e);
                }
            }
        }
    }

    @Test
    void everyTruncationFailsWithOneLine() throws IOException {
        for (String name : List.of(INT_FLOAT, JAGGED, "rntviewer-testfile-uncomp-single-rntuple-v1-0-0-0.root")) {
            byte[] b = Files.readAllBytes(fixture(name));
            List<Integer> cuts = new ArrayList<>(List.of(0, 3, 100, b.length / 2, b.length - 200, b.length - 1));
            for (int cut : cuts) {
                Path p = Files.write(tmp.resolve("cut-" + cut + "-" + name), Arrays.copyOf(b, cut));
                fails(p, () -> readAll(p, name.startsWith("rntviewer") ? "Contributors" : "ntuple"));
            }
        }
    }

    @Test
    void anEnvelopeOfTheWrongTypeIsRefused() throws IOException {
        RntRewriter r = RntRewriter.of(fixture(INT_FLOAT), "ntuple");
        Path p = r.write(tmp.resolve("type.root"));
        byte[] b = Files.readAllBytes(p);
        long footer = ByteBuffer.wrap(b).order(ByteOrder.BIG_ENDIAN).getLong((int) r.anchorAt + 32);
        // make the footer claim to be a page list (type 3), checksum recomputed
        ByteBuffer env = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
        int len = (int) (env.getLong((int) footer) >>> 16);
        env.putShort((int) footer, (short) 3);
        env.putLong((int) footer + len - 8, Xxh3.hash(env, (int) footer, len - 8));
        Path q = Files.write(tmp.resolve("type2.root"), b);
        CorruptShardException e = (CorruptShardException) fails(q, () -> readAll(q, "ntuple"), "envelope type 3",
                "expected type 2");
        assertEquals(footer, e.offset());
    }
}
