#!/usr/bin/env bash
# Time to the first batch from the command's start with many small shards: SHARDS tar shards of
# 7 W2 images each (made here from W2's first shard), read by index (TarDataset), so that opening
# the dataset means listing and indexing every shard. Cold: no stored index (every shard's headers
# read, and the index written); warm: the stored index read. 3,000 distinct shards are written;
# beyond 3,000, shard s is a hard link to distinct shard s mod 3,000, so that 100,000 shards take
# the disk and page cache of 3,000 (each is still a file of its own to list, stat and index).
# Usage: bench/many-shards.sh [REPEATS] [DATA_DIR] [SHARDS]   (default 5, /tmp/stoker-bench, 3000;
# prints the medians of REPEATS runs)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
repeats=${1:-5}
data=${2:-/tmp/stoker-bench}
shards=${3:-3000}
distinct="$data/many-shards"
dir=$distinct
[ "$shards" -gt 3000 ] && dir="$data/many-shards-$shards"
cd "$root"
./stoker --version >/dev/null   # build first, outside the measurement
if [ ! -f "$distinct/shard-002999.tar" ]; then
  mkdir -p "$distinct"
  /usr/bin/python3 - "$data/images/images-000000.tar" "$distinct" <<'PY'
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
last=$(printf 'shard-%06d.tar' $((shards - 1)))
if [ ! -f "$dir/$last" ]; then
  mkdir -p "$dir"
  /usr/bin/python3 - "$distinct" "$dir" "$shards" <<'PY'
import os, sys
src, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
for s in range(n):
    target = "%s/shard-%06d.tar" % (out, s)
    if not os.path.exists(target):
        os.link("%s/shard-%06d.tar" % (src, s % 3000), target)
PY
fi
results=$(mktemp)
trap 'rm -f "$results"' EXIT
for r in $(seq "$repeats"); do
  for state in cold warm; do
    if [ "$state" = cold ]; then
      find "$dir" -maxdepth 1 -name '*.stkidx' -delete
      rm -rf "${XDG_CACHE_HOME:-$HOME/.cache}/stoker/index"
    fi
    ./stoker bench shards "$dir/shard-{000000..$(printf '%06d' $((shards - 1)))}.tar" --transform none --batch 64 --workers 2 --steps 100 --json \
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
