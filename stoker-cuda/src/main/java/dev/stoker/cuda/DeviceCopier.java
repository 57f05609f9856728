package dev.stoker.cuda;

import dev.stoker.Batch;
import dev.stoker.Schema;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;

/**
 * Copies batches to a GPU asynchronously, for JVM trainers (a DJL adapter, any trainer that takes
 * device pointers). {@link #copy} queues each column's bytes host-to-device on the copier's
 * stream, records an event after them and returns at once: the {@link DeviceBatch} holds the
 * columns' device addresses and the event to wait on before using them. The host batch (in
 * pinned memory: {@link PinnedAllocator}, so that the copy is a DMA the CPU does not wait for) is
 * closed, back to its loader's pool, only once its copy's event has completed; the loader must
 * let the consumer hold as many batches as copies may be in flight ({@code Loader.holds}).
 *
 * <p>Device memory: {@code depth} slots, each with room for a full batch of the schema, reused in
 * turn; a slot is reused only once the trainer has released the batch it held
 * ({@link DeviceBatch#close}). Not thread-safe: one consumer thread.
 */
public final class DeviceCopier implements AutoCloseable {
    private final Cuda cuda;
    private final int device;
    private final MemorySegment stream;
    private final Slot[] slots;
    private final ArrayDeque<Slot> free = new ArrayDeque<>();
    /** Copies queued whose host batch is not closed yet, oldest first. */
    private final ArrayDeque<Slot> copying = new ArrayDeque<>();
    private boolean closed;

    /**
     * @param schema the batches' schema
     * @param capacity their rows at most
     * @param depth the device slots (copies in flight plus batches the trainer holds)
     */
    public DeviceCopier(Cuda cuda, int device, Schema schema, int capacity, int depth) {
        if (depth < 1) {
            throw new IllegalArgumentException("a copier needs at least one device slot, got " + depth);
        }
        this.cuda = cuda;
        this.device = device;
        cuda.setDevice(device);
        this.stream = cuda.streamCreate();
        this.slots = new Slot[depth];
        int fields = schema.size();
        try {
            for (int k = 0; k < depth; k++) {
                Slot s = new Slot(fields);
                s.handle = new DeviceBatch(this, s);
                s.handle.closed = true;
                slots[k] = s;
                s.event = cuda.eventCreate();
                for (int f = 0; f < fields; f++) {
                    var field = schema.field(f);
                    if (field.isVariable()) {
                        s.room[f] = (long) capacity * field.bytesHint();
                        s.offsetRoom[f] = 8L * (capacity + 1);
                        s.offsets[f] = cuda.malloc(s.offsetRoom[f]);
                    } else {
                        s.room[f] = (long) capacity * field.sampleBytes();
                    }
                    s.data[f] = cuda.malloc(Math.max(1, s.room[f]));
                }
                free.add(s);
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /**
     * Queues {@code host}'s copy to the device and returns its device batch. Blocks only when
     * every device slot is taken: until the oldest copy completes (its host batch is closed then)
     * or, when the trainer holds every slot, fails (release device batches first).
     */
    public DeviceBatch copy(Batch host) {
        if (closed) {
            throw new IllegalStateException("the copier is closed");
        }
        cuda.setDevice(device);
        releaseFinished(false);
        Slot s = free.poll();
        if (s == null) {
            throw new IllegalStateException("every device slot is held: close a DeviceBatch before copying another");
        }
        int fields = host.schema().size();
        for (int f = 0; f < fields; f++) {
            long n = host.byteSize(f);
            if (n > s.room[f]) {
                // a variable-length field past its hint: more room (no copy uses this slot now)
                cuda.free(s.data[f]);
                s.data[f] = 0;
                s.room[f] = Math.max(n, 2 * s.room[f]);
                s.data[f] = cuda.malloc(s.room[f]);
            }
            s.bytes[f] = n;
            if (n > 0) {
                cuda.copyToDevice(s.data[f], host.data(f), n, stream);
            }
            if (s.offsets[f] != 0) {
                cuda.copyToDevice(s.offsets[f], host.offsets(f), 8L * (host.size() + 1), stream);
            }
        }
        cuda.eventRecord(s.event, stream);
        s.host = host;
        s.rows = host.size();
        s.held = true;
        copying.add(s);
        s.handle.closed = false; // the slot's one handle, reused: nothing is allocated per batch
        return s.handle;
    }

    /** Closes the host batches whose copies have completed (all of them, waiting, when {@code wait}). */
    private void releaseFinished(boolean wait) {
        while (!copying.isEmpty()) {
            Slot s = copying.peek();
            if (wait) {
                cuda.eventSynchronize(s.event);
            } else if (!cuda.eventDone(s.event)) {
                return;
            }
            copying.poll();
            s.host.close();
            s.host = null;
        }
    }

    private void release(Slot s) {
        if (s.held) {
            s.held = false;
            if (s.host == null) {
                free.add(s);
            } else {
                // still copying: free once the copy is done (the device memory must not be reused under it)
                cuda.eventSynchronize(s.event);
                releaseFinished(false);
                free.add(s);
            }
        }
    }

    /** Waits for every copy, closes their host batches and frees the device memory. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            releaseFinished(true);
        } finally {
            for (Slot s : slots) {
                if (s == null) {
                    continue;
                }
                for (long p : s.data) {
                    if (p != 0) {
                        cuda.free(p);
                    }
                }
                for (long p : s.offsets) {
                    if (p != 0) {
                        cuda.free(p);
                    }
                }
                if (s.event != null) {
                    cuda.eventDestroy(s.event);
                }
            }
            cuda.streamDestroy(stream);
        }
    }

    /** One batch's room on the device. */
    private static final class Slot {
        final long[] data;
        final long[] offsets;
        final long[] room;
        final long[] offsetRoom;
        final long[] bytes;
        MemorySegment event;
        DeviceBatch handle;
        Batch host;
        int rows;
        boolean held;

        Slot(int fields) {
            data = new long[fields];
            offsets = new long[fields];
            room = new long[fields];
            offsetRoom = new long[fields];
            bytes = new long[fields];
        }
    }

    /**
     * A batch on the device: its columns' device addresses, valid until {@link #close}. Each device
     * slot has one, reused: like a loader's {@code Batch}, it must not be closed again once a later
     * {@link #copy} may have handed its slot out.
     */
    public static final class DeviceBatch implements AutoCloseable {
        private final DeviceCopier copier;
        private final Slot slot;
        private boolean closed;

        private DeviceBatch(DeviceCopier copier, Slot slot) {
            this.copier = copier;
            this.slot = slot;
        }

        public int size() {
            return slot.rows;
        }

        /** The device address of field {@code f}'s bytes ({@link #byteSize} of them). */
        public long data(int f) {
            return slot.data[f];
        }

        public long byteSize(int f) {
            return slot.bytes[f];
        }

        /** The device address of a variable-length field's {@code size() + 1} int64 offsets; 0 for a tensor. */
        public long offsets(int f) {
            return slot.offsets[f];
        }

        /** The {@code cudaEvent_t} recorded after this batch's copies: a trainer's stream waits on it. */
        public MemorySegment event() {
            return slot.event;
        }

        /** Whether the copy has completed. */
        public boolean done() {
            return slot.host == null || copier.cuda.eventDone(slot.event);
        }

        /** Blocks until the copy has completed. */
        public void await() {
            copier.cuda.eventSynchronize(slot.event);
        }

        /** Gives the device slot back (after the copy, whose host batch then goes back too). Idempotent. */
        @Override
        public void close() {
            if (!closed) {
                closed = true;
                copier.release(slot);
            }
        }
    }
}
