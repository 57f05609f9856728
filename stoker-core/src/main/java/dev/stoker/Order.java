package dev.stoker;

/**
 * The sequence of dataset indices of one epoch: position {@code p} holds {@code index(p)}.
 * An order is a pure function of how it was made (sampler, dataset size, seed, epoch), never of
 * threads or timing, and is safe to call from any thread.
 */
public interface Order {

    /** Number of positions. */
    long length();

    /** The dataset index at position {@code position}, in {@code [0, length())}. */
    long index(long position);

    /**
     * {@link #index} of each of {@code positions[0, count)}, written over it. The loader asks for
     * a batch's indices at once; an order that finds them faster together (its lookups shared
     * by neighbouring positions) overrides this.
     */
    default void indices(long[] positions, int count) {
        for (int i = 0; i < count; i++) {
            positions[i] = index(positions[i]);
        }
    }
}
