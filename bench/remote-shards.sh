#!/usr/bin/env bash
# W2 (20 WebDataset tar shards, train224, batch 64, 2 workers) read from local disk, then over
# loopback HTTP through the shard cache: cold (empty cache) and warm (every shard cached). The
# HTTP server is the JDK's jwebserver, its JIT warmed by one untimed download first. Each repeat
# prints samples/s, the server's CPU time during each remote run, and the CPU time other
# processes took meanwhile (a shared machine: figures with much of it are suspect); then the
# medians. Needs the data:
#   /usr/bin/python3 ../shared/peers/gen_data.py /tmp/stoker-bench --only=W2
# Usage: [PORT=8099] bench/remote-shards.sh [REPEATS] [DATA_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
repeats=${1:-3}
data=${2:-/tmp/stoker-bench}
port=${PORT:-8099}
cd "$root"
./stoker --version >/dev/null
source bin/jdk.sh   # sets JAVA_HOME to a JDK 25
"$JAVA_HOME/bin/jwebserver" -d "$data/images" -p "$port" -b 127.0.0.1 -o none >/dev/null 2>&1 &
server=$!
tmp=$(mktemp -d)
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$tmp"' EXIT
sleep 2
kill -0 $server 2>/dev/null || { echo "jwebserver did not start (port $port taken?)" >&2; exit 1; }
local_src="$data/images/images-{000000..000019}.tar"
remote_src="http://127.0.0.1:$port/images-{000000..000019}.tar"
./stoker stage "$remote_src" "$tmp/warmup" --json >/dev/null
rm -rf "$tmp/warmup"

source bench/cpu.sh
run() { ./stoker bench shards "$1" --transform train224 --batch 64 --workers 2 --json --no-digest --cache-dir "$tmp/c" 2>"$tmp/err" \
  | python3 -c 'import json,sys; print(round(json.loads(sys.stdin.readline())["samplesPerSec"]))' >"$tmp/rate"; }
L=(); C=(); W=(); CS=(); WS=()
for r in $(seq "$repeats"); do
  times >"$tmp/t"; m0=$(machine_cpu); k0=$(children_cpu "$tmp/t"); s0=$(pid_cpu $server)
  run "$local_src"; l=$(cat "$tmp/rate")
  rm -rf "$tmp/c"
  a=$(pid_cpu $server); run "$remote_src"; c=$(cat "$tmp/rate"); b=$(pid_cpu $server); cstats=$(cat "$tmp/err")
  run "$remote_src"; w=$(cat "$tmp/rate"); z=$(pid_cpu $server)
  times >"$tmp/t"; m1=$(machine_cpu); k1=$(children_cpu "$tmp/t")
  other=$(( (m1 - m0) - (k1 - k0) - (z - s0) ))
  L+=("$l"); C+=("$c"); W+=("$w"); CS+=("$(secs "$a" "$b")"); WS+=("$(secs "$b" "$z")")
  echo "repeat $r: local $l  cold $c  warm $w samples/s; server CPU cold ${CS[-1]} s, warm ${WS[-1]} s;" \
    "other processes $(secs 0 $other) s   ($cstats)"
done
echo "median: local $(median "${L[@]}")  cold $(median "${C[@]}")  warm $(median "${W[@]}") samples/s;" \
  "server CPU cold $(median "${CS[@]}") s, warm $(median "${WS[@]}") s"
