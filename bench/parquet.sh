#!/usr/bin/env bash
# Parquet numeric columns to batches (stoker bench parquet) against the decompression ceiling
# measured in the same run (the projected column chunks in memory, every page decompressed by
# zstd-jni on two threads, nothing decoded) and against reading the file's bytes from the page
# cache. Three orders: sequential, a shuffle by row group (--shuffle-row-groups 4), and a uniform
# shuffle of all rows. EPOCHS epochs in one process (default 5): the first pays the JVM's warm-up
# (about a second of compiling on two cores), a training run's later hours do not. Sequential and
# by row group with a cache of 64 MB, a sixth of the decoded file, so every epoch decodes every
# row group; the uniform shuffle with the default 512 MB, which holds the decoded file (it needs
# to: a uniform shuffle of a file larger than the cache decodes a row group per row).
# Writes /tmp/stoker-bench/parquet/numbers-ROWS.parquet with DuckDB first (fetched from Maven
# Central) if it is not there.
# Usage: bench/parquet.sh [REPEATS] [ROWS] [EPOCHS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
repeats=${1:-3}
rows=${2:-20000000}
epochs=${3:-5}
cd "$root"
./stoker --version >/dev/null
source bin/jdk.sh
source bench/parquet-file.sh
file=$(parquet_file "$rows")
size=$(stat -c %s "$file")
cat "$file" >/dev/null   # into the page cache
err=$(mktemp)
trap 'rm -f "$err"' EXIT
for r in $(seq "$repeats"); do
  raw=$(python3 - "$file" <<'PY'
import sys, time
t = time.perf_counter(); n = 0
with open(sys.argv[1], 'rb', buffering=0) as f:
    while True:
        b = f.read(1 << 20)
        if not b: break
        n += len(b)
print(n / (time.perf_counter() - t))
PY
)
  for order in sequential row-groups shuffle; do
    case $order in
      sequential) args=(--order sequential --decoded-cache-mb 64) ;;
      row-groups) args=(--shuffle-row-groups 4 --decoded-cache-mb 64) ;;
      shuffle) args=(--order shuffle) ;;
    esac
    out=$(./stoker bench parquet "$file" --batch 1024 --workers 2 --epochs "$epochs" "${args[@]}" --ceiling 2 --json 2>"$err")
    python3 - "$size" "$raw" "$out" "$order" "$(grep '^ceiling:' "$err")" "$rows" <<'PY'
import json, re, sys
size, raw, r, order, ceiling = int(sys.argv[1]), float(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4], sys.argv[5]
ROWS = int(sys.argv[6])
ceil_rows = float(re.search(r'([0-9.]+) M rows/s', ceiling).group(1)) * 1e6
file_rate = size * r["samples"] / ROWS / r["seconds"]
rows = r["samplesPerSec"]
steady = r.get("samplesPerSecAfterFirstEpoch", rows)
print(f'{order:10s} stoker {rows/1e6:6.2f} M rows/s over {r["samples"] // ROWS} epochs, {steady/1e6:6.2f} M after the first'
      f' (batches {steady * r["bytesPerSec"] / rows / 1e6:5.0f} MB/s) | ceiling (2 threads) {ceil_rows/1e6:6.2f} M rows/s'
      f' -> {rows/ceil_rows:.2f}, {steady/ceil_rows:.2f} of it | file {file_rate/1e6:5.0f} MB/s, raw read {raw/1e6:5.0f} MB/s ({file_rate/raw:.3f})')
PY
  done
done
