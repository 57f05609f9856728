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
}
