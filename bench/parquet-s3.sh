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
file=/tmp/stoker-bench/parquet/numbers-$rows.parquet
if [ ! -f "$file" ]; then
  mvn -B -q dependency:get -Dartifact=org.duckdb:duckdb_jdbc:1.4.2.0 -Dtransitive=false
  "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -cp ~/.m2/repository/org/duckdb/duckdb_jdbc/1.4.2.0/duckdb_jdbc-1.4.2.0.jar \
    bench/MakeParquetBench.java "$file" "$rows"
fi
jar=stoker-bench/target/benchmarks.jar
if [ ! -f "$jar" ] || [ -n "$(find stoker-bench/src stoker-bench/pom.xml -newer "$jar" -print -quit)" ]; then
  mvn -B -q -DskipTests package -pl stoker-bench -am >/dev/null
fi
export AWS_ACCESS_KEY_ID=stoker-bench AWS_SECRET_ACCESS_KEY=stoker-bench-secret AWS_REGION=us-east-1
export STOKER_S3_ENDPOINT=http://127.0.0.1:$port
tmp=$(mktemp -d)
"$JAVA_HOME/bin/java" -cp "$jar" dev.stoker.bench.S3Server "$(dirname "$file")" "$port" bucket >"$tmp/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null || true; rm -rf "$tmp"' EXIT
for _ in $(seq 240); do
  grep -q '^ready' "$tmp/server.log" && break
  kill -0 $server 2>/dev/null || { cat "$tmp/server.log" >&2; exit 1; }
  sleep 0.25
done
grep -q '^ready' "$tmp/server.log" || { echo "S3 server did not start" >&2; cat "$tmp/server.log" >&2; exit 1; }
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
