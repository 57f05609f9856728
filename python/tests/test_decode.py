"""``decode_on=``: the server hands over each JPEG with the crop and flip it drew, and torchvision
decodes, crops, resizes and flips where the batch goes. On a machine without a GPU the same steps
run on the CPU (``decode_on="torchvision"``) and are held to the images Stoker's workers decode
with the same seed: the same crops, the same flips, the same labels, in the same order."""

import io
import tarfile

import numpy as np
import pytest

import stoker

torch = pytest.importorskip("torch")
pytest.importorskip("torchvision", reason="decode_on= decodes with torchvision: apt install python3-torchvision")


@pytest.fixture(scope="module")
def smooth(tmp_path_factory):
    """Two shards of smooth JPEGs of many sizes (gradients and a disc: a wrong crop or flip shows)."""
    from PIL import Image
    d = tmp_path_factory.mktemp("decode-data")
    paths = []
    for s in range(2):
        path = d / f"smooth-{s:06d}.tar"
        with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tar:
            for i in range(12):
                w, h = 64 + 9 * i, 48 + 5 * ((i * 7) % 11)
                yy, xx = np.mgrid[0:h, 0:w]
                img = np.stack([255 * xx / w, 255 * yy / h, 128 + 100 * np.sin(xx / 9.0 + s)], axis=-1)
                img[(xx - w * 0.3) ** 2 + (yy - h * 0.6) ** 2 < (h / 5) ** 2] = (250, 20, 60)
                buf = io.BytesIO()
                Image.fromarray(img.clip(0, 255).astype(np.uint8)).save(buf, format="JPEG", quality=95)
                key = f"s{s}i{i:03d}"
                for name, payload in ((key + ".jpg", buf.getvalue()), (key + ".cls", str(10 * s + i).encode())):
                    info = tarfile.TarInfo(name)
                    info.size = len(payload)
                    tar.addfile(info, io.BytesIO(payload))
        paths.append(str(path))
    return paths


def batches(paths, **options):
    with stoker.Loader("shards", *paths, size=32, batch_size=5, seed=3, num_workers=2, **options) as loader:
        return [{k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in b.items()} for b in loader]


@pytest.mark.parametrize("transform", ["train", "eval"])
def test_the_same_crops_flips_and_labels_as_the_workers_decode(smooth, transform):
    here = batches(smooth, transform=transform, image_dtype="uint8", keys=True)
    there = batches(smooth, transform=transform, image_dtype="uint8", keys=True, decode_on="torchvision")
    assert [sorted(b) for b in there] == [["__key__", "image", "label"]] * len(here)
    assert sum(len(b["label"]) for b in there) == 24
    for a, b in zip(here, there):
        assert b["image"].dtype == torch.uint8 and b["image"].shape == a["image"].shape
        assert torch.equal(a["label"], b["label"]) and a["__key__"] == b["__key__"]
        diff = (a["image"].float() - b["image"].float()).abs().mean(dim=(1, 2, 3))
        # two decoders (the workers decode at a reduced DCT scale) and two resamplers: a few levels
        # apart; another crop or a missed flip is tens of levels apart on these images. eval here is
        # torchvision's two steps (Resize, then CenterCrop at whole pixels); the workers resample the
        # fractional center crop in one pass, up to a pixel of the resized image away
        assert diff.max() < (4.0 if transform == "train" else 8.0), (a["__key__"], diff)
        mirrored = (a["image"].float() - b["image"].flip(-1).float()).abs().mean(dim=(1, 2, 3))
        assert (mirrored > 3 * diff.clamp(min=1)).all(), (diff, mirrored)


def test_float32_is_the_uint8_images_normalized_and_fields_give_tuples(smooth):
    u8 = batches(smooth, image_dtype="uint8", decode_on="torchvision")
    with stoker.Loader("shards", *smooth, size=32, batch_size=5, seed=3, decode_on="torchvision",
                       fields=("image", "label")) as loader:
        for (x, y), b in zip(loader, u8):
            mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
            std = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)
            assert x.dtype == torch.float32
            assert torch.allclose(x, (b["image"].float() / 255 - mean) / std, atol=1e-5)
            assert torch.equal(y, b["label"])


def test_decode_on_is_checked(smooth):
    with pytest.raises(ValueError, match="decode_on"):
        stoker.Loader("shards", *smooth, decode_on="gpu")
    with pytest.raises(ValueError, match="decode_on"):
        with stoker.Loader("shards", *smooth, transform="none", decode_on="torchvision") as loader:
            next(iter(loader))
    with pytest.raises(ValueError, match="as_numpy"):
        stoker.Loader("shards", *smooth, decode_on="torchvision", as_numpy=True)
    if not torch.cuda.is_available():
        with pytest.raises(stoker.StokerError, match="CUDA was not found"):
            stoker.Loader("shards", *smooth, decode_on="cuda")



def test_an_image_cache_gives_the_batches_stoker_bench_gives_with_it(smooth, tmp_path):
    from conftest import bench_digests
    expected = bench_digests(tmp_path, "shards", *smooth, "--size", "32", "--batch", "5", "--seed", "3", "--cache", "ram",
                             "--epochs", "2")
    got = []
    with stoker.Loader("shards", *smooth, size=32, batch_size=5, seed=3, cache="ram") as loader:
        for _ in range(2):
            got += [stoker.testing.batch_digest(b) for b in loader]
    assert got == expected and len(got) == 10
    with pytest.raises(ValueError, match="cache"):
        with stoker.Loader("shards", *smooth, cache_max_side=64) as loader:  # the server checks the spec
            next(iter(loader))


def test_two_processes_share_one_disk_cache_and_get_the_batches_of_none(smooth, tmp_path):
    """NOTE [Image cache file]: `stoker bench` in one process and a Loader's server in another fill
    one cache file at once; each gets the batches of the same pipeline with nothing kept, and a
    later run reads every image from the file."""
    import subprocess
    from stoker._process import server_command
    from conftest import bench_digests
    opts = ["--size", "32", "--batch", "5", "--seed", "3", "--epochs", "2"]
    expected = bench_digests(tmp_path, "shards", *smooth, *opts, "--cache", "ram")  # whole-image decodes, as any cache
    folder = tmp_path / "images"
    out = tmp_path / "other.txt"
    other = subprocess.Popen(server_command() + ["bench", "shards", *map(str, smooth), *opts, "--cache", str(folder),
                                                 "--digests", str(out)], stderr=subprocess.PIPE, text=True)
    got = []
    with stoker.Loader("shards", *smooth, size=32, batch_size=5, seed=3, cache=str(folder)) as loader:
        for _ in range(2):
            got += [stoker.testing.batch_digest(b) for b in loader]
    assert other.wait(timeout=120) == 0, other.stderr.read()
    assert got == expected and out.read_text().split() == expected
    files = sorted(p.name for p in folder.iterdir())
    assert len(files) == 1 and files[0].startswith("stoker-images-") and files[0].endswith("-whole.cache"), files
    with stoker.Loader("shards", *smooth, size=32, batch_size=5, seed=3, cache=str(folder)) as loader:
        assert [stoker.testing.batch_digest(b) for b in loader] == expected[:len(expected) // 2]
