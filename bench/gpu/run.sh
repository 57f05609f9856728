#!/usr/bin/env bash
# The GPU benchmarks, run from the bundle bench/gpu-bundle.sh builds, on a machine with a GPU,
# PyTorch and no JDK. Makes the data with the peers' gen_data.py first (into DATA, default
# /tmp/stoker-bench), then runs each benchmark named (default: all), writing its JSON lines and
# logs under OUT_DIR.
# Usage: run.sh OUT_DIR [check|h2d|train|gpt|scaling ...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUT_DIR [check|h2d|train|gpt|scaling ...]}
shift
what=${*:-check h2d train gpt scaling}
data=${DATA:-/tmp/stoker-bench}
mkdir -p "$out"
py=${PYTHON:-python3}
# Stoker from its wheel, installed beside the bundle (no network: the wheel needs only numpy)
if [ ! -d "$here/site/stoker" ]; then
  "$py" -m pip install -q --no-deps --no-index --target "$here/site" "$here"/stoker-*.whl
fi
export PYTHONPATH="$here/site${PYTHONPATH:+:$PYTHONPATH}"
stoker() { "$py" -m stoker "$@"; }
need() {
  for w in "$@"; do
    case $w in
      W1) [ -f "$data/tokens/train.bin" ] || "$py" "$here/peers/gen_data.py" "$data" --only=W1 ;;
      W2) [ -f "$data/images/images-000000.tar" ] || "$py" "$here/peers/gen_data.py" "$data" --only=W2 ;;
      W5) [ -f "$data/large-images/large-000000.tar" ] || "$py" "$here/peers/gen_data.py" "$data" --only=W5 ;;
    esac
  done
}
for w in $what; do
  case $w in
    check)
      { nvidia-smi || true; "$py" -c 'import torch; print(torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0))'
        stoker --version; stoker bench synthetic --samples 2000000 --batch 256 --json; } >"$out/check.txt" 2>&1 ;;
    h2d) "$py" "$here/gpu/h2d.py" --out "$out/h2d.jsonl" 2>"$out/h2d.log" ;;
    train) need W2 W5; "$py" "$here/gpu/train_step.py" --data "$data" --out "$out/train.jsonl" 2>"$out/train.log" ;;
    gpt) need W1; "$py" "$here/gpu/train_step.py" --data "$data" --model gpt --out "$out/gpt.jsonl" 2>"$out/gpt.log" ;;
    scaling) need W2 W5; "$py" "$here/gpu/scaling.py" --data "$data" --out "$out/scaling.jsonl" 2>"$out/scaling.log" ;;
    *) echo "run.sh: unknown benchmark '$w' (check, h2d, train, gpt, scaling)" >&2; exit 2 ;;
  esac
done
