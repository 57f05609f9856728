package dev.stoker.cuda;

import dev.stoker.Allocator;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;

/**
 * Batch memory that CUDA can copy from asynchronously: page-locked host memory
 * ({@code cudaHostAlloc}), plugged into a loader with {@code Loader.builder(...).allocator(new
 * PinnedAllocator(Cuda.load()))}. A batch buffer's columns are slices of one pinned block of the
 * size the loader asks for; a variable-length column that outgrows it gets a block of its own.
 * Closing an arena (the loader's close) frees its blocks with {@code cudaFreeHost}.
 */
public final class PinnedAllocator implements Allocator {
    private final Cuda cuda;

    public PinnedAllocator(Cuda cuda) {
        this.cuda = cuda;
    }

    @Override
    public Arena newArena() {
        return new Pinned(cuda, 0);
    }

    @Override
    public Arena newBatchArena(long bytes) {
        return new Pinned(cuda, bytes);
    }

    /** An arena of pinned blocks, freed together when it closes. */
    private static final class Pinned implements Arena {
        private final Cuda cuda;
        private final Arena scope = Arena.ofShared();
        private final SegmentAllocator first;

        Pinned(Cuda cuda, long bytes) {
            this.cuda = cuda;
            this.first = bytes > 0 ? SegmentAllocator.slicingAllocator(block(bytes)) : null;
        }

        /** A pinned block, freed when the arena closes (cudaHostAlloc's blocks are page-aligned). */
        private MemorySegment block(long bytes) {
            MemorySegment p = cuda.hostAlloc(Math.max(1, bytes));
            return p.reinterpret(bytes, scope, s -> cuda.freeHost(s));
        }

        @Override
        public synchronized MemorySegment allocate(long byteSize, long byteAlignment) {
            if (first != null) {
                try {
                    return first.allocate(byteSize, byteAlignment);
                } catch (IndexOutOfBoundsException e) {
                    // the block is used up: a block of its own
                }
            }
            if (byteAlignment > 4096) {
                throw new IllegalArgumentException("pinned memory is aligned to 4096 bytes, not " + byteAlignment);
            }
            return block(byteSize);
        }

        @Override
        public MemorySegment.Scope scope() {
            return scope.scope();
        }

        @Override
        public void close() {
            scope.close();
        }
    }
}
