package dev.stoker.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.stoker.Batch;
import dev.stoker.Loader;
import dev.stoker.SyntheticDataset;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The CUDA bindings without a GPU: the error when no runtime is found, and the bindings, the
 * pinned allocator and the copier against a stand-in runtime (src/test/c/fake_cudart.c, built
 * here with gcc) whose copies really are asynchronous, run by a thread per stream after a delay.
 */
class CudaTest {
    @TempDir
    static Path tmp;

    @Test
    void noRuntimeIsAnErrorThatSaysWhereItLooked() {
        Path missing = tmp.resolve("nowhere/libcudart.so");
        Map<String, String> env = Map.of("STOKER_CUDART", missing.toString(), "CUDA_HOME", tmp.resolve("cuda").toString());
        List<String> names = List.of("libcudart-none.so.99"); // a runtime no machine has
        CudaException e = assertThrows(CudaException.class, () -> Cuda.find(env, names));
        String m = e.getMessage();
        assertTrue(m.startsWith("CUDA was not found: no CUDA runtime library at "), m);
        for (String place : List.of(missing.toString(), "libcudart-none.so.99 (on the library path)",
                tmp.resolve("cuda/lib64/libcudart-none.so.99").toString(), "/usr/local/cuda/lib64/libcudart-none.so.99",
                "LD_LIBRARY_PATH=", "STOKER_CUDART")) {
            assertTrue(m.contains(place), place + " in: " + m);
        }
    }

    @Test
    void theInstalledRuntimeAnswersOrSaysWhyNotInItsOwnWords() {
        Cuda cuda;
        try {
            cuda = Cuda.find(Map.of());
        } catch (CudaException e) {
            Assumptions.abort("no CUDA runtime on this machine: " + e.getMessage());
            return;
        }
        try {
            assertTrue(cuda.deviceCount() >= 0); // a GPU machine
        } catch (CudaException e) { // a runtime without a device or driver: CUDA's own message, through the bindings
            assertTrue(e.getMessage().matches("cudaGetDeviceCount: .+ \\(CUDA error \\d+\\)"), e.getMessage());
            assertTrue(!e.getMessage().contains("no message"), e.getMessage());
        }
    }

    @Test
    void aLibraryWithoutTheRuntimesFunctionsIsRefusedByName() {
        Path libc = Path.of("/lib/x86_64-linux-gnu/libc.so.6");
        Assumptions.assumeTrue(Files.exists(libc));
        CudaException e = assertThrows(CudaException.class, () -> Cuda.find(Map.of("STOKER_CUDART", libc.toString())));
        assertTrue(e.getMessage().contains(libc + " has no function cudaGetDeviceCount"), e.getMessage());
    }

    @Test
    void batchesReachTheDeviceAndTheirHostBuffersGoBackOnlyAfterTheirCopies() throws Throwable {
        Path lib = fake();
        Cuda cuda = Cuda.find(Map.of("STOKER_CUDART", lib.toString()));
        SymbolLookup fake = SymbolLookup.libraryLookup(lib, Arena.global());
        Linker l = Linker.nativeLinker();
        MethodHandle liveHandle = l.downcallHandle(fake.find("fake_cuda_live").orElseThrow(), FunctionDescriptor.of(ValueLayout.JAVA_LONG));
        MethodHandle delay = l.downcallHandle(fake.find("fake_cuda_delay_us").orElseThrow(),
                FunctionDescriptor.ofVoid(ValueLayout.JAVA_LONG));
        long before = (long) liveHandle.invokeExact();
        assertEquals(1, cuda.deviceCount());
        delay.invokeExact(2000L); // each copy 2 ms late: the loader would reuse a host buffer given back early
        int batch = 16;
        int sampleBytes = 4096;
        SyntheticDataset data = new SyntheticDataset(batch * 25 + 7, sampleBytes, 0);
        List<byte[]> expected = new ArrayList<>();
        List<byte[]> got = new ArrayList<>();
        try (Loader loader = Loader.builder(data).batchSize(batch).workers(2).holds(4).seed(3)
                .allocator(new PinnedAllocator(cuda)).build()) {
            try (DeviceCopier copier = new DeviceCopier(cuda, 0, loader.schema(), batch, 3)) {
                List<DeviceCopier.DeviceBatch> held = new ArrayList<>();
                for (Batch b : loader) {
                    expected.add(b.data(0).asSlice(0, b.byteSize(0)).toArray(ValueLayout.JAVA_BYTE));
                    if (held.size() == 2) { // the trainer keeps two device batches, the oldest done with first
                        got.add(read(held.remove(0)));
                    }
                    held.add(copier.copy(b));
                }
                for (DeviceCopier.DeviceBatch d : held) {
                    got.add(read(d));
                }
            }
        }
        delay.invokeExact(0L);
        assertEquals(expected.size(), got.size());
        for (int i = 0; i < expected.size(); i++) {
            assertArrayEquals(expected.get(i), got.get(i), "batch " + i);
        }
        assertEquals(26, got.size());
        assertEquals(before, (long) liveHandle.invokeExact(), "every pinned block, device buffer, stream and event freed");
    }

    /** The device batch's first field, once its copy is done, then released. */
    private static byte[] read(DeviceCopier.DeviceBatch d) {
        d.await();
        byte[] b = MemorySegment.ofAddress(d.data(0)).reinterpret(d.byteSize(0)).toArray(ValueLayout.JAVA_BYTE);
        d.close();
        d.close(); // idempotent
        return b;
    }

    /** The stand-in runtime, built once. */
    private static synchronized Path fake() throws IOException, InterruptedException {
        Path lib = tmp.resolve("libfakecudart.so");
        if (Files.exists(lib)) {
            return lib;
        }
        Path src = Path.of("src/test/c/fake_cudart.c").toAbsolutePath();
        Process p;
        try {
            p = new ProcessBuilder("gcc", "-shared", "-fPIC", "-O1", "-pthread", "-o", lib.toString(), src.toString())
                    .redirectErrorStream(true).start();
        } catch (IOException e) {
            Assumptions.abort("no gcc here to build the stand-in CUDA runtime: " + e.getMessage());
            throw e;
        }
        String out = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), out);
        return lib;
    }
}
