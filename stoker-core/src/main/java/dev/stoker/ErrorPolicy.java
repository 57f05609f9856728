package dev.stoker;

/** What a loader does when reading or transforming a sample fails. */
public enum ErrorPolicy {
    /** Stop: the consumer gets a {@link LoaderException} naming the source, sample and cause (the default). */
    FAIL,
    /**
     * Leave the sample out and count it in {@link LoaderStats#skipped()}: the batch that would have
     * held it is one row shorter. Positions are still consumed, so order and resume are unaffected.
     */
    SKIP_SAMPLE
}
