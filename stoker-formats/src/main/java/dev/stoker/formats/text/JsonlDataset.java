package dev.stoker.formats.text;

import dev.stoker.CorruptShardException;
import dev.stoker.Dataset;
import dev.stoker.formats.io.Fingerprints;
import dev.stoker.formats.io.JsonLine;
import dev.stoker.formats.io.MappedFile;
import dev.stoker.formats.io.Sidecar;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * An uncompressed JSON lines file as a random-access dataset: sample {@code i} is line {@code i}
 * (blank lines excepted), as a slice of the mapped file. The offsets of the lines are found in one
 * pass and kept beside the file as {@code FILE.lines} (or in {@code ~/.cache/stoker/index}),
 * rebuilt when the file's size or mtime changes. {@link #text(String)} turns a line into the
 * UTF-8 text of one of its fields; a malformed line is an error naming the file and line (or,
 * under {@code ErrorPolicy.SKIP_SAMPLE}, a skipped sample).
 */
public final class JsonlDataset implements Dataset<MemorySegment>, AutoCloseable {
    private static final long MAGIC = 0x53544b4c494e4531L; // "STKLINE1"

    private final MappedFile file;
    private final long[] starts;   // line i is [starts[i], ends[i])
    private final long[] ends;
    private final long[] lineNumbers;

    public JsonlDataset(Path path) throws IOException {
        String n = path.getFileName().toString();
        if (n.endsWith(".gz") || n.endsWith(".zst")) {
            throw new IllegalArgumentException(path + ": a compressed file has no random access; read it as a stream "
                    + "(TextStream) or decompress it");
        }
        this.file = MappedFile.open(path);
        try {
            long[][] idx = index(path, file);
            this.starts = idx[0];
            this.ends = idx[1];
            this.lineNumbers = idx[2];
        } catch (IOException | RuntimeException e) {
            file.close();
            throw e;
        }
    }

    private static long[][] index(Path path, MappedFile file) throws IOException {
        long size = Files.size(path);
        long mtime = Files.getLastModifiedTime(path).toMillis();
        return Sidecar.of(path, "lines", p -> {
            long[][] idx = load(p, size, mtime);
            return idx != null && boundsLines(file.segment(), idx) ? idx : null;
        }, () -> scan(file.segment()), (idx, out) -> store(out, idx, size, mtime));
    }

    /** Lines whose bounds a stored index is checked against in the file it claims. */
    private static final int CHECKED_LINES = 64;

    /**
     * Whether a stored index still bounds lines of the file: for {@link #CHECKED_LINES} of its
     * lines, spread evenly, a newline (or the file's start) just before the line and one (or
     * {@code \r}, or the file's end) just after it. A file rewritten with the same size and
     * mtime but other lines fails this, and is indexed again instead of read at stale offsets.
     */
    private static boolean boundsLines(MemorySegment s, long[][] idx) {
        long size = s.byteSize();
        int n = idx[0].length;
        for (int i = 0; i < Math.min(n, CHECKED_LINES); i++) {
            int k = (int) ((long) i * n / Math.min(n, CHECKED_LINES));
            long start = idx[0][k];
            long end = idx[1][k];
            if (start < 0 || end < start || end > size) {
                return false;
            }
            boolean before = start == 0 || s.get(ValueLayout.JAVA_BYTE, start - 1) == '\n';
            byte after = end == size ? (byte) '\n' : s.get(ValueLayout.JAVA_BYTE, end);
            if (!before || after != '\n' && after != '\r') {
                return false;
            }
        }
        return true;
    }

    private static long[][] scan(MemorySegment s) {
        long n = s.byteSize();
        long[] st = new long[1024];
        long[] en = new long[1024];
        long[] ln = new long[1024];
        int count = 0;
        long line = 0;
        long start = 0;
        for (long i = 0; i <= n; i++) {
            if (i == n || s.get(ValueLayout.JAVA_BYTE, i) == '\n') {
                line++;
                long end = i;
                if (end > start && s.get(ValueLayout.JAVA_BYTE, end - 1) == '\r') {
                    end--;
                }
                boolean blank = true;
                for (long k = start; k < end && blank; k++) {
                    byte c = s.get(ValueLayout.JAVA_BYTE, k);
                    blank = c == ' ' || c == '\t';
                }
                if (!blank) {
                    if (count == st.length) {
                        st = Arrays.copyOf(st, count * 2);
                        en = Arrays.copyOf(en, count * 2);
                        ln = Arrays.copyOf(ln, count * 2);
                    }
                    st[count] = start;
                    en[count] = end;
                    ln[count] = line;
                    count++;
                }
                start = i + 1;
            }
        }
        return new long[][] {Arrays.copyOf(st, count), Arrays.copyOf(en, count), Arrays.copyOf(ln, count)};
    }

    private static void store(java.io.OutputStream o, long[][] idx, long size, long mtime) throws IOException {
        DataOutputStream out = new DataOutputStream(o);
        out.writeLong(MAGIC);
        out.writeLong(size);
        out.writeLong(mtime);
        out.writeInt(idx[0].length);
        for (int i = 0; i < idx[0].length; i++) {
            out.writeLong(idx[0][i]);
            out.writeLong(idx[1][i]);
            out.writeLong(idx[2][i]);
        }
        out.flush();
    }

    private static long[][] load(Path p, long size, long mtime) {
        if (!Files.isRegularFile(p)) {
            return null;
        }
        try (DataInputStream in = new DataInputStream(new java.io.BufferedInputStream(Files.newInputStream(p)))) {
            if (in.readLong() != MAGIC || in.readLong() != size || in.readLong() != mtime) {
                return null;
            }
            int n = in.readInt();
            if (n < 0 || n > size + 1) {
                return null; // more lines than bytes: not this file's index
            }
            long[][] idx = new long[3][n];
            for (int i = 0; i < n; i++) {
                idx[0][i] = in.readLong();
                idx[1][i] = in.readLong();
                idx[2][i] = in.readLong();
            }
            return idx;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** A hash of the file's ends and size, with its count of lines. */
    @Override
    public long fingerprint() {
        return Fingerprints.ends(file.segment()) ^ (long) starts.length << 40;
    }

    @Override
    public long size() {
        return starts.length;
    }

    @Override
    public String name() {
        return file.path().toString();
    }

    /** The line number (from 1) of sample {@code i}. */
    public long line(long i) {
        return lineNumbers[Math.toIntExact(i)];
    }

    @Override
    public MemorySegment get(long index) {
        int i = Math.toIntExact(index);
        return file.segment().asSlice(starts[i], ends[i] - starts[i]);
    }

    /**
     * The UTF-8 text of string field {@code field} of a line, for {@code Loader.builder(dataset,
     * transform, collator)}. Errors name the file and the line.
     */
    public dev.stoker.Transform<MemorySegment, byte[]> text(String field) {
        ThreadLocal<JsonLine> parsers = ThreadLocal.withInitial(() -> new JsonLine(field));
        return (line, ctx) -> {
            byte[] bytes = line.toArray(ValueLayout.JAVA_BYTE);
            JsonLine j = parsers.get();
            long number = lineNumbers[Arrays.binarySearch(starts, line.address() - file.segment().address())];
            try {
                if (!j.parse(bytes, 0, bytes.length)) {
                    throw new CorruptShardException(name(), -1, "line " + number + ": no string field '" + field + "'");
                }
            } catch (JsonLine.Malformed e) {
                throw new CorruptShardException(name(), -1, "line " + number + ": " + (e.getMessage().contains("UTF-8") ? ""
                        : "malformed JSON: ") + e.getMessage());
            }
            return Arrays.copyOfRange(j.value(), j.offset(), j.offset() + j.length());
        };
    }

    @Override
    public void close() {
        file.close();
    }
}
