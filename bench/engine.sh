#!/usr/bin/env bash
# The loader engine's own figures, before and after a change to it: map-style passes (synthetic
# 64-byte samples, W1 token windows) and streaming passes (W4's gzipped JSON lines through the
# helping rings; W2's tar shards as a shuffled stream through the shuffle window, samples left
# raw so that the engine, not JPEG decoding, sets the rate). Stoker only: the peers' figures for
# these workloads come from the *-vs-torch.sh scripts. Needs the data of bench/peers/gen_data.py.
# Usage: bench/engine.sh [REPEATS] [DATA_DIR]   (prints the medians of REPEATS runs)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
repeats=${1:-5}
data=${2:-/tmp/stoker-bench}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "$root"
./stoker --version >/dev/null   # build first, outside the measurement

for r in $(seq "$repeats"); do
  ./stoker bench synthetic --samples 50000000 --sample-bytes 64 --batch 256 --workers 2 --json >>"$out/synthetic.jsonl"
  ./stoker bench tokens "$data/tokens/train.bin" --seq-len 1024 --batch 32 --workers 2 --epochs 8 --json >>"$out/tokens.jsonl"
  ./stoker bench jsonl "$data/jsonl/train.jsonl.gz" --seq-len 1024 --batch 32 --workers 2 --order sequential --epochs 8 --json >>"$out/jsonl.jsonl"
  ./stoker bench shards "$data/images/images-{000000..000019}.tar" --stream --transform none --batch 64 --workers 2 --epochs 20 --json >>"$out/stream.jsonl"
done
/usr/bin/python3 - "$out" "$repeats" <<'PY'
import json, os, statistics, sys
d, n = sys.argv[1], sys.argv[2]
def med(name, key):
    with open(os.path.join(d, name)) as f:
        rows = [json.loads(l) for l in f if l.strip()]
    xs = [r[key] for r in rows]
    return statistics.median(xs), min(xs), max(xs)
print("medians of %s repeats (min-max)" % n)
for label, name, key, unit in [
        ("synthetic 64 B, batch 256, workers 2", "synthetic.jsonl", "samplesPerSec", "samples/s"),
        ("W1 token windows, workers 2", "tokens.jsonl", "tokensPerSecAfterFirst", "tokens/s"),
        ("W4 jsonl.gz stream, workers 2", "jsonl.jsonl", "tokensPerSecAfterFirst", "tokens/s"),
        ("W2 tar stream shuffled, raw, workers 2", "stream.jsonl", "samplesPerSecAfterFirstEpoch", "samples/s")]:
    m, lo, hi = med(name, key)
    print("%-40s %14.0f %s  (%.0f-%.0f)" % (label, m, unit, lo, hi))
PY
