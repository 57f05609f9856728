#!/usr/bin/env bash
# ROOT, JetClass-shaped TTrees (4 signal-like + 4 background-like files of 25,000 jets: n_part
# ~50 particles a jet (1..128), 17 jagged float32 particle branches, 3 jet floats and an int32
# label; baskets of 1,000 entries), once with LZ4 (fCompress 404) and once with zlib (101),
# written by bench/jetclass_ttree.py. For each codec, in the same run:
#   - the peer: uproot (from its source, numpy only) + numpy padding + a DataLoader with 2 workers
#     (bench/root_peer.py);
#   - Stoker: stoker.Loader(stoker.sources.root(...)) with the particles stacked and padded to
#     [B, 128, 17] float32 + lengths, 2 workers (bench/root_stoker.py), with the source's default
#     cache of decoded clusters (256 MB, less than the 710 MB the files decode to, as at JetClass
#     scale: each epoch decompresses every basket again); and the same loader in the JVM
#     (bench/RootLoaderBench.java), without the hand-over to Python;
#   - the decompression ceiling: the JVM (lz4-java, java.util.zip) decompressing just the same
#     baskets from memory, 1 thread and 2 (bench/RootCeiling.java).
# All shuffled across files, batch 512, one epoch a repeat after one warm-up epoch (Stoker's), median of
# REPEATS; events/s.
# It first checks the peer's uproot against ../shared/physics-data/root/expected_ttrees.json, and before
# the first run that Stoker's reader and uproot read the generated files alike.
# Needs: apt-get install -y python3-torch python3-numpy python3-lz4 python3-xxhash python3-zstd
#        and uproot's source: git clone https://github.com/scikit-hep/uproot5 "$UPROOT_SRC"
#        (default /tmp/stoker-bench/uproot5; measured with 5388b857)
# Usage: bench/root-vs-uproot.sh [REPEATS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
repeats=${1:-3}
cd "$root"
./stoker --version >/dev/null
. bin/jdk.sh
py=/usr/bin/python3
data=/tmp/stoker-bench/root
lz4jar=$(ls stoker-cli/target/lib/lz4-java-*.jar | head -n 1)
# the peer's uproot, run with numpy only, reads the real files as expected (skipped without ../shared)
expected=../shared/physics-data/root/expected_ttrees.json
[ -f "$expected" ] && "$py" bench/uproot_env.py "$expected"
for codec in lz4 zlib; do
  if [ ! -f "$data/$codec/background_3.root" ]; then
    "$py" bench/jetclass_ttree.py "$data/$codec" --codec "$codec" --jets 25000 --check
    "$py" bench/root_reader_check.py "$data/$codec"/*.root
  fi
done
jvm=("$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED --add-modules=jdk.incubator.vector -XX:+UseSerialGC -Xmx3g)
for codec in lz4 zlib; do
  files=("$data/$codec"/*.root)
  echo "== $codec: ${#files[@]} files, $(du -sh "$data/$codec" | cut -f1)"
  # the peer: a whole epoch a repeat
  peer=$("$py" bench/root_peer.py "${files[@]}" --batch 512 --workers 2 --repeats "$repeats")
  echo "peer:          $peer"
  # Stoker from Python, the source's default cache (256 MB of decoded clusters)
  stoker=$("$py" bench/root_stoker.py "${files[@]}" --batch 512 --workers 2 --repeats "$repeats" --warmup 1)
  echo "stoker:        $stoker"
  # the JVM loop, the same loader without the hand-over to Python
  jvmloop=$("${jvm[@]}" -cp 'stoker-cli/target/lib/*' bench/RootLoaderBench.java --workers 2 --repeats "$repeats" \
    --warmup 1 "${files[@]}" | grep '^{')
  echo "stoker JVM:    $jvmloop"
  ceil=$("${jvm[@]}" -cp "$lz4jar" bench/RootCeiling.java --branches part_,jet_,label --threads 1,2 --repeats 5 "${files[@]}")
  echo "$ceil" | sed 's/^/ceiling:       /'
  "$py" - "$codec" "$peer" "$stoker" "$jvmloop" "$ceil" <<'EOF2'
import json, sys
codec = sys.argv[1]
peer, stoker, jvm = (json.loads(x) for x in sys.argv[2:5])
ceil = {c["threads"]: c["eventsPerSec"] for c in map(json.loads, sys.argv[5].splitlines())}
p, s, j = peer["eventsPerSec"], stoker["eventsPerSec"], jvm["eventsPerSec"]
print(f"{codec}: peer {p} events/s; Stoker (Python) {s} ({s / p:.2f}x the peer, {100 * s / ceil[2]:.0f}% of the "
      f"2-thread decompression ceiling {ceil[2]}); the JVM loop {j} ({j / p:.2f}x, {100 * j / ceil[2]:.0f}%); "
      f"1-thread ceiling {ceil[1]}")
EOF2
done
