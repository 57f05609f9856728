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

    /**
     * The consumer's place in this pass as a number that costs nothing to keep (the batches it has
     * taken), whose state {@link #stateAfter} gives later; -1 when the pass cannot give it later (a
     * stream's, or one whose batches come out of order), and {@link Loader#state()} must be asked
     * at once.
     */
    default long mark() {
        return -1;
    }

    /**
     * The loader's state at a place this pass's {@link #mark()} gave: what {@link Loader#state()}
     * returned there. Consumer thread.
     */
    default LoaderState stateAfter(long mark) {
        throw new IllegalArgumentException("this pass keeps no marks (its mark() is -1)");
    }
}
