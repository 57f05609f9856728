#!/usr/bin/env bash
# Builds out/gpu-bundle: everything the GPU benchmarks need on a machine with no JDK and no
# network, under 64 MiB: Stoker's wheel (./stoker wheel: the package, its jars, a jlinked Java 25
# runtime and the native libraries it loads), the peers' scripts with gen_data.py (from
# bench/peers) and the GPU benchmarks (bench/gpu/). On the GPU machine:
#   out/gpu-bundle/run.sh OUT_DIR [WHAT...]     (see bench/gpu/run.sh)
# Usage: bench/gpu-bundle.sh [DEST]   (default out/gpu-bundle)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-$root/out/gpu-bundle}
limit=$((64 << 20))
cd "$root"
./stoker --version >/dev/null   # builds if needed
source bin/jdk.sh
peers="$root/bench/peers"
[ -f "$peers/gen_data.py" ] || { echo "gpu-bundle: no $peers/gen_data.py (bench/peers in the repository)" >&2; exit 1; }

rm -rf "$dest"
mkdir -p "$dest"
# Stoker itself: the wheel (the package, the jars, a jlinked runtime, the native libraries)
./stoker wheel "$dest" >/dev/null

# the peers (and the data generator), the GPU benchmarks
mkdir -p "$dest/peers"
cp "$peers"/*.py "$dest/peers/"
cp -r bench/gpu "$dest/gpu"
cp bench/gpu/run.sh "$dest/run.sh"
cp bench/bridge_cpu.py bench/bridge_bench.py "$dest/"   # W1 through the bridge against the JVM loop
find "$dest" -name __pycache__ -prune -exec rm -rf {} +

bytes=$(du -sb "$dest" | cut -f1)
echo "gpu-bundle: $dest, $((bytes >> 20)) MiB"
if [ "$bytes" -gt "$limit" ]; then
  echo "gpu-bundle: $bytes bytes, more than the 64 MiB that travels" >&2
  exit 1
fi
