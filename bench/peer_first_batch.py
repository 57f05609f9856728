#!/usr/bin/python3
"""The DataLoader peer's first batch as a user waits for it: seconds from the start of the python
command (PEER_STARTED_AT_NS, epoch nanoseconds, set by the caller just before it starts python, as
the ./stoker launcher sets STOKER_STARTED_AT_NS) to the first batch, so with importing torch,
building the dataset (ImageFolder lists its files) and the DataLoader, and its workers' start in
it; and, for comparison with torch_peer.py's first_batch_s, the part from iter(). The datasets and
transforms are torch_peer.py's own, imported from it.

Usage: PEER_STARTED_AT_NS=$(date +%s%N) bench/peer_first_batch.py DATA_DIR W2|W3|W5 WORKERS
Prints one JSON line.
"""
import json
import os
import sys
import time

started = int(os.environ["PEER_STARTED_AT_NS"])
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers"))
import torch  # noqa: E402
import torch_peer as peer  # noqa: E402
from torch.utils.data import DataLoader  # noqa: E402

data, workload, workers = sys.argv[1], sys.argv[2], int(sys.argv[3])
torch.manual_seed(1234)
tf = peer.image_transform()
if workload in ("W2", "W5"):
    d = os.path.join(data, "images" if workload == "W2" else "large-images")
    ds = peer.TarShardDataset(sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".tar")), tf)
    dl = DataLoader(ds, batch_size=peer.IMG_BATCH, num_workers=workers)
else:
    ds = peer.ImageFolder(os.path.join(data, "small-files"), transform=tf)
    dl = DataLoader(ds, batch_size=peer.IMG_BATCH, shuffle=True, num_workers=workers)
t_iter = time.time_ns()
it = iter(dl)
batch = next(it)
t_first = time.time_ns()
assert batch[0].shape[0] == peer.IMG_BATCH
del it
print(json.dumps({"workload": workload, "num_workers": workers,
                  "first_batch_from_command_s": (t_first - started) / 1e9,
                  "first_batch_from_iter_s": (t_first - t_iter) / 1e9}))
