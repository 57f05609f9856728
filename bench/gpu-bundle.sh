#!/usr/bin/env bash
# Builds out/gpu-bundle: everything the GPU benchmarks need on a machine with no JDK and no
# network, under 64 MiB: a jlinked JDK 25 runtime with only the modules Stoker uses (debug
# stripped, compressed), stoker-cli.jar and the jars its manifest names (zstd-jni and snappy-java
# keep only their linux-x86_64 library), the stoker Python package, the peers' scripts with
# gen_data.py (from bench/peers) and the GPU benchmarks (bench/gpu/). On the GPU machine:
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
mkdir -p "$dest/lib"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# the jars: stoker-cli.jar and those its manifest's Class-Path names
cp stoker-cli/target/stoker-cli.jar "$dest/"
unzip -p stoker-cli/target/stoker-cli.jar META-INF/MANIFEST.MF | tr -d '\r' \
  | awk '/^Class-Path:/ {sub(/^Class-Path: /, ""); p = 1; printf "%s", $0; next} p && /^ / {sub(/^ /, ""); printf "%s", $0; next} {p = 0}' \
  | tr ' ' '\n' | grep . >"$work/jars"
while read -r jar; do
  cp "stoker-cli/target/$jar" "$dest/$jar"
done <"$work/jars"
# what the GPU machine cannot use (it has no network): the AWS SDK and its HTTP client (S3), and
# the chart library (inspect --plot); a Class-Path entry that is missing is skipped by the JVM
sdk=$(basename "$(ls "$dest"/lib/s3-*.jar)" .jar); sdk=${sdk#s3-}
rm -f "$dest"/lib/*-"$sdk".jar "$dest"/lib/httpclient5-*.jar "$dest"/lib/httpcore5*.jar "$dest"/lib/eventstream-*.jar \
  "$dest"/lib/reactive-streams-*.jar "$dest"/lib/xchart-*.jar
# native libraries for other systems: only linux-x86_64's are kept
for jar in "$dest"/lib/zstd-jni-*.jar "$dest"/lib/snappy-java-*.jar "$dest"/lib/lz4-java-*.jar; do
  [ -f "$jar" ] || continue
  zip -q -d "$jar" $(unzip -Z1 "$jar" | grep -E '^(linux/|darwin/|win/|freebsd/|aix/|org/xerial/snappy/native/|net/jpountz/util/)[^/]' \
    | grep -v -E '(linux/amd64/|Linux/x86_64/|linux/x86_64/)' | grep -v '/$' | grep -E '\.(so|dylib|dll|jnilib|a)$') >/dev/null 2>&1 || true
done

# the runtime: the modules the jars use, and the Vector API's, less java.desktop (javax.imageio:
# PNG and the JPEG fallback; 19 MiB of the 64): JPEG is decoded by libjpeg-turbo, carried in
# native/ with ISA-L (gzip), which run.sh puts on LD_LIBRARY_PATH
mods=$(jdeps --multi-release 25 --ignore-missing-deps --print-module-deps \
  --class-path "$(ls "$dest"/lib/*.jar | tr '\n' :)" "$dest/stoker-cli.jar" 2>/dev/null | grep -v "^WARNING")
mods=$(echo "$mods,jdk.incubator.vector,jdk.unsupported,java.logging" | tr , '\n' | grep -v '^java.desktop$' | sort -u | paste -sd,)
jlink --add-modules "$mods" --strip-java-debug-attributes --strip-native-debug-symbols objcopy=/usr/bin/objcopy --no-header-files \
  --no-man-pages --compress zip-9 --output "$dest/jdk" 2> >(grep -v '^WARNING: Using incubator modules' >&2)
strip --strip-unneeded "$dest/jdk/lib/server/libjvm.so"   # its symbols: 5 MiB
mkdir -p "$dest/native"
for lib in libturbojpeg.so.0 libisal.so.2; do
  f=$(ldconfig -p | awk -v l="$lib" '$1 == l {print $NF; exit}')
  [ -n "$f" ] || { echo "gpu-bundle: $lib is not installed here (Debian: libturbojpeg0, libisal2)" >&2; exit 1; }
  cp -L "$f" "$dest/native/$lib"
done

# Python: the package, the peers (and the data generator), the GPU benchmarks
mkdir -p "$dest/python" "$dest/peers"
cp -r python/stoker "$dest/python/"
find "$dest" -name __pycache__ -prune -exec rm -rf {} +
cp "$peers"/*.py "$dest/peers/"
cp -r bench/gpu "$dest/gpu"
cp bench/gpu/run.sh "$dest/run.sh"

bytes=$(du -sb "$dest" | cut -f1)
echo "gpu-bundle: $dest, $((bytes >> 20)) MiB (modules: $mods)"
if [ "$bytes" -gt "$limit" ]; then
  echo "gpu-bundle: $bytes bytes, more than the 64 MiB that travels" >&2
  exit 1
fi
