package dev.stoker.formats.io;

import dev.stoker.storage.io.PendingFile;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * An index kept beside the file it describes, as {@code FILE.SUFFIX}, or, when that folder is
 * read-only, in {@code $STOKER_INDEX_DIR} (default {@code $XDG_CACHE_HOME/stoker/index}, that is
 * {@code ~/.cache/stoker/index}). The tar index
 * and the JSON-lines line index are both kept this way: a stored one is used when it proves it
 * belongs to the file, and otherwise it is built again and stored where it can be.
 */
public final class Sidecar {
    private Sidecar() {
    }

    /** Reads a stored index; null when it is stale, not this file's, or unreadable. */
    @FunctionalInterface
    public interface Load<T> {
        T load(Path stored) throws IOException;
    }

    /** Builds the index from the file itself. */
    @FunctionalInterface
    public interface Build<T> {
        T build() throws IOException;
    }

    /** Writes an index for {@link #load} to read back. */
    @FunctionalInterface
    public interface Store<T> {
        void store(T index, OutputStream out) throws IOException;
    }

    /**
     * The stored index of {@code file} when one loads, else one built and then stored in the first
     * place that takes it (written atomically: a reader never sees half an index). An index that
     * cannot be stored anywhere is still returned, and built again next time.
     */
    public static <T> T of(Path file, String suffix, Load<T> load, Build<T> build, Store<T> store) throws IOException {
        return of(file, suffix, true, load, build, store);
    }

    /**
     * As {@link #of(Path, String, Load, Build, Store)}, but kept beside the file only when
     * {@code beside} (a file the user keeps read-only gets its index in the cache alone).
     */
    public static <T> T of(Path file, String suffix, boolean beside, Load<T> load, Build<T> build, Store<T> store)
            throws IOException {
        List<Path> places = beside ? places(file, suffix) : places(file, suffix).subList(1, 2);
        for (Path p : places) {
            if (Files.isRegularFile(p)) {
                T stored = load.load(p);
                if (stored != null) {
                    return stored;
                }
            }
        }
        T built = build.build();
        for (Path p : places) {
            try {
                Files.createDirectories(p.toAbsolutePath().getParent());
                PendingFile.write(p, out -> store.store(built, out));
                break;
            } catch (IOException e) {
                // not writable here: try the next place
            }
        }
        return built;
    }

    /**
     * Where the index of {@code file} may be: beside it, then in {@code $STOKER_INDEX_DIR}, by
     * default the user's cache ({@code $XDG_CACHE_HOME/stoker/index}, {@code ~/.cache/stoker/index}).
     */
    public static List<Path> places(Path file, String suffix) {
        Path abs = file.toAbsolutePath();
        String dir = System.getenv("STOKER_INDEX_DIR");
        Path indexes = dir != null && !dir.isBlank() ? Path.of(dir)
                : dev.stoker.storage.io.UserCache.dir("index");
        String id = Integer.toHexString(abs.toString().hashCode()) + "-" + abs.getFileName();
        return List.of(Path.of(abs + "." + suffix), indexes.resolve(id + "." + suffix));
    }
}
