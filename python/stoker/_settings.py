"""``stoker.Loader``'s keywords, checked once: the spec the server gets (``_options.spec``) and the
options of the Python side, a frozen value (``PythonOptions``)."""

import dataclasses
import os
from typing import Any, Callable, Dict, Optional, Sequence, Tuple

from . import _decode
from . import _device
from . import _options
from . import _pytransform
from . import _batchfn
from . import _workers
from .errors import StokerError
from .sources import Source

try:
    import torch
except ImportError:  # numpy arrays then
    torch = None


@dataclasses.dataclass(frozen=True)
class PythonOptions:
    """What the Python side does with the server's batches (the keywords of ``stoker.Loader`` that
    are not the spec's)."""

    numpy: bool                                     # numpy arrays, not torch tensors
    ahead: Optional[int]                            # notices the server may run ahead (None: its default)
    ring_bytes: Optional[int]                       # the ring's bound (None: half the free shared memory)
    timeout: float                                  # seconds to wait for a batch (0: no limit)
    names: Optional[Tuple[str, ...]]                # fields=: a tuple of these fields, in order
    batch_step: Optional[_batchfn.BatchStep]        # collate_fn=, then map=: a function of each batch
    batch_in_workers: bool                          # whether it runs in the Python workers (else on a thread)
    server: str                                     # "process", "node", "own", or a socket path
    device: Any                                     # the CUDA device batches go to (None: the host)
    decode_on: Any                                  # the torch device JPEGs are decoded on (None: the workers)
    plan: Optional[_pytransform.Plan]               # torchvision's transforms, split (None: a preset or none)
    step: Optional[_workers.Step]               # what Python runs on each sample (None: nothing)
    python_workers: int                             # processes that run the Python functions (0: this one)
    keys: bool                                      # whether the user asked for __key__

    def spec_names(self) -> Optional[Tuple[str, ...]]:
        """fields= as the ring's batches are made: a tuple of them, unless a stage selects them."""
        return None if self.decode_on is not None or self.step is not None else self.names

    def pool(self) -> bool:
        """Whether the loader has Python worker processes (or runs per-sample functions here)."""
        return self.step is not None or self.batch_in_workers


def resolve(source: Any, paths: Sequence[Any], options: Dict[str, Any], as_numpy: Optional[bool], ahead: Optional[int],
            ring_bytes: Optional[int], timeout: Any, fields: Any, map: Any, server: Any, python_workers: Any,
            sample_map: Any, collate_fn: Any = None) -> Tuple[PythonOptions, Dict[str, Any]]:
    """The Python side's options and the server's spec, or a ValueError naming what is wrong."""
    if "shuffle" in options:
        shuffle = options.pop("shuffle")
        if not isinstance(shuffle, bool):
            raise ValueError(f"stoker.Loader: option 'shuffle' must be True or False, got {shuffle!r}")
        if "order" in options:
            raise ValueError("stoker.Loader: give 'shuffle' or 'order', not both")
        options["order"] = "shuffle" if shuffle else "sequential"
    device = _device_option(options.pop("device", None), as_numpy)
    _dataloader_keywords(options, device)
    rank, world = distributed()
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
    for name, fn in (("map", map), ("collate_fn", collate_fn)):
        if fn is not None and not callable(fn):
            raise ValueError(f"stoker.Loader: option '{name}' must be a function, got {fn!r}")
    batch_step = None if map is None and collate_fn is None else _batchfn.BatchStep(map, collate_fn)
    workers = _workers.resolve_workers("auto" if python_workers is None else python_workers)
    source, plan, step, keys = _per_sample(source, options, as_numpy, sample_map, device)
    given = options.get("decode_on", source.options.get("decode_on") if isinstance(source, Source) else None)
    decode_on = None
    if given not in (None, "cpu"):
        _options.check_option("decode_on", given)
        if torch is None or as_numpy:
            raise ValueError("stoker.Loader: decode_on= decodes into torch tensors; it needs torch, without as_numpy")
        decode_on = _decode.target(str(given), torch)
        if decode_on.type == "cuda":
            reason = _device.cuda_missing_reason(torch, decode_on)
            if reason is not None:
                raise StokerError("stoker.Loader(decode_on=" + repr(str(given)) + "): " + reason)
        if device is not None and torch.device(device) != decode_on:
            raise ValueError(f"stoker.Loader: decode_on={str(given)!r} puts the batches on that device; "
                             f"device={str(device)!r} differs")
        device = None  # the decoder puts the batches on the device, not the ring's copies
    if batch_step is not None and device is not None:
        raise ValueError(f"stoker.Loader: '{batch_step.what}' runs on host batches; it does not go with device=")
    # NOTE [Python workers]: a function of whole batches runs on a thread unless python_workers= is given
    in_workers = batch_step is not None and step is None and python_workers is not None and workers > 0
    if in_workers and (decode_on is not None or as_numpy or torch is None):
        raise ValueError(f"stoker.Loader: python_workers={python_workers!r} runs {batch_step.what}= in worker processes "
                         f"on torch tensors in host memory; it does not go with "
                         f"{'decode_on=' if decode_on is not None else 'as_numpy=True'}: give python_workers=0")
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
        spec = {"source": source.spec, "loader": spec["loader"]}
    else:
        spec = _options.spec(source, paths, options)
    if as_numpy is None:
        as_numpy = torch is None
    elif as_numpy is False and torch is None:
        raise ValueError("stoker.Loader: as_numpy=False needs torch, which is not importable")
    python = PythonOptions(numpy=bool(as_numpy), ahead=ahead, ring_bytes=ring_bytes, timeout=float(timeout),
                           names=fields, batch_step=batch_step, batch_in_workers=in_workers, server=_server_option(server),
                           device=device, decode_on=decode_on, plan=plan, step=step, python_workers=workers, keys=keys)
    return python, spec


def _per_sample(source: Any, options: Dict[str, Any], as_numpy: Optional[bool], sample_map: Any, device: Any) -> Tuple:
    """``transform=`` of torchvision's objects split into the JVM's image options and the tail
    Python runs (NOTE [Which part runs where] in ``_pytransform``), and ``sample_map``: (the
    source with the JVM's options, the plan, the step, whether the user asked for keys)."""
    if sample_map is not None and not callable(sample_map):
        raise ValueError(f"stoker.Loader: option 'sample_map' must be a function, got {sample_map!r}")
    given = options.get("transform", source.options.get("transform") if isinstance(source, Source) else None)
    plan, jvm = None, {}
    if _pytransform.is_transform_object(given):
        if "transform" not in options:
            raise ValueError("stoker.Loader: a Source holds option values; give torchvision's transforms to "
                             "stoker.Loader(source, transform=...)")
        if torch is None or as_numpy:
            raise ValueError("stoker.Loader: transform= of torchvision's transforms gives torch tensors; it needs "
                             "torch, without as_numpy")
        plan = _pytransform.plan(options.pop("transform"))
        jvm = dict(plan.jvm)
        own = source.options if isinstance(source, Source) else {}
        clash = sorted(k for k in jvm if k in options or k in own)
        if clash:
            raise ValueError(f"stoker.Loader: {', '.join(clash)} are given by transform= (torchvision's transforms); "
                             "give them there only")
    elif sample_map is None:
        return source, None, None, False
    step, keys = None, False
    own = dict(source.options) if isinstance(source, Source) else {}
    if (plan is not None and plan.tail) or sample_map is not None:  # Python runs functions on each sample
        if torch is None or as_numpy:
            raise ValueError("stoker.Loader: Python's per-sample functions (sample_map=, a transform's tail) give "
                             "torch tensors; they need torch, without as_numpy")
        step = _workers.Step(plan, sample_map)
        for name in ("decode_on", "device"):
            if (device if name == "device" else options.get(name, own.get(name))) not in (None, "cpu"):
                raise ValueError(f"stoker.Loader: {name}= does not go with functions Python runs on each sample ("
                                 f"{', '.join(step.describe())}): copy the batches to the GPU with .to()")
        kind = source.kind if isinstance(source, Source) else source
        if kind in _options.SOURCES and "images" in _options.SOURCES[kind][2]:
            keys = bool(options.get("keys", own.get("keys", False)))
            jvm["keys"] = True  # each sample's functions are seeded by its key
            options.pop("keys", None)
            own.pop("keys", None)
    if isinstance(source, Source):
        return Source(source.kind, *source.paths, **own, **jvm), plan, step, keys
    options.update(jvm)
    return source, plan, step, keys


def distributed() -> Tuple[int, int]:
    """(rank, world size) from torch.distributed when it is initialized, else from the environment."""
    if torch is not None:
        try:
            import torch.distributed as dist
            if dist.is_available() and dist.is_initialized():
                return dist.get_rank(), dist.get_world_size()
        except ImportError:
            pass
    return int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))


def check_state(state: Any) -> None:
    if not isinstance(state, dict) or state.get("version") != 1 or not isinstance(state.get("loader"), (dict, list)):
        raise ValueError("stoker.Loader: load_state_dict takes what state_dict() returned, or a list of them")


def _check_int(name: str, value: Any, lo: int, hi: Optional[int]) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < lo or (hi is not None and value > hi):
        bound = f"in [{lo}, {hi}]" if hi is not None else f">= {lo}"
        raise ValueError(f"stoker.Loader: option '{name}' must be an integer {bound}, got {value!r}")


def _dataloader_keywords(options: Dict[str, Any], device: Any) -> None:
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


def _server_option(server: Any) -> str:
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


def _device_option(device: Any, as_numpy: Optional[bool]) -> Any:
    """None for the host (no device, or the CPU); else the CUDA device, checked now."""
    if device is None:
        return None
    kind = device.type if torch is not None and isinstance(device, torch.device) else device
    if isinstance(kind, str) and kind.split(":")[0] == "cpu":
        return None
    if not isinstance(kind, str) or kind.split(":")[0] != "cuda":
        raise ValueError(f"stoker.Loader: option 'device' must be 'cuda', 'cuda:N', 'cpu' or a torch.device, "
                         f"got {device!r}")
    if as_numpy:
        raise ValueError("stoker.Loader: device= yields torch tensors; it does not go with as_numpy=True")
    reason = _device.cuda_missing_reason(torch, device)
    if reason is not None:
        raise StokerError("stoker.Loader(device=" + repr(str(device)) + "): " + reason)
    return device
