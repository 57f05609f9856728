#!/usr/bin/env bash
# Time to the first batch from the command's start with many small shards: 3,000 tar shards of
# 7 W2 images each (made here from W2's first shard), read by index (TarDataset), so that opening
# the dataset means an open, a map and an index for each shard. Cold: no stored index (each
# shard's headers read and its .stkidx written); warm: the stored indexes read.
# Usage: bench/many-shards.sh [REPEATS] [DATA_DIR]   (prints the medians of REPEATS runs)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
repeats=${1:-5}
data=${2:-/tmp/stoker-bench}
dir="$data/many-shards"
cd "$root"
./stoker --version >/dev/null   # build first, outside the measurement
if [ ! -f "$dir/shard-002999.tar" ]; then
  mkdir -p "$dir"
  /usr/bin/python3 - "$data/images/images-000000.tar" "$dir" <<'PY'
import io, sys, tarfile
src, out = sys.argv[1], sys.argv[2]
with tarfile.open(src) as t:
    members = [(m.name, t.extractfile(m).read()) for m in t.getmembers() if m.isfile()]
samples = {}
for name, data in members:
    key, _, ext = name.partition(".")
    samples.setdefault(key, []).append((ext, data))
keys = sorted(samples)[:7]
for s in range(3000):
    with tarfile.open("%s/shard-%06d.tar" % (out, s), "w", format=tarfile.USTAR_FORMAT) as t:
        for i, k in enumerate(keys):
            for ext, data in samples[k]:
                info = tarfile.TarInfo("s%06d_%d.%s" % (s, i, ext))
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
PY
fi
results=$(mktemp)
trap 'rm -f "$results"' EXIT
for r in $(seq "$repeats"); do
  for state in cold warm; do
    if [ "$state" = cold ]; then
      rm -f "$dir"/*.stkidx
      rm -rf "${XDG_CACHE_HOME:-$HOME/.cache}/stoker/index"
    fi
    ./stoker bench shards "$dir/shard-{000000..002999}.tar" --transform none --batch 64 --workers 2 --json \
      | /usr/bin/python3 -c 'import json,sys; r=json.load(sys.stdin); print(sys.argv[1], r["firstBatchSeconds"], r["startSeconds"], r["seconds"])' "$state" >>"$results"
  done
done
/usr/bin/python3 - "$results" "$repeats" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
print("medians of %s runs: seconds from the command's start" % sys.argv[2])
for state in ("cold", "warm"):
    rs = [r for r in rows if r[0] == state]
    first = [float(r[1]) for r in rs]
    start = [float(r[2]) for r in rs]
    print("%-5s first batch %.2f s (%.2f-%.2f), of it before the loader %.2f s" % (
        state, statistics.median(first), min(first), max(first), statistics.median(start)))
PY
