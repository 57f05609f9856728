package dev.stoker.formats.text;

import dev.stoker.formats.io.Compression;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A piece of a text file that a reader can take on its own: bytes {@code [start, end)} of an
 * uncompressed JSON lines file, starting just after a newline, or a whole file ({@code start} 0,
 * {@code end} -1). {@link #cut} cuts files into such pieces, so that several readers (a loader's
 * workers, a Spark job's tasks) read one file in parallel, and the pieces in order read every
 * document once, in the file's order.
 */
public record TextRange(Path path, long start, long end) {

    public TextRange {
        java.util.Objects.requireNonNull(path, "path");
        if (start < 0 || (end >= 0 && end < start)) {
            throw new IllegalArgumentException(path + ": a range [" + start + ", " + end + ") is not one");
        }
    }

    /** The whole of {@code path}. */
    public static TextRange whole(Path path) {
        return new TextRange(path, 0, -1);
    }

    public boolean isWhole() {
        return start == 0 && end < 0;
    }

    /** Its documents, the bytes read counted into {@code bytesRead}. */
    public TextDocuments open(String field, AtomicLong bytesRead) throws IOException {
        return isWhole() ? new TextDocuments(path, field, bytesRead) : new TextDocuments(path, field, bytesRead, start, end);
    }

    /** Bytes of the file it covers (the file's size when whole). */
    public long bytes() throws IOException {
        return isWhole() ? Files.size(path) : end - start;
    }

    @Override
    public String toString() {
        return isWhole() ? path.toString() : path + "[" + start + ".." + end + ")";
    }

    /**
     * {@code files} in order, an uncompressed JSON lines file larger than {@code pieceBytes} cut
     * into ranges of about that many bytes, each ending just after a newline; a compressed or a
     * text ({@code .txt}) file is one piece.
     */
    public static List<TextRange> cut(List<Path> files, long pieceBytes) throws IOException {
        if (pieceBytes < 1) {
            throw new IllegalArgumentException("pieceBytes must be >= 1, got " + pieceBytes);
        }
        List<TextRange> out = new ArrayList<>();
        for (Path f : files) {
            String name = f.getFileName().toString();
            long size = Files.size(f);
            boolean plainLines = name.endsWith(".jsonl") || name.endsWith(".ndjson") || name.endsWith(".json");
            if (!plainLines || Compression.of(f) != null || size <= pieceBytes) {
                out.add(whole(f));
                continue;
            }
            long start = 0;
            while (start < size) {
                long end = start + pieceBytes >= size ? size : nextLineStart(f, start + pieceBytes, size);
                out.add(new TextRange(f, start, end));
                start = end;
            }
        }
        return out;
    }

    /** The offset just after the first newline at or after {@code at} (or the file's size). */
    private static long nextLineStart(Path f, long at, long size) throws IOException {
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
            ByteBuffer b = ByteBuffer.allocate(1 << 16);
            long pos = at;
            while (pos < size) {
                b.clear();
                int n = ch.read(b, pos);
                if (n <= 0) {
                    break;
                }
                for (int i = 0; i < n; i++) {
                    if (b.get(i) == '\n') {
                        return pos + i + 1;
                    }
                }
                pos += n;
            }
            return size;
        }
    }
}
