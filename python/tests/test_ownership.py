"""Batches the user owns (NOTE [Batches the user owns]): kept, queued on a thread, read after close,
released; a ring that grows to its bound and then waits, saying so; timeouts; fields and map."""

import os
import queue
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import stoker
from conftest import PACKAGE_PARENT, bench_digests

try:
    import torch
except ImportError:
    torch = None

TOKENS = dict(seq_len=100, batch=7, seed=5, workers=2)
TOKENS_ARGS = ["--seq-len", "100", "--batch", "7", "--seed", "5", "--workers", "2"]


@pytest.mark.parametrize("as_numpy", [True, False] if torch is not None else [True])
def test_every_batch_of_an_epoch_kept_in_a_list_is_unchanged_at_the_end(data, tmp_path, as_numpy):
    expected = bench_digests(tmp_path, "tokens", data / "tokens.bin", *TOKENS_ARGS)
    with stoker.Loader("tokens", data / "tokens.bin", as_numpy=as_numpy, **TOKENS) as loader:
        kept = list(loader)
        assert [stoker.testing.batch_digest(b) for b in kept] == expected
        second = [stoker.testing.batch_digest(b) for b in loader]  # another epoch, while the first is kept
        assert second != expected
        assert [stoker.testing.batch_digest(b) for b in kept] == expected, "a kept batch changed"


def test_batches_queued_three_ahead_by_a_prefetch_thread_are_the_bench_batches(data, tmp_path):
    """The "CUDA prefetcher" of the tutorials: a thread iterates the loader and queues batches
    ahead of a training step that takes a while; the step must see each batch as it was made."""
    expected = bench_digests(tmp_path, "tokens", data / "tokens.bin", *TOKENS_ARGS)
    with stoker.Loader("tokens", data / "tokens.bin", ahead=2, **TOKENS) as loader:
        q = queue.Queue(maxsize=3)

        def prefetch():
            for b in loader:
                q.put((stoker.testing.batch_digest(b), b))
            q.put(None)

        t = threading.Thread(target=prefetch)
        t.start()
        seen = []
        while (item := q.get()) is not None:
            digest_when_made, batch = item
            time.sleep(0.002)  # the step, while the thread takes more batches
            assert stoker.testing.batch_digest(batch) == digest_when_made, "a queued batch changed under the step"
            seen.append(digest_when_made)
            del batch, item
        t.join()
    assert seen == expected


def test_a_batch_read_after_close_is_its_batch_and_never_a_crash(data):
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {PACKAGE_PARENT!r})
        import stoker
        loader = stoker.Loader("tokens", {str(data / "tokens.bin")!r}, seq_len=50, batch=4, seed=1)
        it = iter(loader)
        b = next(it)
        x = b["x"]
        before = stoker.testing.batch_digest(b)
        del b
        loader.close()
        assert stoker.testing.batch_digest({{"x": x}}) == stoker.testing.batch_digest({{"x": x.clone() if hasattr(x, "clone") else x.copy()}})
        print(int(x[0, 0]), int(x.sum()))
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"exit {r.returncode}: {r.stderr[-2000:]}"
    first, total = map(int, r.stdout.split())
    assert first % 50 == 0 and total > 0, "the tensor still holds its window after close"


def test_release_gives_the_memory_back_at_once(data):
    with stoker.Loader("tokens", data / "tokens.bin", **TOKENS) as loader:
        kept = []
        for b in loader:
            kept.append(b)  # kept referenced, but released: nothing is held
            b.release()
            b.release()  # idempotent
        assert loader.stats()["pythonHeldBatches"] == 0


def test_dropped_batches_keep_the_ring_at_its_first_size_over_ten_epochs(data):
    with stoker.Loader("tokens", data / "tokens.bin", seq_len=200, batch=8, seed=1) as loader:
        for _ in range(10):
            for b in loader:
                pass
        s = loader.stats()
    assert s["pythonHeldBatches"] <= 1
    assert s["ringSlotsMade"] <= s["ringSlotsAtStart"] + 1, s


def test_holding_the_whole_ring_waits_says_so_once_and_goes_on_when_a_batch_is_released(data, capfd):
    with stoker.Loader("tokens", data / "tokens.bin", seq_len=100, batch=8, seed=3, workers=1, ahead=2,
                       ring_bytes=1, timeout=3) as loader:  # the smallest ring: the window and `ahead` batches
        kept = []
        it = iter(loader)
        with pytest.raises(stoker.LoaderTimeout) as e:
            while True:
                kept.append(next(it))
        assert isinstance(e.value, TimeoutError)
        assert "holds" in str(e.value) and "stoker server" in str(e.value), str(e.value)
        err = capfd.readouterr().err
        assert err.count("waiting for batch memory") == 1, err
        # a bound below what the loader needs is said to be raised, in sizes that are no "0 MiB"
        assert "ring_bytes=1 is less than the" in err and " 0 MiB" not in err, err
        digests = [stoker.testing.batch_digest(b) for b in kept]
        kept.pop(0).release()
        kept.append(next(it))  # room again
        assert [stoker.testing.batch_digest(b) for b in kept[:-1]] == digests[1:], "held batches did not change"


def server_pid(loader):
    return loader._server.process.pid


def test_timeout_raises_on_a_stopped_server_saying_so(data):
    with stoker.Loader("synthetic", samples=10_000, sample_bytes=8, batch=4, workers=1, timeout=1.5) as loader:
        it = iter(loader)
        next(it)
        pid = server_pid(loader)
        os.kill(pid, signal.SIGSTOP)
        try:
            t0 = time.monotonic()
            with pytest.raises(stoker.LoaderTimeout, match="stopped") as e:
                for _ in range(100):  # what the server sent ahead first
                    next(it)
            assert time.monotonic() - t0 < 10
            assert f"pid {pid}" in str(e.value) and "timeout=1.5" in str(e.value)
        finally:
            os.kill(pid, signal.SIGCONT)


def test_fields_make_tuples_so_that_for_x_y_in_loader_works(data):
    with stoker.Loader("tokens", data / "tokens.bin", **TOKENS) as loader:
        plain = [(stoker.testing.batch_digest({"x": b["x"]}), stoker.testing.batch_digest({"y": b["y"]})) for b in loader]
    with stoker.Loader("tokens", data / "tokens.bin", fields=("y", "x"), **TOKENS) as loader:
        got = [(stoker.testing.batch_digest({"x": x}), stoker.testing.batch_digest({"y": y})) for y, x in loader]
    assert got == plain
    with pytest.raises(ValueError, match="not fields"):
        with stoker.Loader("tokens", data / "tokens.bin", fields=("image", "label"), **TOKENS) as loader:
            next(iter(loader))


def test_map_results_arrive_in_order_and_an_exception_names_its_batch(data):
    with stoker.Loader("tokens", data / "tokens.bin", **TOKENS) as loader:
        plain = [int(b["x"][0, 0]) for b in loader]

    def first(b):
        time.sleep(0.001 * (int(b["x"][0, 0]) % 3))  # uneven work
        return int(b["x"][0, 0])

    with stoker.Loader("tokens", data / "tokens.bin", map=first, **TOKENS) as loader:
        assert list(loader) == plain
        state_after = None
        for i, v in enumerate(loader):
            if i == 4:
                state_after = loader.state_dict()
                break
    with stoker.Loader("tokens", data / "tokens.bin", map=first, **TOKENS) as loader:
        loader.load_state_dict(state_after)
        rest = list(loader)
    with stoker.Loader("tokens", data / "tokens.bin", **TOKENS) as loader:
        list(loader)
        second = [int(b["x"][0, 0]) for b in loader]
    assert rest == second[5:], "a state taken in a map loop is after the last result handed out"

    def fails(b):
        if int(b["x"][0, 0]) == plain[3]:
            raise KeyError("boom")
        return b

    with stoker.Loader("tokens", data / "tokens.bin", map=fails, **TOKENS) as loader:
        with pytest.raises(stoker.StokerError, match=r"map raised on batch 3 .*KeyError"):
            list(loader)


def test_a_bad_python_option_is_a_value_error(data):
    for kw, name in ((dict(timeout=-1), "timeout"), (dict(fields="x"), "fields"), (dict(map=3), "map"),
                     (dict(ring_bytes=0), "ring_bytes"), (dict(ahead=0), "ahead")):
        with pytest.raises(ValueError, match=f"'{name}'"):
            stoker.Loader("tokens", data / "tokens.bin", **kw)


def test_a_forked_child_reads_the_batches_it_inherited_and_leaves_the_parent_session_whole(data):
    """Per-sample work in DataLoader-style worker processes (fork): a child reads the batches it
    inherited, and closing or dropping the loader there neither closes nor disturbs the parent's."""
    with stoker.Loader("tokens", data / "tokens.bin", as_numpy=True, **TOKENS) as loader:
        it = iter(loader)
        kept = [next(it) for _ in range(3)]
        firsts = [int(b["x"][0, 0]) for b in kept]
        pid = os.fork()
        if pid == 0:
            code = 3
            try:
                code = 0 if [int(b["x"][0, 0]) for b in kept] == firsts else 2
                kept.clear()
                loader.close()
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
        assert [int(b["x"][0, 0]) for b in kept] == firsts
        rest = [stoker.testing.batch_digest(b) for b in it]  # the session is whole
        assert len(rest) == len(loader) - 3


def _shard_with_json_labels(path, missing_at=None):
    import io
    import json
    import tarfile
    from PIL import Image
    rng = np.random.default_rng(3)
    with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tar:
        for i in range(12):
            img = Image.fromarray(rng.integers(0, 255, size=(50, 60, 3), dtype=np.uint8))
            buf = io.BytesIO()
            img.save(buf, format="JPEG", quality=90)
            meta = {"label": 100 + i, "caption": "x"} if i != missing_at else {"caption": "no label"}
            for name, payload in ((f"k{i:03d}.jpg", buf.getvalue()), (f"k{i:03d}.json", json.dumps(meta).encode())):
                info = tarfile.TarInfo(name)
                info.size = len(payload)
                tar.addfile(info, io.BytesIO(payload))


def test_image_recipes_are_values_with_the_bench_batches(data, tmp_path):
    shard = tmp_path / "labels-000000.tar"
    _shard_with_json_labels(shard)
    recipe = dict(transform="train", size=32, scale=(0.5, 1.0), ratio=(1.0, 1.0), flip=0.0, label="json:label")
    expected = bench_digests(tmp_path, "shards", shard, "--transform", "train", "--size", "32", "--scale", "0.5,1.0",
                             "--ratio", "1.0,1.0", "--flip", "0.0", "--label", "json:label", "--batch", "4", "--seed", "1")
    with stoker.Loader("shards", shard, batch_size=4, seed=1, **recipe) as loader:
        got = []
        labels = []
        for b in loader:
            assert tuple(b["image"].shape[1:]) == (3, 32, 32)
            labels += [int(v) for v in b["label"]]
            got.append(stoker.testing.batch_digest(b))
    assert got == expected
    assert sorted(labels) == list(range(100, 112)), "labels from the .json member's field"
    with stoker.Loader("shards", shard, batch_size=4, transform="eval", size=40, resize=48, label="none",
                       shuffle=False) as loader:
        b = next(iter(loader))
        assert set(b) == {"image"} and tuple(b["image"].shape) == (4, 3, 40, 40)


def test_a_sample_without_its_chosen_label_is_a_data_error_naming_it(tmp_path):
    shard = tmp_path / "labels-000000.tar"
    _shard_with_json_labels(shard, missing_at=5)
    with stoker.Loader("shards", shard, batch_size=4, shuffle=False, label="json:label", workers=1) as loader:
        with pytest.raises(stoker.DataError, match=r"k005.*no field 'label'"):
            list(loader)
    with pytest.raises(ValueError, match="scale and ratio are for transform train"):
        with stoker.Loader("shards", shard, transform="eval", scale=(0.5, 1.0)) as loader:
            next(iter(loader))


@pytest.mark.parametrize("as_numpy", [True, False] if torch is not None else [True])
def test_a_tensor_or_a_view_of_it_kept_without_its_batch_never_changes(data, as_numpy):
    with stoker.Loader("tokens", data / "tokens.bin", as_numpy=as_numpy, **TOKENS) as loader:
        kept = []
        for b in loader:
            x = b["x"]
            kept.append((x[1:3], x[:, 0] * 1, stoker.testing.batch_digest({"x": x[1:3]})))  # a view, a copy, its digest
            del b, x  # the dict and the field are gone: only the view keeps the batch's memory
        for _ in range(2):
            for b in loader:  # two more epochs through the ring
                pass
        for view, copy, digest in kept:
            assert stoker.testing.batch_digest({"x": view}) == digest, "a kept view changed"
        assert loader.stats()["pythonHeldBatches"] >= len(kept) - 1


def test_keys_come_with_the_batches_as_strings(data, tmp_path):
    shards = [str(data / f"shard-{s:06d}.tar") for s in range(3)]
    with stoker.Loader("shards", *shards, batch_size=8, shuffle=False, keys=True, size=32) as loader:
        keys = [k for b in loader for k in b["__key__"]]
    assert keys == [f"s{s}i{i:03d}" for s in range(3) for i in range(20)]
    with stoker.Loader("shards", *shards, batch_size=8, shuffle=False, keys=True, transform="none") as loader:
        b = next(iter(loader))
        assert b["__key__"] == [f"s0i{i:03d}" for i in range(8)] and isinstance(b["jpg"], tuple)
