package dev.stoker;

import dev.stoker.internal.Permutation;

/**
 * {@link Sampler#offsets}: over a dataset of a sample at every step (a window at every token), the
 * chunks of {@code stride} samples, each read at one sample a random offset into it per epoch.
 * O(1) memory and time per position.
 */
final class OffsetOrder implements Sampler {
    private final long stride;
    private final boolean shuffle;

    OffsetOrder(long stride, boolean shuffle) {
        if (stride < 1) {
            throw new IllegalArgumentException("a stride must be >= 1, got " + stride);
        }
        this.stride = stride;
        this.shuffle = shuffle;
    }

    /** Whole chunks: chunk {@code c} at any offset below {@code stride} is an index below {@code size}. */
    @Override
    public long length(long size) {
        return size / stride;
    }

    @Override
    public Order order(long size, long seed, long epoch) {
        long chunks = size / stride;
        long key = Keys.key(seed, epoch, 0x4f4646534554L);
        Permutation perm = shuffle && chunks > 0 ? new Permutation(chunks, key) : null;
        return new Order() {
            @Override
            public long length() {
                return chunks;
            }

            @Override
            public long index(long position) {
                long chunk = perm == null ? position : perm.apply(position);
                return chunk * stride + Long.remainderUnsigned(Keys.key(key, chunk), stride);
            }
        };
    }

    @Override
    public String id() {
        return "offsets(stride=" + stride + ", shuffle=" + shuffle + ")";
    }

    @Override
    public String toString() {
        return id();
    }
}
