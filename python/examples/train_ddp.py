#!/usr/bin/python3
"""A data-parallel (DDP) training loop fed by Stoker: one process per rank, as torchrun starts
them (``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``, ``MASTER_PORT``). Each rank's ``stoker.Loader``
takes its rank and world size from torch.distributed and reads its own share of each epoch.

    torchrun --nproc-per-node 2 python/examples/train_ddp.py /tmp/stoker-bench/tokens/train.bin

With ``--record FILE`` each rank writes the first token of every window it trained on to
``FILE.RANK`` (with tokens 0, 1, 2, ... a window's first token names it): the tests check that
the ranks' windows are disjoint and together cover the epoch.
"""

import argparse
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn

try:
    import stoker  # noqa: F401  installed (pip install of the wheel)
except ImportError:  # run from a checkout: its package
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import stoker  # noqa: E402


def main(argv=None):
    a = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    a.add_argument("tokens", help="a raw uint16 token file")
    a.add_argument("--seq-len", type=int, default=64)
    a.add_argument("--batch", type=int, default=8)
    a.add_argument("--epochs", type=int, default=1)
    a.add_argument("--workers", type=int, default=1)
    a.add_argument("--vocab", type=int, default=65536)
    a.add_argument("--record", help="write each trained window's first token to RECORD.RANK")
    o = a.parse_args(argv)
    cuda = torch.cuda.is_available()
    dist.init_process_group("nccl" if cuda else "gloo")
    rank = dist.get_rank()
    dev = torch.device("cuda", rank % torch.cuda.device_count()) if cuda else torch.device("cpu")
    torch.manual_seed(0)
    model = nn.Sequential(nn.Embedding(o.vocab, 32), nn.Linear(32, o.vocab)).to(dev)
    ddp = nn.parallel.DistributedDataParallel(model, device_ids=[dev.index] if cuda else None)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    seen = []
    # rank and world size: torch.distributed's; drop_last: every rank takes the same number of steps
    with stoker.Loader("tokens", o.tokens, seq_len=o.seq_len, batch_size=o.batch, num_workers=o.workers,
                       drop_last=True, fields=("x", "y"), device=str(dev) if cuda else None) as loader:
        for epoch in range(o.epochs):
            for x, y in loader:
                seen.extend(int(t) for t in x[:, 0].tolist())
                loss = nn.functional.cross_entropy(ddp(x.to(dev)).flatten(0, 1), y.to(dev).flatten())
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
    if o.record:
        with open(f"{o.record}.{rank}", "w") as f:
            f.write(" ".join(map(str, seen)))
    print(f"rank {rank}: {len(seen)} windows, last loss {loss.item():.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
