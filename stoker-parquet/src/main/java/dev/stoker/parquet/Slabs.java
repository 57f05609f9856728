package dev.stoker.parquet;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
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
 *
 * <p>On Linux a slab is mapped on 2 MiB boundaries and asks for transparent huge pages
 * ({@code madvise(MADV_HUGEPAGE)}; most systems give them only when asked): a shuffled batch
 * reads its rows from all over the decoded groups, and with 4 KiB pages nearly every row costs
 * a miss of the address translation cache as well as of the data cache. Measured on a uniform
 * shuffle of a 20 M-row file, whose decoded groups are 480 MB: 17% more rows a second.
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
            slab = new Slab(owner, allocate(owner, slabBytes));
        }
        // the slab's memory as a segment of the group's arena: unreadable once that arena is closed
        MemorySegment view = slab.memory.reinterpret(arena, null);
        return new Lease(arena, slab, SegmentAllocator.slicingAllocator(view));
    }

    private static final long HUGE_PAGE = 2 << 20;
    private static final int PROT_READ_WRITE = 3;
    private static final int MAP_PRIVATE_ANONYMOUS = 0x22;
    private static final int MADV_HUGEPAGE = 14;
    /** mmap, munmap and madvise on Linux; null elsewhere (the arena allocates). */
    private static final MethodHandle MMAP;
    private static final MethodHandle MUNMAP;
    private static final MethodHandle MADVISE;

    static {
        MethodHandle mmap = null;
        MethodHandle munmap = null;
        MethodHandle madvise = null;
        if (System.getProperty("os.name", "").startsWith("Linux")) {
            try {
                Linker l = Linker.nativeLinker();
                var libc = l.defaultLookup();
                mmap = l.downcallHandle(libc.find("mmap").orElseThrow(), FunctionDescriptor.of(ValueLayout.ADDRESS,
                        ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                        ValueLayout.JAVA_LONG));
                munmap = l.downcallHandle(libc.find("munmap").orElseThrow(),
                        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
                madvise = l.downcallHandle(libc.find("madvise").orElseThrow(),
                        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
            } catch (RuntimeException e) {
                mmap = null; // no native access: the arena allocates
            }
        }
        MMAP = mmap;
        MUNMAP = munmap;
        MADVISE = madvise;
    }

    /**
     * {@code bytes} of memory freed with {@code owner}: on Linux a private mapping, aligned to and
     * rounded up to huge pages, which it asks for (see the class comment); elsewhere, or if the
     * mapping fails, from the arena.
     */
    static MemorySegment allocate(Arena owner, long bytes) {
        if (MMAP != null) {
            long n = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
            long mapped = n + HUGE_PAGE; // room to start on a huge page's boundary
            try {
                MemorySegment raw = (MemorySegment) MMAP.invokeExact(MemorySegment.NULL, mapped, PROT_READ_WRITE,
                        MAP_PRIVATE_ANONYMOUS, -1, 0L);
                if (raw.address() != -1L) { // MAP_FAILED
                    long start = (raw.address() + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
                    MemorySegment aligned = MemorySegment.ofAddress(start).reinterpret(n);
                    int ignored = (int) MADVISE.invokeExact(aligned, n, MADV_HUGEPAGE); // a hint: refused, the pages are small
                    return aligned.reinterpret(owner, m -> unmap(raw, mapped));
                }
            } catch (Throwable e) {
                throw new IllegalStateException("mapping " + bytes + " bytes for decoded row groups", e);
            }
        }
        return owner.allocate(bytes, 64);
    }

    private static void unmap(MemorySegment raw, long mapped) {
        try {
            int ignored = (int) MUNMAP.invokeExact(raw, mapped);
        } catch (Throwable e) {
            throw new IllegalStateException("unmapping decoded row groups", e);
        }
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
