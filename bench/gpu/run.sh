#!/usr/bin/env bash
# The GPU benchmarks, run from the bundle bench/gpu-bundle.sh builds, on a machine with a GPU,
# PyTorch and no JDK. Makes the data with the peers' gen_data.py first (into DATA, default
# /tmp/stoker-bench; W1, W2 and W5 each in a process of its own, started at once, so that the
# benchmarks that need only W1 run while W5 is made), then runs each benchmark named (default:
# all, in this order), writing its JSON lines under OUT_DIR and every log into OUT_DIR/log.txt.
# Usage: run.sh OUT_DIR [check|h2d|w1|gpt|train|decode|scaling ...]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUT_DIR [check|h2d|w1|gpt|train|decode|scaling ...]}
shift
what=${*:-check h2d w1 gpt train decode scaling}
data=${DATA:-/tmp/stoker-bench}
mkdir -p "$out" "$data"
log="$out/log.txt"
py=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
# Stoker from its wheel, installed beside the bundle (no network: the wheel needs only numpy)
if [ ! -d "$here/site/stoker" ]; then
  "$py" -m pip install -q --no-deps --no-index --target "$here/site" "$here"/stoker-*.whl || exit 1
fi
export PYTHONPATH="$here/site:$here/gpu${PYTHONPATH:+:$PYTHONPATH}"
stamp() { echo "== $(date +%T) $*" >>"$log"; }
declare -A made=([W1]="$data/tokens/train.bin" [W2]="$data/images/images-000019.tar" [W5]="$data/large-images/large-000009.tar")
declare -A gen=()
for w in W1 W2 W5; do
  if [ ! -f "${made[$w]}" ]; then
    # each into a folder of its own (gen_data.py hashes what its folder holds), then moved in
    ( "$py" "$here/peers/gen_data.py" "$data/gen-$w" --only=$w && mv -f "$data/gen-$w"/*/ "$data/" \
        && rm -rf "$data/gen-$w" ) >>"$log" 2>&1 &
    gen[$w]=$!
  fi
done
need() {
  for w in "$@"; do
    if [ -n "${gen[$w]:-}" ]; then
      stamp "waiting for $w's data"
      wait "${gen[$w]}" || { echo "gen_data $w failed" >>"$log"; return 1; }
      unset "gen[$w]"
    fi
  done
}
for w in $what; do
  stamp "$w"
  case $w in
    check)
      { nvidia-smi; nproc; free -g; "$py" -c 'import torch, torchvision; print(torch.__version__, torch.version.cuda, torchvision.__version__, torch.cuda.get_device_name(0))'
        "$py" -m stoker --version; "$py" -m stoker bench synthetic --samples 2000000 --batch 256 --json; } >"$out/check.txt" 2>&1 ;;
    h2d) "$py" "$here/gpu/h2d.py" --out "$out/h2d.jsonl" 2>>"$log" ;;
    w1) need W1 && {
          "$py" "$here/bridge_cpu.py" "$data" 8 >>"$out/w1.jsonl" 2>>"$log"
          for r in 1 2 3; do
            "$py" -m stoker bench tokens "$data/tokens/train.bin" --seq-len 1024 --batch 32 --workers 2 --epochs 2 --json \
              | tail -1 | sed 's/^/{"side": "jvm", "result": /; s/$/}/' >>"$out/w1.jsonl" 2>>"$log"
          done
          "$py" "$here/bridge_bench.py" "$data" W1 2 --repeats 3 --min-seconds 4 >>"$out/w1.jsonl" 2>>"$log"; } ;;
    gpt) need W1 && "$py" "$here/gpu/train_step.py" --data "$data" --model gpt --out "$out/gpt.jsonl" 2>>"$log" ;;
    train) need W2 && "$py" "$here/gpu/train_step.py" --data "$data" --workloads W2 --out "$out/train.jsonl" 2>>"$log"
           need W5 && "$py" "$here/gpu/train_step.py" --data "$data" --workloads W5 --steps 100 --out "$out/train.jsonl" 2>>"$log" ;;
    decode) need W2 W5 && "$py" "$here/gpu/decode.py" --data "$data" --batches 40 ${DECODE_ARGS:-} --out "$out/decode.jsonl" 2>>"$log" ;;
    scaling) need W2 W5 && "$py" "$here/gpu/scaling.py" --data "$data" --out "$out/scaling.jsonl" 2>>"$log" ;;
    *) echo "run.sh: unknown benchmark '$w' (check, h2d, w1, gpt, train, decode, scaling)" >&2; exit 2 ;;
  esac
  echo "== $(date +%T) $w: exit $?" >>"$log"
done
stamp done
for f in "$out"/*.jsonl; do echo "--- $f"; cat "$f"; done
