#!/usr/bin/python3
"""Two ranks of one node on one `stoker serve`: the sum of their rates with the CPU budget split
between them (cores=half: each loader tunes its workers within half the cores) and shared (each
within all of them, the default). Workers auto, W1 or W2.

Usage: bench/bridge_ranks.py DATA_DIR W1|W2 [--seconds S] [--repeats N]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

RANK = r"""
import json, os, sys, time
sys.path.insert(0, {python!r})
import stoker
w, data, sock, seconds, cores = {workload!r}, {data!r}, {sock!r}, {seconds!r}, {cores!r}
budget = dict(cores=cores) if cores else dict()
if w == "W1":
    make = lambda: stoker.Loader("tokens", os.path.join(data, "tokens", "train.bin"), seq_len=1024, batch=32, server=sock,
                                 **budget)
    unit = lambda b: b["x"].shape[0] * 1024
else:
    make = lambda: stoker.Loader("shards", os.path.join(data, "images", "images-{{000000..000019}}.tar"),
                                 transform="train224", batch=64, server=sock, **budget)
    unit = lambda b: b["image"].shape[0]
with make() as loader:
    it = iter(loader)
    next(it)
    items, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for b in it:
            items += unit(b)
            if time.perf_counter() - t0 >= seconds:
                break
        else:
            it = iter(loader)
    print(json.dumps({{"rate": items / (time.perf_counter() - t0), "workers": loader.stats()["workers"]}}))
"""


def once(data, workload, cores, seconds):
    from stoker._process import server_command
    d = tempfile.mkdtemp(prefix="stoker-ranks-")
    sock = os.path.join(d, "s.sock")
    server = subprocess.Popen(server_command() + ["serve", "--socket", sock, "--owns-dir"], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    server.stdout.readline()
    code = RANK.format(python=os.path.join(HERE, "..", "python"), workload=workload, data=data, sock=sock, seconds=seconds,
                       cores=cores)
    ranks = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                              env=dict(os.environ, RANK=str(r), WORLD_SIZE="2"))
             for r in range(2)]
    out = [json.loads(p.communicate()[0]) for p in ranks]
    server.wait(10)
    return sum(o["rate"] for o in out), [o["workers"] for o in out]


def main():
    a = argparse.ArgumentParser()
    a.add_argument("data")
    a.add_argument("workload", choices=("W1", "W2"))
    a.add_argument("--seconds", type=float, default=8)
    a.add_argument("--repeats", type=int, default=3)
    o = a.parse_args()
    half = max(1, (os.cpu_count() or 2) // 2)
    for cores, how in ((half, "split"), (None, "shared")):
        runs = [once(o.data, o.workload, cores, o.seconds) for _ in range(o.repeats)]
        print(json.dumps({"workload": o.workload, "budget": how, "cores": cores,
                          "sum_rate_median": statistics.median(r[0] for r in runs), "raw": [r[0] for r in runs],
                          "workers_at_end": [r[1] for r in runs]}), flush=True)


if __name__ == "__main__":
    main()
