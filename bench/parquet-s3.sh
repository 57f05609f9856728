#!/usr/bin/env bash
# Parquet from S3 by ranged reads: `stoker bench parquet` over the file of bench/parquet.sh served
# by S3 on loopback (S3Proxy, dev.stoker.bench.S3Server, signed requests), projecting one column
# and all four, against the same file read locally; prints the rows/s of each and, for S3, the
# bytes fetched, the requests, and the bytes the projection needs (the footer and the projected
# column chunks).
# Needs the file bench/parquet.sh writes (run it once, or give ROWS to write a smaller one).
# Usage: [PORT=8099] bench/parquet-s3.sh [REPEATS] [ROWS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
repeats=${1:-3}
rows=${2:-20000000}
port=${PORT:-8099}
cd "$root"
./stoker --version >/dev/null
source bin/jdk.sh
source bench/parquet-file.sh
file=$(parquet_file "$rows")
source bench/s3-server.sh
start_s3_server "$(dirname "$file")" "$port"
remote="s3://bucket/$(basename "$file")"
cat "$file" >/dev/null   # the local read from the page cache
for r in $(seq "$repeats"); do
  for columns in id id,x,y,k; do
    for where in local s3; do
      src=$file; [ "$where" = s3 ] && src=$remote
      out=$(./stoker bench parquet "$src" --columns "$columns" --batch 1024 --workers 2 --order sequential --json 2>"$tmp/err")
      python3 - "$out" "$where" "$columns" "$(grep '^parquet' "$tmp/err" || true)" <<'PY'
import json, sys
r, where, columns, traffic = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
print(f'{columns:9s} {where:5s} {r["samplesPerSec"]/1e6:6.2f} M rows/s  {traffic.split(": ", 1)[1] if traffic else ""}')
PY
    done
  done
done
