package dev.stoker.formats.io;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdInputStream;
import dev.stoker.CorruptShardException;
import java.io.BufferedInputStream;
import java.io.ByteArrayInputStream;
import java.io.EOFException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.InflaterInputStream;
import net.jpountz.lz4.LZ4FrameInputStream;

/**
 * The compressions a file's first bytes announce, whatever its name says: gzip (read by
 * {@link Gunzip}), zstd and lz4 frames; bzip2 and xz are recognised and refused by name. The one
 * place where Stoker's formats sniff them, and where every codec's failure is put in words.
 *
 * <p>NOTE [Codec errors]: a decompressor's own errors name nothing ("Truncated source", "Data
 * corruption detected", "Src size is incorrect"). Every decompression in the formats runs
 * through here ({@link #decompress(InputStream, String)} for a stream, {@link #block} for a
 * buffer), and a failure comes out as the documented kind naming the file and where: an
 * {@link EOFException} when the compressed data ends before its stream does (a truncated file),
 * else a {@link CorruptShardException}, the library's words after the context.
 */
public enum Compression {
    GZIP("gzip"), ZSTD("zstd"), LZ4("lz4"), ZLIB("zlib"), BZIP2("bzip2"), XZ("xz");

    /** Bytes a stream is buffered with when it is decompressed or sniffed. */
    private static final int BUFFER = 1 << 16;

    private final String word;

    Compression(String word) {
        this.word = word;
    }

    /** The most bytes {@link #of(byte[])} looks at: bzip2's signature with its first block's magic. */
    public static final int MAGIC_BYTES = 10;

    /**
     * The compression the first bytes of a file announce (up to {@link #MAGIC_BYTES}; fewer for a
     * shorter file), or null for none. Each is taken only on a signature that text or token ids do
     * not spell by chance: gzip's magic with its method byte, zstd's and lz4's four bytes, xz's
     * six, and bzip2's "BZh" and block size followed by a block's or the stream end's magic. zlib
     * has no magic of its own and is never announced.
     */
    public static Compression of(byte[] m) {
        if (starts(m, 0x1F, 0x8B, 0x08)) {
            return GZIP;
        }
        if (starts(m, 0x28, 0xB5, 0x2F, 0xFD)) {
            return ZSTD;
        }
        if (starts(m, 0x04, 0x22, 0x4D, 0x18)) {
            return LZ4;
        }
        if (starts(m, 0xFD, '7', 'z', 'X', 'Z', 0)) {
            return XZ;
        }
        if (m.length >= 10 && m[0] == 'B' && m[1] == 'Z' && m[2] == 'h' && m[3] >= '1' && m[3] <= '9'
                && (at(m, 4, 0x31, 0x41, 0x59, 0x26, 0x53, 0x59) || at(m, 4, 0x17, 0x72, 0x45, 0x38, 0x50, 0x90))) {
            return BZIP2;
        }
        return null;
    }

    /** What {@link #of} found, as a word: {@code "zstd"}. */
    public String word() {
        return word;
    }

    private static boolean starts(byte[] m, int... magic) {
        return at(m, 0, magic);
    }

    private static boolean at(byte[] m, int from, int... magic) {
        if (m.length < from + magic.length) {
            return false;
        }
        for (int i = 0; i < magic.length; i++) {
            if ((m[from + i] & 0xFF) != magic[i]) {
                return false;
            }
        }
        return true;
    }

    /** The compression of a file, from its first bytes; null for none. */
    public static Compression of(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            return of(in.readNBytes(MAGIC_BYTES));
        }
    }

    /**
     * The stream decompressed as its first bytes call for, its failures naming {@code resource}
     * (NOTE [Codec errors]); a stream with no compression comes back as the
     * {@link BufferedInputStream} it was wrapped in (so {@code instanceof} tells). A compression
     * Stoker does not read (bzip2, xz) is refused here, by name.
     */
    public static InputStream decompress(InputStream raw, String resource) throws IOException {
        BufferedInputStream in = raw instanceof BufferedInputStream b ? b : new BufferedInputStream(raw, BUFFER);
        in.mark(MAGIC_BYTES);
        byte[] m = in.readNBytes(MAGIC_BYTES);
        in.reset();
        Compression c = of(m);
        return c == null ? in : c.stream(in, resource);
    }

    /** A decompressing stream of this compression over {@code raw}, its failures naming {@code resource}. */
    public InputStream stream(InputStream raw, String resource) throws IOException {
        Counted counted = new Counted(raw);
        InputStream codec;
        try {
            codec = switch (this) {
                case GZIP -> Gunzip.open(counted);
                case ZSTD -> new ZstdInputStream(counted);
                case LZ4 -> new LZ4FrameInputStream(counted);
                case ZLIB -> new InflaterInputStream(counted);
                case BZIP2, XZ -> throw new CorruptShardException(resource, 0, "compressed with " + word + ", which Stoker does "
                        + "not read (it reads gzip, zstd and lz4): recompress it, e.g. " + word + " -dc FILE | zstd -o FILE.zst");
            };
        } catch (CorruptShardException e) {
            throw e;
        } catch (IOException | RuntimeException e) {
            if (counted.failed) {
                throw e;
            }
            throw failure(resource, null, counted.count, 0, counted.ended, e);
        }
        return new Named(codec, counted, resource);
    }

    /**
     * Decompresses {@code src[from, to)}, one whole buffer of this compression (a zstd or lz4
     * frame, a gzip or zlib stream), into exactly {@code size} bytes; a failure names
     * {@code resource}, and {@code at}, where the buffer lies in it (-1: nowhere in particular). A
     * buffer is whole by its container's word, so one that ends early is corrupt, not cut short.
     */
    public byte[] block(byte[] src, int from, int to, int size, String resource, long at) throws CorruptShardException {
        byte[] out = new byte[size];
        int n;
        if (this == ZSTD) {
            long got;
            try {
                got = Zstd.decompressByteArray(out, 0, size, src, from, to - from);
            } catch (RuntimeException e) { // zstd-jni throws its errors (ZstdException) rather than return them
                throw inBlock(resource, at, e);
            }
            if (Zstd.isError(got)) {
                throw inBlock(resource, at, new IOException(Zstd.getErrorName(got)));
            }
            n = (int) got;
        } else {
            try (InputStream in = stream(new ByteArrayInputStream(src, from, to - from), resource)) {
                n = in.readNBytes(out, 0, size);
                if (n == size && in.read() >= 0) {
                    n = size + 1;
                }
            } catch (IOException e) {
                throw inBlock(resource, at, e);
            }
        }
        if (n != size) {
            throw new CorruptShardException(resource, at, "a " + word + " buffer of " + (n > size ? "more than " + size : n)
                    + " bytes where " + size + " were expected");
        }
        return out;
    }

    /** A whole buffer's failure: corrupt, at the buffer's place, the codec's words after (its own naming dropped). */
    private CorruptShardException inBlock(String resource, long at, Exception e) {
        String m = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        if (m.startsWith(resource + ": ")) { // worded by stream() already
            m = m.substring(resource.length() + 2);
        } else {
            m = "the " + word + " data is corrupt: " + m;
        }
        return new CorruptShardException(resource, at, "a compressed buffer: " + m, e);
    }

    /**
     * A codec's failure in words (NOTE [Codec errors]): {@code compressed} bytes of the file were
     * read when {@code decompressed} bytes had come out; {@code ended} when the compressed data had
     * ended by then (it was cut short).
     */
    private IOException failure(String resource, String where, long compressed, long decompressed, boolean ended, Throwable e) {
        String lib = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        boolean cut = ended || e instanceof EOFException || lib.equals("Truncated source");
        String after = decompressed > 0 ? " after " + decompressed + " decompressed bytes" : "";
        String in = where == null ? "" : where + ": ";
        if (cut) {
            EOFException x = new EOFException(resource + ": " + in + "the " + word + " data is cut short" + after
                    + " (a truncated file?) (" + lib + ") (at byte " + compressed + ")");
            x.initCause(e);
            return x;
        }
        return new CorruptShardException(resource, -1, in + "the " + word + " data is corrupt" + after + ", near compressed byte "
                + compressed + ": " + lib, e);
    }

    /**
     * Tells a stream {@link #decompress(InputStream, String)} gave what its reader is reading, for
     * its failures to say (a tar member and its header's offset); a stream with no compression
     * needs nothing.
     */
    public static void reading(InputStream in, java.util.function.Supplier<String> where) {
        if (in instanceof Compression.Named n) {
            n.where = where;
        }
    }

    /** The compressed bytes a codec has read, and whether they ran out. */
    private static final class Counted extends FilterInputStream {
        long count;
        boolean ended;
        /** The read failed below the codec (a disk or network error): not the codec's to word. */
        boolean failed;

        Counted(InputStream in) {
            super(in);
        }

        @Override
        public int read() throws IOException {
            try {
                int b = in.read();
                if (b < 0) {
                    ended = true;
                } else {
                    count++;
                }
                return b;
            } catch (IOException | RuntimeException e) {
                failed = true;
                throw e;
            }
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            try {
                int n = in.read(b, off, len);
                if (n < 0) {
                    ended = true;
                } else {
                    count += n;
                }
                return n;
            } catch (IOException | RuntimeException e) {
                failed = true;
                throw e;
            }
        }

        @Override
        public long skip(long n) throws IOException {
            long k = in.skip(n);
            count += k;
            return k;
        }

        @Override
        public boolean markSupported() {
            return false;
        }
    }

    /** A codec's stream whose failures name the file and where (NOTE [Codec errors]). */
    private final class Named extends FilterInputStream {
        private final Counted counted;
        private final String resource;
        private long out;
        private java.util.function.Supplier<String> where = () -> null;

        Named(InputStream codec, Counted counted, String resource) {
            super(codec);
            this.counted = counted;
            this.resource = resource;
        }

        @Override
        public int read() throws IOException {
            try {
                int b = in.read();
                if (b >= 0) {
                    out++;
                }
                return b;
            } catch (IOException | RuntimeException e) {
                throw worded(e);
            }
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            try {
                int n = in.read(b, off, len);
                if (n > 0) {
                    out += n;
                }
                return n;
            } catch (IOException | RuntimeException e) {
                throw worded(e);
            }
        }

        @Override
        public long skip(long n) throws IOException {
            try {
                long k = in.skip(n);
                out += k;
                return k;
            } catch (IOException | RuntimeException e) {
                throw worded(e);
            }
        }

        private IOException worded(Exception e) throws IOException {
            if (counted.failed || e instanceof CorruptShardException) {
                if (e instanceof IOException io) {
                    throw io;
                }
                throw (RuntimeException) e;
            }
            return failure(resource, where.get(), counted.count, out, counted.ended, e);
        }

        @Override
        public boolean markSupported() {
            return false;
        }
    }
}
