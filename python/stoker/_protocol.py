"""The bridge's wire and memory contract, and the client's end of the socket.

The table below is ``Protocol.java``'s, name for name; ``ProtocolContractTest`` (in stoker-bridge's
tests) reads both and fails when they differ. Every number is little-endian; a message is a
frame, ``u32 type, u32 payload bytes``, then its payload. How batches move is NOTE [Bridge flow]
in ``Session.java``; who owns a slot when, NOTE [Batches the user owns] there.
"""

import socket
import struct
import time

from .errors import LoaderDied, StokerError

VERSION = 3

# client -> server
OPEN = 1
MAPPED = 2
PASS = 3
LOOK = 4
STATE = 5
LOAD = 6
STATS = 7
BYE = 8
# server -> client
HELLO = 101
READY = 102
END = 103
ERROR = 104
STATE_IS = 105
STATS_ARE = 106
STARTED = 107

FRAME_BYTES = 8
READY_BYTES = 24
END_BYTES = 16
PASS_BYTES = 16
MAX_MESSAGE = (64 << 10) - FRAME_BYTES

# the ring: its header, then slot k at RING_HEADER + k * slot bytes
RING_HEADER = 4096
RING_MAGIC = "STOKRING"
RING_VERSION_AT = 8
RING_SLOTS_AT = 12
RING_SLOT_BYTES_AT = 16
RING_SLOT_HEADER_AT = 24
RING_FIELDS_AT = 32
RING_CAPACITY_AT = 36
RING_TAKEN_AT = 64
RING_WAITS_AT = 72
WAITS_FOR_SLOT = (1 << 48) - 1
GIVEN_BACK_ENTRY_BYTES = 8
SLOT_SEQUENCE = 0
SLOT_EPOCH = 8
SLOT_ROWS = 16
SLOT_FIELDS = 20
SLOT_COUNTER = 32
SLOT_FIELD0 = 64
FIELD_BYTES = 128
NAME_BYTES = 48
FIELD_DTYPE = 48
FIELD_DIMS = 49
FIELD_VARIABLE = 50
FIELD_SHAPE = 56
MAX_DIMS = 6
FIELD_DATA = 104
FIELD_BYTES_VALID = 112
FIELD_OFFSETS = 120
NOT_IN_SLOT = -1

def table():
    """The contract, by name, as the contract test compares it with Protocol.java's."""
    return {name: value for name, value in globals().items()
            if name.isupper() and isinstance(value, (int, str)) and not isinstance(value, bool)}


def ring_bytes(slots, slot_bytes):
    """The ring file's size: the header, the slots, then the given-back queue in whole pages."""
    return RING_HEADER + slots * slot_bytes + -(-slots * GIVEN_BACK_ENTRY_BYTES // 4096) * 4096


FRAME = struct.Struct("<II")
READY_BODY = struct.Struct("<IIqq")       # slot, 0, counter, spilled bytes
END_BODY = struct.Struct("<qq")           # counter, batches of the pass
PASS_MESSAGE = struct.Struct("<IIqq")     # frame, consumed, epoch
COUNTER_MESSAGE = struct.Struct("<IIq")   # frame, consumed
FIELD_COLUMN = struct.Struct("<qqq")      # data offset, valid bytes, offsets' offset
SLOT_HEAD = struct.Struct("<QqII")        # sequence, epoch, rows, fields
READY_MESSAGE = struct.Struct("<IIIIqq")  # frame, then READY's body
LOOK_MESSAGE = FRAME.pack(LOOK, 0)
assert READY_BODY.size == READY_BYTES and END_BODY.size == END_BYTES and PASS_MESSAGE.size == FRAME_BYTES + PASS_BYTES


class Connection:
    """The client's end of one session: framing, buffered reads, waits that can be woken.

    A wait for the server ticks every ``TICK`` seconds into ``on_tick`` (a receive timeout), so
    that slots given back by other threads (a batch dropped on a prefetch thread) reach the server
    while the loop waits, and a ``timeout`` can be kept; sends stay blocking, never cut short.
    """

    TICK = 0.05

    def __init__(self, path, server=None):
        self.server = server
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.sock.connect(path)
        except OSError as e:
            self.sock.close()
            raise StokerError(f"cannot connect to the stoker server at {path}: {e}") from e
        # a receive that waits returns after TICK seconds with EAGAIN: one system call per wait, and
        # a send (SO_SNDTIMEO unset) is never cut short
        tick = struct.pack("ll", 0, int(self.TICK * 1e6))
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, tick)
        self.buf = bytearray(1 << 16)
        self.view = memoryview(self.buf)
        self.start = 0
        self.end = 0
        self.wait_seconds = 0.0

    def send(self, type_, payload=b""):
        self.sendall(FRAME.pack(type_, len(payload)) + payload)

    def sendall(self, data):
        try:
            self.sock.sendall(data)
        except OSError as e:
            raise self._dead() from e

    def look(self):
        """Tells the server that the client's report in the ring has what it waits for."""
        self.sendall(LOOK_MESSAGE)

    def take_ready(self):
        """The next message, when it is a READY already read whose batch is all in its slot (most
        are): (slot, counter), read in one unpack; else None, and recv() takes it."""
        start = self.start
        if self.end - start >= 32:
            type_, n, slot, _, counter, spilled = READY_MESSAGE.unpack_from(self.buf, start)
            if type_ == READY and n == READY_BYTES:
                self.start = start + 32
                return slot, counter
        return None

    def buffered(self):
        """Whether a whole message is already read: recv() will not block."""
        have = self.end - self.start
        return have >= 8 and have >= 8 + FRAME.unpack_from(self.buf, self.start)[1]

    def recv(self, on_tick=None):
        """The next message: (type, payload view valid until the next recv). While it waits,
        ``on_tick(waited_seconds)`` is called every TICK seconds (it may raise)."""
        waited_since = None
        while True:
            have = self.end - self.start
            if have >= 8:
                type_, n = FRAME.unpack_from(self.buf, self.start)
                if have >= 8 + n:
                    p = self.view[self.start + 8:self.start + 8 + n]
                    self.start += 8 + n
                    return type_, p
                if 8 + n > len(self.buf):
                    self._grow(8 + n)
            if self.start == self.end:
                self.start = self.end = 0
            elif self.end == len(self.buf):
                self.buf[:have] = self.buf[self.start:self.end]
                self.start, self.end = 0, have
            t0 = time.perf_counter()
            try:
                k = self.sock.recv_into(self.view[self.end:])
            except (BlockingIOError, InterruptedError):  # TICK passed with nothing
                k = None
            except OSError as e:
                raise self._dead() from e
            finally:
                self.wait_seconds += time.perf_counter() - t0
            if k is None:
                if waited_since is None:
                    waited_since = t0
                if on_tick is not None:
                    on_tick(time.perf_counter() - waited_since)
                continue
            if k == 0:
                raise self._dead()
            self.end += k

    def _grow(self, n):
        size = len(self.buf)
        while size < n:
            size *= 2
        data = bytes(self.view[self.start:self.end])
        self.view.release()
        self.buf = bytearray(size)
        self.buf[:len(data)] = data
        self.view = memoryview(self.buf)
        self.end = len(data)
        self.start = 0

    def _dead(self):
        if self.server is not None:
            return self.server.died()
        return LoaderDied("the stoker server closed the connection", None)

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def process_state(pid):
    """What /proc says the process is doing, in words (for a timeout's message)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "gone"
    return {"R": "running", "S": "waiting (sleeping)", "D": "in uninterruptible I/O", "T": "stopped (SIGSTOP)",
            "t": "stopped by a debugger", "Z": "a zombie (exited)"}.get(state, f"in state {state}")

