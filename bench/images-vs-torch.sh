#!/usr/bin/env bash
# Stoker versus the PyTorch DataLoader (PIL + torchvision transforms) on W2 (WebDataset tar
# shards of 256x256 JPEGs), W3 (an ImageFolder of small files) and W5 (tar shards of
# ImageNet-sized JPEGs): JPEG decode, RandomResizedCrop(224), flip, normalize to float32 CHW,
# batch 64. One run, one machine. Needs bench/peers, Debian's python3-torch python3-torchvision
# python3-pil, libturbojpeg0, and the data:
#   /usr/bin/python3 bench/peers/gen_data.py /tmp/stoker-bench --only=W2,W3,W5
# Two measures, each taken the same way on both sides: after the first batch (the peer's headline,
# rate_steady in torch_peer.py) and the whole epoch, start-up included; and the first batch itself,
# from each command's start (bench/peer_first_batch.py on the peer's side) and from the loader's.
# Usage: bench/images-vs-torch.sh [REPEATS] [DATA_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
peers="$root/bench/peers"
repeats=${1:-3}
data=${2:-/tmp/stoker-bench}
out=$(mktemp -d)
cd "$root"
./stoker --version >/dev/null

/usr/bin/python3 "$peers/torch_peer.py" "$data" --workloads W2,W3,W5 --workers 0,1,2 --repeats "$repeats" >"$out/torch.jsonl"
for r in $(seq "$repeats"); do
  for w in 0 1 2; do
    ./stoker bench shards "$data/images/images-{000000..000019}.tar" --transform train224 --batch 64 --workers "$w" --json \
      | sed 's/^{/{"workload":"W2",/' >>"$out/stoker.jsonl"
    ./stoker bench folder "$data/small-files" --transform train224 --batch 64 --workers "$w" --json \
      | sed 's/^{/{"workload":"W3",/' >>"$out/stoker.jsonl"
    ./stoker bench shards "$data/large-images/large-{000000..000009}.tar" --transform train224 --batch 64 --workers "$w" --json \
      | sed 's/^{/{"workload":"W5",/' >>"$out/stoker.jsonl"
  done
  # the first batch as a user waits for it, from each command's start, both sides
  for w in W2 W3 W5; do
    PEER_STARTED_AT_NS=$(date +%s%N) /usr/bin/python3 "$root/bench/peer_first_batch.py" "$data" "$w" 2 >>"$out/peer-first.jsonl"
  done
  # W3's epoch is 5,000 images (about 2 s), so a fresh JVM's JIT warm-up weighs on it: three
  # epochs, for the rate a longer run sees (the peer has no JIT: its rate per epoch is flat)
  ./stoker bench folder "$data/small-files" --transform train224 --batch 64 --workers 2 --epochs 3 --json \
    | sed 's/^{/{"workload":"W3x3",/' >>"$out/stoker.jsonl"
done
cat "$out"/*.jsonl
/usr/bin/python3 - "$out" <<'PY'
import json, os, statistics, sys
d = sys.argv[1]
def load(n):
    with open(os.path.join(d, n)) as f:
        return [json.loads(l) for l in f if l.strip()]
torch = [r for r in load("torch.jsonl") if r.get("workload") in ("W2", "W3", "W5")]
stoker = load("stoker.jsonl")
# Two measures, each the same for both sides (torch_peer.py's docstring): after the first batch
# (its headline "median", rate_steady: from the first batch's arrival to the end, the first
# batch's samples left out) and the whole epoch (rate, start-up included)
measures = (("after the first batch (the peer's headline)", "median", "samplesPerSecAfterFirst"),
            ("whole epoch, start-up included", "rate_incl_startup_median", "samplesPerSecFromStart"))
for w in ("W2", "W3", "W5"):
    for title, tk, sk in measures:
        print("\n%s samples/s, %s (medians)" % (w, title))
        bt = bs = 0
        for nw in (0, 1, 2):
            t = [r[tk] for r in torch if r["workload"] == w and r["num_workers"] == nw]
            s = statistics.median([r[sk] for r in stoker if r["workload"] == w and r["workers"] == nw])
            t = t[0] if t else float("nan")
            bt, bs = max(bt, t), max(bs, s)
            print("  workers %d: torch %8.0f   stoker %8.0f   ratio %.2fx" % (nw, t, s, s / t))
        if tk == "median":  # the first batch, workers 2, medians: from each command's start, and from the loader's
            pf = [r for r in load("peer-first.jsonl") if r["workload"] == w]
            sf = [r for r in stoker if r["workload"] == w and r["workers"] == 2]
            med = lambda rs, k: statistics.median(r[k] for r in rs)
            print("  first batch, workers 2, from the command's start: torch %.2f s   stoker %.2f s"
                  % (med(pf, "first_batch_from_command_s"), med(sf, "firstBatchSeconds")))
            print("  first batch, workers 2, from iter() / the loader's first pass: torch %.2f s   stoker %.2f s"
                  % (med(pf, "first_batch_from_iter_s"), med(sf, "loaderFirstBatchSeconds")))
        print("  best/best: %.2fx" % (bs / bt))
        if w == "W3":
            s3 = statistics.median([r[sk] for r in stoker if r["workload"] == "W3x3"])
            print("  Stoker workers 2, three epochs: %8.0f   against the best torch epoch: %.2fx" % (s3, s3 / bt))
PY
rm -rf "$out"
