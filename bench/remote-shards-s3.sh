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
#   /usr/bin/python3 bench/peers/gen_data.py /tmp/stoker-bench --only=W2
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
source bench/s3-server.sh
start_s3_server "$data/images" "$port" --etags="$etags" --checksums="$checksums"

# warm the server's JIT with one untimed download of every shard (staged, so checked too)
./stoker stage "s3://bucket/images-{000000..000019}.tar" "$tmp/warmup" --json >/dev/null
rm -rf "$tmp/warmup"

source bench/cpu.sh
local_src="$data/images/images-{000000..000019}.tar"
s3_src="s3://bucket/images-{000000..000019}.tar"
compare_remote "$local_src" "$s3_src" " (ETags: $etags, checksums: $checksums)"
