"""ROOT files read through stoker.Loader: the values uproot reads from the real files (../shared/physics-data)."""

import json
import os

import numpy as np
import pytest

import stoker
from conftest import ROOT, read_all

PHYSICS = os.path.join(os.path.dirname(ROOT), "shared", "physics-data", "root")
pytestmark = pytest.mark.skipif(not os.path.isdir(PHYSICS), reason="../shared/physics-data is absent")


def expected(name):
    with open(os.path.join(PHYSICS, "expected_ttrees.json")) as f:
        return json.load(f)[name]


def test_every_branch_of_hzz_equals_uproot():
    want = expected("uproot-HZZ.root")
    got = read_all(stoker.sources.root(os.path.join(PHYSICS, "uproot-HZZ.root"), tree="events"))
    assert set(got) == set(want["branches"])
    for name, e in want["branches"].items():
        if e["kind"] == "jagged":
            counts, values = got[name]
            assert len(counts) == want["entries"], name
            assert counts[:8].tolist() == e["counts_first"], name
            assert len(values) == e["n_values"], name
        else:
            values = got[name]
            assert values.shape == tuple(e["shape"]), name
            assert values.dtype == np.dtype(e["dtype"]), name
        assert values.astype(np.float64).sum() == pytest.approx(e["sum"], rel=1e-9, abs=1e-9), name
        assert values[:4].astype(np.float64).tolist() == pytest.approx([float(v) for v in e["first_values"]]), name


def test_ragged_branches_arrive_typed_with_offsets_counted_in_values():
    path = os.path.join(PHYSICS, "uproot-small-evnt-tree-fullsplit.root")
    source = stoker.sources.root([path, path], tree="tree", branches=["evt/StlVecI16", "evt/ArrayF64*", "evt/N"])
    with stoker.Loader(source, batch_size=64, shuffle=False, as_numpy=True) as loader:
        batch = next(iter(loader))
        offsets, values = batch["evt.StlVecI16"]
        assert values.dtype == np.int16
        assert np.diff(offsets).tolist()[:10] == batch["evt.N"][:10].tolist()
        assert batch["evt.ArrayF64"].shape == (64, 10) and batch["evt.ArrayF64"].dtype == np.float64
    got = read_all(source)
    assert len(got["evt.N"]) == 200  # two files, one after the other
    assert got["evt.StlVecI16"][1].sum() == 2 * 23100


def test_a_selected_string_branch_is_refused_by_name():
    source = stoker.sources.root(os.path.join(PHYSICS, "uproot-Zmumu.root"), tree="events", branches=["Type", "M"])
    with pytest.raises(Exception, match="branch 'Type' is char\\*, which Stoker does not read; leave it out of branches="):
        with stoker.Loader(source, batch_size=8) as loader:
            next(iter(loader))


def test_root_needs_a_tree():
    with pytest.raises(ValueError, match="needs tree="):
        stoker.sources.root("x.root")


def test_a_root_source_is_a_value_its_repr_remakes():
    a = stoker.sources.root(["a.root", "b.root"], tree="events", branches=["Jet_*"])
    assert a == stoker.sources.root("a.root", "b.root", tree="events", branches=["Jet_*"])
    assert eval(repr(a), {"stoker": stoker}) == a
    assert a.spec == {"kind": "root", "paths": [os.path.abspath("a.root"), os.path.abspath("b.root")], "tree": "events",
                      "branches": ["Jet_*"]}
