package dev.stoker.formats.io;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A whole file mapped read-only into memory, any size (the FFM API maps past 2 GiB in one
 * segment). The mapping lives in a shared arena owned by this object: {@link #close()} unmaps it
 * (idempotent); reading the segment afterwards throws {@link IllegalStateException}, never crashes.
 */
public final class MappedFile implements AutoCloseable {
    private final Path path;
    private final Arena arena;
    private final MemorySegment segment;
    private boolean closed;

    private MappedFile(Path path, Arena arena, MemorySegment segment) {
        this.path = path;
        this.arena = arena;
        this.segment = segment;
    }

    public static MappedFile open(Path path) throws IOException {
        if (!java.nio.file.Files.isRegularFile(path)) {
            // a directory, a device or a pipe maps as nothing, or fails with the system's words alone
            throw java.nio.file.Files.exists(path) ? new IOException(path + ": not a regular file (a directory, device or pipe)")
                    : new java.nio.file.NoSuchFileException(path.toString());
        }
        Arena arena = Arena.ofShared();
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            long size = ch.size();
            MemorySegment seg = size == 0 ? MemorySegment.NULL.reinterpret(0) : ch.map(FileChannel.MapMode.READ_ONLY, 0, size, arena);
            return new MappedFile(path, arena, seg);
        } catch (IOException | RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    public Path path() {
        return path;
    }

    /** The file's name for error messages. */
    public String name() {
        Path f = path.getFileName();
        return f == null ? path.toString() : f.toString();
    }

    public MemorySegment segment() {
        return segment;
    }

    public long size() {
        return segment.byteSize();
    }

    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            arena.close();
        }
    }

    @Override
    public String toString() {
        return path.toString();
    }
}
