#!/usr/bin/env bash
# The window cache (--window-cache DIR) on W4's JSON lines: epochs 2 and 3 read each shard's packed
# windows from a file instead of tokenizing again. Stoker with GPT-2's BPE (r50k_base) and with
# the bytes tokenizer, each without the cache, filling it, and as a later run that finds it full
# (3 epochs, batch 32, 2 workers, sequential order); the DataLoader (the peers' torch_peer.py W4,
# 1 worker: bytes, the one tokenizer the peer has offline) in the same run. Needs gen_data.py's W4
# (--only=W4) and python3-torch.
# Usage: bench/window-cache.sh [DATA_DIR]   (default /tmp/stoker-bench)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
data=${1:-/tmp/stoker-bench}
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
cd "$root"
./stoker --version >/dev/null   # build first, outside the measurement
peer=$(/usr/bin/python3 bench/peers/torch_peer.py "$data" --workloads W4 --workers 1 --repeats 1 | grep '^{' | tail -1)
echo "{\"loader\": \"DataLoader, 1 worker, bytes\", \"tokensPerSec\": $(echo "$peer" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["median"])')}"
for tok in r50k_base bytes; do
  rm -rf "$cache/$tok"
  for run in "no cache" "filling" "a later run"; do
    opts=""; [ "$run" != "no cache" ] && opts="--window-cache $cache/$tok"
    ./stoker bench jsonl "$data/jsonl/train.jsonl" --tokenizer $tok --seq-len 1024 --batch 32 --workers 2 \
      --order sequential --epochs 3 $opts --json | tail -1 | /usr/bin/python3 -c '
import json, sys
r = json.load(sys.stdin)
after = r["samplesPerSecAfterFirstEpoch"]
print(json.dumps({"loader": "stoker " + sys.argv[1] + ", " + sys.argv[2], "windowsPerSecAfterFirstEpoch": round(after, 1),
                  "tokensPerSecAfterFirstEpoch": round(after * 1024), "tokensPerSecThreeEpochs": round(r["samplesPerSec"] * 1024)}))' "$tok" "$run"
  done
  du -s --block-size=1 "$cache/$tok" | awk -v t=$tok '{print "{\"tokenizer\": \"" t "\", \"cacheBytes\": " $1 "}"}'
done
