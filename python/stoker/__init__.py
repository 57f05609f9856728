"""Stoker for Python training loops: batches made by Stoker's JVM loader, handed over with no copy.

    import stoker
    with stoker.Loader("tokens", "train.bin", seq_len=1024, batch_size=32, fields=("x", "y")) as loader:
        for x, y in loader:                  # int64 [32, 1024] tensors viewing shared memory, no copy;
            ...                              # yours for as long as you keep them
"""

from ._ring import Batch, BatchTuple
from .errors import DataError, LoaderDied, LoaderTimeout, StokerError
from . import sources
from .loader import Loader
from . import testing

__all__ = ["Loader", "sources", "Batch", "BatchTuple", "DataError", "LoaderDied", "LoaderTimeout", "StokerError"]
__version__ = "0.1.0"
