"""A real training step fed by Stoker and by the PyTorch DataLoader, the same number of steps each.

--model resnet18 (default): ResNet-18 (torchvision) at 224², bf16 autocast, channels_last, SGD,
on W2 and W5 shards. Stoker: ``stoker.Loader("shards", ..., transform="train224",
image_dtype="uint8", device=DEVICE)``, normalized on the GPU; then the same with
``decode_on=DEVICE`` (the GPU decodes the JPEGs: nvJPEG). DataLoader: a map-style dataset over the
tar members (scaling.py's TarIndex: every worker busy at any count; PIL, RandomResizedCrop + flip +
ToTensor + Normalize, as the peers'), ``num_workers`` workers, shuffle, pin_memory,
``.to(device, non_blocking=True)``.
--model gpt: a small GPT (6 layers, 384 wide, 1024 tokens) on W1 tokens; Stoker's token windows
against nanoGPT's get_batch (np.memmap, random offsets, pinned, non_blocking).

Each step ends in a synchronize, so that the time the loop spends waiting for its next batch is
time the accelerator has nothing to do: "idle" is that time over the whole loop. GPU utilization
is sampled with nvidia-smi every 200 ms during the measured steps. One JSON line per run.
Smoke test without a GPU: --device cpu --steps 2 --batch 4.
"""

import argparse
import json
import os
import subprocess
import sys
import threading
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "peers"))

MEAN = [0.485, 0.456, 0.406]
STD = [0.229, 0.224, 0.225]


class GpuUtil:
    """nvidia-smi's utilization.gpu, sampled every 200 ms while running."""

    def __init__(self):
        self.samples = []
        self.proc = None

    def __enter__(self):
        try:
            self.proc = subprocess.Popen(["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits",
                                          "-lms", "200"], stdout=subprocess.PIPE, text=True)
        except OSError:
            return self
        threading.Thread(target=self._read, daemon=True).start()
        return self

    def _read(self):
        for line in self.proc.stdout:
            try:
                self.samples.append(float(line.strip().split(",")[0]))
            except ValueError:
                pass

    def __exit__(self, *exc):
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait()

    def mean(self):
        return sum(self.samples) / len(self.samples) if self.samples else None


def run_steps(batches, step, steps, warmup, device):
    """Runs warmup + steps steps; returns (seconds, seconds waiting for data, gpu util) of the measured ones."""
    it = batches()
    def next_batch():
        nonlocal it
        try:
            return next(it)
        except StopIteration:
            it = batches()
            return next(it)
    for _ in range(warmup):
        step(next_batch())
    sync(device)
    waited = 0.0
    with GpuUtil() as util:
        t0 = time.perf_counter()
        for _ in range(steps):
            w0 = time.perf_counter()
            b = next_batch()
            waited += time.perf_counter() - w0
            step(b)
            sync(device)
        seconds = time.perf_counter() - t0
    return seconds, waited, util.mean()


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def resnet(args, device, workload):
    import torchvision
    from torch.utils.data import DataLoader
    import stoker
    import torch_peer
    from scaling import TarIndex

    d = os.path.join(args.data, "images" if workload == "W2" else "large-images")
    shards = sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".tar"))
    model = torchvision.models.resnet18(num_classes=1000).to(device).to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    mean = torch.tensor(MEAN, device=device).view(1, 3, 1, 1) * 255
    std = torch.tensor(STD, device=device).view(1, 3, 1, 1) * 255
    amp = torch.autocast(device.type, dtype=torch.bfloat16)

    def train(x, y):
        with amp:
            loss = loss_fn(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    def stoker_step(b):
        x = b["image"].to(memory_format=torch.channels_last).float().sub_(mean).div_(std)  # uint8 -> normalized, on the GPU
        train(x, b["label"].clamp_(0, 999))

    def torch_step(b):
        x, y = b
        x = x.to(device, non_blocking=True).to(memory_format=torch.channels_last)
        train(x, y.to(device, non_blocking=True).clamp_(0, 999))

    results = []
    if device.type != "cuda":
        inner = stoker_step
        stoker_step = lambda b: inner({k: v.to(device) for k, v in b.items()})
    on = str(device) if device.type == "cuda" else None
    for name, where in (("stoker", dict(device=on)), ("stoker decode_on=device", dict(decode_on=on or "torchvision"))):
        try:
            loader = stoker.Loader("shards", *shards, transform="train", image_dtype="uint8", batch=args.batch,
                                   workers=args.stoker_workers, drop_last=True, **where)
            with loader:
                seconds, waited, util = run_steps(lambda: iter(loader), stoker_step, args.steps, args.warmup, device)
                stats = loader.stats()
        except Exception as e:  # the others still run; the line says what failed
            import traceback
            traceback.print_exc()
            results.append({"loader": name, "error": f"{type(e).__name__}: {e}"})
            continue
        results.append({"loader": name, "workers": stats.get("workers"), "seconds": seconds, "waited": waited,
                        "gpuUtil": util})
    ds = TarIndex(shards, torch_peer.image_transform())
    dl = DataLoader(ds, batch_size=args.batch, num_workers=args.torch_workers, pin_memory=device.type == "cuda",
                    shuffle=True, drop_last=True, persistent_workers=args.torch_workers > 0)
    seconds, waited, util = run_steps(lambda: iter(dl), torch_step, args.steps, args.warmup, device)
    results.append({"loader": "torch", "workers": args.torch_workers, "seconds": seconds, "waited": waited,
                    "gpuUtil": util})
    return results


def gpt(args, device):
    import stoker

    path = os.path.join(args.data, "tokens", "train.bin")
    vocab, width, seq = 50304, 384, 1024
    layer = torch.nn.TransformerEncoderLayer(width, 6, 4 * width, dropout=0.0, batch_first=True, norm_first=True)
    body = torch.nn.TransformerEncoder(layer, 6, enable_nested_tensor=False)
    embed = torch.nn.Embedding(vocab, width)
    pos = torch.nn.Parameter(torch.zeros(1, seq, width))
    head = torch.nn.Linear(width, vocab, bias=False)
    model = torch.nn.ModuleDict({"embed": embed, "body": body, "head": head}).to(device)
    pos = torch.nn.Parameter(pos.data.to(device))
    mask = torch.nn.Transformer.generate_square_subsequent_mask(seq, device=device)
    opt = torch.optim.AdamW(list(model.parameters()) + [pos], lr=3e-4)

    def train(x, y):
        with torch.autocast(device.type, dtype=torch.bfloat16):
            h = model["body"](model["embed"](x) + pos[:, :x.shape[1]], mask=mask[:x.shape[1], :x.shape[1]])
            loss = torch.nn.functional.cross_entropy(model["head"](h).flatten(0, 1).float(), y.flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    results = []
    loader = stoker.Loader("tokens", path, seq_len=seq, batch=args.batch, windows="random",
                           device=str(device) if device.type == "cuda" else None, workers=args.stoker_workers)
    with loader:
        seconds, waited, util = run_steps(lambda: iter(loader), lambda b: train(b["x"].to(device), b["y"].to(device)),
                                          args.steps, args.warmup, device)
    results.append({"loader": "stoker", "seconds": seconds, "waited": waited, "gpuUtil": util})
    data = np.memmap(path, dtype=np.uint16, mode="r")

    def get_batch():  # nanoGPT's
        while True:
            ix = torch.randint(len(data) - seq - 1, (args.batch,))
            x = torch.stack([torch.from_numpy(data[i:i + seq].astype(np.int64)) for i in ix])
            y = torch.stack([torch.from_numpy(data[i + 1:i + 1 + seq].astype(np.int64)) for i in ix])
            if device.type == "cuda":
                x, y = x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device, non_blocking=True)
            yield x, y

    seconds, waited, util = run_steps(get_batch, lambda b: train(*b), args.steps, args.warmup, device)
    results.append({"loader": "nanogpt get_batch", "seconds": seconds, "waited": waited, "gpuUtil": util})
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/tmp/stoker-bench")
    ap.add_argument("--model", default="resnet18", choices=("resnet18", "gpt"))
    ap.add_argument("--workloads", default="W2,W5")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--batch", type=int, default=None)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--torch-workers", type=int, default=16)
    ap.add_argument("--stoker-workers", default="auto")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    if args.stoker_workers != "auto":
        args.stoker_workers = int(args.stoker_workers)
    device = torch.device(args.device)
    out = open(args.out, "a") if args.out else sys.stdout

    def emit(r, **more):
        line = dict(r, **more, batch=args.batch, steps=args.steps)
        if "seconds" in r:
            line.update(samplesPerSec=args.steps * args.batch / r["seconds"], idle=r["waited"] / r["seconds"])
        line["device"] = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
        line["torch"] = torch.__version__
        print(json.dumps(line), file=out, flush=True)

    if args.model == "gpt":
        args.batch = args.batch or 32
        for r in gpt(args, device):
            emit(r, model="gpt", workload="W1")
    else:
        args.batch = args.batch or 256
        for w in args.workloads.split(","):
            for r in resnet(args, device, w):
                emit(r, model="resnet18", workload=w)


if __name__ == "__main__":
    main()
