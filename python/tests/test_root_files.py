"""ROOT files laid out as big productions write them, read by the root source and by uproot alike: a tree
in a subdirectory (tree="dir/name"), and a file past 2 GB in ROOT's large format (64-bit seeks). The files
are written by bench/jetclass_ttree.py; the large one is sparse (its baskets after a hole), costing no disk."""

import os
import sys

import numpy as np
import pytest

import stoker
from conftest import ROOT, read_all

sys.path.insert(0, os.path.join(ROOT, "bench"))
import jetclass_ttree as jt  # noqa: E402

if not hasattr(stoker.sources, "root"):
    pytest.skip("this build has no root source", allow_module_level=True)

BRANCHES = ["n_part", "part_px", "part_isMuon", "jet_pt", "label"]
GAP = 2 ** 31 + 12345  # baskets, tree, keys and directories all past 2^31


def write(path, **options):
    """A small JetClass-like tree (zlib) at `path`; returns the values written."""
    data = jt.jets(400, True, np.random.default_rng(7))
    jt.write_tree(str(path), data, 101, cluster=150, **options)
    return data


def read(path, tree):
    """Every value of BRANCHES through the root source, in file order: jagged ones as (counts, values)."""
    return read_all(stoker.sources.root(str(path), tree=tree, branches=BRANCHES))


def assert_values(got, data):
    assert set(got) == set(BRANCHES)
    for name in ("n_part", "jet_pt", "label"):
        assert got[name].dtype == data[name].dtype, name
        np.testing.assert_array_equal(got[name], data[name], err_msg=name)
    for name in ("part_px", "part_isMuon"):
        counts, values = got[name]
        np.testing.assert_array_equal(counts, data["n_part"], err_msg=name)
        np.testing.assert_array_equal(values, data[name], err_msg=name)


def uproot_agrees(path, data, tree):
    """uproot, run from its source (bench/uproot_env.py), reads every branch back as written; skips without it."""
    import uproot_env
    if not os.path.isdir(os.path.join(uproot_env.UPROOT_SRC, "src", "uproot")):
        pytest.skip(f"uproot's source is absent ({uproot_env.UPROOT_SRC})")
    for module in ("lz4.block", "xxhash", "zstd"):  # its codec shims
        pytest.importorskip(module)
    assert jt.check(str(path), data, tree=tree) == len(data["n_part"])


def test_a_tree_in_a_subdirectory_is_read_by_its_path(tmp_path):
    path = tmp_path / "sub.root"
    data = write(path, subdir="sub")
    assert_values(read(path, "sub/tree"), data)
    assert_values(read(path, "/sub/tree/"), data)
    with pytest.raises(Exception, match=r"no tree 'tree'; the top directory holds sub \(TDirectory\)"):
        read(path, "tree")
    with pytest.raises(Exception, match=r"'sub' is a TDirectory, not a TTree"):
        read(path, "sub")
    with pytest.raises(Exception, match=r"no tree 'sub/events'; sub holds tree \(TTree\)"):
        read(path, "sub/events")
    uproot_agrees(path, data, "sub/tree")


def sparse_files_fit(folder):
    """Whether `folder`'s filesystem holds a sparse file past GAP without allocating it."""
    probe = os.path.join(folder, "probe")
    try:
        st = os.statvfs(folder)
        if st.f_bavail * st.f_frsize < (256 << 20):
            return False
        with open(probe, "wb") as f:
            f.seek(GAP + (1 << 20))
            f.write(b"x")
        return os.stat(probe).st_blocks * 512 < (64 << 20)
    except (OSError, OverflowError):
        return False
    finally:
        if os.path.exists(probe):
            os.remove(probe)


@pytest.mark.parametrize("subdir", [None, "sub"])
def test_a_file_past_2_gb_is_read_through_its_64_bit_seeks(tmp_path, subdir):
    if not sparse_files_fit(tmp_path):
        pytest.skip("this filesystem cannot hold a sparse file past 2 GB")
    path = tmp_path / "large.root"
    tree = f"{subdir}/tree" if subdir else "tree"
    try:
        data = write(path, subdir=subdir, gap=GAP)
        with open(path, "rb") as f:
            head = f.read(8)
        assert head[:4] == b"root" and int.from_bytes(head[4:], "big") == 1062206, "ROOT's large format"
        assert os.path.getsize(path) > GAP
        assert_values(read(path, tree), data)
        uproot_agrees(path, data, tree)
    finally:
        if os.path.exists(path):
            os.remove(path)
