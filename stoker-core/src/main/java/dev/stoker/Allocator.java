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

    /**
     * The arena of one batch buffer, from which all its columns are allocated: {@code bytes} in
     * all, each column 64-byte aligned ({@link Batch#bytesFor}). A ring of shared-memory slots
     * (as {@code stoker serve} uses) gives each buffer a slot of its own; the default is
     * {@link #newArena()}. A variable-length column that outgrows its share later gets an arena of
     * its own from {@link #newArena()}.
     */
    default Arena newBatchArena(long bytes) {
        return newArena();
    }

    /**
     * Ordinary off-heap memory, zeroed: from {@code calloc}, whose large blocks cost nothing until
     * they are written, where this module may call native code; else {@link Arena#ofShared()}.
     */
    static Allocator offHeap() {
        return ZeroPages.usable() ? ZeroPages::new : Arena::ofShared;
    }
}
