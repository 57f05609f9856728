package dev.stoker;

import dev.stoker.internal.Permutation;
import java.util.Arrays;

/**
 * Decides the order of an epoch over a dataset's index space: a sampler makes an {@link Order}
 * from {@code (dataset size, seed, epoch)}. The loader then splits that order among ranks with a
 * {@link Partition}.
 */
public interface Sampler {

    /** Number of positions an epoch has over a dataset of {@code size} samples. */
    long length(long size);

    /** The order of epoch {@code epoch}. */
    Order order(long size, long seed, long epoch);

    /** A short description that identifies this sampler's orders; a saved state must match it. */
    String id();

    /** {@code 0, 1, 2, ...}: the same every epoch. */
    static Sampler sequential() {
        return Samplers.SEQUENTIAL;
    }

    /**
     * A uniformly random permutation per epoch, chosen by {@code (seed, epoch)}: O(1) memory and
     * O(1) time per position for any dataset size (NOTE [Permutation]).
     */
    static Sampler shuffle() {
        return Samplers.SHUFFLE;
    }

    /**
     * {@code numSamples} indices drawn uniformly with replacement, independently per position,
     * keyed by {@code (seed, epoch, position)}: PyTorch's {@code RandomSampler(replacement=True)},
     * and nanoGPT's random offsets over {@code TokenWindows.overlapping}. O(1) memory.
     */
    static Sampler random(long numSamples) {
        return new RandomSampler(numSamples);
    }

    /**
     * {@code numSamples} indices drawn with probability proportional to {@code weights}, with the
     * semantics of PyTorch's {@code WeightedRandomSampler}. With replacement each position is an
     * independent draw (alias method, O(1) per position, no per-epoch state). Without replacement
     * the order is a weighted random permutation truncated to {@code numSamples} (each next index
     * drawn from the remaining ones in proportion to its weight), built once per epoch in O(n log n).
     */
    static Sampler weighted(double[] weights, long numSamples, boolean replacement) {
        return new WeightedSampler(weights, numSamples, replacement);
    }

    /**
     * Contiguous blocks of {@code block} samples in a random order per epoch, the samples of each
     * in dataset order: a batch of {@code block} samples is a contiguous run of events at a random
     * offset (as PolarBERT batches IceCube events), read with one sequential copy a field. The
     * blocks' grid is shifted by a random offset each epoch, so a block holds other neighbours
     * from one epoch to the next; every sample once per epoch, chosen by {@code (seed, epoch)}.
     */
    static Sampler blocks(long block) {
        return new BlockOrder(block);
    }

    /**
     * Over a dataset with a sample at every step (a token file's window at every token), chunk
     * {@code c} of {@code stride} samples read once an epoch at the sample a random offset below
     * {@code stride} into it, the offset chosen by {@code (seed, epoch, c)}: BabyLlama's chunk
     * {@code i} plus a random offset below the sequence length. The chunks in a random order
     * ({@code shuffle}) or in order; {@code size / stride} positions an epoch.
     */
    static Sampler offsets(long stride, boolean shuffle) {
        return new OffsetOrder(stride, shuffle);
    }

    /**
     * A shuffle for data stored in blocks (a Parquet file's row groups, an HDF5 file's chunks),
     * where a sample costs its block's decoding: the blocks, {@code [starts[i], starts[i + 1])},
     * in a random order per epoch, and the samples of each {@code window} consecutive blocks of
     * that order in a random order among themselves. Every sample once per epoch; at any time the
     * loader reads from about {@code window} blocks, so each is decoded once per epoch and its
     * rows are read while in cache. A sample moves at most {@code window} blocks' rows from its
     * neighbours; a larger window mixes more and holds more decoded blocks.
     */
    static Sampler blockShuffle(long[] starts, int window) {
        return new BlockShuffle(starts, window);
    }

    /**
     * Groups of samples, group {@code g} the indices {@code [starts[g], starts[g + 1])} (signal and
     * background files, say), drawn in the proportions {@code weights}: an epoch of as many
     * positions as samples, each group within one sample of its share at every prefix, its draws
     * running through its own order ({@code within.get(g)}, over the group's samples, a new order
     * each time they pass its end). A group drawn less than its size sees another part of itself
     * each epoch, one drawn more sees all of itself (NOTE [Group draws]). Chosen by {@code (seed, epoch)}.
     */
    static Sampler groups(long[] starts, double[] weights, java.util.List<Sampler> within) {
        return new GroupSampler(starts, weights, within);
    }
}

final class Samplers {
    private Samplers() {
    }

    static final Sampler SEQUENTIAL = new Sampler() {
        @Override
        public long length(long size) {
            return size;
        }

        @Override
        public Order order(long size, long seed, long epoch) {
            return new Order() {
                @Override
                public long length() {
                    return size;
                }

                @Override
                public long index(long position) {
                    return position;
                }
            };
        }

        @Override
        public String id() {
            return "sequential";
        }

        @Override
        public String toString() {
            return id();
        }
    };

    static final Sampler SHUFFLE = new Sampler() {
        @Override
        public long length(long size) {
            return size;
        }

        @Override
        public Order order(long size, long seed, long epoch) {
            if (size == 0) {
                return SEQUENTIAL.order(0, seed, epoch);
            }
            Permutation p = new Permutation(size, Keys.key(seed, epoch));
            return new Order() {
                @Override
                public long length() {
                    return size;
                }

                @Override
                public long index(long position) {
                    return p.apply(position);
                }

                @Override
                public void indices(long[] positions, int count) {
                    p.applyAll(positions, 0, count);
                }
            };
        }

        @Override
        public String id() {
            return "shuffle";
        }

        @Override
        public String toString() {
            return id();
        }
    };
}

/** Uniform draws with replacement, as a pure function of (seed, epoch, position). */
final class RandomSampler implements Sampler {
    private final long numSamples;

    RandomSampler(long numSamples) {
        if (numSamples < 0) {
            throw new IllegalArgumentException("numSamples must be >= 0, got " + numSamples);
        }
        this.numSamples = numSamples;
    }

    @Override
    public long length(long size) {
        return size == 0 ? 0 : numSamples;
    }

    @Override
    public Order order(long size, long seed, long epoch) {
        long key = Keys.key(seed, epoch, 0x52414e444f4dL);
        long n = length(size);
        return new Order() {
            @Override
            public long length() {
                return n;
            }

            @Override
            public long index(long position) {
                return Math.unsignedMultiplyHigh(Keys.key(key, position), size);
            }
        };
    }

    @Override
    public String id() {
        return "random(n=" + numSamples + ")";
    }

    @Override
    public String toString() {
        return id();
    }
}

/** PyTorch's WeightedRandomSampler, as a pure function of (seed, epoch, position). */
final class WeightedSampler implements Sampler {
    private final double[] weights;
    private final long numSamples;
    private final boolean replacement;
    private final double[] prob;
    private final int[] alias;
    private final String id;
    private final int positive;

    WeightedSampler(double[] weights, long numSamples, boolean replacement) {
        if (weights.length == 0) {
            throw new IllegalArgumentException("weights must not be empty");
        }
        double sum = 0;
        int pos = 0;
        for (int i = 0; i < weights.length; i++) {
            double w = weights[i];
            if (!(w >= 0) || Double.isInfinite(w)) {
                throw new IllegalArgumentException("weight " + i + " must be finite and >= 0, got " + w);
            }
            sum += w;
            if (w > 0) {
                pos++;
            }
        }
        if (sum <= 0) {
            throw new IllegalArgumentException("weights must not all be zero");
        }
        if (numSamples <= 0) {
            throw new IllegalArgumentException("numSamples must be positive, got " + numSamples);
        }
        if (!replacement && numSamples > pos) {
            throw new IllegalArgumentException("cannot draw " + numSamples + " samples without replacement from "
                    + pos + " with non-zero weight");
        }
        this.weights = weights.clone();
        this.numSamples = numSamples;
        this.replacement = replacement;
        this.positive = pos;
        this.id = "weighted(" + (replacement ? "replacement" : "no-replacement") + ",n=" + numSamples
                + ",w=" + Long.toHexString(Arrays.hashCode(weights)) + ")";
        if (replacement) {
            // Vose's alias method.
            int n = weights.length;
            prob = new double[n];
            alias = new int[n];
            double[] scaled = new double[n];
            int[] small = new int[n];
            int[] large = new int[n];
            int ns = 0;
            int nl = 0;
            for (int i = 0; i < n; i++) {
                scaled[i] = weights[i] * n / sum;
                if (scaled[i] < 1) {
                    small[ns++] = i;
                } else {
                    large[nl++] = i;
                }
            }
            while (ns > 0 && nl > 0) {
                int s = small[--ns];
                int l = large[--nl];
                prob[s] = scaled[s];
                alias[s] = l;
                scaled[l] = (scaled[l] + scaled[s]) - 1;
                if (scaled[l] < 1) {
                    small[ns++] = l;
                } else {
                    large[nl++] = l;
                }
            }
            while (nl > 0) {
                prob[large[--nl]] = 1;
            }
            while (ns > 0) {
                prob[small[--ns]] = 1; // rounding leftovers
            }
        } else {
            prob = null;
            alias = null;
        }
    }

    @Override
    public long length(long size) {
        check(size);
        return numSamples;
    }

    private void check(long size) {
        if (size != weights.length) {
            throw new IllegalArgumentException("weighted sampler has " + weights.length
                    + " weights but the dataset has " + size + " samples");
        }
    }

    @Override
    public Order order(long size, long seed, long epoch) {
        check(size);
        long key = Keys.key(seed, epoch, 0x5745494748544544L);
        if (replacement) {
            return new Order() {
                @Override
                public long length() {
                    return numSamples;
                }

                @Override
                public long index(long position) {
                    long h = Keys.key(key, position);
                    int column = (int) Math.unsignedMultiplyHigh(h, weights.length);
                    double coin = Keys.unit(Keys.mix64(h ^ 0x6a09e667f3bcc909L));
                    return coin < prob[column] ? column : alias[column];
                }
            };
        }
        // NOTE [Weighted without replacement]: drawing each next index in proportion to the
        // remaining weights (torch.multinomial without replacement) has the same distribution as
        // sorting by E_i / w_i with E_i ~ Exp(1) (Efraimidis and Spirakis). Keys are floats packed
        // above the 32-bit index so that one primitive sort orders them, ties broken by index.
        long[] packed = new long[positive];
        int k = 0;
        for (int i = 0; i < weights.length; i++) {
            if (weights[i] > 0) {
                double e = -Math.log1p(-Keys.unit(Keys.key(key, i)));
                float q = (float) (e / weights[i]);
                packed[k++] = ((long) Float.floatToIntBits(q) << 32) | i;
            }
        }
        Arrays.sort(packed);
        int[] chosen = new int[(int) numSamples];
        for (int i = 0; i < chosen.length; i++) {
            chosen[i] = (int) packed[i];
        }
        return new Order() {
            @Override
            public long length() {
                return chosen.length;
            }

            @Override
            public long index(long position) {
                return chosen[(int) position];
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
