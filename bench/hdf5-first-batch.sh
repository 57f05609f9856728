#!/usr/bin/env bash
# The first batch of a contiguous HDF5 dataset (h5py's default layout; PolarBERT-shaped samples of
# float32[8, 4] and an int64 label) at 10 thousand and 1 million samples: `stoker bench hdf5`'s
# firstBatchSeconds (from the JVM's start) and loaderFirstBatchSeconds (from the loader's first
# pass), median of REPEATS runs each. They should not grow with the sample count.
# Needs: apt-get install -y python3-h5py python3-numpy
# Usage: bench/hdf5-first-batch.sh [REPEATS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
repeats=${1:-3}
cd "$root"
./stoker --version >/dev/null
dir=/tmp/stoker-bench/hdf5
mkdir -p "$dir"
for n in 10000 1000000; do
  file=$dir/contiguous-$n.h5
  [ -f "$file" ] || /usr/bin/python3 -c '
import sys, h5py, numpy as np
n = int(sys.argv[2])
with h5py.File(sys.argv[1], "w") as f:
    f["x"] = np.arange(n * 32, dtype=np.float32).reshape(n, 8, 4)
    f["y"] = np.arange(n, dtype=np.int64)
' "$file" "$n"
  for r in $(seq "$repeats"); do
    ./stoker bench hdf5 "$file" --dataset /x --dataset /y --batch 256 --steps 20 --json \
      | python3 -c 'import json,sys; d=json.loads(sys.stdin.readline()); print(round(d["firstBatchSeconds"], 3), round(d["loaderFirstBatchSeconds"], 3))'
  done | sort -n | sed -n "$(( (repeats + 1) / 2 ))p" \
    | awk -v n="$n" '{print n " samples: first batch " $1 " s from the start, " $2 " s from the loader'"'"'s first pass (median)"}'
done
