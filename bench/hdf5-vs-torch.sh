#!/usr/bin/env bash
# HDF5, chunked + gzip + shuffle (20,000 samples of float32[256] and an int64 label, chunks of
# 100 samples): Stoker (`stoker bench hdf5`, shuffled) against h5py through the PyTorch DataLoader
# (bench/hdf5_peer.py), same run, workers 1 and 2 (and 0 for the peer).
# Needs: apt-get install -y python3-h5py python3-torch python3-numpy
# Usage: bench/hdf5-vs-torch.sh [REPEATS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
repeats=${1:-3}
cd "$root"
./stoker --version >/dev/null
file=/tmp/stoker-bench/hdf5/chunked-gzip-20k.h5
mkdir -p "$(dirname "$file")"
[ -f "$file" ] || /usr/bin/python3 bench/hdf5_peer.py make "$file"
/usr/bin/python3 bench/hdf5_peer.py run "$file" --workers 0,1,2 --batch 256 --repeats "$repeats"
for w in 1 2; do
  for r in $(seq "$repeats"); do
    ./stoker bench hdf5 "$file" --dataset /x --dataset /y --batch 256 --workers "$w" --json \
      | python3 -c 'import json,sys; print(round(json.loads(sys.stdin.readline())["samplesPerSec"]))'
  done | sort -n | sed -n "$(( (repeats + 1) / 2 ))p" | sed "s/^/stoker workers $w: median samples\/s /"
done
