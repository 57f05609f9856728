package dev.stoker.bridge;

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
import java.lang.invoke.VarHandle;
import java.io.UncheckedIOException;
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
 * straight into memory the trainer reads: nothing is copied after collation. The layout is
 * {@link Protocol}'s.
 *
 * <p>NOTE [A ring that grows]: the file is as large as the most slots the ring may have (its
 * bound), but sparse: a slot's memory is reserved with {@code posix_fallocate} when a buffer first
 * needs it, so that a full tmpfs is a clear error then rather than a SIGBUS later, and a ring
 * costs the slots in use, not its bound. Both sides map the whole file once, so a slot made later
 * needs no new mapping. A slot is free again only when its batch buffer is gone (its arena
 * closed: the loader gave it up) and the client no longer holds it ({@link #publish} to
 * {@link #clientFree}); so a slot the client holds is never written, whichever loader comes next.
 *
 * <p>The file's name is unlinked as soon as both sides have mapped it ({@link #unlink()}), so
 * that nothing is left behind however either side ends; the server keeps a descriptor to reserve
 * more slots.
 */
final class ShmRing implements Allocator, AutoCloseable {
    static final long RING_HEADER = Protocol.RING_HEADER;
    /** The name every ring file starts with, then the server's pid: stale rings of dead servers are swept. */
    static final String PREFIX = "stoker-ring-";
    /** The most slots a ring may have, whatever its bound in bytes. */
    static final int MAX_SLOTS = 4096;
    private static final long PAGE = 4096;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** An aligned word of the header or the given-back queue, read and written with memory ordering. */
    private static final VarHandle WORD = ValueLayout.JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN).varHandle();

    private final Path path;
    private final Schema schema;
    private final int slots;
    private final long slotBytes;
    private final long slotHeader;
    private final Arena mapping;
    private final MemorySegment ring;
    private final int fd;
    /** Slots [0, made) have their memory reserved and their header written. */
    private int made;
    /** A batch buffer's arena lives in the slot. */
    private final boolean[] taken;
    /** The client holds the slot: published, not yet freed. */
    private final boolean[] clientHeld;
    private int clientHeldCount;
    private boolean unlinked;
    private boolean closed;
    /** Entries of the given-back queue taken so far (the session thread alone). */
    private long givenBack;

    private ShmRing(Path path, Schema schema, int capacity, int initial, int slots, long slotHeader, long slotBytes)
            throws IOException {
        this.path = path;
        this.schema = schema;
        this.slots = slots;
        this.slotHeader = slotHeader;
        this.slotBytes = slotBytes;
        this.taken = new boolean[slots];
        this.clientHeld = new boolean[slots];
        long size = size();
        // readable by this user alone: the batches are the training data
        try (FileChannel ch = FileChannel.open(path, java.util.Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE), java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")))) {
            this.fd = openFd(path);
            try {
                reserve(0, RING_HEADER + slotBytes * initial);
                reserve(queueAt(), size() - queueAt());
                this.mapping = Arena.ofShared();
                this.ring = ch.map(FileChannel.MapMode.READ_WRITE, 0, size, mapping); // sparse past the reserved slots
            } catch (IOException | RuntimeException e) {
                closeFd(fd);
                throw e;
            }
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(path);
            throw e;
        }
        writeHeader(capacity);
        while (made < initial) {
            writeSlotHeader(made++);
        }
    }

    /**
     * A ring for batches of {@code capacity} rows of {@code schema}, in a new file {@code dir/name},
     * with {@code initial} slots made now and room to grow to as many as fit {@code boundBytes}
     * (at least {@code initial}, at most {@link #MAX_SLOTS}); fails with what to do when the file
     * system lacks the room for the initial slots.
     */
    static ShmRing create(Path dir, String name, Schema schema, int capacity, int initial, long boundBytes) throws IOException {
        for (Field f : schema.fields()) {
            if (f.name().getBytes(StandardCharsets.UTF_8).length >= Protocol.NAME_BYTES || f.shape().length > Protocol.MAX_DIMS) {
                throw new IllegalArgumentException("field '" + f.name() + "' does not fit the ring's descriptor: names "
                        + "of at most " + (Protocol.NAME_BYTES - 1) + " bytes, at most " + Protocol.MAX_DIMS + " dimensions per sample");
            }
        }
        long header = align(Protocol.SLOT_FIELD0 + (long) Protocol.FIELD_BYTES * schema.size(), 64);
        long slot = align(header + Batch.bytesFor(schema, capacity), PAGE);
        long size = RING_HEADER + slot * initial;
        if (!Files.isDirectory(dir)) {
            throw new IOException(dir + ": no such directory for the batch ring (set STOKER_SHM_DIR to a tmpfs)");
        }
        long free = Files.getFileStore(dir).getUsableSpace();
        if (free < size) {
            throw new NoRoomException(String.format(Locale.ROOT, "%s: the batch ring needs %s of shared memory (%d slots of %s) "
                    + "and only %s is free; give it more room (Docker: --shm-size=%s; Kubernetes: an emptyDir with "
                    + "medium: Memory mounted at /dev/shm), or use a smaller batch or prefetch, or point STOKER_SHM_DIR "
                    + "at a larger tmpfs", dir, human(size), initial, human(slot), human(free), human(2 * size + (256L << 20))));
        }
        int slots = (int) Math.clamp((boundBytes - RING_HEADER) / slot, initial, Math.max(initial, MAX_SLOTS));
        return new ShmRing(dir.resolve(name), schema, capacity, initial, slots, header, slot);
    }

    /** The default bound of a ring: half of what is free in {@code dir} now (NOTE [A ring that grows]). */
    static long defaultBound(Path dir) throws IOException {
        return Files.isDirectory(dir) ? Files.getFileStore(dir).getUsableSpace() / 2 : 0;
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

    /** The file's size: every slot the ring may grow to, then the given-back queue. */
    long size() {
        return queueAt() + align((long) Protocol.GIVEN_BACK_ENTRY_BYTES * slots, PAGE);
    }

    /** Where the given-back queue starts: after the last slot ({@link Protocol#GIVEN_BACK_ENTRY_BYTES}). */
    private long queueAt() {
        return RING_HEADER + slotBytes * slots;
    }

    // ---- the client's report (NOTE [Bridge flow] in Session) -------------------------------

    /**
     * The next slot the client gave back, or -1 when its next entry is not written yet: an entry
     * is taken only when its number is the next one, so one written in part, or left from the
     * queue's last turn, is never taken. The session validates the slot ({@link #clientFree}).
     */
    int nextGivenBack() {
        long at = queueAt() + (long) Protocol.GIVEN_BACK_ENTRY_BYTES * (givenBack % slots);
        long entry = (long) WORD.getAcquire(ring, at);
        if ((int) (entry >>> 32) != (int) (givenBack + 1)) {
            return -1;
        }
        givenBack++;
        return (int) entry;
    }

    /** The last notice the client says its loop has taken. */
    long clientTaken() {
        return (long) WORD.getAcquire(ring, (long) Protocol.RING_TAKEN_AT);
    }

    /**
     * Says what the session waits for from the client ({@link Protocol#RING_WAITS_AT}; 0: nothing),
     * then a full fence: the report the session reads after it is the client's as of then or later.
     */
    void waits(long what) {
        WORD.setVolatile(ring, (long) Protocol.RING_WAITS_AT, what);
        VarHandle.fullFence();
    }

    /** The most slots the ring may have. */
    int slots() {
        return slots;
    }

    /** Slots made so far (their memory reserved). */
    synchronized int made() {
        return made;
    }

    long slotBytes() {
        return slotBytes;
    }

    long slotHeader() {
        return slotHeader;
    }

    /** Slots the client holds now. */
    synchronized int clientHeld() {
        return clientHeldCount;
    }

    /** Slots the client holds whose batch buffer is gone (a loader closed under them). */
    synchronized int orphans() {
        int n = 0;
        for (int i = 0; i < made; i++) {
            if (clientHeld[i] && !taken[i]) {
                n++;
            }
        }
        return n;
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
     * Writes a delivered batch's header into its slot, which the client holds from now on until
     * {@link #clientFree}; returns the bytes of its variable-length columns that outgrew the slot,
     * which travel after the socket's notice instead.
     */
    long publish(Batch b, int slot, long counter) {
        synchronized (this) {
            if (clientHeld[slot]) {
                throw new IllegalStateException("slot " + slot + " is published while the client holds it");
            }
            clientHeld[slot] = true;
            clientHeldCount++;
        }
        MemorySegment s = slot(slot);
        s.set(LONG, Protocol.SLOT_SEQUENCE, b.sequence());
        s.set(LONG, Protocol.SLOT_EPOCH, b.epoch());
        s.set(INT, Protocol.SLOT_ROWS, b.size());
        s.set(LONG, Protocol.SLOT_COUNTER, counter);
        long spilled = 0;
        for (int i = 0; i < schema.size(); i++) {
            long d = Protocol.FIELD_BYTES * i + Protocol.SLOT_FIELD0;
            MemorySegment data = b.data(i);
            long bytes = b.byteSize(i);
            boolean inSlot = bytes == 0 || contains(data.address(), bytes);
            s.set(LONG, d + Protocol.FIELD_DATA, !inSlot ? Protocol.NOT_IN_SLOT : bytes == 0 ? slotHeader : data.address() - s.address());
            s.set(LONG, d + Protocol.FIELD_BYTES_VALID, bytes);
            if (!inSlot) {
                spilled += bytes;
            }
            if (schema.field(i).isVariable()) {
                s.set(LONG, d + Protocol.FIELD_OFFSETS, b.offsets(i).address() - s.address());
            }
        }
        return spilled;
    }

    /** The client gave the slot back; false when it did not hold it. */
    synchronized boolean clientFree(int slot) {
        if (slot < 0 || slot >= made || !clientHeld[slot]) {
            return false;
        }
        clientHeld[slot] = false;
        clientHeldCount--;
        return true;
    }

    /** Whether {@code bytes} at {@code address} lie in the ring (a column in its slot, not one that outgrew it). */
    boolean contains(long address, long bytes) {
        return address >= ring.address() + RING_HEADER && address + bytes <= ring.address() + queueAt();
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
            closeFd(fd);
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
        for (int i = 0; i < made; i++) {
            if (!taken[i] && !clientHeld[i]) {
                taken[i] = true;
                return new SlotArena(i, slot(i).asSlice(slotHeader));
            }
        }
        if (made == slots) {
            throw new IllegalStateException("the loader asked for more batch buffers than the ring's " + slots + " slots");
        }
        try {
            reserve(RING_HEADER + slotBytes * made, slotBytes);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        int i = made++;
        writeSlotHeader(i);
        taken[i] = true;
        return new SlotArena(i, slot(i).asSlice(slotHeader));
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

    private void writeHeader(int capacity) {
        ring.setString(0, Protocol.RING_MAGIC, StandardCharsets.US_ASCII);
        ring.set(INT, Protocol.RING_VERSION_AT, Protocol.VERSION);
        ring.set(INT, Protocol.RING_SLOTS_AT, slots);
        ring.set(LONG, Protocol.RING_SLOT_BYTES_AT, slotBytes);
        ring.set(LONG, Protocol.RING_SLOT_HEADER_AT, slotHeader);
        ring.set(INT, Protocol.RING_FIELDS_AT, schema.size());
        ring.set(INT, Protocol.RING_CAPACITY_AT, capacity);
    }

    private void writeSlotHeader(int k) {
        MemorySegment s = slot(k);
        s.set(INT, Protocol.SLOT_FIELDS, schema.size());
        for (int i = 0; i < schema.size(); i++) {
            Field f = schema.field(i);
            long d = Protocol.SLOT_FIELD0 + (long) Protocol.FIELD_BYTES * i;
            byte[] name = f.name().getBytes(StandardCharsets.UTF_8);
            MemorySegment.copy(name, 0, s, ValueLayout.JAVA_BYTE, d, name.length);
            s.set(ValueLayout.JAVA_BYTE, d + Protocol.FIELD_DTYPE, (byte) (f.isVariable() ? DType.UINT8 : f.dtype()).ordinal());
            long[] shape = f.isVariable() ? new long[0] : f.shape();
            s.set(ValueLayout.JAVA_BYTE, d + Protocol.FIELD_DIMS, (byte) shape.length);
            s.set(ValueLayout.JAVA_BYTE, d + Protocol.FIELD_VARIABLE, (byte) (f.isVariable() ? 1 : 0));
            for (int j = 0; j < shape.length; j++) {
                s.set(LONG, d + Protocol.FIELD_SHAPE + 8L * j, shape[j]);
            }
            s.set(LONG, d + Protocol.FIELD_OFFSETS, Protocol.NOT_IN_SLOT);
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

    private static int openFd(Path path) throws IOException {
        try (Arena a = Arena.ofConfined()) {
            int fd = (int) OPEN.invokeExact(a.allocateFrom(path.toString()), 2 /* O_RDWR */);
            if (fd < 0) {
                throw new IOException(path + ": cannot open the batch ring to reserve its memory");
            }
            return fd;
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    private static void closeFd(int fd) {
        try {
            int ignored = (int) CLOSE.invokeExact(fd);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** Reserves {@code length} bytes of the file at {@code offset} (NOTE [Reserving shared memory]). */
    private void reserve(long offset, long length) throws IOException {
        int err;
        try {
            err = (int) FALLOCATE.invokeExact(fd, offset, length);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        if (err == 28 /* ENOSPC */) {
            throw new NoRoomException(path.getParent() + ": no room for " + human(length) + " more of the batch ring"
                    + " (the file system filled up); give it more room, or hold fewer batches, or use a smaller batch or prefetch");
        }
        if (err != 0) {
            throw new IOException(path + ": could not reserve " + human(length) + " for the batch ring (error " + err + ")");
        }
    }
}
