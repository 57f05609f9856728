package dev.stoker;

import java.io.IOException;
import java.util.List;

/**
 * A random-access dataset that writes each sample straight into its batch row: no sample object,
 * no intermediate copy, nothing allocated. Token windows copied from a memory map and synthetic
 * data are read this way. Must be safe to call from several threads at once.
 */
public interface DirectDataset {

    long size();

    /** The fields every sample writes. */
    Schema schema();

    /** Writes sample {@code index} into {@code row}. */
    void read(long index, Row row) throws IOException;

    default String name() {
        return getClass().getSimpleName();
    }

    /** The samples {@code [from, to)}. */
    default DirectDataset subset(long from, long to) {
        return new Views.DirectSubset(this, Indexes.range(size(), from, to));
    }

    default DirectDataset subset(long[] indices) {
        return new Views.DirectSubset(this, Indexes.of(size(), indices));
    }

    /** As {@link Dataset#randomSplit(long, long...)}. */
    default List<DirectDataset> randomSplit(long seed, long... lengths) {
        return Indexes.randomSplit(size(), seed, lengths).stream()
                .<DirectDataset>map(m -> new Views.DirectSubset(this, m)).toList();
    }
}
