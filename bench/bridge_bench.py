#!/usr/bin/python3
"""W1, W2 and W4 in a Python loop fed by stoker.Loader, measured as bench/peers/torch_peer.py
measures the DataLoader (its own consume(): the clock starts before iter(), the headline leaves
the first batch out). One JSON line per configuration.

Usage: bench/bridge_bench.py DATA_DIR W1|W2|W4 WORKERS [--repeats N] [--min-seconds S] [--file F]
"""
import argparse
import json
import os
import resource
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, os.path.join(HERE, "peers"))
import stoker  # noqa: E402
from torch_peer import consume  # noqa: E402  the peer's own measuring loop


def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main():
    a = argparse.ArgumentParser()
    a.add_argument("data")
    a.add_argument("workload", choices=("W1", "W2", "W4"))
    a.add_argument("workers")
    a.add_argument("--repeats", type=int, default=3)
    a.add_argument("--min-seconds", type=float, default=5)
    a.add_argument("--file", default="train.jsonl")
    a.add_argument("--ahead", type=int, default=None)
    o = a.parse_args()
    workers = o.workers if o.workers == "auto" else int(o.workers)
    if o.workload == "W1":
        make = lambda: stoker.Loader("tokens", os.path.join(o.data, "tokens", "train.bin"), seq_len=1024, batch=32,
                                     workers=workers, ahead=o.ahead)
        items, mode, unit = (lambda b: b["x"].shape[0] * 1024), "time", "tokens_per_s"
    elif o.workload == "W2":
        shards = os.path.join(o.data, "images", "images-{000000..000019}.tar")
        make = lambda: stoker.Loader("shards", shards, transform="train224", batch=64, workers=workers, ahead=o.ahead)
        items, mode, unit = (lambda b: b["image"].shape[0]), "epoch", "samples_per_s"
    else:
        make = lambda: stoker.Loader("jsonl", os.path.join(o.data, "jsonl", o.file), seq_len=1024, batch=32,
                                     workers=workers, order="sequential", ahead=o.ahead)
        items, mode, unit = (lambda b: b["tokens"].numel()), "epochs", "tokens_per_s"
    runs = []
    for _ in range(o.repeats):
        with make() as loader:
            len(loader) if o.workload != "W4" else None  # the server is up before the clock starts, as a
            c0 = cpu_seconds()                           # DataLoader's dataset is built before it
            r = consume(lambda: iter(loader), items, o.min_seconds, mode)
            c1 = cpu_seconds()
            s = loader.stats()
        batches = s["pythonBatches"]
        r["python_cpu_us_per_batch"] = (c1 - c0) / batches * 1e6
        r["python_ipc_us_per_batch"] = s["pythonIpcSecondsPerBatch"] * 1e6
        r["jvm_publish_cpu_us_per_batch"] = s["publishCpuSeconds"] / max(1, s["publishedBatches"]) * 1e6
        r["python_wait_fraction"] = s["pythonWaitSeconds"] / r["seconds"]
        r["batches"] = batches
        runs.append(r)
    steady = [r["rate_steady"] for r in runs]
    print(json.dumps({
        "workload": o.workload, "via": "stoker.Loader (bridge)", "workers": o.workers, "file": o.file if o.workload == "W4" else None,
        "unit": unit, "median": statistics.median(steady), "raw_rate_steady": steady,
        "rate_median": statistics.median(r["rate"] for r in runs),
        "first_batch_s_median": statistics.median(r["first_batch_s"] for r in runs),
        "python_cpu_us_per_batch": statistics.median(r["python_cpu_us_per_batch"] for r in runs),
        "python_ipc_us_per_batch": statistics.median(r["python_ipc_us_per_batch"] for r in runs),
        "jvm_publish_cpu_us_per_batch": statistics.median(r["jvm_publish_cpu_us_per_batch"] for r in runs),
        "python_wait_fraction": statistics.median(r["python_wait_fraction"] for r in runs),
    }), flush=True)


if __name__ == "__main__":
    main()
