"""The options of ``stoker.Loader``, checked and turned into specs.

A loader is a source spec and a loader spec, as the server's ``dev.stoker.sources`` reads them
(JSON; names in snake case): ``{"source": {"kind": "tokens", "paths": [...], "seq_len": 1024},
"loader": {"batch_size": 32, ...}}``. Keywords are the specs' option names (the CLI's flags are the
same names, dashed); the image options of ``shards`` and ``folder`` go into the nested ``images``
spec, the cache options of the sources that read remote files into ``cache``. Every option is
checked here, before any JVM work starts; the server checks them again. The bridge's
``SpecContractTest`` holds these tables to the Java specs.
"""

import difflib
import numbers
import os
import re

_INT = "int"
_FLOAT = "float"
_STR = "str"
_FLAG = "flag"
_LIST = "list"
_PLACE = "place"  # decode_on: "cpu", or where the batches' JPEGs are decoded ("cuda", "cuda:N", "torchvision")
_FOLDER = "folder"  # a folder, made absolute here: a server opens it where the caller meant it


class _Opt:
    def __init__(self, kind, minimum=None, choices=None, auto=False, floats=False, modes=()):
        self.kind = kind
        self.minimum = minimum
        self.choices = choices
        self.auto = auto
        self.floats = floats
        self.modes = modes  # a folder option's words that are not folders ("ram", "disk")


# The loader spec (LoaderSpec).
LOADER = {
    "batch_size": _Opt(_INT, 1),
    "workers": _Opt(_INT, 0, auto=True),
    "prefetch": _Opt(_INT, 1, auto=True),
    "seed": _Opt(_INT),
    "epoch": _Opt(_INT, 0),
    "rank": _Opt(_INT, 0),
    "world_size": _Opt(_INT, 1),
    "order": _Opt(_STR, choices=("shuffle", "sequential")),
    "shuffle_window": _Opt(_INT, 0),
    "shuffle_window_bytes": _Opt(_INT, 0),
    "timeout_ms": _Opt(_INT, 1),
    "drop_last": _Opt(_FLAG),
    "errors": _Opt(_STR, choices=("fail", "skip-sample", "skip-shard")),
    "cores": _Opt(_INT, 1),
    "memory_limit": _Opt(_INT, 1),
    "streams": _Opt(_INT, 1),
    "in_memory": _Opt(_FLAG),
}

# Nested specs: Images (shards, folder) and RemoteCache (the sources that read remote files).
_IMAGES = {"transform": _Opt(_STR, choices=("train", "eval", "none", "train224", "eval224")),
           "size": _Opt(_INT, 1),
           "scale": _Opt(_LIST, floats=True),
           "ratio": _Opt(_LIST, floats=True),
           "flip": _Opt(_FLOAT, 0),
           "resize": _Opt(_INT, 1),
           "label": _Opt(_STR),
           "keys": _Opt(_FLAG),
           "members": _Opt(_LIST),
           "image_dtype": _Opt(_STR, choices=("float32", "uint8")),
           "decode_on": _Opt(_PLACE),
           "cache": _Opt(_FOLDER, modes=("ram", "disk")),
           "cache_max_side": _Opt(_INT, 1),
           "cache_bytes": _Opt(_INT, 1)}
_CACHE = {"cache_dir": _Opt(_FOLDER), "cache_size": _Opt(_INT, 1)}
GROUPS = {"images": _IMAGES, "cache": _CACHE}

_DECODE = ("example", "sequence_example", "raw")

# Each source: where its paths go ("paths": a list, "path": one, None: no paths), its own options,
# and the nested specs it takes.
SOURCES = {
    "synthetic": (None, {"samples": _Opt(_INT, 0), "sample_bytes": _Opt(_INT, 1), "work_us": _Opt(_FLOAT, 0)}, ()),
    "tokens": ("paths", {
        "seq_len": _Opt(_INT, 1),
        "dtype": _Opt(_STR, choices=("uint16", "uint32", "int32", "int64", "uint8")),
        "out_dtype": _Opt(_STR, choices=("int64", "int32")),
        "windows": _Opt(_STR, choices=("disjoint", "random")),
        "weights": _Opt(_LIST, floats=True),
        "separator": _Opt(_INT, -1),
        "raw": _Opt(_FLAG),
    }, ("cache",)),
    "jsonl": ("paths", {
        "tokenizer": _Opt(_STR, choices=("bytes", "r50k_base", "gpt2", "p50k_base", "cl100k_base", "o200k_base")),
        "seq_len": _Opt(_INT, 1),
        "field": _Opt(_STR),
        "shard_kb": _Opt(_INT, 1),
        "shard_buffer": _Opt(_INT, 1),
        "out_dtype": _Opt(_STR, choices=("int64", "int32")),
        "window_cache": _Opt(_FOLDER, modes=("disk",)),
    }, ("cache",)),
    "shards": ("paths", {"stream": _Opt(_FLAG)}, ("images", "cache")),
    "folder": ("path", {}, ("images",)),
    "hdf5": ("path", {"datasets": _Opt(_LIST)}, ("cache",)),
    "sqlite": ("path", {"pulses": _Opt(_STR), "truth": _Opt(_STR), "index": _Opt(_STR), "features": _Opt(_LIST),
                        "truth_features": _Opt(_LIST), "dtype": _Opt(_STR, choices=("float32", "float64", "int64"))},
               ("cache",)),
    "parquet": ("path", {"columns": _Opt(_LIST), "where": _Opt(_STR), "cache_mb": _Opt(_INT, 1),
                         "shuffle_row_groups": _Opt(_INT, 1)}, ()),
    "mds": ("path", {"fields": _Opt(_LIST), "cache_mb": _Opt(_INT, 1), "image": _Opt(_STR)}, ("images", "cache")),
    "tfrecord": ("paths", {"compression": _Opt(_STR, choices=("auto", "none", "gzip", "zlib")),
                           "decode": _Opt(_STR, choices=_DECODE), "fields": _Opt(_LIST), "image": _Opt(_STR)},
                 ("images", "cache")),
    "arrayrecord": ("paths", {"decode": _Opt(_STR, choices=_DECODE), "fields": _Opt(_LIST), "image": _Opt(_STR)},
                    ("images", "cache")),
    "arrow": ("paths", {"fields": _Opt(_LIST), "image": _Opt(_STR)}, ("images", "cache")),
    "litdata": ("path", {"block_size": _Opt(_INT, 1), "password_env": _Opt(_STR), "fields": _Opt(_LIST),
                         "image": _Opt(_STR)}, ("images", "cache")),
}

# Other names for options: PyTorch DataLoader's, and the CLI's flags that name one value.
ALIASES = {"batch": "batch_size", "num_workers": "workers", "dataset": "datasets"}
# Keywords that are another option's value: jsonl's skip_bad=True is errors="skip-sample".
_SKIP_BAD = "skip_bad"


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
    if opt.kind == _FLAG:
        if not isinstance(value, bool):
            raise _bad(name, value, "must be True or False")
        return value
    if opt.kind == _PLACE:
        place = str(value) if type(value).__name__ == "device" else value  # a torch.device
        if not isinstance(place, str) or not (place in ("cpu", "cuda", "torchvision") or place.startswith("cuda:")):
            raise _bad(name, value, "must be 'cpu' (the workers decode), 'cuda', 'cuda:N' or a torch.device (the GPU "
                                    "decodes), or 'torchvision' (the same on the CPU)")
        return "cpu" if place == "cpu" else "device"
    if opt.auto and value == "auto":
        return None
    if opt.kind == _INT:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise _bad(name, value, "must be an integer" + (" or 'auto'" if opt.auto else ""))
        if opt.minimum is not None and value < opt.minimum:
            raise _bad(name, value, f"must be >= {opt.minimum}")
        return int(value)
    if opt.kind == _FLOAT:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise _bad(name, value, "must be a number")
        if opt.minimum is not None and value < opt.minimum:
            raise _bad(name, value, f"must be >= {opt.minimum}")
        return float(value)
    if opt.kind == _STR:
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
        if not isinstance(value, str) or not value:
            raise _bad(name, value, "must be a non-empty string")
        if opt.choices and value not in opt.choices:
            raise _bad(name, value, "must be one of " + ", ".join(opt.choices))
        return value
    if opt.kind == _FOLDER:
        return _folder(name, opt.modes, value)
    if opt.kind == _LIST:
        items = [value] if isinstance(value, (str, numbers.Real)) else list(value)
        if not items:
            raise _bad(name, value, "must not be empty")
        if opt.floats:
            if not all(isinstance(v, numbers.Real) and not isinstance(v, bool) and v >= 0 for v in items):
                raise _bad(name, value, "must be numbers >= 0")
            return [float(v) for v in items]
        if not all(isinstance(v, str) and v and "," not in v for v in items):
            raise _bad(name, value, "must be names (strings without commas)")
        return items
    raise AssertionError(opt.kind)


# NOTE [Paths are the caller's]: a server (``server=``, one ``stoker serve`` a node) runs in a
# working folder of its own, so every local path and folder is made absolute here, against this
# process's working folder, before a spec leaves it. URLs stay as they are. A folder option that
# also takes words ("ram", "disk") takes a folder only as something that reads as a path (a
# ``os.PathLike``, or a string with a "/"), so that a misspelt word is refused, not made a folder.
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def local_path(path):
    """``path`` made absolute against this process's working folder, unless it is a URL."""
    return path if _URL.match(path) else os.path.abspath(path)


# as stoker-storage's Storage.redact: a URL's password, and the signatures, credentials and tokens
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
            if _check(name, _Opt(_FLAG), value):
                if options.get("errors", "skip-sample") != "skip-sample":
                    raise ValueError(f"stoker.Loader: skip_bad is errors='skip-sample', not errors={options['errors']!r}")
                loader["errors"] = "skip-sample"
            continue
        if canonical not in where:
            near = difflib.get_close_matches(canonical, list(where) + list(ALIASES), n=1)
            hint = f" (did you mean '{near[0]}'?)" if near else ""
            raise ValueError(f"stoker.Loader: unknown option '{name}' for source '{source}'{hint}")
        into, opt = where[canonical]
        into[canonical] = _check(name, opt, value)
    if source == "hdf5" and "datasets" not in given:
        raise ValueError("stoker.Loader: source 'hdf5' needs datasets=[...] (the datasets to read)")
    if source == "sqlite" and "pulses" not in given:
        raise ValueError("stoker.Loader: source 'sqlite' needs pulses=TABLE (the table of many rows per event)")
    for g in groups:
        if not src[g]:
            del src[g]
    return {"source": src, "loader": loader}
