package dev.stoker;

/**
 * One rank's share of a range of an epoch's order, as PyTorch's {@code DistributedSampler} splits
 * it: rank {@code r} of {@code W} takes positions {@code start + r, start + r + W, ...}.
 *
 * <p>When the range does not divide by {@code W}, {@link Tail#PAD} repeats positions from the
 * start of the range until every rank has {@code ceil(n / W)} (as PyTorch does), and
 * {@link Tail#DROP} leaves the last {@code n mod W} positions out, so every rank has
 * {@code floor(n / W)}. Either way every rank gets the same number of samples, so the same number
 * of batches.
 *
 * <p>NOTE [Elastic]: because ranks stride through the range in lockstep, after every rank has
 * taken {@code k} samples the positions taken are exactly the prefix {@code [start, start + kW)}.
 * A state therefore only needs {@code k}; a run with a different world size starts a new range at
 * the end of that prefix and the remaining positions are each delivered exactly once.
 */
final class Partition {
    private final long start;
    private final long end;
    private final int worldSize;
    private final int rank;
    private final long perRank;

    Partition(long start, long end, int worldSize, int rank, Tail tail) {
        if (start < 0 || end < start) {
            throw new IllegalArgumentException("bad range [" + start + ", " + end + ")");
        }
        if (worldSize < 1 || rank < 0 || rank >= worldSize) {
            throw new IllegalArgumentException("rank " + rank + " is not in a world of " + worldSize);
        }
        this.start = start;
        this.end = end;
        this.worldSize = worldSize;
        this.rank = rank;
        long n = end - start;
        this.perRank = switch (tail) {
            case PAD -> (n + worldSize - 1) / worldSize;
            case DROP -> n / worldSize;
            case NONE -> rank < n ? (n - rank + worldSize - 1) / worldSize : 0;
        };
    }

    /** Samples this rank takes from the range. */
    long length() {
        return perRank;
    }

    long start() {
        return start;
    }

    long end() {
        return end;
    }

    /** The epoch position of this rank's {@code m}-th sample. */
    long position(long m) {
        long q = start + m * worldSize + rank;
        if (q >= end) {
            q = start + (q - end) % (end - start);
        }
        return q;
    }
}
