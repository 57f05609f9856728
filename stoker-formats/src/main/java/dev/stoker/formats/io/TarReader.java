package dev.stoker.formats.io;

import dev.stoker.CorruptShardException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Reads the members of a tar archive front to back: POSIX ustar, GNU (long names, base-256
 * sizes) and PAX (extended headers for path and size). Only regular files are returned;
 * directories, links and other members are skipped; empty files are kept. {@link #open} sees
 * gzip, zstd and lz4 (frame) compression by magic bytes (a suffix alone is not trusted), and refuses
 * bzip2 and xz by name.
 *
 * <p>Errors are {@link CorruptShardException}s naming the shard and the byte offset (in the
 * uncompressed archive): a bad header checksum, a member cut short, garbage after the end, and
 * an archive with no end-of-archive blocks (an empty file, or one cut between two members).
 */
public final class TarReader implements AutoCloseable {
    public static final int BLOCK = 512;
    /** Headers that carry names (GNU L/K, PAX x/g) are small; a larger one is corrupt. */
    private static final long MAX_HEADER_DATA = 1 << 20;

    /** A regular file of the archive; {@code data} is null when it was skipped rather than read. */
    public record Member(String name, long headerOffset, long dataOffset, long size, byte[] data) {
    }

    private final InputStream in;
    private final String shard;
    private final byte[] header = new byte[BLOCK];
    private long offset;
    private String longName;
    private String paxPath;
    /** The next member is sparse (PAX GNU.sparse.* records), and its real name. */
    private boolean paxSparse;
    private String sparseName;
    private long paxSize = -1;
    private boolean ended;
    /**
     * What is being read now, for a decompressor's failure to say: the header at byte
     * {@code readingAt}, or the member {@code readingMember} whose header is there; the words are
     * made only when a failure asks for them (no string a member on the hot path).
     */
    private long readingAt;
    private String readingMember;

    public TarReader(InputStream in, String shard) {
        this.in = in;
        this.shard = shard;
        Compression.reading(in, () -> readingMember == null ? "the header at byte " + readingAt + " of the archive"
                : "member '" + readingMember + "' (its header at byte " + readingAt + " of the archive)");
    }

    /**
     * Opens a tar file, decompressing it if its first bytes say gzip, zstd or lz4. A plain tar
     * is read through a mapping (one copy of each member out of the page cache, no system call).
     */
    public static TarReader open(Path path) throws IOException {
        return open(path, path.toString());
    }

    /** {@link #open(Path)}, its errors naming the shard {@code name} (where a cached copy came from). */
    public static TarReader open(Path path, String name) throws IOException {
        if (Files.isRegularFile(path) && Compression.of(path) == null) {
            try {
                return new TarReader(new MappedInputStream(path), name);
            } catch (IOException | UnsupportedOperationException e) {
                // a file system that cannot map it: read it as a stream
            }
        }
        InputStream raw = Files.newInputStream(path);
        try {
            return new TarReader(Compression.decompress(raw, name), name);
        } catch (CorruptShardException | java.io.EOFException e) {
            raw.close();
            throw e; // a codec's failure, named (NOTE [Codec errors] in Compression)
        } catch (IOException | RuntimeException e) {
            raw.close();
            throw new CorruptShardException(name, 0, "cannot open: " + e.getMessage(), e);
        }
    }

    /**
     * Whether a file (a shard cache's fresh copy) is a tar archive at all: opened as one, its
     * first header read. An error page a server sent with a success status fails here at byte 0.
     */
    public static void checkStart(Path path, String name) throws IOException {
        try (TarReader r = open(path, name)) {
            r.next(false);
        }
    }

    public String shard() {
        return shard;
    }

    /**
     * The whole archive as a mapped segment when it is a plain file read through a mapping (a
     * member's data is then its slice at {@link Member#dataOffset()}, and need not be read);
     * null otherwise. Valid until {@link #close()}.
     */
    public java.lang.foreign.MemorySegment mapped() {
        return in instanceof MappedInputStream m ? m.segment() : null;
    }

    /**
     * A CRC-32C of the header block of the member {@link #next} returned last (the 512 bytes
     * before its data), as {@code tar.TarIndex.fingerprint} samples them.
     */
    public int headerCrc() {
        java.util.zip.CRC32C c = new java.util.zip.CRC32C();
        c.update(header, 0, BLOCK);
        return (int) c.getValue();
    }

    /** The next regular file with its data, or null at the end of the archive. */
    public Member next() throws IOException {
        return next(true);
    }

    /** The next regular file, its data read only when {@code readData}; null at the end. */
    public Member next(boolean readData) throws IOException {
        while (!ended) {
            long at = offset;
            readingAt = at;
            readingMember = null;
            int n = readFully(header, BLOCK);
            if (n == 0) {
                // no end-of-archive blocks: an empty file, or one cut short between two members
                // (the classic truncated upload), which would otherwise read as a shorter shard
                ended = true;
                throw new CorruptShardException(shard, at, at == 0 ? "empty: 0 bytes, not a tar archive"
                        : "ends after " + at + " bytes without the end-of-archive blocks: cut short between two members");
            }
            if (n < BLOCK) {
                throw new CorruptShardException(shard, at, "truncated header: " + n + " of 512 bytes");
            }
            if (zero(header)) {
                checkEnd(at);
                return null;
            }
            verifyChecksum(at);
            char type = (char) header[156];
            long size = size(at);
            if (size < 0) {
                throw new CorruptShardException(shard, at + 124, "negative member size");
            }
            String name = name();
            boolean meta = type == 'L' || type == 'K' || type == 'x' || type == 'g';
            if (meta && size > MAX_HEADER_DATA) {
                throw new CorruptShardException(shard, at, "a " + type + " header of " + size + " bytes (at most "
                        + MAX_HEADER_DATA + " expected)");
            }
            if (!meta && paxSize >= 0) {
                size = paxSize;
            }
            if (type == 'L') {
                longName = cString(readData(size, at, "GNU long name"));
                skipPadding(size);
                continue;
            }
            if (type == 'x' || type == 'g') {
                byte[] pax = readData(size, at, "PAX header");
                skipPadding(size);
                if (type == 'x') {
                    pax(pax, at);
                }
                continue;
            }
            if (type == 'K') {
                readData(size, at, "GNU long link name");
                skipPadding(size);
                continue;
            }
            if (longName != null) {
                name = longName;
            }
            if (paxPath != null) {
                name = paxPath;
            }
            if (type == 'S' || paxSparse) {
                // the member's data is a map of runs and holes, not its bytes: read as they are, they would be a
                // shorter, different file (GNU 'S'), or a member under a made-up name (PAX's GNUSparseFile.0/...)
                throw new CorruptShardException(shard, at, "member '" + (sparseName != null ? sparseName : name)
                        + "' is a sparse file (GNU tar --sparse), which Stoker does not read: write the shard without --sparse");
            }
            longName = null;
            paxPath = null;
            paxSize = -1;
            long dataAt = offset;
            boolean regular = type == '0' || type == '\0' || type == '7';
            if (!regular) {
                // directories, links, devices, FIFOs: nothing to read (their size is 0 or ignored)
                skip(size, at, name);
                skipPadding(size);
                continue;
            }
            byte[] data = null;
            if (readData) {
                data = readData(size, at, name);
            } else {
                skip(size, at, name);
            }
            skipPadding(size);
            return new Member(name, at, dataAt, size, data);
        }
        return null;
    }

    private void checkEnd(long at) throws IOException {
        ended = true;
        byte[] rest = new byte[BLOCK];
        long pos = offset;
        int n;
        while ((n = readFully(rest, BLOCK)) > 0) {
            for (int i = 0; i < n; i++) {
                if (rest[i] != 0) {
                    throw new CorruptShardException(shard, pos + i, "garbage after the end of the archive (which ends at byte "
                            + at + ")");
                }
            }
            pos += n;
        }
    }

    private void verifyChecksum(long at) throws CorruptShardException {
        long stored = octal(header, 148, 8, at, "checksum");
        long unsigned = 0;
        long signed = 0;
        for (int i = 0; i < BLOCK; i++) {
            int b = i >= 148 && i < 156 ? ' ' : header[i];
            unsigned += b & 0xFF;
            signed += (byte) b;
        }
        if (stored != unsigned && stored != signed) {
            throw new CorruptShardException(shard, at, "bad header checksum: stored " + stored + ", computed " + unsigned
                    + " (not a tar file, or corrupt)");
        }
    }

    private long size(long at) throws CorruptShardException {
        if ((header[124] & 0x80) != 0) {
            // GNU base-256: big-endian in the remaining bytes; a size needs at most 63 bits
            if ((header[124] & 0x40) != 0) {
                throw new CorruptShardException(shard, at + 124, "negative base-256 size");
            }
            for (int i = 125; i < 128; i++) {
                if (header[i] != 0 || (header[124] & 0x3F) != 0) {
                    throw new CorruptShardException(shard, at + 124, "base-256 size beyond 2^63");
                }
            }
            long v = 0;
            for (int i = 128; i < 136; i++) {
                v = (v << 8) | (header[i] & 0xFF);
            }
            if (v < 0) {
                throw new CorruptShardException(shard, at + 124, "base-256 size beyond 2^63");
            }
            return v;
        }
        return octal(header, 124, 12, at, "size");
    }

    private long octal(byte[] b, int from, int len, long at, String field) throws CorruptShardException {
        long v = 0;
        int i = from;
        int end = from + len;
        while (i < end && (b[i] == ' ' || b[i] == 0)) {
            i++;
        }
        boolean any = false;
        for (; i < end && b[i] >= '0' && b[i] <= '7'; i++) {
            v = (v << 3) | (b[i] - '0');
            any = true;
        }
        for (; i < end; i++) {
            if (b[i] != ' ' && b[i] != 0) {
                throw new CorruptShardException(shard, at + from, "bad octal number in the " + field + " field");
            }
        }
        return any ? v : 0;
    }

    private String name() {
        String name = cString(header, 0, 100);
        boolean ustar = header[257] == 'u' && header[258] == 's' && header[259] == 't' && header[260] == 'a'
                && header[261] == 'r' && header[262] == 0;
        if (ustar) {
            String prefix = cString(header, 345, 155);
            if (!prefix.isEmpty()) {
                name = prefix + "/" + name;
            }
        }
        return name;
    }

    private void pax(byte[] data, long at) throws CorruptShardException {
        int i = 0;
        while (i < data.length) {
            int sp = i;
            while (sp < data.length && data[sp] != ' ') {
                sp++;
            }
            int len;
            try {
                len = Integer.parseInt(new String(data, i, sp - i, StandardCharsets.US_ASCII));
            } catch (NumberFormatException e) {
                throw new CorruptShardException(shard, at, "malformed PAX record length");
            }
            if (len <= sp - i + 1 || len > data.length - i) {
                throw new CorruptShardException(shard, at, "malformed PAX record");
            }
            String rec = new String(data, sp + 1, i + len - sp - 2, StandardCharsets.UTF_8);
            int eq = rec.indexOf('=');
            if (eq > 0) {
                String key = rec.substring(0, eq);
                String value = rec.substring(eq + 1);
                if (key.startsWith("GNU.sparse.")) {
                    paxSparse = true;
                    if (key.equals("GNU.sparse.name")) {
                        sparseName = value;
                    }
                } else if (key.equals("path")) {
                    paxPath = value;
                } else if (key.equals("size")) {
                    try {
                        paxSize = Long.parseLong(value);
                    } catch (NumberFormatException e) {
                        throw new CorruptShardException(shard, at, "malformed PAX size '" + value + "'");
                    }
                }
            }
            i += len;
        }
    }

    private byte[] readData(long size, long at, String what) throws IOException {
        readingAt = at;
        readingMember = what;
        if (size > Integer.MAX_VALUE - 16) {
            throw new CorruptShardException(shard, at, "member " + what + " of " + size + " bytes is too large to read whole");
        }
        // grown as the bytes arrive, so that a header lying about the size costs no more memory than the file has
        byte[] data = new byte[(int) Math.min(size, 1 << 20)];
        int n = 0;
        while (n < size) {
            if (n == data.length) {
                data = java.util.Arrays.copyOf(data, (int) Math.min(size, 2L * data.length));
            }
            int k = readFully(data, n, data.length - n);
            if (k == 0) {
                break;
            }
            n += k;
        }
        if (n < size) {
            throw new CorruptShardException(shard, offset, "member " + what + " cut short: " + n + " of " + size
                    + " bytes (its header is at byte " + at + ")");
        }
        return data;
    }

    private void skip(long size, long at, String what) throws IOException {
        readingAt = at;
        readingMember = what;
        long left = size;
        while (left > 0) {
            long k = in.skip(left);
            if (k <= 0) {
                if (in.read() < 0) {
                    throw new CorruptShardException(shard, offset, "member " + what + " cut short: " + (size - left) + " of "
                            + size + " bytes (its header is at byte " + at + ")");
                }
                k = 1;
            }
            left -= k;
            offset += k;
        }
    }

    private void skipPadding(long size) throws IOException {
        long pad = (BLOCK - size % BLOCK) % BLOCK;
        long left = pad;
        while (left > 0) {
            long k = in.skip(left);
            if (k <= 0) {
                if (in.read() < 0) {
                    return; // a missing final padding loses no data
                }
                k = 1;
            }
            left -= k;
            offset += k;
        }
    }

    private int readFully(byte[] b, int len) throws IOException {
        return readFully(b, 0, len);
    }

    private int readFully(byte[] b, int off, int len) throws IOException {
        int n = in.readNBytes(b, off, len);
        offset += n;
        return n;
    }

    private static boolean zero(byte[] b) {
        for (byte x : b) {
            if (x != 0) {
                return false;
            }
        }
        return true;
    }

    private static String cString(byte[] b) {
        return cString(b, 0, b.length);
    }

    private static String cString(byte[] b, int from, int len) {
        int end = from;
        while (end < from + len && b[end] != 0) {
            end++;
        }
        return new String(b, from, end - from, StandardCharsets.UTF_8);
    }

    @Override
    public void close() throws IOException {
        in.close();
    }
}
