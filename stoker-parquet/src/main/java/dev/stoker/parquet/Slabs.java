package dev.stoker.parquet;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.util.ArrayDeque;

/**
 * The off-heap memory of decoded row groups, reused from group to group. A pass through a file
 * decodes every row group into fresh memory and frees it again when the cache drops the group:
 * from the allocator, that is a fault on every page and zeroing it first, about a fifth of the
 * time a pass takes. Here a freed group's memory goes back to a pool of slabs, all of one size
 * (the largest group's), and the next group is decoded into it, neither zeroed nor faulted.
 *
 * <p>A slab is reused safely. A group's values are views of its slab in an arena of the group's
 * own ({@link Lease#arena}); {@link Lease#free} closes that arena first, and a shared arena's
 * close returns only when no thread is still reading through its views (a late read fails, and
 * is retried, as for any freed group), so the slab is back in the pool only when nothing reads
 * it. A group larger than a slab (only a filter column's decode can be) gets memory of its own.
 */
final class Slabs implements AutoCloseable {
    private final long slabBytes;
    private final int keep;
    private final ArrayDeque<Slab> free = new ArrayDeque<>();
    private boolean closed;

    /**
     * @param slabBytes the bytes of one slab: the most any group's fixed-width values need
     * @param keep the most free slabs held for reuse; beyond that a freed slab is given back
     */
    Slabs(long slabBytes, int keep) {
        this.slabBytes = Math.max(8, slabBytes);
        this.keep = keep;
    }

    /** Memory for one decoded group: an allocator of at least {@code bytes} (8-aligned pieces), valid until {@link Lease#free}. */
    Lease lease(long bytes) {
        Arena arena = Arena.ofShared();
        if (bytes > slabBytes) {
            return new Lease(arena, null, arena);
        }
        Slab slab;
        synchronized (this) {
            slab = free.poll();
        }
        if (slab == null) {
            Arena owner = Arena.ofShared();
            slab = new Slab(owner, owner.allocate(slabBytes, 64));
        }
        // the slab's memory as a segment of the group's arena: unreadable once that arena is closed
        MemorySegment view = slab.memory.reinterpret(arena, null);
        return new Lease(arena, slab, SegmentAllocator.slicingAllocator(view));
    }

    private void give(Slab slab) {
        synchronized (this) {
            if (!closed && free.size() < keep) {
                free.push(slab);
                return;
            }
        }
        slab.owner.close();
    }

    /** A slab: its memory, and the arena that frees it. */
    private record Slab(Arena owner, MemorySegment memory) {
    }

    /** Frees the slabs held for reuse; a slab still leased is freed when its lease is. */
    @Override
    public void close() {
        synchronized (this) {
            closed = true;
            free.forEach(s -> s.owner.close());
            free.clear();
        }
    }

    /** One group's memory: {@code allocator} hands out views valid until {@link #free}. */
    final class Lease {
        final Arena arena;
        final SegmentAllocator allocator;
        private final Slab slab;

        private Lease(Arena arena, Slab slab, SegmentAllocator allocator) {
            this.arena = arena;
            this.slab = slab;
            this.allocator = allocator;
        }

        /** Makes the views unreadable (waiting out any read in progress), then returns the slab for reuse. */
        void free() {
            arena.close();
            if (slab != null) {
                give(slab);
            }
        }
    }
}
