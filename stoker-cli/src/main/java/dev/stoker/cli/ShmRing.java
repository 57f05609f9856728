package dev.stoker.cli;

import dev.stoker.Allocator;
import dev.stoker.Batch;
import dev.stoker.DType;
import dev.stoker.Field;
import dev.stoker.Schema;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;

/**
 * The shared-memory ring of {@code stoker serve}: one file in a tmpfs ({@code /dev/shm}), mapped
 * by the server and by the Python process it serves, cut into slots of one batch buffer each. As
 * the loader's {@link Allocator} it gives each batch buffer a slot, so that workers collate
 * straight into memory the trainer reads: nothing is copied after collation.
 *
 * <p>Layout (little-endian; ARCHITECTURE.md, "The Python bridge"):
 * <pre>
 * ring header, 4096 bytes: "STOKRING", u32 version (1), u32 slots, u64 slot bytes, u64 slot header
 *   bytes, u32 fields, u32 batch capacity
 * slot k at 4096 + k * slotBytes (a whole number of pages):
 *   0  u64 sequence   8 i64 epoch   16 u32 rows   20 u32 fields   32 u64 counter (of the notice)
 *   64 + 128 * i: field i: 0 name (UTF-8, NUL-padded, 48 bytes), 48 u8 dtype (DType ordinal),
 *      49 u8 dims of a sample, 50 u8 variable, 56 i64[6] sample shape, 104 i64 data offset in the
 *      slot (-1: sent after the socket's notice instead), 112 i64 valid data bytes, 120 i64 offset
 *      of the rows + 1 int64 offsets of a variable-length field (-1: a tensor)
 *   then the batch's columns, each 64-byte aligned
 * </pre>
 *
 * <p>The file is created at its full size with {@code posix_fallocate}, so that a full tmpfs is
 * a clear error now rather than a SIGBUS later, and its name is unlinked as soon as both sides
 * have mapped it ({@link #unlink()}), so that nothing is left behind however either side ends.
 */
final class ShmRing implements Allocator, AutoCloseable {
    static final long RING_HEADER = 4096;
    static final int FIELD_BYTES = 128;
    static final int NAME_BYTES = 48;
    static final int MAX_DIMS = 6;
    static final long NOT_IN_SLOT = -1;
    /** The name every ring file starts with, then the server's pid: stale rings of dead servers are swept. */
    static final String PREFIX = "stoker-ring-";
    private static final long PAGE = 4096;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final Path path;
    private final Schema schema;
    private final int slots;
    private final long slotBytes;
    private final long slotHeader;
    private final Arena mapping;
    private final MemorySegment ring;
    private final boolean[] taken;
    private boolean unlinked;
    private boolean closed;

    private ShmRing(Path path, Schema schema, int capacity, int slots, long slotHeader, long slotBytes) throws IOException {
        this.path = path;
        this.schema = schema;
        this.slots = slots;
        this.slotHeader = slotHeader;
        this.slotBytes = slotBytes;
        this.taken = new boolean[slots];
        long size = size();
        // readable by this user alone: the batches are the training data
        try (FileChannel ch = FileChannel.open(path, java.util.Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE), java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")))) {
            reserve(path, size);
            this.mapping = Arena.ofShared();
            this.ring = ch.map(FileChannel.MapMode.READ_WRITE, 0, size, mapping);
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(path);
            throw e;
        }
        writeHeaders(capacity);
    }

    /**
     * A ring of {@code slots} buffers of batches of {@code capacity} rows of {@code schema}, in a
     * new file {@code dir/name}; fails with what to do when the file system lacks the room.
     */
    static ShmRing create(Path dir, String name, Schema schema, int capacity, int slots) throws IOException {
        for (Field f : schema.fields()) {
            if (f.name().getBytes(StandardCharsets.UTF_8).length >= NAME_BYTES || f.shape().length > MAX_DIMS) {
                throw new IllegalArgumentException("field '" + f.name() + "' does not fit the ring's descriptor: names "
                        + "of at most " + (NAME_BYTES - 1) + " bytes, at most " + MAX_DIMS + " dimensions per sample");
            }
        }
        long header = align(64L + (long) FIELD_BYTES * schema.size(), 64);
        long slot = align(header + Batch.bytesFor(schema, capacity), PAGE);
        long size = RING_HEADER + slot * slots;
        if (!Files.isDirectory(dir)) {
            throw new IOException(dir + ": no such directory for the batch ring (set STOKER_SHM_DIR to a tmpfs)");
        }
        long free = Files.getFileStore(dir).getUsableSpace();
        if (free < size) {
            throw new NoRoomException(String.format(Locale.ROOT, "%s: the batch ring needs %s of shared memory (%d slots of %s) "
                    + "and only %s is free; give it more room (Docker: --shm-size=%s; Kubernetes: an emptyDir with "
                    + "medium: Memory mounted at /dev/shm), or use a smaller batch or prefetch, or point STOKER_SHM_DIR "
                    + "at a larger tmpfs", dir, human(size), slots, human(slot), human(free), human(2 * size + (256L << 20))));
        }
        return new ShmRing(dir.resolve(name), schema, capacity, slots, header, slot);
    }

    /** The shared-memory file system lacks the room for the ring: the message says how much and how to get it. */
    static final class NoRoomException extends IOException {
        NoRoomException(String message) {
            super(message);
        }
    }

    Path path() {
        return path;
    }

    long size() {
        return RING_HEADER + slotBytes * slots;
    }

    int slots() {
        return slots;
    }

    long slotBytes() {
        return slotBytes;
    }

    long slotHeader() {
        return slotHeader;
    }

    /** The slot a batch buffer of this ring lives in. */
    int slotOf(Batch b) {
        // offsets never move; a tensor column neither (a variable-length one may outgrow the slot)
        MemorySegment first = schema.field(0).isVariable() ? b.offsets(0) : b.data(0);
        long at = first.address() - ring.address() - RING_HEADER;
        if (at < 0 || at >= slotBytes * slots) {
            throw new IllegalStateException("a batch whose first column is not in the ring");
        }
        return (int) (at / slotBytes);
    }

    /**
     * Writes a delivered batch's header into its slot; returns the bytes of its variable-length
     * columns that outgrew the slot, which travel after the socket's notice instead.
     */
    long publish(Batch b, int slot, long counter) {
        MemorySegment s = slot(slot);
        s.set(LONG, 0, b.sequence());
        s.set(LONG, 8, b.epoch());
        s.set(INT, 16, b.size());
        s.set(LONG, 32, counter);
        long spilled = 0;
        for (int i = 0; i < schema.size(); i++) {
            long d = FIELD_BYTES * i + 64;
            MemorySegment data = b.data(i);
            long bytes = b.byteSize(i);
            boolean inSlot = bytes == 0 || contains(data.address(), bytes);
            s.set(LONG, d + 104, !inSlot ? NOT_IN_SLOT : bytes == 0 ? slotHeader : data.address() - s.address());
            s.set(LONG, d + 112, bytes);
            if (!inSlot) {
                spilled += bytes;
            }
            if (schema.field(i).isVariable()) {
                s.set(LONG, d + 120, b.offsets(i).address() - s.address());
            }
        }
        return spilled;
    }

    /** Whether {@code bytes} at {@code address} lie in the ring (a column in its slot, not one that outgrew it). */
    boolean contains(long address, long bytes) {
        return address >= ring.address() && address + bytes <= ring.address() + ring.byteSize();
    }

    /** Removes the file's name; the memory lives on while either side has it mapped. Idempotent. */
    synchronized void unlink() {
        if (!unlinked) {
            unlinked = true;
            try {
                Files.deleteIfExists(path);
            } catch (IOException e) {
                System.getLogger(ShmRing.class.getName()).log(System.Logger.Level.WARNING, "could not remove " + path, e);
            }
        }
    }

    /** Unmaps the ring (call after the loader using it is closed) and removes its name. Idempotent. */
    @Override
    public synchronized void close() {
        unlink();
        if (!closed) {
            closed = true;
            try {
                mapping.close();
            } catch (IllegalStateException e) {
                // a worker stuck in a read still holds a slot (NOTE [Shutdown] in Loader): the
                // mapping goes with the process; the name is already gone
                System.getLogger(ShmRing.class.getName()).log(System.Logger.Level.WARNING,
                        "the batch ring is still in use; it is unmapped when the server exits");
            }
        }
    }

    // ---- the allocator ------------------------------------------------------------------------

    @Override
    public Arena newArena() {
        return Arena.ofShared(); // a variable-length column that outgrew its slot
    }

    @Override
    public synchronized Arena newBatchArena(long bytes) {
        if (slotHeader + bytes > slotBytes) {
            throw new IllegalStateException("a batch buffer of " + bytes + " bytes does not fit a slot of " + slotBytes);
        }
        for (int i = 0; i < slots; i++) {
            if (!taken[i]) {
                taken[i] = true;
                return new SlotArena(i, slot(i).asSlice(slotHeader));
            }
        }
        throw new IllegalStateException("the loader asked for more batch buffers than the ring's " + slots + " slots");
    }

    private MemorySegment slot(int i) {
        return ring.asSlice(RING_HEADER + slotBytes * i, slotBytes);
    }

    private synchronized void give(int i) {
        taken[i] = false;
    }

    /** One slot's columns, handed out front to back; closing it gives the slot back to the ring. */
    private final class SlotArena implements Arena {
        private final int slot;
        private final MemorySegment space;
        private long used;
        private boolean open = true;

        SlotArena(int slot, MemorySegment space) {
            this.slot = slot;
            this.space = space;
        }

        @Override
        public MemorySegment allocate(long byteSize, long byteAlignment) {
            long start = align(used, byteAlignment);
            if (start + byteSize > space.byteSize()) {
                throw new IllegalStateException("slot " + slot + " of the batch ring is full");
            }
            used = start + byteSize;
            return space.asSlice(start, byteSize);
        }

        @Override
        public MemorySegment.Scope scope() {
            return mapping.scope();
        }

        @Override
        public void close() {
            if (open) {
                open = false;
                give(slot);
            }
        }
    }

    private void writeHeaders(int capacity) {
        ring.setString(0, "STOKRING", StandardCharsets.US_ASCII);
        ring.set(INT, 8, 1);
        ring.set(INT, 12, slots);
        ring.set(LONG, 16, slotBytes);
        ring.set(LONG, 24, slotHeader);
        ring.set(INT, 32, schema.size());
        ring.set(INT, 36, capacity);
        for (int k = 0; k < slots; k++) {
            MemorySegment s = slot(k);
            s.set(INT, 20, schema.size());
            for (int i = 0; i < schema.size(); i++) {
                Field f = schema.field(i);
                long d = 64 + (long) FIELD_BYTES * i;
                byte[] name = f.name().getBytes(StandardCharsets.UTF_8);
                MemorySegment.copy(name, 0, s, ValueLayout.JAVA_BYTE, d, name.length);
                s.set(ValueLayout.JAVA_BYTE, d + 48, (byte) (f.isVariable() ? DType.UINT8 : f.dtype()).ordinal());
                long[] shape = f.isVariable() ? new long[0] : f.shape();
                s.set(ValueLayout.JAVA_BYTE, d + 49, (byte) shape.length);
                s.set(ValueLayout.JAVA_BYTE, d + 50, (byte) (f.isVariable() ? 1 : 0));
                for (int j = 0; j < shape.length; j++) {
                    s.set(LONG, d + 56 + 8L * j, shape[j]);
                }
                s.set(LONG, d + 120, NOT_IN_SLOT);
            }
        }
    }

    static long align(long v, long to) {
        return (v + to - 1) & -to;
    }

    static String human(long bytes) {
        if (bytes >= 1L << 30) {
            return String.format(Locale.ROOT, "%.1f GiB", bytes / (double) (1L << 30));
        }
        return String.format(Locale.ROOT, "%.0f MiB", Math.ceil(bytes / (double) (1L << 20)));
    }

    // NOTE [Reserving shared memory]: a tmpfs allocates a page when it is first written; if it is
    // full then, the writer gets SIGBUS, which would kill the JVM mid-batch. posix_fallocate
    // reserves every page now, or fails with ENOSPC, which becomes a clear error.
    private static final MethodHandle OPEN;
    private static final MethodHandle FALLOCATE;
    private static final MethodHandle CLOSE;

    static {
        Linker linker = Linker.nativeLinker();
        var libc = linker.defaultLookup();
        OPEN = linker.downcallHandle(libc.find("open").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
        FALLOCATE = linker.downcallHandle(libc.find("posix_fallocate").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG));
        CLOSE = linker.downcallHandle(libc.find("close").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
    }

    private static void reserve(Path path, long size) throws IOException {
        int err;
        try (Arena a = Arena.ofConfined()) {
            int fd = (int) OPEN.invokeExact(a.allocateFrom(path.toString()), 2 /* O_RDWR */);
            if (fd < 0) {
                throw new IOException(path + ": cannot open the batch ring to reserve its memory");
            }
            try {
                err = (int) FALLOCATE.invokeExact(fd, 0L, size);
            } finally {
                int ignored = (int) CLOSE.invokeExact(fd);
            }
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        if (err == 28 /* ENOSPC */) {
            throw new NoRoomException(path.getParent() + ": no room for the batch ring of " + human(size)
                    + " (the file system filled up); give it more room or use a smaller batch or prefetch");
        }
        if (err != 0) {
            throw new IOException(path + ": could not reserve " + human(size) + " for the batch ring (error " + err + ")");
        }
    }
}
