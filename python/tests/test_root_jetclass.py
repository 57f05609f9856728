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
    got, stats = load(paths, shuffle=True, workers=2)
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
    assert stats["filesPerBatch"] > 1.5, stats


def test_groups_of_files_are_one_source_with_a_label_field(tmp_path):
    paths, data = write(tmp_path, "zlib")  # a signal-like file (its label branch 1) and a background-like one (0)
    source = stoker.sources.root({"signal": [paths[0]], "background": [paths[1]]}, tree="tree",
                                 branches=["jet_pt", "label"], label="group")
    assert eval(repr(source), {"stoker": stoker}) == source
    jet_pt = np.concatenate([d["jet_pt"] for d in data])
    with stoker.Loader(source, batch_size=100, shuffle=True, seed=4, workers=2, as_numpy=True) as loader:
        got = [(np.asarray(b["jet_pt"]), np.asarray(b["label"]), np.asarray(b["group"])) for b in loader]
        stats = loader.stats()
    pt, label, group = (np.concatenate(x) for x in zip(*got))
    assert sorted(pt.tolist()) == sorted(jet_pt.tolist()), "every event once"
    assert group.dtype == np.int64
    np.testing.assert_array_equal(group, 1 - label)  # signal is group 0, its branch says 1
    assert set(group[:100].tolist()) == {0, 1} and stats["filesPerBatch"] > 1.5
    with pytest.raises(Exception, match="'label'.*label="):
        with stoker.Loader(stoker.sources.root({"signal": [paths[0]], "background": [paths[1]]}, tree="tree",
                                               branches=["label"]), batch_size=10) as loader:
            next(iter(loader))


def test_weights_draw_the_groups_in_proportion_each_in_its_own_order(tmp_path):
    paths, data = write(tmp_path, "zlib")
    n_signal, n_background = len(data[0]["jet_pt"]), len(data[1]["jet_pt"])
    source = stoker.sources.root({"signal": [paths[0]], "background": [paths[1]]}, tree="tree",
                                 branches=["jet_pt"], weights={"signal": 1, "background": 3})
    epochs = []
    with stoker.Loader(source, batch_size=128, shuffle=True, seed=4, workers=2, as_numpy=True) as loader:
        for epoch in range(2):
            loader.set_epoch(epoch)
            got = [(np.asarray(b["jet_pt"]), np.asarray(b["label"])) for b in loader]
            epochs.append(tuple(np.concatenate(x) for x in zip(*got)))
    for pt, label in epochs:
        total = n_signal + n_background
        assert len(pt) == total
        assert abs(int((label == 1).sum()) - total * 3 / 4) <= 1
        signal = pt[label == 0]
        assert len(np.unique(signal)) == len(signal), "a group drawn below its size: no event twice"
        assert set(signal.tolist()) <= set(data[0]["jet_pt"].tolist())
        background = pt[label == 1]
        assert set(background.tolist()) == set(data[1]["jet_pt"].tolist()), "drawn beyond its size: every event"
        assert np.unique(background, return_counts=True)[1].max() <= 2
    assert set(epochs[0][0][epochs[0][1] == 0].tolist()) != set(epochs[1][0][epochs[1][1] == 0].tolist()), \
        "another part of the signal each epoch"
    with pytest.raises(ValueError, match="one weight to each group"):
        stoker.sources.root({"signal": [paths[0]], "background": [paths[1]]}, tree="tree", weights={"signal": 1})


def test_weighted_groups_resume_from_a_state_dict_as_the_uninterrupted_run(tmp_path):
    paths, _ = write(tmp_path, "lz4" if _has_lz4() else "zlib")
    source = stoker.sources.root({"signal": [paths[0]], "background": [paths[1]]}, tree="tree",
                                 branches=["jet_pt"], weights={"signal": 2, "background": 1})
    opts = dict(batch_size=64, shuffle=True, seed=8, workers=2, as_numpy=True)

    def pts(loader, limit=None):
        out = []
        for b in loader:
            out.append(np.asarray(b["jet_pt"]).tolist())
            if len(out) == limit:
                break
        return out

    with stoker.Loader(source, **opts) as loader:
        whole = pts(loader)
    with stoker.Loader(source, **opts) as loader:
        head = pts(loader, limit=7)
        state = loader.state_dict()
    with stoker.Loader(source, **dict(opts, workers=1)) as loader:
        loader.load_state_dict(state)
        tail = pts(loader)
    assert head + tail == whole


def _has_lz4():
    try:
        import lz4.block  # noqa: F401
        import xxhash  # noqa: F401
        return True
    except ImportError:
        return False
