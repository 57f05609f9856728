package dev.stoker;

/**
 * A {@link LoaderState} that does not fit the loader it was given to: another sampler, dataset,
 * split or kind of position. The message says which number differs and what the loader has.
 */
public final class ResumeException extends IllegalArgumentException {
    public ResumeException(String message) {
        super(message);
    }
}
