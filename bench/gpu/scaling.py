"""W2 and W5 samples/s for 1, 2, 4, 8 and 16 workers: Stoker (`stoker bench shards`, train crops of
224, float32, as the peer makes them) against the DataLoader, one run of each, each run a fixed
number of samples per worker (W2 1,500, W5 400; at most an epoch), its rate taken after the first
batch. The DataLoader reads the shards by index (a map-style dataset over the tar members'
offsets), so that all of its workers have work at any count: the peers' IterableDataset splits by
shard, and W5's 10 shards would leave 6 of 16 workers idle.

Usage: scaling.py --data DIR [--workers 1,2,4,8,16] [--workloads W2,W5] [--out FILE]
Needs the stoker package importable (python -m stoker runs the server's CLI).
"""

import argparse
import io
import json
import os
import subprocess
import sys
import tarfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "peers"))
PER_WORKER = {"W2": 1500, "W5": 400}
BATCH = 64


class TarIndex:
    """Map-style: sample i is the i-th (jpg, cls) of the shards, read by its offset."""

    def __init__(self, shards, transform):
        from torch_peer import wds_split  # the peer's own grouping of members into samples
        self.transform = transform
        self.items = []
        for path in shards:
            members = {}
            with tarfile.open(path, "r:") as tf:
                for m in tf:
                    if not m.isfile():
                        continue
                    key, ext = wds_split(m.name)
                    members.setdefault(key, {})[ext] = (m.offset_data, m.size)
            self.items += [(path, v["jpg"], v.get("cls")) for v in members.values() if "jpg" in v]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        from PIL import Image
        path, (off, size), cls = self.items[i]
        with open(path, "rb") as f:
            f.seek(off)
            jpg = f.read(size)
            label = -1
            if cls is not None:
                f.seek(cls[0])
                label = int(f.read(cls[1]))
        return self.transform(Image.open(io.BytesIO(jpg)).convert("RGB")), label


def torch_rate(shards, workers, samples):
    import torch
    from torch.utils.data import DataLoader
    import torch_peer
    ds = TarIndex(shards, torch_peer.image_transform())
    torch.manual_seed(0)
    dl = DataLoader(ds, batch_size=BATCH, shuffle=True, num_workers=workers, drop_last=True)
    it = iter(dl)
    next(it)
    t0, n = time.perf_counter(), 0
    for x, _ in it:
        n += x.shape[0]
        if n + BATCH > samples:
            break
    rate = n / (time.perf_counter() - t0)
    del it
    return rate


def stoker_rate(shards, workers, samples):
    steps = max(2, samples // BATCH)
    r = subprocess.run([sys.executable, "-m", "stoker", "bench", "shards", *shards, "--transform", "train",
                        "--batch", str(BATCH), "--workers", str(workers), "--steps", str(steps), "--json"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"stoker bench failed: {r.stderr}")
    s = json.loads(r.stdout.strip().splitlines()[-1])
    return s.get("samplesPerSecAfterFirst", s["samplesPerSec"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/tmp/stoker-bench")
    ap.add_argument("--workers", default="1,2,4,8,16")
    ap.add_argument("--workloads", default="W2,W5")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    out = open(args.out, "a") if args.out else sys.stdout
    for w in args.workloads.split(","):
        d = os.path.join(args.data, "images" if w == "W2" else "large-images")
        shards = sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".tar"))
        epoch = 20_000 if w == "W2" else 10_000
        for n in (int(x) for x in args.workers.split(",")):
            samples = min(epoch, PER_WORKER[w] * n)
            s = stoker_rate(shards, n, samples)
            t = torch_rate(shards, n, samples)
            print(json.dumps({"workload": w, "workers": n, "samples": samples, "stoker": s, "torch": t,
                              "ratio": s / t, "cores": os.cpu_count()}), file=out, flush=True)


if __name__ == "__main__":
    main()
