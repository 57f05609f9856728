package dev.stoker.root;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Random;
import org.junit.jupiter.api.Test;

class RntEncodingTest {
    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** Little-endian bytes of {@code v}, {@code w} bytes each, split: all first bytes, then all second bytes, ... */
    static byte[] split(long[] v, int w) {
        byte[] b = new byte[v.length * w];
        for (int i = 0; i < v.length; i++) {
            for (int j = 0; j < w; j++) {
                b[j * v.length + i] = (byte) (v[i] >>> (8 * j));
            }
        }
        return b;
    }

    static long zigzag(long x) {
        return (x << 1) ^ (x >> 63);
    }

    /** {@code bits}-bit values packed LSB first into a little-endian bit stream. */
    static byte[] pack(long[] v, int bits) {
        byte[] b = new byte[(int) RntEncoding.pageBytes(v.length, bits)];
        for (int i = 0; i < v.length; i++) {
            for (int k = 0; k < bits; k++) {
                long pos = (long) i * bits + k;
                if (((v[i] >>> k) & 1) != 0) {
                    b[(int) (pos >>> 3)] |= (byte) (1 << (pos & 7));
                }
            }
        }
        return b;
    }

    private static MemorySegment decode(int type, int bits, int n, byte[] page, int width) {
        MemorySegment dst = MemorySegment.ofArray(new byte[n * width + 3]);
        RntEncoding.decode(type, bits, n, MemorySegment.ofArray(page), dst, 3, -2, 3);
        return dst;
    }

    @Test
    void splitInt32UndoesTheByteSplitAndTheZigzag() {
        long[] v = {0, -1, 1, Integer.MIN_VALUE, Integer.MAX_VALUE, 67305985, -123456};
        long[] z = new long[v.length];
        for (int i = 0; i < v.length; i++) {
            z[i] = zigzag(v[i]) & 0xFFFFFFFFL;
        }
        MemorySegment d = decode(RntEncoding.SPLIT_INT32, 32, v.length, split(z, 4), 4);
        for (int i = 0; i < v.length; i++) {
            assertEquals((int) v[i], d.get(I32, 3 + 4L * i), "element " + i);
        }
    }

    @Test
    void splitInt16AndInt64AreZigzagged() {
        long[] v = {0, -1, 1, Short.MIN_VALUE, Short.MAX_VALUE};
        long[] z = new long[v.length];
        for (int i = 0; i < v.length; i++) {
            z[i] = zigzag(v[i]) & 0xFFFF;
        }
        MemorySegment d = decode(RntEncoding.SPLIT_INT16, 16, v.length, split(z, 2), 2);
        for (int i = 0; i < v.length; i++) {
            assertEquals((short) v[i], d.get(I16, 3 + 2L * i));
        }
        long[] w = {0, -1, Long.MIN_VALUE, Long.MAX_VALUE, 1L << 40};
        long[] zw = new long[w.length];
        for (int i = 0; i < w.length; i++) {
            zw[i] = zigzag(w[i]);
        }
        MemorySegment e = decode(RntEncoding.SPLIT_INT64, 64, w.length, split(zw, 8), 8);
        for (int i = 0; i < w.length; i++) {
            assertEquals(w[i], e.get(I64, 3 + 8L * i));
        }
    }

    @Test
    void splitUnsignedAndRealsAreOnlyUnsplit() {
        long[] v = {0xFFDDCCBBL, 1, 0, 0x80000000L};
        MemorySegment d = decode(RntEncoding.SPLIT_UINT32, 32, v.length, split(v, 4), 4);
        for (int i = 0; i < v.length; i++) {
            assertEquals((int) v[i], d.get(I32, 3 + 4L * i));
        }
        float[] f = {0.099967316f, -1.5f, 3e38f};
        long[] bits = new long[f.length];
        for (int i = 0; i < f.length; i++) {
            bits[i] = Float.floatToRawIntBits(f[i]) & 0xFFFFFFFFL;
        }
        MemorySegment r = decode(RntEncoding.SPLIT_REAL32, 32, f.length, split(bits, 4), 4);
        for (int i = 0; i < f.length; i++) {
            assertEquals(f[i], r.get(F32, 3 + 4L * i));
        }
    }

    @Test
    void splitIndexColumnsAreDeltaEncodedWithinThePage() {
        long[] offsets = {0, 1, 3, 6, 10, 10, 15, 5_000_000_000L};
        long[] delta = new long[offsets.length];
        for (int i = 0; i < offsets.length; i++) {
            delta[i] = offsets[i] - (i == 0 ? 0 : offsets[i - 1]);
        }
        MemorySegment d = decode(RntEncoding.SPLIT_INDEX64, 64, offsets.length, split(delta, 8), 8);
        MemorySegment i32 = decode(RntEncoding.SPLIT_INDEX32, 32, offsets.length - 1,
                split(java.util.Arrays.copyOf(delta, offsets.length - 1), 4), 8);
        for (int i = 0; i < offsets.length; i++) {
            assertEquals(offsets[i], d.get(I64, 3 + 8L * i));
        }
        // Index32 widens to int64: the same offsets but the last
        long[] four = new long[offsets.length - 1];
        for (int i = 0; i < four.length; i++) {
            four[i] = i32.get(I64, 3 + 8L * i);
        }
        assertArrayEquals(java.util.Arrays.copyOf(offsets, offsets.length - 1), four);
    }

    @Test
    void bitColumnsUnpackLeastSignificantBitFirst() {
        boolean[] v = new boolean[19];
        long[] asLong = new long[v.length];
        Random r = new Random(3);
        for (int i = 0; i < v.length; i++) {
            v[i] = r.nextBoolean();
            asLong[i] = v[i] ? 1 : 0;
        }
        byte[] page = pack(asLong, 1);
        assertEquals(3, page.length);
        MemorySegment d = decode(RntEncoding.BIT, 1, v.length, page, 1);
        for (int i = 0; i < v.length; i++) {
            assertEquals(v[i] ? 1 : 0, d.get(ValueLayout.JAVA_BYTE, 3 + i), "bit " + i);
        }
    }

    @Test
    void truncatedRealsKeepTheirHighBits() {
        float[] f = {1.23456789f, 1.4660155e13f, -6.2875986e-22f, -1.9060668f, 0f};
        for (int bits : new int[] {10, 13, 16, 24, 31}) {
            long[] top = new long[f.length];
            for (int i = 0; i < f.length; i++) {
                top[i] = (Float.floatToRawIntBits(f[i]) & 0xFFFFFFFFL) >>> (32 - bits);
            }
            MemorySegment d = decode(RntEncoding.REAL32_TRUNC, bits, f.length, pack(top, bits), 4);
            for (int i = 0; i < f.length; i++) {
                int want = Float.floatToRawIntBits(f[i]) & (int) (0xFFFFFFFFL << (32 - bits));
                assertEquals(want, d.get(I32, 3 + 4L * i), bits + " bits, element " + i);
            }
        }
    }

    @Test
    void quantizedRealsMapTheirIntegersOntoTheRange() {
        for (int bits : new int[] {1, 7, 8, 20, 25, 32}) {
            long max = (1L << bits) - 1;
            long[] q = {0, max, max / 2, 1};
            MemorySegment d = decode(RntEncoding.REAL32_QUANT, bits, q.length, pack(q, bits), 4);
            for (int i = 0; i < q.length; i++) {
                assertEquals((float) (-2 + q[i] * (5.0 / max)), d.get(F32, 3 + 4L * i), bits + " bits, element " + i);
            }
            assertEquals(-2f, d.get(F32, 3));
            assertEquals(3f, d.get(F32, 7));
        }
    }

    @Test
    void halfPrecisionWidensToFloat() {
        long[] h = {Float.floatToFloat16(1.5f), Float.floatToFloat16(-0.25f)};
        byte[] plain = {(byte) h[0], (byte) (h[0] >>> 8), (byte) h[1], (byte) (h[1] >>> 8)};
        MemorySegment d = decode(RntEncoding.REAL16, 16, 2, plain, 4);
        assertEquals(1.5f, d.get(F32, 3));
        assertEquals(-0.25f, d.get(F32, 7));
        MemorySegment s = decode(RntEncoding.SPLIT_REAL16, 16, 2, split(h, 2), 4);
        assertEquals(1.5f, s.get(F32, 3));
        assertEquals(-0.25f, s.get(F32, 7));
    }

    @Test
    void everyFixedWidthTypeDeclaresItsWidth() {
        assertEquals(true, RntEncoding.validBits(RntEncoding.SPLIT_INDEX64, 64));
        assertEquals(false, RntEncoding.validBits(RntEncoding.SPLIT_INDEX64, 32));
        assertEquals(false, RntEncoding.validBits(RntEncoding.REAL32_TRUNC, 32));
        assertEquals(true, RntEncoding.validBits(RntEncoding.REAL32_QUANT, 32));
        assertEquals(false, RntEncoding.known(RntEncoding.SWITCH));
        assertEquals(false, RntEncoding.known(0x42));
    }
}
