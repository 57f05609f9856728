package dev.stoker;

import dev.stoker.internal.Permutation;
import java.util.Arrays;

/**
 * {@link Sampler#blockShuffle}: blocks permuted by {@code (seed, epoch)}, then the samples of each
 * window of {@code window} consecutive permuted blocks permuted by {@code (seed, epoch, window)}.
 * An epoch's order costs O(blocks) memory; a position is found by a binary search over the
 * windows, a permutation within its window and a search among the window's blocks.
 */
final class BlockShuffle implements Sampler {
    private final long[] starts;
    private final int window;
    private final String id;

    BlockShuffle(long[] starts, int window) {
        if (starts.length < 1 || starts[0] != 0) {
            throw new IllegalArgumentException("block starts must begin with 0, got " + Arrays.toString(starts));
        }
        for (int i = 1; i < starts.length; i++) {
            if (starts[i] < starts[i - 1]) {
                throw new IllegalArgumentException("block starts must not decrease: " + starts[i - 1] + " then " + starts[i]);
            }
        }
        if (window < 1) {
            throw new IllegalArgumentException("a shuffle window of blocks must be >= 1, got " + window);
        }
        this.starts = starts.clone();
        this.window = window;
        this.id = "blockShuffle(blocks=" + (starts.length - 1) + ", window=" + window + ", hash=" + Long.toHexString(hash(starts)) + ")";
    }

    private static long hash(long[] starts) {
        long h = 0;
        for (long s : starts) {
            h = Keys.key(h, s);
        }
        return h;
    }

    @Override
    public long length(long size) {
        check(size);
        return size;
    }

    private void check(long size) {
        if (size != starts[starts.length - 1]) {
            throw new IllegalArgumentException(id + ": the blocks hold " + starts[starts.length - 1]
                    + " samples, the dataset " + size);
        }
    }

    @Override
    public Order order(long size, long seed, long epoch) {
        check(size);
        int blocks = starts.length - 1;
        long key = Keys.key(seed, epoch, 0x424c4f434bL);
        int[] perm = new int[blocks];
        Permutation p = new Permutation(Math.max(1, blocks), key);
        for (int i = 0; i < blocks; i++) {
            perm[i] = (int) p.apply(i);
        }
        int windows = (blocks + window - 1) / window;
        long[] windowStart = new long[windows + 1];
        long[] within = new long[blocks]; // the start of each permuted block within its window
        for (int w = 0; w < windows; w++) {
            long n = 0;
            for (int i = w * window; i < Math.min(blocks, (w + 1) * window); i++) {
                within[i] = n;
                n += starts[perm[i] + 1] - starts[perm[i]];
            }
            windowStart[w + 1] = windowStart[w] + n;
        }
        double perWindow = windowStart[1] == 0 ? 0 : 1.0 / windowStart[1];
        Permutation[] inside = new Permutation[windows];
        for (int w = 0; w < windows; w++) {
            long n = windowStart[w + 1] - windowStart[w];
            inside[w] = n == 0 ? null : new Permutation(n, Keys.key(key, w));
        }
        return new Order() {
            @Override
            public long length() {
                return size;
            }

            /**
             * The window holding {@code position} (past windows of empty blocks): a guess from the
             * first window's size, a multiplication (right for blocks of one size), else a search.
             */
            private int window(long position) {
                int w = (int) Math.min(windows - 1, position * perWindow);
                if (!(windowStart[w] <= position && position < windowStart[w + 1])) {
                    w = Arrays.binarySearch(windowStart, position);
                    w = w >= 0 ? w : -w - 2;
                }
                while (windowStart[w + 1] == windowStart[w]) {
                    w++; // a window of empty blocks
                }
                return w;
            }

            /** The index at {@code position}, which window {@code w} holds. */
            private long index(int w, long position) {
                return place(w, inside[w].apply(position - windowStart[w]));
            }

            /** The index of permuted position {@code local} of window {@code w}: in its block, found without a branch to mispredict. */
            private long place(int w, long local) {
                int first = w * window;
                int last = Math.min(blocks, first + window) - 1;
                int b = first;
                for (int j = first + 1; j <= last; j++) {
                    b += within[j] <= local ? 1 : 0; // to the block holding `local`, past empty ones; no branch to mispredict
                }
                return starts[perm[b]] + local - within[b];
            }

            @Override
            public long index(long position) {
                return index(window(position), position);
            }

            /**
             * A batch's positions mostly share a window: they are permuted within it together
             * ({@link Permutation#applyAll}), then each is placed in its block.
             */
            @Override
            public void indices(long[] positions, int count) {
                int i = 0;
                while (i < count) {
                    int w = window(positions[i]);
                    long lo = windowStart[w];
                    long hi = windowStart[w + 1];
                    int j = i;
                    while (j < count && positions[j] >= lo && positions[j] < hi) {
                        positions[j++] -= lo;
                    }
                    inside[w].applyAll(positions, i, j - i);
                    for (int t = i; t < j; t++) {
                        positions[t] = place(w, positions[t]);
                    }
                    i = j;
                }
            }
        };
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public String toString() {
        return id;
    }
}
