package dev.stoker;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * A random-access dataset: {@link #size()} samples, sample {@code i} read by {@link #get(long)}.
 * Implementations must be safe to read from several threads at once; the loader calls
 * {@code get} from its workers.
 *
 * <p>Views ({@link #subset}, {@link #concat}, {@link #randomSplit}, {@link #mix}) map indices
 * and never copy samples. For the fastest path, where a sample is written straight into its batch
 * row without an intermediate object, see {@link DirectDataset}.
 */
public interface Dataset<T> {

    long size();

    /** Sample {@code index}, in {@code [0, size())}. */
    T get(long index) throws IOException;

    /** A name for errors and stats, e.g. the file or shard it reads. */
    default String name() {
        return getClass().getSimpleName();
    }

    /**
     * A fingerprint of this dataset's content (0: none given), recorded in a {@link LoaderState}
     * and checked when a loader resumes from it, so that a state saved from other data is refused
     * rather than continued at positions that mean other samples. It depends on the content only,
     * never on where the bytes live: a state saved reading from S3 resumes on the staged copy.
     */
    default long fingerprint() {
        return 0;
    }

    /**
     * Shards this dataset left out when it was opened because they could not be read (under a
     * skip policy, e.g. a tar shard that cannot be indexed): a loader over it counts them in
     * {@link LoaderStats#skippedShards()}, once.
     */
    default long shardsLeftOut() {
        return 0;
    }

    /** The samples {@code [from, to)}. */
    default Dataset<T> subset(long from, long to) {
        return new Views.Subset<>(this, Indexes.range(size(), from, to));
    }

    /** The samples at {@code indices}, in that order. */
    default Dataset<T> subset(long[] indices) {
        return new Views.Subset<>(this, Indexes.of(size(), indices));
    }

    /**
     * Splits this dataset into disjoint random parts of the given lengths (which must add up to
     * {@link #size()}), chosen by {@code seed}, like {@code torch.utils.data.random_split}.
     * The parts are views in O(1) memory.
     */
    default List<Dataset<T>> randomSplit(long seed, long... lengths) {
        List<Dataset<T>> parts = new ArrayList<>();
        for (Indexes.Map m : Indexes.randomSplit(size(), seed, lengths)) {
            parts.add(new Views.Subset<>(this, m));
        }
        return parts;
    }

    /** Splits by fractions that add up to 1; rounding remainders go to the first parts, one each. */
    default List<Dataset<T>> randomSplit(long seed, double... fractions) {
        return randomSplit(seed, Indexes.lengths(size(), fractions));
    }

    /** The datasets one after the other. */
    @SafeVarargs
    static <T> Dataset<T> concat(Dataset<? extends T>... parts) {
        return concat(List.of(parts));
    }

    static <T> Dataset<T> concat(List<? extends Dataset<? extends T>> parts) {
        return new Views.Concat<>(List.copyOf(parts));
    }

    /**
     * {@code length} samples drawn from {@code parts} in the proportions {@code weights}, in a
     * fixed interleaving that is exact to within one sample at every prefix (Megatron-LM's blended
     * dataset rule, each position going to the part furthest behind its share). Part {@code k}'s
     * samples are taken in its own index order, wrapping around when it is exhausted.
     */
    static <T> Dataset<T> mix(long length, double[] weights, List<? extends Dataset<? extends T>> parts) {
        long[] sizes = new long[parts.size()];
        for (int i = 0; i < sizes.length; i++) {
            sizes[i] = parts.get(i).size();
        }
        return new Views.Mix<>(List.copyOf(parts), new Blend(weights, length, sizes));
    }

    /** A dataset over a list. */
    static <T> Dataset<T> of(List<T> items) {
        List<T> copy = List.copyOf(items);
        return new Dataset<>() {
            @Override
            public long size() {
                return copy.size();
            }

            @Override
            public T get(long index) {
                return copy.get(Math.toIntExact(index));
            }

            @Override
            public String name() {
                return "list";
            }
        };
    }
}
