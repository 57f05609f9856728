#!/usr/bin/env bash
# A Python training loop fed by Stoker through the bridge (stoker.Loader: stoker serve, the
# shared-memory ring) against the same loop fed by the PyTorch DataLoader (bench/peers/
# torch_peer.py) and against Stoker's own loop in the JVM (stoker bench), on W1, W2 and W4, one
# run, one machine. Every side leaves its first batch out, as the peer's headline does.
# Needs bench/peers, Debian's python3-torch and python3-torchvision (W2's peer), and the data:
#   /usr/bin/python3 bench/peers/gen_data.py /tmp/stoker-bench --only=W1,W2,W4
# Usage: bench/bridge-vs-torch.sh [REPEATS] [DATA_DIR] [W1,W2,W4] [WORKERS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
peers="$root/bench/peers"
repeats=${1:-3}
data=${2:-/tmp/stoker-bench}
only=${3:-W1,W2,W4}
workers=${4:-2}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "$root"
./stoker --version >/dev/null  # builds when needed
. bin/jdk.sh
export STOKER_JAR="$root/stoker-cli/target/stoker-cli.jar" STOKER_JAVA="$JAVA_HOME/bin/java"
py=/usr/bin/python3
touch "$out/torch.jsonl" "$out/jvm.jsonl" "$out/bridge.jsonl"

jvm() {  # WORKLOAD then the stoker bench arguments: one JSON line with the after-first rate
  local w=$1; shift
  for r in $(seq "$repeats"); do ./stoker bench "$@" --workers "$workers" --json 2>/dev/null; done |
    $py -c "import json,statistics,sys; rs=[json.loads(l) for l in sys.stdin]; k='tokensPerSecAfterFirst' if 'tokensPerSecAfterFirst' in rs[0] else 'samplesPerSecAfterFirst'; print(json.dumps({'workload':'$w','via':'stoker bench (JVM loop)','workers':'$workers','median':statistics.median(r[k] for r in rs),'raw':[r[k] for r in rs]}))" >>"$out/jvm.jsonl"
}

case ",$only," in *,W1,*)
  $py "$peers/torch_peer.py" "$data" --workloads W1 --workers 0,1,2 --repeats "$repeats" --min-seconds 5 >>"$out/torch.jsonl"
  jvm W1 tokens "$data/tokens/train.bin" --seq-len 1024 --batch 32 --epochs 8
  $py bench/bridge_bench.py "$data" W1 "$workers" --repeats "$repeats" >>"$out/bridge.jsonl"
;; esac
case ",$only," in *,W2,*)
  $py "$peers/torch_peer.py" "$data" --workloads W2 --workers 2 --repeats "$repeats" >>"$out/torch.jsonl"
  jvm W2 shards "$data/images/images-{000000..000019}.tar" --transform train224 --batch 64
  $py bench/bridge_bench.py "$data" W2 "$workers" --repeats "$repeats" >>"$out/bridge.jsonl"
;; esac
case ",$only," in *,W4,*)
  $py "$peers/torch_peer.py" "$data" --workloads W4 --workers 0,1 --repeats "$repeats" --min-seconds 5 >>"$out/torch.jsonl"
  jvm W4 jsonl "$data/jsonl/train.jsonl" --seq-len 1024 --batch 32 --order sequential --epochs 8
  $py bench/bridge_bench.py "$data" W4 "$workers" --repeats "$repeats" >>"$out/bridge.jsonl"
;; esac
cat "$out"/*.jsonl
$py - "$out" <<'PY'
import json, os, sys
d = sys.argv[1]
def load(n):
    with open(os.path.join(d, n)) as f:
        return [json.loads(l) for l in f if l.strip()]
torch, jvm, bridge = load("torch.jsonl"), load("jvm.jsonl"), load("bridge.jsonl")
print("\n%-4s %-8s %14s %14s %14s %10s %10s %14s" % ("", "unit", "DataLoader best", "stoker bench", "stoker.Loader",
      "bridge/JVM", "bridge/DL", "IPC CPU/batch"))
for w, unit in (("W1", "tokens/s"), ("W2", "samples/s"), ("W4", "tokens/s")):
    t = [r for r in torch if r.get("workload") == w and r.get("num_workers") is not None
         and (w != "W4" or r.get("file") == "train.jsonl")]
    j = [r for r in jvm if r["workload"] == w]
    b = [r for r in bridge if r["workload"] == w]
    if not (t and j and b):
        continue
    key = "tokens_per_s_median" if w == "W1" else "median"
    best = max(r[key] for r in t)
    jv, bv = j[0]["median"], b[0]["median"]
    ipc = b[0]["python_cpu_us_per_batch"], b[0]["jvm_publish_cpu_us_per_batch"]
    print("%-4s %-8s %14s %14s %14s %9.1f%% %9.2fx %6.1f + %4.1f us" % (w, unit, f"{best:,.0f}", f"{jv:,.0f}", f"{bv:,.0f}",
          100 * bv / jv, bv / best, ipc[0], ipc[1]))
print("(IPC CPU per batch: the Python process's whole CPU per batch, loop included, + the server's per batch)")
PY
