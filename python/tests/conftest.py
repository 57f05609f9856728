"""Fixtures of the bridge tests: small datasets written by numpy, tarfile and Pillow, and the CLI.

The server is found as the package finds it: $STOKER_JAR (the README's test command sets it to
the jar it just built), the runtime of an installed wheel (STOKER_TEST_INSTALLED=1), or the
repository's ./stoker launcher.
"""

import glob
import io
import json
import os
import subprocess
import sys
import tarfile

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# STOKER_TEST_INSTALLED=1: the suite runs against the stoker package installed in this Python (the
# wheel, as .ci/run tests it), not the checkout's
if os.environ.get("STOKER_TEST_INSTALLED") != "1":
    sys.path.insert(0, os.path.join(ROOT, "python"))
import stoker  # noqa: E402

# where the stoker package under test is imported from, for the child processes tests start
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(stoker.__file__)))

SHM = os.environ.get("STOKER_SHM_DIR", "/dev/shm")


def stoker_cli(*args, check=True):
    """Runs the stoker CLI (as the server runs) and returns its stdout."""
    from stoker._process import server_command
    r = subprocess.run(server_command() + [str(a) for a in args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"stoker {' '.join(map(str, args))} failed ({r.returncode}): {r.stderr}")
    return r


def read_all(source, **options):
    """Every field's values over the whole pass, in file order: tensors concatenated, ragged ones as (counts, values)."""
    got = {}
    with stoker.Loader(source, batch_size=100, shuffle=False, as_numpy=True, **options) as loader:
        for batch in loader:
            for name, v in batch.items():
                if isinstance(v, tuple):
                    offsets, values = (np.asarray(a) for a in v)
                    counts, vals = got.setdefault(name, ([], []))
                    counts.append(np.diff(offsets))
                    vals.append(values[offsets[0]:offsets[-1]])
                else:
                    got.setdefault(name, []).append(np.array(v))
    return {k: (tuple(np.concatenate(x) for x in v) if isinstance(v, tuple) else np.concatenate(v)) for k, v in got.items()}


def bench_digests(tmp_path, source, *args):
    """The per-batch digests `stoker bench --digests` prints for these options."""
    out = tmp_path / f"digests-{len(list(tmp_path.iterdir()))}.txt"
    stoker_cli("bench", source, *args, "--digests", out)
    return out.read_text().split()


def rings():
    """Ring files of Stoker's in the shared-memory directory."""
    return sorted(glob.glob(os.path.join(SHM, "stoker-ring-*")))


@pytest.fixture(autouse=True)
def nothing_left_behind():
    """After every test, nothing of Stoker's is left in /dev/shm."""
    before = rings()
    yield
    assert rings() == before, "a ring file was left in " + SHM


@pytest.fixture(scope="session")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("bridge-data")
    # tokens: 0, 1, 2, ... so that a window's first token names it
    np.arange(60_000, dtype=np.uint16).tofile(d / "tokens.bin")
    # WebDataset shards: small JPEGs with labels, written by Pillow and tarfile
    from PIL import Image
    rng = np.random.default_rng(7)
    for s in range(3):
        with tarfile.open(d / f"shard-{s:06d}.tar", "w", format=tarfile.USTAR_FORMAT) as tar:
            for i in range(20):
                key = f"s{s}i{i:03d}"
                img = Image.fromarray(rng.integers(0, 255, size=(40 + i, 48, 3), dtype=np.uint8))
                buf = io.BytesIO()
                img.save(buf, format="JPEG", quality=90)
                for name, payload in ((key + ".jpg", buf.getvalue()), (key + ".cls", str(i % 10).encode())):
                    info = tarfile.TarInfo(name)
                    info.size = len(payload)
                    info.mtime = 1_700_000_000
                    tar.addfile(info, io.BytesIO(payload))
    # a shard of samples larger than a raw field's share of a ring slot (32 KiB a row)
    with tarfile.open(d / "big-000000.tar", "w", format=tarfile.USTAR_FORMAT) as tar:
        for i in range(6):
            payload = rng.integers(0, 255, size=20_000 * (i + 1), dtype=np.uint8).tobytes()
            info = tarfile.TarInfo(f"big{i:03d}.bin")
            info.size = len(payload)
            tar.addfile(info, io.BytesIO(payload))
    # a shard whose second member's header is garbage
    good = (d / "shard-000000.tar").read_bytes()
    bad = bytearray(good)
    size = int(good[124:136].rstrip(b"\0 ").decode(), 8)
    second = 512 + (size + 511) // 512 * 512
    bad[second:second + 4] = b"ZZZZ"  # the second member's header no longer matches its checksum
    (d / "bad-000000.tar").write_bytes(bytes(bad))
    # JSON lines
    with open(d / "docs.jsonl", "w") as f:
        for i in range(300):
            f.write(json.dumps({"text": f"document {i} " + "word " * (i % 37)}) + "\n")
    return d
