"""``stoker.Loader``: Stoker's batches in a Python training loop, with no copy, owned by the user.

Batches are collated by the JVM straight into a shared-memory ring that this process maps; each
batch is a dict of tensors (or numpy arrays) that view the ring. A batch is the user's for as long
as any of its arrays is alive (``_ring``, NOTE [Batches the user owns]).
"""

import collections
import concurrent.futures
import hashlib
import json
import os
import sys
import time

from . import _decode, _help
from . import _device as _device_mod
from . import _options
from . import _pytransform
from . import _protocol as P
from . import _process
from ._ring import Ring
from .sources import Source
from .errors import DataError, LoaderDied, LoaderTimeout, StokerError

try:
    import torch
except ImportError:  # numpy arrays then
    torch = None
import numpy as np


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



def _check_state(state):
    if not isinstance(state, dict) or state.get("version") != 1 or not isinstance(state.get("loader"), (dict, list)):
        raise ValueError("stoker.Loader: load_state_dict takes what state_dict() returned, or a list of them")

class Loader:
    """Loads batches with Stoker for a Python training loop.

    ``stoker.Loader(stoker.sources.tokens("train.bin", seq_len=1024), batch_size=32)`` takes a
    source (a value: ``stoker.sources``) and the loader's options, as ``DataLoader(dataset, ...)``
    does; ``stoker.Loader("tokens", "train.bin", seq_len=1024, batch_size=32)`` is the same, the
    source's kind, paths and options given in one call. The options are the specs' (listed
    below, and each source's in ``help(stoker.sources.KIND)``), the flags of ``stoker bench``
    without their dashes: the same options give the same batches as ``stoker bench``. PyTorch's
    names ``batch_size``, ``num_workers``, ``shuffle``, ``drop_last`` and ``timeout`` work as in a
    ``DataLoader``.

    Batches are yours. Each batch is a dict, field name -> tensor (numpy arrays with
    ``as_numpy=True``), viewing shared memory the JVM wrote, with no copy. A batch's memory goes
    back to the loader only when the last of its tensors (and views of them, and the dict) is
    gone, so batches kept in a list, queued ahead on a thread, or sliced never change, and a
    tensor read after ``close()`` still holds its batch. ``batch.release()`` gives the memory back
    at once, for a loop that wants it before Python drops the objects (its tensors must not be
    read after that). Held batches live in a ring in shared memory that grows up to ``ring_bytes``
    (default: half of the shared memory that is free when the loader starts); when you hold that
    much, the loader waits for you to drop some and says so once on stderr.

    Iterating: each ``for`` loop runs one epoch, as a DataLoader's does: a loop left early and a
    new ``for`` start the next epoch, unless a state was just loaded (``load_state_dict``), which
    the next loop continues. ``set_epoch(n)`` makes the next loop run epoch n from its start (a
    resumed run may call it with the state's epoch: the state is continued). ``len(loader)`` is
    the batches of the next loop.

    Images (``"shards"``, ``"folder"``) are recipes of values, torchvision's transforms:
    ``transform="train"`` (RandomResizedCrop with ``size=224``, ``scale=(0.08, 1)``,
    ``ratio=(3/4, 4/3)``, then a flip with probability ``flip=0.5``, then ImageNet's normalize),
    ``transform="eval"`` (Resize to ``resize=size*8/7``, CenterCrop ``size``, ``flip=0``), or
    ``transform="none"`` (each member its own field of bytes: ``members=`` chooses which, by default
    the first sample's, and a sample that differs is an error); ``image_dtype="uint8"`` leaves normalizing to the
    GPU; ``label=`` takes the label from ``"cls"`` (the default; -1 where a sample has none),
    another member (``"txt"``), a field of the ``.json`` member (``"json:label"``) or nowhere
    (``"none"``); ``keys=True`` adds ``__key__``, the samples' keys as strings. ``cache="ram"`` keeps
    the decoded images in memory between epochs (shards and folders read by index), so later epochs
    only crop, flip and resample; each image is kept at the DCT scale its crop decodes at without a
    cache, and the batches equal those with nothing kept, to the bit. ``cache_max_side=N`` keeps
    each image at the DCT scale whose longer side is at most N (a change of the data);
    ``cache_bytes`` bounds the cache (default: half the machine's memory), and a cache estimated
    past it is refused before the first batch. ``cache="disk"`` (or a folder: a ``pathlib.Path``,
    or a path with a ``/``, so a misspelt word is an error) keeps
    them in one file that every process on the node reading the same images shares, and the next
    run finds (a file that fails its check is made again). JSON lines: ``window_cache="disk"`` (or a
    folder) keeps each shard's packed windows, so later epochs read them back instead of tokenizing
    again (a file that fails its check is packed again). Any source: ``in_memory=True``
    copies its local files into memory first (their size checked; removed when the loader closes,
    or a second after its process is killed). Remote files are cached in ``cache_dir``, by default
    ``~/.cache/stoker/shards``; a folder another user owns or can write is refused. Streamed sources:
    ``streams=N`` splits each epoch into N streams, so that ``load_state_dict`` of the list of every
    old rank's ``state_dict()`` resumes at another world size.

    Ragged fields (a variable-length list of numbers a sample: a jet's particles, an event's
    pulses; ROOT vectors, Parquet ``list<float>`` columns, Arrow lists, HDF5 variable-length
    datasets) arrive as ``(offsets, values)``: the values of the whole batch in their dtype, and
    ``B + 1`` offsets counted in values. Padding turns them into what a model takes, in the JVM,
    written straight into the batch:
    ``pad={"Jet_*": 128}`` makes each ragged field whose name matches a glob (``*``, ``?``; the
    first glob that matches counts) a tensor ``[B, 128]`` of its dtype, values past 128 dropped and
    counted (``stats()["truncatedSamples"]``, ``stats()["droppedValues"]``); ``pad_value=`` fills
    what a sample lacks (default 0). ``stack={"particles": ["Part_px", "Part_py", ...]}`` makes one
    tensor ``[B, N, F]`` of fields that have one length in each sample (feature ``j`` the ``j``-th
    field; a sample where they differ fails naming them), converted to ``stack_dtype``
    (default ``"float32"``), its ``N`` from the ``pad`` glob that names the stack
    (``pad={"particles": 128}``). ``lengths=True`` follows each padded field or stack ``NAME`` with
    ``NAME_len`` (int64 ``[B]``: the entries it holds, at most ``N``), ``mask=True`` with
    ``NAME_mask`` (bool ``[B, N]``). Ragged fields no glob names stay ``(offsets, values)``.

    Options of the Python side:

    - ``fields``: a tuple of field names: each batch is a tuple of those fields in that order
      (``for x, y in loader``); a name that is not a field is an error. Default: a dict of all.
    - ``map``: a function applied to each batch, in order, on a thread of its own a few batches
      ahead of the loop (torch operations release the GIL, so it runs while the loop does); the
      loop gets its results, owned as batches are. An exception in it is raised in the loop,
      naming the batch.
    - ``transform`` (images) also takes torchvision's transforms as they are: a ``Compose``, an
      ``nn.Sequential`` or a list. Its known prefix runs in the JVM with torchvision's semantics:
      ``RandomResizedCrop`` (any square ``size``, ``scale``, ``ratio``; bilinear, antialiased) or
      ``Resize(N)`` + ``CenterCrop``, then ``RandomHorizontalFlip(p)``, then ``ToTensor()`` +
      ``Normalize`` with ImageNet's mean and std (or ``PILToTensor()``); a parameter the JVM does
      not implement as torchvision does (another interpolation, a crop that is not square,
      ``antialias=False``) is refused, naming it. From the first transform it does not run, the
      rest runs in Python on each sample the JVM decoded, as torchvision would have run it (on a
      PIL image before ``ToTensor``, on a tensor after), in ``python_workers`` processes. Which
      part runs where is said once on stderr and in ``stats()["transform"]``.
    - ``sample_map``: a function of one sample (a dict of the fields of one shape a sample, as
      tensors) that returns a dict of tensors (or arrays, numbers) of one shape a field: each
      batch is the samples' results, collated (variable-length fields and ``__key__`` pass
      through as they are). It runs after a transform's Python part, in the same workers.
    - ``python_workers``: the processes that run the per-sample Python (``"auto"``: one a core;
      ``0``: in this process), forked once when the loader starts; they read each sample from the
      ring with no copy and write into the batch's memory in shared memory, which is the user's
      as a batch is. Each sample's functions run with torch's, numpy's and ``random``'s generators
      seeded from the loader's seed, the epoch and the sample's key (sources without keys: its
      batch's place in the rank's epoch and its row), so the batches are the same for any number
      of workers and after a resume. An exception names the sample and is raised in the loop; a
      worker that dies raises ``stoker.LoaderDied`` with its exit status. ``map`` then runs on the
      loop's thread.
    - ``timeout``: seconds to wait for a batch (0, the default: no limit); past it, ``next()``
      raises ``stoker.LoaderTimeout`` (a ``TimeoutError``) saying what it waited for and what the
      server is doing. A server that dies raises ``stoker.LoaderDied`` within a second, timeout or
      not.
    - ``as_numpy``: numpy arrays instead of torch tensors (the default when torch is missing).
    - ``ring_bytes``: the bound of the shared-memory ring in bytes (see above).
    - ``ahead``: batches the server may hand over ahead of the loop (default: as many as fit
      64 MiB, between 2 and 32).
    - ``server``: ``"process"`` (the default): one ``stoker serve`` for all of this process's
      loaders (train and validation, several datasets), started by the first and ended when the
      last closes (or the process ends), so that a second loader's first batch needs no JVM start
      and the JVM's memory is paid once; each loader has its own session and ring, and closing
      one leaves the others running. A forked child never uses its parent's: a loader made there
      starts the child's own. ``"node"``: one server for all the processes of this node (8 ranks
      with a train and a validation loader each: one JVM), started by the first under a lock file
      in ``$STOKER_NODE_DIR`` (else ``stoker-UID`` in the temporary folder; a folder of this
      user's alone), attached to by the others, and ended after the last of them has closed its
      loaders or ended. ``"own"``: a server for this loader alone. A socket path (a
      ``pathlib.Path``, or a path with a ``/``): a running ``stoker serve`` (one a node, started
      with ``--stay``) instead of starting one. Paths and folders are the caller's: relative ones
      (data, ``cache``, ``window_cache``, ``cache_dir``) are made absolute against this process's
      working folder before a server sees them; URLs stay as given.
    - ``device``: ``"cuda"`` (or ``"cuda:N"``, a ``torch.device``) yields the batches on that GPU,
      each copied from the ring on a side stream a few ahead of the loop (``stoker._device``);
      without CUDA it fails at once, saying where it looked.
    - ``decode_on`` (images): ``"cuda"`` (``"cuda:N"``, a ``torch.device``) hands each JPEG over
      undecoded with the crop and flip the workers drew, and decodes, crops, resizes and flips on
      that GPU (torchvision's nvJPEG decode) a few batches ahead of the loop; the batches are on
      that GPU. ``"torchvision"`` does the same on the CPU. ``"cpu"`` (the default): the workers
      decode. ``map`` runs after the decode.

    A DataLoader's other keywords: ``pin_memory=True`` goes with ``device="cuda"`` (which
    page-locks the ring's slots and copies each batch a few ahead; without ``device=`` it is
    refused, saying so: Stoker's batches are in shared memory already), ``persistent_workers`` is
    taken (the JVM's workers live as long as the loader), ``prefetch_factor`` with an integer
    ``num_workers`` sets ``prefetch`` to their product; ``worker_init_fn``, ``generator``,
    ``sampler``, ``batch_sampler``, ``collate_fn``, ``multiprocessing_context`` and
    ``batch_size=None`` are refused, each saying what to give instead.

    Defaults that differ from a DataLoader's, and why: ``shuffle`` is on (``order="shuffle"``;
    a training loader shuffles, and Stoker's shuffle costs no memory), with ``seed=0`` (every
    rank and every run agree on the order, as DistributedSampler's seed 0 does; give another seed
    for another order); images get training crops unless ``transform="eval"``; ``num_workers``
    is ``"auto"`` (tuned while running; threads in one JVM, not processes). Rank and world size
    default to torch.distributed's when it is initialized, else to the ``RANK`` and
    ``WORLD_SIZE`` environment variables.
    """

    def __init__(self, source, *paths, as_numpy=None, ahead=None, ring_bytes=None, timeout=0, fields=None, map=None,
                 server=None, python_workers="auto", sample_map=None, **options):
        if "shuffle" in options:
            shuffle = options.pop("shuffle")
            if not isinstance(shuffle, bool):
                raise ValueError(f"stoker.Loader: option 'shuffle' must be True or False, got {shuffle!r}")
            if "order" in options:
                raise ValueError("stoker.Loader: give 'shuffle' or 'order', not both")
            options["order"] = "shuffle" if shuffle else "sequential"
        self._device = _device_option(options.pop("device", None), as_numpy)
        _dataloader_keywords(options, self._device)
        rank, world = _distributed()
        options.setdefault("rank", rank)
        options.setdefault("world_size", world)
        if isinstance(options["rank"], int) and isinstance(options["world_size"], int) \
                and options["rank"] >= options["world_size"]:
            raise ValueError(f"stoker.Loader: rank {options['rank']} is not in a world of {options['world_size']}")
        _check_int("ahead", ahead, 1, 64)
        _check_int("ring_bytes", ring_bytes, 1, None)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < 0:
            raise ValueError(f"stoker.Loader: option 'timeout' must be a number of seconds >= 0, got {timeout!r}")
        if fields is not None:
            if isinstance(fields, str) or not all(isinstance(f, str) for f in fields) or not fields:
                raise ValueError(f"stoker.Loader: option 'fields' must be a tuple of field names, got {fields!r}")
            fields = tuple(fields)
        if map is not None and not callable(map):
            raise ValueError(f"stoker.Loader: option 'map' must be a function, got {map!r}")
        source = self._transform_objects(source, options, as_numpy, python_workers, sample_map)
        decode_on = options.get("decode_on", source.options.get("decode_on") if isinstance(source, Source) else None)
        self._decode_on = None
        if decode_on not in (None, "cpu"):
            _options.check_option("decode_on", decode_on)
            if torch is None or as_numpy:
                raise ValueError("stoker.Loader: decode_on= decodes into torch tensors; it needs torch, without as_numpy")
            self._decode_on = _decode.target(str(decode_on), torch)
            if self._decode_on.type == "cuda":
                reason = _device_mod.cuda_missing_reason(torch, self._decode_on)
                if reason is not None:
                    raise StokerError("stoker.Loader(decode_on=" + repr(str(decode_on)) + "): " + reason)
            if self._device is not None and torch.device(self._device) != self._decode_on:
                raise ValueError(f"stoker.Loader: decode_on={str(decode_on)!r} puts the batches on that device; "
                                 f"device={str(self._device)!r} differs")
            self._device = None  # the decoder puts the batches on the device, not the ring's copies
        if map is not None and self._device is not None:
            raise ValueError("stoker.Loader: 'map' runs on host batches; it does not go with device=")
        if isinstance(source, Source):
            if paths:
                raise ValueError(_options.redact(f"stoker.Loader: a Source holds its paths; got "
                                                 f"{[str(p) for p in paths]!r} as well"))
            own = _options.schema()["sources"][source.kind]
            for name in options:
                canonical = _options.ALIASES.get(name, name)
                if canonical not in _options.LOADER and canonical in own:
                    raise ValueError(f"stoker.Loader: option '{name}' is the source's: give it to stoker.sources.{source.kind}")
            spec = _options.spec(source.kind, source.paths, dict(source.options, **options))
            self._spec = {"source": source.spec, "loader": spec["loader"]}
        else:
            self._spec = _options.spec(source, paths, options)
        if as_numpy is None:
            as_numpy = torch is None
        elif as_numpy is False and torch is None:
            raise ValueError("stoker.Loader: as_numpy=False needs torch, which is not importable")
        self._numpy = bool(as_numpy)
        self._ahead_option = ahead
        self._ring_bytes = ring_bytes
        self._timeout = float(timeout)
        self._names = fields
        self._map = map
        self._decoder = None
        self._server_path = _server_option(server)
        self._server = None
        self._conn = None
        self._ring = None
        self._backend = None
        self._info = None
        self._pending_state = None
        self._state_loaded = False
        self._epoch_request = -1
        self._consumed = 0   # the counter of the last notice handed to the user
        self._intake = 0     # the counter of the last notice the loop took from the socket
        self._reported = 0   # the counter last told to the server
        self._frees = []
        self._group = 1
        self._iterating = None
        self._ahead = collections.deque()
        self._closed = False
        self._pid = os.getpid()  # a forked child (a DataLoader worker) must not speak on this socket
        self._warned_full = False
        self._next_seconds = 0.0
        self._wait_seconds = 0.0
        self._batches = 0

    def _transform_objects(self, source, options, as_numpy, python_workers, sample_map):
        """``transform=`` of torchvision's objects: split into the JVM's image options and the tail
        Python runs (NOTE [Which part runs where] in ``_pytransform``), and ``sample_map``; the
        source with the JVM's options."""
        self._plan = None
        self._pool = None
        self._step = None
        self._keys = False
        self._python_workers = _pytransform.resolve_workers(python_workers)
        if sample_map is not None and not callable(sample_map):
            raise ValueError(f"stoker.Loader: option 'sample_map' must be a function, got {sample_map!r}")
        given = options.get("transform", source.options.get("transform") if isinstance(source, Source) else None)
        if not _pytransform.is_transform_object(given):
            if sample_map is not None:
                return self._per_sample(source, options, as_numpy, {}, sample_map)
            return source
        if "transform" not in options:
            raise ValueError("stoker.Loader: a Source holds option values; give torchvision's transforms to "
                             "stoker.Loader(source, transform=...)")
        if torch is None or as_numpy:
            raise ValueError("stoker.Loader: transform= of torchvision's transforms gives torch tensors; it needs torch, "
                             "without as_numpy")
        self._plan = _pytransform.plan(options.pop("transform"))
        jvm = dict(self._plan.jvm)
        own = dict(source.options) if isinstance(source, Source) else {}
        clash = sorted(k for k in jvm if k in options or k in own)
        if clash:
            raise ValueError(f"stoker.Loader: {', '.join(clash)} are given by transform= (torchvision's transforms); "
                             "give them there only")
        if self._plan.tail or sample_map is not None:
            return self._per_sample(source, options, as_numpy, jvm, sample_map)
        if isinstance(source, Source):
            return Source(source.kind, *source.paths, **own, **jvm)
        options.update(jvm)
        return source

    def _per_sample(self, source, options, as_numpy, jvm, sample_map):
        """Python runs functions on each sample (the transform's tail, ``sample_map``): the source,
        with ``jvm``'s options and the samples' keys (which seed them) where it has keys."""
        if torch is None or as_numpy:
            raise ValueError("stoker.Loader: Python's per-sample functions (sample_map=, a transform's tail) give torch "
                             "tensors; they need torch, without as_numpy")
        self._step = _pytransform.Step(self._plan, sample_map)
        own = dict(source.options) if isinstance(source, Source) else {}
        for name in ("decode_on", "device"):
            if (self._device if name == "device" else options.get(name, own.get(name))) not in (None, "cpu"):
                raise ValueError(f"stoker.Loader: {name}= does not go with functions Python runs on each sample ("
                                 f"{', '.join(self._step.describe())}): copy the batches to the GPU with .to()")
        kind = source.kind if isinstance(source, Source) else source
        if kind in _options.SOURCES and "images" in _options.SOURCES[kind][2]:
            self._keys = bool(options.get("keys", own.get("keys", False)))
            jvm["keys"] = True  # each sample's functions are seeded by its key
            options.pop("keys", None)
            own.pop("keys", None)
        if isinstance(source, Source):
            return Source(source.kind, *source.paths, **own, **jvm)
        options.update(jvm)
        return source

    # ---- the session ------------------------------------------------------------------------

    def _session(self):
        if self._closed:
            raise StokerError("the loader is closed")
        if os.getpid() != self._pid:
            raise StokerError("this loader belongs to process " + str(self._pid) + "; a forked child cannot use it "
                              "(batches it was handed stay readable)")
        if self._conn is not None:
            return self._conn
        if self._server_path in ("process", "node", "own"):
            self._server = _process.Server() if self._server_path == "own" else _process.shared(self._server_path)
            path = self._server.socket_path
        else:
            path = self._server_path
        try:
            self._conn = P.Connection(path, self._server)
            state = None if self._pending_state is None else json.dumps(self._pending_state)
            self._conn.send(P.OPEN, json.dumps(dict(self._spec, ahead=self._ahead_option or 0,
                                                    ringBytes=self._ring_bytes or 0, state=state)).encode())
            type_, p = self._conn.recv()
            if type_ == P.ERROR:
                self._raise(p)
            if type_ != P.HELLO:
                raise StokerError(f"the stoker server answered {type_} to OPEN")
            self._info = json.loads(bytes(p))
            if self._info.get("version") != P.VERSION:
                raise StokerError(f"the stoker server speaks version {self._info.get('version')} of the bridge, "
                                  f"this package {P.VERSION}: install the package and the server of one release")
            self._ring = Ring(self._info, None if self._numpy else torch)
            if self._decode_on is not None:
                known = [f.name for f in self._ring.fields]
                if not all(n in known for n in _decode.ENCODED):
                    raise ValueError(f"stoker.Loader: decode_on= is for image sources that decode (transform train or "
                                     f"eval); this one's fields are {known}")
                images = self._spec["source"].get("images", {})
                self._decoder = _decode.JpegDecoder(torch, self._decode_on, images)
            if self._names is not None and self._step is None:  # else the per-sample functions say the fields
                known = [f.name for f in self._ring.fields]
                if self._decoder is not None:
                    known = ["image"] + [n for n in known if n not in _decode.ENCODED]
                unknown = [n for n in self._names if n not in known]
                if unknown:
                    raise ValueError(f"stoker.Loader: fields {unknown} are not fields of this source; it has {known}")
            if self._device is not None:
                self._backend = _device_mod.TorchCuda(torch, self._device)
            self._conn.send(P.MAPPED)
            if self._step:
                self._pool = _pytransform.Pool(torch, self._ring, self._step, self._python_workers,
                                               os.path.dirname(self._info["ring"]))
            if self._plan is not None or self._step:
                _pytransform.say_once(self._where())  # once a loader
        except BaseException:
            if self._server is not None and self._conn is None and self._server_path == "own":
                self._server.kill()  # never connected: it would wait for a client that does not come
                self._server = None
            self._teardown()
            raise
        if self._pending_state is not None:
            self._state_loaded = True
        self._pending_state = None
        self._consumed = self._intake = self._reported = self._info["counter"]
        self._group = max(1, self._info["ahead"] // 2)
        return self._conn

    def _raise(self, payload):
        e = json.loads(bytes(payload))
        kind, message = e.get("kind"), e.get("message", "")
        if kind == "data":
            raise DataError(message, e.get("resource"), e.get("index"))
        if kind in ("usage", "state"):
            raise ValueError("stoker.Loader: " + message)
        raise StokerError(message)

    # ---- talking to the server -------------------------------------------------------------

    def _report(self, force=False):
        """Gives dead batches' slots back and says how far the loop has taken notices: in groups,
        or everything with ``force`` (before a request, or when the server waits for it)."""
        self._collect()
        if not self._frees and self._intake == self._reported:
            return
        if force or len(self._frees) >= self._group or self._intake - self._reported >= self._group:
            self._conn.free(self._intake, self._frees)
            self._frees.clear()
            self._reported = self._intake

    def _collect(self):
        """Slots of batches gone since the last look (their finalizers queued them), to give back."""
        if self._ring.dead:
            self._frees.extend(self._ring.take_dead())

    def _server_waits(self):
        """Whether the server may be waiting for this process (NOTE [Bridge flow]): it runs at most
        ``ahead`` notices past what it was told, and holds no more batches out than ``holds``. With
        nothing buffered, every notice sent has been taken, so these are all it could wait for."""
        self._collect()
        ring = self._ring
        return (self._intake - self._reported >= self._info["ahead"]
                or (self._frees and ring.live + len(self._frees) >= self._info.get("holds", 1 << 30)))

    def _recv(self, what, request=False):
        """The next message from the server. Before waiting for a batch, what the server waits for
        is sent (most waits need nothing: a message is sent only when it unblocks the server);
        before waiting for the answer to a request, everything owed is sent."""
        conn = self._conn
        if not conn.buffered() and (request or self._server_waits()):
            self._report(force=True)
        started = time.monotonic()

        def tick(waited):
            if request or self._server_waits():
                self._report(force=True)
            if self._timeout and waited >= self._timeout:
                raise LoaderTimeout(self._timeout_message(what() if callable(what) else what,
                                                          time.monotonic() - started))
            if waited >= 1.0 and not self._warned_full and self._ring.live >= self._info.get("holds", 1 << 30):
                self._warned_full = True
                held = self._ring.live * self._ring.slot_bytes
                bound = self._ring.slots * self._ring.slot_bytes
                raised = (f" (ring_bytes={self._ring_bytes:,} is less than the {self._ring.slots} batches the loader "
                          f"needs to run, so the ring has those)") if self._ring_bytes and self._ring_bytes < bound else ""
                print(f"stoker.Loader: waiting for batch memory: this process holds {self._ring.live} batches "
                      f"({_size(held)}), as many as the ring's bound of {_size(bound)} (the loader's working batches "
                      f"included) leaves it{raised}; a batch's memory "
                      "goes back when its last tensor is gone, or at batch.release() (ring_bytes= raises the bound)",
                      file=sys.stderr, flush=True)

        return conn.recv(on_tick=tick)

    def _timeout_message(self, what, waited):
        pid = self._info.get("pid")
        state = P.process_state(pid) if pid else "unknown"
        held = ""
        if self._ring.live >= self._info.get("holds", 1 << 30):
            held = (f"; this process holds {self._ring.live} batches, all the ring allows: drop some or release() "
                    "them")
        return (f"stoker.Loader: nothing from the stoker server within {waited:.1f} s (timeout={self._timeout:g}) "
                f"while waiting for {what}; the server (pid {pid}) is {state}{held}")

    # ---- iterating ------------------------------------------------------------------------

    def __iter__(self):
        conn = self._session()
        self._stop_pass()
        if self._state_loaded:
            loaded_epoch = self._info["epoch"]
            request = self._epoch_request if self._epoch_request not in (-1, loaded_epoch) else -1
        elif self._epoch_request >= 0:
            request = self._epoch_request
        elif self._info.get("midEpoch"):
            request = self._info["epoch"] + 1  # a loop left early: the next loop is the next epoch, as a DataLoader's
        else:
            request = -1
        self._state_loaded = False
        self._epoch_request = -1
        self._report(force=True)
        conn.sendall(P.PASS_MESSAGE.pack(P.PASS, P.PASS_BYTES, self._consumed, request))
        self._started(json.loads(bytes(self._reply(P.STARTED, void_pass=True))))
        self._info["midEpoch"] = True
        it = _Pass(self)
        self._iterating = it
        if self._pool is not None:
            first = max(0, self._info["epochBatches"] - self._info["batches"]) if self._info["epochBatches"] >= 0 else 0
            it = _pytransform.TailPass(self, it, self._pool, self._names, self._keys, self._map,
                                       self._spec["loader"].get("seed", 0), first, self._spec["loader"].get("rank", 0))
        elif self._backend is not None:
            it = _device_mod.DevicePass(self, it, self._backend, depth=2)
        elif self._decoder is not None:
            it = _MapPass(self, it, _decoded(self._decoder, self._map, self._names))
        elif self._map is not None:
            it = _MapPass(self, it, self._map)
        self._iterating = it
        return it

    def _stop_pass(self):
        """The running pass (if any) is over: batches taken from the socket but not handed to the
        user go back to the server with the new request, which takes their slots back itself."""
        it = self._iterating
        if it is not None:
            it.stale = True
            it.drop()
            self._iterating = None
        self._intake = self._consumed

    def _started(self, info):
        self._info.update(info)
        self._consumed = self._intake = self._reported = info["counter"]

    def _take(self, it):
        """The next batch: (counter, batch), or StopIteration at the end of the pass."""
        t0 = time.perf_counter()
        if it.stale:
            raise StokerError("this iterator is stale: a newer iter() over the loader took over")
        if it.done:
            raise StopIteration
        if self._conn is None:
            raise StokerError("the loader is closed")
        if self._ahead:
            type_, p = self._ahead.popleft()
        else:
            w0 = self._conn.wait_seconds
            type_, p = self._recv(lambda: f"batch {it.taken} of epoch {self._info['epoch']}")
            self._wait_seconds += self._conn.wait_seconds - w0
        if type_ == P.READY:
            slot, _, counter, _ = P.READY_BODY.unpack_from(p)
            batch = self._ring.batch(slot, counter, p[P.READY_BYTES:],
                                     None if self._decoder or self._pool else self._names)
            self._intake = counter
            self._report()
            self._batches += 1
            it.taken += 1
            self._next_seconds += time.perf_counter() - t0
            return counter, batch
        if type_ == P.END:
            counter, self._info["batches"] = P.END_BODY.unpack_from(p)
            self._intake = counter
            it.done = True
            it.end_counter = counter
            raise StopIteration
        if type_ == P.ERROR:
            it.done = True
            self._raise(p)
        raise StokerError(f"unexpected message {type_} from the stoker server")

    def _holds_all(self):
        """Whether this process holds every batch the server may hand out, and none is on its way."""
        return (self._ring.live >= self._info.get("holds", 1 << 30) and not self._ahead
                and not self._conn.buffered())

    def _handed(self, counter):
        """The user now has the batch of notice ``counter`` (or the end of the pass)."""
        self._consumed = counter

    def _ended(self, counter):
        self._consumed = counter
        self._info["epoch"] += 1
        self._info["midEpoch"] = False

    # ---- the rest of the interface --------------------------------------------------------

    def __len__(self):
        self._session()
        if self._state_loaded:  # the loaded state is continued, unless another epoch was asked for
            fresh = self._epoch_request not in (-1, self._info["epoch"])
        else:
            fresh = self._epoch_request >= 0 or self._info.get("midEpoch")
        n = self._info["epochBatches"] if fresh else self._info["batches"]
        if n < 0:
            raise TypeError("a streaming source does not know its length in batches before it is read")
        return n

    def set_epoch(self, epoch):
        """The next loop runs this epoch from its start (after load_state_dict with the state's
        epoch, the state is continued instead, so a resumed run may call it as always)."""
        if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 0:
            raise ValueError(f"stoker.Loader: set_epoch takes an integer >= 0, got {epoch!r}")
        self._epoch_request = epoch

    @property
    def epoch(self):
        """The epoch of the loop that runs now (between loops, of the next one, unless the last was left early)."""
        self._session()
        return self._info["epoch"] if self._epoch_request < 0 else self._epoch_request

    def state_dict(self):
        """Where the loop stands: after the last batch it was given. A small dict (torch.save-able)."""
        if self._conn is None and self._pending_state is not None:
            return {"version": 1, "loader": self._pending_state}
        conn = self._session()
        conn.sendall(P.COUNTER_MESSAGE.pack(P.STATE, 8, self._consumed))
        p = self._reply(P.STATE_IS)
        return {"version": 1, "loader": json.loads(bytes(p))}

    def load_state_dict(self, state):
        """Continues from a state_dict(); rank and world size may differ (elastic resume). A state
        that does not fit this loader (another seed, other data, or not all the parts it needs) is
        refused here, with a ValueError saying what differs.

        One rank's state resumes that rank at its world size (any rank, at an epoch's start).
        Another rank or world size mid-epoch takes the list of every old rank's state_dict()
        (``torch.distributed.all_gather_object`` gathers them), merged into one: ranks read by
        index must have stood together; each stream of a streaming source continues where it
        stood (``streams=``)."""
        if isinstance(state, (list, tuple)):
            if not state:
                raise ValueError("stoker.Loader: load_state_dict got an empty list of states")
            for s in state:
                _check_state(s)
            loader = [s["loader"] for s in state]
            loader = [x for part in loader for x in (part if isinstance(part, list) else [part])]
        else:
            _check_state(state)
            loader = state["loader"]
        if self._conn is None:  # the session opens with it now, so that a state that does not fit is refused here
            before, self._pending_state = self._pending_state, loader
            try:
                self._session()
            except BaseException:
                if self._conn is None:
                    self._pending_state = before
                raise
            return
        self._stop_pass()
        self._report(force=True)
        self._conn.send(P.LOAD, self._consumed.to_bytes(8, "little", signed=True) + json.dumps(loader).encode())
        self._started(json.loads(bytes(self._reply(P.STARTED, void_pass=True))))
        self._state_loaded = True
        self._info["midEpoch"] = True

    def _reply(self, expected, void_pass=False):
        """The server's answer to a request. Notices of the running pass that come first are kept
        for the loop, or, when the request ends the pass (a new pass, a loaded state), dropped: the
        server has taken their slots back."""
        if void_pass:
            self._ahead.clear()
        while True:
            type_, p = self._recv("the server's answer", request=True)
            if type_ == expected:
                return p
            if type_ == P.ERROR:
                e = json.loads(bytes(p))
                if e.get("fatal") or e.get("kind") in ("state", "usage"):
                    self._raise(p)  # the answer to this request, or the session's end
            if not void_pass and type_ in (P.READY, P.END, P.ERROR):
                self._ahead.append((type_, memoryview(bytes(p))))

    def stats(self):
        """The JVM loader's stats, plus this process's: seconds waited for batches and spent handing them over."""
        conn = self._session()
        conn.send(P.STATS)
        s = json.loads(bytes(self._reply(P.STATS_ARE)))
        s["pythonWaitSeconds"] = self._wait_seconds
        s["pythonBatches"] = self._batches
        s["pythonNextSeconds"] = self._next_seconds
        s["pythonIpcSecondsPerBatch"] = max(0.0, self._next_seconds - self._wait_seconds) / max(1, self._batches)
        s["pythonHeldBatches"] = self._ring.live if self._ring is not None else 0
        if self._plan is not None or self._step:
            s["transform"] = self._where()
            s["transformJvm"] = list(self._plan.known) if self._plan is not None else []
            s["transformPython"] = self._step.describe() if self._step else []
            s["pythonWorkers"] = self._python_workers if self._step else 0
        return s

    def _where(self):
        return _pytransform.describe(self._plan, self._step, self._python_workers)

    def close(self):
        """Stops the server's loader (idempotent). Batches still held stay readable until they are gone."""
        if self._closed:
            return
        self._closed = True
        if os.getpid() != self._pid:  # a forked copy: the session is the parent's
            return
        if self._iterating is not None:
            self._iterating.stale = True
            try:
                self._iterating.drop()
            except Exception:
                pass
        if self._conn is not None:
            try:
                self._conn.send(P.BYE)
            except StokerError:
                pass
        self._teardown()

    def _teardown(self):
        if self._iterating is not None:
            self._iterating.stale = True
        if self._backend is not None:
            try:
                self._backend.close()
            finally:
                self._backend = None
        if self._pool is not None:
            try:
                self._pool.close()  # its workers read the ring
            finally:
                self._pool = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._ring is not None:
            self._ring.close()
        if self._info is not None and os.path.exists(self._info.get("ring", "")):
            try:
                os.unlink(self._info["ring"])  # the server died before it could
            except OSError:
                pass
        if self._server is not None:
            server, self._server = self._server, None
            if self._server_path in ("process", "node"):
                _process.release(server)  # the server ends with the last of this process's loaders
            else:
                server.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def _check_int(name, value, lo, hi):
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < lo or (hi is not None and value > hi):
        bound = f"in [{lo}, {hi}]" if hi is not None else f">= {lo}"
        raise ValueError(f"stoker.Loader: option '{name}' must be an integer {bound}, got {value!r}")


def _dataloader_keywords(options, device):
    """A DataLoader's keywords taken where they mean something for Stoker (removed from
    ``options``); the others are refused by ``_options.spec`` saying what to give instead
    (NOTE [A DataLoader's keywords])."""
    for name in ("batch_size", "batch"):
        if name in options and options[name] is None:
            raise ValueError(f"stoker.Loader: {name}=None (samples that are batches already) does not apply: every "
                             "Stoker source yields samples, which the JVM collates into batches of batch_size (a "
                             "DataLoader's batch_size=None is for a dataset that batches itself): give "
                             "batch_size=N, the samples of each batch")
    for name in _options.DATALOADER:  # a DataLoader's default given as it is asks for nothing
        if name in options and options[name] is None or (name == "in_order" and options.get(name) is True):
            del options[name]
    if "pin_memory" in options:
        pin = options.pop("pin_memory")
        if not isinstance(pin, bool):
            raise ValueError(f"stoker.Loader: option 'pin_memory' must be True or False, got {pin!r}")
        if pin and device is None:
            raise ValueError("stoker.Loader: pin_memory=True: " + _options.DATALOADER["pin_memory"])
    if "persistent_workers" in options:  # Stoker's workers live as long as the loader, whatever this says
        persistent = options.pop("persistent_workers")
        if not isinstance(persistent, bool):
            raise ValueError(f"stoker.Loader: option 'persistent_workers' must be True or False, got {persistent!r}")
    if "prefetch_factor" in options:
        factor = options.pop("prefetch_factor")
        workers = options.get("num_workers", options.get("workers"))
        if isinstance(factor, bool) or not isinstance(factor, int) or factor < 1:
            raise ValueError(f"stoker.Loader: option 'prefetch_factor' must be an integer >= 1, got {factor!r}")
        if "prefetch" in options:
            raise ValueError("stoker.Loader: give 'prefetch' (batches ahead in all) or 'prefetch_factor' (per worker), "
                             "not both")
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError("stoker.Loader: prefetch_factor=" + str(factor) + " without num_workers=N: "
                             + _options.DATALOADER["prefetch_factor"])
        options["prefetch"] = factor * workers


def _server_option(server):
    """"process" (this process's shared server), "node" (the node's), "own" (a server of this loader's own), or the
    absolute socket path of a running ``stoker serve``."""
    if server is None:
        return "process"
    if isinstance(server, os.PathLike):
        server = os.fspath(server)
    if server in ("process", "node", "own"):
        return server
    if not isinstance(server, str) or "/" not in server:
        raise ValueError(f"stoker.Loader: option 'server' must be 'process' (the default: one server for all of this "
                         f"process's loaders), 'node' (one for all the processes of this node), 'own' (a server for "
                         f"this loader alone) or the socket path of a running "
                         f"`stoker serve` (a pathlib.Path or a path with a '/'), got {server!r}")
    return os.path.abspath(server)


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
    """One loop over the loader: one epoch (or the rest of a loaded state's)."""

    __slots__ = ("loader", "done", "stale", "taken", "end_counter")

    def __init__(self, loader):
        self.loader = loader
        self.done = False
        self.stale = False
        self.taken = 0
        self.end_counter = None

    def __iter__(self):
        return self

    def __next__(self):
        loader = self.loader
        try:
            counter, batch = loader._take(self)
        except StopIteration:
            if self.end_counter is not None:
                loader._ended(self.end_counter)
                self.end_counter = None
            raise
        loader._handed(counter)
        return batch

    def __len__(self):
        return len(self.loader)

    def drop(self):
        """Nothing is held between the socket and the user."""


class _MapPass:
    """A pass whose batches go through ``fn`` on a thread of its own, a few ahead of the loop, in order."""

    __slots__ = ("loader", "host", "fn", "pool", "queue", "depth", "stale", "done")

    def __init__(self, loader, host, fn, depth=2):
        self.loader = loader
        self.host = host
        self.fn = fn
        self.pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="stoker-map")
        self.queue = collections.deque()  # (counter, number, future, batch)
        self.depth = depth
        self.stale = False
        self.done = False

    def __iter__(self):
        return self

    def __len__(self):
        return len(self.loader)

    def __next__(self):
        if self.stale:
            raise StokerError("this iterator is stale: a newer iter() over the loader took over")
        while not self.done and len(self.queue) <= self.depth:
            try:
                counter, batch = self.loader._take(self.host)
            except StopIteration:
                self.done = True
                break
            number = self.host.taken - 1
            self.queue.append((counter, number, self.pool.submit(self.fn, batch), batch))
            del batch
        if not self.queue:
            self.pool.shutdown(wait=True)
            if self.host.end_counter is not None:
                self.loader._ended(self.host.end_counter)
                self.host.end_counter = None
            raise StopIteration
        counter, number, future, batch = self.queue.popleft()
        try:
            result = future.result()
        except Exception as e:
            self.drop()
            raise StokerError(f"stoker.Loader: map raised on batch {number} of epoch {self.loader._info['epoch']}: "
                              f"{type(e).__name__}: {e}") from e
        self.loader._handed(counter)
        return result

    def drop(self):
        """Batches taken but not handed to the user: the server takes their slots back."""
        while self.queue:
            _, _, future, batch = self.queue.popleft()
            future.cancel()
            try:
                future.result()
            except BaseException:
                pass
            batch._owner.disarm()
        self.pool.shutdown(wait=True)


def _decoded(decoder, fn, names):
    """The map of a loader that decodes on the device: decode, then the user's map, then ``fields``."""
    def run(batch):
        out = decoder(batch)
        del batch  # the JPEGs' slot may go back now
        if names is not None:
            out = tuple(out[n] for n in names)
        return out if fn is None else fn(out)
    return run


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


def _size(n):
    """Bytes in words: ``"96 B"``, ``"1.3 KiB"``, ``"512 MiB"`` (a small ring's bound is no "0 MiB")."""
    for unit in ("B", "KiB", "MiB"):
        if n < 1 << 10:
            return f"{n:.0f} {unit}" if unit == "B" or n >= 10 else f"{n:.1f} {unit}"
        n /= 1 << 10
    return f"{n:.1f} GiB" if n < 10 else f"{n:.0f} GiB"


def _bytes(a):
    if torch is not None and isinstance(a, torch.Tensor):
        a = a.detach().cpu().contiguous()
        if a.dtype == torch.bfloat16:
            a = a.view(torch.int16)
        if a.dtype == torch.bool:
            a = a.to(torch.uint8)
        if a.dtype not in (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16, torch.float32,
                           torch.float64):
            a = a.view({1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[a.element_size()])
        return memoryview(a.numpy()).cast("B")
    return memoryview(np.ascontiguousarray(a)).cast("B")


Loader.__doc__ = _help.loader_doc(Loader.__doc__)  # every loader option, its default and meaning
