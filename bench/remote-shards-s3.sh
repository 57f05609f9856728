#!/usr/bin/env bash
# W2 (20 WebDataset tar shards, train224, batch 64, 2 workers) read from local disk, then from S3
# on loopback through the shard cache: cold (empty cache) and warm (every shard cached). The S3
# server is S3Proxy over the shard folder (dev.stoker.bench.S3Server, in stoker-bench), with
# signed requests and, by default, what S3 gives a single-part upload: ETags that are the shards'
# MD5s and full-object CRC64NVME checksums, so cold downloads are checked as they would be from S3
# (the checksum when there is one, else the ETag; CHECKSUMS=none: the MD5 ETags, as objects stored
# before 2025 have; both none: size checks only). The server's JIT is warmed by
# one untimed download first. Each repeat prints samples/s, the server's CPU time during each
# remote run, and the CPU time other processes took meanwhile (a shared machine: figures with much
# of it are suspect); then the medians.
# Needs the data:
#   /usr/bin/python3 ../shared/peers/gen_data.py /tmp/stoker-bench --only=W2
# Usage: [ETAGS=md5|none] [CHECKSUMS=crc64nvme|none] [PORT=8098] [STEP_MS=0] bench/remote-shards-s3.sh [REPEATS] [DATA_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
repeats=${1:-3}
data=${2:-/tmp/stoker-bench}
etags=${ETAGS:-md5}
checksums=${CHECKSUMS:-crc64nvme}
port=${PORT:-8098}
cd "$root"
./stoker --version >/dev/null
source bin/jdk.sh   # sets JAVA_HOME to a JDK 25
jar=stoker-bench/target/benchmarks.jar
if [ ! -f "$jar" ] || [ -n "$(find stoker-bench/src stoker-bench/pom.xml -newer "$jar" -print -quit)" ]; then
  mvn -B -q -DskipTests package -pl stoker-bench -am >/dev/null
fi

# dummy credentials: the server checks the signatures made with them
export AWS_ACCESS_KEY_ID=stoker-bench AWS_SECRET_ACCESS_KEY=stoker-bench-secret AWS_REGION=us-east-1
export STOKER_S3_ENDPOINT=http://127.0.0.1:$port
tmp=$(mktemp -d)
"$JAVA_HOME/bin/java" -cp "$jar" dev.stoker.bench.S3Server "$data/images" "$port" bucket --etags="$etags" --checksums="$checksums" \
  >"$tmp/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 240); do
  grep -q '^ready' "$tmp/server.log" && break
  kill -0 $server 2>/dev/null || { cat "$tmp/server.log" >&2; exit 1; }
  sleep 0.25
done
grep '^ready' "$tmp/server.log" || { echo "S3 server did not start" >&2; cat "$tmp/server.log" >&2; exit 1; }

# warm the server's JIT with one untimed download of every shard (staged, so checked too)
./stoker stage "s3://bucket/images-{000000..000019}.tar" "$tmp/warmup" --json >/dev/null
rm -rf "$tmp/warmup"

source bench/cpu.sh
local_src="$data/images/images-{000000..000019}.tar"
s3_src="s3://bucket/images-{000000..000019}.tar"
compare_remote "$local_src" "$s3_src" " (ETags: $etags, checksums: $checksums)"
