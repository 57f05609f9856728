package dev.stoker.root;

import dev.stoker.CorruptShardException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * A big-endian reader over one record of a ROOT file (a key's payload, a basket, a header), every
 * read checked against what remains. Errors name the file, the record ({@code what}) and the byte:
 * the file offset when the record was read straight from the file ({@code base >= 0}), else the
 * offset within the record's uncompressed payload.
 */
final class Cursor {
    private final String file;
    private final String what;
    private final ByteBuffer buf;
    private final long base;
    private int pos;

    Cursor(String file, String what, ByteBuffer buf, long base) {
        this.file = file;
        this.what = what;
        this.buf = buf.slice().order(ByteOrder.BIG_ENDIAN);
        this.base = base;
    }

    int pos() {
        return pos;
    }

    void pos(long p) throws CorruptShardException {
        if (p < 0 || p > buf.limit()) {
            throw corrupt("position " + p + " lies outside the record's " + buf.limit() + " bytes");
        }
        pos = (int) p;
    }

    int limit() {
        return buf.limit();
    }

    int remaining() {
        return buf.limit() - pos;
    }

    ByteBuffer buffer() {
        return buf;
    }

    String what() {
        return what;
    }

    String file() {
        return file;
    }

    CorruptShardException corrupt(String message) {
        return corruptAt(pos, message);
    }

    CorruptShardException corruptAt(int at, String message) {
        if (base >= 0) {
            return new CorruptShardException(file, base + at, what + ": " + message);
        }
        return new CorruptShardException(file, -1, what + ": " + message + " (at byte " + at + " of its uncompressed payload)");
    }

    void need(long n) throws CorruptShardException {
        if (n < 0 || n > remaining()) {
            throw corrupt("needs " + n + " bytes, " + remaining() + " remain");
        }
    }

    void skip(long n) throws CorruptShardException {
        need(n);
        pos += (int) n;
    }

    byte i8() throws CorruptShardException {
        need(1);
        return buf.get(pos++);
    }

    int u8() throws CorruptShardException {
        return i8() & 0xFF;
    }

    boolean bool() throws CorruptShardException {
        return i8() != 0;
    }

    short i16() throws CorruptShardException {
        need(2);
        short v = buf.getShort(pos);
        pos += 2;
        return v;
    }

    int i32() throws CorruptShardException {
        need(4);
        int v = buf.getInt(pos);
        pos += 4;
        return v;
    }

    long i64() throws CorruptShardException {
        need(8);
        long v = buf.getLong(pos);
        pos += 8;
        return v;
    }

    float f32() throws CorruptShardException {
        return Float.intBitsToFloat(i32());
    }

    double f64() throws CorruptShardException {
        return Double.longBitsToDouble(i64());
    }

    /** A TString: a length byte (255: an int32 length follows), then the bytes. */
    String tstring() throws CorruptShardException {
        int n = u8();
        if (n == 255) {
            n = i32();
        }
        need(n);
        byte[] b = new byte[n];
        buf.get(pos, b);
        pos += n;
        return new String(b, StandardCharsets.UTF_8);
    }

    /** A NUL-terminated string. */
    String cstring() throws CorruptShardException {
        int start = pos;
        while (true) {
            if (remaining() == 0) {
                throw corruptAt(start, "a string runs past the record's end without its terminating NUL");
            }
            if (buf.get(pos++) == 0) {
                break;
            }
        }
        byte[] b = new byte[pos - 1 - start];
        buf.get(start, b);
        return new String(b, StandardCharsets.UTF_8);
    }

    /** The next {@code n} bytes as a buffer of their own (no copy). */
    ByteBuffer bytes(int n) throws CorruptShardException {
        need(n);
        ByteBuffer b = buf.slice(pos, n);
        pos += n;
        return b;
    }
}
