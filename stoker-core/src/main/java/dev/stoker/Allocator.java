package dev.stoker;

import java.lang.foreign.Arena;

/**
 * Where batch memory comes from. A loader asks for arenas when it builds its pool of batch
 * buffers (and when a variable-length column must grow) and closes them when it closes, so an
 * allocator never sees a free of a single segment. Segments must be usable from any thread.
 *
 * <p>The default is plain off-heap memory; a CUDA module can plug in an allocator of page-locked
 * (pinned) host memory, so that host-to-device copies run asynchronously.
 */
@FunctionalInterface
public interface Allocator {

    /** A new arena whose segments may be accessed from any thread. */
    Arena newArena();

    /** Ordinary off-heap memory ({@link Arena#ofShared()}). */
    static Allocator offHeap() {
        return Arena::ofShared;
    }
}
