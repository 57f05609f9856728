package dev.stoker.formats.io;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Path;

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
        PendingFile f = new PendingFile(target);
        try {
            body.write(f.out());
            f.commit();
        } finally {
            f.abandon();
        }
    }
}
