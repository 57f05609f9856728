"""Other loaders' formats, read as they are through stoker.Loader: files their own writers wrote
(stoker-formats/src/test/resources/interop, and the shared ArrayRecord anchor files)."""

import glob
import json
import os

import numpy as np
import pytest

import stoker
from conftest import ROOT, stoker_cli

INTEROP = os.path.join(ROOT, "stoker-formats", "src", "test", "resources", "interop")
ANCHOR = os.path.join(os.path.dirname(ROOT), "shared", "anchor-data", "array_record")


def _strings(pair):
    offsets, data = (np.asarray(a) for a in pair)
    raw = data.tobytes()
    return [raw[offsets[i]:offsets[i + 1]].decode() for i in range(len(offsets) - 1)]


def test_an_mds_dataset_arrives_in_storage_order_with_its_values():
    path = os.path.join(INTEROP, "mds", "gz")
    want = [json.loads(line) for line in open(os.path.join(path, "expected.jsonl"))]
    source = stoker.sources.mds(path, fields=["int", "str"])
    with stoker.Loader(source, batch_size=4, shuffle=False, num_workers=2, as_numpy=True) as loader:
        ints, strs = [], []
        for batch in loader:
            assert batch["int"].dtype == np.int64
            ints += batch["int"].tolist()
            strs += _strings(batch["str"])
    assert ints == [w["int"] for w in want]
    assert strs == [w["str"] for w in want]


def test_a_column_the_loader_cannot_batch_is_named():
    with pytest.raises(stoker.StokerError, match="field 'ndarray' is .* where the first record has"):
        with stoker.Loader(stoker.sources.mds(os.path.join(INTEROP, "mds", "zstd")), batch_size=2, shuffle=False) as loader:
            for _ in loader:
                pass


@pytest.mark.skipif(not os.path.isdir(ANCHOR), reason="the shared anchor data is not beside the checkout")
def test_arrayrecord_shards_give_each_record_once_per_epoch_shuffled():
    files = sorted(glob.glob(os.path.join(ANCHOR, "digits.array_record-*")))
    with stoker.Loader(stoker.sources.arrayrecord(*files), batch_size=3, num_workers=2, as_numpy=True) as loader:
        for epoch in range(2):
            seen = [s for batch in loader for s in _strings(batch["record"])]
            assert sorted(seen) == [str(i) for i in range(10)], epoch


def test_cat_prints_what_the_writer_was_given():
    path = os.path.join(INTEROP, "tfrecord", "unpacked.tfrecord")
    out = stoker_cli("cat", "tfrecord", path).stdout.splitlines()
    want = open(path + ".expected.jsonl").read().splitlines()

    def as_float32(v):  # a float32 prints as its shortest decimal, the writer's side as its exact value
        if isinstance(v, float):
            return np.float32(v)
        if isinstance(v, list):
            return [as_float32(x) for x in v]
        if isinstance(v, dict):
            return {k: as_float32(x) for k, x in v.items()}
        return v

    assert [as_float32(json.loads(line)) for line in out] == [as_float32(json.loads(line)) for line in want]


def test_a_saved_hugging_face_dataset_arrives_with_its_types():
    path = os.path.join(INTEROP, "arrow", "saved")
    want = [json.loads(line) for line in open(os.path.join(path, "expected.jsonl"))]
    source = stoker.sources.arrow(path, fields=["id", "u64", "f16", "text", "ints"])
    got = {"id": [], "u64": [], "f16": [], "text": [], "ints": []}
    with stoker.Loader(source, batch_size=5, shuffle=False, num_workers=2, as_numpy=True) as loader:
        for batch in loader:
            assert (batch["u64"].dtype, batch["f16"].dtype) == (np.uint64, np.float16)
            got["id"] += batch["id"].tolist()
            got["u64"] += [int(v) for v in batch["u64"]]
            got["f16"] += batch["f16"].astype(np.float64).tolist()
            got["text"] += _strings(batch["text"])
            offsets, values = (np.asarray(a) for a in batch["ints"])  # a ragged list: its int32s, offsets in values
            assert values.dtype == np.int32
            got["ints"] += [values[offsets[i]:offsets[i + 1]].tolist() for i in range(len(offsets) - 1)]
    got["f16"] = [str(v) if v != v or abs(v) == float("inf") else v for v in got["f16"]]  # as stoker cat writes them
    for k in got:
        assert got[k] == [row[k] for row in want], k


def test_an_image_column_feeds_the_image_pipeline():
    path = os.path.join(INTEROP, "mds", "all")
    want = [json.loads(line) for line in open(os.path.join(path, "expected.jsonl"))]
    source = stoker.sources.mds(path, image="jpeg", label="uint8", transform="eval", size=16, image_dtype="uint8")
    labels = []
    with stoker.Loader(source, batch_size=5, shuffle=False, as_numpy=True) as loader:
        for batch in loader:
            assert batch["image"].shape[1:] == (3, 16, 16) and batch["image"].dtype == np.uint8
            labels += batch["label"].tolist()
    assert labels == [w["uint8"] for w in want]


def test_an_image_column_decodes_on_the_device_too():
    torch = pytest.importorskip("torch")
    pytest.importorskip("torchvision", reason="decode_on= decodes with torchvision: apt install python3-torchvision")
    path = os.path.join(INTEROP, "mds", "all")
    options = dict(image="jpeg", label="uint8", transform="eval", size=16, image_dtype="uint8")
    with stoker.Loader(stoker.sources.mds(path, **options), batch_size=5, shuffle=False) as loader:
        here = [(b["image"].clone(), b["label"].clone()) for b in loader]
    with stoker.Loader(stoker.sources.mds(path, decode_on="torchvision", **options), batch_size=5, shuffle=False) as loader:
        there = [(b["image"].clone(), b["label"].clone()) for b in loader]
    assert len(here) == len(there) > 0
    for (a, la), (b, lb) in zip(here, there):
        assert torch.equal(la, lb) and a.shape == b.shape
        assert (a.float() - b.float()).abs().mean() < 6, "the same images, decoded and resampled apart"
