package dev.stoker.storage.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The one way Stoker writes a file: whole or not at all, over a regular file or nothing. */
public class PendingFileTest {
    @TempDir
    Path tmp;

    /** A named pipe at {@code p}: it stands for any file that is not a regular one (a device such as /dev/null too). */
    public static Path fifo(Path p) throws IOException, InterruptedException {
        assertEquals(0, new ProcessBuilder("mkfifo", p.toString()).inheritIO().start().waitFor(), "mkfifo " + p);
        return p;
    }

    public static boolean isFifo(Path p) throws IOException {
        return Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).isOther();
    }

    private List<String> names() throws IOException {
        try (var files = Files.list(tmp)) {
            return files.map(f -> f.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void aLinkAnotherUserPlantedIsNotWrittenThrough() throws IOException {
        org.junit.jupiter.api.Assumptions.assumeTrue("root".equals(System.getProperty("user.name")), "needs root, to give a link away");
        Path precious = Files.writeString(tmp.resolve("precious"), "mine");
        Path link = Files.createSymbolicLink(tmp.resolve("out.json"), precious);
        Files.getFileAttributeView(link, java.nio.file.attribute.PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                .setOwner(link.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody"));
        IOException e = assertThrows(IOException.class, () -> PendingFile.write(link, out -> out.write("theirs".getBytes())));
        assertTrue(e.getMessage().contains("a link another user made"), e.getMessage());
        assertEquals("mine", Files.readString(precious));
    }

    @Test
    void aFifoAtTheTargetIsRefusedNamingItAndStaysAFifo() throws Exception {
        Path pipe = fifo(tmp.resolve("state.json"));
        IOException e = assertThrows(IOException.class, () -> PendingFile.write(pipe, out -> out.write(1)));
        assertEquals(pipe + ": not a regular file; refusing to replace it", e.getMessage());
        assertTrue(isFifo(pipe));
        assertEquals(List.of("state.json"), names(), "no temporary left beside it");
    }

    @Test
    void aFolderAtTheTargetIsRefusedNamingIt() throws Exception {
        Path dir = Files.createDirectory(tmp.resolve("plot.png"));
        IOException e = assertThrows(IOException.class, () -> new PendingFile(dir));
        assertEquals(dir + ": not a regular file; refusing to replace it", e.getMessage());
        assertTrue(Files.isDirectory(dir));
    }

    @Test
    void aLinkToAFifoIsRefusedAndALinkToARegularFileHasThatFileReplaced() throws Exception {
        Path pipe = fifo(tmp.resolve("pipe"));
        Path toPipe = Files.createSymbolicLink(tmp.resolve("to-pipe"), pipe);
        assertThrows(IOException.class, () -> PendingFile.write(toPipe, out -> out.write(1)));
        assertTrue(isFifo(pipe) && Files.isSymbolicLink(toPipe));

        Path file = Files.writeString(tmp.resolve("file"), "old");
        Path toFile = Files.createSymbolicLink(tmp.resolve("to-file"), file);
        PendingFile.write(toFile, out -> out.write(new byte[] {'n', 'e', 'w'}));
        assertTrue(Files.isSymbolicLink(toFile), "the link stays");
        assertArrayEquals("new".getBytes(), Files.readAllBytes(file));
    }

    @Test
    void aFifoPutAtTheTargetWhileTheFileIsWrittenIsNotReplaced() throws Exception {
        Path target = tmp.resolve("trace.json");
        PendingFile f = new PendingFile(target);
        f.out().write(1);
        fifo(target);
        IOException e = assertThrows(IOException.class, f::commit);
        assertEquals(target + ": not a regular file; refusing to replace it", e.getMessage());
        assertTrue(isFifo(target));
        assertEquals(List.of("trace.json"), names(), "the temporary is removed");
    }

    @Test
    void aTemporaryOfADeadWriterIsSweptByTheNextWriterInItsFolder() throws Exception {
        Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        Path dead = Files.createFile(tmp.resolve(".state.json." + gone.pid() + ".77.partial"));
        PendingFile.write(tmp.resolve("other.bin"), out -> out.write(1));
        assertFalse(Files.exists(dead));
        assertEquals(List.of("other.bin"), names());
    }
}
