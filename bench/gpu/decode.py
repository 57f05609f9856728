"""Decoding on the device against decoding on the CPU: images/s reaching the GPU, from a loop that
takes each batch (uint8, 224², on the device) and synchronizes, for W2 and W5, with 16 and 4 CPU
workers. ``decode_on="cuda"``: the workers only read the shards and draw the crops; nvJPEG decodes
(torchvision.io.decode_jpeg on the device), and the crop, resize and flip run there.
``device="cuda"``: the workers decode, crop and resize; the ring's batches are copied over.
One JSON line per run; the rate is taken after the first batch, over whole epochs of the shards.

Usage: decode.py --data DIR [--workers 16,4] [--workloads W5,W2] [--batches N] [--out FILE]
"""

import argparse
import json
import os
import sys
import time

import torch

import stoker


def sync():
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def run(shards, workers, batches, **options):
    with stoker.Loader("shards", *shards, transform="train", image_dtype="uint8", batch_size=256, workers=workers,
                       drop_last=True, **options) as loader:
        n, t0 = 0, None
        while True:
            for b in loader:
                sync()
                if t0 is None:
                    t0 = time.perf_counter()
                    continue
                n += b["image"].shape[0]
                if n >= batches * 256:
                    return n / (time.perf_counter() - t0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/tmp/stoker-bench")
    ap.add_argument("--workers", default="16,4")
    ap.add_argument("--workloads", default="W5,W2")
    ap.add_argument("--batches", type=int, default=60)
    ap.add_argument("--device", default="cuda", help="cuda; cpu (a smoke test: torchvision's decode on the CPU)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    cuda = args.device != "cpu"
    out = open(args.out, "a") if args.out else sys.stdout
    for w in args.workloads.split(","):
        d = os.path.join(args.data, "images" if w == "W2" else "large-images")
        shards = sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".tar"))
        for n in (int(x) for x in args.workers.split(",")):
            cpu = run(shards, n, args.batches, device=args.device if cuda else None)
            try:
                gpu = run(shards, n, args.batches, decode_on=args.device if cuda else "torchvision")
            except Exception as e:
                import traceback
                traceback.print_exc()
                print(json.dumps({"workload": w, "workers": n, "cpuDecode": cpu, "error": f"{type(e).__name__}: {e}"}),
                      file=out, flush=True)
                continue
            print(json.dumps({"workload": w, "workers": n, "cpuDecode": cpu, "deviceDecode": gpu, "ratio": gpu / cpu,
                              "device": torch.cuda.get_device_name(0) if cuda else "cpu", "cores": os.cpu_count()}),
                  file=out, flush=True)


if __name__ == "__main__":
    main()
