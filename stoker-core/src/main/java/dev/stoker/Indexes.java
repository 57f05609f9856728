package dev.stoker;

import dev.stoker.internal.Permutation;
import java.util.ArrayList;
import java.util.List;

/** Index maps behind the dataset views: pure functions from a view's index to its parent's. */
final class Indexes {
    private Indexes() {
    }

    interface Map {
        long size();

        long map(long index);
    }

    static Map range(long parent, long from, long to) {
        if (from < 0 || to < from || to > parent) {
            throw new IllegalArgumentException("subset [" + from + ", " + to + ") is not within [0, " + parent + ")");
        }
        return new Map() {
            @Override
            public long size() {
                return to - from;
            }

            @Override
            public long map(long index) {
                return from + index;
            }
        };
    }

    static Map of(long parent, long[] indices) {
        long[] copy = indices.clone();
        for (int i = 0; i < copy.length; i++) {
            if (copy[i] < 0 || copy[i] >= parent) {
                throw new IllegalArgumentException("subset index " + copy[i] + " (at " + i
                        + ") is not within [0, " + parent + ")");
            }
        }
        return new Map() {
            @Override
            public long size() {
                return copy.length;
            }

            @Override
            public long map(long index) {
                return copy[Math.toIntExact(index)];
            }
        };
    }

    static List<Map> randomSplit(long parent, long seed, long... lengths) {
        long sum = 0;
        for (long l : lengths) {
            if (l < 0) {
                throw new IllegalArgumentException("split lengths must be >= 0, got " + l);
            }
            sum += l;
        }
        if (sum != parent) {
            throw new IllegalArgumentException("split lengths add up to " + sum + ", the dataset has " + parent);
        }
        List<Map> parts = new ArrayList<>();
        Permutation perm = parent == 0 ? null : new Permutation(parent, Keys.key(seed, 0x53504c4954L));
        long offset = 0;
        for (long l : lengths) {
            long base = offset;
            parts.add(new Map() {
                @Override
                public long size() {
                    return l;
                }

                @Override
                public long map(long index) {
                    return perm.apply(base + index);
                }
            });
            offset += l;
        }
        return parts;
    }

    /** torch.utils.data.random_split's rule for fractions. */
    static long[] lengths(long size, double... fractions) {
        double total = 0;
        for (double f : fractions) {
            if (!(f >= 0 && f <= 1)) {
                throw new IllegalArgumentException("split fractions must be in [0, 1], got " + f);
            }
            total += f;
        }
        if (Math.abs(total - 1) > 1e-9) {
            throw new IllegalArgumentException("split fractions add up to " + total + ", not 1");
        }
        long[] out = new long[fractions.length];
        long assigned = 0;
        for (int i = 0; i < out.length; i++) {
            out[i] = (long) Math.floor(size * fractions[i]);
            assigned += out[i];
        }
        for (int i = 0; assigned < size; i = (i + 1) % out.length) {
            out[i]++;
            assigned++;
        }
        return out;
    }
}
