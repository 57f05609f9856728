package dev.stoker;

import java.io.IOException;

/**
 * Malformed content: the message names the resource, where in it (byte offset or line) and what
 * was expected, e.g. {@code "train.npy: header at byte 10: expected 'descr', found 'desc'"}.
 */
public class CorruptShardException extends IOException {
    private final String resource;
    private final long offset;

    /** {@code offset} is a byte offset, or -1 when the problem is not at one place. */
    public CorruptShardException(String resource, long offset, String what) {
        super(resource + ": " + what + (offset >= 0 ? " (at byte " + offset + ")" : ""));
        this.resource = resource;
        this.offset = offset;
    }

    public CorruptShardException(String resource, long offset, String what, Throwable cause) {
        this(resource, offset, what);
        initCause(cause);
    }

    public String resource() {
        return resource;
    }

    /** The byte offset of the problem, or -1. */
    public long offset() {
        return offset;
    }
}
