"""One loader's session with a stoker server: the connection, the ring, the flow of notices and
slots (NOTE [Bridge flow] in ``Session.java``), and where the loop stands in its epochs.

A notice (READY or END) carries a counter. Two of them say where the loop stands (``Position``):
the last notice handed to the user (``consumed``: a state and a new pass start there), and the last
one the loop took from the socket (``intake``, which the ring tells the server).
"""

import collections
import json
import os
import sys
import time
from typing import Any, Deque, Dict, Optional, Tuple

from . import _process
from . import _protocol as P
from ._ring import Ring
from .errors import DataError, LoaderTimeout, StokerError


class Position:
    """Where the loop stands: two counters of notices, and what the next loop runs."""

    __slots__ = ("consumed", "intake", "epoch_request", "state_loaded")

    def __init__(self) -> None:
        self.consumed = 0          # the counter of the last notice handed to the user
        self.intake = 0            # the counter of the last notice the loop took from the socket
        self.epoch_request = -1    # set_epoch(n): the next loop runs epoch n from its start
        self.state_loaded = False  # load_state_dict: the next loop continues the state

    def at(self, counter: int) -> None:
        self.consumed = self.intake = counter


class Session:
    """A loader's session: opened on first use, then a pass at a time (``start``, ``take``)."""

    def __init__(self, spec: Dict[str, Any], server: str, torch: Any, ahead: Optional[int] = None,
                 ring_bytes: Optional[int] = None, timeout: float = 0.0) -> None:
        self.spec = spec
        self.server_path = server
        self.torch = torch  # None: numpy arrays
        self.ahead_option = ahead
        self.ring_bytes = ring_bytes
        self.timeout = timeout
        self.server: Optional[Any] = None
        self.conn: Optional[P.Connection] = None
        self.ring: Optional[Ring] = None
        self.info: Optional[Dict[str, Any]] = None
        self.pending_state: Optional[Any] = None
        self.position = Position()
        self.woken = 0  # the server's last wait (RING_WAITS_AT) this process sent LOOK for
        self.kept: Deque[Tuple[int, memoryview]] = collections.deque()  # notices read while awaiting an answer
        self.pid = os.getpid()  # a forked child (a DataLoader worker) must not speak on this socket
        self.warned_full = False
        self.next_seconds = 0.0
        self.wait_seconds = 0.0
        self.batches = 0

    # ---- opening and closing ----------------------------------------------------------------

    def open(self) -> None:
        """Starts or attaches to the server, opens the session and maps the ring (idempotent)."""
        self.check_process()
        if self.conn is not None:
            return
        if self.server_path in ("process", "node", "own"):
            self.server = _process.Server() if self.server_path == "own" else _process.shared(self.server_path)
            path = self.server.socket_path
        else:
            path = self.server_path
        try:
            self.conn = P.Connection(path, self.server)
            state = None if self.pending_state is None else json.dumps(self.pending_state)
            self.conn.send(P.OPEN, json.dumps(dict(self.spec, ahead=self.ahead_option or 0,
                                                   ringBytes=self.ring_bytes or 0, state=state)).encode())
            type_, p = self.conn.recv()
            if type_ == P.ERROR:
                self.raise_error(p)
            if type_ != P.HELLO:
                raise StokerError(f"the stoker server answered {type_} to OPEN")
            self.info = json.loads(bytes(p))
            if self.info.get("version") != P.VERSION:
                raise StokerError(f"the stoker server speaks version {self.info.get('version')} of the bridge, "
                                  f"this package {P.VERSION}: install the package and the server of one release")
            self.ring = Ring(self.info, self.torch)
            self.conn.send(P.MAPPED)
        except BaseException:
            if self.server is not None and self.conn is None and self.server_path == "own":
                self.server.kill()  # never connected: it would wait for a client that does not come
                self.server = None
            self.close()
            raise
        if self.pending_state is not None:
            self.position.state_loaded = True
        self.pending_state = None
        self.position.at(self.info["counter"])

    def check_process(self) -> None:
        if os.getpid() != self.pid:
            raise StokerError("this loader belongs to process " + str(self.pid) + "; a forked child cannot use it "
                              "(batches it was handed stay readable)")

    def bye(self) -> None:
        if self.conn is not None:
            try:
                self.conn.send(P.BYE)
            except StokerError:
                pass

    def close(self) -> None:
        """The connection, the ring's mapping (once nothing views it) and this session's hold on the server."""
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        if self.ring is not None:
            self.ring.close()
        if self.info is not None and os.path.exists(self.info.get("ring", "")):
            try:
                os.unlink(self.info["ring"])  # the server died before it could
            except OSError:
                pass
        if self.server is not None:
            server, self.server = self.server, None
            if self.server_path in ("process", "node"):
                _process.release(server)  # the server ends with the last of this process's loaders
            else:
                server.close()

    def raise_error(self, payload: memoryview) -> None:
        e = json.loads(bytes(payload))
        kind, message = e.get("kind"), e.get("message", "")
        if kind == "data":
            raise DataError(message, e.get("resource"), e.get("index"))
        if kind in ("usage", "state"):
            raise ValueError("stoker.Loader: " + message)
        raise StokerError(message)

    # ---- flow control (NOTE [Bridge flow]) ---------------------------------------------------

    def report(self) -> None:
        """Gives dead batches' slots back and says how far the loop has taken notices, in the ring:
        no message, so it is done at every batch. LOOK is sent only when that ends what the server
        waits for (NOTE [Bridge flow])."""
        ring = self.ring
        if ring.closed:
            return  # the session is over: the server took every slot back
        gave = ring.give_back_dead() if ring.dead else 0
        intake = self.position.intake
        words = ring.words
        words[0] = intake
        waits = words[1]
        if waits and waits != self.woken:
            n = waits & P.WAITS_FOR_SLOT
            if (gave > 0) if n == P.WAITS_FOR_SLOT else intake >= n:
                self.woken = waits
                self.conn.look()

    def _recv(self, what: Any) -> Tuple[int, memoryview]:
        """The next message from the server; before waiting for it, and while waiting, the report
        the server may be waiting for."""
        conn = self.conn
        if conn.buffered():
            return conn.recv()
        self.report()
        started = time.monotonic()

        def tick(waited: float) -> None:
            self.report()
            if self.timeout and waited >= self.timeout:
                raise LoaderTimeout(self._timeout_message(what() if callable(what) else what,
                                                          time.monotonic() - started))
            if waited >= 1.0 and not self.warned_full and self.ring.live >= self.info.get("holds", 1 << 30):
                self.warned_full = True
                self._say_full()

        return conn.recv(on_tick=tick)

    def _say_full(self) -> None:
        ring = self.ring
        held, bound = ring.live * ring.slot_bytes, ring.slots * ring.slot_bytes
        raised = (f" (ring_bytes={self.ring_bytes:,} is less than the {ring.slots} batches the loader needs to run, "
                  f"so the ring has those)") if self.ring_bytes and self.ring_bytes < bound else ""
        print(f"stoker.Loader: waiting for batch memory: this process holds {ring.live} batches ({_size(held)}), as "
              f"many as the ring's bound of {_size(bound)} (the loader's working batches included) leaves it{raised}; "
              "a batch's memory goes back when its last tensor is gone, or at batch.release() (ring_bytes= raises the "
              "bound)", file=sys.stderr, flush=True)

    def _timeout_message(self, what: str, waited: float) -> str:
        pid = self.info.get("pid")
        state = P.process_state(pid) if pid else "unknown"
        held = ""
        if self.ring.live >= self.info.get("holds", 1 << 30):
            held = f"; this process holds {self.ring.live} batches, all the ring allows: drop some or release() them"
        return (f"stoker.Loader: nothing from the stoker server within {waited:.1f} s (timeout={self.timeout:g}) "
                f"while waiting for {what}; the server (pid {pid}) is {state}{held}")

    def reply(self, expected: int, void_pass: bool = False) -> memoryview:
        """The server's answer to a request. Notices of the running pass that come first are kept
        for the loop, or, when the request ends the pass (a new pass, a loaded state), dropped: the
        server has taken their slots back."""
        if void_pass:
            self.kept.clear()
        while True:
            type_, p = self._recv("the server's answer")
            if type_ == expected:
                return p
            if type_ == P.ERROR:
                e = json.loads(bytes(p))
                if e.get("fatal") or e.get("kind") in ("state", "usage"):
                    self.raise_error(p)  # the answer to this request, or the session's end
            if not void_pass and type_ in (P.READY, P.END, P.ERROR):
                self.kept.append((type_, memoryview(bytes(p))))

    # ---- passes -----------------------------------------------------------------------------

    def start(self) -> None:
        """Starts a pass: the loaded state's rest, the epoch asked for, or the next one (NOTE in ``Loader``)."""
        position = self.position
        if position.state_loaded:
            loaded_epoch = self.info["epoch"]
            request = position.epoch_request if position.epoch_request not in (-1, loaded_epoch) else -1
        elif position.epoch_request >= 0:
            request = position.epoch_request
        elif self.info.get("midEpoch"):
            request = self.info["epoch"] + 1  # a loop left early: the next loop is the next epoch, as a DataLoader's
        else:
            request = -1
        position.state_loaded = False
        position.epoch_request = -1
        self.report()
        self.conn.sendall(P.PASS_MESSAGE.pack(P.PASS, P.PASS_BYTES, position.consumed, request))
        self._started(json.loads(bytes(self.reply(P.STARTED, void_pass=True))))
        self.info["midEpoch"] = True

    def _started(self, info: Dict[str, Any]) -> None:
        self.info.update(info)
        self.position.at(info["counter"])

    def first_batch(self) -> int:
        """The place in the rank's epoch of the pass's first batch."""
        info = self.info
        return max(0, info["epochBatches"] - info["batches"]) if info["epochBatches"] >= 0 else 0

    def take(self, it: Any, names: Optional[Tuple[str, ...]] = None) -> Tuple[int, Any]:
        """The pass ``it``'s next batch: (counter, batch), or StopIteration at its end."""
        t0 = time.perf_counter()
        if it.stale:
            raise StokerError("this iterator is stale: a newer iter() over the loader took over")
        if it.done:
            raise StopIteration
        conn = self.conn
        if conn is None:
            raise StokerError("the loader is closed")
        ready = None if self.kept else conn.take_ready()  # most batches: read already, nothing spilled
        if ready is not None:
            type_ = P.READY
        elif self.kept:
            type_, p = self.kept.popleft()
        else:
            w0 = conn.wait_seconds
            type_, p = self._recv(lambda: f"batch {it.taken} of epoch {self.info['epoch']}")
            self.wait_seconds += conn.wait_seconds - w0
        if type_ == P.READY:
            if ready is not None:
                slot, counter = ready
                batch = self.ring.batch(slot, counter, None, names)
            else:
                slot, _, counter, _ = P.READY_BODY.unpack_from(p)
                batch = self.ring.batch(slot, counter, p[P.READY_BYTES:], names)
            self.position.intake = counter
            self.report()
            self.batches += 1
            it.taken += 1
            self.next_seconds += time.perf_counter() - t0
            return counter, batch
        if type_ == P.END:
            counter, self.info["batches"] = P.END_BODY.unpack_from(p)
            self.position.intake = counter
            it.done = True
            it.end_counter = counter
            raise StopIteration
        if type_ == P.ERROR:
            it.done = True
            self.raise_error(p)
        raise StokerError(f"unexpected message {type_} from the stoker server")

    def handed(self, counter: int) -> None:
        """The user now has the batch of notice ``counter``."""
        self.position.consumed = counter

    def ended(self, counter: int) -> None:
        """The user has had the pass's last batch: its epoch is over."""
        self.position.consumed = counter
        self.info["epoch"] += 1
        self.info["midEpoch"] = False

    def stop(self) -> None:
        """The running pass is over: notices taken but not handed go back with the next request."""
        self.position.intake = self.position.consumed

    def holds_all(self) -> bool:
        """Whether this process holds every batch the server may hand out, and none is on its way."""
        return self.ring.live >= self.info.get("holds", 1 << 30) and not self.kept and not self.conn.buffered()

    # ---- state, length, stats ---------------------------------------------------------------

    def length(self) -> int:
        """The batches of the next loop; TypeError for a stream, which does not know them."""
        position = self.position
        if position.state_loaded:  # the loaded state is continued, unless another epoch was asked for
            fresh = position.epoch_request not in (-1, self.info["epoch"])
        else:
            fresh = position.epoch_request >= 0 or self.info.get("midEpoch")
        n = self.info["epochBatches"] if fresh else self.info["batches"]
        if n < 0:
            raise TypeError("a streaming source does not know its length in batches before it is read")
        return n

    def state(self) -> Any:
        self.conn.sendall(P.COUNTER_MESSAGE.pack(P.STATE, 8, self.position.consumed))
        return json.loads(bytes(self.reply(P.STATE_IS)))

    def load(self, loader_state: Any) -> None:
        """Continues from a state (the server checks that it fits)."""
        self.stop()
        self.report()
        self.conn.send(P.LOAD, self.position.consumed.to_bytes(8, "little", signed=True)
                       + json.dumps(loader_state).encode())
        self._started(json.loads(bytes(self.reply(P.STARTED, void_pass=True))))
        self.position.state_loaded = True
        self.info["midEpoch"] = True

    def stats(self) -> Dict[str, Any]:
        """The JVM loader's stats, plus this process's: seconds waited for batches and spent handing them over."""
        self.conn.send(P.STATS)
        s = json.loads(bytes(self.reply(P.STATS_ARE)))
        s["pythonWaitSeconds"] = self.wait_seconds
        s["pythonBatches"] = self.batches
        s["pythonNextSeconds"] = self.next_seconds
        s["pythonIpcSecondsPerBatch"] = max(0.0, self.next_seconds - self.wait_seconds) / max(1, self.batches)
        s["pythonHeldBatches"] = self.ring.live if self.ring is not None else 0
        return s


def _size(n: float) -> str:
    """Bytes in words: ``"96 B"``, ``"1.3 KiB"``, ``"512 MiB"`` (a small ring's bound is no "0 MiB")."""
    for unit in ("B", "KiB", "MiB"):
        if n < 1 << 10:
            return f"{n:.0f} {unit}" if unit == "B" or n >= 10 else f"{n:.1f} {unit}"
        n /= 1 << 10
    return f"{n:.1f} GiB" if n < 10 else f"{n:.0f} GiB"

