#!/usr/bin/env bash
# W2 (20 WebDataset tar shards, train224, batch 64, 2 workers) read from local disk, then over
# loopback HTTP through the shard cache: cold (empty cache) and warm (every shard cached). The
# HTTP server is the JDK's jwebserver, its JIT warmed by one untimed download first. Each repeat
# prints samples/s, the server's CPU time during each remote run, and the CPU time other
# processes took meanwhile (a shared machine: figures with much of it are suspect); then the
# medians. Needs the data:
#   /usr/bin/python3 bench/peers/gen_data.py /tmp/stoker-bench --only=W2
# Usage: [PORT=8099] [STEP_MS=0] bench/remote-shards.sh [REPEATS] [DATA_DIR]
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
compare_remote "$local_src" "$remote_src"
