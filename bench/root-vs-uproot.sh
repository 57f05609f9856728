#!/usr/bin/env bash
# ROOT, JetClass-shaped TTrees (4 signal-like + 4 background-like files of 10,000 jets: n_part
# ~50 particles a jet (1..128), 17 jagged float32 particle branches, 3 jet floats and an int32
# label; baskets of 1,000 entries), once with LZ4 (fCompress 404) and once with zlib (101),
# written by bench/jetclass_ttree.py. For each codec, in the same run:
#   - the peer: uproot (from its source, numpy only) + numpy padding + a DataLoader with 2 workers
#     (bench/root_peer.py);
#   - Stoker: stoker.Loader(stoker.sources.root(...)) with the particles stacked and padded to
#     [B, 128, 17] float32 + lengths, 2 workers (bench/root_stoker.py), with the source's default
#     cache of decoded clusters (smaller than the data, as at scale) and with one that holds it all;
#     and the same loader in the JVM, every epoch decompressing every basket (bench/RootLoaderBench.java);
#   - the decompression ceiling: the JVM (lz4-java, java.util.zip) decompressing just the same
#     baskets from memory, 1 thread and 2 (bench/RootCeiling.java).
# All shuffled across files, batch 512, one epoch a repeat (the first 40 batches where the default cache
# thrashes), median of REPEATS; events/s.
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
    "$py" bench/jetclass_ttree.py "$data/$codec" --codec "$codec" --check
    "$py" bench/root_reader_check.py "$data/$codec"/*.root
  fi
done
jvm=("$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED --add-modules=jdk.incubator.vector -Xmx3g)
for codec in lz4 zlib; do
  files=("$data/$codec"/*.root)
  echo "== $codec: ${#files[@]} files, $(du -sh "$data/$codec" | cut -f1)"
  # the peer: a whole epoch a repeat
  peer=$("$py" bench/root_peer.py "${files[@]}" --batch 512 --workers 2 --repeats "$repeats")
  echo "peer:          $peer"
  # Stoker from Python, the source's default cache (256 MB of decoded clusters, less than the
  # 284 MB the files decode to, as at JetClass scale): the first 40 batches of each epoch
  small=$("$py" bench/root_stoker.py "${files[@]}" --batch 512 --workers 2 --repeats "$repeats" --batches 40)
  echo "stoker 256MB:  $small"
  # Stoker from Python with a cache that holds every decoded cluster: epoch 1 decompresses, later ones do not
  big=$("$py" bench/root_stoker.py "${files[@]}" --batch 512 --workers 2 --repeats "$repeats" --cache-mb 1024)
  echo "stoker 1GB:    $big"
  # the JVM loop, each epoch a fresh dataset (every basket decompressed), after one warm-up epoch
  fresh=$("${jvm[@]}" -cp 'stoker-cli/target/lib/*' bench/RootLoaderBench.java --workers 2 --repeats "$repeats" \
    --cache-mb 1024 --fresh --warmup 1 "${files[@]}" | grep '^{')
  echo "stoker JVM:    $fresh"
  ceil=$("${jvm[@]}" -cp "$lz4jar" bench/RootCeiling.java --branches part_,jet_,label --threads 1,2 --repeats 5 "${files[@]}")
  echo "$ceil" | sed 's/^/ceiling:       /'
  "$py" - "$codec" "$peer" "$small" "$big" "$fresh" "$ceil" <<'EOF2'
import json, statistics, sys
codec = sys.argv[1]
peer, small, big, fresh = (json.loads(x) for x in sys.argv[2:6])
ceil = {c["threads"]: c["eventsPerSec"] for c in map(json.loads, sys.argv[6].splitlines())}
p = peer["eventsPerSec"]
first, later = big["rates"][0], statistics.median(big["rates"][1:] or big["rates"])
print(f"{codec}: peer {p} events/s; Stoker (Python) {small['eventsPerSec']} with the default cache "
      f"({small['eventsPerSec'] / p:.2f}x), {first} in a first epoch ({first / p:.2f}x) and {later:.0f} in later ones "
      f"({later / p:.2f}x) with a 1 GB cache; the JVM loop decompressing every epoch {fresh['eventsPerSec']} = "
      f"{100 * fresh['eventsPerSec'] / ceil[2]:.0f}% of the 2-thread ceiling {ceil[2]} (1 thread: {ceil[1]})")
EOF2
done
