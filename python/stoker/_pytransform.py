"""torchvision's transforms taken as they are: ``stoker.Loader(..., transform=Compose([...]))``.

NOTE [Which part runs where]: a ``Compose`` (or ``nn.Sequential``, or a list) is split in two.
Its known prefix, torchvision's ``RandomResizedCrop`` or ``Resize`` + ``CenterCrop``, then
``RandomHorizontalFlip``, then ``ToTensor`` + ``Normalize`` with ImageNet's mean and std (or
``PILToTensor``), becomes the JVM's image options (``transform``, ``size``, ``scale``, ``ratio``,
``resize``, ``flip``, ``image_dtype``): the workers decode, crop, resample and flip with
torchvision's semantics. A parameter the JVM does not implement as torchvision does (another
interpolation, a crop that is not square, antialiasing off) is refused, naming it, never
approximated. From the first transform the JVM does not run, the rest (the tail) runs in Python
on each sample the JVM decoded, as torchvision would have run it: on a PIL image when the prefix
ended before ``ToTensor``, on a tensor after it.

The tail runs in a pool of Python worker processes (``python_workers=N``, forked once per loader
after its ring is mapped, so they read each sample's pixels from the ring with no copy), each
writing its samples' outputs into an output batch in shared memory (a file in the ring's folder
per output batch, reused once the user has dropped the batch: owned as a ring batch is, NOTE
[Batches the user owns] in ``_ring``). A sample's tail runs with torch's, numpy's and ``random``'s
generators seeded from the loader's seed, the epoch and the sample's key, so a batch is the same
for any number of workers, after a resume, and at any world size. ``python_workers=0`` runs the
tail in this process. An exception names the sample and is raised in the loop; a worker that dies
fails the loader with its exit status.
"""

import collections
import hashlib
import mmap
import os
import random
import signal
import sys
import traceback

import numpy as np

from .errors import LoaderDied, StokerError

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
OUT_PREFIX = "stoker-pyout-"


class Plan:
    """A transform split: the JVM's image options, the prefix they stand for (in words), and the tail."""

    def __init__(self, jvm, known, tail, tail_input):
        self.jvm = jvm              # image options for the spec
        self.known = known          # the prefix, as words
        self.tail = tail            # the transforms Python runs, in order
        self.tail_input = tail_input  # "pil": the tail gets PIL images; "uint8"/"float32": CHW tensors



def describe(plan_, step, workers):
    """Which part runs where, in words (``stats()["transform"]``, and once on stderr)."""
    jvm = "" if plan_ is None else "in the JVM: " + ", ".join(plan_.known)
    if not step:
        return "transform: all in the JVM: " + ", ".join(plan_.known)
    where = "in this process" if workers == 0 else f"in {workers} Python worker process{'es' if workers > 1 else ''}"
    return (f"transform: {jvm + '; ' if jvm else ''}in Python ({where}), per sample: " + ", ".join(step.describe()))


def is_transform_object(value):
    """Whether ``transform=`` is torchvision's objects (a Compose, nn.Sequential, list) rather than a preset name."""
    return value is not None and not isinstance(value, (str, os.PathLike))


def _flatten(transform):
    if isinstance(transform, (list, tuple)):
        items = list(transform)
    elif type(transform).__name__ == "Compose" and hasattr(transform, "transforms"):
        items = list(transform.transforms)
    elif type(transform).__name__ == "Sequential" and hasattr(transform, "children"):
        items = list(transform.children())
    elif callable(transform):
        items = [transform]
    else:
        raise ValueError(f"stoker.Loader: option 'transform' must be 'train', 'eval', 'none', or torchvision's "
                         f"transforms (a Compose, nn.Sequential or a list), got {transform!r}")
    out = []
    for t in items:
        if not callable(t):
            raise ValueError(f"stoker.Loader: transform= holds {t!r}, which is not callable")
        out.extend(_flatten(t) if type(t).__name__ in ("Compose", "Sequential") or isinstance(t, (list, tuple))
                   else [t])
    return out


def _name(t):
    module = type(t).__module__ or ""
    return type(t).__name__ if module.startswith("torchvision.transforms") else None


def _words(t):
    text = repr(t).replace("\n", "").replace("    ", "")
    return text if len(text) <= 120 else text[:117] + "..."


def _square(name, param, size):
    if isinstance(size, int):
        return size
    size = tuple(size)
    if len(size) == 1:
        return int(size[0])
    if len(size) == 2 and size[0] == size[1]:
        return int(size[0])
    raise ValueError(f"stoker.Loader: transform {name}({param}={size!r}): the JVM crops squares (size=N or (N, N)); "
                     f"a {size[0]}x{size[1]} crop is not implemented")


def _resampling(name, t):
    mode = getattr(t, "interpolation", None)
    value = getattr(mode, "value", mode)
    if value not in ("bilinear", 2, None):
        raise ValueError(f"stoker.Loader: transform {name}(interpolation={mode}): the JVM resamples bilinearly with "
                         "antialiasing, as torchvision's BILINEAR; another interpolation is not implemented")
    if getattr(t, "antialias", None) is False:
        raise ValueError(f"stoker.Loader: transform {name}(antialias=False): the JVM resamples with antialiasing, as "
                         "torchvision does on PIL images; antialias=False is not implemented")


def _close(a, b):
    try:
        a = [float(v) for v in a]
    except TypeError:
        return False
    return len(a) == len(b) and all(abs(x - y) < 1e-6 for x, y in zip(a, b))


def plan(transform):
    """Splits ``transform`` (NOTE [Which part runs where]); ValueError for what the JVM cannot honour."""
    items = _flatten(transform)
    if not items:
        raise ValueError("stoker.Loader: transform= is an empty list of transforms")
    jvm, known = {}, []
    i = 0
    first = _name(items[0])
    if first == "RandomResizedCrop":
        t = items[0]
        _resampling(first, t)
        size = _square(first, "size", t.size)
        jvm.update(transform="train", size=size, scale=[float(v) for v in t.scale], ratio=[float(v) for v in t.ratio])
        known.append(f"RandomResizedCrop(size={size}, scale={tuple(t.scale)}, ratio={tuple(round(r, 4) for r in t.ratio)})")
        i = 1
    elif first == "Resize" and len(items) > 1 and _name(items[1]) == "CenterCrop":
        r, c = items[0], items[1]
        _resampling(first, r)
        if getattr(r, "max_size", None) is not None:
            raise ValueError(f"stoker.Loader: transform Resize(max_size={r.max_size}): not implemented by the JVM")
        size = r.size
        if not isinstance(size, int):
            size = tuple(size)
            if len(size) != 1:
                raise ValueError(f"stoker.Loader: transform Resize(size={size!r}): the JVM resizes the shorter side "
                                 "(size=N); a size of (h, w) is not implemented")
            size = size[0]
        crop = _square("CenterCrop", "size", c.size)
        jvm.update(transform="eval", resize=int(size), size=crop)
        known.append(f"Resize({size}), CenterCrop({crop})")
        i = 2
    else:
        raise ValueError(f"stoker.Loader: transform=: the first transform must be RandomResizedCrop, or Resize then "
                         f"CenterCrop (the JVM decodes each image into a crop of one size), got {_words(items[0])}")
    flip = 0.0
    if i < len(items) and _name(items[i]) == "RandomHorizontalFlip":
        flip = float(items[i].p)
        known.append(f"RandomHorizontalFlip(p={flip:g})")
        i += 1
    jvm["flip"] = flip
    tail_input = "pil"
    if i + 1 < len(items) and _name(items[i]) == "ToTensor" and _name(items[i + 1]) == "Normalize" \
            and _close(items[i + 1].mean, IMAGENET_MEAN) and _close(items[i + 1].std, IMAGENET_STD):
        jvm["image_dtype"] = "float32"
        known.append("ToTensor(), Normalize(ImageNet's mean and std)")
        tail_input = "float32"
        i += 2
    elif i < len(items) and _name(items[i]) == "PILToTensor":
        jvm["image_dtype"] = "uint8"
        known.append("PILToTensor()")
        tail_input = "uint8"
        i += 1
    else:
        jvm["image_dtype"] = "uint8"  # the tail's PIL images are made of the pixels
    return Plan(jvm, known, items[i:], tail_input)


def sample_seed(seed, epoch, key):
    """The seed of one sample's tail: of the loader's seed, the epoch and the sample's key (64 bits)."""
    h = hashlib.blake2b(f"{seed}\0{epoch}\0{key}".encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(h, "little") & ((1 << 63) - 1)


def _seed_all(torch, seed):
    torch.manual_seed(seed)
    np.random.seed(seed & 0xFFFFFFFF)
    random.seed(seed)


def run_tail(torch, tail, tail_input, pixels):
    """One sample's tail on its pixels (a CHW numpy array of the ring); a tensor."""
    if tail_input == "pil":
        from PIL import Image
        c, h, w = pixels.shape
        if c == 3 and pixels.flags.c_contiguous:  # the planes merged: one copy, 4x faster than a transpose
            x = Image.merge("RGB", [Image.frombuffer("L", (w, h), pixels[i], "raw", "L", 0, 1) for i in range(3)])
        else:
            x = Image.fromarray(np.ascontiguousarray(pixels.transpose(1, 2, 0)).squeeze(2) if c == 1
                                else np.ascontiguousarray(pixels.transpose(1, 2, 0)))
    else:
        x = torch.from_numpy(np.array(pixels))
    for t in tail:
        x = t(x)
    if isinstance(x, np.ndarray):
        x = torch.from_numpy(x)
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"the transform gave a {type(x).__name__}, not a tensor: end it with ToTensor() or "
                        "PILToTensor()")
    return x


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


def _worker(ring, step, tasks, results, torch):
    """A worker's loop: tasks (id, out path, out bytes, layout, inputs, rows) in, (id, None or the failure) out."""
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
        tid, out_path, out_bytes, layout, inputs, rows = task
        try:
            out = maps.get(out_path)
            if out is None:
                fd = os.open(out_path, os.O_RDWR)
                try:
                    out = maps[out_path] = mmap.mmap(fd, out_bytes, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
                finally:
                    os.close(fd)
            failure = _run_rows(torch, ring.mm, out, step, layout, inputs, rows)
        except BaseException as e:  # noqa: BLE001: told to the loop
            failure = (None, f"{type(e).__name__}: {e}")
        results.put((tid, failure))


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


class Pool:
    """The loader's Python workers (NOTE [Which part runs where])."""

    def __init__(self, torch, ring, step, workers, folder):
        import multiprocessing
        self.torch = torch
        self.step = step
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
                p = ctx.Process(target=_worker, args=(ring, step, self.tasks, self.results, torch),
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

    def collect(self, ticket):
        """Waits for the ticket's samples; the output fields (tensors owning their output slot)."""
        import queue
        while ticket["pending"]:
            for t in [t for t in ticket["pending"] if t in self.done]:
                failure = self.done.pop(t)
                ticket["pending"].discard(t)
                if failure is not None and ticket["failure"] is None:
                    ticket["failure"] = failure
            if not ticket["pending"]:
                break
            try:
                tid, failure = self.results.get(timeout=0.1)
                self.done[tid] = failure
            except queue.Empty:
                self._check_workers()
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
        owner = _OutOwner(self.out, ticket["slot"])
        raw = np.frombuffer(self.out.maps[ticket["slot"]], np.uint8).view(_OutArray)
        raw.stoker_owner = owner
        out = {}
        for name, shape, dtype, offset, per in self.layout:
            plain = raw[offset:offset + n * per].view(np.ndarray)
            out[name] = torch.from_numpy(plain).view(getattr(torch, dtype)).view((n,) + shape)
        return out

    def drop(self, ticket):
        """A ticket whose batch the user never gets: waited for (its workers read the ring's slot), its output dropped."""
        try:
            self.collect(ticket)
        except Exception:
            pass
        ticket["batch"] = None

    def _check_workers(self):
        for p in self.procs:
            code = p.exitcode
            if code is not None:
                status = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
                raise LoaderDied(f"stoker.Loader: a Python worker (pid {p.pid}) of the per-sample functions {status}",
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
        if self.out is not None:
            self.out.close()


class _OutArray(np.ndarray):
    """A uint8 array over one output slot; it carries the slot's owner, and every view of it keeps it alive."""


class _OutOwner:
    __slots__ = ("slots", "n")

    def __init__(self, slots, n):
        self.slots = slots
        self.n = n

    def __del__(self):
        try:
            self.slots.give_back(self.n)
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


def say_once(text):
    print("stoker.Loader: " + text, file=sys.stderr, flush=True)
