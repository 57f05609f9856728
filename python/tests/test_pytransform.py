"""``transform=`` of torchvision's objects (NOTE [Which part runs where] in ``_pytransform.py``):
the known prefix runs in the JVM as its preset does, and matches torchvision on the same crops; the
tail runs in Python worker processes, seeded by sample, so the batches do not depend on their
number; failures name the sample or the worker's exit status."""

import glob
import io
import os
import random
import tarfile

import numpy as np
import pytest

import stoker
from conftest import SHM

torch = pytest.importorskip("torch")
T = pytest.importorskip("torchvision.transforms", reason="apt install python3-torchvision")

IMAGENET = dict(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])


def shards(data):
    return sorted(str(p) for p in data.glob("shard-*.tar"))


def outputs():
    return sorted(glob.glob(os.path.join(SHM, "stoker-pyout-*")))


@pytest.fixture(autouse=True)
def no_output_left():
    before = outputs()
    yield
    assert outputs() == before, "an output batch file was left in " + SHM


def digests(paths, **options):
    with stoker.Loader("shards", *paths, batch_size=8, seed=5, num_workers=2, **options) as loader:
        return [stoker.testing.batch_digest(b) for b in loader]


def test_a_small_model_trains_on_a_compose_and_the_batches_do_not_depend_on_the_python_workers(data, capfd):
    compose = T.Compose([T.RandomResizedCrop(160), T.RandomHorizontalFlip(), T.ColorJitter(0.4, 0.4, 0.4),
                         T.ToTensor(), T.Normalize(**IMAGENET)])
    runs = {}
    for workers in (1, 3):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 5, stride=4), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
                                    torch.nn.Flatten(), torch.nn.Linear(8, 10))
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        seen, losses = [], []
        with stoker.Loader("shards", *shards(data), transform=compose, batch_size=8, seed=5, python_workers=workers,
                           fields=("image", "label")) as loader:
            for epoch in range(2):
                for x, y in loader:
                    assert x.shape == (len(y), 3, 160, 160) and x.dtype == torch.float32
                    seen.append(stoker.testing.batch_digest({"image": x, "label": y}))
                    loss = torch.nn.functional.cross_entropy(model(x), y)
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    losses.append(loss.item())
            stats = loader.stats()
        assert stats["pythonWorkers"] == workers
        assert stats["transformJvm"][0].startswith("RandomResizedCrop(size=160")
        assert [t.split("(")[0] for t in stats["transformPython"]] == ["ColorJitter", "ToTensor", "Normalize"]
        assert all(np.isfinite(losses))
        runs[workers] = seen
    assert runs[1] == runs[3], "the batches depend on the number of Python workers"
    assert runs[1][:len(runs[1]) // 2] != runs[1][len(runs[1]) // 2:], "two epochs drew the same augmentations"
    err = capfd.readouterr().err
    assert err.count("in Python (in 3 Python worker processes), per sample: ColorJitter") == 1, err


def test_in_this_process_the_tail_gives_the_same_batches_and_leaves_the_users_generators_alone(data):
    compose = [T.RandomResizedCrop(24), T.ColorJitter(0.5, 0.5), T.ToTensor()]
    torch.manual_seed(11)
    np.random.seed(11)
    random.seed(11)
    here = digests(shards(data), transform=compose, python_workers=0)
    drawn = (torch.rand(1).item(), np.random.rand(), random.random())
    torch.manual_seed(11)
    np.random.seed(11)
    random.seed(11)
    assert drawn == (torch.rand(1).item(), np.random.rand(), random.random())
    assert here == digests(shards(data), transform=compose, python_workers=2)


def test_a_resumed_loader_gives_the_rest_of_the_epoch_with_the_same_augmentations(data):
    compose = T.Compose([T.RandomResizedCrop(24), T.ColorJitter(0.5, 0.5), T.PILToTensor()])
    opts = dict(transform=compose, batch_size=8, seed=5, python_workers=2)
    with stoker.Loader("shards", *shards(data), **opts) as loader:
        whole = [stoker.testing.batch_digest(b) for b in loader]
    with stoker.Loader("shards", *shards(data), **opts) as loader:
        it = iter(loader)
        next(it)
        next(it)
        state = loader.state_dict()
    with stoker.Loader("shards", *shards(data), **opts) as loader:
        loader.load_state_dict(state)
        assert [stoker.testing.batch_digest(b) for b in loader] == whole[2:]


@pytest.mark.parametrize("compose, preset", [
    ([T.RandomResizedCrop(32, scale=(0.3, 1)), T.RandomHorizontalFlip(), T.ToTensor(), T.Normalize(**IMAGENET)],
     dict(transform="train", size=32, scale=(0.3, 1))),
    ([T.RandomResizedCrop((32, 32), ratio=(0.5, 2)), T.PILToTensor()],
     dict(transform="train", size=32, ratio=(0.5, 2), flip=0, image_dtype="uint8")),
    ([T.Resize(36), T.CenterCrop(32), T.ToTensor(), T.Normalize(**IMAGENET)], dict(transform="eval", resize=36, size=32)),
    ([torch.nn.Sequential(T.Resize(40), T.CenterCrop(32), T.RandomHorizontalFlip(0.3)), T.PILToTensor()],
     dict(transform="eval", resize=40, size=32, flip=0.3, image_dtype="uint8")),
])
def test_the_known_transforms_run_in_the_jvm_as_its_preset_does(data, compose, preset):
    with stoker.Loader("shards", *shards(data), transform=compose, batch_size=8) as loader:
        next(iter(loader))
        assert loader._pool is None and loader.stats()["pythonWorkers"] == 0
        assert loader.stats()["transformPython"] == []
    assert digests(shards(data), transform=compose) == digests(shards(data), **preset)


def test_the_known_prefix_matches_torchvision_on_the_same_crops(data):
    """The JVM's crop, resample and flip of each image against torchvision's own (PIL) on the crop
    and flip the JVM drew (decode_on="torchvision" hands them over), within one level on average."""
    from PIL import Image
    import torchvision.transforms.functional as F
    paths = shards(data)
    compose = [T.RandomResizedCrop(32, scale=(0.25, 1)), T.RandomHorizontalFlip(), T.PILToTensor()]
    jpegs = {}
    for p in paths:
        with tarfile.open(p) as tar:
            for m in tar.getmembers():
                if m.name.endswith(".jpg"):
                    jpegs[m.name[:-4]] = tar.extractfile(m).read()
    opts = dict(batch_size=8, seed=9, num_workers=2, keys=True)
    with stoker.Loader("shards", *paths, transform=compose, **opts) as ours, \
            stoker.Loader("shards", *paths, transform="train", size=32, scale=(0.25, 1), image_dtype="uint8",
                          decode_on="torchvision", **opts) as drawn:
        drawn._session()
        drawn._decoder = lambda batch: batch  # the crops and flips the workers drew, not decoded
        checked = 0
        for a, b in zip(ours, drawn):
            assert a["__key__"] == b["__key__"]
            for i, key in enumerate(a["__key__"]):
                img = Image.open(io.BytesIO(jpegs[key])).convert("RGB")
                x, y, w, h = (int(round(v)) for v in b["crop"][i].tolist())
                want = F.pil_to_tensor(F.resized_crop(img, y, x, h, w, [32, 32]))
                if bool(b["flip"][i]):
                    want = want.flip(-1)
                diff = (a["image"][i].float() - want.float()).abs().mean().item()
                assert diff <= 1.0, (key, diff)
                checked += 1
    assert checked == 60


class Fails:
    def __call__(self, img):
        raise ValueError("no such luck")


class Exits:
    def __init__(self, main):
        self.main = main

    def __call__(self, img):
        if os.getpid() != self.main:  # in a worker; the first sample, run here for the batch's shape, passes
            os._exit(7)
        return img


@pytest.mark.parametrize("workers", [0, 2])
def test_an_exception_in_the_tail_names_the_sample_and_is_raised_in_the_loop(data, workers):
    with stoker.Loader("shards", *shards(data), transform=[T.RandomResizedCrop(24), Fails(), T.ToTensor()],
                       batch_size=8, python_workers=workers, order="sequential") as loader:
        with pytest.raises(stoker.StokerError) as e:
            next(iter(loader))
    message = str(e.value)
    assert "the transform raised on sample 's0i000' (batch 0 of epoch 0)" in message, message
    assert "ValueError: no such luck" in message, message


def test_a_worker_that_dies_fails_the_loader_with_its_exit_status(data):
    import time
    with stoker.Loader("shards", *shards(data), transform=[T.RandomResizedCrop(24), Exits(os.getpid()), T.ToTensor()],
                       batch_size=8, python_workers=2) as loader:
        t0 = time.monotonic()
        with pytest.raises(stoker.LoaderDied, match=r"a Python worker \(pid \d+\) of the loader.s Python functions exited with status 7") as e:
            for _ in loader:
                pass
        assert time.monotonic() - t0 < 10
        assert e.value.exit_status == 7


@pytest.mark.parametrize("compose, says", [
    ([T.ColorJitter(0.4), T.ToTensor()], "the first transform must be RandomResizedCrop"),
    ([T.RandomResizedCrop((32, 48))], "a 32x48 crop is not implemented"),
    ([T.RandomResizedCrop(32, interpolation=T.InterpolationMode.NEAREST)], "another interpolation"),
    ([T.Resize((36, 40)), T.CenterCrop(32)], "a size of (h, w) is not implemented"),
    ([T.RandomResizedCrop(32, antialias=False)], "antialias=False is not implemented"),
    ([], "empty"),
])
def test_what_the_jvm_cannot_honour_is_refused_naming_it(compose, says):
    with pytest.raises(ValueError) as e:
        stoker.Loader("shards", "x.tar", transform=compose)
    assert says in str(e.value), str(e.value)


def test_the_crop_is_given_once_and_python_workers_is_checked():
    with pytest.raises(ValueError, match="size are given by transform="):
        stoker.Loader("shards", "x.tar", transform=[T.RandomResizedCrop(32)], size=64)
    with pytest.raises(ValueError, match="python_workers"):
        stoker.Loader("shards", "x.tar", transform=[T.RandomResizedCrop(32)], python_workers=-1)
    with pytest.raises(ValueError, match="decode_on= does not go with functions Python runs on each sample"):
        stoker.Loader("shards", "x.tar", transform=[T.RandomResizedCrop(32), T.ColorJitter(0.3), T.ToTensor()],
                      decode_on="torchvision")


def shift(sample):
    """A per-sample function of the physicists' kind: a random shift of each window, and a field of its own."""
    k = int(torch.randint(0, 5, ()))
    return {"x": sample["x"] + k, "y": sample["y"], "shift": k}


def test_sample_map_runs_on_each_sample_of_any_source_with_the_same_batches_for_any_workers(data):
    runs = {}
    for workers in (0, 2):
        with stoker.Loader("tokens", data / "tokens.bin", seq_len=16, batch_size=8, order="sequential",
                           sample_map=shift, python_workers=workers) as loader:
            batches = [{k: v.clone() for k, v in b.items()} for b in loader]
            assert loader.stats()["transformPython"] == ["sample_map=shift"]
        runs[workers] = batches
    for a, b in zip(runs[0], runs[2]):
        assert sorted(a) == ["shift", "x", "y"] and all(torch.equal(a[k], b[k]) for k in a)
    first = runs[0][0]
    assert torch.equal(first["x"][:, 0] - first["shift"], torch.arange(8) * 16), "each window shifted by its own k"
    assert len({int(v) for b in runs[0] for v in b["shift"]}) > 1


def test_sample_map_after_a_transforms_tail_and_fields_of_its_outputs(data):
    def mark(sample):
        return {"image": sample["image"], "label": sample["label"], "bright": sample["image"].mean()}
    with stoker.Loader("shards", *shards(data), transform=[T.RandomResizedCrop(24), T.ColorJitter(0.5), T.ToTensor()],
                       sample_map=mark, batch_size=8, python_workers=2, fields=("image", "bright")) as loader:
        for x, bright in loader:
            assert torch.allclose(x.mean(dim=(1, 2, 3)), bright)
    with stoker.Loader("tokens", data / "tokens.bin", seq_len=16, sample_map=lambda s: [1], python_workers=0) as loader:
        with pytest.raises(stoker.StokerError, match="sample_map gave a list, not a dict"):
            next(iter(loader))


def test_sample_map_of_a_source_without_keys_resumes_exactly(data):
    opts = dict(seq_len=16, batch_size=8, sample_map=shift, python_workers=1, seed=3)
    with stoker.Loader("tokens", data / "tokens.bin", **opts) as loader:
        whole = [stoker.testing.batch_digest(b) for b in loader]
    with stoker.Loader("tokens", data / "tokens.bin", **opts) as loader:
        it = iter(loader)
        for _ in range(3):
            next(it)
        state = loader.state_dict()
    with stoker.Loader("tokens", data / "tokens.bin", **opts) as loader:
        loader.load_state_dict(state)
        assert [stoker.testing.batch_digest(b) for b in loader] == whole[3:]


def test_a_source_value_refuses_transform_objects_saying_where_they_go():
    with pytest.raises(ValueError, match=r"go to stoker.Loader\(source, transform=...\)"):
        stoker.sources.shards("x.tar", transform=[T.RandomResizedCrop(32)])
