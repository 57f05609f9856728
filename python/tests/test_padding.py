"""Ragged fields padded and stacked in the JVM, as a training loop gets them: Parquet list columns
that DuckDB wrote (stoker-parquet/src/test/fixtures/MakeListFixtures.java: every value a function of
the row number i)."""

import os

import numpy as np
import pytest

import stoker
from conftest import ROOT

LISTS = os.path.join(ROOT, "stoker-parquet", "src", "test", "resources", "parquet", "lists.parquet")
ROWS = 5000


def test_padded_tensors_with_lengths_and_masks_reach_the_loop():
    try:
        import torch
    except ImportError:  # numpy arrays then: the same values
        torch = None
    source = stoker.sources.parquet(LISTS, columns=["id", "jet_pt", "part_px", "part_py", "part_q"])
    with stoker.Loader(source, pad={"jet_*": 4, "particles": 3}, stack={"particles": ["part_px", "part_py", "part_q"]},
                       lengths=True, mask=True, pad_value=-1, batch_size=64, shuffle=True, num_workers=2) as loader:
        seen = []
        for batch in loader:
            if torch is not None:
                assert batch["jet_pt"].dtype == torch.float32 and batch["particles"].dtype == torch.float32
                assert batch["jet_pt_len"].dtype == torch.int64 and batch["jet_pt_mask"].dtype == torch.bool
            i = np.asarray(batch["id"]).astype(np.int64)
            b = len(i)
            pt, n_pt, m_pt = (np.asarray(batch[k]) for k in ("jet_pt", "jet_pt_len", "jet_pt_mask"))
            assert (pt.dtype, pt.shape) == (np.float32, (b, 4))
            assert (n_pt.dtype, m_pt.dtype, m_pt.shape) == (np.int64, np.bool_, (b, 4))
            parts, n_parts = np.asarray(batch["particles"]), np.asarray(batch["particles_len"])
            assert (parts.dtype, parts.shape) == (np.float32, (b, 3, 3))
            assert "part_px" not in batch, "stacked fields are gone"
            j = np.arange(4)
            want_n = np.minimum(i % 7, 4)
            np.testing.assert_array_equal(n_pt, want_n)
            np.testing.assert_array_equal(m_pt, j[None, :] < want_n[:, None])
            np.testing.assert_array_equal(pt, np.where(m_pt, i[:, None] * 10 + j[None, :], -1).astype(np.float32))
            k = np.arange(3)
            held = k[None, :] < np.minimum(i % 5, 3)[:, None]
            np.testing.assert_array_equal(n_parts, np.minimum(i % 5, 3))
            px = (i[:, None] + k[None, :] / 4.0).astype(np.float32)
            py = (-i[:, None] - k[None, :]).astype(np.float32)
            q = ((i[:, None] * 3 + k[None, :]) % 5 - 2).astype(np.float32)
            for feature, want in enumerate((px, py, q)):
                np.testing.assert_array_equal(parts[:, :, feature], np.where(held, want, np.float32(-1)))
            seen.extend(i.tolist())
        assert sorted(seen) == list(range(ROWS))
        stats = loader.stats()
        cut = sum(1 for r in range(ROWS) if r % 7 > 4 or r % 5 > 3)
        dropped = sum(max(0, r % 7 - 4) + 3 * max(0, r % 5 - 3) for r in range(ROWS))
        assert stats["truncatedSamples"] == cut
        assert stats["droppedValues"] == dropped


def test_a_ragged_field_left_unpadded_arrives_as_offsets_and_typed_values():
    source = stoker.sources.parquet(LISTS, columns=["id", "part_px"])
    with stoker.Loader(source, batch_size=10, shuffle=False, num_workers=0, as_numpy=True) as loader:
        batch = next(iter(loader))
        offsets, values = batch["part_px"]
        assert values.dtype == np.float64
        assert offsets.tolist() == list(np.cumsum([0] + [i % 5 for i in range(10)]))
        for i in range(10):
            np.testing.assert_array_equal(values[offsets[i]:offsets[i + 1]], [i + j / 4 for j in range(i % 5)])


def test_padding_options_are_checked_before_the_server_starts():
    with pytest.raises(ValueError, match="option 'pad' must map"):
        stoker.Loader(stoker.sources.parquet(LISTS), pad={"jet_*": 0})
    with pytest.raises(ValueError, match="option 'stack' must map"):
        stoker.Loader(stoker.sources.parquet(LISTS), stack={"particles": "part_px"})


def test_a_pad_glob_that_names_no_ragged_field_is_refused_naming_it():
    source = stoker.sources.parquet(LISTS, columns=["id", "jet_pt"])
    with pytest.raises(ValueError, match=r"pad 'muon_\*' names no ragged field.*jet_pt"):
        with stoker.Loader(source, pad={"muon_*": 4}) as loader:
            next(iter(loader))
