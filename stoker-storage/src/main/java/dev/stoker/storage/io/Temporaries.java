package dev.stoker.storage.io;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The temporary files this process is writing (a {@link PendingFile} before its rename, a download's
 * reservation) and its own folders in shared places ({@link #folder}:
 * links to remote files' copies, a dataset copied into memory), removed on every way out: by their
 * writer when it finishes or fails, and by a shutdown hook when the process ends first (SIGINT,
 * SIGTERM, or {@code System.exit}). Only a SIGKILL or a crash can leave one behind; the names carry
 * the writer's pid, so that the next writer there sweeps those of dead processes ({@link #sweep},
 * {@link #sweepFolders}), and a folder can have a reaper that removes it as soon as its process
 * is gone (NOTE [Reaper]).
 */
public final class Temporaries {
    private static final Set<Path> LIVE = ConcurrentHashMap.newKeySet();
    private static final Set<Path> SWEPT = ConcurrentHashMap.newKeySet();
    private static final long PID = ProcessHandle.current().pid();
    // NOTE [Ending]: writer threads keep running while the shutdown hook removes their temporaries,
    // and may start new ones (the next shard). A temporary is made and listed under the read lock;
    // the hook takes the write lock to mark the process as ending, so every temporary made before
    // is listed when it removes them, and none is made after.
    private static final ReentrantReadWriteLock ENDING = new ReentrantReadWriteLock();
    private static boolean ending;

    /** This process's folders ({@link #folder}) and their reapers (null for none). */
    private static final java.util.Map<Path, java.util.Optional<Process>> FOLDERS = new ConcurrentHashMap<>();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            ENDING.writeLock().lock();
            try {
                ending = true;
            } finally {
                ENDING.writeLock().unlock();
            }
            for (Path p : LIVE) {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    // leaving: nothing more to do; the next writer's sweep removes it
                }
            }
            for (Path f : FOLDERS.keySet()) {
                Folders.deleteTree(f); // what is left, the reaper or the next sweep removes
            }
        }, "stoker-temporaries"));
    }

    private Temporaries() {
    }

    /**
     * A new temporary file beside {@code target}, named {@code .NAME.PID.RANDOM.partial}, removed
     * if the process ends before {@link #done}; stale ones of dead processes in that folder are
     * swept first. Refused once the process is ending.
     */
    static Path create(Path target) throws IOException {
        Path dir = target.toAbsolutePath().getParent();
        sweep(dir);
        ENDING.readLock().lock();
        try {
            if (ending) {
                throw new IOException(target + ": not written: the process is ending");
            }
            Path tmp = Files.createTempFile(dir, "." + target.getFileName() + "." + PID + ".", ".partial");
            LIVE.add(tmp);
            return tmp;
        } finally {
            ENDING.readLock().unlock();
        }
    }

    /** A temporary named by its writer (a shard cache's download reservation): removed if the process ends first. */
    public static void track(Path tmp) {
        LIVE.add(tmp);
    }

    /** The file is renamed into place or deleted: no longer this process's to remove. */
    public static void done(Path tmp) {
        LIVE.remove(tmp);
    }

    /** Removes, once per folder and process, the temporaries there whose writer's process is gone. */
    static void sweep(Path dir) {
        if (!SWEPT.add(dir)) {
            return;
        }
        try (var files = Files.list(dir)) {
            for (Path p : files.toList()) {
                long pid = writer(p.getFileName().toString());
                if (pid > 0 && pid != PID && !ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
                    Files.deleteIfExists(p);
                }
            }
        } catch (IOException e) {
            // an unreadable folder: its writer's own error says so
        }
    }

    /**
     * A new folder of this process's in {@code parent} (a folder every user shares, such as
     * {@code /tmp} or {@code /dev/shm}), named {@code PREFIX + PID + "-" + RANDOM}: created
     * {@code 0700} under a name no other entry has (NOTE [Folders of one's own]), and removed with
     * all it holds by {@link #removeFolder}, or by a shutdown hook when the process ends first
     * (SIGINT, SIGTERM). Before it is made, the folders of {@code prefix} that dead processes of
     * this user left there (a SIGKILL) are swept ({@link #sweepFolders}).
     *
     * <p>NOTE [Reaper]: with {@code reaper}, a tiny child process ({@code sh}) waits for this one
     * to end and then removes the folder: what a SIGKILL or a crash leaves (a copy of a whole
     * dataset in memory) is gone a second later, whether or not Stoker ever runs again. It ignores
     * the terminal's signals (SIGINT, SIGTERM, SIGHUP), so that a Ctrl-C that ends both leaves it
     * to finish; it removes only a folder this user owns and never follows a link, and
     * {@link #removeFolder} ends it. A kill of the whole process group by SIGKILL ends it too:
     * then the next sweep removes the folder.
     */
    public static Path folder(Path parent, String prefix, boolean reaper) throws IOException {
        sweepFolders(parent, prefix);
        Path f = Files.createTempDirectory(parent, prefix + PID + "-"); // created exclusively, 0700, retried on a taken name
        FOLDERS.put(f, java.util.Optional.empty());
        if (reaper) {
            FOLDERS.put(f, java.util.Optional.ofNullable(reaper(f)));
        }
        return f;
    }

    /** The reaper of {@code folder} (NOTE [Reaper]), or null where none can be started. */
    private static Process reaper(Path folder) {
        String script = "trap '' INT TERM HUP; while kill -0 " + PID + " 2>/dev/null; do sleep 1; done; "
                + "if [ ! -L \"$0\" ] && [ -O \"$0\" ]; then rm -rf -- \"$0\"; fi";
        try {
            return new ProcessBuilder("sh", "-c", script, folder.toString())
                    .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
        } catch (IOException | RuntimeException e) {
            return null; // no shell: the shutdown hook and the next sweep remain
        }
    }

    /** Removes a folder of {@link #folder} with all it holds, and ends its reaper. Idempotent. */
    public static void removeFolder(Path folder) {
        Folders.deleteTree(folder);
        java.util.Optional<Process> reaper = FOLDERS.remove(folder);
        if (reaper != null) {
            reaper.ifPresent(Process::destroyForcibly);
        }
    }

    /**
     * Removes the folders {@code PREFIX + PID + "-…"} in {@code parent} whose process is gone.
     * Only this user's folders are touched (another user's entries there are not read, whatever
     * their names), links are not followed, and an entry that vanishes or resists is left.
     */
    public static void sweepFolders(Path parent, String prefix) {
        try (var entries = Files.newDirectoryStream(parent, prefix + "*")) {
            for (Path p : entries) {
                String n = p.getFileName().toString();
                int dash = n.indexOf('-', prefix.length());
                long pid;
                try {
                    pid = Long.parseLong(n.substring(prefix.length(), dash < 0 ? n.length() : dash));
                } catch (NumberFormatException e) {
                    continue; // not a name Stoker gives
                }
                if (pid != PID && !ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)
                        && Folders.ours(p) && Files.isDirectory(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                    Folders.deleteTree(p);
                }
            }
        } catch (IOException | RuntimeException e) {
            // an unreadable folder: nothing of ours to sweep there
        }
    }

    /** The pid in a temporary's name ({@code .NAME.PID.RANDOM.partial}), or -1 for any other name. */
    static long writer(String name) {
        if (!name.startsWith(".") || !name.endsWith(".partial")) {
            return -1;
        }
        String[] parts = name.substring(0, name.length() - ".partial".length()).split("\\.");
        if (parts.length < 4) {
            return -1;
        }
        try {
            return Long.parseLong(parts[parts.length - 2]);
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
