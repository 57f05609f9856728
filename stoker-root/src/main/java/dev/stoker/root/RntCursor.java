package dev.stoker.root;

import dev.stoker.CorruptShardException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * A little-endian reader over one RNTuple envelope's payload, with the format's record and list
 * frames. Every read is bounds-checked against the envelope (or the frame it is in), so a lying
 * size or count fails here with the file, the envelope's byte offset in the file and the byte of
 * the payload, never as an over-allocation.
 */
final class RntCursor {
    /** A frame: where it ends (a position in the payload) and, for a list frame, its item count. */
    record Frame(int end, long items, boolean list) {
    }

    private final ByteBuffer b;
    private final String file;
    private final String what;
    private final long fileOffset;

    /** {@code b} holds the payload from its position to its limit. */
    RntCursor(ByteBuffer b, String file, String what, long fileOffset) {
        this.b = b.slice().order(ByteOrder.LITTLE_ENDIAN);
        this.file = file;
        this.what = what;
        this.fileOffset = fileOffset;
    }

    int position() {
        return b.position();
    }

    int remaining() {
        return b.remaining();
    }

    CorruptShardException corrupt(String problem) {
        return new CorruptShardException(file, fileOffset,
                "RNTuple " + what + ", byte " + b.position() + " of its " + b.limit() + ": " + problem);
    }

    private void need(int n) throws CorruptShardException {
        if (n < 0 || b.remaining() < n) {
            throw corrupt("needs " + n + " more bytes, " + b.remaining() + " left");
        }
    }

    int u8() throws CorruptShardException {
        need(1);
        return b.get() & 0xFF;
    }

    int u16() throws CorruptShardException {
        need(2);
        return b.getShort() & 0xFFFF;
    }

    int i32() throws CorruptShardException {
        need(4);
        return b.getInt();
    }

    long u32() throws CorruptShardException {
        return i32() & 0xFFFFFFFFL;
    }

    long i64() throws CorruptShardException {
        need(8);
        return b.getLong();
    }

    double f64() throws CorruptShardException {
        need(8);
        return b.getDouble();
    }

    /** A 32-bit length and that many UTF-8 bytes. */
    String string() throws CorruptShardException {
        long n = u32();
        if (n > b.remaining()) {
            throw corrupt("a string of " + n + " bytes, " + b.remaining() + " left");
        }
        byte[] s = new byte[(int) n];
        b.get(s);
        return new String(s, StandardCharsets.UTF_8);
    }

    /** Reads a frame's preamble; its end must lie within the enclosing data. */
    Frame frame() throws CorruptShardException {
        int start = b.position();
        long size = i64();
        boolean list = size < 0;
        long abs = list ? -size : size;
        long items = list ? u32() : 0;
        if (abs < b.position() - start || abs > b.limit() - start) {
            b.position(start);
            throw corrupt("a frame of " + abs + " bytes, " + (b.limit() - start) + " left");
        }
        if (list && items > abs) {
            b.position(start);
            throw corrupt("a list frame of " + abs + " bytes claims " + items + " items");
        }
        return new Frame(start + (int) abs, items, list);
    }

    /** A list frame (a record frame where one is expected is corrupt). */
    Frame list() throws CorruptShardException {
        int at = b.position();
        Frame f = frame();
        if (!f.list()) {
            b.position(at);
            throw corrupt("expected a list frame, found a record frame");
        }
        return f;
    }

    /** A record frame. */
    Frame record() throws CorruptShardException {
        int at = b.position();
        Frame f = frame();
        if (f.list()) {
            b.position(at);
            throw corrupt("expected a record frame, found a list frame");
        }
        return f;
    }

    /** Moves to the end of {@code f}, which must not lie before the current position. */
    void end(Frame f) throws CorruptShardException {
        if (b.position() > f.end()) {
            throw corrupt("read past the end of a frame ending at byte " + f.end());
        }
        b.position(f.end());
    }

    /** A locator: a size and a 64-bit offset, or a large (type 0x01) locator. */
    long[] locator() throws CorruptShardException {
        int head = i32();
        if (head >= 0) {
            return new long[] {head, i64()};
        }
        int type = Math.abs((byte) (head >>> 24));
        int size = head & 0xFFFF;
        if (type != 1 || size != 20) {
            throw corrupt("a locator of type " + type + " (size " + size + "), expected an on-file or large locator");
        }
        long length = i64();
        long offset = i64();
        return new long[] {length, offset};
    }

    /** An envelope link: the envelope's uncompressed length, its locator's size and offset. */
    long[] envelopeLink() throws CorruptShardException {
        long length = i64();
        long[] loc = locator();
        return new long[] {length, loc[0], loc[1]};
    }
}
