package dev.stoker.cuda;

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
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The CUDA runtime ({@code libcudart}), found at run time and called through the FFM API: only
 * the calls Stoker needs (page-locked host memory, device memory, streams, events, asynchronous
 * copies). {@link #load()} looks for the library by name on the system's library path (which
 * {@code LD_LIBRARY_PATH} extends), then in the usual CUDA folders ({@code $CUDA_HOME},
 * {@code $CUDA_PATH}, {@code /usr/local/cuda}), then at {@code $STOKER_CUDART} if set; none
 * found is a {@link CudaException} that lists every place looked at, never a crash.
 *
 * <p>Every call's status is checked: a failure is a {@link CudaException} naming the call and
 * CUDA's own message ({@code cudaGetErrorString}).
 */
public final class Cuda {
    /** The runtime's sonames, newest first. */
    static final List<String> NAMES = List.of("libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0");
    /** {@code cudaMemcpyHostToDevice}. */
    static final int HOST_TO_DEVICE = 1;
    /** {@code cudaHostAllocPortable}: pinned for every device. */
    static final int HOST_ALLOC_PORTABLE = 1;
    /** {@code cudaHostRegisterPortable}. */
    static final int HOST_REGISTER_PORTABLE = 1;
    /** {@code cudaStreamNonBlocking}: no implicit synchronization with the legacy default stream. */
    static final int STREAM_NON_BLOCKING = 1;
    /** {@code cudaEventDisableTiming}: the cheapest event, for synchronization only. */
    static final int EVENT_DISABLE_TIMING = 2;
    /** {@code cudaErrorNotReady}: an event or stream still has work queued. */
    static final int NOT_READY = 600;

    private static volatile Cuda loaded;

    /** Where the library was found. */
    public final String library;
    private final MethodHandle getDeviceCount;
    private final MethodHandle setDevice;
    private final MethodHandle hostAlloc;
    private final MethodHandle freeHost;
    private final MethodHandle hostRegister;
    private final MethodHandle hostUnregister;
    private final MethodHandle malloc;
    private final MethodHandle free;
    private final MethodHandle streamCreate;
    private final MethodHandle streamDestroy;
    private final MethodHandle memcpyAsync;
    private final MethodHandle eventCreate;
    private final MethodHandle eventRecord;
    private final MethodHandle eventQuery;
    private final MethodHandle eventSynchronize;
    private final MethodHandle eventDestroy;
    private final MethodHandle errorString;

    private Cuda(String library, SymbolLookup lib) {
        this.library = library;
        Linker l = Linker.nativeLinker();
        ValueLayout.OfInt i = ValueLayout.JAVA_INT;
        ValueLayout.OfLong n = ValueLayout.JAVA_LONG;
        var p = ValueLayout.ADDRESS;
        getDeviceCount = bind(l, lib, "cudaGetDeviceCount", FunctionDescriptor.of(i, p));
        setDevice = bind(l, lib, "cudaSetDevice", FunctionDescriptor.of(i, i));
        hostAlloc = bind(l, lib, "cudaHostAlloc", FunctionDescriptor.of(i, p, n, i));
        freeHost = bind(l, lib, "cudaFreeHost", FunctionDescriptor.of(i, p));
        hostRegister = bind(l, lib, "cudaHostRegister", FunctionDescriptor.of(i, p, n, i));
        hostUnregister = bind(l, lib, "cudaHostUnregister", FunctionDescriptor.of(i, p));
        malloc = bind(l, lib, "cudaMalloc", FunctionDescriptor.of(i, p, n));
        free = bind(l, lib, "cudaFree", FunctionDescriptor.of(i, p));
        streamCreate = bind(l, lib, "cudaStreamCreateWithFlags", FunctionDescriptor.of(i, p, i));
        streamDestroy = bind(l, lib, "cudaStreamDestroy", FunctionDescriptor.of(i, p));
        memcpyAsync = bind(l, lib, "cudaMemcpyAsync", FunctionDescriptor.of(i, p, p, n, i, p));
        eventCreate = bind(l, lib, "cudaEventCreateWithFlags", FunctionDescriptor.of(i, p, i));
        eventRecord = bind(l, lib, "cudaEventRecord", FunctionDescriptor.of(i, p, p));
        eventQuery = bind(l, lib, "cudaEventQuery", FunctionDescriptor.of(i, p));
        eventSynchronize = bind(l, lib, "cudaEventSynchronize", FunctionDescriptor.of(i, p));
        eventDestroy = bind(l, lib, "cudaEventDestroy", FunctionDescriptor.of(i, p));
        errorString = bind(l, lib, "cudaGetErrorString", FunctionDescriptor.of(p, i));
    }

    private MethodHandle bind(Linker l, SymbolLookup lib, String name, FunctionDescriptor d) {
        MemorySegment f = lib.find(name).orElseThrow(() -> new CudaException(library + " has no function " + name
                + ": not a CUDA runtime Stoker can use"));
        return l.downcallHandle(f, d);
    }

    /** The CUDA runtime, loaded once per process. */
    public static Cuda load() {
        Cuda c = loaded;
        if (c == null) {
            synchronized (Cuda.class) {
                c = loaded;
                if (c == null) {
                    c = find(System.getenv());
                    loaded = c;
                }
            }
        }
        return c;
    }

    /** Finds the runtime as {@link #load()} says, in the places {@code env} names. */
    static Cuda find(java.util.Map<String, String> env) {
        return find(env, NAMES);
    }

    /** {@link #find(java.util.Map)} for a runtime of these sonames. */
    static Cuda find(java.util.Map<String, String> env, List<String> names) {
        Set<String> looked = new LinkedHashSet<>();
        List<String> candidates = new ArrayList<>();
        String explicit = env.get("STOKER_CUDART");
        if (explicit != null && !explicit.isEmpty()) {
            candidates.add(explicit);
        }
        candidates.addAll(names); // the dynamic linker's search: LD_LIBRARY_PATH, the cache, the default folders
        for (String var : new String[] {"CUDA_HOME", "CUDA_PATH"}) {
            String home = env.get(var);
            if (home != null && !home.isEmpty()) {
                for (String name : names) {
                    candidates.add(Path.of(home, "lib64", name).toString());
                }
            }
        }
        for (String name : names) {
            candidates.add(Path.of("/usr/local/cuda/lib64", name).toString());
        }
        for (String candidate : candidates) {
            boolean path = candidate.contains("/");
            if (path && !Files.exists(Path.of(candidate))) {
                looked.add(candidate);
                continue;
            }
            looked.add(path ? candidate : candidate + " (on the library path)");
            try {
                SymbolLookup lib = path ? SymbolLookup.libraryLookup(Path.of(candidate), Arena.global())
                        : SymbolLookup.libraryLookup(candidate, Arena.global());
                return new Cuda(candidate, lib);
            } catch (IllegalArgumentException e) {
                // not there, or not loadable: the next place
            }
        }
        String ld = env.getOrDefault("LD_LIBRARY_PATH", "");
        throw new CudaException("CUDA was not found: no CUDA runtime library at " + String.join(", ", looked)
                + " (LD_LIBRARY_PATH=" + (ld.isEmpty() ? "unset" : ld) + "); install the CUDA runtime, or set "
                + "STOKER_CUDART to libcudart.so's path");
    }

    // ---- the calls ---------------------------------------------------------------------------

    /** The number of devices CUDA sees. */
    public int deviceCount() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ValueLayout.JAVA_INT);
            check(call(getDeviceCount, out), "cudaGetDeviceCount");
            return out.get(ValueLayout.JAVA_INT, 0);
        }
    }

    /** Makes {@code device} the calling thread's current device. */
    public void setDevice(int device) {
        int rc;
        try {
            rc = (int) setDevice.invokeExact(device);
        } catch (Throwable e) {
            throw failed(e);
        }
        if (rc != 0) {
            check(rc, "cudaSetDevice(" + device + ")");
        }
    }

    /** {@code bytes} of page-locked host memory (a null segment of that size: reinterpret it with a scope). */
    public MemorySegment hostAlloc(long bytes) {
        return allocated(hostAlloc, "cudaHostAlloc(" + bytes + " bytes)", bytes, HOST_ALLOC_PORTABLE);
    }

    public void freeHost(MemorySegment p) {
        check(call(freeHost, p), "cudaFreeHost");
    }

    /** Page-locks memory allocated elsewhere (a mapped ring). */
    public void hostRegister(MemorySegment memory) {
        check(call(hostRegister, memory, memory.byteSize(), HOST_REGISTER_PORTABLE),
                "cudaHostRegister(" + memory.byteSize() + " bytes)");
    }

    public void hostUnregister(MemorySegment memory) {
        check(call(hostUnregister, memory), "cudaHostUnregister");
    }

    /** {@code bytes} of device memory: its device address (not readable from the host). */
    public long malloc(long bytes) {
        return allocated(malloc, "cudaMalloc(" + bytes + " bytes)", bytes, -1).address();
    }

    public void free(long devicePointer) {
        check(call(free, MemorySegment.ofAddress(devicePointer)), "cudaFree");
    }

    /** A non-blocking stream. */
    public MemorySegment streamCreate() {
        return created(streamCreate, STREAM_NON_BLOCKING, "cudaStreamCreateWithFlags");
    }

    public void streamDestroy(MemorySegment stream) {
        check(call(streamDestroy, stream), "cudaStreamDestroy");
    }

    /** Queues a copy of {@code bytes} from {@code host} to device address {@code device} on {@code stream}. */
    public void copyToDevice(long device, MemorySegment host, long bytes, MemorySegment stream) {
        int rc;
        try { // invokeExact: the calls made for every batch box nothing
            rc = (int) memcpyAsync.invokeExact(MemorySegment.ofAddress(device), host, bytes, HOST_TO_DEVICE, stream);
        } catch (Throwable e) {
            throw failed(e);
        }
        if (rc != 0) {
            check(rc, "cudaMemcpyAsync(" + bytes + " bytes, host to device)");
        }
    }

    /** An event for synchronization only (no timing). */
    public MemorySegment eventCreate() {
        return created(eventCreate, EVENT_DISABLE_TIMING, "cudaEventCreateWithFlags");
    }

    public void eventRecord(MemorySegment event, MemorySegment stream) {
        int rc;
        try {
            rc = (int) eventRecord.invokeExact(event, stream);
        } catch (Throwable e) {
            throw failed(e);
        }
        check(rc, "cudaEventRecord");
    }

    /** Whether the work before the event has completed. */
    public boolean eventDone(MemorySegment event) {
        int rc;
        try {
            rc = (int) eventQuery.invokeExact(event);
        } catch (Throwable e) {
            throw failed(e);
        }
        if (rc == NOT_READY) {
            return false;
        }
        check(rc, "cudaEventQuery");
        return true;
    }

    public void eventSynchronize(MemorySegment event) {
        check(call(eventSynchronize, event), "cudaEventSynchronize");
    }

    public void eventDestroy(MemorySegment event) {
        check(call(eventDestroy, event), "cudaEventDestroy");
    }

    // ---- plumbing -------------------------------------------------------------------------

    private MemorySegment allocated(MethodHandle h, String what, long bytes, int flags) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ValueLayout.ADDRESS);
            check(flags < 0 ? call(h, out, bytes) : call(h, out, bytes, flags), what);
            return out.get(ValueLayout.ADDRESS, 0);
        }
    }

    private MemorySegment created(MethodHandle h, int flags, String what) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ValueLayout.ADDRESS);
            check(call(h, out, flags), what);
            return out.get(ValueLayout.ADDRESS, 0);
        }
    }

    /** For the calls made once (allocations, streams, events): their arguments boxed. */
    private static int call(MethodHandle h, Object... args) {
        try {
            return (int) h.invokeWithArguments(args);
        } catch (Throwable e) {
            throw failed(e);
        }
    }

    private static RuntimeException failed(Throwable e) {
        if (e instanceof RuntimeException r) {
            return r;
        }
        if (e instanceof Error err) {
            throw err;
        }
        return new CudaException("calling CUDA: " + e, e);
    }

    private void check(int rc, String what) {
        if (rc != 0) { // the message is built only for a failure
            String message;
            try {
                MemorySegment s = (MemorySegment) errorString.invokeExact(rc);
                message = s.reinterpret(1 << 10).getString(0);
            } catch (Throwable e) {
                message = "no message";
            }
            throw new CudaException(what + ": " + message + " (CUDA error " + rc + ")");
        }
    }
}
