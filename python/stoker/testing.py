"""Helpers for testing a training loop against Stoker's command line."""

import hashlib
from typing import Any, Mapping

import numpy as np

try:
    import torch
except ImportError:
    torch = None


def batch_digest(batch: Mapping[str, Any]) -> str:
    """The lowercase hex SHA-256 of a batch, as ``stoker bench --digests`` prints it: fields in name
    order; a tensor's bytes; a variable-length field's int64 offsets, then its bytes."""
    md = hashlib.sha256()
    for name in sorted(batch):
        value = batch[name]
        parts = value if isinstance(value, tuple) else (value,)
        for part in parts:
            md.update(_bytes(part))
    return md.hexdigest()


def _bytes(a: Any) -> memoryview:
    if torch is not None and isinstance(a, torch.Tensor):
        a = a.detach().cpu().contiguous()
        if a.dtype == torch.bfloat16:
            a = a.view(torch.int16)
        if a.dtype == torch.bool:
            a = a.to(torch.uint8)
        if a.dtype not in (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16, torch.float32,
                           torch.float64):
            a = a.view({1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[a.element_size()])
        return memoryview(a.numpy()).cast("B")
    return memoryview(np.ascontiguousarray(a)).cast("B")
