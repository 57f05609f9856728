package dev.stoker.formats;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * Writes a file so that no reader ever sees a partial one: into a temporary file beside it,
 * flushed to disk, then renamed into place. An interrupted write leaves only a hidden temporary.
 */
public final class AtomicFile {
    private AtomicFile() {
    }

    @FunctionalInterface
    public interface Body {
        void write(OutputStream out) throws IOException;
    }

    public static void write(Path target, Body body) throws IOException {
        Path abs = target.toAbsolutePath();
        Path dir = abs.getParent();
        Path tmp = Files.createTempFile(dir, "." + abs.getFileName(), ".partial");
        boolean done = false;
        try {
            try (var ch = java.nio.channels.FileChannel.open(tmp, java.nio.file.StandardOpenOption.WRITE);
                 OutputStream out = new BufferedOutputStream(java.nio.channels.Channels.newOutputStream(ch), 1 << 20)) {
                body.write(out);
                out.flush();
                ch.force(true);
            }
            Files.move(tmp, abs, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            done = true;
        } finally {
            if (!done) {
                Files.deleteIfExists(tmp);
            }
        }
    }
}
