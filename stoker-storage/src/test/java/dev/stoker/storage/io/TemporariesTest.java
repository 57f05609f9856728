package dev.stoker.storage.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class TemporariesTest {
    @TempDir
    Path tmp;

    /**
     * A process that makes a folder of its own ({@link Temporaries#folder}) in {@code args[0]},
     * with a reaper when {@code args[1]} is {@code reaper}, puts a file in it, prints its path and
     * waits to be ended.
     */
    public static void main(String[] args) throws Exception {
        Path f = Temporaries.folder(Path.of(args[0]), "stoker-test-", args[1].equals("reaper"));
        Files.writeString(f.resolve("data"), "x");
        System.out.println(f);
        System.out.flush();
        Thread.sleep(60_000);
    }

    /** A child process that holds a folder in {@link #tmp}; returns it and its folder. */
    private Process child(boolean reaper, Path[] folder) throws IOException {
        Process p = new ProcessBuilder(ProcessHandle.current().info().command().orElse("java"), "-cp",
                System.getProperty("java.class.path"), TemporariesTest.class.getName(), tmp.toString(),
                reaper ? "reaper" : "none").redirectError(ProcessBuilder.Redirect.INHERIT).start();
        folder[0] = Path.of(new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)).readLine());
        assertTrue(Files.isRegularFile(folder[0].resolve("data")), folder[0].toString());
        return p;
    }

    private static boolean goneWithin(Path p, long millis) throws InterruptedException {
        for (long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis); System.nanoTime() < end; ) {
            if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
                return true;
            }
            Thread.sleep(50);
        }
        return !Files.exists(p, LinkOption.NOFOLLOW_LINKS);
    }

    @Test
    void aFolderOfAProcessEndedBySigtermIsRemovedWithIt() throws Exception {
        Path[] folder = new Path[1];
        Process p = child(false, folder);
        p.destroy(); // SIGTERM
        p.waitFor();
        assertFalse(Files.exists(folder[0]), "removed by the shutdown hook");
    }

    @Test
    void aFolderOfAKilledProcessIsSweptByTheNextProcessThatMakesOne() throws Exception {
        Path[] folder = new Path[1];
        Process p = child(false, folder);
        p.destroyForcibly(); // SIGKILL: no hook runs
        p.waitFor();
        assertTrue(Files.exists(folder[0]), "a SIGKILL skips the hook");
        Path mine = Temporaries.folder(tmp, "stoker-test-", false);
        assertFalse(Files.exists(folder[0]), "swept");
        Temporaries.removeFolder(mine);
        assertFalse(Files.exists(mine));
    }

    @Test
    void aFolderWithAReaperIsRemovedSoonAfterItsProcessIsKilled() throws Exception {
        Path[] folder = new Path[1];
        Process p = child(true, folder);
        p.destroyForcibly(); // SIGKILL: no hook runs, no other Stoker process comes
        p.waitFor();
        assertTrue(goneWithin(folder[0], 5_000), "the reaper removed " + folder[0]);
    }

    @Test
    void aSweepTakesOnlyThisUsersFoldersAndFollowsNoLink() throws Exception {
        Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        Path target = Files.createDirectories(tmp.resolve("elsewhere"));
        Path kept = Files.writeString(target.resolve("precious"), "x");
        Path link = Files.createSymbolicLink(tmp.resolve("stoker-test-" + gone.pid() + "-1"), target);
        Path dead = Files.createDirectories(tmp.resolve("stoker-test-" + gone.pid() + "-2"));
        Files.writeString(dead.resolve("data"), "x");
        Files.createSymbolicLink(dead.resolve("out"), target); // removed as a link, not followed
        Temporaries.sweepFolders(tmp, "stoker-test-");
        assertFalse(Files.exists(dead), "a dead process's folder is swept");
        assertTrue(Files.exists(kept) && Files.isSymbolicLink(link), "links are neither followed nor taken for folders");
    }

    @Test
    void aSweepLeavesAnotherUsersFolderUnread() throws Exception {
        Assumptions.assumeTrue(FoldersTest.root(), "needs root, to give a folder to another user");
        Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        Path theirs = Files.createDirectories(tmp.resolve("stoker-test-" + gone.pid() + "-3"));
        Files.writeString(theirs.resolve("data"), "x");
        FoldersTest.giveToNobody(theirs);
        Temporaries.sweepFolders(tmp, "stoker-test-");
        assertTrue(Files.exists(theirs.resolve("data")), "another user's entry is not ours to remove");
    }

    @Test
    void aWriterSweepsTheTemporariesOfDeadProcessesOnlyAndTracksItsOwn() throws Exception {
        Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        long me = ProcessHandle.current().pid();
        Path dead = Files.createFile(tmp.resolve(".train.bin." + gone.pid() + ".123.partial"));
        Path live = Files.createFile(tmp.resolve(".train.bin." + me + ".456.partial"));
        Path other = Files.createFile(tmp.resolve(".notes.partial")); // not a name Temporaries gives: left alone
        Path mine = Temporaries.create(tmp.resolve("train.bin"));
        assertFalse(Files.exists(dead), "a dead writer's temporary is swept");
        assertTrue(Files.exists(live) && Files.exists(other) && Files.exists(mine));
        assertEquals(me, Temporaries.writer(mine.getFileName().toString()));
        assertEquals(-1, Temporaries.writer("train.bin"));
        Files.delete(mine);
        Temporaries.done(mine);
    }

    @Test
    void namesThatAreNotATemporarysHaveNoWriter() throws IOException {
        assertEquals(-1, Temporaries.writer(".a.b.partial"));
        assertEquals(-1, Temporaries.writer(".a.shard.123.x"));
        assertEquals(42, Temporaries.writer(".a.b.c.42.999.partial"));
    }
}
