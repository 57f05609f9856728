"""Functions of whole batches (``collate_fn``, then ``map``) and how a batch crosses to a Python worker
and its result comes back: the batch's tensors as views of the ring where they lie, the result's
tensors and arrays copied into an output slot, each with its place, and the rest as values."""

import numpy as np


class BatchStep:
    """A function of whole batches: ``collate_fn`` of the batch's samples (a list, as a DataLoader's
    dataset gives them), then ``map``."""

    def __init__(self, fn, collate):
        self.fn = fn
        self.collate = collate
        self.what = " or ".join(n for n, f in (("collate_fn", collate), ("map", fn)) if f is not None)

    def describe(self):
        return [f"{n}={getattr(f, '__qualname__', repr(f))}" for n, f in (("collate_fn", self.collate), ("map", self.fn))
                if f is not None]

    def __call__(self, batch):
        if self.collate is not None:
            batch = self.collate(samples(batch))
        return batch if self.fn is None else self.fn(batch)


def samples(batch):
    """A batch as its samples: a dict each (a tuple with ``fields=``), of views of the batch: a row of a
    tensor, a variable-length field's values of the row, a key."""
    names, values = (list(batch), list(batch.values())) if isinstance(batch, dict) else (None, list(batch))
    rows = 0
    for v in values:
        rows = len(v[0]) - 1 if isinstance(v, tuple) else len(v)
        break
    out = []
    for i in range(rows):
        row = [v[1][int(v[0][i]):int(v[0][i + 1])] if isinstance(v, tuple) else v[i] for v in values]
        out.append(dict(zip(names, row)) if names is not None else tuple(row))
    return out


def describe(value, ring, torch, address=None):
    """A batch as a worker rebuilds it: its tensors as views of the ring where they lie, other values as they are."""
    if address is None:
        address = ring.address()
    if isinstance(value, dict):
        return ("dict", [(k, describe(v, ring, torch, address)) for k, v in value.items()])
    if isinstance(value, tuple):
        return ("tuple", [describe(v, ring, torch, address) for v in value])
    if isinstance(value, torch.Tensor) and value.is_contiguous():
        at, nbytes = value.data_ptr() - address, value.numel() * value.element_size()
        if 0 <= at and at + nbytes <= len(ring.mm):
            return ("ring", at, nbytes, tuple(value.shape), str(value.dtype).replace("torch.", ""))
    return ("value", value)


def rebuild(desc, mm, torch):
    kind = desc[0]
    if kind == "dict":
        return {k: rebuild(d, mm, torch) for k, d in desc[1]}
    if kind == "tuple":
        return tuple(rebuild(d, mm, torch) for d in desc[1])
    if kind == "ring":
        _, at, nbytes, shape, dtype = desc
        return torch.from_numpy(np.frombuffer(mm, np.uint8, count=nbytes, offset=at)).view(getattr(torch, dtype)).view(shape)
    return desc[1]


_VALUES = (int, float, bool, str, bytes, type(None))


def pack(value, torch):
    """A result's structure, its tensors and arrays as leaves placed in an output slot: (tree, leaves, bytes)."""
    leaves, at = [], [0]

    def place(nbytes):
        start = at[0]
        at[0] += -(-nbytes // 64) * 64
        return start

    def walk(v, where):
        if isinstance(v, torch.Tensor):
            if v.device.type != "cpu":
                raise TypeError(f"the result's {where} is on {v.device}: a worker hands back host tensors")
            v = v.detach().contiguous()
            nbytes = v.numel() * v.element_size()
            start = place(nbytes)
            leaves.append((start, v))
            return ("tensor", start, nbytes, tuple(v.shape), str(v.dtype).replace("torch.", ""))
        if isinstance(v, np.ndarray):
            if v.dtype.hasobject:
                raise TypeError(f"the result's {where} is an array of Python objects")
            v = np.ascontiguousarray(v)
            start = place(v.nbytes)
            leaves.append((start, v))
            return ("array", start, v.nbytes, v.shape, v.dtype.str)
        if isinstance(v, dict):
            return ("dict", [(k, walk(x, f"{where}[{k!r}]")) for k, x in v.items()])
        if isinstance(v, (list, tuple)):
            return ("list" if isinstance(v, list) else "tuple", [walk(x, f"{where}[{i}]") for i, x in enumerate(v)])
        if isinstance(v, _VALUES):
            return ("value", v)
        raise TypeError(f"the result's {where} is a {type(v).__name__}; a worker hands back tensors, arrays, numbers, "
                        "strings, and dicts, lists and tuples of them (python_workers=0 runs it in this process)")

    return walk(value, "batch"), leaves, max(64, at[0])


def unpack(tree, raw, torch):
    kind = tree[0]
    if kind == "dict":
        return {k: unpack(d, raw, torch) for k, d in tree[1]}
    if kind in ("list", "tuple"):
        parts = [unpack(d, raw, torch) for d in tree[1]]
        return parts if kind == "list" else tuple(parts)
    if kind == "tensor":
        _, at, nbytes, shape, dtype = tree
        return torch.from_numpy(raw[at:at + nbytes].view(np.ndarray)).view(getattr(torch, dtype)).view(shape)
    if kind == "array":
        _, at, nbytes, shape, dtype = tree
        return raw[at:at + nbytes].view(np.ndarray).view(np.dtype(dtype)).reshape(shape)
    return tree[1]
