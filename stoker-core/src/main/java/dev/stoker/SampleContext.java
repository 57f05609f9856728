package dev.stoker;

/**
 * What a {@link Transform} may know about the sample it transforms. One object per worker,
 * reused for every sample: read it during the call, do not keep it.
 */
public final class SampleContext {
    private long seed;
    private long epoch;
    private long index;

    SampleContext() {
    }

    void set(long loaderSeed, long epoch, long index) {
        this.epoch = epoch;
        this.index = index;
        this.seed = Keys.key(loaderSeed, epoch, index);
    }

    /** The dataset index of the sample. */
    public long index() {
        return index;
    }

    public long epoch() {
        return epoch;
    }

    /**
     * A 64-bit seed for this sample's random choices: a pure function of the loader's seed, the
     * epoch and the sample index, whatever worker runs the transform.
     */
    public long seed() {
        return seed;
    }

    /**
     * An independent seed for random stream {@code stream} of this sample: for a stage composed
     * with others ({@link Transform#andThen}) whose random choices must not repeat another's.
     */
    public long seed(long stream) {
        return Keys.key(seed, stream);
    }
}
