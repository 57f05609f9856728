package dev.stoker;

import dev.stoker.internal.Permutation;

/**
 * {@link Sampler#blocks}: contiguous blocks of {@code block} samples in a random order, their grid
 * shifted by a random offset each epoch. O(1) memory and time per position.
 *
 * <p>NOTE [Blocks]: sample positions are cut at {@code shift + k * block} (mod {@code size}), so
 * block {@code k} is the samples {@code (shift + k * block + j) mod size}: contiguous in the
 * dataset except the one block that wraps past its end. With {@code full = size / block} whole
 * blocks and a remainder {@code r}, a keyed permutation orders the {@code full} whole blocks and
 * the short one of {@code r} (the last in grid order) comes last, so that every batch of
 * {@code block} samples but the epoch's last is one whole block. Every sample once per epoch.
 */
final class BlockOrder implements Sampler {
    private final long block;

    BlockOrder(long block) {
        if (block < 1) {
            throw new IllegalArgumentException("a block of samples must be >= 1, got " + block);
        }
        this.block = block;
    }

    @Override
    public long length(long size) {
        return size;
    }

    @Override
    public Order order(long size, long seed, long epoch) {
        long full = size / block;
        if (size == 0) {
            return Samplers.SEQUENTIAL.order(0, seed, epoch);
        }
        long key = Keys.key(seed, epoch, 0x424c4f434b53L);
        Permutation perm = full > 0 ? new Permutation(full, key) : null;
        long shift = Long.remainderUnsigned(Keys.key(key, 1), Math.min(block, size));
        long whole = full * block;
        return new Order() {
            @Override
            public long length() {
                return size;
            }

            @Override
            public long index(long position) {
                long start = position < whole ? perm.apply(position / block) * block + position % block : position;
                start += shift;
                return start >= size ? start - size : start;
            }
        };
    }

    @Override
    public String id() {
        return "blocks(block=" + block + ")";
    }

    @Override
    public String toString() {
        return id();
    }
}
