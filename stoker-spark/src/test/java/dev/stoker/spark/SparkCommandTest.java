package dev.stoker.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The command as a user runs it: a job that fails says why in one line; {@code --debug} adds Spark's log of the failed task. */
class SparkCommandTest {
    @TempDir
    Path dir;

    private List<String> run(String... args) throws Exception {
        // the flags the stoker launcher runs the module's jar with
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--sun-misc-unsafe-memory-access=allow"));
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (a.startsWith("--add-opens") || a.startsWith("--add-exports") || a.startsWith("--enable-native-access")) {
                cmd.add(a); // what Spark needs on this JDK, as the tests run it
            }
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Main.class.getName()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the job did not end");
        assertEquals(1, p.exitValue(), err);
        // the JVM's own notes on the test run's --add-opens of packages this JDK no longer has are not the command's
        // and each line as a terminal shows it: what follows its last carriage return (Spark's progress bar redraws so)
        return java.util.Arrays.stream(err.split("\n")).map(l -> l.substring(l.lastIndexOf('\r') + 1))
                .filter(l -> !l.isBlank() && !l.startsWith("WARNING: package ")).toList();
    }

    @Test
    void aFailedJobSaysItsCauseInOneLine() throws Exception {
        Path bad = dir.resolve("bad.jsonl");
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < 200; i++) {
            s.append(i == 150 ? "{\"text\": \"unterminated}\n" : "{\"text\": \"document " + i + "\"}\n");
        }
        Files.writeString(bad, s);
        List<String> err = run("prepare", "tokens", bad.toString(), "--out", dir.resolve("out").toString(), "--spark", "local[1]");
        assertEquals(1, err.size(), String.join("\n", err));
        assertTrue(err.get(0).startsWith("stoker: " + bad + ": line ") && err.get(0).contains("malformed JSON"), err.get(0));
        List<String> debug = run("prepare", "tokens", bad.toString(), "--out", dir.resolve("out").toString(), "--spark", "local[1]",
                "--debug");
        assertTrue(debug.size() > 10 && debug.stream().anyMatch(l -> l.contains("Executor")), String.join("\n", debug));
    }
}
