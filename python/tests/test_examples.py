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
