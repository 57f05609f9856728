"""Imports uproot from its source tree with numpy only (no awkward, fsspec or cramjam installed).

uproot 5 is a pure-Python package; offline it is run from a checkout of its source:

    git clone https://github.com/scikit-hep/uproot5   # or any snapshot; 5388b857 is the one measured
    export UPROOT_SRC=/path/to/uproot5                  # the folder that holds src/uproot

(default: /tmp/stoker-bench/uproot5). Its third-party imports are provided here:
  - awkward, fsspec, packaging: empty stand-ins (nothing this benchmark calls uses them: arrays are
    read with library="np", files are local);
  - cramjam (uproot's LZ4 and ZSTD codecs): a thin shim over Debian's python3-lz4 and python3-zstd
    (lz4.block.decompress is the same LZ4 block decoder; python3-xxhash verifies ROOT's checksum as
    uproot does).
  - uproot/version.py (written by uproot's build): a fixed version string.

`python3 bench/uproot_env.py [EXPECTED_JSON]` checks that uproot so run reads the real ROOT files of
../shared/physics-data/root as expected_ttrees.json says (every numeric branch: value and entry
counts, sum, first values).
"""
import os
import sys
import types

UPROOT_SRC = os.environ.get("UPROOT_SRC", "/tmp/stoker-bench/uproot5")


class _Stub(types.ModuleType):
    """A stand-in module: any name imported from it is an inert placeholder class."""

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        placeholder = type(attr, (), {})
        setattr(self, attr, placeholder)
        return placeholder


def _module(name, **attrs):
    m = _Stub(name)
    m.__dict__.update(attrs)
    m.__path__ = []  # importable as a package: "import fsspec.asyn" etc.
    sys.modules[name] = m
    return m


def _cramjam():
    import lz4.block
    import zstd

    def lz4_decompress_block(data, output_len=None):
        return lz4.block.decompress(bytes(data), uncompressed_size=output_len)

    def lz4_compress_block(data, **kw):
        return lz4.block.compress(bytes(data), store_size=False)

    def zstd_decompress(data, output_len=None):
        return zstd.decompress(bytes(data))

    def zstd_compress(data, level=None):
        return zstd.compress(bytes(data), level or 3)

    cj = types.ModuleType("cramjam")  # no xz: uproot then uses the standard library's lzma
    sys.modules["cramjam"] = cj
    cj.lz4 = types.SimpleNamespace(decompress_block=lz4_decompress_block, compress_block=lz4_compress_block)
    cj.zstd = types.SimpleNamespace(decompress=zstd_decompress, compress=zstd_compress)
    return cj


def load():
    """Returns the uproot module, imported from UPROOT_SRC."""
    if "uproot" in sys.modules:
        return sys.modules["uproot"]
    src = os.path.join(UPROOT_SRC, "src")
    if not os.path.isdir(os.path.join(src, "uproot")):
        sys.exit(f"uproot source not found at {src}/uproot: set UPROOT_SRC to a checkout of scikit-hep/uproot5")
    for name in ("awkward", "fsspec", "fsspec.core", "fsspec.asyn", "fsspec.implementations", "fsspec.implementations.cached"):
        _module(name)
    try:
        import packaging.version  # noqa: F401
    except ImportError:
        _module("packaging")
        _module("packaging.version", Version=lambda s: tuple(int(x) for x in s.split(".")[:3] if x.isdigit()))
    _cramjam()
    import importlib.util
    vspec = importlib.util.spec_from_loader("uproot.version", loader=None)
    version = importlib.util.module_from_spec(vspec)
    version.__version__ = "5.7.0"
    version.version = "5.7.0"
    sys.modules["uproot.version"] = version
    sys.path.insert(0, src)
    import uproot
    return uproot


def open_file(path):
    """uproot.open on a local file through uproot's own memory-mapped source (its default, fsspec, is absent)."""
    uproot = load()
    return uproot.open(path, handler=uproot.source.file.MemmapSource)


def check(expected_path):
    """Reads every branch listed in expected_ttrees.json (../shared/physics-data/root) with this uproot
    and compares value counts, per-entry counts, sums and first values; returns the number that differ."""
    import json

    import numpy as np

    expected = json.load(open(expected_path))
    folder = os.path.dirname(os.path.abspath(expected_path))
    bad = checked = 0
    for name, info in sorted(expected.items()):
        tree = open_file(os.path.join(folder, name))[info["tree"]] if info.get("branches") else None
        for branch, want in sorted((info.get("branches") or {}).items()):
            if "n_values" not in want:
                continue
            arr = tree[branch].array(library="np")
            if arr.dtype == object:
                counts = [len(x) for x in arr]
                parts = [np.asarray(x).ravel() for x in arr]
                flat = np.concatenate(parts) if parts else np.zeros(0)
            else:
                counts = [int(np.prod(arr.shape[1:]))] * len(arr)
                flat = arr.ravel()
            got_sum = float(flat.astype(np.float64).sum())
            same = (len(flat) == want["n_values"]
                    and abs(got_sum - want["sum"]) <= 1e-9 * max(1.0, abs(want["sum"]))
                    and np.allclose(flat[:4].astype(np.float64), want.get("first_values", [])[:4], rtol=0, atol=0)
                    and ("counts_first" not in want or counts[:8] == want["counts_first"]))
            checked += 1
            if not same:
                bad += 1
                print(f"{name}: {branch}: {len(flat)} values, sum {got_sum}, first {flat[:4].tolist()}; expected "
                      f"{want['n_values']}, {want['sum']}, {want.get('first_values')}")
    print(f"{checked} branches of {len(expected)} files checked against {expected_path}: "
          + ("all equal" if not bad else f"{bad} differ"))
    return bad


if __name__ == "__main__":
    # python3 bench/uproot_env.py [EXPECTED_JSON]: this uproot, stubs and all, reads the real files as expected
    here = os.path.dirname(os.path.abspath(__file__))
    default = os.path.join(here, "..", "..", "shared", "physics-data", "root", "expected_ttrees.json")
    sys.exit(1 if check(sys.argv[1] if len(sys.argv) > 1 else default) else 0)
