"""JetClass-shaped TTrees (written by bench/jetclass_ttree.py, zlib and LZ4 baskets) through the root
source and the padding stage: the padded particle tensors equal numpy's padding of the values written,
in file order and shuffled across files (every event once)."""

import os
import sys

import numpy as np
import pytest

import stoker
from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "bench"))
import jetclass_ttree as jt  # noqa: E402

if not hasattr(stoker.sources, "root"):
    pytest.skip("this build has no root source", allow_module_level=True)

PAD = 64  # below the longest jets, so truncation is exercised


def write(tmp_path, codec):
    """Two files (a signal-like and a background-like one); returns their paths and the values written."""
    rng = np.random.default_rng(3)
    setting = {"zlib": 101, "lz4": 404}[codec]
    paths, data = [], []
    for i, signal in enumerate([True, False]):
        d = jt.jets(700 + 111 * i, signal, rng)
        p = str(tmp_path / f"{codec}_{i}.root")
        jt.write_tree(p, d, setting, cluster=300)
        paths.append(p)
        data.append(d)
    return paths, data


def expected(data):
    """What the loader must give, in file order: particles [N, PAD, 17], lengths, jet_pt, label."""
    parts, lengths = [], []
    for d in data:
        counts = d["n_part"].astype(np.int64)
        offsets = np.concatenate([[0], np.cumsum(counts)])
        p = np.zeros((len(counts), PAD, len(jt.PARTICLE_FEATURES)), np.float32)
        for i in range(len(counts)):
            k = min(counts[i], PAD)
            for j, f in enumerate(jt.PARTICLE_FEATURES):
                p[i, :k, j] = d[f][offsets[i]:offsets[i] + k]
        parts.append(p)
        lengths.append(np.minimum(counts, PAD))
    return (np.concatenate(parts), np.concatenate(lengths),
            np.concatenate([d["jet_pt"] for d in data]), np.concatenate([d["label"] for d in data]))


def load(paths, shuffle, workers):
    source = stoker.sources.root(paths, tree="tree", branches=jt.PARTICLE_FEATURES + ["jet_pt", "label"])
    got = {"particles": [], "particles_len": [], "jet_pt": [], "label": []}
    with stoker.Loader(source, batch_size=128, shuffle=shuffle, seed=2, workers=workers, as_numpy=True,
                       stack={"particles": jt.PARTICLE_FEATURES}, pad={"particles": PAD}, lengths=True) as loader:
        for batch in loader:
            for k in ("particles", "particles_len", "jet_pt", "label"):
                got[k].append(np.asarray(batch[k]))
        stats = loader.stats()
    return {k: np.concatenate(v) for k, v in got.items() if v}, stats


@pytest.mark.parametrize("codec", ["zlib", "lz4"])
def test_padded_particles_equal_numpy_padding_in_file_order(tmp_path, codec):
    if codec == "lz4":
        pytest.importorskip("lz4.block")
        pytest.importorskip("xxhash")
    paths, data = write(tmp_path, codec)
    parts, lengths, jet_pt, label = expected(data)
    got, stats = load(paths, shuffle=False, workers=1)
    assert got["particles"].dtype == np.float32 and got["particles"].shape == parts.shape
    np.testing.assert_array_equal(got["particles"], parts)
    np.testing.assert_array_equal(got["particles_len"], lengths)
    np.testing.assert_array_equal(got["jet_pt"], jet_pt)
    np.testing.assert_array_equal(got["label"], label)
    n = np.concatenate([d["n_part"] for d in data])
    assert stats["truncatedSamples"] == int((n > PAD).sum()) > 0
    assert stats["droppedValues"] == int(np.maximum(n - PAD, 0).sum()) * len(jt.PARTICLE_FEATURES)


def test_a_shuffled_epoch_gives_every_event_once_across_both_files(tmp_path):
    paths, data = write(tmp_path, "zlib")
    parts, lengths, jet_pt, label = expected(data)
    got, _ = load(paths, shuffle=True, workers=2)
    assert len(got["jet_pt"]) == len(jet_pt)
    assert not np.array_equal(got["jet_pt"], jet_pt), "not shuffled"
    # jet_pt identifies an event here (drawn from a continuous distribution)
    assert len(np.unique(jet_pt)) == len(jet_pt)
    where = {v: i for i, v in enumerate(jet_pt.tolist())}
    order = np.array([where[v] for v in got["jet_pt"].tolist()])
    assert sorted(order.tolist()) == list(range(len(jet_pt)))
    np.testing.assert_array_equal(got["particles"], parts[order])
    np.testing.assert_array_equal(got["particles_len"], lengths[order])
    np.testing.assert_array_equal(got["label"], label[order])
    # both files in the first batches (signal is label 1, background 0)
    assert set(got["label"][:128].tolist()) == {0, 1}
