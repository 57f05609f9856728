"""The arrays source through stoker.Loader: PolarBERT's raw memmaps with their properties JSON,
files torch.save wrote, and token files that are torch.save archives."""

import json
import os

import numpy as np
import pytest

import stoker

N, L, F = 41, 7, 4


def _polarbert(d):
    """The files PolarBERT's prepare script writes: np.memmap arrays named .npy without a header, and
    memmap_properties.json (shapes as the tuples json.dump makes lists)."""
    rng = np.random.default_rng(3)
    lengths = rng.integers(0, L + 1, size=N).astype(np.int32)
    x = np.zeros((N, L, F), dtype=np.float32)
    for i, n in enumerate(lengths):
        x[i, :n] = rng.standard_normal((n, F))
    y = rng.standard_normal((N, 2)).astype(np.float32)
    c = rng.random(N).astype(np.float32)
    props = {"x": {"shape": (N, L, F), "dtype": np.dtype(np.float32).name},
             "l": {"shape": (N,), "dtype": np.dtype(np.int32).name},
             "c": {"shape": (N,), "dtype": np.dtype(np.float32).name},
             "y": {"shape": (N, 2), "dtype": np.dtype(np.float32).name}}
    for name, a in (("x", x), ("l", lengths), ("c", c), ("y", y)):
        m = np.memmap(os.path.join(d, name + ".npy"), mode="w+", **props[name])
        m[:] = a
        m.flush()
        del m
    with open(os.path.join(d, "memmap_properties.json"), "w") as f:
        json.dump(props, f, indent=4)
    return x, lengths, c, y


def test_polarberts_memmaps_with_their_properties_arrive_exactly_the_padded_events_ragged(tmp_path):
    x, lengths, c, y = _polarbert(tmp_path)
    d = str(tmp_path)
    source = stoker.sources.arrays({"x": {"path": os.path.join(d, "x.npy"), "lengths": os.path.join(d, "l.npy")},
                                    "y": os.path.join(d, "y.npy"), "c": os.path.join(d, "c.npy")},
                                   properties=os.path.join(d, "memmap_properties.json"))
    seen = 0
    with stoker.Loader(source, batch_size=8, shuffle=False, num_workers=2, as_numpy=True) as loader:
        for batch in loader:
            offsets, values = batch["x"]
            assert values.dtype == np.float32
            for r in range(len(offsets) - 1):
                i = seen + r
                assert offsets[r + 1] - offsets[r] == lengths[i] * F
                np.testing.assert_array_equal(values[offsets[r]:offsets[r + 1]], x[i, :lengths[i]].ravel())
            n = len(offsets) - 1
            np.testing.assert_array_equal(batch["y"], y[seen:seen + n])
            np.testing.assert_array_equal(batch["c"], c[seen:seen + n])
            seen += n
    assert seen == N


def test_the_padded_array_as_a_tensor_shuffled_holds_each_event_once(tmp_path):
    x, lengths, c, y = _polarbert(tmp_path)
    d = str(tmp_path)
    source = stoker.sources.arrays({"x": os.path.join(d, "x.npy"), "l": os.path.join(d, "l.npy")},
                                   properties=os.path.join(d, "memmap_properties.json"))
    got = []
    with stoker.Loader(source, batch_size=8, num_workers=2, seed=4, as_numpy=True) as loader:
        for batch in loader:
            assert batch["x"].shape[1:] == (L, F)
            for r in range(len(batch["l"])):
                got.append((int(batch["l"][r]), batch["x"][r].tobytes()))
    assert sorted(got) == sorted((int(lengths[i]), x[i].tobytes()) for i in range(N))


def test_a_raw_npy_without_its_shape_is_refused_saying_what_is_missing(tmp_path):
    _polarbert(tmp_path)
    source = stoker.sources.arrays({"x": str(tmp_path / "x.npy")})
    with pytest.raises(stoker.StokerError, match=r"x\.npy: no \.npy header .* give its dtype and shape"):
        with stoker.Loader(source, batch_size=4) as loader:
            next(iter(loader))


def test_options_are_checked_before_any_server_starts(tmp_path):
    with pytest.raises(ValueError, match="one of the two"):
        stoker.Loader("arrays", str(tmp_path / "a.pt"), files={"x": "x.npy"})
    with pytest.raises(ValueError, match="names a field"):
        stoker.sources.arrays({"1x": "x.npy"})
    with pytest.raises(ValueError, match="shape that is not a list of integers"):
        stoker.sources.arrays({"x": {"path": "x.bin", "dtype": "float32", "shape": "10"}})
    s = stoker.sources.arrays({"x": {"path": "x.bin", "dtype": np.dtype("float32"), "shape": (-1, 3)}})
    assert s.spec["files"]["x"] == {"path": os.path.abspath("x.bin"), "dtype": "float32", "shape": [-1, 3]}


def test_the_named_tensors_of_a_torch_save_file_are_the_fields(tmp_path):
    torch = pytest.importorskip("torch")
    x = torch.arange(N * 3, dtype=torch.float32).reshape(N, 3)
    label = torch.arange(N, dtype=torch.int64) % 5
    path = str(tmp_path / "data.pt")
    torch.save({"x": x, "label": label}, path)
    with stoker.Loader(stoker.sources.arrays(path), batch_size=N, shuffle=False, as_numpy=True) as loader:
        batch = next(iter(loader))
    np.testing.assert_array_equal(batch["x"], x.numpy())
    np.testing.assert_array_equal(batch["label"], label.numpy())


def test_a_token_file_torch_saved_is_read_as_its_tensor(tmp_path):
    torch = pytest.importorskip("torch")
    tokens = torch.arange(1000, dtype=torch.int64) * 7 % 50257  # BabyLlama: torch.save(tensor, "tokenized.pt")
    path = str(tmp_path / "tokenized.pt")
    torch.save(tokens, path)
    with stoker.Loader(stoker.sources.tokens(path, seq_len=9), batch_size=4, shuffle=False, as_numpy=True) as loader:
        batch = next(iter(loader))
    want = tokens.numpy()
    for r in range(4):
        np.testing.assert_array_equal(batch["x"][r], want[r * 9:r * 9 + 9])
        np.testing.assert_array_equal(batch["y"][r], want[r * 9 + 1:r * 9 + 10])
    torch.save({"a": tokens, "b": tokens}, path)
    with pytest.raises(stoker.StokerError, match="holds 2 tensors"):
        with stoker.Loader(stoker.sources.tokens(path, seq_len=9), batch_size=4) as loader:
            next(iter(loader))
