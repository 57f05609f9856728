package dev.stoker.storage;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The temporary files this process is writing (a file being written under a hidden name before
 * its atomic rename, a download in progress), removed on every way out: by their writer when it
 * finishes or fails, and by a shutdown hook when the process ends first (SIGINT, SIGTERM, or
 * {@code System.exit}). Only a SIGKILL or a crash can leave one behind; the names carry the
 * writer's pid, so that the next writer in that folder sweeps those of dead processes
 * ({@link #sweep}).
 */
public final class Temporaries {
    private static final Set<Path> LIVE = ConcurrentHashMap.newKeySet();
    private static final Set<Path> SWEPT = ConcurrentHashMap.newKeySet();
    private static final long PID = ProcessHandle.current().pid();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
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
     * swept first.
     */
    public static Path create(Path target) throws IOException {
        Path dir = target.toAbsolutePath().getParent();
        sweep(dir);
        Path tmp = Files.createTempFile(dir, "." + target.getFileName() + "." + PID + ".", ".partial");
        LIVE.add(tmp);
        return tmp;
    }

    /** A temporary named by its writer (a shard cache's download): removed if the process ends first. */
    public static void track(Path tmp) {
        LIVE.add(tmp);
    }

    /** The file is renamed into place or deleted: no longer this process's to remove. */
    public static void done(Path tmp) {
        LIVE.remove(tmp);
    }

    /** Removes, once per folder and process, the temporaries there whose writer's process is gone. */
    public static void sweep(Path dir) {
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
