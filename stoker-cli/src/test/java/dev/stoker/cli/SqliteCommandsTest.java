package dev.stoker.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code stoker inspect}, {@code cat sqlite} and {@code bench sqlite} on GraphNeT's own files. */
class SqliteCommandsTest {
    private static final Path PHYSICS = Path.of("../../shared/physics-data/graphnet-sqlite").toAbsolutePath().normalize();
    private static final ObjectMapper JSON = new ObjectMapper();

    private record Run(int rc, List<String> out, String err) {
    }

    private static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int rc = Main.run(args, new PrintWriter(out, true), new PrintWriter(err, true));
        return new Run(rc, out.toString().lines().toList(), err.toString());
    }

    @BeforeEach
    void physics() {
        Assumptions.assumeTrue(Files.isDirectory(PHYSICS), "the shared physics data is not beside the checkout");
    }

    @Test
    void inspectListsTablesColumnsRowsEventsAndIndexes() throws Exception {
        JsonNode want = JSON.readTree(PHYSICS.resolve("expected.json").toFile()).get("prometheus-events.db");
        Run r = run("inspect", "--json", PHYSICS.resolve("prometheus-events.db").toString());
        assertEquals(0, r.rc(), r.err());
        JsonNode got = JSON.readTree(r.out().get(0));
        assertEquals("sqlite", got.get("format").asText());
        for (JsonNode t : got.get("tables")) {
            JsonNode w = want.get("tables").get(t.get("name").asText());
            assertEquals(w.get("rows").asLong(), t.get("rows").asLong());
            assertEquals(w.get("events").asLong(), t.get("events").asLong());
            assertEquals(w.get("columns").size(), t.get("columns").size());
            assertEquals(w.get("rows_per_event_min_max"), t.get("rowsPerEvent"));
        }
        assertEquals(want.get("indexes").get(0).asText(), got.get("indexes").get(0).get("sql").asText());
    }

    @Test
    void catPrintsEventsAsRaggedListsAndTruthScalars() throws Exception {
        Run r = run("cat", "sqlite", PHYSICS.resolve("oscNext_genie_level7_v02_first_5_frames.db").toString(), "--pulses",
                "SRTInIcePulses", "--truth", "truth", "--features", "charge,dom_number", "--truth-features", "event_no",
                "--limit", "3");
        assertEquals(0, r.rc(), r.err());
        assertEquals(3, r.out().size());
        int[] rows = {9, 9, 12};
        for (int i = 0; i < 3; i++) {
            JsonNode e = JSON.readTree(r.out().get(i));
            assertEquals(i, e.get("event_no").asInt());
            assertEquals(rows[i], e.get("charge").size(), "a ragged field prints as a JSON array of its numbers");
            assertTrue(e.get("charge").get(0).isNumber());
        }
    }

    @Test
    void aMissingTableIsOneLineAndUsage(@TempDir Path dir) throws Exception {
        Run r = run("bench", "sqlite", PHYSICS.resolve("prometheus-events.db").toString(), "--pulses", "pulses");
        assertEquals(2, r.rc(), r.err());
        assertTrue(r.err().contains("no table 'pulses' (it has total, mc_truth)"), r.err());
        assertTrue(r.err().lines().noneMatch(l -> l.startsWith("\tat ")), r.err());
    }

    @Test
    void aFileThatIsNoDatabaseIsOneLineOfBadData(@TempDir Path dir) throws Exception {
        Path bad = Files.write(dir.resolve("bad.db"), "SQLite format 3\0".getBytes());
        Run r = run("bench", "sqlite", bad.toString(), "--pulses", "pulses");
        assertEquals(1, r.rc(), r.err());
        assertTrue(r.err().startsWith("stoker: " + bad), r.err());
        assertEquals(1, r.err().lines().count(), r.err());
    }
}
