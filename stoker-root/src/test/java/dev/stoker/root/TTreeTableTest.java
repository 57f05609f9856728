package dev.stoker.root;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.stoker.DType;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Every numeric branch of every TTree in the real files equals what uproot reads from them. */
class TTreeTableTest {
    static JsonNode expected() throws IOException {
        return new ObjectMapper().readTree(PhysicsData.root("expected_ttrees.json").toFile());
    }

    static double value(MemorySegment s, DType t, long i) {
        return switch (t) {
            case BOOL, UINT8 -> s.get(ValueLayout.JAVA_BYTE, i) & 0xFF;
            case INT8 -> s.get(ValueLayout.JAVA_BYTE, i);
            case INT16 -> s.get(LE_SHORT, 2 * i);
            case UINT16 -> s.get(LE_SHORT, 2 * i) & 0xFFFF;
            case INT32 -> s.get(LE_INT, 4 * i);
            case UINT32 -> s.get(LE_INT, 4 * i) & 0xFFFFFFFFL;
            case INT64 -> s.get(LE_LONG, 8 * i);
            case UINT64 -> Long.toUnsignedString(s.get(LE_LONG, 8 * i)).length() > 0
                    ? Double.parseDouble(Long.toUnsignedString(s.get(LE_LONG, 8 * i))) : 0;
            case FLOAT32 -> s.get(LE_FLOAT, 4 * i);
            case FLOAT64 -> s.get(LE_DOUBLE, 8 * i);
            default -> throw new AssertionError(t);
        };
    }

    static final ValueLayout.OfShort LE_SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfInt LE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfLong LE_LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfFloat LE_FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfDouble LE_DOUBLE = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    @Test
    void everyNumericBranchOfEveryFileEqualsUproot() throws IOException {
        JsonNode all = expected();
        int checked = 0;
        for (Iterator<String> files = all.fieldNames(); files.hasNext(); ) {
            String fileName = files.next();
            JsonNode f = all.get(fileName);
            Path p = PhysicsData.root(fileName);
            try (RootFile file = RootFile.open(p.toString()); RootTable t = file.table(f.get("tree").asText())) {
                String where = fileName + ":" + f.get("tree").asText();
                assertEquals(f.get("entries").asLong(), t.entries(), where);
                Map<String, RootColumn> cols = new HashMap<>();
                for (RootColumn c : t.columns()) {
                    cols.put(c.name(), c);
                    JsonNode e = f.get("branches").get(c.name());
                    assertTrue(e != null && !e.has("error"), where + ": column " + c + " is no numeric branch of uproot's");
                }
                for (String r : t.refused().keySet()) {
                    JsonNode e = f.get("branches").get(r);
                    assertTrue(e == null || e.has("error"), where + ": refused " + r + " (" + t.refused().get(r) + ")");
                }
                for (Iterator<String> bs = f.get("branches").fieldNames(); bs.hasNext(); ) {
                    String b = bs.next();
                    JsonNode e = f.get("branches").get(b);
                    if (e.has("error")) {
                        assertNull(cols.get(b), where + ": " + b);
                        continue;
                    }
                    RootColumn c = cols.get(b);
                    assertNotNull(c, where + ": no column " + b + "; refused: " + t.refused());
                    check(where + ":" + b, t, c, e);
                    checked++;
                }
            }
        }
        assertTrue(checked > 200, "checked " + checked);
    }

    private static void check(String where, RootTable t, RootColumn c, JsonNode e) throws IOException {
        assertEquals(e.get("typename").asText(), c.type(), where);
        ColumnData d = t.read(c, 0, t.entries());
        long n = d.values().byteSize() / c.dtype().byteSize();
        if (e.get("kind").asText().equals("jagged")) {
            assertTrue(c.ragged(), where);
            assertNotNull(d.offsets(), where);
            assertEquals(t.entries() + 1, d.offsets().length, where);
            assertEquals(e.get("n_values").asLong(), n, where);
            assertEquals(n, d.offsets()[d.offsets().length - 1], where);
            JsonNode counts = e.get("counts_first");
            for (int i = 0; i < counts.size(); i++) {
                assertEquals(counts.get(i).asLong(), d.offsets()[i + 1] - d.offsets()[i], where + " count " + i);
            }
        } else {
            assertFalse(c.ragged(), where);
            assertNull(d.offsets(), where);
            long want = 1;
            for (JsonNode s : e.get("shape")) {
                want *= s.asLong();
            }
            assertEquals(want, n, where);
            assertEquals(e.get("dtype").asText(), c.dtype().label(), where);
            if (e.get("shape").size() > 1) {
                assertEquals(e.get("shape").get(1).asInt(), c.fixed(), where);
            }
        }
        double sum = 0, abs = 0;
        for (long i = 0; i < n; i++) {
            double v = value(d.values(), c.dtype(), i);
            sum += v;
            abs += Math.abs(v);
        }
        assertEquals(e.get("sum").asDouble(), sum, 1e-9 * Math.max(1, abs), where + " sum");
        JsonNode first = e.get("first_values");
        for (int i = 0; i < first.size(); i++) {
            double want = first.get(i).isBoolean() ? (first.get(i).asBoolean() ? 1 : 0) : first.get(i).asDouble();
            assertEquals(want, value(d.values(), c.dtype(), i), where + " value " + i);
        }
        // the same values read in pieces: cluster by cluster, and in odd ranges across baskets
        List<long[]> ranges = new ArrayList<>();
        long[] starts = t.clusterStarts();
        for (int i = 0; i < starts.length; i++) {
            ranges.add(new long[] {starts[i], i + 1 < starts.length ? starts[i + 1] : t.entries()});
        }
        for (long s = 0; s < t.entries(); s += 7) {
            ranges.add(new long[] {s, Math.min(t.entries(), s + 7)});
        }
        for (long[] r : ranges) {
            ColumnData part = t.read(c, r[0], r[1]);
            long perEntry = c.fixed() * (long) c.dtype().byteSize();
            long off = c.ragged() ? d.offsets()[(int) r[0]] * c.dtype().byteSize() : r[0] * perEntry;
            long len = c.ragged() ? (d.offsets()[(int) r[1]] - d.offsets()[(int) r[0]]) * c.dtype().byteSize() : (r[1] - r[0]) * perEntry;
            assertEquals(len, part.values().byteSize(), where + " range " + r[0] + ".." + r[1]);
            assertEquals(-1, d.values().asSlice(off, len).mismatch(part.values()), where + " range " + r[0] + ".." + r[1]);
            if (c.ragged()) {
                long[] want = new long[(int) (r[1] - r[0] + 1)];
                for (int i = 0; i < want.length; i++) {
                    want[i] = d.offsets()[(int) r[0] + i] - d.offsets()[(int) r[0]];
                }
                assertArrayEquals(want, part.offsets(), where);
            }
        }
    }

    @Test
    void stringsObjectsAndNestedContainersAreRefusedWithTheirTypes() throws IOException {
        try (RootFile f = RootFile.open(PhysicsData.root("uproot-stl_containers.root").toString()); RootTable t = f.table("tree")) {
            assertTrue(t.refused().size() > 5, t.refused().toString());
            assertEquals("std::string", t.refused().get("string"), t.refused().toString());
        }
        try (RootFile f = RootFile.open(PhysicsData.root("uproot-Zmumu.root").toString()); RootTable t = f.table("events")) {
            assertEquals(Map.of("Type", "char*"), t.refused());
        }
    }

    @Test
    void clusterStartsAreTheBasketStarts() throws IOException {
        try (RootFile f = RootFile.open(PhysicsData.root("uproot-foriter.root").toString()); RootTable t = f.table("foriter")) {
            long[] s = t.clusterStarts();
            assertEquals(8, s.length);
            assertEquals(0, s[0]);
            for (int i = 1; i < s.length; i++) {
                assertTrue(s[i] > s[i - 1]);
            }
        }
    }

    @Test
    void raggedBasketsWithoutEntryOffsetsReadTheSameFromCountersAndHeaders() throws IOException {
        JsonNode all = expected();
        int checked = 0;
        for (Iterator<String> files = all.fieldNames(); files.hasNext(); ) {
            String fileName = files.next();
            String tree = all.get(fileName).get("tree").asText();
            try (RootFile file = RootFile.open(PhysicsData.root(fileName).toString());
                 RootTable with = file.table(tree); RootTable without = file.table(tree)) {
                ((TTreeTable) without).entryOffsets = false;
                for (RootColumn c : with.columns()) {
                    if (!c.ragged()) {
                        continue;
                    }
                    ColumnData a = with.read(c, 0, with.entries());
                    ColumnData b = without.read(c, 0, with.entries());
                    assertArrayEquals(a.offsets(), b.offsets(), fileName + ":" + c.name());
                    assertEquals(-1, a.values().mismatch(b.values()), fileName + ":" + c.name());
                    checked++;
                }
            }
        }
        assertTrue(checked > 50, "checked " + checked);
    }
}
