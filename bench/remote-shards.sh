#!/usr/bin/env bash
# W2 (20 WebDataset tar shards, train224, batch 64, 2 workers) read from local disk, then over
# loopback HTTP through the shard cache: cold (empty cache) and warm (every shard cached). The
# HTTP server is the JDK's jwebserver; each repeat also prints its CPU time during each remote run
# (utime+stime from /proc). Needs the data:
#   /usr/bin/python3 ../shared/peers/gen_data.py /tmp/stoker-bench --only=W2
# Usage: [PORT=8099] bench/remote-shards.sh [REPEATS] [DATA_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
repeats=${1:-3}
data=${2:-/tmp/stoker-bench}
cd "$root"
./stoker --version >/dev/null
source bin/jdk.sh   # sets JAVA_HOME to a JDK 25
port=${PORT:-8099}
"$JAVA_HOME/bin/jwebserver" -d "$data/images" -p "$port" -b 127.0.0.1 -o none >/dev/null 2>&1 &
server=$!
cache=$(mktemp -d)
trap 'kill $server; rm -rf "$cache"' EXIT
sleep 2
kill -0 $server 2>/dev/null || { echo "jwebserver did not start (port $port taken?)" >&2; exit 1; }
ticks=$(getconf CLK_TCK)
server_cpu() { awk '{print $14 + $15}' /proc/$server/stat; }   # utime + stime, in ticks
secs() { python3 -c "print(f'{($2 - $1) / $ticks:.2f}')"; }
local_src="$data/images/images-{000000..000019}.tar"
remote_src="http://127.0.0.1:$port/images-{000000..000019}.tar"
run() { ./stoker bench shards "$1" --transform train224 --batch 64 --workers 2 --json --no-digest --cache-dir "$cache/c" 2>"$cache/err" \
  | python3 -c 'import json,sys; print(round(json.loads(sys.stdin.readline())["samplesPerSec"]))'; }
for r in $(seq "$repeats"); do
  l=$(run "$local_src")
  rm -rf "$cache/c"
  a=$(server_cpu); c=$(run "$remote_src"); b=$(server_cpu); cstats=$(cat "$cache/err")
  w=$(run "$remote_src"); z=$(server_cpu)
  echo "repeat $r: local $l  cold $c  warm $w samples/s; server CPU cold $(secs "$a" "$b") s, warm $(secs "$b" "$z") s   ($cstats)"
done
