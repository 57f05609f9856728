#!/usr/bin/env bash
# Stoker versus the PyTorch DataLoader on the synthetic workload, in one run on one machine.
# Needs bench/peers and Debian's python3-torch.
# Usage: bench/synthetic-vs-torch.sh [REPEATS]   (prints JSON lines; the summary comes last)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
peers="$root/bench/peers"
repeats=${1:-3}
out=$(mktemp -d)
cd "$root"
./stoker --version >/dev/null   # build first, outside the measurement

for r in $(seq "$repeats"); do
  /usr/bin/python3 "$peers/synthetic_peer.py" --sample-bytes 64 --batch 256 --workers 0,1,2 --seconds 8 >>"$out/torch-overhead.jsonl"
  ./stoker bench synthetic --samples 100000000 --sample-bytes 64 --batch 256 --workers 0,1,2 --prefetch auto --json >>"$out/stoker-overhead.jsonl"
  /usr/bin/python3 "$peers/synthetic_peer.py" --sample-bytes 64 --batch 64 --work-us 100 --workers 2 --seconds 6 >>"$out/torch-work.jsonl"
  ./stoker bench synthetic --samples 64000 --sample-bytes 64 --batch 64 --work-us 100 --workers 2 --json >>"$out/stoker-work.jsonl"
  ./stoker bench synthetic --samples 64000 --sample-bytes 64 --batch 64 --work-us 100 --step-ms 3.84 --workers 2 --json >>"$out/stoker-wait.jsonl"
done
cat "$out"/*.jsonl
/usr/bin/python3 - "$out" <<'PY'
import json, statistics, sys, os
d = sys.argv[1]
def load(name):
    with open(os.path.join(d, name)) as f:
        return [json.loads(l) for l in f if l.strip()]
def med(rows, key, **match):
    xs = [r[key] for r in rows if all(r.get(k) == v for k, v in match.items())]
    return statistics.median(xs)
print("\nsummary (medians of %s repeats)" % len(load("stoker-wait.jsonl")))
for w in (0, 1, 2):
    t = med(load("torch-overhead.jsonl"), "samplesPerSec", num_workers=w)
    s = med(load("stoker-overhead.jsonl"), "samplesPerSec", workers=w)
    print("overhead  workers %d: torch %12.0f  stoker %12.0f  samples/s  ratio %5.1fx" % (w, t, s, s / t))
t = med(load("torch-work.jsonl"), "samplesPerSec", num_workers=2)
s = med(load("stoker-work.jsonl"), "samplesPerSec", workers=2)
print("work 100us workers 2: torch %10.0f  stoker %10.0f  samples/s  ratio %5.2fx" % (t, s, s / t))
print("consumer wait, 2 workers 20%% ahead of a 3.84 ms step: %.2f%%" % (100 * med(load("stoker-wait.jsonl"), "consumerWaitFraction")))
PY
rm -rf "$out"
