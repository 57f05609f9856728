#!/usr/bin/env bash
# W4's JSON lines tokenized with GPT-2 into Megatron shards: `stoker prepare tokens` in-process
# (1 and 2 workers) against the same preparation as a Spark job (`--spark local[1]` and
# `local[2]`, 2 partitions each), alternating, REPEATS times. The one-core runs are pinned to one
# core (taskset): each side's reading thread, the JIT and the collector would otherwise take the
# second core, and "one core" would be 1.3 of them. Each prints its own time (from the
# job's start: the JVM's and Spark's start-up are not in it) and the script the medians.
# Needs the data: /usr/bin/python3 bench/peers/gen_data.py /tmp/stoker-bench --only=W4
# Usage: bench/spark-tokens.sh [REPEATS] [DATA_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
repeats=${1:-3}
data=${2:-/tmp/stoker-bench}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "$root"
in="$data/jsonl/train.jsonl"
./stoker prepare tokens "$in" --out "$out/warm" --spark 'local[1]' --partitions 1 >/dev/null 2>&1 # builds the module
rm -f "$out"/warm*
for r in $(seq "$repeats"); do
  for run in "in-process 1|0|--workers 1" "in-process 2|0,1|--workers 2" "spark local[1]|0|--spark local[1] --partitions 2" \
             "spark local[2]|0,1|--spark local[2] --partitions 2"; do
    name=${run%%|*}
    rest=${run#*|}
    # shellcheck disable=SC2086
    line=$(taskset -c "${rest%%|*}" ./stoker prepare tokens "$in" --out "$out/w4" --format megatron ${rest#*|} 2>/dev/null | head -1)
    echo "$name: $line"
    echo "$name|$(echo "$line" | sed -E 's/.* in ([0-9.]+) s.*/\1/')|$(echo "$line" | sed -E 's/.*documents, ([0-9,]+) tokens.*/\1/' | tr -d ,)" >>"$out/times"
    rm -f "$out"/w4*
  done
done
/usr/bin/python3 - "$out/times" <<'PY'
import statistics, sys
t = {}
for l in open(sys.argv[1]):
    k, v, tokens = l.strip().split("|")
    t.setdefault(k, []).append(float(v))
tokens = int(tokens)
m = {k: statistics.median(v) for k, v in t.items()}
print("\nmedians (%d runs each):" % len(next(iter(t.values()))))
for k, v in m.items():
    print("  %-16s %6.2f s  %12s tokens/s" % (k, v, format(int(tokens / v), ",")))
print("  local[2] / local[1]: %.2fx" % (m["spark local[1]"] / m["spark local[2]"]))
print("  Spark's overhead at 1 core: %+.0f%%, at 2 cores: %+.0f%%"
      % (100 * (m["spark local[1]"] / m["in-process 1"] - 1), 100 * (m["spark local[2]"] / m["in-process 2"] - 1)))
PY
