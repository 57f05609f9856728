"""The options of ``stoker.Loader``, checked and turned into specs.

A loader is a source spec and a loader spec, as the server's ``dev.stoker.sources`` reads them
(JSON; names in snake case): ``{"source": {"kind": "tokens", "paths": [...], "seq_len": 1024},
"loader": {"batch_size": 32, ...}}``. Keywords are the specs' option names (the CLI's flags are the
same names, dashed); the image options of ``shards`` and ``folder`` go into the nested ``images``
spec, the shard cache's options of the sources that read remote files into ``cache``. Every option
is checked here, before any JVM work starts, against the schema the Java specs write; the server
checks them again. The bridge's ``SpecContractTest`` holds what this module reads to the specs.
"""

import difflib
import json
import numbers
import os
import re

# Every option's type, least value, words and default come from the specs themselves (NOTE [One
# schema], in dev.stoker.sources.Schema): ``_schema.json`` is the JSON Schema that
# ``Specs.schema()`` writes, with each option's meaning from its flag (the CLI's
# ``OptionsReference`` writes the file, and a test holds it to the Java specs). An option's kind
# is its ``format`` where it has one, else its JSON type.
_INT = "integer"
_FLOAT = "number"
_STR = "string"
_FLAG = "boolean"
_LIST = "array"
_PLACE = "place"  # decode_on: "cpu", or where the batches' JPEGs are decoded ("cuda", "cuda:N", "torchvision")
_FOLDER = "folder"  # a folder, made absolute here: a server opens it where the caller meant it
_PADS = "pads"  # {glob: length}: ragged fields padded (LoaderSpec.pad)
_STACKS = "stacks"  # {name: [field, ...]}: ragged fields stacked (LoaderSpec.stack)
_FILE = "file"  # a file, made absolute here, as a folder is
_FILES = "files"  # the arrays source's fields: name -> a path, or {"path", "dtype", "shape", "lengths"}
_LABELLED = "labelled"  # {group: [path, ...]}: groups of files, each a label (the root source's groups)
_WEIGHTS = "weights"  # {group: weight}: each group's share of an epoch's draws

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "_schema.json"), encoding="utf-8") as _f:
    SCHEMA = json.load(_f)
_DEFS = SCHEMA["$defs"]
_PATHS = ("paths", "path")  # a source's paths: positional, not keywords


def _own(name):
    """A spec's own options, name -> its schema: not its kind, its paths, nor its nested specs."""
    return {n: o for n, o in _DEFS[name]["properties"].items() if n != "kind" and n not in _PATHS and "$ref" not in o}


def kind_of(opt):
    """What an option's value is: its format, or its JSON type."""
    return opt.get("format", opt["type"])


# The loader spec (LoaderSpec), and the nested specs: Images (the image sources) and RemoteCache
# (the sources that read remote files).
LOADER = _own("loader")
GROUPS = {name: _own(name) for name, d in _DEFS.items() if name != "loader" and "kind" not in d["properties"]}

# Each source: where its paths go ("paths": a list, "path": one, None: no paths), its own options,
# and the nested specs it takes.
SOURCES = {kind: (next((p for p in _PATHS if p in d["properties"]), None), _own(kind),
                  tuple(n for n, o in d["properties"].items() if "$ref" in o))
           for kind, d in _DEFS.items() if "kind" in d["properties"]}

# Other names for options: PyTorch DataLoader's, the CLI's flags that name one value, and the
# caches' names before they were named by what they keep (image_cache, shard_cache, decoded_cache_mb).
ALIASES = {"batch": "batch_size", "num_workers": "workers", "dataset": "datasets",
           "cache": "image_cache", "cache_max_side": "image_cache_max_side", "cache_bytes": "image_cache_bytes",
           "cache_dir": "shard_cache", "cache_size": "shard_cache_bytes", "cache_mb": "decoded_cache_mb"}
# Keywords that are another option's value: jsonl's skip_bad=True is errors="skip-sample".
_SKIP_BAD = "skip_bad"

# The Python side's own keywords (stoker.Loader's parameters), for the hints of a misspelt one.
PYTHON = ("as_numpy", "ahead", "ring_bytes", "timeout", "fields", "map", "collate_fn", "sample_map", "python_workers",
          "server", "device", "shuffle")

# NOTE [A DataLoader's keywords]: torch's DataLoader keywords that Stoker does not take as they
# are, each refused with what to give instead (``Loader`` accepts pin_memory, persistent_workers
# and prefetch_factor where they mean something, before these are looked at). A misspelt option
# is never answered with one of these, nor one of these with a Stoker option of another meaning
# (pin_memory is no in_memory).
DATALOADER = {
    "pin_memory": "Stoker's batches are in shared memory already (the ring the JVM collates into), not in pageable "
                  "memory a copy must go through; device='cuda' page-locks the ring's slots (cudaHostRegister) and "
                  "copies each batch to the GPU on a side stream a few batches ahead: give device='cuda' instead "
                  "(pin_memory=True is then accepted), or copy with .to('cuda') yourself",
    "prefetch_factor": "it counts batches per worker process; Stoker's workers are threads of one JVM, and "
                       "prefetch= counts the batches prepared ahead in all: give prefetch=N (or num_workers=N with "
                       "it, and prefetch is prefetch_factor * num_workers, as many as a DataLoader's)",
    "worker_init_fn": "Stoker's workers are threads of the JVM and run no Python; a function of each batch is map=",
    "generator": "the order comes from seed= (an integer every rank and every run agree on): give "
                 "seed=N (for a torch.Generator, seed=generator.initial_seed())",
    "sampler": "the order is Stoker's: shuffle=True|False (order='shuffle'|'sequential') with seed=, and rank= and "
               "world_size= (torch.distributed's by default) for a DistributedSampler's share",
    "batch_sampler": "batches are made by the JVM: batch_size= and drop_last=, with shuffle= and seed= for the order",
    "multiprocessing_context": "Stoker's workers are threads of one JVM, not Python processes",
    "in_order": "Stoker's batches always come in order, and are the same for any number of workers",
}


def _near(name, candidates):
    """A hint for a misspelt option: the near one, unless the name is a DataLoader keyword."""
    if name in DATALOADER:
        return ""
    near = difflib.get_close_matches(name, [c for c in candidates if c not in DATALOADER], n=1, cutoff=0.75)
    return f" (did you mean '{near[0]}'?)" if near else ""


def schema():
    """The options as the specs name them: {"loader": [...], "sources": {kind: {option: group}}}, the
    group being the nested spec ("" for the source's own); for the contract test."""
    sources = {}
    for kind, (paths, own, groups) in SOURCES.items():
        names = {} if paths is None else {paths: ""}
        names.update({n: "" for n in own})
        for g in groups:
            names.update({n: g for n in GROUPS[g]})
        sources[kind] = names
    return {"loader": list(LOADER), "sources": sources}


def _bad(name, value, what):
    return ValueError(f"stoker.Loader: option '{name}' {what}, got {value!r}")


def _check(name, opt, value):
    """The option's JSON value."""
    kind = kind_of(opt)
    if kind == _FLAG:
        if not isinstance(value, bool):
            raise _bad(name, value, "must be True or False")
        return value
    if kind == _PLACE:
        place = str(value) if type(value).__name__ == "device" else value  # a torch.device
        if not isinstance(place, str) or not (place in ("cpu", "cuda", "torchvision") or place.startswith("cuda:")):
            raise _bad(name, value, "must be 'cpu' (the workers decode), 'cuda', 'cuda:N' or a torch.device (the GPU "
                                    "decodes), or 'torchvision' (the same on the CPU)")
        return "cpu" if place == "cpu" else "device"
    auto, minimum, choices = opt.get("auto", False), opt.get("minimum"), opt.get("enum")
    if auto and value == "auto":
        return None
    if kind == _INT:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise _bad(name, value, "must be an integer" + (" or 'auto'" if auto else ""))
        if minimum is not None and value < minimum:
            raise _bad(name, value, f"must be >= {minimum}")
        return int(value)
    if kind == _FLOAT:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise _bad(name, value, "must be a number")
        if minimum is not None and value < minimum:
            raise _bad(name, value, f"must be >= {minimum}")
        return float(value)
    if kind == _STR:
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
        if not isinstance(value, str) or not value:
            if name == "transform" and value is not None:  # torchvision's objects are the Python side's
                raise _bad(name, value, "of a source must be one of " + ", ".join(choices) + "; torchvision's "
                                        "transforms go to stoker.Loader(source, transform=...)")
            raise _bad(name, value, "must be a non-empty string")
        if choices and value not in choices:
            raise _bad(name, value, "must be one of " + ", ".join(choices))
        return value
    if kind == _FOLDER:
        return _folder(name, tuple(opt.get("words", ())), value)
    if kind == _PADS:
        if not isinstance(value, dict) or not value:
            raise _bad(name, value, "must be a dict of field-name globs to lengths, e.g. {'Jet_*': 128}")
        for glob, n in value.items():
            if not isinstance(glob, str) or not glob or isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
                raise _bad(name, value, "must map field-name globs (strings) to lengths (integers >= 1)")
        return {glob: int(n) for glob, n in value.items()}
    if kind == _STACKS:
        if not isinstance(value, dict) or not value:
            raise _bad(name, value, "must be a dict of stack names to lists of fields, e.g. {'particles': ['Part_px', "
                                    "'Part_py']}")
        for stack, fields in value.items():
            if not isinstance(stack, str) or not stack or isinstance(fields, str) or not isinstance(fields, (list, tuple)) \
                    or not fields or not all(isinstance(f, str) and f for f in fields):
                raise _bad(name, value, "must map stack names (strings) to non-empty lists of field names")
        return {stack: list(fields) for stack, fields in value.items()}
    if kind == _LABELLED:
        if not isinstance(value, dict) or not value:
            raise _bad(name, value, "must map group names to lists of files, e.g. {'signal': ['s.root'], "
                                    "'background': ['b.root']}")
        out = {}
        for group, files in value.items():
            if isinstance(files, (str, os.PathLike)):
                files = [files]
            if not isinstance(group, str) or not group or not isinstance(files, (list, tuple)) or not files \
                    or not all(isinstance(f, (str, os.PathLike)) and os.fspath(f) for f in files):
                raise _bad(name, value, "must map group names (strings) to non-empty lists of files")
            out[group] = [local_path(os.fspath(f)) for f in files]
        return out
    if kind == _WEIGHTS:
        if not isinstance(value, dict) or not value:
            raise _bad(name, value, "must map group names to weights, e.g. {'signal': 1, 'background': 3}")
        for group, w in value.items():
            if not isinstance(group, str) or isinstance(w, bool) or not isinstance(w, numbers.Real) or not w >= 0 \
                    or w == float("inf"):
                raise _bad(name, value, "must map group names (strings) to finite weights >= 0")
        if not any(w > 0 for w in value.values()):
            raise _bad(name, value, "must not all be 0")
        return {group: float(w) for group, w in value.items()}
    if kind == _FILE:
        return _folder(name, (), value)
    if kind == _FILES:
        return _files(name, value)
    if kind == _LIST:
        items = [value] if isinstance(value, (str, numbers.Real)) else list(value)
        if not items:
            raise _bad(name, value, "must not be empty")
        if opt["items"]["type"] == _FLOAT:
            least = opt["items"].get("minimum")
            if not all(isinstance(v, numbers.Real) and not isinstance(v, bool) and (least is None or v >= least)
                       for v in items):
                raise _bad(name, value, "must be numbers" + ("" if least is None else f" >= {least}"))
            return [float(v) for v in items]
        if not all(isinstance(v, str) and v and "," not in v for v in items):
            raise _bad(name, value, "must be names (strings without commas)")
        return items
    raise AssertionError(kind)


# NOTE [Paths are the caller's]: a server (``server=``, one ``stoker serve`` a node) runs in a
# working folder of its own, so every local path and folder is made absolute here, against this
# process's working folder, before a spec leaves it. URLs stay as they are. A folder option that
# also takes words ("ram", "disk") takes a folder only as something that reads as a path (a
# ``os.PathLike``, or a string with a "/"), so that a misspelt word is refused, not made a folder.
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def local_path(path):
    """``path`` made absolute against this process's working folder, unless it is a URL."""
    return path if _URL.match(path) else os.path.abspath(path)


# as stoker-storage's Locations.redact: a URL's password, and the signatures, credentials and tokens
# of presigned and token URLs
_PASSWORD = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://[^/:@\s]*):[^/@\s]*@")
_SECRET_PARAMETER = re.compile(r"(?i)([?&](?:X-Amz-Signature|X-Amz-Credential|X-Amz-Security-Token|X-Goog-Signature"
                               r"|X-Goog-Credential|Signature|sig|token|access_token|AWSAccessKeyId)=)[^&#\s]*")


def redact(text):
    """``text`` (a URL, or words holding URLs) with its secrets replaced by ``***``."""
    return _SECRET_PARAMETER.sub(r"\1***", _PASSWORD.sub(r"\1:***@", text))


def _folder(name, modes, value):
    pathlike = isinstance(value, os.PathLike)
    if pathlike:
        value = os.fspath(value)
    if not isinstance(value, str) or not value:
        raise _bad(name, value, "must be a non-empty string or path")
    if value in modes and not pathlike:
        return value
    if modes and not pathlike and "/" not in value:
        raise _bad(name, value, "must be " + " or ".join(repr(m) for m in modes) + ", or a folder: a path with a '/' "
                                "(for example './" + value + "') or a pathlib.Path")
    return local_path(value)


_FIELD = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")


def _file(name, field, value):
    """One field's file: a path, or {"path", "dtype", "shape", "lengths"} (lengths itself a file)."""
    if isinstance(value, (str, os.PathLike)):
        value = {"path": value}
    if not isinstance(value, dict):
        raise _bad(name, value, f"gives field {field!r} a path or a dict {{'path', 'dtype', 'shape', 'lengths'}}")
    unknown = set(value) - {"path", "dtype", "shape", "lengths"}
    if unknown:
        raise _bad(name, value, f"gives field {field!r} unknown keys {sorted(unknown)} (path, dtype, shape, lengths)")
    if "path" not in value:
        raise _bad(name, value, f"gives field {field!r} no 'path'")
    out = {"path": _folder(name, (), value["path"])}
    if value.get("dtype") is not None:
        dtype = value["dtype"]
        dtype = getattr(dtype, "name", dtype) if not isinstance(dtype, str) else dtype  # a numpy dtype
        if not isinstance(dtype, str) or not dtype:
            raise _bad(name, value, f"gives field {field!r} a dtype that is not a name such as 'float32'")
        out["dtype"] = dtype
    if value.get("shape") is not None:
        shape = value["shape"]
        if isinstance(shape, (str, bytes)) or not all(isinstance(d, numbers.Integral) and not isinstance(d, bool)
                                                      for d in shape) or not list(shape):
            raise _bad(name, value, f"gives field {field!r} a shape that is not a list of integers")
        out["shape"] = [int(d) for d in shape]
    if value.get("lengths") is not None:
        out["lengths"] = _file(name, field + " (lengths)", value["lengths"])
    return out


def _files(name, value):
    if not isinstance(value, dict) or not value:
        raise _bad(name, value, "must map field names to files (a non-empty dict)")
    out = {}
    for field, file in value.items():
        if not isinstance(field, str) or not _FIELD.match(field):
            raise _bad(name, field, "names a field: letters, digits, _ . -, not starting with a digit")
        out[field] = _file(name, field, file)
    return out


def check_option(name, value):
    """Checks one option of the images or cache spec by its name (ValueError if bad)."""
    for group in GROUPS.values():
        if name in group:
            return _check(name, group[name], value)
    raise KeyError(name)


def spec(source, paths, options):
    """The specs ``stoker.Loader(source, *paths, **options)`` describes, {"source": ..., "loader": ...};
    raises ValueError for an unknown source or option or a bad value."""
    if source not in SOURCES:
        raise ValueError(f"stoker.Loader: unknown source {source!r}; one of " + ", ".join(SOURCES))
    paths_key, own, groups = SOURCES[source]
    if source == "arrays":
        if bool(paths) == ("files" in options):
            raise ValueError("stoker.Loader: source 'arrays' takes one .pt, .safetensors or .npz file, or files={name: "
                             "file, ...}, one of the two")
        if not paths:
            paths_key = None
    if source == "root" and "groups" in options:
        if paths:
            raise ValueError("stoker.Loader: source 'root' takes files as paths or as groups ({'signal': [...], "
                             "'background': [...]}), not both")
        paths_key = None
    if paths_key is not None and not paths:
        raise ValueError(f"stoker.Loader: source {source!r} needs at least one path")
    if paths_key is None and paths:
        raise ValueError(redact(f"stoker.Loader: source {source!r} takes no paths, got {[str(p) for p in paths]!r}"))
    if paths_key == "path" and len(paths) != 1:
        raise ValueError(f"stoker.Loader: source {source!r} takes one path, got {len(paths)}")
    checked = []
    for p in paths:
        if not isinstance(p, (str, os.PathLike)):
            raise ValueError(f"stoker.Loader: source {source!r} takes paths or URLs (strings or os.PathLike), "
                             f"got {p!r} ({type(p).__name__})")
        p = os.fspath(p)
        if not isinstance(p, str) or not p:
            raise ValueError(f"stoker.Loader: paths must be non-empty strings, got {p!r}")
        checked.append(local_path(p))
    src = {"kind": source}
    if paths_key is not None:
        src[paths_key] = checked if paths_key == "paths" else checked[0]
    loader = {}
    where = {name: (src, opt) for name, opt in own.items()}
    for g in groups:
        where.update({name: (src.setdefault(g, {}), opt) for name, opt in GROUPS[g].items()})
    where.update({name: (loader, opt) for name, opt in LOADER.items()})
    given = {}
    for name, value in options.items():
        canonical = ALIASES.get(name, name)
        if canonical in given:
            raise ValueError(f"stoker.Loader: option '{name}' is given twice (as '{given[canonical]}' too)")
        given[canonical] = name
        if canonical == _SKIP_BAD and source == "jsonl":
            if _check(name, {"type": _FLAG}, value):
                if options.get("errors", "skip-sample") != "skip-sample":
                    raise ValueError(f"stoker.Loader: skip_bad is errors='skip-sample', not errors={options['errors']!r}")
                loader["errors"] = "skip-sample"
            continue
        if canonical not in where:
            if canonical in DATALOADER:
                raise ValueError(f"stoker.Loader: option '{name}' (a DataLoader's) is not taken: {DATALOADER[canonical]}")
            others = [k for k, (_, other, gs) in SOURCES.items()
                      if canonical in other or any(canonical in GROUPS[g] for g in gs)]
            if others:
                raise ValueError(f"stoker.Loader: option '{name}' is not one of source '{source}'; it is of "
                                 + ", ".join(f"'{k}'" for k in others))
            hint = _near(canonical, list(where) + list(ALIASES) + list(PYTHON))
            raise ValueError(f"stoker.Loader: unknown option '{name}': not one of the loader, of the Python side, nor of "
                             f"source '{source}'{hint}")
        into, opt = where[canonical]
        into[canonical] = _check(name, opt, value)
    if source == "hdf5" and "datasets" not in given:
        raise ValueError("stoker.Loader: source 'hdf5' needs datasets=[...] (the datasets to read)")
    if source == "root" and "weights" in src and set(src["weights"]) != set(src.get("groups", {})):
        raise ValueError(f"stoker.Loader: weights= must give one weight to each group {list(src.get('groups', {}))}, "
                         f"got {list(src['weights'])}")
    if source == "root" and "tree" not in given:
        raise ValueError("stoker.Loader: source 'root' needs tree=... (the TTree or RNTuple to read, dir/name in a subdirectory)")
    if source == "sqlite" and "pulses" not in given:
        raise ValueError("stoker.Loader: source 'sqlite' needs pulses=TABLE (the table of many rows per event)")
    for g in groups:
        if not src[g]:
            del src[g]
    return {"source": src, "loader": loader}
