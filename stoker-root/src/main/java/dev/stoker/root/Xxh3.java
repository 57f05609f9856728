package dev.stoker.root;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * XXH3, 64-bit, seed 0 and the default secret: the checksum RNTuple writes after its anchor, its
 * envelopes and (optionally) its pages. Written from the xxHash specification (XXH3 of xxHash
 * 0.8); checked against the reference library's values and against real RNTuple files.
 */
final class Xxh3 {
    private Xxh3() {
    }

    private static final long PRIME32_1 = 0x9E3779B1L;
    private static final long PRIME32_2 = 0x85EBCA77L;
    private static final long PRIME32_3 = 0xC2B2AE3DL;
    private static final long PRIME64_1 = 0x9E3779B185EBCA87L;
    private static final long PRIME64_2 = 0xC2B2AE3D27D4EB4FL;
    private static final long PRIME64_3 = 0x165667B19E3779F9L;
    private static final long PRIME64_4 = 0x85EBCA77C2B2AE63L;
    private static final long PRIME64_5 = 0x27D4EB2F165667C5L;
    private static final long PRIME_MX1 = 0x165667919E3779F9L;
    private static final long PRIME_MX2 = 0x9FB21C651E98DF25L;

    private static final int STRIPE = 64;
    private static final int SECRET_SIZE = 192;
    private static final int STRIPES_PER_BLOCK = (SECRET_SIZE - STRIPE) / 8;
    private static final int BLOCK = STRIPE * STRIPES_PER_BLOCK;

    private static final ByteBuffer SECRET = ByteBuffer.wrap(bytes(
            0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
            0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
            0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
            0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
            0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
            0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
            0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
            0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
            0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
            0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
            0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
            0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e))
            .order(ByteOrder.LITTLE_ENDIAN).asReadOnlyBuffer().order(ByteOrder.LITTLE_ENDIAN);

    private static byte[] bytes(int... v) {
        byte[] b = new byte[v.length];
        for (int i = 0; i < v.length; i++) {
            b[i] = (byte) v[i];
        }
        return b;
    }

    /** The hash of {@code b}'s bytes {@code [off, off + len)} (absolute positions; {@code b}'s position is ignored). */
    static long hash(ByteBuffer b, int off, int len) {
        ByteBuffer in = b.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        if (len <= 16) {
            return small(in, off, len);
        }
        if (len <= 128) {
            long acc = len * PRIME64_1;
            if (len > 32) {
                if (len > 64) {
                    if (len > 96) {
                        acc += mix16(in, off + 48, 96);
                        acc += mix16(in, off + len - 64, 112);
                    }
                    acc += mix16(in, off + 32, 64);
                    acc += mix16(in, off + len - 48, 80);
                }
                acc += mix16(in, off + 16, 32);
                acc += mix16(in, off + len - 32, 48);
            }
            acc += mix16(in, off, 0);
            acc += mix16(in, off + len - 16, 16);
            return avalanche(acc);
        }
        if (len <= 240) {
            long acc = len * PRIME64_1;
            int rounds = len / 16;
            for (int i = 0; i < 8; i++) {
                acc += mix16(in, off + 16 * i, 16 * i);
            }
            acc = avalanche(acc);
            for (int i = 8; i < rounds; i++) {
                acc += mix16(in, off + 16 * i, 16 * (i - 8) + 3);
            }
            acc += mix16(in, off + len - 16, 136 - 17);
            return avalanche(acc);
        }
        return large(in, off, len);
    }

    /** The hash of all of {@code a}. */
    static long hash(byte[] a) {
        return hash(ByteBuffer.wrap(a), 0, a.length);
    }

    private static long small(ByteBuffer in, int off, int len) {
        if (len > 8) {
            long bitflip1 = SECRET.getLong(24) ^ SECRET.getLong(32);
            long bitflip2 = SECRET.getLong(40) ^ SECRET.getLong(48);
            long lo = in.getLong(off) ^ bitflip1;
            long hi = in.getLong(off + len - 8) ^ bitflip2;
            long acc = len + Long.reverseBytes(lo) + hi + fold(lo, hi);
            return avalanche(acc);
        }
        if (len >= 4) {
            long in1 = in.getInt(off) & 0xFFFFFFFFL;
            long in2 = in.getInt(off + len - 4) & 0xFFFFFFFFL;
            long bitflip = SECRET.getLong(8) ^ SECRET.getLong(16);
            long keyed = (in2 + (in1 << 32)) ^ bitflip;
            return rrmxmx(keyed, len);
        }
        if (len > 0) {
            int c1 = in.get(off) & 0xFF;
            int c2 = in.get(off + (len >> 1)) & 0xFF;
            int c3 = in.get(off + len - 1) & 0xFF;
            long combined = ((c1 << 16) | (c2 << 24) | c3 | (len << 8)) & 0xFFFFFFFFL;
            long bitflip = (SECRET.getInt(0) & 0xFFFFFFFFL) ^ (SECRET.getInt(4) & 0xFFFFFFFFL);
            return xxh64Avalanche(combined ^ bitflip);
        }
        return xxh64Avalanche(SECRET.getLong(56) ^ SECRET.getLong(64));
    }

    private static long large(ByteBuffer in, int off, int len) {
        long[] acc = {PRIME32_3, PRIME64_1, PRIME64_2, PRIME64_3, PRIME64_4, PRIME32_2, PRIME64_5, PRIME32_1};
        int blocks = (len - 1) / BLOCK;
        for (int n = 0; n < blocks; n++) {
            int base = off + n * BLOCK;
            for (int s = 0; s < STRIPES_PER_BLOCK; s++) {
                accumulate(acc, in, base + s * STRIPE, s * 8);
            }
            scramble(acc, SECRET_SIZE - STRIPE);
        }
        int stripes = ((len - 1) - BLOCK * blocks) / STRIPE;
        int base = off + blocks * BLOCK;
        for (int s = 0; s < stripes; s++) {
            accumulate(acc, in, base + s * STRIPE, s * 8);
        }
        accumulate(acc, in, off + len - STRIPE, SECRET_SIZE - STRIPE - 7);
        long result = len * PRIME64_1;
        for (int i = 0; i < 4; i++) {
            int k = 11 + 16 * i;
            result += fold(acc[2 * i] ^ SECRET.getLong(k), acc[2 * i + 1] ^ SECRET.getLong(k + 8));
        }
        return avalanche(result);
    }

    private static void accumulate(long[] acc, ByteBuffer in, int at, int secretAt) {
        for (int i = 0; i < 8; i++) {
            long data = in.getLong(at + 8 * i);
            long key = data ^ SECRET.getLong(secretAt + 8 * i);
            acc[i ^ 1] += data;
            acc[i] += (key & 0xFFFFFFFFL) * (key >>> 32);
        }
    }

    private static void scramble(long[] acc, int secretAt) {
        for (int i = 0; i < 8; i++) {
            long a = acc[i];
            a ^= a >>> 47;
            a ^= SECRET.getLong(secretAt + 8 * i);
            acc[i] = a * PRIME32_1;
        }
    }

    private static long mix16(ByteBuffer in, int at, int secretAt) {
        long lo = in.getLong(at);
        long hi = in.getLong(at + 8);
        return fold(lo ^ SECRET.getLong(secretAt), hi ^ SECRET.getLong(secretAt + 8));
    }

    private static long fold(long a, long b) {
        return (a * b) ^ Math.unsignedMultiplyHigh(a, b);
    }

    private static long avalanche(long h) {
        h ^= h >>> 37;
        h *= PRIME_MX1;
        return h ^ (h >>> 32);
    }

    private static long rrmxmx(long h, int len) {
        h ^= Long.rotateLeft(h, 49) ^ Long.rotateLeft(h, 24);
        h *= PRIME_MX2;
        h ^= (h >>> 35) + len;
        h *= PRIME_MX2;
        return h ^ (h >>> 28);
    }

    private static long xxh64Avalanche(long h) {
        h ^= h >>> 33;
        h *= PRIME64_2;
        h ^= h >>> 29;
        h *= PRIME64_3;
        return h ^ (h >>> 32);
    }
}
