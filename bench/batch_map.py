#!/usr/bin/python3
"""A function of whole batches that holds the GIL (Python on each row: a DataLoader user's own
collation or augmentation), over W1's token windows: map= on the loop's thread, the same map in
Python worker processes (python_workers=N), and a DataLoader with the same function as its
collate_fn and 2 worker processes, in one run.

Usage: bench/batch_map.py DATA_DIR [SECONDS]   (DATA_DIR from bench/peers/gen_data.py --only=W1)
"""
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch.utils.data import DataLoader, Dataset  # noqa: E402

import stoker  # noqa: E402

SEQ, BATCH = 1024, 32


def mask_rare(x):
    """Python on each row: the tokens seen once in a row are masked (-1), as a user's own rule might."""
    out = x.clone()
    for r, row in enumerate(x.tolist()):
        seen = {}
        for t in row:
            seen[t] = seen.get(t, 0) + 1
        out[r] = torch.tensor([t if seen[t] > 1 else -1 for t in row])
    return out


def own_map(batch):
    return {"x": mask_rare(batch["x"]), "y": batch["y"]}


class Windows(Dataset):
    def __init__(self, path):
        self.tokens = np.memmap(path, dtype=np.uint16, mode="r")
        self.n = (len(self.tokens) - 1) // SEQ

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        w = torch.from_numpy(self.tokens[i * SEQ:(i + 1) * SEQ + 1].astype(np.int64))
        return w[:-1], w[1:]


def collate(samples):
    return own_map({"x": torch.stack([s[0] for s in samples]), "y": torch.stack([s[1] for s in samples])})


def rate(make, seconds):
    it = iter(make())
    next(it)
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for b in it:
            n += b["x"].shape[0]
            if time.perf_counter() - t0 >= seconds:
                break
        else:
            it = iter(make())
    return n / (time.perf_counter() - t0)


def main():
    data = sys.argv[1]
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 15.0
    path = os.path.join(data, "tokens", "train.bin")
    out = []
    for workers in (None, 2):
        with stoker.Loader("tokens", path, seq_len=SEQ, batch_size=BATCH, map=own_map, python_workers=workers) as loader:
            out.append({"loader": "stoker", "map": "thread" if workers is None else f"{workers} Python workers",
                        "windows_per_s": round(rate(lambda: loader, seconds), 1)})
    dl = DataLoader(Windows(path), batch_size=BATCH, shuffle=True, num_workers=2, collate_fn=collate)
    out.append({"loader": "DataLoader, 2 workers", "map": "collate_fn", "windows_per_s": round(rate(lambda: dl, seconds), 1)})
    for line in out:
        print(json.dumps(line), flush=True)
    print(f"map in 2 workers / on a thread = {out[1]['windows_per_s'] / out[0]['windows_per_s']:.2f}x; "
          f"/ DataLoader = {out[1]['windows_per_s'] / out[2]['windows_per_s']:.2f}x", flush=True)


if __name__ == "__main__":
    main()
