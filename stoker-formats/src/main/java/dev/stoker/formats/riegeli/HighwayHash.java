package dev.stoker.formats.riegeli;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Objects;

/**
 * HighwayHash with a 64-bit result: Google's keyed hash, the portable (scalar) algorithm,
 * specified by the reference implementation in {@code github.com/google/highwayhash}
 * ({@code c/highwayhash.c}, {@code highwayhash/hh_portable.h}) and the paper "Faster
 * 64-bit universal hashing using carry-less multiplications" (Alakuijala, Cox, Wassenberg, 2016).
 * Riegeli uses it, keyed with {@code RIEGELI_KEY}, for its block, chunk header and chunk data
 * hashes. Stateless and thread-safe.
 */
final class HighwayHash {
    /** Riegeli's key: the 32 bytes {@code "Riegeli/records\nRiegeli/records\n"}, little-endian. Do not modify. */
    static final long[] RIEGELI_KEY = {
        0x2f696c6567656952L, 0x0a7364726f636572L, 0x2f696c6567656952L, 0x0a7364726f636572L,
    };

    private static final ValueLayout.OfLong LONG_LE =
            ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt INT_LE =
            ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    // The initial multiplier lanes (the hexadecimal digits of pi), as the algorithm defines them.
    private static final long INIT_MUL0_0 = 0xdbe6d5d5fe4cce2fL;
    private static final long INIT_MUL0_1 = 0xa4093822299f31d0L;
    private static final long INIT_MUL0_2 = 0x13198a2e03707344L;
    private static final long INIT_MUL0_3 = 0x243f6a8885a308d3L;
    private static final long INIT_MUL1_0 = 0x3bd39e10cb0ef593L;
    private static final long INIT_MUL1_1 = 0xc0acf169b5f18a8cL;
    private static final long INIT_MUL1_2 = 0xbe5466cf34e90c6cL;
    private static final long INIT_MUL1_3 = 0x452821e638d01377L;

    private static final long LOW32 = 0xffffffffL;

    private HighwayHash() {
    }

    /** The hash of {@code data[offset, offset + length)}; {@code key} holds 4 longs. */
    public static long hash64(long[] key, byte[] data, int offset, int length) {
        return hash64(key, MemorySegment.ofArray(data), offset, length);
    }

    /** The hash of the bytes {@code [offset, offset + length)} of {@code data}; {@code key} holds 4 longs. */
    public static long hash64(long[] key, MemorySegment data, long offset, long length) {
        if (key.length != 4) {
            throw new IllegalArgumentException("a HighwayHash key is 4 longs, not " + key.length);
        }
        Objects.checkFromIndexSize(offset, length, data.byteSize());
        State s = new State(key);
        long end = offset + (length & ~31L);
        long p = offset;
        for (; p < end; p += 32) {
            s.update(data.get(LONG_LE, p), data.get(LONG_LE, p + 8),
                    data.get(LONG_LE, p + 16), data.get(LONG_LE, p + 24));
        }
        int rest = (int) (length & 31);
        if (rest != 0) {
            s.updateTail(data, p, rest);
        }
        return s.finish64();
    }

    /** The 16 lanes of the hash state: four 4-lane vectors, kept as scalars. */
    private static final class State {
        long v0a, v0b, v0c, v0d;
        long v1a, v1b, v1c, v1d;
        long m0a, m0b, m0c, m0d;
        long m1a, m1b, m1c, m1d;

        State(long[] key) {
            m0a = INIT_MUL0_0;
            m0b = INIT_MUL0_1;
            m0c = INIT_MUL0_2;
            m0d = INIT_MUL0_3;
            m1a = INIT_MUL1_0;
            m1b = INIT_MUL1_1;
            m1c = INIT_MUL1_2;
            m1d = INIT_MUL1_3;
            v0a = m0a ^ key[0];
            v0b = m0b ^ key[1];
            v0c = m0c ^ key[2];
            v0d = m0d ^ key[3];
            v1a = m1a ^ Long.rotateLeft(key[0], 32);
            v1b = m1b ^ Long.rotateLeft(key[1], 32);
            v1c = m1c ^ Long.rotateLeft(key[2], 32);
            v1d = m1d ^ Long.rotateLeft(key[3], 32);
        }

        /** Mixes one 32-byte packet, given as 4 little-endian lanes, into the state. */
        void update(long a, long b, long c, long d) {
            v1a += m0a + a;
            m0a ^= (v1a & LOW32) * (v0a >>> 32);
            v0a += m1a;
            m1a ^= (v0a & LOW32) * (v1a >>> 32);

            v1b += m0b + b;
            m0b ^= (v1b & LOW32) * (v0b >>> 32);
            v0b += m1b;
            m1b ^= (v0b & LOW32) * (v1b >>> 32);

            v1c += m0c + c;
            m0c ^= (v1c & LOW32) * (v0c >>> 32);
            v0c += m1c;
            m1c ^= (v0c & LOW32) * (v1c >>> 32);

            v1d += m0d + d;
            m0d ^= (v1d & LOW32) * (v0d >>> 32);
            v0d += m1d;
            m1d ^= (v0d & LOW32) * (v1d >>> 32);

            v0a += zipLow(v1a, v1b);
            v0b += zipHigh(v1a, v1b);
            v0c += zipLow(v1c, v1d);
            v0d += zipHigh(v1c, v1d);
            v1a += zipLow(v0a, v0b);
            v1b += zipHigh(v0a, v0b);
            v1c += zipLow(v0c, v0d);
            v1d += zipHigh(v0c, v0d);
        }

        /**
         * Mixes the last {@code n} (1 to 31) bytes, at {@code p}: the length is folded into the
         * state, and the bytes are laid out in a zero-filled packet the way the algorithm defines
         * (whole 4-byte words first, then either the last 4 bytes at packet[28..31] or 3 sampled
         * bytes at packet[16..18]).
         */
        void updateTail(MemorySegment data, long p, int n) {
            long inc = ((long) n << 32) + n;
            v0a += inc;
            v0b += inc;
            v0c += inc;
            v0d += inc;
            v1a = rotateHalves(v1a, n);
            v1b = rotateHalves(v1b, n);
            v1c = rotateHalves(v1c, n);
            v1d = rotateHalves(v1d, n);

            int words = n & ~3;
            long a = lane(data, p, words);
            long b = lane(data, p + 8, words - 8);
            long c = lane(data, p + 16, words - 16);
            long d = lane(data, p + 24, words - 24);
            if ((n & 16) != 0) {
                d |= (data.get(INT_LE, p + n - 4) & LOW32) << 32;
            } else {
                int odd = n & 3;
                if (odd != 0) {
                    long q = p + words;
                    c = (data.get(ValueLayout.JAVA_BYTE, q) & 0xffL)
                            | (data.get(ValueLayout.JAVA_BYTE, q + (odd >> 1)) & 0xffL) << 8
                            | (data.get(ValueLayout.JAVA_BYTE, q + odd - 1) & 0xffL) << 16;
                }
            }
            update(a, b, c, d);
        }

        /** Four final rounds, each mixing in {@code v0} with its lanes and halves swapped. */
        long finish64() {
            for (int i = 0; i < 4; i++) {
                update(Long.rotateLeft(v0c, 32), Long.rotateLeft(v0d, 32),
                        Long.rotateLeft(v0a, 32), Long.rotateLeft(v0b, 32));
            }
            return v0a + v1a + m0a + m1a;
        }
    }

    /** The lane of a tail packet holding {@code available} (a multiple of 4) bytes from {@code p}. */
    private static long lane(MemorySegment data, long p, int available) {
        if (available >= 8) {
            return data.get(LONG_LE, p);
        }
        if (available >= 4) {
            return data.get(INT_LE, p) & LOW32;
        }
        return 0;
    }

    /** Each 32-bit half of {@code x} rotated left by {@code n}. */
    private static long rotateHalves(long x, int n) {
        long lo = Integer.rotateLeft((int) x, n) & LOW32;
        long hi = Integer.rotateLeft((int) (x >>> 32), n) & LOW32;
        return hi << 32 | lo;
    }

    /*
     * The zipper merge: a byte shuffle of the 16 bytes lo (bytes 0-7) and hi (bytes 8-15) that
     * spreads the well-mixed middle bytes of the products. Result byte k of the low lane takes
     * source byte [3, 12, 2, 5, 14, 1, 15, 0][k]; of the high lane, [11, 4, 10, 13, 9, 6, 8, 7][k].
     */

    private static long zipLow(long lo, long hi) {
        return (lo >>> 24 & 0xffL)
                | (hi >>> 24 & 0xff00L)
                | (lo & 0xff0000L)
                | (lo >>> 16 & 0xff000000L)
                | (hi >>> 16 & 0xff00000000L)
                | (lo << 32 & 0xff0000000000L)
                | (hi >>> 8 & 0xff000000000000L)
                | lo << 56;
    }

    private static long zipHigh(long lo, long hi) {
        return (hi >>> 24 & 0xffL)
                | (lo >>> 24 & 0xff00L)
                | (hi & 0xff0000L)
                | (hi >>> 16 & 0xff000000L)
                | (hi << 24 & 0xff00000000L)
                | (lo >>> 8 & 0xff0000000000L)
                | (hi << 48 & 0xff000000000000L)
                | (lo & 0xff00000000000000L);
    }
}
