package dev.stoker.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code stoker cat}: what other loaders' writers wrote, printed as the values they were given; any source's samples. */
class CatCommandTest {
    private static final Path INTEROP = Path.of("../stoker-formats/src/test/resources/interop");
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Numbers equal by value (a writer prints 1e-05 where Java prints 1.0E-5). */
    private static final Comparator<JsonNode> NUMBERS = (a, b) -> a.isNumber() && b.isNumber()
            ? a.decimalValue().compareTo(b.decimalValue()) : a.equals(b) ? 0 : 1;

    private record Run(int rc, List<String> out, String err) {
    }

    private static Run cat(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        String[] all = new String[args.length + 1];
        all[0] = "cat";
        System.arraycopy(args, 0, all, 1, args.length);
        int rc = Main.run(all, new PrintWriter(out, true), new PrintWriter(err, true));
        return new Run(rc, out.toString().lines().toList(), err.toString());
    }

    private static void assertSameRecords(List<String> want, List<String> got) throws Exception {
        assertEquals(want.size(), got.size(), "lines");
        for (int i = 0; i < want.size(); i++) {
            assertTrue(JSON.readTree(want.get(i)).equals(NUMBERS, JSON.readTree(got.get(i))), "line " + i + ":\n  " + want.get(i)
                    + "\n  " + got.get(i));
        }
    }

    @Test
    void printsAnMdsDatasetAsItsWriterWasGivenIt() throws Exception {
        Path dir = INTEROP.resolve("mds/gz");
        Run r = cat("mds", dir.toString());
        assertEquals(0, r.rc(), r.err());
        assertSameRecords(Files.readAllLines(dir.resolve("expected.jsonl")), r.out());
    }

    @Test
    void skipAndLimitCutStorageOrder() throws Exception {
        Path dir = INTEROP.resolve("mds/merged");
        List<String> all = Files.readAllLines(dir.resolve("expected.jsonl"));
        Run r = cat("mds", dir.toString(), "--skip", "2", "--limit", "3");
        assertEquals(0, r.rc(), r.err());
        assertSameRecords(all.subList(2, 5), r.out());
    }

    @Test
    void printsTfRecordFilesOneAfterTheOther() throws Exception {
        Path gz = INTEROP.resolve("tfrecord/examples.tfrecord.gz");
        Path unpacked = INTEROP.resolve("tfrecord/unpacked.tfrecord");
        Run r = cat("tfrecord", gz.toString(), unpacked.toString());
        assertEquals(0, r.rc(), r.err());
        List<String> want = new java.util.ArrayList<>(Files.readAllLines(Path.of(gz + ".expected.jsonl")));
        want.addAll(Files.readAllLines(Path.of(unpacked + ".expected.jsonl")));
        // floats print as their float's shortest decimal: compared as floats
        assertEquals(want.size(), r.out().size());
        for (int i = 0; i < want.size(); i++) {
            JsonNode w = JSON.readTree(want.get(i));
            JsonNode g = JSON.readTree(r.out().get(i));
            assertTrue(w.equals((a, b) -> a.isNumber() && b.isNumber() ? Float.compare(a.floatValue(), b.floatValue())
                    : a.equals(b) ? 0 : 1, g), "line " + i);
        }
    }

    @Test
    void printsAnySourcesSamplesAsItsFields(@TempDir Path tmp) throws Exception {
        Path tokens = tmp.resolve("t.bin");
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(2 * 100).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < 100; i++) {
            b.putShort((short) i);
        }
        Files.write(tokens, b.array());
        Run r = cat("tokens", tokens.toString(), "--seq-len", "4", "--limit", "2", "--skip", "1");
        assertEquals(0, r.rc(), r.err());
        assertEquals(2, r.out().size());
        JsonNode first = JSON.readTree(r.out().get(0));
        assertEquals("int64", first.get("x").get("dtype").asText());
        assertEquals("[4]", first.get("x").get("shape").toString());
        JsonNode x = first.get("x").get("values");
        JsonNode y = first.get("y").get("values");
        for (int i = 0; i < 3; i++) { // y is x shifted by one, and sample 1 follows sample 0's window
            assertEquals(x.get(i + 1).asLong(), y.get(i).asLong());
        }
        assertTrue(x.get(0).asLong() >= 4, r.out().get(0));
    }

    @Test
    void corruptInputIsOneLineNamingTheFileAndRecord() {
        Run r = cat("tfrecord", INTEROP.resolve("tfrecord/corrupt_data_crc.tfrecord").toString());
        assertEquals(1, r.rc());
        assertEquals(2, r.out().size(), "the records before the corrupt one are printed");
        assertEquals(1, r.err().lines().count(), r.err());
        assertTrue(r.err().contains("corrupt_data_crc.tfrecord: record 2: its data's CRC does not match"), r.err());
    }

    @Test
    void inspectNamesEachFormatItsRecordsAndTheirFieldsTypes() throws Exception {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int rc = Main.run(new String[] {"inspect", "--json", INTEROP.resolve("mds/merged").toString(),
            INTEROP.resolve("arrow/saved").toString(), INTEROP.resolve("tfrecord/examples.tfrecord.zlib").toString(),
            INTEROP.resolve("litdata/zstd").toString()}, new PrintWriter(out, true), new PrintWriter(err, true));
        assertEquals(0, rc, err.toString());
        List<JsonNode> lines = out.toString().lines().map(l -> {
            try {
                return JSON.readTree(l);
            } catch (java.io.IOException e) {
                throw new AssertionError(e);
            }
        }).toList();
        assertEquals(List.of("mds", "arrow", "tfrecord", "litdata"), lines.stream().map(n -> n.get("format").asText()).toList());
        assertEquals(List.of(9, 14, 10, 12), lines.stream().map(n -> n.get("records").asInt()).toList());
        assertEquals("int32[2, 3]", lines.get(0).get("fields").get("ndarray").asText());
        assertEquals("uint64", lines.get(1).get("fields").get("u64").asText());
        assertEquals("list<int64>", lines.get(2).get("fields").get("ints").asText());
    }

    @Test
    void lsListsEachRecordsIndexAndFields() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int rc = Main.run(new String[] {"ls", INTEROP.resolve("tfrecord/wire_edge.tfrecord").toString()},
                new PrintWriter(out, true), new PrintWriter(err, true));
        assertEquals(0, rc, err.toString());
        assertEquals(List.of("0\tx,y", "1\trev,unk", "2\ta,b,merged", "3\t,novalue", "4\toneof"), out.toString().lines().toList());
    }

    @Test
    void refusesTheLoaderOptionsOfBenchItWouldIgnore() {
        String dir = INTEROP.resolve("mds/gz").toString();
        for (String[] option : new String[][] {{"--errors", "skip-shard"}, {"--save-state", "s.json"}, {"--batch", "4"}}) {
            Run r = cat("mds", dir, option[0], option[1]);
            assertEquals(2, r.rc(), r.err());
            assertTrue(r.err().startsWith("stoker: cat does not take " + option[0] + ": it is an option of stoker bench")
                    && r.err().contains("usage: stoker cat mds --help"), r.err());
            assertTrue(r.out().isEmpty(), "nothing printed");
        }
    }

    @Test
    void printsParquetStringsAsTextAndBinaryAsBytes() throws Exception {
        Run r = cat("parquet", "../stoker-parquet/src/test/resources/parquet/rows-zstd.parquet", "--limit", "3");
        assertEquals(0, r.rc(), r.err());
        assertEquals(3, r.out().size());
        for (String line : r.out()) {
            JsonNode row = JSON.readTree(line);
            assertTrue(row.get("label").isTextual() && !row.get("label").asText().isEmpty(), line); // a string column
            assertTrue(row.get("note").isTextual(), line); // a nullable one: its validity is the field note_valid
            assertTrue(row.get("blob").has("sha256"), line); // binary stays bytes
        }
    }

    @Test
    void printsAListColumnAsItsValuesAndPadsItAsTheLoaderWould() throws Exception {
        String lists = "../stoker-parquet/src/test/resources/parquet/lists.parquet";
        Run r = cat("parquet", lists, "--columns", "id,jet_pt", "--skip", "5", "--limit", "1");
        assertEquals(0, r.rc(), r.err());
        JsonNode row = JSON.readTree(r.out().get(0));
        assertEquals("[50.0,51.0,52.0,53.0,54.0]", row.get("jet_pt").toString(), r.out().get(0)); // a ragged field: an array
        r = cat("parquet", lists, "--columns", "id,jet_pt", "--pad", "jet_*=3", "--pad-value", "-1", "--lengths", "--skip", "1",
                "--limit", "2");
        assertEquals(0, r.rc(), r.err());
        assertEquals("[10.0,-1.0,-1.0]", JSON.readTree(r.out().get(0)).get("jet_pt").get("values").toString(), r.out().get(0));
        assertEquals(1, JSON.readTree(r.out().get(0)).get("jet_pt_len").asInt(), r.out().get(0));
        assertEquals("[20.0,21.0,-1.0]", JSON.readTree(r.out().get(1)).get("jet_pt").get("values").toString(), r.out().get(1));
        r = cat("parquet", lists, "--columns", "id,jet_pt", "--pad", "muon_*=3");
        assertEquals(2, r.rc(), r.err());
        assertTrue(r.err().contains("pad 'muon_*' names no ragged field") && r.err().contains("jet_pt"), r.err());
    }
}
