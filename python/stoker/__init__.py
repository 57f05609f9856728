"""Stoker for Python training loops: batches made by Stoker's JVM loader, handed over with no copy.

    import stoker
    with stoker.Loader("tokens", "train.bin", seq_len=1024, batch_size=32, shuffle=True, seed=1) as loader:
        for batch in loader:                 # a dict: field name -> tensor aliasing shared memory
            x, y = batch["x"], batch["y"]    # int64 [32, 1024]; valid until the next batch
"""

from .errors import DataError, LoaderDied, StokerError
from .loader import Loader, batch_digest

__all__ = ["Loader", "batch_digest", "DataError", "LoaderDied", "StokerError"]
__version__ = "0.1.0"
