package dev.stoker;

import java.util.Arrays;

/**
 * The deterministic interleaving of a weighted mix, position-addressable.
 *
 * <p>NOTE [Blend]: position {@code p} goes to the part {@code k} with the largest error
 * {@code w_k * (p + 1) - c_k} (the first on ties), where {@code c_k} counts the positions before
 * {@code p} given to part {@code k}. That is Megatron-LM's {@code build_blending_indices} with the
 * target taken after the position rather than at {@code max(p, 1)}: Megatron's form lets a part
 * fall slightly more than one sample behind its share, this one keeps every part within one sample
 * of its share at every prefix (DatasetViewsTest checks it for random weights). The rule is sequential, so the
 * counts are kept at checkpoints every {@value #BLOCK} positions (computed once, lazily, in
 * order) and each thread decodes the block it is reading into a small cursor, which sequential and
 * strided readers hit almost every time.
 */
final class Blend {
    static final int BLOCK = 1024;

    private final double[] weights;
    private final long length;
    private final int parts;
    private long[] checkpoints;
    private long computedBlocks;
    private final ThreadLocal<Cursor> cursors = ThreadLocal.withInitial(Cursor::new);

    Blend(double[] weights, long length, long[] sizes) {
        if (weights.length == 0 || weights.length != sizes.length) {
            throw new IllegalArgumentException("mix needs one weight per dataset: " + weights.length
                    + " weights for " + sizes.length + " datasets");
        }
        if (length < 0) {
            throw new IllegalArgumentException("mix length must be >= 0, got " + length);
        }
        double sum = 0;
        for (int i = 0; i < weights.length; i++) {
            if (!(weights[i] >= 0) || Double.isInfinite(weights[i])) {
                throw new IllegalArgumentException("mix weight " + i + " must be finite and >= 0, got " + weights[i]);
            }
            if (weights[i] > 0 && sizes[i] == 0) {
                throw new IllegalArgumentException("mix part " + i + " has weight " + weights[i] + " but no samples");
            }
            sum += weights[i];
        }
        if (sum <= 0) {
            throw new IllegalArgumentException("mix weights must not all be zero");
        }
        this.weights = new double[weights.length];
        for (int i = 0; i < weights.length; i++) {
            this.weights[i] = weights[i] / sum;
        }
        if ((length / BLOCK + 2) * weights.length > Integer.MAX_VALUE - 16) {
            throw new IllegalArgumentException("a mix of " + length + " samples over " + weights.length
                    + " datasets is too long to checkpoint; split it into several mixes");
        }
        this.length = length;
        this.parts = weights.length;
        this.checkpoints = new long[parts * 16];
        this.computedBlocks = 1; // block 0 starts with all counts zero
    }

    long length() {
        return length;
    }

    /** Where position {@code p} comes from; the returned cursor is this thread's and is reused. */
    Cursor locate(long p) {
        Cursor c = cursors.get();
        long block = p / BLOCK;
        if (c.block != block) {
            decode(block, c);
        }
        int j = (int) (p - block * BLOCK);
        c.part = c.parts[j];
        c.local = c.locals[j];
        return c;
    }

    private void decode(long block, Cursor c) {
        long[] counts = c.counts;
        synchronized (this) {
            while (computedBlocks <= block) {
                long b = computedBlocks - 1;
                System.arraycopy(checkpoints, (int) (b * parts), counts, 0, parts);
                run(b, counts, null, null);
                int at = (int) (computedBlocks * parts);
                if (at + parts > checkpoints.length) {
                    checkpoints = Arrays.copyOf(checkpoints, Math.max(at + parts, checkpoints.length * 2));
                }
                System.arraycopy(counts, 0, checkpoints, at, parts);
                computedBlocks++;
            }
            System.arraycopy(checkpoints, (int) (block * parts), counts, 0, parts);
        }
        run(block, counts, c.parts, c.locals);
        c.block = block;
    }

    private void run(long block, long[] counts, int[] outParts, long[] outLocals) {
        long from = block * BLOCK;
        long to = Math.min(length, from + BLOCK);
        for (long p = from; p < to; p++) {
            double at = p + 1.0;
            int best = 0;
            double bestError = weights[0] * at - counts[0];
            for (int k = 1; k < parts; k++) {
                double e = weights[k] * at - counts[k];
                if (e > bestError) {
                    bestError = e;
                    best = k;
                }
            }
            if (outParts != null) {
                outParts[(int) (p - from)] = best;
                outLocals[(int) (p - from)] = counts[best];
            }
            counts[best]++;
        }
    }

    final class Cursor {
        long block = -1;
        final int[] parts = new int[BLOCK];
        final long[] locals = new long[BLOCK];
        final long[] counts = new long[Blend.this.parts];
        int part;
        long local;
    }
}
