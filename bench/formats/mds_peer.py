#!/usr/bin/python3
"""MosaicML Streaming's own MDS reader over bench/formats.sh's MDS dataset, one Python thread:
every sample by index, in order and shuffled. Streaming is not on PyPI here: give its source tree
(a checkout of mosaicml/streaming); modules it imports that are not installed are stubbed as
stoker-formats/src/test/interop/make_mds.py stubs them.

Usage: mds_peer.py STREAMING_SRC DATA_DIR
"""
import json
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "stoker-formats", "src", "test", "interop"))
import make_mds  # noqa: E402

make_mds.install_stubs()
sys.path.insert(0, sys.argv[1])
from streaming.base.format import reader_from_json  # noqa: E402

d = os.path.join(sys.argv[2], "mds")
readers = [reader_from_json(d, None, s) for s in json.load(open(os.path.join(d, "index.json")))["shards"]]
pairs = [(r, i) for r in readers for i in range(r.samples)]
for order in ("sequential", "shuffle"):
    todo = pairs if order == "sequential" else [pairs[i] for i in np.random.default_rng(0).permutation(len(pairs))]
    t0 = time.perf_counter()
    for r, i in todo:
        r[i]
    print(f"streaming MDSReader {order}: {len(todo) / (time.perf_counter() - t0):.0f} samples/s")
