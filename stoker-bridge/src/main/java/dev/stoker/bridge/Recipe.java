package dev.stoker.bridge;

import dev.stoker.Loader;

/**
 * What a client's source resolves to: builders of its loader, with every loader option set but
 * the allocator, {@code holds}, the epoch and a state to resume (the session sets those).
 */
public interface Recipe {
    /** A fresh builder of the loader (the session builds a new loader for each pass it rebuilds). */
    Loader.Builder builder();

    /** Samples per batch. */
    int batch();

    /** The first epoch, when the client gives no state. */
    long epoch();

    /** Tokens a sample holds (0 for a source that is not token windows), reported to the client. */
    double tokensPerSample();
}
