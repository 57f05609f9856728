package dev.stoker.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MainTest {
    @TempDir
    Path tmp;

    record Outcome(int code, String out, String err) {
    }

    static Outcome stoker(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(args, new PrintWriter(out, true), new PrintWriter(err, true));
        return new Outcome(code, out.toString(), err.toString());
    }

    static String field(String json, String name) {
        Matcher m = Pattern.compile("\"" + name + "\":(\"[^\"]*\"|[^,}]*)").matcher(json);
        assertTrue(m.find(), name + " in " + json);
        return m.group(1).replace("\"", "");
    }

    @Test
    void versionPrintsTheVersion() {
        Outcome o = stoker("--version");
        assertEquals(0, o.code);
        assertTrue(o.out.matches("stoker \\d+\\.\\d+\\.\\d+.*\\R"), o.out);
    }

    @Test
    void badUsageExitsTwoWithAHint() {
        Outcome o = stoker("bench", "synthetic", "--bogus");
        assertEquals(2, o.code);
        assertTrue(o.err.startsWith("stoker: Unknown option: '--bogus'"), o.err);
        assertTrue(o.err.contains("usage: stoker bench synthetic --help"), o.err);
        assertEquals(2, stoker("bench", "synthetic", "--workers", "two").code);
        assertEquals(2, stoker("bench", "synthetic", "--batch", "0").code);
        assertEquals(2, stoker("bench", "synthetic", "--stop-after", "3").code);
        assertEquals(2, stoker("bench").code);
    }

    @Test
    void theHelpTheUsageHintPointsAtExistsForEveryCommand() {
        java.util.ArrayDeque<java.util.List<String>> todo = new java.util.ArrayDeque<>();
        todo.add(java.util.List.of());
        int checked = 0;
        while (!todo.isEmpty()) {
            java.util.List<String> cmd = todo.poll();
            java.util.List<String> args = new java.util.ArrayList<>(cmd);
            args.add("--help");
            Outcome o = stoker(args.toArray(String[]::new));
            assertEquals(0, o.code, cmd + ": " + o.err);
            assertTrue(o.out.startsWith("Usage: " + String.join(" ", java.util.stream.Stream.concat(
                    java.util.stream.Stream.of("stoker"), cmd.stream()).toList())), cmd + ": " + o.out);
            checked++;
            // the subcommands it lists, below its "Commands:" heading
            String[] parts = o.out.split("Commands:\\R", 2);
            if (parts.length == 2) {
                for (String line : parts[1].split("\\R")) {
                    Matcher m = Pattern.compile("^  (\\w[\\w-]*)\\s").matcher(line);
                    if (m.find() && !m.group(1).equals("help")) {
                        java.util.List<String> sub = new java.util.ArrayList<>(cmd);
                        sub.add(m.group(1));
                        todo.add(sub);
                    }
                }
            }
        }
        assertTrue(checked > 15, "every command and subcommand: " + checked);
        assertTrue(stoker("bench", "shards", "--help").out.contains("--transform"), "the command's own options");
    }

    @Test
    void onlyTheCommandsOnTheCommandLinesPathAreBuiltAndAllForHelpOrAnUnknownName() {
        picocli.CommandLine one = Main.commands(new Main(), "--debug", "bench", "folder", "DIR", "--workers", "2");
        assertEquals(List.of("bench"), List.copyOf(one.getSubcommands().keySet()));
        assertEquals(List.of("folder"), List.copyOf(one.getSubcommands().get("bench").getSubcommands().keySet()));
        for (String[] args : new String[][] {{}, {"help", "bench"}, {"nope"}, {"--version"}}) {
            picocli.CommandLine all = Main.commands(new Main(), args);
            assertTrue(all.getSubcommands().keySet().containsAll(List.of("demo", "bench", "prepare", "serve", "help")),
                    Arrays.toString(args) + ": " + all.getSubcommands().keySet());
            assertEquals(dev.stoker.sources.Specs.kinds().size(), all.getSubcommands().get("bench").getSubcommands().size(),
                    Arrays.toString(args)); // a source command per kind of source
        }
        assertTrue(stoker("help", "bench").out.contains("parquet"), "help lists every source");
        Outcome unknown = stoker("bench", "nope");
        assertEquals(2, unknown.code);
        assertTrue(unknown.err.contains("'nope'") && unknown.err.contains("usage: stoker bench --help"), unknown.err);
    }

    @Test
    void aBadStateFileExitsOneWithOneLineAndNoStackTrace() throws IOException {
        Path state = tmp.resolve("state.json");
        Files.writeString(state, "{\"version\":1,\"sampler\":\"shuffle\"");
        Outcome o = stoker("bench", "synthetic", "--samples", "100", "--resume", state.toString());
        assertEquals(1, o.code);
        assertTrue(o.err.startsWith("stoker: " + state + ": loader state: malformed JSON"), o.err);
        assertEquals(1, o.err.lines().count(), o.err);
    }

    @Test
    void digestsAreTheSameForEveryWorkerCountAndPrefetchDepth() {
        Outcome o = stoker("bench", "synthetic", "--samples", "5000", "--batch", "64", "--workers", "0,1,2,4",
                "--prefetch", "1,3", "--json", "--digest", "--seed", "7");
        assertEquals(0, o.code, o.err);
        List<String> lines = o.out.lines().toList();
        assertEquals(8, lines.size());
        String digest = field(lines.get(0), "digest");
        assertEquals(64, digest.length());
        for (String line : lines) {
            assertEquals(digest, field(line, "digest"), line);
            assertEquals("79", field(line, "batches"));
            assertEquals("5000", field(line, "samples"));
        }
    }

    @Test
    void theRateAfterTheFirstBatchLeavesItsSamplesAndTimeOut() {
        // two batches of 500 and a 20 ms step after each: after the first batch's arrival, 500
        // samples in at least 40 ms (at most 12,500 samples/s; 25,000 if the first batch's counted)
        Outcome o = stoker("bench", "synthetic", "--samples", "1000", "--batch", "500", "--workers", "1", "--step-ms", "20",
                "--json");
        assertEquals(0, o.code, o.err);
        String line = o.out.strip();
        double after = Double.parseDouble(field(line, "samplesPerSecAfterFirst"));
        double first = Double.parseDouble(field(line, "firstBatchSeconds"));
        assertTrue(after > 0 && after <= 500 / 0.040, line);
        double fromStart = Double.parseDouble(field(line, "samplesPerSecFromStart"));
        double start = Double.parseDouble(field(line, "startSeconds"));
        double loader = Double.parseDouble(field(line, "loaderFirstBatchSeconds"));
        assertTrue(loader > 0 && loader <= first + 1e-6, line); // the loader's share of the first batch (a cold JIT's can outlast the run's 20 ms steps)
        assertTrue(start >= 0 && Math.abs(first - (start + loader)) < 1e-6, "from the command's start: " + line);
        assertTrue(fromStart > 0 && fromStart <= 1000 / 0.040 && fromStart < after * 2, line);
        Outcome one = stoker("bench", "synthetic", "--samples", "100", "--batch", "100", "--workers", "1", "--json", "--digest");
        assertFalse(one.out.contains("samplesPerSecAfterFirst"), "one batch: no rate after it");
    }

    @Test
    void theFirstBatchCountsFromTheCommandsStartForItsFirstRunAndFromItsOwnSetUpInASweep() {
        Outcome o = stoker("bench", "synthetic", "--samples", "2000", "--batch", "100", "--workers", "0,1", "--json");
        assertEquals(0, o.code, o.err);
        String[] lines = o.out.strip().split("\n");
        assertEquals(2, lines.length, o.out);
        for (String line : lines) {
            double first = Double.parseDouble(field(line, "firstBatchSeconds"));
            double start = Double.parseDouble(field(line, "startSeconds"));
            double loader = Double.parseDouble(field(line, "loaderFirstBatchSeconds"));
            assertTrue(start >= 0 && loader > 0 && Math.abs(first - (start + loader)) < 1e-6, line);
            assertTrue(start < 5, "not from an earlier command of this JVM: " + line);
        }
    }

    @Test
    void theDigestsFileHasOneHashPerBatchAndMatchesTheJsonDigest() throws Exception {
        Path digests = tmp.resolve("d.txt");
        Outcome o = stoker("bench", "synthetic", "--samples", "1000", "--batch", "100", "--workers", "2", "--json", "--digest",
                "--digests", digests.toString());
        assertEquals(0, o.code, o.err);
        List<String> lines = Files.readAllLines(digests);
        assertEquals(10, lines.size());
        MessageDigest all = MessageDigest.getInstance("SHA-256");
        for (String l : lines) {
            assertTrue(l.matches("[0-9a-f]{64}"), l);
            all.update(HexFormat.of().parseHex(l));
        }
        assertEquals(HexFormat.of().formatHex(all.digest()), field(o.out.strip(), "digest"));
    }

    @Test
    void stopSaveAndResumeDeliverTheUninterruptedBatches() throws IOException {
        Path full = tmp.resolve("full.txt");
        Path first = tmp.resolve("first.txt");
        Path rest = tmp.resolve("rest.txt");
        Path state = tmp.resolve("state.json");
        String[] common = {"bench", "synthetic", "--samples", "3000", "--batch", "32", "--seed", "3"};
        assertEquals(0, stoker(concat(common, "--workers", "2", "--digests", full.toString())).code);
        Outcome a = stoker(concat(common, "--workers", "1", "--stop-after", "40", "--save-state", state.toString(),
                "--digests", first.toString()));
        assertEquals(0, a.code, a.err);
        Outcome b = stoker(concat(common, "--workers", "3", "--prefetch", "5", "--resume", state.toString(),
                "--digests", rest.toString()));
        assertEquals(0, b.code, b.err);
        List<String> joined = new ArrayList<>(Files.readAllLines(first));
        joined.addAll(Files.readAllLines(rest));
        assertEquals(40, Files.readAllLines(first).size());
        assertEquals(Files.readAllLines(full), joined);
    }

    @Test
    void aSeedThatDiffersFromTheResumedStatesIsRefusedNamingBoth() throws IOException {
        Path state = tmp.resolve("s.json");
        String[] common = {"bench", "synthetic", "--samples", "300", "--batch", "10", "--workers", "1"};
        assertEquals(0, stoker(concat(common, "--seed", "3", "--stop-after", "5", "--save-state", state.toString())).code);
        Outcome o = stoker(concat(common, "--resume", state.toString(), "--seed", "7"));
        assertEquals(1, o.code, o.err);
        assertTrue(o.err.startsWith("stoker: " + state + ": cannot resume: seed 7 was set, the state has seed 3"), o.err);
        assertEquals(0, stoker(concat(common, "--resume", state.toString(), "--seed", "3")).code, "the state's own seed");
        assertEquals(0, stoker(concat(common, "--resume", state.toString())).code, "no seed: the state's");
    }

    @Test
    void anEpochWithAResumeIsBadUsageNotIgnored() throws IOException {
        Path state = tmp.resolve("s.json");
        String[] common = {"bench", "synthetic", "--samples", "300", "--batch", "10", "--workers", "1"};
        assertEquals(0, stoker(concat(common, "--stop-after", "5", "--save-state", state.toString())).code);
        Outcome o = stoker(concat(common, "--resume", state.toString(), "--epoch", "3"));
        assertEquals(2, o.code, o.err);
        assertTrue(o.err.contains("--epoch does not go with --resume"), o.err);
    }

    @Test
    void stepsCountTheBatchesDeliveredBeforeAResume() throws IOException {
        Path state = tmp.resolve("s.json");
        Path rest = tmp.resolve("rest.txt");
        String[] common = {"bench", "synthetic", "--samples", "3000", "--batch", "10", "--workers", "1"};
        assertEquals(0, stoker(concat(common, "--stop-after", "25", "--save-state", state.toString())).code);
        assertEquals(0, stoker(concat(common, "--resume", state.toString(), "--steps", "60", "--digests", rest.toString())).code);
        assertEquals(35, Files.readAllLines(rest).size());
    }

    @Test
    void elasticResumeFromTwoRanksToThreeCoversTheRestExactlyOnce() throws IOException {
        String[] common = {"bench", "synthetic", "--samples", "999", "--batch", "8", "--workers", "2", "--seed", "11"};
        Map<Long, Integer> seen = new HashMap<>();
        Path[] state = {tmp.resolve("state0.json"), tmp.resolve("state1.json")};
        for (int rank = 0; rank < 2; rank++) {
            Path ids = tmp.resolve("ids-a" + rank);
            Outcome o = stoker(concat(common, "--world-size", "2", "--rank", "" + rank, "--stop-after", "20",
                    "--save-state", state[rank].toString(), "--ids", ids.toString()));
            assertEquals(0, o.code, o.err);
            count(ids, seen);
        }
        assertEquals(320, seen.size());
        Outcome alone = stoker(concat(common, "--world-size", "3", "--resume", state[0].toString()));
        assertEquals(1, alone.code, "one rank's state holds nothing of where the other stood");
        assertTrue(alone.err.contains("holds nothing of where rank 1 stood"), alone.err);
        for (int rank = 0; rank < 3; rank++) {
            Path ids = tmp.resolve("ids-b" + rank);
            Outcome o = stoker(concat(common, "--world-size", "3", "--rank", "" + rank, "--resume", state[0].toString(),
                    "--resume", state[1].toString(), "--ids", ids.toString()));
            assertEquals(0, o.code, o.err);
            count(ids, seen);
        }
        // 999 - 320 = 679 remain; split over 3 ranks with padding of 2 repeated samples
        assertEquals(999, seen.size(), "every sample delivered");
        long repeated = seen.values().stream().filter(v -> v > 1).count();
        assertEquals(2, repeated, "only the documented padding repeats");
    }

    @Test
    void theDemoRefusesATemporaryFolderAnotherUserMadeForIt() throws IOException {
        org.junit.jupiter.api.Assumptions.assumeTrue("root".equals(System.getProperty("user.name")),
                "needs root, to give a folder to another user");
        String before = System.getProperty("java.io.tmpdir");
        Path planted = Files.createDirectories(tmp.resolve("stoker-demo-root"));
        Files.setOwner(planted, planted.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody"));
        System.setProperty("java.io.tmpdir", tmp.toString());
        try {
            Outcome o = stoker("demo", "--samples", "16");
            assertEquals(1, o.code, o.out + o.err);
            assertTrue(o.err.startsWith("stoker: " + planted + ": is owned by user nobody"), o.err);
            assertEquals(1, o.err.strip().lines().count(), o.err);
        } finally {
            System.setProperty("java.io.tmpdir", before);
        }
    }

    @Test
    void theDemoComparesNaiveAndStokerLoading() {
        Outcome o = stoker("demo", "--out", tmp.toString(), "--samples", "256", "--batch", "32", "--step-ms", "2",
                "--decode-us", "50");
        assertEquals(0, o.code, o.err + o.out);
        assertTrue(o.out.contains("accelerator idle") && o.out.contains("throughput") && o.out.contains("speed-up"), o.out);
        assertTrue(o.out.contains("Same bytes in the same batches both ways"), o.out);
        assertTrue(o.out.contains("ETA, 90 ImageNet epochs") && o.out.contains("auto: "), o.out);
        Path trace = tmp.resolve("stoker-trace.json");
        Path plot = tmp.resolve("demo.png");
        assertTrue(o.out.contains("trace: " + trace) && o.out.contains("plot:  " + plot), o.out);
        try {
            assertTrue(Files.readString(trace).contains("\"traceEvents\""), "a Chrome trace");
            byte[] png = Files.readAllBytes(plot);
            assertTrue(png.length > 1000 && png[1] == 'P' && png[2] == 'N' && png[3] == 'G', "a PNG");
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    private static void count(Path ids, Map<Long, Integer> seen) throws IOException {
        for (String line : Files.readAllLines(ids)) {
            for (String id : line.split(" ")) {
                seen.merge(Long.parseLong(id), 1, Integer::sum);
            }
        }
    }

    static String[] concat(String[] a, String... b) {
        String[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    @Test
    void aSweepCanBePlotted() throws IOException {
        Path png = tmp.resolve("sweep.png");
        Outcome o = stoker("bench", "synthetic", "--samples", "20000", "--workers", "0,1,2", "--prefetch", "1,2", "--plot", png.toString());
        assertEquals(0, o.code(), o.err());
        byte[] b = Files.readAllBytes(png);
        assertTrue(b.length > 5000 && b[1] == 'P' && b[2] == 'N' && b[3] == 'G', "a PNG of " + b.length + " bytes");
        assertTrue(o.out().contains("plot: " + png), o.out());
    }

    @Test
    void aTraceHasASpanPerBatchAndPerWait() throws IOException {
        Path trace = tmp.resolve("t.json");
        Outcome o = stoker("bench", "synthetic", "--samples", "1000", "--batch", "100", "--workers", "2", "--trace", trace.toString());
        assertEquals(0, o.code(), o.err());
        String json = Files.readString(trace);
        assertTrue(json.startsWith("{\"traceEvents\":["), json.substring(0, 40));
        assertEquals(10, json.split("\"name\":\"batch ", -1).length - 1, "one span per batch");
        assertEquals(10, json.split("\"name\":\"wait for a batch\"", -1).length - 1, "one wait per delivery");
        assertTrue(json.contains("\"name\":\"thread_name\"") && json.contains("stoker-worker-0"), "threads are named");
        assertEquals(2, stoker("bench", "synthetic", "--workers", "1,2", "--trace", trace.toString()).code());
    }

    @Test
    void aFlagIsNotTakenForAValue() {
        assertFalse(stoker("bench", "synthetic", "--samples", "10", "--workers", "1", "--json").out.isEmpty());
    }

    @Test
    void dropLastLeavesOutTheShortBatchAndErrorsTakesAPolicy() {
        Outcome o = stoker("bench", "synthetic", "--samples", "10", "--batch", "3", "--workers", "1", "--drop-last", "--json");
        assertEquals("3", field(o.out, "batches"));
        assertEquals("4", field(stoker("bench", "synthetic", "--samples", "10", "--batch", "3", "--workers", "1",
                "--errors", "skip-sample", "--json").out, "batches"));
        Outcome bad = stoker("bench", "synthetic", "--errors", "ignore");
        assertEquals(2, bad.code);
        assertTrue(bad.err.contains("--errors must be fail, skip-sample or skip-shard"), bad.err);
    }

    @Test
    void jsonMeasuresTheLoaderAndHashesOnlyWhenAsked() {
        String[] run = {"bench", "synthetic", "--samples", "100", "--batch", "10", "--workers", "1", "--json"};
        assertEquals("null", field(stoker(run).out.strip(), "digest"));
        String[] hashed = Arrays.copyOf(run, run.length + 1);
        hashed[run.length] = "--digest";
        assertTrue(field(stoker(hashed).out.strip(), "digest").matches("[0-9a-f]{64}"));
    }
}
