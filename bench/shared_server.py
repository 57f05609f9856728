#!/usr/bin/python3
"""A train and a validation loader in one process: the time from the first loader's first batch
to the second's, and the server's memory (RSS of the JVM) with both against one loader alone, with
one server for the process (the default) and with a server each (``server="own"``).

Usage: bench/shared_server.py DATA_DIR     (DATA_DIR from bench/peers/gen_data.py: W1 tokens and W2
shards; with no DATA_DIR, a small token file and shard set are made in a temporary folder)
"""
import glob
import io
import os
import sys
import tarfile
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
import stoker  # noqa: E402


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def make_data(d):
    np.arange(2_000_000, dtype=np.uint16).tofile(os.path.join(d, "train.bin"))
    from PIL import Image
    rng = np.random.default_rng(0)
    os.makedirs(os.path.join(d, "shards"))
    for s in range(2):
        with tarfile.open(os.path.join(d, "shards", f"shard-{s:06d}.tar"), "w") as tar:
            for i in range(200):
                buf = io.BytesIO()
                Image.fromarray(rng.integers(0, 255, size=(300, 400, 3), dtype=np.uint8)).save(buf, "JPEG", quality=85)
                for name, payload in ((f"k{s}-{i:04d}.jpg", buf.getvalue()), (f"k{s}-{i:04d}.cls", str(i % 10).encode())):
                    info = tarfile.TarInfo(name)
                    info.size = len(payload)
                    tar.addfile(info, io.BytesIO(payload))
    return os.path.join(d, "train.bin"), sorted(glob.glob(os.path.join(d, "shards", "*.tar")))


def make(kind, tokens, shards, server):
    if kind == "tokens":
        return stoker.Loader("tokens", tokens, seq_len=1024, batch=32, server=server)
    return stoker.Loader("shards", *shards, transform="eval", size=160, batch=64, server=server)


def run(tokens, shards, server, val_kind):
    """Seconds to the train loader's first batch and then to the validation loader's (None: none),
    and the servers' RSS (MiB) once both have run an epoch's worth."""
    t0 = time.monotonic()
    train = make("tokens", tokens, shards, server)
    it = iter(train)
    next(it)
    t_train = time.monotonic() - t0
    loaders = [train]
    t_val = None
    if val_kind is not None:
        t1 = time.monotonic()
        val = make(val_kind, tokens, shards, server)
        vit = iter(val)
        next(vit)
        t_val = time.monotonic() - t1
        loaders.append(val)
        for _, _ in zip(range(50), vit):
            pass
    for _ in range(50):
        next(it)
    pids = sorted({l._info["pid"] for l in loaders})
    rss = sum(rss_mib(p) for p in pids)
    for l in loaders:
        l.close()
    return t_train, t_val, rss, len(pids)


def main():
    if len(sys.argv) > 1:
        data = sys.argv[1]
        tokens = os.path.join(data, "tokens", "train.bin")
        shards = sorted(glob.glob(os.path.join(data, "shards", "*.tar")))
        tmp = None
    else:
        tmp = tempfile.TemporaryDirectory()
        tokens, shards = make_data(tmp.name)
    t, _, rss1, _ = run(tokens, shards, "process", None)
    print(f"one loader (tokens): first batch {t:.2f} s, server RSS {rss1:.0f} MiB")
    for val_kind in ("tokens", "images"):
        for server in ("process", "own"):
            t, tv, rss2, n = run(tokens, shards, server, val_kind)
            print(f"train tokens + validation {val_kind}, server={server!r:9}: first batch {t:.2f} s, the "
                  f"validation loader's {tv:.2f} s after it; {n} JVM(s), RSS {rss2:.0f} MiB "
                  f"({rss2 / rss1:.2f}x one loader's)")
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
