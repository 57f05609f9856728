#!/usr/bin/env bash
# Parquet numeric columns to batches (stoker bench parquet) against the decompression ceiling
# measured in the same run (the projected column chunks in memory, every page decompressed by
# zstd-jni on two threads, nothing decoded) and against reading the file's bytes from the page
# cache. Three orders: sequential, a uniform shuffle of all rows, and a shuffle by row group
# (--shuffle-row-groups 4). Writes /tmp/stoker-bench/parquet/numbers-ROWS.parquet with DuckDB
# first (fetched from Maven Central) if it is not there.
# Usage: bench/parquet.sh [REPEATS] [ROWS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
repeats=${1:-3}
rows=${2:-20000000}
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
  for order in sequential shuffle row-groups; do
    case $order in
      row-groups) args=(--shuffle-row-groups 4) ;;
      *) args=(--order "$order") ;;
    esac
    out=$(./stoker bench parquet "$file" --batch 1024 --workers 2 "${args[@]}" --ceiling 2 --json 2>"$err")
    python3 - "$size" "$raw" "$out" "$order" "$(grep '^ceiling:' "$err")" <<'PY'
import json, re, sys
size, raw, r, order, ceiling = int(sys.argv[1]), float(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4], sys.argv[5]
ceil_rows = float(re.search(r'([0-9.]+) M rows/s', ceiling).group(1)) * 1e6
file_rate = size / r["seconds"]
rows = r["samplesPerSec"]
print(f'{order:10s} stoker {rows/1e6:6.2f} M rows/s, batches {r["bytesPerSec"]/1e6:5.0f} MB/s | ceiling (2 threads) {ceil_rows/1e6:6.2f} M rows/s'
      f' -> {rows/ceil_rows:.2f} of it | file {file_rate/1e6:5.0f} MB/s, raw read {raw/1e6:5.0f} MB/s ({file_rate/raw:.3f})')
PY
  done
done
