package dev.stoker.formats.sqlite;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.stoker.Batch;
import dev.stoker.CorruptShardException;
import dev.stoker.DType;
import dev.stoker.Loader;
import dev.stoker.Sampler;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * SQLite event tables read without SQLite: against databases Python's sqlite3 wrote (and what
 * SQLite reads back from them), GraphNeT's own files, read-only files, and damaged ones.
 */
class SqliteEventsTest {
    static final Path PHYSICS = Path.of("../../shared/physics-data/graphnet-sqlite").toAbsolutePath().normalize();
    private static final List<String> FEATURES = List.of("dom_x", "dom_y", "charge", "string");
    private static Path made;

    /** The databases make_databases.py writes (once per run), or the test is skipped without python3. */
    static synchronized Path databases() throws Exception {
        if (made == null) {
            Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/python3")), "python3 writes the databases");
            Path dir = Files.createTempDirectory("stoker-sqlite-test");
            Runtime.getRuntime().addShutdownHook(new Thread(() -> { // shared by the test classes of this run
                try (var all = Files.walk(dir)) {
                    all.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
                } catch (IOException e) {
                    // left for the system's temporary-folder cleaning
                }
            }));
            Path script = Path.of("src/test/resources/sqlite/make_databases.py").toAbsolutePath();
            Process p = new ProcessBuilder("/usr/bin/python3", script.toString(), dir.toString()).inheritIO().start();
            assertEquals(0, p.waitFor(), "make_databases.py");
            made = dir;
        }
        return made;
    }

    /** A fresh copy of a made database in its own folder (tests that damage or lock it). */
    private static Path copy(String name, Path into) throws Exception {
        Path to = into.resolve(name);
        Files.copy(databases().resolve(name), to);
        return to;
    }

    private static SqliteEvents open(Path db) throws IOException {
        return new SqliteEvents(db, "pulses", "truth", "event_no", FEATURES, List.of("energy", "pid"), null);
    }

    /** Every event of {@code data}, read through a sequential loader, against what SQLite itself read. */
    private static void assertEvents(SqliteEvents data, JsonNode expected) throws Exception {
        assertEquals(expected.size(), data.size());
        try (Loader l = Loader.builder(data).batchSize(7).sampler(Sampler.sequential()).workers(2).build()) {
            int i = 0;
            for (Batch b : l) {
                for (int r = 0; r < b.size(); r++, i++) {
                    JsonNode e = expected.get(i);
                    assertEquals(e.get("event_no").asLong(), data.event(i));
                    for (String f : FEATURES) {
                        int field = b.schema().indexOf(f);
                        MemorySegment v = b.bytes(field, r);
                        JsonNode want = e.get(f);
                        boolean integer = f.equals("string");
                        assertEquals(want.size() * 8L, v.byteSize(), "event " + i + " field " + f);
                        for (int j = 0; j < want.size(); j++) {
                            if (integer) {
                                assertEquals(want.get(j).asLong(), v.getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), j));
                            } else {
                                double got = v.getAtIndex(ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), j);
                                if (want.get(j).isNull()) {
                                    assertTrue(Double.isNaN(got), "NULL reads as NaN");
                                } else {
                                    assertEquals(want.get(j).asDouble(), got, "event " + i + " " + f + "[" + j + "]");
                                }
                            }
                        }
                    }
                    assertEquals(e.get("energy").asDouble(), b.bytes(b.schema().indexOf("energy"), r)
                            .get(ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 0));
                    assertEquals(e.get("pid").asLong(), b.bytes(b.schema().indexOf("pid"), r)
                            .get(ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 0));
                }
            }
            assertEquals(expected.size(), i);
        }
    }

    private static JsonNode expected(String db) throws Exception {
        return new ObjectMapper().readTree(databases().resolve("expected.json").toFile()).get(db);
    }

    @Test
    void eventsStoredByEventReadAsSqliteReadsThem(@TempDir Path dir) throws Exception {
        try (SqliteEvents data = open(copy("graphnet.db", dir))) {
            assertTrue(data.storedByEvent());
            assertEquals(1, data.unmatchedRows(), "the pulse row of an event the truth table lacks is counted, not read");
            assertEvents(data, expected("graphnet.db"));
            assertEquals(DType.FLOAT64, data.schema().field(0).dtype());
            assertEquals(DType.INT64, data.schema().field(3).dtype(), "an INTEGER column reads as int64");
            assertTrue(data.schema().field(0).isRagged());
        }
    }

    @Test
    void eventsWhoseRowsAreInterleavedAreReadInStoredOrder(@TempDir Path dir) throws Exception {
        try (SqliteEvents data = open(copy("unordered.db", dir))) {
            assertFalse(data.storedByEvent());
            assertEvents(data, expected("unordered.db"));
        }
    }

    @Test
    void anEventWithNoRowsHasLengthZero(@TempDir Path dir) throws Exception {
        JsonNode want = expected("graphnet.db");
        try (SqliteEvents data = open(copy("graphnet.db", dir))) {
            int empty = 0;
            for (int i = 0; i < data.size(); i++) {
                assertEquals(want.get(i).get("charge").size(), data.rows(i));
                empty += data.rows(i) == 0 ? 1 : 0;
            }
            assertTrue(empty > 10, "the made database has events without rows");
        }
    }

    @Test
    void theIndexIsKeptBesideAWritableFileAndReused(@TempDir Path dir) throws Exception {
        Path db = copy("graphnet.db", dir);
        try (SqliteEvents data = open(db)) {
            assertEquals(1200, data.size());
        }
        List<Path> kept;
        try (Stream<Path> s = Files.list(dir)) {
            kept = s.filter(p -> p.getFileName().toString().endsWith(".stkidx")).toList();
        }
        assertEquals(1, kept.size(), "one index beside the file");
        long stamp = Files.getLastModifiedTime(kept.get(0)).toMillis();
        Thread.sleep(20);
        try (SqliteEvents again = open(db)) {
            assertEvents(again, expected("graphnet.db"));
        }
        assertEquals(stamp, Files.getLastModifiedTime(kept.get(0)).toMillis(), "read back, not built again");
        // a damaged index is built again, never trusted
        byte[] bytes = Files.readAllBytes(kept.get(0));
        bytes[bytes.length / 2] ^= 0x55;
        Files.write(kept.get(0), bytes);
        try (SqliteEvents again = open(db)) {
            assertEvents(again, expected("graphnet.db"));
        }
    }

    @Test
    void aReadOnlyFileInAReadOnlyFolderIsReadAndNothingIsWrittenBesideIt(@TempDir Path dir) throws Exception {
        Path folder = Files.createDirectory(dir.resolve("ro"));
        Path db = copy("graphnet.db", folder);
        Files.setPosixFilePermissions(db, PosixFilePermissions.fromString("r--r--r--"));
        Files.setPosixFilePermissions(folder, PosixFilePermissions.fromString("r-xr-xr-x"));
        try {
            try (SqliteEvents data = open(db)) {
                assertEvents(data, expected("graphnet.db"));
            }
            try (Stream<Path> s = Files.list(folder)) {
                assertEquals(List.of(db), s.toList(), "no journal, WAL, -shm or index beside a read-only file");
            }
        } finally {
            Files.setPosixFilePermissions(folder, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
    }

    @Test
    void aWithoutRowidTableIsRefusedByName() throws Exception {
        var e = assertThrows(CorruptShardException.class, () -> new SqliteEvents(databases().resolve("without_rowid.db"),
                "pulses", "truth", "event_no", List.of("charge"), List.of(), null));
        assertTrue(e.getMessage().contains("pulses") && e.getMessage().contains("WITHOUT ROWID"), e.getMessage());
        assertTrue(e.getMessage().startsWith(databases().resolve("without_rowid.db").toString()), e.getMessage());
    }

    @Test
    void aMissingTableOrColumnIsNamedWithThoseThereAre() throws Exception {
        Path db = databases().resolve("graphnet.db");
        var t = assertThrows(IllegalArgumentException.class, () -> new SqliteEvents(db, "pulse", "truth", "event_no",
                FEATURES, List.of(), null));
        assertTrue(t.getMessage().contains("no table 'pulse'") && t.getMessage().contains("pulses, truth"), t.getMessage());
        var c = assertThrows(IllegalArgumentException.class, () -> new SqliteEvents(db, "pulses", "truth", "event_no",
                List.of("dom_z"), List.of(), null));
        assertTrue(c.getMessage().contains("'dom_z'") && c.getMessage().contains("dom_x"), c.getMessage());
    }

    @Test
    void aTextFeatureIsRefusedNamingTheRowAndColumn() throws Exception {
        try (SqliteEvents data = new SqliteEvents(databases().resolve("graphnet.db"), "pulses", "truth", "event_no",
                List.of("note"), List.of(), null)) {
            var e = assertThrows(dev.stoker.LoaderException.class, () -> {
                try (Loader l = Loader.builder(data).batchSize(4).sampler(Sampler.sequential()).workers(0).build()) {
                    for (Batch b : l) {
                        b.size();
                    }
                }
            });
            String m = String.valueOf(e.getMessage()) + (e.getCause() == null ? "" : e.getCause().getMessage());
            assertTrue(m.contains("column note") && m.contains("TEXT"), m);
        }
    }

    @Test
    void float32IsAChoiceForEveryField(@TempDir Path dir) throws Exception {
        try (SqliteEvents data = new SqliteEvents(copy("graphnet.db", dir), "pulses", "truth", "event_no", List.of("charge"),
                List.of("pid"), DType.FLOAT32)) {
            assertEquals(DType.FLOAT32, data.schema().field(0).dtype());
            assertEquals(DType.FLOAT32, data.schema().field(1).dtype());
        }
    }

    @Test
    void withoutATruthTableTheEventsAreThePulsesOwn(@TempDir Path dir) throws Exception {
        try (SqliteEvents data = new SqliteEvents(copy("graphnet.db", dir), "pulses", null, "event_no", List.of("charge"),
                List.of(), null)) {
            JsonNode want = expected("graphnet.db");
            long nonEmpty = 0;
            for (JsonNode e : want) {
                nonEmpty += e.get("charge").size() > 0 ? 1 : 0;
            }
            assertEquals(nonEmpty + 1, data.size(), "every event with rows, the truth table's or not");
            assertEquals(999999, data.event(data.size() - 1));
        }
    }

    // ---- GraphNeT's own files

    private static JsonNode physics() throws IOException {
        Assumptions.assumeTrue(Files.isDirectory(PHYSICS), "the shared physics data is not beside the checkout");
        return new ObjectMapper().readTree(PHYSICS.resolve("expected.json").toFile());
    }

    private static double sum(SqliteEvents data, String field) throws Exception {
        double s = 0;
        try (Loader l = Loader.builder(data).batchSize(16).sampler(Sampler.sequential()).workers(0).build()) {
            for (Batch b : l) {
                int f = b.schema().indexOf(field);
                for (int r = 0; r < b.size(); r++) {
                    MemorySegment v = b.bytes(f, r);
                    for (long j = 0; j < v.byteSize() / 8; j++) {
                        s += v.getAtIndex(ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), j);
                    }
                }
            }
        }
        return s;
    }

    @Test
    void graphnetsOscNextFileReadsItsExpectedValues() throws Exception {
        JsonNode want = physics().get("oscNext_genie_level7_v02_first_5_frames.db");
        Path db = PHYSICS.resolve("oscNext_genie_level7_v02_first_5_frames.db");
        JsonNode pulses = want.get("tables").get("SRTInIcePulses");
        try (SqliteEvents data = new SqliteEvents(db, "SRTInIcePulses", "truth", "event_no",
                List.of("awtd", "charge", "dom_number"), List.of("CascadeFilter_13", "DeepCoreFilter_13", "EventID"), null)) {
            assertEquals(pulses.get("events").asLong(), data.size());
            for (int i = 0; i < data.size(); i++) {
                assertEquals(pulses.get("rows_per_event_first").get(i).get(0).asLong(), data.event(i));
                assertEquals(pulses.get("rows_per_event_first").get(i).get(1).asInt(), data.rows(i));
            }
            for (var e : pulses.get("sum_first3_numeric").properties()) {
                assertEquals(e.getValue().asDouble(), sum(data, e.getKey()), 1e-9, e.getKey());
            }
            for (var e : want.get("tables").get("truth").get("sum_first3_numeric").properties()) {
                assertEquals(e.getValue().asDouble(), sum(data, e.getKey()), 1e-9, e.getKey());
            }
        }
    }

    @Test
    void prometheusEventsReadTheirExpectedValues() throws Exception {
        JsonNode want = physics().get("prometheus-events.db");
        Path db = PHYSICS.resolve("prometheus-events.db");
        JsonNode total = want.get("tables").get("total");
        try (SqliteEvents data = new SqliteEvents(db, "total", "mc_truth", "event_no",
                List.of("sensor_id", "sensor_pos_x", "sensor_pos_y"),
                List.of("injection_energy", "injection_type", "injection_interaction_type"), null)) {
            assertEquals(total.get("events").asLong(), data.size());
            JsonNode first = total.get("rows_per_event_first");
            for (int i = 0; i < first.size(); i++) {
                assertEquals(first.get(i).get(0).asLong(), data.event(i));
                assertEquals(first.get(i).get(1).asInt(), data.rows(i));
            }
            int min = Integer.MAX_VALUE;
            int max = 0;
            long rows = 0;
            for (int i = 0; i < data.size(); i++) {
                min = Math.min(min, data.rows(i));
                max = Math.max(max, data.rows(i));
                rows += data.rows(i);
            }
            assertArrayEquals(new int[] {total.get("rows_per_event_min_max").get(0).asInt(),
                    total.get("rows_per_event_min_max").get(1).asInt()}, new int[] {min, max});
            assertEquals(total.get("rows").asLong(), rows);
            for (var e : total.get("sum_first3_numeric").properties()) {
                assertEquals(e.getValue().asDouble(), sum(data, e.getKey()), 1e-9, e.getKey());
            }
            for (var e : want.get("tables").get("mc_truth").get("sum_first3_numeric").properties()) {
                assertEquals(e.getValue().asDouble(), sum(data, e.getKey()), 1e-9, e.getKey());
            }
        }
    }

    @Test
    void theSchemaOfGraphnetsFilesIsTheirs() throws Exception {
        JsonNode want = physics();
        for (var db : want.properties()) {
            try (SqliteFile f = SqliteFile.open(PHYSICS.resolve(db.getKey()))) {
                for (var t : db.getValue().get("tables").properties()) {
                    SqliteTable table = f.table(t.getKey());
                    List<String> columns = new ArrayList<>();
                    t.getValue().get("columns").forEach(c -> columns.add(c.asText()));
                    assertEquals(columns, table.columns());
                    assertEquals(t.getValue().get("rows").asLong(), table.rows());
                }
                List<String> indexes = new ArrayList<>();
                db.getValue().get("indexes").forEach(i -> indexes.add(i.asText()));
                assertEquals(indexes, f.indexes().stream().map(SqliteFile.Index::sql).toList());
            }
        }
    }

    // ---- damaged files: one line naming the file, the page and the byte, never a hang

    @Test
    void aTruncatedFileIsRefused(@TempDir Path dir) throws Exception {
        Path db = copy("graphnet.db", dir);
        try (RandomAccessFile f = new RandomAccessFile(db.toFile(), "rw")) {
            f.setLength(f.length() / 2);
        }
        var e = assertThrows(CorruptShardException.class, () -> SqliteFile.open(db));
        assertTrue(e.getMessage().startsWith(db.toString()) && e.getMessage().contains("truncated"), e.getMessage());
    }

    @Test
    void notAnSqliteFileIsRefused(@TempDir Path dir) throws Exception {
        Path f = Files.writeString(dir.resolve("x.db"), "hello, this is not a database".repeat(10));
        var e = assertThrows(CorruptShardException.class, () -> SqliteFile.open(f));
        assertTrue(e.getMessage().contains("not an SQLite database"), e.getMessage());
    }

    @Test
    void aCyclicOverflowChainIsRefusedNotFollowed(@TempDir Path dir) throws Exception {
        Path db = copy("blob.db", dir);
        int root;
        try (SqliteFile f = SqliteFile.open(db)) {
            root = f.table("t").rootPage();
        }
        // page 3 onwards hold the blob's overflow: make the first point back to itself
        int page = root + 1;
        try (RandomAccessFile f = new RandomAccessFile(db.toFile(), "rw")) {
            f.seek((long) (page - 1) * 512);
            f.writeInt(page);
        }
        try (SqliteFile f = SqliteFile.open(db); SqliteTable.Cursor c = f.table("t").cursor(0)) {
            var e = assertThrows(CorruptShardException.class, c::next);
            assertTrue(e.getMessage().startsWith(db.toString()) && e.getMessage().contains("overflow"), e.getMessage());
            assertTrue(e.getMessage().contains("at byte"), e.getMessage());
        }
    }

    @Test
    void aBtreeThatPointsBackIntoItselfIsRefused(@TempDir Path dir) throws Exception {
        Path db = copy("graphnet.db", dir);
        int root;
        try (SqliteFile f = SqliteFile.open(db)) {
            root = f.table("pulses").rootPage();
        }
        try (RandomAccessFile f = new RandomAccessFile(db.toFile(), "rw")) {
            long at = (long) (root - 1) * 1024;
            f.seek(at);
            assertEquals(5, f.read(), "the pulse table's root is an interior page");
            f.seek(at + 8);
            f.writeInt(root); // the right-most child: the root itself
        }
        try (SqliteFile f = SqliteFile.open(db)) {
            var e = assertThrows(CorruptShardException.class, () -> f.table("pulses").rows());
            assertTrue(e.getMessage().contains("cycle") && e.getMessage().contains("page " + root), e.getMessage());
        }
    }

    @Test
    void aCellPointerOutsideItsPageIsRefused(@TempDir Path dir) throws Exception {
        Path db = copy("blob.db", dir);
        int root;
        try (SqliteFile f = SqliteFile.open(db)) {
            root = f.table("t").rootPage();
        }
        try (RandomAccessFile f = new RandomAccessFile(db.toFile(), "rw")) {
            f.seek((long) (root - 1) * 512 + 8);
            f.writeShort(0xfff0);
        }
        try (SqliteFile f = SqliteFile.open(db); SqliteTable.Cursor c = f.table("t").cursor(0)) {
            var e = assertThrows(CorruptShardException.class, c::next);
            assertTrue(e.getMessage().contains("page " + root) && e.getMessage().contains("cell 0"), e.getMessage());
        }
    }

    @Test
    void anInteriorCellPointerOutsideItsPageIsRefused(@TempDir Path dir) throws Exception {
        Path db = copy("graphnet.db", dir);
        int root;
        try (SqliteFile f = SqliteFile.open(db)) {
            root = f.table("pulses").rootPage();
        }
        try (RandomAccessFile f = new RandomAccessFile(db.toFile(), "rw")) {
            f.seek((long) (root - 1) * 1024 + 12);
            f.writeShort(1022); // cell 0 at the page's last two bytes: its child pointer would run into the next page
        }
        try (SqliteFile f = SqliteFile.open(db)) {
            var e = assertThrows(CorruptShardException.class, () -> f.table("pulses").rows());
            assertTrue(e.getMessage().contains("page " + root) && e.getMessage().contains("outside the cell area"), e.getMessage());
        }
    }

    @Test
    void aPageNumberPastTheFileIsRefused(@TempDir Path dir) throws Exception {
        Path db = copy("graphnet.db", dir);
        int root;
        try (SqliteFile f = SqliteFile.open(db)) {
            root = f.table("pulses").rootPage();
        }
        try (RandomAccessFile f = new RandomAccessFile(db.toFile(), "rw")) {
            f.seek((long) (root - 1) * 1024 + 8);
            f.writeInt(1 << 30);
        }
        try (SqliteFile f = SqliteFile.open(db)) {
            var e = assertThrows(CorruptShardException.class, () -> f.table("pulses").rows());
            assertTrue(e.getMessage().contains("page 1073741824 is not among the file's"), e.getMessage());
        }
    }

    @Test
    void aFileWithUncheckpointedWalIsRefused(@TempDir Path dir) throws Exception {
        Path db = copy("graphnet.db", dir);
        try (RandomAccessFile f = new RandomAccessFile(db.toFile(), "rw")) {
            f.seek(18);
            f.write(new byte[] {2, 2});
        }
        Files.write(dir.resolve("graphnet.db-wal"), new byte[4096]);
        var e = assertThrows(CorruptShardException.class, () -> SqliteFile.open(db));
        assertTrue(e.getMessage().contains("checkpoint"), e.getMessage());
        assertEquals(Set.of("graphnet.db", "graphnet.db-wal"), Set.copyOf(Files.list(dir).map(p -> p.getFileName().toString()).toList()));
    }
}
