"""The examples' real PyTorch training loops, fed by Stoker and by the DataLoader: the loss falls."""

import os
import sys

import numpy as np
import pytest

from conftest import ROOT

torch = pytest.importorskip("torch")
sys.path.insert(0, os.path.join(ROOT, "python", "examples"))


@pytest.mark.parametrize("loader", ["stoker", "torch"])
def test_a_small_gpt_learns_from_either_loader(tmp_path, loader):
    import train_gpt
    path = tmp_path / "tokens.bin"
    np.tile(np.arange(64, dtype=np.uint16), 4000).tofile(path)  # a sequence a model can learn
    r = train_gpt.main([str(path), "--loader", loader, "--steps", "25", "--batch", "8", "--seq-len", "32",
                        "--vocab", "64", "--workers", "1"])
    assert r["last_loss"] < 0.7 * r["first_loss"], r
    assert 0 <= r["idle_share"] <= 1 and r["step_ms"] > 0


def test_a_small_resnet_trains_on_shards_through_stoker(data):
    import train_resnet
    pattern = str(data / "shard-{000000..000002}.tar")
    r = train_resnet.main([pattern, "--loader", "stoker", "--steps", "4", "--batch", "8", "--width", "4",
                           "--workers", "1"])
    assert r["steps"] == 4 and np.isfinite(r["last_loss"])


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_two_rank_ddp_loop_sees_disjoint_windows_that_cover_the_epoch(tmp_path):
    import subprocess
    path = tmp_path / "tokens.bin"
    windows = 160                                   # a multiple of world size x batch: nothing to drop or pad
    np.arange(windows * 64 + 1, dtype=np.uint16).tofile(path)
    record = tmp_path / "seen"
    env = dict(os.environ, WORLD_SIZE="2", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()))
    script = os.path.join(ROOT, "python", "examples", "train_ddp.py")
    procs = [subprocess.Popen([sys.executable, script, str(path), "--record", str(record), "--seq-len", "64",
                               "--batch", "8"], env=dict(env, RANK=str(r)), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for r in range(2)]
    for p in procs:
        out, err = p.communicate(timeout=240)
        assert p.returncode == 0, err[-2000:]
    seen = [set(map(int, (tmp_path / f"seen.{r}").read_text().split())) for r in range(2)]
    assert seen[0] and seen[1] and not seen[0] & seen[1], "the ranks' windows are disjoint"
    assert seen[0] | seen[1] == {w * 64 for w in range(windows)}, "together they cover the epoch"
