package dev.stoker;

/**
 * What becomes of an epoch's positions left over when they do not divide among the ranks
 * ({@link LoaderBuilder#tail}): rank {@code r} of {@code W} takes positions {@code r, r + W, ...},
 * and the last {@code n mod W} are either padded out or dropped, so that every rank gets the same
 * number of samples, so the same number of batches.
 */
public enum Tail {
    /** Repeat positions from the start of the range until every rank has {@code ceil(n / W)} (PyTorch's default). */
    PAD,
    /** Leave the last {@code n mod W} positions out: every rank has {@code floor(n / W)}. */
    DROP,
    /**
     * Every position once: the first {@code n mod W} ranks take one more. For streaming
     * datasets only (a stream split into more streams than ranks reads each shard once).
     */
    NONE
}
