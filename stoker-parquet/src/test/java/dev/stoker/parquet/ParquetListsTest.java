package dev.stoker.parquet;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.Batch;
import dev.stoker.DType;
import dev.stoker.Field;
import dev.stoker.Loader;
import dev.stoker.LoaderException;
import dev.stoker.Padding;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.BitSet;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Lists of numbers, against the file DuckDB wrote (src/test/fixtures/MakeListFixtures.java, which
 * gives every value as a function of the row number i): 5,000 rows in row groups of 2,048.
 */
@Timeout(60)
class ParquetListsTest {
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final int ROWS = 5000;

    static Path fixture() {
        Path p = Path.of("src/test/resources/parquet/lists.parquet");
        assertTrue(Files.isRegularFile(p), p + " is missing");
        return p;
    }

    static ParquetDataset open(String... columns) throws IOException {
        return ParquetDataset.open(fixture().toString(), ParquetDataset.Options.of().withColumns(List.of(columns)));
    }

    @Test
    void listColumnsAreRaggedFieldsOfTheirElementsType() throws IOException {
        try (ParquetDataset d = open("id", "jet_pt", "part_px", "part_q", "hits")) {
            List<Field> f = d.schema().fields();
            assertEquals(Field.scalar("id", DType.INT64), f.get(0));
            assertTrue(f.get(1).isRagged() && f.get(1).dtype() == DType.FLOAT32, f.get(1).toString());
            assertTrue(f.get(2).isRagged() && f.get(2).dtype() == DType.FLOAT64, f.get(2).toString());
            assertTrue(f.get(3).isRagged() && f.get(3).dtype() == DType.INT32, f.get(3).toString());
            assertTrue(f.get(4).isRagged() && f.get(4).dtype() == DType.INT64, f.get(4).toString());
        }
    }

    @Test
    void everyRowsListHoldsItsValuesInAnyOrder() throws IOException {
        try (ParquetDataset d = open("id", "jet_pt", "part_px", "part_q", "hits");
             Loader l = Loader.builder(d).batchSize(64).workers(3).shuffle().seed(3).build()) {
            BitSet seen = new BitSet(ROWS);
            for (Batch b : l) {
                for (int r = 0; r < b.size(); r++) {
                    long i = b.data(0).getAtIndex(I64, r);
                    assertEquals(b.index(r), i);
                    seen.set((int) i);
                    MemorySegment pt = b.bytes(1, r);
                    assertEquals(4L * (i % 7), pt.byteSize(), "jet_pt of row " + i);
                    for (int j = 0; j < i % 7; j++) {
                        assertEquals(i * 10 + j, pt.getAtIndex(F32, j));
                    }
                    MemorySegment px = b.bytes(2, r);
                    assertEquals(8L * (i % 5), px.byteSize());
                    for (int j = 0; j < i % 5; j++) {
                        assertEquals(i + j / 4.0, px.getAtIndex(F64, j));
                        assertEquals((i * 3 + j) % 5 - 2, b.bytes(3, r).getAtIndex(I32, j));
                    }
                    MemorySegment hits = b.bytes(4, r);
                    long n = i % 13 == 0 ? 0 : i % 3; // a null list reads as an empty one
                    assertEquals(8 * n, hits.byteSize(), "hits of row " + i);
                    for (int j = 0; j < n; j++) {
                        assertEquals(i + j, hits.getAtIndex(I64, j));
                    }
                }
            }
            assertEquals(ROWS, seen.cardinality());
        }
    }

    @Test
    void aNullInAFloatListIsNaN() throws IOException {
        try (ParquetDataset d = open("id", "gaps"); Loader l = Loader.builder(d).batchSize(100).build()) {
            for (Batch b : l) {
                for (int r = 0; r < b.size(); r++) {
                    long i = b.data(0).getAtIndex(I64, r);
                    float[] v = b.bytes(1, r).toArray(F32);
                    assertArrayEquals(i % 17 == 0 ? new float[] {Float.NaN, i} : new float[] {i}, v, "row " + i);
                }
            }
        }
    }

    @Test
    void aNullInAnIntegerListFailsNamingTheColumnAndRow() throws IOException {
        try (ParquetDataset d = open("bad_q"); Loader l = Loader.builder(d).batchSize(100).build()) {
            LoaderException e = assertThrows(LoaderException.class, () -> l.forEach(b -> { }));
            String m = e.getMessage();
            assertTrue(m.contains("lists.parquet") && m.contains("'bad_q'") && m.contains("row group 2")
                    && m.contains("row 225") && m.contains("a null inside a list"), m);
        }
    }

    @Test
    void aListOfStringsIsRefusedNamingIt() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> open("id", "tags"));
        assertTrue(e.getMessage().contains("column 'tags' is a list of string") && e.getMessage().contains("only lists of numbers"),
                e.getMessage());
    }

    @Test
    void listsArePaddedAndStackedByTheLoader() throws IOException {
        Padding p = Padding.of().pad("jet_pt", 4).stack("particles", "part_px", "part_py", "part_q").pad("particles", 3)
                .lengths(true).value(-1);
        try (ParquetDataset d = open("id", "jet_pt", "part_px", "part_py", "part_q");
             Loader l = Loader.builder(d).padding(p).batchSize(50).workers(2).build()) {
            assertEquals(List.of("id", "jet_pt", "jet_pt_len", "particles", "particles_len"),
                    l.schema().fields().stream().map(Field::name).toList());
            long truncated = 0;
            for (Batch b : l) {
                for (int r = 0; r < b.size(); r++) {
                    long i = b.data(0).getAtIndex(I64, r);
                    long jets = Math.min(i % 7, 4);
                    assertEquals(jets, b.data(2).getAtIndex(I64, r));
                    for (int j = 0; j < 4; j++) {
                        assertEquals(j < jets ? i * 10 + j : -1f, b.data(1).getAtIndex(F32, 4L * r + j));
                    }
                    long parts = Math.min(i % 5, 3);
                    assertEquals(parts, b.data(4).getAtIndex(I64, r));
                    for (int j = 0; j < 3; j++) {
                        long e = 9L * r + 3L * j;
                        assertEquals(j < parts ? (float) (i + j / 4.0) : -1f, b.data(3).getAtIndex(F32, e));
                        assertEquals(j < parts ? -i - j : -1f, b.data(3).getAtIndex(F32, e + 1));
                        assertEquals(j < parts ? (i * 3 + j) % 5 - 2 : -1f, b.data(3).getAtIndex(F32, e + 2));
                    }
                    if (i % 7 > 4 || i % 5 > 3) {
                        truncated++;
                    }
                }
            }
            assertEquals(truncated, l.stats().truncatedSamples());
        }
    }
}
