"""The options of ``stoker.Loader``: the CLI's ``stoker bench SOURCE`` options, dashes as underscores.

Every option is checked here, before any JVM work starts, and turned into the command line the
server parses with the same code as ``stoker bench`` (so the same options give the same batches).
``tests/test_options.py`` checks this table against the CLI's own.
"""

import difflib
import numbers
import os

_INT = "int"
_FLOAT = "float"
_STR = "str"
_FLAG = "flag"
_LIST = "list"


class _Opt:
    def __init__(self, kind, minimum=None, choices=None, auto=False, floats=False):
        self.kind = kind
        self.minimum = minimum
        self.choices = choices
        self.auto = auto
        self.floats = floats


# Options every source takes (the CLI's BenchOptions less the bench loop's own).
COMMON = {
    "batch": _Opt(_INT, 1),
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
}

_TRANSFORM = {"transform": _Opt(_STR, choices=("train", "eval", "none", "train224", "eval224")),
              "image_dtype": _Opt(_STR, choices=("float32", "uint8")),
              "size": _Opt(_INT, 1),
              "scale": _Opt(_LIST, floats=True),
              "ratio": _Opt(_LIST, floats=True),
              "flip": _Opt(_FLOAT, 0),
              "resize": _Opt(_INT, 1),
              "label": _Opt(_STR),
              "keys": _Opt(_FLAG),
              "members": _Opt(_LIST)}
# sources that read remote files (URLs) through the cache
_CACHE = {"cache_dir": _Opt(_STR), "cache_size": _Opt(_INT, 1)}

# The options of each source, with whether it takes paths.
SOURCES = {
    "synthetic": (False, {"samples": _Opt(_INT, 0), "sample_bytes": _Opt(_INT, 1), "work_us": _Opt(_FLOAT, 0)}),
    "tokens": (True, dict(_CACHE, **{
        "seq_len": _Opt(_INT, 1),
        "dtype": _Opt(_STR, choices=("uint16", "uint32", "int32", "int64", "uint8")),
        "out_dtype": _Opt(_STR, choices=("int64", "int32")),
        "windows": _Opt(_STR, choices=("disjoint", "random")),
        "weights": _Opt(_LIST, floats=True),
        "separator": _Opt(_INT),
    })),
    "jsonl": (True, dict(_CACHE, **{
        "tokenizer": _Opt(_STR, choices=("bytes", "r50k_base", "gpt2", "p50k_base", "cl100k_base", "o200k_base")),
        "seq_len": _Opt(_INT, 1),
        "field": _Opt(_STR),
        "shard_kb": _Opt(_INT, 1),
        "shard_buffer": _Opt(_INT, 1),
        "out_dtype": _Opt(_STR, choices=("int64", "int32")),
        "skip_bad": _Opt(_FLAG),
    })),
    "shards": (True, dict(_TRANSFORM, **_CACHE, stream=_Opt(_FLAG))),
    "folder": (True, dict(_TRANSFORM)),
    "hdf5": (True, dict(_CACHE, dataset=_Opt(_LIST))),
    "parquet": (True, {"columns": _Opt(_LIST), "where": _Opt(_STR), "cache_mb": _Opt(_INT, 1),
                       "shuffle_row_groups": _Opt(_INT, 1)}),
}

# PyTorch DataLoader names, accepted as aliases.
ALIASES = {"batch_size": "batch", "num_workers": "workers"}


def _bad(name, value, what):
    return ValueError(f"stoker.Loader: option '{name}' {what}, got {value!r}")


def _check(name, canonical, opt, value):
    flag = "--" + canonical.replace("_", "-")
    if opt.kind == _FLAG:
        if not isinstance(value, bool):
            raise _bad(name, value, "must be True or False")
        return [flag] if value else []
    if opt.auto and value == "auto":
        return [flag, "auto"]
    if opt.kind == _INT:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise _bad(name, value, "must be an integer" + (" or 'auto'" if opt.auto else ""))
        if opt.minimum is not None and value < opt.minimum:
            raise _bad(name, value, f"must be >= {opt.minimum}")
        return [flag, str(int(value))]
    if opt.kind == _FLOAT:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise _bad(name, value, "must be a number")
        if opt.minimum is not None and value < opt.minimum:
            raise _bad(name, value, f"must be >= {opt.minimum}")
        return [flag, repr(float(value))]
    if opt.kind == _STR:
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
        if not isinstance(value, str) or not value:
            raise _bad(name, value, "must be a non-empty string")
        if opt.choices and value not in opt.choices:
            raise _bad(name, value, "must be one of " + ", ".join(opt.choices))
        return [flag, value]
    if opt.kind == _LIST:
        items = [value] if isinstance(value, (str, numbers.Real)) else list(value)
        if not items:
            raise _bad(name, value, "must not be empty")
        if opt.floats:
            if not all(isinstance(v, numbers.Real) and not isinstance(v, bool) and v >= 0 for v in items):
                raise _bad(name, value, "must be numbers >= 0")
            return [flag, ",".join(repr(float(v)) for v in items)]
        if not all(isinstance(v, str) and v and "," not in v for v in items):
            raise _bad(name, value, "must be names (strings without commas)")
        return [f for v in items for f in (flag, v)] if canonical == "dataset" else [flag, ",".join(items)]
    raise AssertionError(opt.kind)


def command_line(source, paths, options):
    """The CLI arguments for ``stoker bench SOURCE PATHS... OPTIONS`` (without ``bench``); raises
    ValueError for an unknown source or option or a bad value."""
    if source not in SOURCES:
        raise ValueError(f"stoker.Loader: unknown source {source!r}; one of " + ", ".join(SOURCES))
    takes_paths, own = SOURCES[source]
    allowed = dict(COMMON, **own)
    if takes_paths and not paths:
        raise ValueError(f"stoker.Loader: source {source!r} needs at least one path")
    if not takes_paths and paths:
        raise ValueError(f"stoker.Loader: source {source!r} takes no paths, got {list(paths)!r}")
    if source in ("hdf5", "parquet", "folder") and len(paths) != 1:
        raise ValueError(f"stoker.Loader: source {source!r} takes one path, got {len(paths)}")
    args = [source]
    for p in paths:
        p = os.fspath(p)
        if not isinstance(p, str) or not p:
            raise ValueError(f"stoker.Loader: paths must be non-empty strings, got {p!r}")
        args.append(p)
    given = {}
    for name, value in options.items():
        canonical = ALIASES.get(name, name)
        if canonical in given:
            raise ValueError(f"stoker.Loader: option '{name}' is given twice (as '{given[canonical]}' too)")
        given[canonical] = name
        if canonical not in allowed:
            near = difflib.get_close_matches(canonical, list(allowed) + list(ALIASES), n=1)
            hint = f" (did you mean '{near[0]}'?)" if near else ""
            raise ValueError(f"stoker.Loader: unknown option '{name}' for source '{source}'{hint}")
        args += _check(name, canonical, allowed[canonical], value)
    if source == "hdf5" and "dataset" not in given:
        raise ValueError("stoker.Loader: source 'hdf5' needs dataset=[...] (the datasets to read)")
    return args
