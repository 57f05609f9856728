package dev.stoker;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * An arena of memory from C's {@code calloc}: a block the size of a batch buffer comes as fresh
 * pages that the kernel maps, zeroed, when they are first written, so a buffer costs nothing
 * until a worker fills it. {@link Arena#ofShared()} instead writes zeros over every byte as it
 * allocates, faulting every page in: about 13 ms for one 38 MB batch of 64 float32 224² images,
 * and 70 ms of a loader's start for its five (BENCHMARKS.md, "The first batch"). Used by
 * {@link Allocator#offHeap()} where this module may call native code, else that arena.
 */
final class ZeroPages implements Arena {
    private static final MethodHandle CALLOC;
    private static final MethodHandle FREE;

    static {
        Linker linker = Linker.nativeLinker();
        var libc = linker.defaultLookup();
        CALLOC = linker.downcallHandle(libc.find("calloc").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG));
        FREE = linker.downcallHandle(libc.find("free").orElseThrow(), FunctionDescriptor.ofVoid(ValueLayout.ADDRESS));
    }

    private final Arena scope = Arena.ofShared();

    /** True where this module may call native code (else {@link Allocator#offHeap()} uses {@link Arena#ofShared()}). */
    static boolean usable() {
        return ZeroPages.class.getModule().isNativeAccessEnabled();
    }

    @Override
    public MemorySegment allocate(long byteSize, long byteAlignment) {
        if (byteSize < 0 || byteAlignment <= 0 || (byteAlignment & (byteAlignment - 1)) != 0) {
            throw new IllegalArgumentException("size " + byteSize + ", alignment " + byteAlignment);
        }
        MemorySegment block;
        try {
            block = (MemorySegment) CALLOC.invokeExact(1L, Math.max(1, byteSize + byteAlignment - 1));
        } catch (Throwable t) {
            throw new IllegalStateException("calloc failed", t);
        }
        if (block.address() == 0) {
            throw new OutOfMemoryError("calloc: no memory for " + byteSize + " bytes off the heap");
        }
        long at = (block.address() + byteAlignment - 1) & -byteAlignment;
        return MemorySegment.ofAddress(at).reinterpret(byteSize, scope, s -> free(block));
    }

    private static void free(MemorySegment block) {
        try {
            FREE.invokeExact(block);
        } catch (Throwable t) {
            throw new IllegalStateException("free failed", t);
        }
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
