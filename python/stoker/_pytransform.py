"""torchvision's transforms taken as they are: ``stoker.Loader(..., transform=Compose([...]))``.

NOTE [Which part runs where]: a ``Compose`` (or ``nn.Sequential``, or a list) is split in two.
Its known prefix, torchvision's ``RandomResizedCrop`` or ``Resize`` + ``CenterCrop``, then
``RandomHorizontalFlip``, then ``ToTensor`` + ``Normalize`` with ImageNet's mean and std (or
``PILToTensor``), becomes the JVM's image options (``transform``, ``size``, ``scale``, ``ratio``,
``resize``, ``flip``, ``image_dtype``): the workers decode, crop, resample and flip with
torchvision's semantics. A parameter the JVM does not implement as torchvision does (another
interpolation, a crop that is not square, antialiasing off) is refused, naming it, never
approximated. From the first transform the JVM does not run, the rest (the tail) runs in Python
on each sample the JVM decoded, as torchvision would have run it: on a PIL image when the prefix
ended before ``ToTensor``, on a tensor after it.

The tail runs in the loader's Python workers (``_workers``, NOTE [Python workers]).
"""

import os
import sys

import numpy as np

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


class Plan:
    """A transform split: the JVM's image options, the prefix they stand for (in words), and the tail."""

    def __init__(self, jvm, known, tail, tail_input):
        self.jvm = jvm              # image options for the spec
        self.known = known          # the prefix, as words
        self.tail = tail            # the transforms Python runs, in order
        self.tail_input = tail_input  # "pil": the tail gets PIL images; "uint8"/"float32": CHW tensors



def describe(plan_, step, workers, batch=None):
    """Which part runs where, in words (``stats()["transform"]``, and once on stderr); ``batch``: the
    functions of whole batches that run in the workers."""
    where = "in this process" if workers == 0 else f"in {workers} Python worker process{'es' if workers > 1 else ''}"
    if batch:
        return f"{', '.join(batch)}: in Python ({where}), a batch a worker"
    jvm = "" if plan_ is None else "in the JVM: " + ", ".join(plan_.known)
    if not step:
        return "transform: all in the JVM: " + ", ".join(plan_.known)
    return (f"transform: {jvm + '; ' if jvm else ''}in Python ({where}), per sample: " + ", ".join(step.describe()))


def is_transform_object(value):
    """Whether ``transform=`` is torchvision's objects (a Compose, nn.Sequential, list) rather than a preset name."""
    return value is not None and not isinstance(value, (str, os.PathLike))


def _flatten(transform):
    if isinstance(transform, (list, tuple)):
        items = list(transform)
    elif type(transform).__name__ == "Compose" and hasattr(transform, "transforms"):
        items = list(transform.transforms)
    elif type(transform).__name__ == "Sequential" and hasattr(transform, "children"):
        items = list(transform.children())
    elif callable(transform):
        items = [transform]
    else:
        raise ValueError(f"stoker.Loader: option 'transform' must be 'train', 'eval', 'none', or torchvision's "
                         f"transforms (a Compose, nn.Sequential or a list), got {transform!r}")
    out = []
    for t in items:
        if not callable(t):
            raise ValueError(f"stoker.Loader: transform= holds {t!r}, which is not callable")
        out.extend(_flatten(t) if type(t).__name__ in ("Compose", "Sequential") or isinstance(t, (list, tuple))
                   else [t])
    return out


def _name(t):
    module = type(t).__module__ or ""
    return type(t).__name__ if module.startswith("torchvision.transforms") else None


def _words(t):
    text = repr(t).replace("\n", "").replace("    ", "")
    return text if len(text) <= 120 else text[:117] + "..."


def _square(name, param, size):
    if isinstance(size, int):
        return size
    size = tuple(size)
    if len(size) == 1:
        return int(size[0])
    if len(size) == 2 and size[0] == size[1]:
        return int(size[0])
    raise ValueError(f"stoker.Loader: transform {name}({param}={size!r}): the JVM crops squares (size=N or (N, N)); "
                     f"a {size[0]}x{size[1]} crop is not implemented")


def _resampling(name, t):
    mode = getattr(t, "interpolation", None)
    value = getattr(mode, "value", mode)
    if value not in ("bilinear", 2, None):
        raise ValueError(f"stoker.Loader: transform {name}(interpolation={mode}): the JVM resamples bilinearly with "
                         "antialiasing, as torchvision's BILINEAR; another interpolation is not implemented")
    if getattr(t, "antialias", None) is False:
        raise ValueError(f"stoker.Loader: transform {name}(antialias=False): the JVM resamples with antialiasing, as "
                         "torchvision does on PIL images; antialias=False is not implemented")


def _close(a, b):
    try:
        a = [float(v) for v in a]
    except TypeError:
        return False
    return len(a) == len(b) and all(abs(x - y) < 1e-6 for x, y in zip(a, b))


def plan(transform):
    """Splits ``transform`` (NOTE [Which part runs where]); ValueError for what the JVM cannot honour."""
    items = _flatten(transform)
    if not items:
        raise ValueError("stoker.Loader: transform= is an empty list of transforms")
    jvm, known = {}, []
    i = 0
    first = _name(items[0])
    if first == "RandomResizedCrop":
        t = items[0]
        _resampling(first, t)
        size = _square(first, "size", t.size)
        jvm.update(transform="train", size=size, scale=[float(v) for v in t.scale], ratio=[float(v) for v in t.ratio])
        known.append(f"RandomResizedCrop(size={size}, scale={tuple(t.scale)}, ratio={tuple(round(r, 4) for r in t.ratio)})")
        i = 1
    elif first == "Resize" and len(items) > 1 and _name(items[1]) == "CenterCrop":
        r, c = items[0], items[1]
        _resampling(first, r)
        if getattr(r, "max_size", None) is not None:
            raise ValueError(f"stoker.Loader: transform Resize(max_size={r.max_size}): not implemented by the JVM")
        size = r.size
        if not isinstance(size, int):
            size = tuple(size)
            if len(size) != 1:
                raise ValueError(f"stoker.Loader: transform Resize(size={size!r}): the JVM resizes the shorter side "
                                 "(size=N); a size of (h, w) is not implemented")
            size = size[0]
        crop = _square("CenterCrop", "size", c.size)
        jvm.update(transform="eval", resize=int(size), size=crop)
        known.append(f"Resize({size}), CenterCrop({crop})")
        i = 2
    else:
        raise ValueError(f"stoker.Loader: transform=: the first transform must be RandomResizedCrop, or Resize then "
                         f"CenterCrop (the JVM decodes each image into a crop of one size), got {_words(items[0])}")
    flip = 0.0
    if i < len(items) and _name(items[i]) == "RandomHorizontalFlip":
        flip = float(items[i].p)
        known.append(f"RandomHorizontalFlip(p={flip:g})")
        i += 1
    jvm["flip"] = flip
    tail_input = "pil"
    if i + 1 < len(items) and _name(items[i]) == "ToTensor" and _name(items[i + 1]) == "Normalize" \
            and _close(items[i + 1].mean, IMAGENET_MEAN) and _close(items[i + 1].std, IMAGENET_STD):
        jvm["image_dtype"] = "float32"
        known.append("ToTensor(), Normalize(ImageNet's mean and std)")
        tail_input = "float32"
        i += 2
    elif i < len(items) and _name(items[i]) == "PILToTensor":
        jvm["image_dtype"] = "uint8"
        known.append("PILToTensor()")
        tail_input = "uint8"
        i += 1
    else:
        jvm["image_dtype"] = "uint8"  # the tail's PIL images are made of the pixels
    return Plan(jvm, known, items[i:], tail_input)


def run_tail(torch, tail, tail_input, pixels):
    """One sample's tail on its pixels (a CHW numpy array of the ring); a tensor."""
    if tail_input == "pil":
        from PIL import Image
        c, h, w = pixels.shape
        if c == 3 and pixels.flags.c_contiguous:  # the planes merged: one copy, 4x faster than a transpose
            x = Image.merge("RGB", [Image.frombuffer("L", (w, h), pixels[i], "raw", "L", 0, 1) for i in range(3)])
        else:
            x = Image.fromarray(np.ascontiguousarray(pixels.transpose(1, 2, 0)).squeeze(2) if c == 1
                                else np.ascontiguousarray(pixels.transpose(1, 2, 0)))
    else:
        x = torch.from_numpy(np.array(pixels))
    for t in tail:
        x = t(x)
    if isinstance(x, np.ndarray):
        x = torch.from_numpy(x)
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"the transform gave a {type(x).__name__}, not a tensor: end it with ToTensor() or "
                        "PILToTensor()")
    return x


def say_once(text):
    print("stoker.Loader: " + text, file=sys.stderr, flush=True)
