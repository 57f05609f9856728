#!/usr/bin/env bash
# ROOT, JetClass-shaped TTrees (4 signal-like + 4 background-like files of 10,000 jets: n_part
# ~50 particles a jet (1..128), 17 jagged float32 particle branches, 3 jet floats and an int32
# label; baskets of 1,000 entries), once with LZ4 (fCompress 404) and once with zlib (101),
# written by bench/jetclass_ttree.py. For each codec, in the same run:
#   - the peer: uproot (from its source, numpy only) + numpy padding + a DataLoader with 2 workers
#     (bench/root_peer.py);
#   - Stoker: stoker.Loader(stoker.sources.root(...)) with the particles stacked and padded to
#     [B, 128, 17] float32 + lengths, 2 workers (bench/root_stoker.py);
#   - the decompression ceiling: the JVM (lz4-java, java.util.zip) decompressing just the same
#     baskets from memory, 1 thread and 2 (bench/RootCeiling.java).
# All shuffled across files, batch 512, one epoch a repeat, median of REPEATS; events/s.
# Before the first run it checks that Stoker's reader and uproot read the generated files alike.
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
for codec in lz4 zlib; do
  if [ ! -f "$data/$codec/background_3.root" ]; then
    "$py" bench/jetclass_ttree.py "$data/$codec" --codec "$codec" --check
    "$py" bench/root_reader_check.py "$data/$codec"/*.root
  fi
done
for codec in lz4 zlib; do
  files=("$data/$codec"/*.root)
  echo "== $codec: ${#files[@]} files, $(du -sh "$data/$codec" | cut -f1)"
  peer=$("$py" bench/root_peer.py "${files[@]}" --batch 512 --workers 2 --repeats "$repeats")
  echo "$peer"
  ours=$("$py" bench/root_stoker.py "${files[@]}" --batch 512 --workers 2 --repeats "$repeats")
  echo "$ours"
  ceil=$("$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -Xmx2g -cp "$lz4jar" bench/RootCeiling.java \
    --branches part_,jet_,label --threads 1,2 --repeats 5 "${files[@]}")
  echo "$ceil"
  "$py" - "$codec" "$peer" "$ours" "$ceil" <<'EOF'
import json, sys
codec, peer, ours = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
ceil = {c["threads"]: c for c in map(json.loads, sys.argv[4].splitlines())}
s, p, c2 = ours["eventsPerSec"], peer["eventsPerSec"], ceil[max(ceil)]["eventsPerSec"]
print(f"{codec}: stoker {s} events/s, peer {p} ({s / p:.1f}x), ceiling {c2} on {max(ceil)} threads "
      f"({100 * s / c2:.0f}% of it), {ceil[1]['eventsPerSec']} on 1")
EOF
done
