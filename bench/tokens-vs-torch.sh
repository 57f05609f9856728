#!/usr/bin/env bash
# Stoker versus the PyTorch DataLoader (and nanoGPT's get_batch) on W1 (token windows from a
# 200M-token uint16 memmap) and W4 (JSON lines -> bytes -> packed 1024-token windows), one run,
# one machine. Needs bench/peers, Debian's python3-torch, and the data:
#   /usr/bin/python3 bench/peers/gen_data.py /tmp/stoker-bench --only=W1,W4
# The peer's headline rate leaves out its first batch (rate_steady in torch_peer.py), and so does
# Stoker's figure here (tokensPerSecAfterFirst); over 5-9 s runs the first batch hardly counts.
# Usage: bench/tokens-vs-torch.sh [REPEATS] [DATA_DIR] [W1,W4]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
peers="$root/bench/peers"
repeats=${1:-3}
data=${2:-/tmp/stoker-bench}
only=${3:-W1,W4}
out=$(mktemp -d)
cd "$root"
./stoker --version >/dev/null

touch "$out/torch-w1.jsonl" "$out/stoker-w1.jsonl" "$out/stoker-w1-random.jsonl" "$out/torch-w4.jsonl" "$out/stoker-w4.jsonl"
case ",$only," in *,W1,*)
/usr/bin/python3 "$peers/torch_peer.py" "$data" --workloads W1 --workers 0,1,2 --repeats "$repeats" --min-seconds 5 >"$out/torch-w1.jsonl"
for r in $(seq "$repeats"); do
  for w in 0 1 2; do
    ./stoker bench tokens "$data/tokens/train.bin" --seq-len 1024 --batch 32 --workers "$w" --epochs 8 --json >>"$out/stoker-w1.jsonl"
  done
  ./stoker bench tokens "$data/tokens/train.bin" --seq-len 1024 --batch 32 --workers 2 --epochs 8 --windows random --json >>"$out/stoker-w1-random.jsonl"
done
;; esac
case ",$only," in *,W4,*)
/usr/bin/python3 "$peers/torch_peer.py" "$data" --workloads W4 --workers 0,1 --repeats "$repeats" --min-seconds 5 >"$out/torch-w4.jsonl"
# 8 epochs: 6-9 s a repeat, as long as the peer measures (at least 5 s), so that neither side's
# figure is mostly its start (3 epochs, 2-3 s, spread 365-465 M tokens/s between single runs)
for r in $(seq "$repeats"); do
  for f in train.jsonl train.jsonl.gz; do
    ./stoker bench jsonl "$data/jsonl/$f" --seq-len 1024 --batch 32 --workers 2 --order sequential --epochs 8 --json \
      | sed "s/^{/{\"file\":\"$f\",/" >>"$out/stoker-w4.jsonl"
  done
done
;; esac
cat "$out"/*.jsonl
/usr/bin/python3 - "$out" <<'PY'
import json, os, statistics, sys
d = sys.argv[1]
def load(n):
    with open(os.path.join(d, n)) as f:
        return [json.loads(l) for l in f if l.strip()]
def w1():
    tw1 = [r for r in load("torch-w1.jsonl") if r.get("workload") == "W1"]
    if not tw1:
        return
    print("\nW1 tokens/s (medians)")
    best_torch = 0
    for r in tw1:
        v = r["tokens_per_s_median"]
        print("  torch %-40s workers %s: %8.1f M" % (r["variant"], r["num_workers"], v / 1e6))
        if r["num_workers"] is not None:
            best_torch = max(best_torch, v)
    get_batch = [r["tokens_per_s_median"] for r in tw1 if r["num_workers"] is None][0]
    sw1 = load("stoker-w1.jsonl")
    best = 0
    for w in (0, 1, 2):
        v = statistics.median([r["tokensPerSecAfterFirst"] for r in sw1 if r["workers"] == w])
        best = max(best, v)
        print("  stoker disjoint windows, shuffled           workers %d: %8.1f M" % (w, v / 1e6))
    rnd = statistics.median([r["tokensPerSecAfterFirst"] for r in load("stoker-w1-random.jsonl")])
    print("  stoker random windows (get_batch semantics) workers 2: %8.1f M" % (rnd / 1e6))
    print("  ratio best/best DataLoader: %.1fx; random windows / get_batch: %.1fx" % (best / best_torch, rnd / get_batch))


def w4():
    tw4 = [r for r in load("torch-w4.jsonl") if r.get("workload") == "W4"]
    if not tw4:
        return
    print("\nW4 tokens/s (medians)")
    sw4 = load("stoker-w4.jsonl")
    for f in ("train.jsonl", "train.jsonl.gz"):
        t = max(r["median"] for r in tw4 if r["file"] == f)
        s = statistics.median([r["tokensPerSecAfterFirst"] for r in sw4 if r["file"] == f])
        print("  %-15s torch (best of workers 0,1) %6.1f M   stoker (workers 2) %6.1f M   ratio %.1fx" % (f, t / 1e6, s / 1e6, s / t))


w1()
w4()
PY
rm -rf "$out"
