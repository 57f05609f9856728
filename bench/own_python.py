#!/usr/bin/python3
"""W2 at 160 px with the user's own Python augmentation per sample (RandAugment + ColorJitter):
stoker.Loader(transform=Compose([...])) (the crop and flip in the JVM, the rest in Python worker
processes) against a DataLoader with the same transforms and 2 worker processes, in one run; and
Stoker with only known transforms (all in the JVM) against its preset, which should match.

Usage: bench/own_python.py DATA_DIR [SECONDS] [PYTHON_WORKERS]
  DATA_DIR from bench/peers/gen_data.py --only=W2 (DATA_DIR/images/*.tar); SECONDS per measure
  (default 20); PYTHON_WORKERS for Stoker (default "auto"). Prints one JSON line per measure.
"""
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
sys.path.insert(0, os.path.join(HERE, "peers"))
import torch  # noqa: E402
import torchvision.transforms as T  # noqa: E402
from torch.utils.data import DataLoader  # noqa: E402

import stoker  # noqa: E402
from torch_peer import TarShardDataset  # noqa: E402

MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
SIZE, BATCH = 160, 64


def own():
    return T.Compose([T.RandomResizedCrop(SIZE), T.RandomHorizontalFlip(), T.RandAugment(), T.ColorJitter(0.4, 0.4, 0.4),
                      T.ToTensor(), T.Normalize(MEAN, STD)])


def known():
    return T.Compose([T.RandomResizedCrop(SIZE), T.RandomHorizontalFlip(), T.ToTensor(), T.Normalize(MEAN, STD)])


def rate(batches, seconds):
    """Images a second after the first batch, over at least ``seconds`` (epochs restarted as needed)."""
    it = batches()
    first = next(it)
    n, t0 = 0, time.perf_counter()
    del first
    while time.perf_counter() - t0 < seconds:
        for b in it:
            n += b[0].shape[0] if isinstance(b, (list, tuple)) else b["image"].shape[0]
            if time.perf_counter() - t0 >= seconds:
                break
        else:
            it = batches()
    return n / (time.perf_counter() - t0)


def main():
    data = sys.argv[1]
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 20.0
    workers = sys.argv[3] if len(sys.argv) > 3 else "auto"
    workers = workers if workers == "auto" else int(workers)
    shards = sorted(os.path.join(data, "images", f) for f in os.listdir(os.path.join(data, "images"))
                    if f.endswith(".tar"))
    out = []
    with stoker.Loader("shards", *shards, transform=own(), batch_size=BATCH, python_workers=workers,
                       fields=("image", "label")) as loader:
        r = rate(lambda: iter(loader), seconds)
        out.append({"loader": "stoker", "transforms": "own (RandAugment + ColorJitter)", "images_per_s": round(r, 1),
                    "where": loader.stats()["transform"]})
    dl = DataLoader(TarShardDataset(shards, own()), batch_size=BATCH, num_workers=2)
    out.append({"loader": "DataLoader, 2 workers", "transforms": "own (RandAugment + ColorJitter)",
                "images_per_s": round(rate(lambda: iter(dl), seconds), 1)})
    # the two all-in-the-JVM loaders, measured in the order A B B A (the machine drifts): each one's mean
    rates = {"known": [], "preset": []}
    for which in ("known", "preset", "preset", "known"):
        options = dict(transform=known()) if which == "known" else dict(transform="train", size=SIZE)
        with stoker.Loader("shards", *shards, batch_size=BATCH, fields=("image", "label"), **options) as loader:
            rates[which].append(rate(lambda: iter(loader), seconds / 2))
    out.append({"loader": "stoker", "transforms": "known only (Compose)",
                "images_per_s": round(sum(rates["known"]) / 2, 1)})
    out.append({"loader": "stoker", "transforms": "the preset train, size=160",
                "images_per_s": round(sum(rates["preset"]) / 2, 1)})
    for line in out:
        print(json.dumps(line), flush=True)
    print(f"own transforms: Stoker / DataLoader = {out[0]['images_per_s'] / out[1]['images_per_s']:.2f}x; "
          f"known only / preset = {out[2]['images_per_s'] / out[3]['images_per_s']:.2f}x", flush=True)


if __name__ == "__main__":
    main()
