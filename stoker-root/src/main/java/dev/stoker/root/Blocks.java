package dev.stoker.root;

import com.github.luben.zstd.Zstd;
import dev.stoker.CorruptShardException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;
import net.jpountz.lz4.LZ4Exception;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;
import net.jpountz.xxhash.XXHash64;
import net.jpountz.xxhash.XXHashFactory;
import org.tukaani.xz.XZInputStream;

/**
 * ROOT's compressed records: one or more blocks, each a 9-byte header (two letters naming the
 * algorithm, a method byte, the compressed and uncompressed sizes as 3-byte little-endian
 * numbers) and its compressed bytes. {@code ZL} is zlib, {@code L4} LZ4 whose compressed bytes
 * begin with the big-endian XXH64 of the rest, {@code ZS} zstd, {@code XZ} an xz stream; a record
 * whose size equals its uncompressed size is stored as is.
 *
 * <p>NOTE [Declared sizes]: every block header is read, and each size checked against what
 * remains of the record, before anything is allocated; the blocks' uncompressed sizes must add up
 * to the length the record's key or basket declares, and each is at most 2^24 - 1 (its field's
 * width). The output is then exactly that length, and each block must decompress to exactly its
 * declared size: a lying size fails naming the block, never a larger allocation or a short read.
 */
final class Blocks {
    static final int HEADER = 9;
    private static final LZ4SafeDecompressor LZ4 = LZ4Factory.fastestInstance().safeDecompressor();
    private static final XXHash64 XXH64 = XXHashFactory.fastestInstance().hash64();
    /** The memory an xz block may use: ROOT's LZMA levels use dictionaries of at most 64 MiB. */
    private static final int XZ_MEMORY_KIB = 80 << 10;

    private Blocks() {
    }

    static ByteBuffer decompress(String file, ByteBuffer compressed, int length, String what) throws IOException {
        ByteBuffer in = compressed.slice().order(ByteOrder.BIG_ENDIAN);
        int n = in.remaining();
        if (length < 0) {
            throw new CorruptShardException(file, -1, what + ": declares an uncompressed length of " + length + " bytes");
        }
        if (n == length) {
            return in;
        }
        // first pass: the block headers only (NOTE [Declared sizes])
        long total = 0;
        int blocks = 0;
        for (int pos = 0; pos < n; blocks++) {
            if (n - pos < HEADER) {
                throw corrupt(file, what, pos, "block " + blocks + ": its 9-byte header runs past the record's end ("
                        + (n - pos) + " bytes remain)");
            }
            String algo = algorithm(in, pos);
            int c = u24(in, pos + 3);
            int u = u24(in, pos + 6);
            switch (algo) {
                case "ZL", "L4", "ZS", "XZ" -> {
                }
                case "CS" -> throw corrupt(file, what, pos, "block " + blocks
                        + " is compressed with ROOT's old 'CS' algorithm, which Stoker does not read");
                default -> throw corrupt(file, what, pos, "block " + blocks + ": unknown compression '" + printable(algo)
                        + "' (expected ZL, L4, ZS or XZ), or a record of " + n + " bytes that should hold " + length);
            }
            if (c > n - pos - HEADER) {
                throw corrupt(file, what, pos, "block " + blocks + " declares " + c + " compressed bytes, "
                        + (n - pos - HEADER) + " remain in the record");
            }
            if (u == 0 || c == 0) {
                throw corrupt(file, what, pos, "block " + blocks + " declares " + c + " compressed and " + u + " uncompressed bytes");
            }
            total += u;
            if (total > length) {
                throw corrupt(file, what, pos, "blocks declare more than the " + length + " uncompressed bytes expected");
            }
            pos += HEADER + c;
        }
        if (total != length) {
            throw new CorruptShardException(file, -1, what + ": its blocks declare " + total + " uncompressed bytes, "
                    + length + " expected");
        }
        byte[] out = new byte[length];
        int at = 0;
        for (int pos = 0, b = 0; pos < n; b++) {
            String algo = algorithm(in, pos);
            int c = u24(in, pos + 3);
            int u = u24(in, pos + 6);
            ByteBuffer src = in.slice(pos + HEADER, c);
            int got = switch (algo) {
                case "ZL" -> inflate(src, out, at, u);
                case "L4" -> lz4(file, what, pos, b, src, out, at, u);
                case "ZS" -> zstd(src, out, at, u);
                case "XZ" -> xz(src, out, at, u);
                default -> throw new AssertionError(algo);
            };
            if (got != u) {
                throw corrupt(file, what, pos, "block " + b + " (" + algo + ") decompresses to " + (got < 0 ? "an error" : got + " bytes")
                        + ", its header declares " + u);
            }
            at += u;
            pos += HEADER + c;
        }
        return ByteBuffer.wrap(out).order(ByteOrder.BIG_ENDIAN);
    }

    private static CorruptShardException corrupt(String file, String what, int pos, String message) {
        return new CorruptShardException(file, -1, what + ": " + message + " (at byte " + pos + " of its compressed bytes)");
    }

    private static String algorithm(ByteBuffer in, int pos) {
        return new String(new char[] {(char) (in.get(pos) & 0xFF), (char) (in.get(pos + 1) & 0xFF)});
    }

    private static String printable(String s) {
        StringBuilder b = new StringBuilder();
        for (char ch : s.toCharArray()) {
            b.append(ch >= 32 && ch < 127 ? String.valueOf(ch) : String.format("\\x%02x", (int) ch));
        }
        return b.toString();
    }

    private static int u24(ByteBuffer in, int pos) {
        return (in.get(pos) & 0xFF) | (in.get(pos + 1) & 0xFF) << 8 | (in.get(pos + 2) & 0xFF) << 16;
    }

    /** Decompressed bytes, -1 when the data is malformed or does not end where its header says. */
    private static int inflate(ByteBuffer src, byte[] out, int at, int u) {
        Inflater inf = new Inflater();
        try {
            inf.setInput(src);
            int got = 0;
            while (!inf.finished()) {
                if (got == u) {
                    // all declared bytes are out: the stream must end here (its checksum may remain)
                    int k = inf.inflate(new byte[1]);
                    if (k > 0 || !inf.finished()) {
                        return -1;
                    }
                    break;
                }
                int k = inf.inflate(out, at + got, u - got);
                if (k == 0 && (inf.needsInput() || inf.needsDictionary())) {
                    return got; // cut short
                }
                got += k;
            }
            return got;
        } catch (DataFormatException e) {
            return -1;
        } finally {
            inf.end();
        }
    }

    private static int lz4(String file, String what, int pos, int b, ByteBuffer src, byte[] out, int at, int u) throws CorruptShardException {
        if (src.remaining() < 8) {
            throw corrupt(file, what, pos, "LZ4 block " + b + " is shorter than its 8-byte checksum");
        }
        long expected = src.getLong(0);
        int len = src.remaining() - 8;
        long actual = XXH64.hash(src, 8, len, 0);
        if (actual != expected) {
            throw corrupt(file, what, pos, "LZ4 block " + b + " fails its XXH64 checksum (stored "
                    + Long.toHexString(expected) + ", computed " + Long.toHexString(actual) + ")");
        }
        try {
            return LZ4.decompress(src, 8, len, ByteBuffer.wrap(out), at, u);
        } catch (LZ4Exception e) {
            return -1;
        }
    }

    private static int zstd(ByteBuffer src, byte[] out, int at, int u) {
        byte[] s;
        int off;
        if (src.hasArray()) {
            s = src.array();
            off = src.arrayOffset() + src.position();
        } else {
            s = new byte[src.remaining()];
            src.get(src.position(), s);
            off = 0;
        }
        long r = Zstd.decompressByteArray(out, at, u, s, off, src.remaining());
        return Zstd.isError(r) ? -1 : (int) r;
    }

    private static int xz(ByteBuffer src, byte[] out, int at, int u) {
        byte[] s = new byte[src.remaining()];
        src.get(src.position(), s);
        try (XZInputStream in = new XZInputStream(new ByteArrayInputStream(s), XZ_MEMORY_KIB)) {
            int got = 0;
            while (got < u) {
                int k = in.read(out, at + got, u - got);
                if (k < 0) {
                    return got;
                }
                got += k;
            }
            return in.read() < 0 ? got : -1;
        } catch (IOException e) {
            return -1;
        }
    }
}
