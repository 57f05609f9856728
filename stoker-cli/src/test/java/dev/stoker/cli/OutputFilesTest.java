package dev.stoker.cli;

import static dev.stoker.cli.MainTest.stoker;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every file a command writes replaces a regular file or nothing: a FIFO or a folder at an output
 * path (as a device such as /dev/null would be) is refused in one line, exit 1, and left as it was.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD) // opening a FIFO to write waits for a reader
class OutputFilesTest {
    @TempDir
    Path tmp;

    private static final String[] BENCH = {"bench", "synthetic", "--samples", "64", "--batch", "8"};

    private Path fifo(String name) throws Exception {
        Path p = tmp.resolve(name);
        assertEquals(0, new ProcessBuilder("mkfifo", p.toString()).start().waitFor());
        return p;
    }

    private static boolean isFifo(Path p) throws IOException {
        return Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).isOther();
    }

    private static void refused(MainTest.Outcome o, Path p) {
        assertEquals(1, o.code(), o.err());
        assertEquals("stoker: " + p + ": not a regular file; refusing to replace it\n", o.err());
    }

    private static String[] bench(String... more) {
        return MainTest.concat(BENCH, more);
    }

    @Test
    void benchSaveStateOntoAFifoIsRefusedAndTheFifoStays() throws Exception {
        Path p = fifo("state.json");
        refused(stoker(bench("--stop-after", "2", "--save-state", p.toString())), p);
        assertTrue(isFifo(p));
    }

    @Test
    void benchTraceOntoAFifoIsRefusedAndTheFifoStays() throws Exception {
        Path p = fifo("trace.json");
        refused(stoker(bench("--trace", p.toString())), p);
        assertTrue(isFifo(p));
    }

    @Test
    void benchPlotOntoAFolderIsRefused() throws Exception {
        Path p = Files.createDirectory(tmp.resolve("plot.png"));
        refused(stoker(bench("--plot", p.toString())), p);
        assertTrue(Files.isDirectory(p));
    }

    @Test
    void benchDigestsOntoAFifoIsRefusedAndTheFifoStays() throws Exception {
        Path p = fifo("digests.txt");
        refused(stoker(bench("--digests", p.toString())), p);
        assertTrue(isFifo(p));
    }

    @Test
    void showOutOntoAFifoIsRefusedAndTheFifoStays() throws Exception {
        Path p = fifo("grid.png");
        refused(stoker("show", "mds", "../stoker-formats/src/test/resources/interop/mds/all", "--image", "jpeg",
                "--limit", "2", "--out", p.toString()), p);
        assertTrue(isFifo(p));
    }

    @Test
    void inspectPlotOntoAFifoIsRefusedAndTheFifoStays() throws Exception {
        Path data = tmp.resolve("t.bin");
        Files.write(data, new byte[64]);
        Path p = fifo("plot.png");
        refused(stoker("inspect", data.toString(), "--plot", p.toString()), p);
        assertTrue(isFifo(p));
    }

    @Test
    void aWrittenPlotLeavesNoTemporaryBesideIt() throws Exception {
        Path p = tmp.resolve("sweep.png");
        MainTest.Outcome o = stoker(bench("--workers", "0,1", "--plot", p.toString()));
        assertEquals(0, o.code(), o.err());
        try (var files = Files.list(tmp)) {
            assertEquals(java.util.List.of(p), files.toList(), "the plot, at the name given, and nothing else");
        }
    }
}
