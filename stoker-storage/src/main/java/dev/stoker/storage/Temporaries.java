package dev.stoker.storage;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The temporary files this process is writing (a {@link PendingFile} before its rename), removed
 * on every way out: by their writer when it finishes or fails, and by a shutdown hook when the
 * process ends first (SIGINT, SIGTERM, or {@code System.exit}). Only a SIGKILL or a crash can
 * leave one behind; the names carry the writer's pid, so that the next writer in that folder
 * sweeps those of dead processes ({@link #sweep}).
 */
final class Temporaries {
    private static final Set<Path> LIVE = ConcurrentHashMap.newKeySet();
    private static final Set<Path> SWEPT = ConcurrentHashMap.newKeySet();
    private static final long PID = ProcessHandle.current().pid();
    // NOTE [Ending]: writer threads keep running while the shutdown hook removes their temporaries,
    // and may start new ones (the next shard). A temporary is made and listed under the read lock;
    // the hook takes the write lock to mark the process as ending, so every temporary made before
    // is listed when it removes them, and none is made after.
    private static final ReentrantReadWriteLock ENDING = new ReentrantReadWriteLock();
    private static boolean ending;

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

    /** The file is renamed into place or deleted: no longer this process's to remove. */
    static void done(Path tmp) {
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
