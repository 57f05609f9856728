#!/usr/bin/python3
"""A small GPT trained on token windows (W1: a uint16 token file, nanoGPT's train.bin), fed by
Stoker or by the PyTorch DataLoader: one flag switches.

    /usr/bin/python3 python/examples/train_gpt.py /tmp/stoker-bench/tokens/train.bin --loader stoker
    /usr/bin/python3 python/examples/train_gpt.py /tmp/stoker-bench/tokens/train.bin --loader torch

Runs on a GPU when there is one, else on the CPU (use few steps there). Prints step time, the
loader's wait per step and the accelerator's idle share.
"""

import argparse
import os
import sys

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset, RandomSampler

try:
    import stoker  # noqa: F401  installed (pip install of the wheel)
except ImportError:  # run from a checkout: its package
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import stoker  # noqa: E402
from common import device, run  # noqa: E402


class Windows(Dataset):
    """The DataLoader side: disjoint windows of seq_len + 1 tokens of a memmap, x and y shifted by one."""

    def __init__(self, path, seq_len):
        self.tokens = np.memmap(path, dtype=np.uint16, mode="r")
        self.seq_len = seq_len

    def __len__(self):
        return (len(self.tokens) - 1) // self.seq_len

    def __getitem__(self, i):
        w = torch.from_numpy(self.tokens[i * self.seq_len:i * self.seq_len + self.seq_len + 1].astype(np.int64))
        return w[:-1], w[1:]


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x, mask):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab, seq_len, d=128, heads=4, layers=2):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(seq_len, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)
        self.register_buffer("mask", torch.triu(torch.ones(seq_len, seq_len, dtype=torch.bool), 1))

    def forward(self, x):
        t = x.shape[1]
        h = self.tok(x) + self.pos(torch.arange(t, device=x.device))
        for b in self.blocks:
            h = b(h, self.mask[:t, :t])
        return self.head(self.ln(h))


def main(argv=None):
    a = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    a.add_argument("tokens", help="a raw uint16 token file")
    a.add_argument("--loader", choices=("stoker", "torch"), default="stoker")
    a.add_argument("--steps", type=int, default=30)
    a.add_argument("--batch", type=int, default=16)
    a.add_argument("--seq-len", type=int, default=128)
    a.add_argument("--workers", type=int, default=2)
    a.add_argument("--vocab", type=int, default=50304)
    a.add_argument("--torch-threads", type=int, default=0,
                   help="the model's CPU threads (default: torch's); on a CPU-only machine, leave cores to the loader")
    a.add_argument("--json", action="store_true", help="print the result as one JSON line too")
    o = a.parse_args(argv)
    torch.manual_seed(0)
    if o.torch_threads > 0:
        torch.set_num_threads(o.torch_threads)
    dev = device()
    model = GPT(o.vocab, o.seq_len).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def step(batch):
        x, y = batch
        x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
        loss = nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss.item()

    if o.loader == "stoker":
        loader = stoker.Loader("tokens", o.tokens, seq_len=o.seq_len, batch_size=o.batch, num_workers=o.workers,
                               shuffle=True, seed=0, fields=("x", "y"),
                               device=str(dev))  # on a GPU: copied to it by the loader
        batches = loader
    else:
        ds = Windows(o.tokens, o.seq_len)
        loader = None
        batches = DataLoader(ds, batch_size=o.batch, sampler=RandomSampler(ds), num_workers=o.workers,
                             drop_last=True, pin_memory=dev.type == "cuda", persistent_workers=o.workers > 0)
    return run(batches, step, o, dev, closing=loader)


if __name__ == "__main__":
    main()
