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

    /**
     * Writes the {@code count} samples {@code indices[from, from + count)} into as many consecutive
     * rows, the first of them {@code row}, and returns true; or returns false, having written
     * nothing, if this dataset writes one sample at a time only (the default). The loader asks for
     * a whole batch at once when every field of the schema is a tensor: field {@code f} of the
     * {@code j}-th row lies at {@link Row#offset}{@code (f) + j *} its bytes per sample in
     * {@link Row#column}{@code (f)}, so a column store fills a batch column by column, copying a
     * run of consecutive samples (a sequential order gives whole batches of them) with one copy.
     * If it throws, the loader reads the batch again one sample at a time, so that the error
     * policy sees exactly the failing sample.
     */
    default boolean readAll(long[] indices, int from, int count, Row row) throws IOException {
        return false;
    }

    /**
     * A hint, before the loader reads: it stacks the ragged float32 fields {@code fields} (in this
     * order) into one tensor of entries by features ({@link Padding#stack}). A dataset that holds
     * them field by field may from now on hold them entry by entry and write a sample's entries with
     * one {@link Row#appendEntries}: a shuffled read then takes each sample from one place instead
     * of one place a field (NOTE [Entry-major] in Row). The batches are the same either way; the
     * default ignores the hint.
     */
    default void willStack(List<String> fields) {
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

    default String name() {
        return getClass().getSimpleName();
    }

    /** Shards this dataset left out when it was opened (see {@link Dataset#shardsLeftOut}). */
    default long shardsLeftOut() {
        return 0;
    }

    /** The samples {@code [from, to)}. */
    default DirectDataset subset(long from, long to) {
        return new Views.DirectSubset(this, Indexes.range(size(), from, to));
    }

    default DirectDataset subset(long[] indices) {
        return new Views.DirectSubset(this, Indexes.of(size(), indices));
    }

    /** The datasets one after the other; they must share one schema. */
    static DirectDataset concat(List<? extends DirectDataset> parts) {
        for (DirectDataset p : parts) {
            if (!p.schema().equals(parts.get(0).schema())) {
                throw new IllegalArgumentException("concatenated datasets must share one schema: " + parts.get(0).schema()
                        + " vs " + p.schema());
            }
        }
        return new Views.DirectConcat(List.copyOf(parts));
    }

    /**
     * {@code length} samples drawn from {@code parts} (which must share one schema) in the
     * proportions {@code weights}, exact to within one sample at every prefix, as
     * {@link Dataset#mix}.
     */
    static DirectDataset mix(long length, double[] weights, List<? extends DirectDataset> parts) {
        long[] sizes = new long[parts.size()];
        for (int i = 0; i < sizes.length; i++) {
            sizes[i] = parts.get(i).size();
            if (!parts.get(i).schema().equals(parts.get(0).schema())) {
                throw new IllegalArgumentException("mixed datasets must share one schema: " + parts.get(0).schema()
                        + " vs " + parts.get(i).schema());
            }
        }
        return new Views.DirectMix(List.copyOf(parts), new Blend(weights, length, sizes));
    }

    /** As {@link Dataset#randomSplit(long, long...)}. */
    default List<DirectDataset> randomSplit(long seed, long... lengths) {
        return Indexes.randomSplit(size(), seed, lengths).stream()
                .<DirectDataset>map(m -> new Views.DirectSubset(this, m)).toList();
    }
}
