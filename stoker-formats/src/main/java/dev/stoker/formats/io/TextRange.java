package dev.stoker.formats.io;

import dev.stoker.storage.Locations;
import dev.stoker.storage.Storage;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A piece of a text file that a reader can take on its own: bytes {@code [start, end)} of an
 * uncompressed JSON lines file, starting just after a newline, or a whole file ({@code start} 0,
 * {@code end} -1). The file is a location {@link Storage} opens: a local path, an
 * {@code s3://} or {@code http(s)://} URL. {@link #cut} cuts files into such pieces, so that
 * several readers (a loader's workers, a Spark job's tasks) read one file in parallel, and the
 * pieces in order read every document once, in the file's order. A value: it travels to a Spark
 * task as it is.
 */
public record TextRange(String location, long start, long end) implements java.io.Serializable {

    public TextRange {
        java.util.Objects.requireNonNull(location, "location");
        if (start < 0 || (end >= 0 && end < start)) {
            throw new IllegalArgumentException(location + ": a range [" + start + ", " + end + ") is not one");
        }
    }

    /** The whole of {@code location}. */
    public static TextRange whole(String location) {
        return new TextRange(location, 0, -1);
    }

    public static TextRange whole(Path path) {
        return whole(path.toString());
    }

    public boolean isWhole() {
        return start == 0 && end < 0;
    }

    /** Its documents, the bytes read counted into {@code bytesRead}. */
    public TextDocuments open(String field, AtomicLong bytesRead) throws IOException {
        return new TextDocuments(location, field, bytesRead, start, end);
    }

    /** Bytes of the file it covers (the file's size when whole). */
    public long bytes() throws IOException {
        return isWhole() ? Storage.size(location) : end - start;
    }

    @Override
    public String toString() {
        return isWhole() ? location : location + "[" + start + ".." + end + ")";
    }

    /** {@link #cut(List, long)} of local files. */
    public static List<TextRange> cutFiles(List<Path> files, long pieceBytes) throws IOException {
        return cut(files.stream().map(Path::toString).toList(), pieceBytes);
    }

    /**
     * {@code locations} in order, an uncompressed JSON lines file larger than {@code pieceBytes}
     * cut into ranges of about that many bytes, each ending just after a newline (found by ranged
     * reads, wherever the file is); a compressed or a text ({@code .txt}) file is one piece.
     */
    public static List<TextRange> cut(List<String> locations, long pieceBytes) throws IOException {
        if (pieceBytes < 1) {
            throw new IllegalArgumentException("pieceBytes must be >= 1, got " + pieceBytes);
        }
        List<TextRange> out = new ArrayList<>();
        for (String f : locations) {
            String name = Locations.baseName(f);
            long size = Storage.size(f);
            boolean plainLines = name.endsWith(".jsonl") || name.endsWith(".ndjson") || name.endsWith(".json");
            if (!plainLines || size <= pieceBytes || compressed(f, size)) {
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

    /** Whether the file starts with a compressed format's magic bytes. */
    private static boolean compressed(String location, long size) throws IOException {
        int n = (int) Math.min(16, size);
        try (InputStream in = Storage.open(location, 0, n)) {
            return Compression.of(in.readNBytes(n)) != null;
        }
    }

    /** The offset just after the first newline at or after {@code at} (or the file's size). */
    private static long nextLineStart(String location, long at, long size) throws IOException {
        byte[] b = new byte[1 << 16];
        long pos = at;
        while (pos < size) {
            int n;
            try (InputStream in = Storage.open(location, pos, Math.min(b.length, size - pos))) {
                n = in.readNBytes(b, 0, (int) Math.min(b.length, size - pos));
            }
            if (n <= 0) {
                break;
            }
            for (int i = 0; i < n; i++) {
                if (b[i] == '\n') {
                    return pos + i + 1;
                }
            }
            pos += n;
        }
        return size;
    }
}
