package dev.stoker;

import java.util.Arrays;

/**
 * The batches of a pass the consumer has received, as a frontier (every batch below it is
 * delivered) and a window of bits above it. Used by the consumer thread only.
 */
final class DeliveredSet {
    private long frontier;
    private long[] words = new long[2];

    void add(long b) {
        if (b < frontier) {
            return;
        }
        long rel = b - frontier;
        while (rel >= 64L * words.length) {
            words = Arrays.copyOf(words, words.length * 2);
        }
        words[(int) (rel >>> 6)] |= 1L << (rel & 63);
        // advance the frontier over the delivered prefix
        int shift = 0;
        while ((words[shift >>> 6] & (1L << (shift & 63))) != 0) {
            shift++;
            if (shift == 64 * words.length) {
                break;
            }
        }
        if (shift > 0) {
            shiftRight(shift);
            frontier += shift;
        }
    }

    /** Shifts the window down by {@code n} bits, in place (nothing allocated per batch). */
    private void shiftRight(int n) {
        int wordShift = n >>> 6;
        int bitShift = n & 63;
        int len = words.length;
        for (int i = 0; i < len; i++) {
            int src = i + wordShift;
            long lo = src < len ? words[src] >>> bitShift : 0;
            long hi = (bitShift != 0 && src + 1 < len) ? words[src + 1] << (64 - bitShift) : 0;
            words[i] = lo | hi;
        }
    }

    long frontier() {
        return frontier;
    }

    /** Delivered batches above the frontier, relative to it. */
    long[] above() {
        long[] out = new long[64];
        int k = 0;
        for (int i = 0; i < 64 * words.length; i++) {
            if ((words[i >>> 6] & (1L << (i & 63))) != 0) {
                if (k == out.length) {
                    out = Arrays.copyOf(out, k * 2);
                }
                out[k++] = i;
            }
        }
        return Arrays.copyOf(out, k);
    }
}
