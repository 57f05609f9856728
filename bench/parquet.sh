#!/usr/bin/env bash
# Parquet numeric columns to batches (stoker bench parquet) against reading the same file's bytes
# from the page cache. Writes /tmp/stoker-bench/parquet/numbers.parquet with DuckDB first (fetched
# from Maven Central) if it is not there.
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
  for order in sequential shuffle; do
    out=$(./stoker bench parquet "$file" --batch 1024 --workers 2 --order $order --json)
    python3 - "$size" "$raw" "$out" "$order" <<'PY'
import json, sys
size, raw, r, order = int(sys.argv[1]), float(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4]
file_rate = size / r["seconds"]
print(f'{order:10s} raw read {raw/1e6:6.0f} MB/s   stoker: {r["samplesPerSec"]/1e6:6.2f} M rows/s, batches {r["bytesPerSec"]/1e6:5.0f} MB/s,'
      f' file {file_rate/1e6:5.0f} MB/s ({file_rate/raw:.3f} of raw)')
PY
  done
done
