package dev.stoker.parquet;

import java.io.IOException;
import java.util.Arrays;

/** Parquet's RLE / bit-packing hybrid (levels, dictionary indices), and the bounds checks of page bytes. */
final class Rle {
    private Rle() {
    }

    /**
     * The RLE / bit-packing hybrid: runs of one repeated value and groups of eight bit-packed
     * values (least significant bit first), each behind a varint header.
     */
    static void hybrid(byte[] b, int p, int end, int width, int[] out, int n) throws IOException {
        int bytesPerValue = (width + 7) >>> 3;
        long mask = width == 32 ? 0xFFFF_FFFFL : (1L << width) - 1;
        int i = 0;
        while (i < n) {
            int header = 0;
            for (int shift = 0; ; shift += 7) {
                check(p < end && shift < 32, "a run header runs past its data");
                int x = b[p++];
                header |= (x & 0x7F) << shift;
                if (x >= 0) {
                    break;
                }
            }
            if ((header & 1) == 0) {
                int count = header >>> 1;
                check(p + bytesPerValue <= end, "a run's value runs past its data");
                int v = 0;
                for (int k = 0; k < bytesPerValue; k++) {
                    v |= (b[p + k] & 0xFF) << (8 * k);
                }
                p += bytesPerValue;
                int m = Math.min(count, n - i);
                Arrays.fill(out, i, i + m, v);
                i += m;
            } else {
                int groups = header >>> 1;
                int bytes = groups * width;
                check(bytes >= 0 && p + bytes <= end || width == 0, "bit-packed values run past their data");
                int m = Math.min(groups * 8, n - i);
                long acc = 0;
                int bits = 0;
                int q = p;
                for (int k = 0; k < m; k++) {
                    while (bits < width) {
                        acc |= (long) (b[q++] & 0xFF) << bits;
                        bits += 8;
                    }
                    out[i + k] = (int) (acc & mask);
                    acc >>>= width;
                    bits -= width;
                }
                i += m;
                p += bytes;
            }
        }
    }

    static int bitWidth(int max) {
        return 32 - Integer.numberOfLeadingZeros(max);
    }

    static int le32(byte[] b, int p, int end) throws IOException {
        check(p + 4 <= end, "a length runs past its page");
        return (b[p] & 0xFF) | (b[p + 1] & 0xFF) << 8 | (b[p + 2] & 0xFF) << 16 | b[p + 3] << 24;
    }

    static void check(boolean ok, String what) throws IOException {
        if (!ok) {
            throw new IOException(what);
        }
    }
}
