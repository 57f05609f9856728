#!/usr/bin/python3
"""PolarBERT-shaped IceCube arrays: Stoker's arrays source against PolarBERT's own IceCubeDataset.

The data is what PolarBERT's scripts/prepare_memmaped_data.py writes: raw np.memmap files named
.npy without a .npy header (x: the pulses of each event padded to 127 rows of 4 features; l: the
int32 lengths; c: the float32 total charge; y: azimuth and zenith), their shapes and dtypes in
memmap_properties.json as json.dump writes them. x and y are float16, as configs/prepare_datasets.yaml
of PolarBERT writes them (--dtype float32 for the other choice its script takes).

The peer is PolarBERT's class itself, polarbert.icecube_dataset.IceCubeDataset, imported from its
source (numpy and torch only: nothing to stub): an IterableDataset that yields whole batches, each
a contiguous run of `batch` events at a block offset (a grid shifted by a random offset below the
batch each epoch, the blocks shuffled), read as slices of the memmaps, in a DataLoader with
batch_size=None, num_workers=1, pin_memory=False, persistent_workers=True (its
configs/polarbert.example.yaml: "num_workers: 1 # Should remain 1 when using an IterableDataset"),
with its transforms: pretraining.default_transform (x and l to float32) and finetuning's
DirectionalHead.target_transform_kaggle (y and c to float32). Those two live in modules that import
pytorch_lightning and the models, so their one-line bodies are copied here as they are.

Stoker: stoker.sources.arrays({"x", "l", "c", "y"}, properties=memmap_properties.json) through
stoker.Loader with order="blocks" (contiguous blocks of a batch in a random order, their grid
shifted each epoch: PolarBERT's sampling), and a map= that makes the same tensors as the peer's
transforms ((x float32 [B,127,4], l float32 [B]), (y float32 [B,2], c float32 [B])).

  make:  polarbert.py make DIR [--events 1000000] [--dtype float16]   (~1 GB for 1M float16 events)
  run:   polarbert.py run DIR [--batch 200] [--batches 1000] [--repeats 3] [--peer-workers 1,2]
                            [--stoker-workers 2]

PolarBERT's source: POLARBERT_SRC, a folder holding src/polarbert (a checkout of
github.com/timinar/PolarBERT; 4969a6fb is the one measured), default /tmp/stoker-bench/PolarBERT.
Each side: the loader made once, its first batch taken (and timed from the loader's making), then
`repeats` runs of `batches` batches each, epoch after epoch; events/s is the median of the runs.
Before timing, one batch of each side is checked against the files: same structure, shapes and
dtypes, and values equal to the transform of a contiguous run of events.
"""
import argparse
import gc
import json
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

SEQ, FEATURES = 127, 4
POLARBERT_SRC = os.environ.get("POLARBERT_SRC", "/tmp/stoker-bench/PolarBERT")


def make(d, events, dtype):
    """The four memmaps and memmap_properties.json as prepare_memmaped_data.py writes them, with
    its transforms of the raw features (time, log10 charge, auxiliary - 0.5, sensor id + 1) applied
    to random pulses, zeros after each event's end."""
    os.makedirs(d, exist_ok=True)
    t0 = time.perf_counter()
    props = {"x": {"shape": (events, SEQ, FEATURES), "dtype": np.dtype(dtype).name},
             "l": {"shape": (events,), "dtype": np.dtype(np.int32).name},
             "c": {"shape": (events,), "dtype": np.dtype(np.float32).name},
             "y": {"shape": (events, 2), "dtype": np.dtype(dtype).name}}
    maps = {k: np.memmap(os.path.join(d, k + ".npy"), mode="w+", **v) for k, v in props.items()}
    rng = np.random.default_rng(0)
    step = 50_000
    for s in range(0, events, step):
        n = min(step, events - s)
        # Kaggle IceCube events: a few to thousands of pulses, cut at 127 (about a third reach it)
        lengths = np.clip(rng.lognormal(4.2, 0.8, n).astype(np.int32), 1, SEQ)
        x = np.empty((n, SEQ, FEATURES), np.float32)
        x[:, :, 0] = (rng.uniform(6e3, 2e4, (n, SEQ)) - 1e4) / 3e4
        x[:, :, 1] = np.log10(rng.lognormal(0, 0.7, (n, SEQ)) + 0.025) / 3.0
        x[:, :, 2] = rng.integers(0, 2, (n, SEQ)) - 0.5
        x[:, :, 3] = rng.integers(0, 5160, (n, SEQ)) + 1
        x[np.arange(SEQ)[None, :] >= lengths[:, None]] = 0
        maps["x"][s:s + n] = x
        maps["l"][s:s + n] = lengths
        maps["c"][s:s + n] = rng.lognormal(2, 1, n)
        maps["y"][s:s + n] = np.stack([rng.uniform(0, 2 * np.pi, n), rng.uniform(0, np.pi, n)], axis=1)
    for m in maps.values():
        m.flush()
    del maps
    with open(os.path.join(d, "memmap_properties.json"), "w+") as f:
        json.dump(props, f, indent=4)
    size = sum(os.path.getsize(os.path.join(d, k + ".npy")) for k in props)
    print(json.dumps({"dir": d, "events": events, "dtype": np.dtype(dtype).name, "bytes": size,
                      "seconds": round(time.perf_counter() - t0, 1)}))


# PolarBERT's transforms, as they are in src/polarbert/pretraining.py and finetuning.py
def default_transform(x, l):
    return x.astype(np.float32), l.astype(np.float32)


def target_transform_kaggle(y, c):
    return y.astype(np.float32), c.astype(np.float32)


def polarbert_dataset(d, batch):
    sys.path.insert(0, os.path.join(POLARBERT_SRC, "src"))
    from polarbert.icecube_dataset import IceCubeDataset
    return IceCubeDataset(data_dir=d, batch_size=batch, transform=default_transform,
                          target_transform=target_transform_kaggle)


def peer_loader(d, batch, workers):
    from torch.utils.data import DataLoader
    # get_dataloaders' loader_kwargs with the example config's values
    return DataLoader(polarbert_dataset(d, batch), batch_size=None, num_workers=workers, pin_memory=False,
                      persistent_workers=workers > 0)


def stoker_loader(d, batch, workers):
    import stoker
    import torch
    files = {k: os.path.join(d, k + ".npy") for k in ("x", "l", "c", "y")}
    source = stoker.sources.arrays(files, properties=os.path.join(d, "memmap_properties.json"))

    def as_polarbert(b):  # the peer's transforms: x, l, y to float32 (c is float32 already)
        return (b["x"].to(torch.float32), b["l"].to(torch.float32)), (b["y"].to(torch.float32), b["c"])

    return stoker.Loader(source, batch_size=batch, order="blocks", num_workers=workers, map=as_polarbert)


def flat(batch):
    (x, l), (y, c) = batch
    return x, l, y, c


def check(d, batch, side, b):
    """The batch is the peer's transforms of a contiguous run of events, its tensors as the peer's."""
    import torch
    with open(os.path.join(d, "memmap_properties.json")) as f:
        props = json.load(f)
    m = {k: np.memmap(os.path.join(d, k + ".npy"), mode="r", shape=tuple(v["shape"]), dtype=v["dtype"])
         for k, v in props.items()}
    x, l, y, c = flat(b)
    starts = np.flatnonzero(m["c"] == c[0].item())
    s = int(starts[0])
    want_x, want_l = default_transform(m["x"][s:s + batch], m["l"][s:s + batch])
    want_y, want_c = target_transform_kaggle(m["y"][s:s + batch], m["c"][s:s + batch])
    ok = True
    for got, want in ((x, want_x), (l, want_l), (y, want_y), (c, want_c)):
        ok &= isinstance(got, torch.Tensor) and got.dtype == torch.float32 and tuple(got.shape) == want.shape
        ok &= len(got) == len(want) and bool(torch.equal(got, torch.from_numpy(np.ascontiguousarray(want))))
    shapes = [f"{tuple(t.shape)} {str(t.dtype).replace('torch.', '')}" for t in (x, l, y, c)]
    print(json.dumps({"check": side, "first_event": s, "equal_to_files": bool(ok), "x,l,y,c": shapes}), flush=True)
    return ok, shapes


def measure(loader, batches, repeats, t0, on_first):
    """The first batch (seconds from t0; on_first(batch) is called with it, untimed, before the
    runs), then `repeats` runs of `batches` batches, epoch after epoch."""
    it = iter(loader)
    first = next(it)
    first_s = time.perf_counter() - t0
    result = on_first(first)
    del first

    def nxt():
        nonlocal it
        try:
            return next(it)
        except StopIteration:
            it = iter(loader)
            return next(it)

    rates = []
    for _ in range(repeats):
        t = time.perf_counter()
        events = 0
        for _ in range(batches):
            events += len(flat(nxt())[3])
        rates.append(events / (time.perf_counter() - t))
    return result, first_s, rates


def main():
    a = argparse.ArgumentParser()
    a.add_argument("what", choices=("make", "run"))
    a.add_argument("dir")
    a.add_argument("--events", type=int, default=1_000_000)
    a.add_argument("--dtype", default="float16", choices=("float16", "float32"))
    a.add_argument("--batch", type=int, default=200)  # the example config's per-device batch: min(1024, 200)
    a.add_argument("--batches", type=int, default=1000)
    a.add_argument("--repeats", type=int, default=3)
    a.add_argument("--peer-workers", default="1,2")
    a.add_argument("--stoker-workers", type=int, default=2)
    a.add_argument("--sides", default="polarbert,stoker")
    o = a.parse_args()
    if o.what == "make":
        make(o.dir, o.events, o.dtype)
        return
    import torch
    torch.set_num_threads(1)
    print("command: " + " ".join([os.path.relpath(sys.argv[0], os.path.join(HERE, ".."))] + sys.argv[1:]), flush=True)
    results = {}
    shapes = {}
    for side in o.sides.split(","):
        for w in ([int(w) for w in o.peer_workers.split(",")] if side == "polarbert" else [o.stoker_workers]):
            t0 = time.perf_counter()
            loader = peer_loader(o.dir, o.batch, w) if side == "polarbert" else stoker_loader(o.dir, o.batch, w)
            try:
                (ok, shapes[side]), first_s, rates = measure(loader, o.batches, o.repeats, t0,
                                                             lambda b: check(o.dir, o.batch, side, b))
                if not ok:
                    sys.exit(f"polarbert.py: {side}'s first batch is not the files' events")
            finally:
                if hasattr(loader, "close"):
                    loader.close()
                del loader  # the peer's persistent workers end with it
                gc.collect()
            results[(side, w)] = statistics.median(rates)
            print(json.dumps({"side": side, "workers": w, "batch": o.batch, "batches": o.batches,
                              "events_per_s": round(statistics.median(rates)),
                              "runs": [round(r) for r in rates], "first_batch_s": round(first_s, 3)}), flush=True)
    if len(shapes) == 2 and len(set(map(tuple, shapes.values()))) != 1:
        sys.exit(f"polarbert.py: the sides' tensors differ: {shapes}")
    peers = [v for (s, _), v in results.items() if s == "polarbert"]
    ours = [v for (s, _), v in results.items() if s == "stoker"]
    if peers and ours:
        print(json.dumps({"ratio_to_best_peer": round(max(ours) / max(peers), 2)}), flush=True)


if __name__ == "__main__":
    main()
