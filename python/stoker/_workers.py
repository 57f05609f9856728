"""The Python worker processes of a loader: per-sample functions (a transform's tail, ``sample_map``)
and functions of whole batches (``map``, ``collate_fn``), NOTE [Python workers].

NOTE [Python workers]: a loader's Python functions run in a pool of worker processes
(``python_workers=N``), forked once per loader after its ring is mapped, so that they read their
inputs from the ring with no copy. Each writes its outputs into an output slot in shared memory (a
file in the ring's folder, reused once the user has dropped the batch that viewed it: owned as a
ring batch is, NOTE [Batches the user owns] in ``_ring``). Per-sample functions split each batch
among all the workers (``Pool.submit``: the first sample, run here, gives the outputs' fields,
shapes and dtypes); a function of whole batches runs a batch a worker, as many batches ahead as
there are workers (``Pool.submit_batch``: the batch crosses as views of the ring, the result comes
back as its structure, its tensors and arrays in an output slot grown to fit, ``_batchfn``).
Per-sample functions run in the workers by default; whole-batch ones only when
``python_workers`` is given, for they may use the GPU or this process's state. Every run seeds
torch's, numpy's and ``random``'s generators from the loader's seed, the epoch and the sample's
key (or the batch's place in the rank's epoch), so the batches are the same for any number of
workers, after a resume and at any world size. ``python_workers=0`` runs per-sample functions in
this process. An exception names the sample or the batch and is raised in the loop; a worker that
dies fails the loader with its exit status.
"""

import collections
import hashlib
import mmap
import os
import random
import signal
import traceback

import numpy as np

from ._pytransform import _words, run_tail
from ._batchfn import describe, pack, rebuild, samples, unpack
from ._ring import Batch, BatchTuple
from .errors import LoaderDied, StokerError

OUT_PREFIX = "stoker-pyout-"


def sample_seed(seed, epoch, key):
    """The seed of one sample's tail: of the loader's seed, the epoch and the sample's key (64 bits)."""
    h = hashlib.blake2b(f"{seed}\0{epoch}\0{key}".encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(h, "little") & ((1 << 63) - 1)


def _seed_all(torch, seed):
    torch.manual_seed(seed)
    np.random.seed(seed & 0xFFFFFFFF)
    random.seed(seed)


class Step:
    """What Python runs on each sample: the transform's tail (on ``image``), then ``sample_map``."""

    def __init__(self, plan_, sample_map):
        self.plan = plan_ if plan_ is not None and plan_.tail else None
        self.sample_map = sample_map

    def __bool__(self):
        return self.plan is not None or self.sample_map is not None

    def describe(self):
        parts = [] if self.plan is None else list(map(_words, self.plan.tail))
        if self.sample_map is not None:
            parts.append("sample_map=" + getattr(self.sample_map, "__qualname__", repr(self.sample_map)))
        return parts

    def run(self, torch, inputs, seed):
        """One sample: its fields (numpy arrays over the ring) in, a dict of tensors out."""
        _seed_all(torch, seed)
        sample = {}
        for name, a in inputs.items():
            if self.plan is not None and name == "image":
                sample[name] = run_tail(torch, self.plan.tail, self.plan.tail_input, a)
            else:
                sample[name] = torch.from_numpy(np.array(a))  # the function may change it: not the ring's
        if self.sample_map is None:
            return sample
        out = self.sample_map(sample)
        if not isinstance(out, dict):
            raise TypeError(f"sample_map gave a {type(out).__name__}, not a dict of field name -> tensor")
        result = {}
        for name, v in out.items():
            if not isinstance(name, str):
                raise TypeError(f"sample_map gave a field named {name!r}, not a string")
            if isinstance(v, np.ndarray):
                v = torch.from_numpy(v)
            elif not isinstance(v, torch.Tensor):
                try:
                    v = torch.as_tensor(v)
                except Exception:
                    raise TypeError(f"sample_map gave field {name!r} as a {type(v).__name__}, not a tensor, array or "
                                    "number") from None
            result[name] = v
        return result


class _KeptGenerators:
    """The generators of this process (torch's, numpy's, ``random``'s) as they were, around a tail run here:
    the user's own random draws do not depend on the loader."""

    def __init__(self, torch):
        self.torch = torch

    def __enter__(self):
        self.states = (self.torch.get_rng_state(), np.random.get_state(), random.getstate())

    def __exit__(self, *exc):
        t, n, r = self.states
        self.torch.set_rng_state(t)
        np.random.set_state(n)
        random.setstate(r)


class OutSlots:
    """Output batches in shared memory: one file each in the ring's folder, mapped here and by the
    workers, reused when the user has dropped the batch that viewed it."""

    def __init__(self, folder, batch_bytes):
        self.folder = folder
        self.batch_bytes = max(1, batch_bytes)
        self.prefix = f"{OUT_PREFIX}{os.getpid()}-{os.urandom(4).hex()}-"
        self.maps = []      # slot -> mmap
        self.free = collections.deque()
        self.closed = False

    def path(self, n):
        return os.path.join(self.folder, f"{self.prefix}{n}")

    def take(self):
        """A free slot (a new one when none is): its number."""
        if self.free:
            return self.free.popleft()
        n = len(self.maps)
        path = self.path(n)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.ftruncate(fd, self.batch_bytes)
            self.maps.append(mmap.mmap(fd, self.batch_bytes, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE))
        finally:
            os.close(fd)
        return n

    def give_back(self, n):
        if not self.closed:
            self.free.append(n)

    def owned(self, n, nbytes):
        """Slot ``n`` (mapped over at least ``nbytes``) as a uint8 array that gives the slot back
        when the last view of it is gone (NOTE [Batches the user owns] in ``_ring``)."""
        raw = np.frombuffer(self.mapped(n, nbytes), np.uint8).view(_OutArray)
        raw.stoker_owner = _OutOwner(self, n)
        return raw

    def mapped(self, n, nbytes):
        """Slot ``n``'s mapping, of at least ``nbytes`` (a worker grows a file a result outgrew)."""
        m = self.maps[n]
        if len(m) < nbytes:
            fd = os.open(self.path(n), os.O_RDWR)
            try:
                grown = mmap.mmap(fd, nbytes, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
            finally:
                os.close(fd)
            try:
                m.close()  # the slot was free: nothing of the user's views it
            except BufferError:
                pass
            self.maps[n] = m = grown
        return m

    def close(self):
        """The files' names go; a mapping goes when nothing views it."""
        self.closed = True
        for n, m in enumerate(self.maps):
            try:
                os.unlink(self.path(n))
            except OSError:
                pass
            try:
                m.close()
            except BufferError:
                pass  # a batch the user holds views it


def sweep(folder):
    """Removes output files of processes that no longer run (a process killed before it closed its loader)."""
    try:
        names = [n for n in os.listdir(folder) if n.startswith(OUT_PREFIX)]
    except OSError:
        return
    for n in names:
        try:
            pid = int(n[len(OUT_PREFIX):].split("-", 1)[0])
        except ValueError:
            continue
        if not os.path.exists(f"/proc/{pid}"):
            try:
                os.unlink(os.path.join(folder, n))
            except OSError:
                pass


def _worker(ring, step, batch_step, tasks, results, torch):
    """A worker's loop: tasks in, (id, None or the failure, what the loop needs back) out. A task is
    (id, out path, out bytes, layout, inputs, rows) for samples, or ("batch", id, out path, the
    batch's description, seed) for a function of a whole batch."""
    try:
        import ctypes
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: gone with the loader's process
    except (OSError, AttributeError):
        pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # ^C is the loop's to handle
    torch.set_num_threads(1)
    parent = os.getppid()
    maps = {}
    while True:
        try:
            task = tasks.get(timeout=1.0)
        except Exception:  # queue.Empty
            if os.getppid() != parent:
                return
            continue
        if task is None:
            return
        if task[0] == "batch":
            _, tid, out_path, described, seed = task
            results.put((tid,) + _run_batch(torch, ring.mm, maps, out_path, batch_step, described, seed))
            continue
        tid, out_path, out_bytes, layout, inputs, rows = task
        try:
            failure = _run_rows(torch, ring.mm, _mapped(maps, out_path, out_bytes), step, layout, inputs, rows)
        except BaseException as e:  # noqa: BLE001: told to the loop
            failure = (None, f"{type(e).__name__}: {e}")
        results.put((tid, failure, None))


def _mapped(maps, path, nbytes, grow=False):
    """This worker's mapping of an output file, of at least ``nbytes`` (``grow``: the file grown to them)."""
    m = maps.get(path)
    if m is not None and len(m) >= nbytes:
        return m
    fd = os.open(path, os.O_RDWR)
    try:
        size = os.fstat(fd).st_size
        if grow and size < nbytes:
            os.ftruncate(fd, nbytes)
            size = nbytes
        if m is not None:
            try:
                m.close()
            except BufferError:
                pass
        m = maps[path] = mmap.mmap(fd, max(size, nbytes), mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    finally:
        os.close(fd)
    return m


def _inputs(ring_mm, inputs, row):
    return {name: np.frombuffer(ring_mm, np.dtype(dtype), count=int(np.prod(shape, dtype=np.int64)),
                                offset=base + row * per).reshape(shape)
            for name, base, per, shape, dtype in inputs}


def _run_rows(torch, ring_mm, out, step, layout, inputs, rows):
    """Runs each row's step, writing its outputs into the output batch; (key, error) of the first that fails."""
    for row, key, seed in rows:
        try:
            got = step.run(torch, _inputs(ring_mm, inputs, row), seed)
            if sorted(got) != sorted(f[0] for f in layout):
                raise ValueError(f"fields {sorted(got)}, where the batch's first sample gave "
                                 f"{sorted(f[0] for f in layout)}: every sample must give the same fields")
            for name, shape, dtype, offset, per in layout:
                y = got[name]
                if tuple(y.shape) != shape or str(y.dtype) != "torch." + dtype:
                    raise ValueError(f"field {name!r} is {tuple(y.shape)} {y.dtype}, where the batch's first sample "
                                     f"gave {shape} torch.{dtype}: every sample must give one shape and dtype")
                count = per // y.element_size()
                if count:
                    dst = torch.frombuffer(out, dtype=y.dtype, count=count, offset=offset + row * per)
                    dst.copy_(y.reshape(-1))
        except BaseException as e:  # noqa: BLE001
            return key, "".join(traceback.format_exception_only(type(e), e)).strip()
    return None


def _np_dtype(name, t):
    text = str(t.dtype).replace("torch.", "")
    try:
        return np.dtype(text).str
    except TypeError:
        raise StokerError(f"field {name!r} is {text}, which Python's per-sample functions do not take") from None


def _run_batch(torch, ring_mm, maps, out_path, batch_step, described, seed):
    """A batch function's run in a worker: (None, (tree, bytes)) with its result in the output file, or ((what, error), None)."""
    what = batch_step.what
    try:
        _seed_all(torch, seed)
        batch = rebuild(described, ring_mm, torch)
        if batch_step.collate is not None:
            what = "collate_fn"
            batch = batch_step.collate(samples(batch))
        if batch_step.fn is not None:
            what = "map"
            batch = batch_step.fn(batch)
        what = batch_step.what
        tree, leaves, nbytes = pack(batch, torch)
        out = _mapped(maps, out_path, nbytes, grow=True)
        for start, v in leaves:
            if isinstance(v, np.ndarray):
                np.frombuffer(out, np.uint8, count=v.nbytes, offset=start)[:] = v.reshape(-1).view(np.uint8)
            elif v.numel():
                torch.frombuffer(out, dtype=v.dtype, count=v.numel(), offset=start).copy_(v.reshape(-1))
        return None, (tree, nbytes)
    except BaseException as e:  # noqa: BLE001: told to the loop
        return (what, "".join(traceback.format_exception_only(type(e), e)).strip()), None


class Pool:
    """The loader's Python workers (NOTE [Which part runs where])."""

    def __init__(self, torch, ring, step, workers, folder, batch_step=None):
        import multiprocessing
        self.torch = torch
        self.step = step
        self.batch_step = batch_step
        self.batch_out = None
        self.ring = ring
        self.workers = workers
        self.folder = folder
        self.out = None
        self.layout = None
        self.next_id = 0
        self.done = {}
        self.procs = []
        if workers:
            sweep(folder)
            ctx = multiprocessing.get_context("fork")  # the ring's mapping is inherited: no copy, no name
            self.tasks = ctx.Queue()
            self.results = ctx.Queue()
            for _ in range(workers):
                p = ctx.Process(target=_worker, args=(ring, step, batch_step, self.tasks, self.results, torch),
                                daemon=True, name="stoker-python-worker")
                p.start()
                self.procs.append(p)

    def submit(self, batch, keys, seeds, epoch, number):
        """Starts the step on each sample of ``batch`` (the fields of one shape a sample); a ticket for ``collect``."""
        torch = self.torch
        address = self.ring.address()
        inputs = []
        n = None
        for name, v in batch.items():
            if isinstance(v, torch.Tensor):
                n = v.shape[0]
                per = (v[0].numel() * v.element_size()) if n else 0
                inputs.append((name, v.data_ptr() - address, per, tuple(v.shape[1:]), _np_dtype(name, v)))
        n = n or 0
        rows = [(r, keys[r], seeds[r]) for r in range(n)]
        if self.layout is None and n:  # the first sample gives the outputs' fields, shapes and dtypes
            try:
                with _KeptGenerators(torch):
                    first = self.step.run(torch, _inputs(self.ring.mm, inputs, 0), seeds[0])
            except Exception as e:
                raise StokerError(_failed(keys[0], number, epoch, "".join(
                    traceback.format_exception_only(type(e), e)).strip())) from e
            layout, at = [], 0
            for name, y in first.items():
                per = y.numel() * y.element_size()
                layout.append((name, tuple(y.shape), str(y.dtype).replace("torch.", ""), at, per))
                at += -(-n * per // 64) * 64
            self.layout = layout
            self.per_batch = n
            self.out = OutSlots(self.folder, at)
        if n > getattr(self, "per_batch", 0):
            raise StokerError(f"a batch of {n} samples after batches of {self.per_batch}")
        slot = self.out.take() if n else None
        ticket = {"batch": batch, "slot": slot, "n": n, "number": number, "epoch": epoch, "failure": None,
                  "pending": set()}
        if n == 0:
            return ticket
        if not self.workers:
            with _KeptGenerators(torch):
                ticket["failure"] = _run_rows(torch, self.ring.mm, self.out.maps[slot], self.step, self.layout, inputs,
                                              rows)
            return ticket
        chunk = max(1, -(-n // (2 * self.workers)))
        for i in range(0, n, chunk):
            tid = self.next_id
            self.next_id += 1
            ticket["pending"].add(tid)
            self.tasks.put((tid, self.out.path(slot), self.out.batch_bytes, self.layout, inputs, rows[i:i + chunk]))
        return ticket

    def submit_batch(self, batch, seed, epoch, number):
        """Starts the batch function (``collate_fn``, ``map``) on ``batch`` in a worker; a ticket for ``collect_batch``."""
        if self.batch_out is None:  # a result is about a batch's size: a ring slot's to start with, grown as needed
            self.batch_out = OutSlots(self.folder, self.ring.slot_bytes)
        slot = self.batch_out.take()
        tid = self.next_id
        self.next_id += 1
        ticket = {"batch": batch, "slot": slot, "out": self.batch_out, "number": number, "epoch": epoch,
                  "failure": None, "pending": {tid}, "back": None}
        self.tasks.put(("batch", tid, self.batch_out.path(slot), describe(batch, self.ring, self.torch), seed))
        return ticket

    def collect_batch(self, ticket):
        """Waits for the batch function's result: its structure, with tensors and arrays owning their output slot."""
        self._wait(ticket)
        out, slot = ticket["out"], ticket["slot"]
        if ticket["failure"] is not None:
            out.give_back(slot)
            what, text = ticket["failure"]
            raise StokerError(f"stoker.Loader: {what} raised on batch {ticket['number']} of epoch {ticket['epoch']} "
                              f"(in a Python worker): {text}")
        tree, nbytes = ticket["back"]
        raw = out.owned(slot, nbytes)
        owner = raw.stoker_owner
        result = unpack(tree, raw, self.torch)
        if type(result) is dict:  # a batch of the user's, released as a ring batch is
            result = Batch(result)
            result._owner = owner
        elif type(result) is tuple:
            result = BatchTuple(result)
            result._owner = owner
        return result

    def _wait(self, ticket):
        """Until every task of the ticket is back (a worker that died raises LoaderDied)."""
        import queue
        while ticket["pending"]:
            for t in [t for t in ticket["pending"] if t in self.done]:
                failure, back = self.done.pop(t)
                ticket["pending"].discard(t)
                if back is not None:
                    ticket["back"] = back
                if failure is not None and ticket["failure"] is None:
                    ticket["failure"] = failure
            if not ticket["pending"]:
                break
            try:
                tid, failure, back = self.results.get(timeout=0.1)
                self.done[tid] = (failure, back)
            except queue.Empty:
                self._check_workers()

    def collect(self, ticket):
        """Waits for the ticket's samples; the output fields (tensors owning their output slot)."""
        self._wait(ticket)
        if ticket["failure"] is not None:
            if ticket["slot"] is not None:
                self.out.give_back(ticket["slot"])
            key, text = ticket["failure"]
            raise StokerError(_failed(key, ticket["number"], ticket["epoch"], text))
        return self._fields(ticket)

    def _fields(self, ticket):
        torch = self.torch
        n = ticket["n"]
        if n == 0:
            return {name: torch.empty((0,) + shape, dtype=getattr(torch, dtype))
                    for name, shape, dtype, _, _ in self.layout or ()}
        raw = self.out.owned(ticket["slot"], 0)
        out = {}
        for name, shape, dtype, offset, per in self.layout:
            plain = raw[offset:offset + n * per].view(np.ndarray)
            out[name] = torch.from_numpy(plain).view(getattr(torch, dtype)).view((n,) + shape)
        return out

    def drop(self, ticket):
        """A ticket whose batch the user never gets: waited for (its workers read the ring's slot), its output dropped."""
        try:
            self._wait(ticket)
        except Exception:
            pass
        if ticket["slot"] is not None:
            ticket.get("out", self.out).give_back(ticket["slot"])
        ticket["batch"] = None

    def _check_workers(self):
        for p in self.procs:
            code = p.exitcode
            if code is not None:
                status = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
                raise LoaderDied(f"stoker.Loader: a Python worker (pid {p.pid}) of the loader's Python functions {status}",
                                 code)

    def close(self):
        for _ in self.procs:
            try:
                self.tasks.put(None)
            except Exception:
                pass
        for p in self.procs:
            p.join(2.0)
            if p.exitcode is None:
                p.kill()
                p.join()
        self.procs = []
        if self.workers:
            for q in (self.tasks, self.results):
                q.close()
                q.join_thread()
        for out in (self.out, self.batch_out):
            if out is not None:
                out.close()


class _OutArray(np.ndarray):
    """A uint8 array over one output slot; it carries the slot's owner, and every view of it keeps it alive."""


class _OutOwner:
    """Gives an output slot back when the last view of it is gone (or at ``release()``)."""

    __slots__ = ("slots", "n")

    def __init__(self, slots, n):
        self.slots = slots
        self.n = n

    def give_back(self):
        slots, self.slots = self.slots, None
        if slots is not None:
            slots.give_back(self.n)

    def __del__(self):
        try:
            self.give_back()
        except Exception:
            pass


def _failed(key, number, epoch, text):
    return f"stoker.Loader: the transform raised on sample {key!r} (batch {number} of epoch {epoch}): {text}"


def resolve_workers(value):
    """``python_workers``: an integer >= 0, or "auto" (one a core this process may use: the per-sample
    Python is most of the work where there is any, the JVM's decode and crop the lesser part)."""
    if value == "auto":
        try:
            cores = len(os.sched_getaffinity(0))
        except AttributeError:
            cores = os.cpu_count() or 1
        return max(1, cores)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"stoker.Loader: option 'python_workers' must be an integer >= 0 or 'auto', got {value!r}")
    return value
