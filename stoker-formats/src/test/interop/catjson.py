"""The JSON form `stoker cat` prints values in, for the fixture generators' expected.jsonl files:
bytes as {"bytes", "sha256"}, floats as numbers ("nan", "inf", "-inf" as strings), arrays as
{"dtype", "shape", "sha256"} of their little-endian C-order bytes, plus "values" up to 16 elements."""

import hashlib
import math

import numpy as np


def sha(b):
    return hashlib.sha256(b).hexdigest()


def blob(b):
    b = bytes(b)
    return {'bytes': len(b), 'sha256': sha(b)}


def fnum(x):
    x = float(x)
    if math.isnan(x):
        return 'nan'
    if math.isinf(x):
        return 'inf' if x > 0 else '-inf'
    return x


def nd(arr):
    arr = np.asarray(arr)
    le = arr.astype(arr.dtype.newbyteorder('<'))
    out = {
        'dtype': arr.dtype.name,
        'shape': list(arr.shape),
        'sha256': sha(le.tobytes(order='C')),
    }
    if arr.size <= 16:
        if arr.dtype.kind == 'f':
            out['values'] = [fnum(v) for v in arr.ravel().tolist()]
        elif arr.dtype.kind == 'b':
            out['values'] = [bool(v) for v in arr.ravel().tolist()]
        else:
            out['values'] = [int(v) for v in arr.ravel().tolist()]
    return out
