"""``stoker.Loader``: Stoker's batches in a Python training loop, with no copy.

Batches are collated by the JVM straight into a shared-memory ring that this process maps; each
yielded batch is a dict of tensors (or numpy arrays) that alias the ring. A batch is valid until
the next one is requested (or a new pass starts, or the loader closes): copy what must outlive it.
"""

import collections
import hashlib
import json
import mmap
import os
import struct
import time

from . import _device as _device_mod
from . import _options
from ._server import (BYE, END, ERROR, HELLO, LOAD, MAPPED, OPEN, PASS, PASS_MESSAGE, READY, READY_BODY, STARTED,
                      STATE, STATE_IS, STATS, STATS_ARE, COUNTER_MESSAGE, Connection, Server)
from .errors import DataError, LoaderDied, StokerError

try:
    import torch
except ImportError:  # numpy arrays then
    torch = None
import numpy as np

# the ring's dtype codes: DType's order in the JVM
DTYPES = ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "bfloat16",
          "float32", "float64")
_NUMPY = {"bfloat16": "uint16"}  # numpy has no bfloat16: its bits
_SLOT = struct.Struct("<QqII")
_FIELD = struct.Struct("<qqq")
_END = struct.Struct("<qq")
_RING_HEADER = 4096
_FIELD_BYTES = 128


def _torch_dtype(name):
    return getattr(torch, name)


def _distributed():
    """(rank, world size) from torch.distributed when it is initialized, else from the environment."""
    if torch is not None:
        try:
            import torch.distributed as dist
            if dist.is_available() and dist.is_initialized():
                return dist.get_rank(), dist.get_world_size()
        except ImportError:
            pass
    return int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))


class _Field:
    __slots__ = ("index", "name", "dtype", "shape", "variable")

    def __init__(self, index, spec):
        self.index = index
        self.name = spec["name"]
        self.dtype = spec["dtype"]
        self.shape = tuple(spec["shape"])
        self.variable = spec["variable"]


class Loader:
    """Loads batches with Stoker for a Python training loop.

    ``stoker.Loader("tokens", "train.bin", seq_len=1024, batch=32, shuffle=True, seed=1)`` takes the
    same source and options as ``stoker bench`` (dashes as underscores; PyTorch's ``batch_size``,
    ``num_workers``, ``shuffle`` and ``drop_last`` too). Iterating runs the rest of the current
    epoch, then the next iteration runs the next epoch. Options of the Python side:

    - ``as_numpy``: numpy arrays instead of torch tensors (the default when torch is missing);
    - ``holds``: batches the server may hand over ahead of the loop (default: 8 for batches of up
      to 8 MiB, fewer for larger ones, at least 2): the ring has this many slots more than the
      loader's prefetch window;
    - ``server``: the socket path of a running ``stoker serve`` to use instead of starting one;
    - ``device``: ``"cuda"`` (or ``"cuda:N"``, a ``torch.device``) yields the batches on that GPU:
      the ring is registered with CUDA once and each batch copied on a side stream while the loop
      runs, a few ahead (``stoker._device``); without CUDA it fails at once, saying where it looked.

    Rank and world size default to torch.distributed's when it is initialized, else to the
    ``RANK`` and ``WORLD_SIZE`` environment variables. Each rank's loader tunes its workers within
    all of the node's cores unless ``cores=`` says fewer (BENCHMARKS.md measured both).
    """

    def __init__(self, source, *paths, as_numpy=None, holds=None, server=None, **options):
        if "shuffle" in options:
            shuffle = options.pop("shuffle")
            if not isinstance(shuffle, bool):
                raise ValueError(f"stoker.Loader: option 'shuffle' must be True or False, got {shuffle!r}")
            if "order" in options:
                raise ValueError("stoker.Loader: give 'shuffle' or 'order', not both")
            options["order"] = "shuffle" if shuffle else "sequential"
        self._device = _device_option(options.pop("device", None), as_numpy)
        self._backend = None
        self._ring = None
        rank, world = _distributed()
        options.setdefault("rank", rank)
        options.setdefault("world_size", world)
        if isinstance(options["rank"], int) and isinstance(options["world_size"], int) \
                and options["rank"] >= options["world_size"]:
            raise ValueError(f"stoker.Loader: rank {options['rank']} is not in a world of {options['world_size']}")
        if holds is not None and (isinstance(holds, bool) or not isinstance(holds, int) or not 1 <= holds <= 64):
            raise ValueError(f"stoker.Loader: option 'holds' must be an integer in [1, 64], got {holds!r}")
        self._args = _options.command_line(source, paths, options)
        if as_numpy is None:
            as_numpy = torch is None
        elif as_numpy is False and torch is None:
            raise ValueError("stoker.Loader: as_numpy=False needs torch, which is not importable")
        self._numpy = bool(as_numpy)
        self._holds = holds
        self._server_path = server
        self._server = None
        self._conn = None
        self._mm = None
        self._pending_state = None
        self._epoch_request = -1
        self._consumed = 0
        self._held = -1
        self._frees = []
        self._unfreed = 0
        self._iterating = None
        self._views = {}
        self._ahead = collections.deque()
        self._info = None
        self._closed = False
        self._next_seconds = 0.0
        self._wait_seconds = 0.0
        self._batches = 0

    # ---- the session ------------------------------------------------------------------------

    def _session(self):
        if self._closed:
            raise StokerError("the loader is closed")
        if self._conn is not None:
            return self._conn
        if self._server_path is None:
            self._server = Server()
            path = self._server.socket_path
        else:
            path = self._server_path
        try:
            self._conn = Connection(path, self._server)
            state = None if self._pending_state is None else json.dumps(self._pending_state)
            self._conn.send(OPEN, json.dumps({"args": self._args, "holds": self._holds or 0, "state": state}).encode())
            type_, p = self._conn.recv()
            if type_ == ERROR:
                self._raise(p)
            if type_ != HELLO:
                raise StokerError(f"the stoker server answered {type_} to OPEN")
            self._info = json.loads(bytes(p))
            self._map(self._info)
            if self._device is not None:
                self._backend = _device_mod.TorchCuda(torch, self._device)
                self._ring = torch.frombuffer(self._mm, dtype=torch.uint8)
                self._backend.register(self._ring.data_ptr(), self._ring.numel())
            self._conn.send(MAPPED)
        except BaseException:
            if self._server is not None and self._conn is None:
                self._server.kill()  # never connected: it would wait for a client that does not come
                self._server = None
            self._teardown()
            raise
        self._pending_state = None
        self._consumed = self._info["counter"]
        self._fields = [_Field(i, f) for i, f in enumerate(self._info["fields"])]
        self._capacity = self._info["batch"]
        self._holds_now = self._info["holds"]
        self._free_batch = max(1, self._holds_now // 2)
        return self._conn

    def _map(self, info):
        fd = os.open(info["ring"], os.O_RDWR)
        try:
            self._mm = mmap.mmap(fd, info["ringBytes"], mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        finally:
            os.close(fd)
        self._slot_bytes = info["slotBytes"]

    def _raise(self, payload):
        e = json.loads(bytes(payload))
        kind, message = e.get("kind"), e.get("message", "")
        if kind == "data":
            raise DataError(message, e.get("resource"), e.get("index"))
        if kind in ("usage", "state"):
            raise ValueError("stoker.Loader: " + message)
        raise StokerError(message)

    # ---- iterating ------------------------------------------------------------------------

    def __iter__(self):
        conn = self._session()
        self._drop_held()
        if self._iterating is not None:
            self._iterating.stale = True
        conn._sendall(PASS_MESSAGE.pack(PASS, 16, self._consumed, self._epoch_request))
        self._epoch_request = -1
        self._started(json.loads(bytes(self._reply(STARTED, void_pass=True))))
        it = _Pass(self)
        self._iterating = it
        if self._backend is not None:
            return _device_mod.DevicePass(self, it, self._backend, depth=2)
        return it

    def _drop_held(self):
        """A new pass or state: the server takes every slot back, so nothing is freed one by one."""
        self._held = -1
        self._frees.clear()
        self._unfreed = 0

    def _started(self, info):
        self._info.update(info)
        self._consumed = info["counter"]

    def _release(self):
        """Gives the held batch's slot back: at once when the server may be waiting for it, else in
        groups, so that most batches cost no message of their own (NOTE [Bridge flow])."""
        if self._held >= 0:
            self._frees.append(self._held)
            self._held = -1
            if len(self._frees) >= self._free_batch:
                self._flush()

    def _flush(self):
        if self._frees:
            self._conn.free(self._frees)
            self._unfreed -= len(self._frees)
            self._frees.clear()

    def _next(self, it):
        self._release()
        slot, batch = self._take(it)
        self._held = slot
        return batch

    def _give(self, slot):
        """A slot taken with _take back to the server (in groups, as _release)."""
        self._frees.append(slot)
        if len(self._frees) >= self._free_batch:
            self._flush()

    def _starved(self):
        """Whether the server has every slot out to this loop and nothing is on its way."""
        return (self._unfreed - len(self._frees) >= self._holds_now and not self._ahead
                and not self._conn.buffered())

    def _take(self, it):
        """The next batch and its slot, which stays taken until given back (_give or _release)."""
        t0 = time.perf_counter()
        if it.stale:
            raise StokerError("this iterator is stale: a newer iter() over the loader took over")
        if it.done:
            raise StopIteration
        conn = self._conn
        if conn is None:
            raise StokerError("the loader is closed")
        if self._ahead:
            type_, p = self._ahead.popleft()
        else:
            if self._unfreed >= self._holds_now and not conn.buffered():
                self._flush()  # the server has no slot left: it waits for these
            w0 = conn.wait_seconds
            type_, p = conn.recv()
            self._wait_seconds += conn.wait_seconds - w0
        if type_ == READY:
            slot, _, counter, spill = READY_BODY.unpack_from(p)
            batch = self._batch(slot, p[READY_BODY.size:])
            self._unfreed += 1
            self._consumed = counter
            self._batches += 1
            self._next_seconds += time.perf_counter() - t0
            return slot, batch
        self._flush()
        if type_ == END:
            self._consumed, self._info["batches"] = _END.unpack_from(p)
            it.done = True
            self._info["epoch"] += 1
            raise StopIteration
        if type_ == ERROR:
            it.done = True
            self._raise(p)
        raise StokerError(f"unexpected message {type_} from the stoker server")

    def _batch(self, slot, spill):
        mm = self._mm
        base = _RING_HEADER + slot * self._slot_bytes
        _, _, rows, _ = _SLOT.unpack_from(mm, base)
        out = {}
        spilled = 0
        for f in self._fields:
            data_at, nbytes, offsets_at = _FIELD.unpack_from(mm, base + 64 + _FIELD_BYTES * f.index + 104)
            if f.variable:
                offsets = self._view(slot, f, base + offsets_at, "int64", (rows + 1,), cache=False)
                if data_at < 0:
                    raw = np.frombuffer(bytes(spill[spilled:spilled + nbytes]), dtype=np.uint8)
                    spilled += nbytes
                    data = raw if self._numpy else torch.from_numpy(raw.copy())
                else:
                    data = self._view(slot, f, base + data_at, "uint8", (nbytes,), cache=False)
                out[f.name] = (offsets, data)
                continue
            full = self._view(slot, f, base + data_at, f.dtype, (self._capacity,) + f.shape, cache=True)
            # a view of its own, so that nothing done to it carries over to a later batch of the slot
            out[f.name] = full[:rows] if rows < self._capacity or self._numpy else full.detach()
        return out

    def _view(self, slot, f, at, dtype, shape, cache):
        key = (slot, f.index, at)
        if cache:
            v = self._views.get(key)
            if v is not None:
                return v
        count = 1
        for d in shape:
            count *= d
        if self._numpy:
            v = np.frombuffer(self._mm, dtype=_NUMPY.get(dtype, dtype), count=count, offset=at).reshape(shape)
        elif count == 0:
            v = torch.empty(shape, dtype=_torch_dtype(dtype))
        else:
            v = torch.frombuffer(self._mm, dtype=_torch_dtype(dtype), count=count, offset=at).view(shape)
        if cache:
            self._views[key] = v
        return v

    # ---- the rest of the interface --------------------------------------------------------

    def __len__(self):
        self._session()
        n = self._info["batches"]
        if n < 0:
            raise TypeError("a streaming source does not know its length in batches before it is read")
        return n

    def set_epoch(self, epoch):
        """The epoch the next iteration runs: from its start, unless the loader is already in that
        epoch, where it goes on (so a resumed run may call it as always). The loader moves to the
        next epoch by itself; set_epoch is for loops written for a DataLoader's sampler."""
        if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 0:
            raise ValueError(f"stoker.Loader: set_epoch takes an integer >= 0, got {epoch!r}")
        self._epoch_request = epoch

    @property
    def epoch(self):
        """The epoch the next (or current) iteration runs."""
        self._session()
        return self._info["epoch"] if self._epoch_request < 0 else self._epoch_request

    def state_dict(self):
        """Where the loop stands: after the last batch it was given. A small dict (torch.save-able)."""
        if self._conn is None and self._pending_state is not None:
            return {"version": 1, "loader": self._pending_state}
        conn = self._session()
        conn._sendall(COUNTER_MESSAGE.pack(STATE, 8, self._consumed))
        p = self._reply(STATE_IS)
        return {"version": 1, "loader": json.loads(bytes(p))}

    def load_state_dict(self, state):
        """Continues from a state_dict(); rank and world size may differ (elastic resume)."""
        if not isinstance(state, dict) or state.get("version") != 1 or not isinstance(state.get("loader"), dict):
            raise ValueError("stoker.Loader: load_state_dict takes what state_dict() returned")
        if self._conn is None:
            self._pending_state = state["loader"]
            return
        self._drop_held()
        if self._iterating is not None:
            self._iterating.stale = True
            self._iterating = None
        self._conn.send(LOAD, struct.pack("<q", self._consumed) + json.dumps(state["loader"]).encode())
        self._started(json.loads(bytes(self._reply(STARTED, void_pass=True))))

    def _reply(self, expected, void_pass=False):
        """The server's answer to a request. Notices of the running pass that come first are kept
        for the loop, or, when the request ends the pass (a new pass, a loaded state), dropped: the
        server has taken their slots back."""
        if void_pass:
            self._ahead.clear()
        while True:
            type_, p = self._conn.recv()
            if type_ == expected:
                return p
            if type_ == ERROR:
                e = json.loads(bytes(p))
                if e.get("fatal") or e.get("kind") in ("state", "usage"):
                    self._raise(p)  # the answer to this request, or the session's end
            if not void_pass and type_ in (READY, END, ERROR):
                self._ahead.append((type_, memoryview(bytes(p))))

    def stats(self):
        """The JVM loader's stats, plus this process's: seconds waited for batches and spent handing them over."""
        conn = self._session()
        conn.send(STATS)
        s = json.loads(bytes(self._reply(STATS_ARE)))
        s["pythonWaitSeconds"] = self._wait_seconds
        s["pythonBatches"] = self._batches
        s["pythonNextSeconds"] = self._next_seconds
        s["pythonIpcSecondsPerBatch"] = max(0.0, self._next_seconds - self._wait_seconds) / max(1, self._batches)
        return s

    def close(self):
        """Stops the server's loader and frees the ring (idempotent)."""
        if self._closed:
            return
        self._closed = True
        if self._conn is not None:
            try:
                self._conn.send(BYE)
            except StokerError:
                pass
        self._teardown()

    def _teardown(self):
        if self._iterating is not None:
            self._iterating.stale = True
        self._views.clear()
        if self._backend is not None:
            try:
                self._backend.side.synchronize()  # no copy may still read the ring
                self._backend.unregister()
            finally:
                self._backend = None
                self._ring = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._mm is not None:
            try:
                self._mm.close()
            except BufferError:
                pass  # batches still referenced: unmapped when they go
            self._mm = None
        if self._info is not None and os.path.exists(self._info.get("ring", "")):
            try:
                os.unlink(self._info["ring"])  # the server died before it could
            except OSError:
                pass
        if self._server is not None:
            self._server.close()
            self._server = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def _device_option(device, as_numpy):
    """None for the host (no device, or the CPU); else the CUDA device, checked now."""
    if device is None:
        return None
    kind = device.type if torch is not None and isinstance(device, torch.device) else device
    if isinstance(kind, str) and kind.split(":")[0] == "cpu":
        return None
    if not isinstance(kind, str) or kind.split(":")[0] != "cuda":
        raise ValueError(f"stoker.Loader: option 'device' must be 'cuda', 'cuda:N', 'cpu' or a torch.device, got {device!r}")
    if as_numpy:
        raise ValueError("stoker.Loader: device= yields torch tensors; it does not go with as_numpy=True")
    reason = _device_mod.cuda_missing_reason(torch, device)
    if reason is not None:
        raise StokerError("stoker.Loader(device=" + repr(str(device)) + "): " + reason)
    return device


class _Pass:
    """One iteration over the loader: the rest of the current epoch."""

    __slots__ = ("loader", "done", "stale")

    def __init__(self, loader):
        self.loader = loader
        self.done = False
        self.stale = False

    def __iter__(self):
        return self

    def __next__(self):
        return self.loader._next(self)

    def __len__(self):
        return len(self.loader)


def batch_digest(batch):
    """The lowercase hex SHA-256 of a batch, as ``stoker bench --digests`` prints it: fields in name
    order; a tensor's bytes; a variable-length field's int64 offsets, then its bytes."""
    md = hashlib.sha256()
    for name in sorted(batch):
        value = batch[name]
        parts = value if isinstance(value, tuple) else (value,)
        for part in parts:
            md.update(_bytes(part))
    return md.hexdigest()


def _bytes(a):
    if torch is not None and isinstance(a, torch.Tensor):
        a = a.detach().cpu().contiguous()
        if a.dtype == torch.bfloat16:
            a = a.view(torch.int16)
        if a.dtype == torch.bool:
            a = a.to(torch.uint8)
        return memoryview(a.numpy()).cast("B")
    return memoryview(np.ascontiguousarray(a)).cast("B")
