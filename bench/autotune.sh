#!/usr/bin/env bash
# Autotuned workers and prefetch (--workers auto --prefetch auto, the CLI's default) against the
# best point of a manual sweep (workers 0..4 x prefetch 2, 8), on W1-W3 and on synthetic mixes
# of per-sample work and accelerator step. Target: auto within 10% of the best point's samples/s
# and within 2 points of its consumer wait. Every configuration runs in a JVM of its own, so
# each pays the same start-up; medians of REPEATS runs per configuration. The raw results stay
# in /tmp/stoker-autotune.jsonl.
# W1-W3 need the data: /usr/bin/python3 bench/peers/gen_data.py /tmp/stoker-bench
# Usage: bench/autotune.sh [REPEATS] [DATA_DIR] [WORKLOAD,...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
repeats=${1:-3}
data=${2:-/tmp/stoker-bench}
only=${3:-W1,W2,W3,S1,S2,S3,S4}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "$root"
./stoker --version >/dev/null
. bin/jdk.sh
cp -r stoker-cli/target/stoker-cli.jar stoker-cli/target/lib "$out/"   # a fixed build: edits made meanwhile do not rebuild it
st() { "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED --add-modules=jdk.incubator.vector -jar "$out/stoker-cli.jar" "$@"; }

declare -A cmd=(
  [W1]="tokens $data/tokens/train.bin --seq-len 1024 --batch 32 --epochs 20"
  [W2]="shards $data/images/images-{000000..000019}.tar --transform train224 --batch 64"
  [W3]="folder $data/small-files --transform train224 --batch 64 --epochs 3"
  [S1]="synthetic --samples 64000 --batch 64 --work-us 100"
  [S2]="synthetic --samples 64000 --batch 64 --work-us 100 --step-ms 3.84"
  [S3]="synthetic --samples 32000 --batch 64 --work-us 20 --step-ms 4"
  [S4]="synthetic --samples 30000000 --batch 256 --sample-bytes 256"
)
configs=("auto auto" "0 2" "1 2" "1 8" "2 2" "2 8" "3 2" "3 8" "4 2" "4 8")
for r in $(seq "$repeats"); do
  for w in ${only//,/ }; do
    # shellcheck disable=SC2086
    st bench ${cmd[$w]} --workers 2 --prefetch 2 --json >/dev/null   # warm-up: page cache, not counted
    # each repeat starts at another place in the list, so that no configuration always runs first
    for i in $(seq 0 $(( ${#configs[@]} - 1 ))); do
      set -- ${configs[$(( (i + 3 * (r - 1)) % ${#configs[@]} ))]}
      # shellcheck disable=SC2086
      st bench ${cmd[$w]} --workers "$1" --prefetch "$2" --json | sed "s/^{/{\"workload\":\"$w\",/" >>"$out/runs.jsonl"
    done
  done
done
cp "$out/runs.jsonl" /tmp/stoker-autotune.jsonl
python3 - "$out/runs.jsonl" "$only" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print("workload  best point (median samples/s, wait)      auto (median samples/s, wait, final w/p)    ratio  wait delta")
for w in sys.argv[2].split(","):
    rs = [r for r in runs if r["workload"] == w]
    if not rs:
        continue
    def key(r):
        return "auto" if r["autoWorkers"] else "w%d p%d" % (r["workers"], r["prefetch"])
    groups = {}
    for r in rs:
        groups.setdefault(key(r), []).append(r)
    med = {k: (statistics.median(x["samplesPerSec"] for x in v), statistics.median(x["consumerWaitFraction"] for x in v))
           for k, v in groups.items()}
    best = max((k for k in med if k != "auto"), key=lambda k: med[k][0])
    auto = med["auto"]
    finals = ",".join(sorted({"%d/%d" % (x["workers"], x["prefetch"]) for x in groups["auto"]}))
    print("%-8s  %-8s %12.0f %6.1f%%               %12.0f %6.1f%%  %-12s       %5.2f  %+5.1f" % (
        w, best, med[best][0], 100 * med[best][1], auto[0], 100 * auto[1], finals, auto[0] / med[best][0],
        100 * (auto[1] - med[best][1])))
PY
