package dev.stoker;

import java.util.Iterator;

/**
 * The batches of one pass of a {@link Loader}: an iterator that can say whether its next batch is
 * made already, so that a consumer handing batches on (the bridge's session) can hand over a run
 * of them at once instead of one at a time.
 */
public interface Batches extends Iterator<Batch> {
    /**
     * Whether {@link #next()} would return at once, without waiting for a worker: the next batch
     * is made. False at the end of the pass, and whenever it is not known.
     */
    boolean nextReady();
}
