package dev.stoker.bridge;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The Python bridge's wire and memory contract, in one table: the message types, the frame, the
 * bodies of the fixed-size messages, and the layout of the shared-memory ring and its slots. The
 * Python package's {@code stoker/_protocol.py} holds the same table; {@code ProtocolContractTest}
 * reads both and fails when they differ.
 *
 * <p>Every number is little-endian. A message is a frame, {@code u32 type, u32 payload bytes},
 * then its payload. The flow of a session is NOTE [Bridge flow] in {@link Session}; who
 * owns a slot when, NOTE [Batches the user owns] there.
 */
final class Protocol {
    private Protocol() {
    }

    /** Bumped with any change to this table: the client refuses a server of another version. */
    static final int VERSION = 3;

    // ---- messages: client -> server --------------------------------------------------------
    /** JSON: {@code source} and {@code loader} (the specs, as {@code Specs} reads them), {@code ahead}, {@code ringBytes}, {@code state} (a loader state as JSON, or null). */
    static final int OPEN = 1;
    /** The client has mapped the ring. */
    static final int MAPPED = 2;
    /** {@code i64 consumed, i64 epoch}: a new pass after the notice {@code consumed}: epoch {@code e >= 0} from its start, or (-1) on from where the loader stands. */
    static final int PASS = 3;
    /** No payload: the client's report in the ring ({@link #RING_TAKEN_AT}, the given-back queue) has what the session waits for ({@link #RING_WAITS_AT}). */
    static final int LOOK = 4;
    /** {@code i64 consumed}: the loader's state after that notice. */
    static final int STATE = 5;
    /** {@code i64 consumed, UTF-8 JSON state}: continue from that state. */
    static final int LOAD = 6;
    static final int STATS = 7;
    static final int BYE = 8;

    // ---- messages: server -> client --------------------------------------------------------
    /** JSON: the ring (path, bytes, slots, slot bytes), the fields, and the pass's numbers (as STARTED). */
    static final int HELLO = 101;
    /** {@code i32 slot, i32 0, i64 counter, i64 spilled bytes}, then those bytes. */
    static final int READY = 102;
    /** {@code i64 counter, i64 batches of the pass}. */
    static final int END = 103;
    /** JSON: {@code kind, message, resource?, index?, fatal}. */
    static final int ERROR = 104;
    static final int STATE_IS = 105;
    static final int STATS_ARE = 106;
    /** JSON: {@code counter, epoch, batches, batch, workers, prefetch, holds}. */
    static final int STARTED = 107;

    /** The frame: u32 type, u32 payload bytes. */
    static final int FRAME_BYTES = 8;
    static final int READY_BYTES = 24;
    static final int END_BYTES = 16;
    static final int PASS_BYTES = 16;
    /** The largest message a client may send. */
    static final int MAX_MESSAGE = (64 << 10) - FRAME_BYTES;

    // ---- the ring ----------------------------------------------------------------------------
    /** The ring's header, then slot k at {@code RING_HEADER + k * slotBytes}. */
    static final long RING_HEADER = 4096;
    /** The header's first bytes, ASCII. */
    static final String RING_MAGIC = "STOKRING";
    /** u32: {@link #VERSION}. */
    static final int RING_VERSION_AT = 8;
    /** u32: the slots the ring may grow to. */
    static final int RING_SLOTS_AT = 12;
    /** u64: the bytes of a slot. */
    static final int RING_SLOT_BYTES_AT = 16;
    /** u64: the bytes of a slot's header (its field descriptors). */
    static final int RING_SLOT_HEADER_AT = 24;
    /** u32: the fields of each batch. */
    static final int RING_FIELDS_AT = 32;
    /** u32: the rows a batch holds at most. */
    static final int RING_CAPACITY_AT = 36;
    /** i64, the client writes it: the last notice its loop has taken. */
    static final int RING_TAKEN_AT = 64;
    /**
     * i64, the session writes it: 0, or what it waits for from the client, {@code (wait number mod
     * 2^15) << 48 | n}: the client to have taken notice {@code n}, or, {@code n = }{@link #WAITS_FOR_SLOT},
     * a slot given back. The client sends {@link #LOOK} once for a wait that its report ends.
     */
    static final int RING_WAITS_AT = 72;
    static final long WAITS_FOR_SLOT = (1L << 48) - 1;
    /**
     * The given-back queue, after the last slot (at {@code RING_HEADER + slots * slotBytes}), whole
     * pages: one u64 entry per slot the ring may grow to. The client writes its k-th slot given back
     * at entry {@code k mod slots} as {@code ((k + 1) mod 2^32) << 32 | slot}, in one 8-byte store;
     * the session takes entries in order while their upper half is the next number.
     */
    static final int GIVEN_BACK_ENTRY_BYTES = 8;
    /** Slot k starts at {@code RING_HEADER + k * slotBytes}; u64 sequence, i64 epoch, u32 rows, u32 fields, u64 counter. */
    static final int SLOT_SEQUENCE = 0;
    static final int SLOT_EPOCH = 8;
    static final int SLOT_ROWS = 16;
    static final int SLOT_FIELDS = 20;
    static final int SLOT_COUNTER = 32;
    /** Field i's descriptor starts at {@code SLOT_FIELD0 + FIELD_BYTES * i} of its slot. */
    static final int SLOT_FIELD0 = 64;
    static final int FIELD_BYTES = 128;
    static final int NAME_BYTES = 48;
    static final int FIELD_DTYPE = 48;
    static final int FIELD_DIMS = 49;
    static final int FIELD_VARIABLE = 50;
    static final int FIELD_SHAPE = 56;
    static final int MAX_DIMS = 6;
    /** i64: the column's offset in the slot, or {@link #NOT_IN_SLOT} (sent after the READY frame instead). */
    static final int FIELD_DATA = 104;
    /** i64: the column's valid bytes. */
    static final int FIELD_BYTES_VALID = 112;
    /** i64: the offset in the slot of a variable-length column's rows + 1 int64 offsets; -1 for a tensor. */
    static final int FIELD_OFFSETS = 120;
    static final long NOT_IN_SLOT = -1;

    /** The table, by name, as the contract test compares it with the Python package's. */
    static Map<String, Object> table() {
        Map<String, Object> t = new LinkedHashMap<>();
        for (java.lang.reflect.Field f : Protocol.class.getDeclaredFields()) {
            int m = f.getModifiers();
            if (java.lang.reflect.Modifier.isStatic(m) && java.lang.reflect.Modifier.isFinal(m)) {
                try {
                    t.put(f.getName(), f.get(null));
                } catch (IllegalAccessException e) {
                    throw new AssertionError(e);
                }
            }
        }
        return t;
    }
}
