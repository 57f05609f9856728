#!/usr/bin/python3
"""A small ResNet trained on WebDataset tar shards of JPEGs (W2), fed by Stoker (decode,
RandomResizedCrop(224), flip and normalize in the JVM) or by the PyTorch DataLoader (PIL and
torchvision, as bench/peers/torch_peer.py): one flag switches.

    /usr/bin/python3 python/examples/train_resnet.py '/tmp/stoker-bench/images/images-{000000..000019}.tar' --loader stoker
    /usr/bin/python3 python/examples/train_resnet.py '/tmp/stoker-bench/images/images-{000000..000019}.tar' --loader torch

Runs on a GPU when there is one (use --width 64 --steps 500 there), else on the CPU.
"""

import argparse
import io
import os
import re
import sys
import tarfile

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

try:
    import stoker  # noqa: F401  installed (pip install of the wheel)
except ImportError:  # run from a checkout: its package
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import stoker  # noqa: E402
from common import device, run  # noqa: E402


def expand(pattern):
    """'x-{000000..000003}.tar' -> the four names, as Stoker and WebDataset expand them."""
    m = re.search(r"\{(\d+)\.\.(\d+)\}", pattern)
    if not m:
        return [pattern]
    a, b = m.group(1), m.group(2)
    return [pattern[:m.start()] + str(i).zfill(len(a)) + pattern[m.end():] for i in range(int(a), int(b) + 1)]


class Shards(IterableDataset):
    """The DataLoader side: each worker reads its share of the shards; PIL decodes, torchvision augments."""

    def __init__(self, shards):
        from torchvision import transforms as T
        self.shards = shards
        self.tf = T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor(),
                             T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])

    def __iter__(self):
        from PIL import Image
        wi = get_worker_info()
        mine = self.shards if wi is None else self.shards[wi.id::wi.num_workers]
        for path in mine:
            with tarfile.open(path) as tar:
                sample = {}
                for m in tar:
                    key, _, ext = m.name.partition(".")
                    if sample and sample["key"] != key:
                        yield self._make(sample, Image)
                        sample = {}
                    sample["key"] = key
                    sample[ext] = tar.extractfile(m).read()
                if sample:
                    yield self._make(sample, Image)

    def _make(self, s, Image):
        return self.tf(Image.open(io.BytesIO(s["jpg"])).convert("RGB")), int(s["cls"])


def block(cin, cout, stride):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
                         nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout))


class Residual(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.body = block(cin, cout, stride)
        self.skip = nn.Identity() if cin == cout and stride == 1 else nn.Sequential(
            nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        return torch.relu(self.body(x) + self.skip(x))


def resnet(width, classes=1000):
    w = width
    return nn.Sequential(nn.Conv2d(3, w, 7, 4, 3, bias=False), nn.BatchNorm2d(w), nn.ReLU(inplace=True),
                         Residual(w, w, 1), Residual(w, 2 * w, 2), Residual(2 * w, 4 * w, 2), Residual(4 * w, 8 * w, 2),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8 * w, classes))


def main(argv=None):
    a = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    a.add_argument("shards", help="a brace pattern of tar shards")
    a.add_argument("--loader", choices=("stoker", "torch"), default="stoker")
    a.add_argument("--steps", type=int, default=20)
    a.add_argument("--batch", type=int, default=32)
    a.add_argument("--workers", type=int, default=2)
    a.add_argument("--width", type=int, default=8)
    a.add_argument("--torch-threads", type=int, default=0,
                   help="the model's CPU threads (default: torch's); on a CPU-only machine, leave cores to the loader")
    a.add_argument("--json", action="store_true")
    o = a.parse_args(argv)
    torch.manual_seed(0)
    if o.torch_threads > 0:
        torch.set_num_threads(o.torch_threads)
    dev = device()
    # channels_last pays on a GPU; Debian's CPU build of torch 1.13 crashes in its backward pass
    fmt = torch.channels_last if dev.type == "cuda" else torch.contiguous_format
    model = resnet(o.width).to(dev).to(memory_format=fmt)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    mean = torch.tensor([0.485, 0.456, 0.406], device=dev).view(1, 3, 1, 1) * 255
    std = torch.tensor([0.229, 0.224, 0.225], device=dev).view(1, 3, 1, 1) * 255

    def step(batch):
        x, y = batch
        x = x.to(dev, non_blocking=True).contiguous(memory_format=fmt)
        if x.dtype == torch.uint8:  # Stoker on a GPU: uint8 pixels, normalized here, on the device
            x = x.float().sub_(mean).div_(std)
        y = y.to(dev, non_blocking=True)
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss.item()

    loader = None
    if o.loader == "stoker":
        # on a GPU: batches copied to it by the loader, as uint8 (a quarter of the bytes)
        gpu = {"device": str(dev), "image_dtype": "uint8"} if dev.type == "cuda" else {}
        loader = stoker.Loader("shards", o.shards, transform="train224", batch_size=o.batch, num_workers=o.workers,
                               shuffle=True, seed=0, fields=("image", "label"), **gpu)
        batches = loader
    else:
        batches = DataLoader(Shards(expand(o.shards)), batch_size=o.batch, num_workers=o.workers,
                             pin_memory=dev.type == "cuda", persistent_workers=o.workers > 0)
    return run(batches, step, o, dev, closing=loader)


if __name__ == "__main__":
    main()
