#!/usr/bin/env bash
# A DJL training loop (DJL 0.36.0 on its PyTorch 2.7.1 CPU engine) fed by DJL's own datasets and
# by StokerDataset: the same model, step and batches (stoker-djl's DjlBench, in its test sources).
#   W3: the ImageFolder of JPEGs, torchvision's training transform at 224, batches of 64; DJL's
#       ImageFolder with its default executor (the common pool) and prefetch (2), and tuned (a pool
#       of 2 threads, prefetch 4).
#   W1: disjoint 1,024-token windows (x, y) of int64, batches of 32, 300 steps; DJL's ArrayDataset
#       over the first 20 M tokens in memory.
# Alternating, REPEATS times; each run prints a JSON line, the script the medians.
# Needs the data: /usr/bin/python3 bench/peers/gen_data.py /tmp/stoker-bench --only=W1,W3
# Usage: bench/djl.sh [REPEATS] [DATA_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
repeats=${1:-3}
data=${2:-/tmp/stoker-bench}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "$root"
. bin/jdk.sh
mvn -B -q -o install -DskipTests -pl stoker-djl -am >/dev/null 2>&1 || mvn -B -q install -DskipTests -pl stoker-djl -am
(cd stoker-djl && mvn -B -q -o test-compile dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile="$out/cp" >/dev/null)
cp="stoker-djl/target/test-classes:stoker-djl/target/classes:$(cat "$out/cp")"
run() {
  local workload=$1 loader=$2
  shift 2
  java --enable-native-access=ALL-UNNAMED --add-modules=jdk.incubator.vector -Xmx4g -Dai.djl.offline=true \
    -DDJL_CACHE_DIR="$root/stoker-djl/target/djl-cache" -Djna.tmpdir="$root/stoker-djl/target/jna" -cp "$cp" dev.stoker.djl.DjlBench "$workload" "$loader" "$data" "$@" 2>/dev/null |
    grep '^{' | tee -a "$out/runs"
}
for r in $(seq "$repeats"); do
  run W3 stoker
  run W3 djl
  run W3 djl --djl-threads 2 --djl-prefetch 4
  run W1 stoker
  run W1 djl
done
/usr/bin/python3 - "$out/runs" <<'PY'
import json, statistics, sys
runs = {}
for l in open(sys.argv[1]):
    d = json.loads(l)
    key = (d["workload"], d["loader"] + ("" if d["loader"] == "stoker" else " threads=%s prefetch=%s" % (d["djl_threads"], d["djl_prefetch"])))
    runs.setdefault(key, []).append(d)
print("\nmedians (%d runs each):" % len(next(iter(runs.values()))))
med = {}
for (w, name), ds in runs.items():
    m = {k: statistics.median(d[k] for d in ds) for k in ("samples_per_s", "tokens_per_s", "wait_share", "wait_ms", "step_ms", "first_batch_s")}
    nr = [d["not_ready_ms"] for d in ds if d["not_ready_ms"] is not None]
    m["not_ready_ms"] = statistics.median(nr) if nr else None
    med[(w, name)] = m
    rate = "%9.0f tokens/s" % m["tokens_per_s"] if w == "W1" else "%9.0f images/s" % m["samples_per_s"]
    print("  %s %-44s %s  waiting %5.1f%% of the loop (%.2f ms a step%s)  step %6.2f ms  first batch %.2f s"
          % (w, name, rate, 100 * m["wait_share"], m["wait_ms"],
             "" if m["not_ready_ms"] is None else ", no batch ready %.2f ms" % m["not_ready_ms"], m["step_ms"], m["first_batch_s"]))
for w in ("W3", "W1"):
    s = med[(w, "stoker")]["samples_per_s"]
    for (ww, name), m in med.items():
        if ww == w and name != "stoker":
            print("  %s stoker / %s: %.2fx" % (w, name, s / m["samples_per_s"]))
PY
