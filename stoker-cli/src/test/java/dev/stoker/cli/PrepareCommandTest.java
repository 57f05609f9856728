package dev.stoker.cli;

import static dev.stoker.cli.MainTest.field;
import static dev.stoker.cli.MainTest.stoker;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PrepareCommandTest {
    @TempDir
    Path tmp;

    Path corpus() throws IOException {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 400; i++) {
            b.append("{\"text\": \"Document ").append(i).append(": the loader feeds the GPU.\"}\n");
        }
        Path p = tmp.resolve("c.jsonl");
        Files.writeString(p, b);
        return p;
    }

    @Test
    void preparesTokensAndSummarises() throws IOException {
        Path in = corpus();
        MainTest.Outcome o = stoker("prepare", "tokens", in.toString(), "--out", tmp.resolve("gpt2").toString(),
                "--tokenizer", "gpt2", "--workers", "2");
        assertEquals(0, o.code(), o.err());
        assertTrue(o.out().startsWith("400 documents, ") && o.out().contains("tokens (r50k_base, <u2)"), o.out());
        assertTrue(o.out().contains("wrote " + tmp.resolve("gpt2.bin")), o.out());
        MainTest.Outcome one = stoker("prepare", "tokens", in.toString(), "--out", tmp.resolve("one").toString(),
                "--tokenizer", "gpt2", "--workers", "1");
        assertEquals(0, one.code(), one.err());
        assertArrayEquals(Files.readAllBytes(tmp.resolve("gpt2.bin")), Files.readAllBytes(tmp.resolve("one.bin")));

        o = stoker("prepare", "tokens", in.toString(), "--out", tmp.resolve("m").toString(), "--format", "megatron",
                "--tokenizer", "cl100k_base");
        assertEquals(0, o.code(), o.err());
        MainTest.Outcome inspect = stoker("inspect", "--json", tmp.resolve("m").toString());
        assertEquals("megatron", field(inspect.out().strip(), "format"));
        assertEquals("<i4", field(inspect.out().strip(), "dtype"), "cl100k ids need 32 bits: Megatron's int32");
        assertEquals("400", field(inspect.out().strip(), "documents"));
    }

    @Test
    void aMalformedLineExitsOneNamingTheLineOrIsSkippedAndCounted() throws IOException {
        Path in = tmp.resolve("bad.jsonl");
        Files.writeString(in, "{\"text\": \"a\"}\n{\"text\": \"b\"\n{\"text\": \"c\"}\n");
        MainTest.Outcome o = stoker("prepare", "tokens", in.toString(), "--out", tmp.resolve("x").toString());
        assertEquals(1, o.code());
        assertTrue(o.err().startsWith("stoker: " + in + ": line 2: malformed JSON"), o.err());
        assertEquals(1, o.err().lines().count());
        o = stoker("prepare", "tokens", in.toString(), "--out", tmp.resolve("x").toString(), "--skip-bad", "--format", "npy");
        assertEquals(0, o.code(), o.err());
        assertTrue(o.out().contains("2 documents") && o.out().contains("skipped 1 malformed lines"), o.out());
        assertEquals(2, stoker("prepare", "tokens", in.toString(), "--out", tmp.resolve("y").toString(), "--tokenizer", "llama").code());
    }

    @Test
    void benchJsonlReportsTokensPerSecond() throws IOException {
        Path in = corpus();
        MainTest.Outcome o = stoker("bench", "jsonl", in.toString(), "--seq-len", "32", "--batch", "4", "--workers", "0,2", "--json", "--digest");
        assertEquals(0, o.code(), o.err());
        var lines = o.out().lines().toList();
        assertEquals(field(lines.get(0), "digest"), field(lines.get(1), "digest"));
        assertTrue(Double.parseDouble(field(lines.get(0), "tokensPerSec")) > 0);
    }

    @Test
    void aSignalDuringPrepareLeavesNoTemporaryAndNoFinalFile() throws Exception {
        // enough text that GPT-2 tokenizing is still writing when the signal comes
        Path in = tmp.resolve("big.jsonl");
        String line = "{\"text\": \"" + "the quick brown fox jumps over the lazy dog, again and again. ".repeat(40) + "\"}\n";
        try (var w = Files.newBufferedWriter(in)) {
            for (int i = 0; i < 40_000; i++) {
                w.write(line);
            }
        }
        Path out = Files.createDirectories(tmp.resolve("out"));
        String javaBin = ProcessHandle.current().info().command().orElse("java");
        Process p = new ProcessBuilder(javaBin, "--enable-native-access=ALL-UNNAMED", "--add-modules=jdk.incubator.vector",
                "-cp", System.getProperty("java.class.path"), "dev.stoker.cli.Main", "prepare", "tokens", in.toString(),
                "--tokenizer", "gpt2", "--out", out.resolve("train").toString()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        try {
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (partials(out).isEmpty() && p.isAlive() && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertTrue(p.isAlive() && !partials(out).isEmpty(), "the run was writing its output when signalled");
            p.destroy(); // SIGTERM
            assertTrue(p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS));
        } finally {
            p.destroyForcibly();
        }
        try (var left = Files.list(out)) {
            assertEquals(java.util.List.of(), left.map(f -> f.getFileName().toString()).toList(), "nothing left, nothing half-written");
        }
    }

    @Test
    void aSigintDuringPrepareShardsLeavesNoTemporaryRunAfterRun() throws Exception {
        // small shards, so that the writer starts new ones while the shutdown hook removes the old
        Path src = tmp.resolve("images");
        java.util.Random random = new java.util.Random(7);
        for (int c = 0; c < 2; c++) {
            Path d = Files.createDirectories(src.resolve("class" + c));
            for (int i = 0; i < 2_000; i++) {
                byte[] b = new byte[2_000];
                random.nextBytes(b);
                Files.write(d.resolve(i + ".jpg"), b);
            }
        }
        String javaBin = ProcessHandle.current().info().command().orElse("java");
        for (int run = 0; run < 6; run++) {
            Path out = Files.createDirectories(tmp.resolve("out" + run));
            Process p = new ProcessBuilder(javaBin, "--enable-native-access=ALL-UNNAMED", "--add-modules=jdk.incubator.vector",
                    "-cp", System.getProperty("java.class.path"), "dev.stoker.cli.Main", "prepare", "shards", src.toString(),
                    "--out", out.resolve("s-%06d.tar").toString(), "--maxcount", "2").redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            try {
                long deadline = System.nanoTime() + 60_000_000_000L;
                while (partials(out).size() < 1 + 10 * run && p.isAlive() && System.nanoTime() < deadline) {
                    Thread.sleep(1);
                }
                assertTrue(p.isAlive(), "the run was writing its shards when signalled");
                assertEquals(0, new ProcessBuilder("kill", "-INT", Long.toString(p.pid())).start().waitFor());
                assertTrue(p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS));
            } finally {
                p.destroyForcibly();
            }
            try (var left = Files.list(out)) {
                assertEquals(java.util.List.of(), left.map(f -> f.getFileName().toString()).toList(),
                        "run " + run + ": no temporary left, no shard of a set not finished");
            }
        }
    }

    @Test
    void theRunAfterASigkillSweepsTheKilledRunsTemporaries() throws Exception {
        Path src = tmp.resolve("images");
        Path d = Files.createDirectories(src.resolve("class0"));
        java.util.Random random = new java.util.Random(9);
        for (int i = 0; i < 2_000; i++) {
            byte[] b = new byte[2_000];
            random.nextBytes(b);
            Files.write(d.resolve(i + ".jpg"), b);
        }
        Path out = Files.createDirectories(tmp.resolve("out"));
        String pattern = out.resolve("s-%06d.tar").toString();
        String javaBin = ProcessHandle.current().info().command().orElse("java");
        Process p = new ProcessBuilder(javaBin, "--enable-native-access=ALL-UNNAMED", "--add-modules=jdk.incubator.vector",
                "-cp", System.getProperty("java.class.path"), "dev.stoker.cli.Main", "prepare", "shards", src.toString(),
                "--out", pattern, "--maxcount", "2").redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        try {
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (partials(out).size() < 5 && p.isAlive() && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            assertTrue(p.isAlive(), "the run was writing its shards when killed");
            p.destroyForcibly(); // SIGKILL: no shutdown hook runs
            assertTrue(p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS));
        } finally {
            p.destroyForcibly();
        }
        assertTrue(!partials(out).isEmpty(), "a killed run leaves its temporaries");
        MainTest.Outcome o = stoker("prepare", "shards", src.toString(), "--out", pattern, "--maxcount", "1000");
        assertEquals(0, o.code(), o.err());
        try (var left = Files.list(out)) {
            assertEquals(java.util.List.of("s-000000.tar", "s-000001.tar"),
                    left.map(f -> f.getFileName().toString()).sorted().toList(), "the dead run's temporaries swept");
        }
    }

    @Test
    void aWriteThatFailsNamesTheFileInOneLineAndLeavesNothing() throws Exception {
        // a file-size limit (ulimit -f) fails writes past 64 KiB as a full disk would: the
        // system's message alone ("File too large", "No space left on device") names no file
        Path in = tmp.resolve("some.jsonl");
        String line = "{\"text\": \"" + "the quick brown fox jumps over the lazy dog. ".repeat(20) + "\"}\n";
        Files.writeString(in, line.repeat(2_000));
        Path out = Files.createDirectories(tmp.resolve("out"));
        String javaBin = ProcessHandle.current().info().command().orElse("java");
        String command = "ulimit -f 64; exec \"$0\" --enable-native-access=ALL-UNNAMED --add-modules=jdk.incubator.vector"
                + " -cp \"$1\" dev.stoker.cli.Main prepare tokens \"$2\" --out \"$3\"";
        Process p = new ProcessBuilder("bash", "-c", command, javaBin, System.getProperty("java.class.path"), in.toString(),
                out.resolve("train").toString()).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        String err = new String(p.getErrorStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).lines()
                .filter(l -> !l.startsWith("WARNING: Using incubator modules")).collect(java.util.stream.Collectors.joining("\n"));
        assertTrue(p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS));
        assertEquals(1, p.exitValue(), err);
        assertEquals("stoker: " + out.resolve("train.bin").toAbsolutePath() + ": File too large", err);
        try (var left = Files.list(out)) {
            assertEquals(java.util.List.of(), left.map(f -> f.getFileName().toString()).toList(), "nothing left, nothing half-written");
        }
    }

    private static java.util.List<Path> partials(Path dir) throws IOException {
        try (var files = Files.list(dir)) {
            return files.filter(f -> f.getFileName().toString().endsWith(".partial")).toList();
        }
    }
}
