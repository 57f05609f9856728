package dev.stoker;

/**
 * A failure surfaced to the consumer: a sample that could not be read or transformed (with the
 * source, the sample index, the batch and the cause), or a wait that timed out.
 */
public class LoaderException extends RuntimeException {
    private final String source;
    private final long index;

    LoaderException(String message, String source, long index, Throwable cause) {
        super(message, cause);
        this.source = source;
        this.index = index;
    }

    /** The name of the dataset the sample came from. */
    public String source() {
        return source;
    }

    /** The dataset index of the failing sample, or -1 when the failure is not about one sample. */
    public long index() {
        return index;
    }
}
