package dev.stoker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

/** The default allocator's arena: zeroed memory from calloc, aligned, usable from any thread, freed on close. */
class ZeroPagesTest {

    @Test
    void theDefaultAllocatorIsCallocWhereNativeAccessIsOn() {
        // the build runs the tests with native access on (as ./stoker runs the JVM), so this
        // checks that the default is the arena the benchmarks measured, not the fallback
        assertTrue(ZeroPages.usable(), "native access for " + ZeroPages.class.getModule());
        try (Arena a = Allocator.offHeap().newArena()) {
            assertTrue(a instanceof ZeroPages, a.getClass().getName());
        }
    }

    @Test
    void segmentsAreZeroedAlignedWritableAndGoneWithTheArena() throws Exception {
        MemorySegment kept;
        try (Arena a = new ZeroPages()) {
            for (long align : new long[] {1, 8, 64, 4096}) {
                for (long size : new long[] {0, 1, 63, 4097, 38L << 20}) {
                    MemorySegment s = a.allocate(size, align);
                    assertEquals(size, s.byteSize());
                    assertEquals(0, s.address() % align, size + " bytes aligned to " + align);
                    for (long i = 0; i < size; i += Math.max(1, size / 97)) {
                        assertEquals(0, s.get(ValueLayout.JAVA_BYTE, i), "byte " + i + " of " + size);
                    }
                    s.fill((byte) 7); // every byte of it is ours
                }
            }
            MemorySegment s = a.allocate(1 << 20, 64);
            Thread t = Thread.ofPlatform().start(() -> s.set(ValueLayout.JAVA_LONG, 8, 42L)); // shared
            t.join();
            assertEquals(42L, s.get(ValueLayout.JAVA_LONG, 8));
            kept = s;
            assertTrue(kept.scope().isAlive());
        }
        assertFalse(kept.scope().isAlive());
        assertThrows(IllegalStateException.class, () -> kept.get(ValueLayout.JAVA_LONG, 0));
    }

    @Test
    void badSizesAndAlignmentsAreRefused() {
        try (Arena a = new ZeroPages()) {
            assertThrows(IllegalArgumentException.class, () -> a.allocate(-1, 8));
            assertThrows(IllegalArgumentException.class, () -> a.allocate(8, 3));
            assertThrows(IllegalArgumentException.class, () -> a.allocate(8, 0));
        }
    }
}
