package dev.stoker.storage;

import java.io.IOException;
import java.io.InputStream;
import java.util.List;

/**
 * Where bytes live, for the locations under one prefix that {@link Storage#mount} gave it: what
 * every format reads through. A store knows no format.
 */
public interface Store {
    /**
     * The bytes {@code [offset, offset + length)} of the object (to its end when {@code length} is
     * -1) as a stream that survives transient failures (see {@code RetryingSource}).
     */
    InputStream open(String location, long offset, long length) throws IOException;

    /**
     * The object's size in bytes; {@link java.nio.file.NoSuchFileException} when there is no such
     * object, and only then (any other failure says nothing of whether it exists).
     */
    long size(String location) throws IOException;

    /**
     * The objects under a prefix, or matching a glob in the last component (see {@link Storage#list}),
     * with their sizes, in name order.
     */
    List<Storage.Entry> list(String location) throws IOException;
}
