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


def test_padded_tensors_with_lengths_and_masks_reach_torch():
    torch = pytest.importorskip("torch")
    source = stoker.sources.parquet(LISTS, columns=["id", "jet_pt", "part_px", "part_py", "part_q"])
    with stoker.Loader(source, pad={"jet_*": 4, "particles": 3}, stack={"particles": ["part_px", "part_py", "part_q"]},
                       lengths=True, mask=True, pad_value=-1, batch_size=64, shuffle=True, num_workers=2) as loader:
        seen = []
        for batch in loader:
            ids = batch["id"]
            b = len(ids)
            pt, n_pt, m_pt = batch["jet_pt"], batch["jet_pt_len"], batch["jet_pt_mask"]
            assert pt.dtype == torch.float32 and tuple(pt.shape) == (b, 4)
            assert n_pt.dtype == torch.int64 and m_pt.dtype == torch.bool and tuple(m_pt.shape) == (b, 4)
            parts, n_parts = batch["particles"], batch["particles_len"]
            assert parts.dtype == torch.float32 and tuple(parts.shape) == (b, 3, 3)
            assert "part_px" not in batch, "stacked fields are gone"
            i = ids.to(torch.int64)
            j = torch.arange(4)
            want_n = torch.clamp(i % 7, max=4)
            assert torch.equal(n_pt, want_n)
            assert torch.equal(m_pt, j[None, :] < want_n[:, None])
            want_pt = torch.where(m_pt, (i[:, None] * 10 + j[None, :]).to(torch.float32), torch.tensor(-1.0))
            assert torch.equal(pt, want_pt)
            k = torch.arange(3)
            held = k[None, :] < torch.clamp(i % 5, max=3)[:, None]
            assert torch.equal(n_parts, torch.clamp(i % 5, max=3))
            px = (i[:, None] + k[None, :] / 4.0).to(torch.float32)
            py = (-i[:, None] - k[None, :]).to(torch.float32)
            q = ((i[:, None] * 3 + k[None, :]) % 5 - 2).to(torch.float32)
            for feature, want in enumerate((px, py, q)):
                assert torch.equal(parts[:, :, feature], torch.where(held, want, torch.tensor(-1.0)))
            seen.extend(ids.tolist())
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
