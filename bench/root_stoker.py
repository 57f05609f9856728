#!/usr/bin/env python3
"""The Stoker side of the ROOT benchmark: the same files, the same batches as bench/root_peer.py.

stoker.Loader over stoker.sources.root(files, tree="tree"), shuffled across files, batch 512, 2
workers, the 17 particle branches stacked and padded to [B, 128, 17] float32 with their lengths
(stack= + pad= + lengths=True), the jet features and label as they are; one epoch per repeat,
events/s of the epoch as the Python loop sees it (torch tensors in hand), after --warmup epochs that
are not counted (the JVM compiling its hot code). Prints one JSON line with the median, each epoch's
rate and the loader's stats of the last epoch (truncation, file mixing).

Usage: root_stoker.py FILE... [--batch 512] [--workers 2] [--repeats 3] [--warmup 1] [--pad 128] [--decoded-cache-mb MB] [--batches N]
(needs the jars: ./stoker --version builds them; python/ is put on sys.path).
"""
import argparse
import json
import os
import statistics
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(here), "python"))
sys.path.insert(0, here)
import stoker  # noqa: E402
from root_peer import JETS, PARTICLES  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description="stoker.Loader over ROOT files: events/s over an epoch")
    ap.add_argument("files", nargs="+")
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1, help="epochs run first and not counted")
    ap.add_argument("--pad", type=int, default=128)
    ap.add_argument("--decoded-cache-mb", type=int, default=None, help="the source's decoded-cluster cache (default: its own)")
    ap.add_argument("--batches", type=int, default=0, help="batches a repeat (default 0: the whole epoch)")
    a = ap.parse_args()
    extra = {} if a.decoded_cache_mb is None else {"decoded_cache_mb": a.decoded_cache_mb}
    source = stoker.sources.root(a.files, tree="tree", branches=PARTICLES + JETS + ["label"], **extra)
    rates = []
    stats = {}
    with stoker.Loader(source, batch=a.batch, workers=a.workers, shuffle=True, seed=1,
                       stack={"particles": PARTICLES}, pad={"particles": a.pad}, lengths=True) as loader:
        for r in range(a.warmup + a.repeats):
            loader.set_epoch(r)
            t = time.perf_counter()
            n = batches = 0
            for batch in loader:
                parts = batch["particles"]
                assert tuple(parts.shape[1:]) == (a.pad, len(PARTICLES)), parts.shape
                n += parts.shape[0]
                batches += 1
                if batches == a.batches:
                    break
            if r >= a.warmup:
                rates.append(n / (time.perf_counter() - t))
        stats = loader.stats()
    keep = {k: v for k, v in stats.items() if any(w in k.lower() for w in ("trunc", "dropped", "files", "mix"))}
    print(json.dumps({"loader": "stoker", "workers": a.workers, "batch": a.batch, "pad": a.pad, "events": n,
                      "eventsPerSec": round(statistics.median(rates)), "rates": [round(x) for x in rates],
                      "repeats": a.repeats, "stats": keep}), flush=True)


if __name__ == "__main__":
    main()
