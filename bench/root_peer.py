#!/usr/bin/env python3
"""The peer of the ROOT benchmark: how physicists feed PyTorch from ROOT files, as close as runs offline.

uproot reads each chunk's branches (`tree.arrays(..., entry_start, entry_stop, library="np")`), the
particles are padded/truncated to 128 with vectorized numpy (counts -> offsets -> one scatter into a
[N, 128, 17] float32 array, what weaver-core does after awkward), and a torch IterableDataset over
(file, entry range) chunks feeds a DataLoader with 2 workers: each epoch the chunks of all files are
shuffled, each worker takes every other chunk, concatenates a window of 4 chunks (so a batch mixes
events of several files: weaver's event-based mixing), permutes the events and yields batches of 512
(particles [B,128,17] float32, lengths [B] int32, jet features [B,3] float32, label [B] int32). Whole
batches come out of the workers (DataLoader batch_size=None): faster than weaver's one-event-at-a-time
collation, so the peer is if anything flattered.

uproot is run from its source (numpy only, see bench/uproot_env.py):
    git clone https://github.com/scikit-hep/uproot5 /tmp/stoker-bench/uproot5   # measured: 5388b857
    export UPROOT_SRC=/tmp/stoker-bench/uproot5       # the folder holding src/uproot (this is the default)
with Debian's python3-lz4, python3-xxhash (and python3-zstd) for its LZ4 blocks and checksums.

How this differs from uproot + awkward (what weaver runs): with awkward, `tree.arrays(library="ak")`
returns each jagged branch as one offsets array + one values array, and padding is
`ak.fill_none(ak.pad_none(a, 128, clip=True), 0)` then `ak.to_numpy`, per feature, followed by a stack.
Without awkward, uproot's library="np" gives a jagged branch as an object array of per-event numpy
arrays (one small array per event per branch), which this peer concatenates back into values before
the scatter. So the read step does per-event Python-object work that awkward avoids, and the padding
step is one numpy scatter for all 17 features (awkward pads each feature, then stacks). Decompression
(zlib from Python's zlib, LZ4 from python3-lz4 with the XXH64 check) and the basket parsing are uproot's
own in both cases.

Usage: root_peer.py FILE... [--batch 512] [--workers 2] [--repeats 3] [--pad 128] [--chunk 2000] [--batches N]
Prints one JSON line: {"peer": "uproot+numpy+DataLoader", "eventsPerSec": median, "rates": [...], ...}.
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import uproot_env  # noqa: E402

PARTICLES = [
    "part_px", "part_py", "part_pz", "part_energy", "part_deta", "part_dphi",
    "part_d0val", "part_d0err", "part_dzval", "part_dzerr", "part_charge",
    "part_isChargedHadron", "part_isNeutralHadron", "part_isPhoton", "part_isElectron", "part_isMuon",
    "part_pt",
]
JETS = ["jet_pt", "jet_eta", "jet_energy"]


def pad(counts, features, length):
    """[N, length, F] float32 from per-feature flat values (offsets from counts); truncates past `length`."""
    n = len(counts)
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(counts, out=offsets[1:])
    total = int(offsets[-1])
    event = np.repeat(np.arange(n), counts)
    slot = np.arange(total) - offsets[event]
    keep = slot < length
    out = np.zeros((n * length, len(features)), np.float32)
    values = np.stack(features, axis=1)  # [total, F]
    out[(event * length + slot)[keep]] = values[keep]
    return out.reshape(n, length, len(features)), np.minimum(counts, length).astype(np.int32)


def read_chunk(tree, start, stop, length):
    a = tree.arrays(["n_part", "label"] + JETS + PARTICLES, entry_start=start, entry_stop=stop, library="np")
    counts = a["n_part"].astype(np.int64)
    features = [np.concatenate(a[f]) if len(a[f]) else np.zeros(0, np.float32) for f in PARTICLES]
    parts, lengths = pad(counts, features, length)
    jets = np.stack([a[f] for f in JETS], axis=1).astype(np.float32)
    return parts, lengths, jets, a["label"].astype(np.int32)


def make_dataset(files, batch, length, chunk, window, seed):
    import torch
    from torch.utils.data import IterableDataset, get_worker_info

    entries = []
    for path in files:
        n = uproot_env.open_file(path)["tree"].num_entries
        entries += [(path, lo, min(n, lo + chunk)) for lo in range(0, n, chunk)]

    class Chunks(IterableDataset):
        def __init__(self):
            self.epoch = 0
            self.trees = {}

        def tree(self, path):
            if path not in self.trees:
                self.trees[path] = uproot_env.open_file(path)["tree"]
            return self.trees[path]

        def __iter__(self):
            info = get_worker_info()
            wid, nw = (info.id, info.num_workers) if info else (0, 1)
            rng = np.random.default_rng(seed + self.epoch)
            order = rng.permutation(len(entries))[wid::nw]
            wrng = np.random.default_rng((seed, self.epoch, wid))
            for w in range(0, len(order), window):
                parts = [read_chunk(self.tree(entries[i][0]), entries[i][1], entries[i][2], length) for i in order[w:w + window]]
                cols = [np.concatenate([p[k] for p in parts]) for k in range(4)]
                perm = wrng.permutation(len(cols[0]))
                for b in range(0, len(perm), batch):
                    idx = perm[b:b + batch]
                    yield tuple(torch.from_numpy(c[idx]) for c in cols)

    return Chunks(), sum(e[2] - e[1] for e in entries)


def main():
    ap = argparse.ArgumentParser(description="uproot + numpy padding + DataLoader: events/s over an epoch")
    ap.add_argument("files", nargs="+")
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--pad", type=int, default=128)
    ap.add_argument("--chunk", type=int, default=2000, help="entries per read (weaver's fetch step)")
    ap.add_argument("--window", type=int, default=4, help="chunks mixed before batching")
    ap.add_argument("--batches", type=int, default=0, help="batches a repeat (default 0: the whole epoch)")
    a = ap.parse_args()
    import torch
    from torch.utils.data import DataLoader
    torch.set_num_threads(1)
    uproot_env.load()
    ds, total = make_dataset(a.files, a.batch, a.pad, a.chunk, a.window, seed=1)
    rates = []
    for r in range(a.repeats):
        ds.epoch = r
        loader = DataLoader(ds, batch_size=None, num_workers=a.workers)
        t = time.perf_counter()
        n = batches = 0
        for parts, lengths, jets, label in loader:
            assert parts.shape[1:] == (a.pad, len(PARTICLES)) and parts.dtype == torch.float32
            n += parts.shape[0]
            batches += 1
            if batches == a.batches:
                break
        dt = time.perf_counter() - t
        if not a.batches and n != total:
            sys.exit(f"the epoch gave {n} events, the files hold {total}")
        rates.append(n / dt)
    print(json.dumps({"peer": "uproot+numpy+DataLoader", "workers": a.workers, "batch": a.batch, "pad": a.pad,
                      "events": n, "eventsPerSec": round(statistics.median(rates)),
                      "rates": [round(x) for x in rates], "repeats": a.repeats}), flush=True)


if __name__ == "__main__":
    main()
