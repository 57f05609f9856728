"""``map=`` and ``collate_fn=`` (NOTE [Python workers] in ``_workers.py``): on a thread by default, in
Python worker processes with ``python_workers=N``; the same batches for any number of workers and
after a resume; results owned as batches are; failures name the batch, or the worker's exit status."""

import glob
import os
import time

import numpy as np
import pytest

import stoker
from conftest import SHM

torch = pytest.importorskip("torch")

TOKENS = dict(seq_len=16, batch_size=8, seed=3)


@pytest.fixture(autouse=True)
def no_output_left():
    before = sorted(glob.glob(os.path.join(SHM, "stoker-pyout-*")))
    yield
    assert sorted(glob.glob(os.path.join(SHM, "stoker-pyout-*"))) == before, "an output file was left in " + SHM


def noisy(batch):
    """A map of the augmenting kind: a random shift a batch, results of several kinds."""
    k = int(torch.randint(0, 1000, ()))
    return {"x": batch["x"].float() * 2 + k, "k": k, "y3": batch["y"][:, :3].numpy().copy(), "tag": ("x", [k])}


def stack_rows(samples):
    """A DataLoader's collate_fn: a list of per-sample dicts in, a batch out."""
    return {"x": torch.stack([s["x"] for s in samples]), "first": torch.tensor([int(s["y"][0]) for s in samples])}


def run(data, **options):
    with stoker.Loader("tokens", data / "tokens.bin", **dict(TOKENS, **options)) as loader:
        out = [b for b in loader]
        stats = loader.stats()
    return out, stats


def same(a, b):
    if isinstance(a, dict):
        return type(b) in (dict, stoker.Batch) and sorted(a) == sorted(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b)
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    return a == b


def test_map_in_workers_gives_the_same_batches_for_any_number_of_them_and_what_the_thread_gives(data):
    one, stats = run(data, map=noisy, python_workers=1)
    three, _ = run(data, map=noisy, python_workers=3)
    thread, thread_stats = run(data, map=noisy)
    assert len(one) == len(three) == len(thread) > 10
    assert all(same(a, b) for a, b in zip(one, three)), "the batches depend on the number of workers"
    assert len({b["k"] for b in one}) > 1, "each batch draws its own shift"
    for a, b in zip(one, thread):  # the same function: only the draws differ (a thread's are not seeded)
        assert torch.equal(a["x"] - a["k"], b["x"] - b["k"]) and np.array_equal(a["y3"], b["y3"])
        assert a["tag"] == ("x", [a["k"]])
    assert stats["pythonWorkers"] == 1 and "map=noisy: in Python (in 1 Python worker process)" in stats["transform"]
    assert "transform" not in thread_stats


@pytest.mark.parametrize("workers", [None, 2])
def test_collate_fn_takes_the_samples_as_a_dataset_gives_them(data, workers):
    got, _ = run(data, collate_fn=stack_rows, python_workers=workers, order="sequential", drop_last=False)
    plain, _ = run(data, order="sequential", drop_last=False)
    assert len(got) == len(plain)
    for g, p in zip(got, plain):
        assert torch.equal(g["x"], p["x"]) and torch.equal(g["first"], p["y"][:, 0])
    with stoker.Loader("tokens", data / "tokens.bin", fields=("y", "x"), python_workers=workers,
                       collate_fn=lambda rows: [len(rows), torch.stack([x for _, x in rows])], **TOKENS) as loader:
        n, x = next(iter(loader))
        assert n == 8 and x.shape == (8, 16), "with fields=, each sample is a tuple of them"


def test_map_in_workers_resumes_exactly(data):
    whole, _ = run(data, map=noisy, python_workers=2)
    with stoker.Loader("tokens", data / "tokens.bin", map=noisy, python_workers=2, **TOKENS) as loader:
        it = iter(loader)
        for _ in range(5):
            next(it)
        state = loader.state_dict()
    with stoker.Loader("tokens", data / "tokens.bin", map=noisy, python_workers=3, **TOKENS) as loader:
        loader.load_state_dict(state)
        rest = [b for b in loader]
    assert len(rest) == len(whole) - 5 and all(same(a, b) for a, b in zip(whole[5:], rest))


def test_results_held_never_change_and_release_gives_the_memory_back(data):
    with stoker.Loader("tokens", data / "tokens.bin", map=noisy, python_workers=2, **TOKENS) as loader:
        kept = [b for b in loader]
        copies = [b["x"].clone() for b in kept]
        for _ in loader:  # another epoch, whose results go into the slots of those dropped
            pass
        assert all(torch.equal(b["x"], c) for b, c in zip(kept, copies)), "a kept result changed"
        second = [b for b in loader]
        for b in second:
            b.release()
        x = kept[0]["x"]
    del kept
    assert torch.equal(x, copies[0]), "a tensor read after close() still holds its batch"


def raises(batch):
    raise KeyError("no such field")


class Exits:
    def __call__(self, batch):
        os._exit(9)


def test_a_failure_names_the_batch_and_a_dead_worker_its_exit_status(data):
    with stoker.Loader("tokens", data / "tokens.bin", map=raises, python_workers=2, **TOKENS) as loader:
        with pytest.raises(stoker.StokerError, match=r"map raised on batch 0 of epoch 0 \(in a Python worker\): "
                                                     r"KeyError: 'no such field'"):
            next(iter(loader))
    with stoker.Loader("tokens", data / "tokens.bin", map=lambda b: {"f": print}, python_workers=1, **TOKENS) as loader:
        with pytest.raises(stoker.StokerError, match=r"the result's batch\['f'\] is a builtin_function_or_method"):
            next(iter(loader))
    with stoker.Loader("tokens", data / "tokens.bin", map=Exits(), python_workers=2, **TOKENS) as loader:
        t0 = time.monotonic()
        with pytest.raises(stoker.LoaderDied, match=r"a Python worker \(pid \d+\) .* exited with status 9") as e:
            next(iter(loader))
        assert time.monotonic() - t0 < 10 and e.value.exit_status == 9


def test_batch_functions_in_workers_are_refused_where_they_cannot_run(data):
    with pytest.raises(ValueError, match="give python_workers=0"):
        stoker.Loader("tokens", data / "tokens.bin", map=noisy, python_workers=2, as_numpy=True)
    with pytest.raises(ValueError, match="option 'collate_fn' must be a function"):
        stoker.Loader("tokens", data / "tokens.bin", collate_fn="stack")
