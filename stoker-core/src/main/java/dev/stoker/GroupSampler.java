package dev.stoker;

import dev.stoker.internal.Permutation;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Groups of samples drawn in proportions ({@link Sampler#groups}).
 *
 * <p>NOTE [Group draws]: an epoch has as many positions as the dataset has samples. They go to
 * the groups as {@link Blend} interleaves them (each group within one sample of its share at every
 * prefix), each aligned run of {@value #RUN} positions then permuted among itself by
 * {@code (seed, epoch)}, so that a batch holds its groups' shares without a fixed pattern. Group
 * {@code g}'s {@code k}-th draw of the epoch is position {@code k mod n_g} of its pass
 * {@code k / n_g}: the group's own order over its {@code n_g} samples, made by its sampler with a
 * key of {@code (seed, g, epoch)} and the pass as the epoch. A group drawn less than its size sees
 * another part of itself each epoch; one drawn more sees all of itself each pass, each pass in
 * another order. Passes are made once and shared by the threads that read them.
 */
final class GroupSampler implements Sampler {
    static final int RUN = 4096;

    private final long[] starts;
    private final double[] weights;
    private final List<Sampler> within;
    /** Each group's samples. */
    private final long[] sizes;
    private final String id;

    GroupSampler(long[] starts, double[] weights, List<Sampler> within) {
        int groups = weights.length;
        if (starts.length != groups + 1 || within.size() != groups || groups == 0) {
            throw new IllegalArgumentException("groups need one start each and the end (" + starts.length + " given), one weight ("
                    + weights.length + ") and one sampler (" + within.size() + ") each");
        }
        for (int g = 0; g < groups; g++) {
            if (starts[g] < 0 || starts[g + 1] < starts[g]) {
                throw new IllegalArgumentException("group starts must not decrease: " + Arrays.toString(starts));
            }
        }
        this.sizes = new long[groups];
        for (int g = 0; g < groups; g++) {
            sizes[g] = starts[g + 1] - starts[g];
        }
        new Blend(weights, 0, sizes); // checks the weights against the sizes
        this.starts = starts.clone();
        this.weights = weights.clone();
        this.within = List.copyOf(within);
        this.id = "groups(" + Arrays.toString(starts) + "," + Arrays.toString(weights) + ","
                + within.stream().map(Sampler::id).toList() + ")";
    }

    @Override
    public long length(long size) {
        check(size);
        return size;
    }

    private void check(long size) {
        if (size != starts[starts.length - 1]) {
            throw new IllegalArgumentException("the groups hold " + starts[starts.length - 1] + " samples, the dataset "
                    + size);
        }
    }

    @Override
    public Order order(long size, long seed, long epoch) {
        check(size);
        Blend blend = new Blend(weights, size, sizes);
        long key = Keys.key(seed, epoch, 0x47524f555053L);
        ConcurrentHashMap<Long, Order> passes = new ConcurrentHashMap<>();
        ThreadLocal<LastRun> runs = ThreadLocal.withInitial(() -> new LastRun(weights.length));
        return new Order() {
            @Override
            public long length() {
                return size;
            }

            @Override
            public long index(long position) {
                long run = position / RUN;
                long from = run * RUN;
                LastRun last = runs.get();
                if (last.run != run) {
                    last.mix = new Permutation(Math.min(RUN, size - from), Keys.key(key, run));
                    last.run = run;
                }
                Permutation mix = last.mix;
                Blend.Cursor c = blend.locate(from + mix.apply(position - from));
                int g = c.part;
                long n = sizes[g];
                long pass = c.local / n;
                if (last.orders[g] == null || last.passes[g] != pass) { // the map only when a group's pass changes
                    last.orders[g] = passes.computeIfAbsent(((long) g << 40) | pass,
                            k -> within.get(g).order(n, Keys.key(seed, g, epoch), pass));
                    last.passes[g] = pass;
                }
                return starts[g] + last.orders[g].index(c.local % n);
            }
        };
    }

    /** A thread's permutation of the run it read last, and each group's pass it read last. */
    private static final class LastRun {
        long run = -1;
        Permutation mix;
        final long[] passes;
        final Order[] orders;

        LastRun(int groups) {
            passes = new long[groups];
            orders = new Order[groups];
        }
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
