"""The PyTorch side of the HDF5 benchmark: h5py reading one sample's slices per __getitem__
(the file opened once per worker, as h5py needs), batched by the DataLoader. Also writes the
benchmark file when asked.

  make:  hdf5_peer.py make FILE            (20,000 samples: /x float32[256], /y int64; chunks of
                                            100 samples, gzip level 4 + shuffle, as h5py writes)
  run:   hdf5_peer.py run FILE --workers 0,1,2 --batch 256 [--repeats 3]
Prints one JSON line per configuration (median samples/s over the repeats)."""
import argparse, json, statistics, sys, time

import h5py
import numpy as np


def make(path):
    rng = np.random.default_rng(0)
    n = 20_000
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=rng.standard_normal((n, 256), dtype=np.float32), chunks=(100, 256),
                         compression="gzip", compression_opts=4, shuffle=True)
        f.create_dataset("y", data=rng.integers(0, 1000, n, dtype=np.int64), chunks=(100,),
                         compression="gzip", compression_opts=4, shuffle=True)


class Slices:
    def __init__(self, path):
        self.path = path
        self.file = None
        with h5py.File(path, "r") as f:
            self.n = f["x"].shape[0]

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.file is None:
            self.file = h5py.File(self.path, "r")
        return self.file["x"][i], self.file["y"][i]


def run(path, workers, batch, repeats):
    import torch
    from torch.utils.data import DataLoader
    torch.set_num_threads(1)
    for w in workers:
        rates = []
        for _ in range(repeats):
            ds = Slices(path)
            loader = DataLoader(ds, batch_size=batch, shuffle=True, num_workers=w)
            t = time.perf_counter()
            n = 0
            for x, y in loader:
                n += x.shape[0]
            rates.append(n / (time.perf_counter() - t))
        print(json.dumps({"peer": "torch+h5py", "workers": w, "batch": batch,
                          "samplesPerSec": statistics.median(rates), "repeats": repeats}), flush=True)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("cmd", choices=["make", "run"])
    p.add_argument("file")
    p.add_argument("--workers", default="0,1,2")
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--repeats", type=int, default=3)
    a = p.parse_args()
    if a.cmd == "make":
        make(a.file)
    else:
        run(a.file, [int(w) for w in a.workers.split(",")], a.batch, a.repeats)
