#!/usr/bin/env bash
# The image cache (--image-cache ram, --image-cache DIR) on W2 and W5: epochs 2 and 3 with the decoded images
# kept, against the same loader without the cache and against the DataLoader (the peers'
# torch_peer.py, 2 workers, one epoch: it has no cache to gain from), in one run. Train crops of
# 224 to float32, batch 64, 2 workers; each Stoker figure is samples/s after the first epoch of a
# 3-epoch run, and its peak resident memory. The disk cache runs twice: filling its file, then a
# later run that finds it full (its first epoch too reads the file). Needs gen_data.py's W2 and W5
# (--only=W2,W5) and python3-torch.
# Usage: bench/cache.sh [DATA_DIR]   (default /tmp/stoker-bench)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
data=${1:-/tmp/stoker-bench}
cd "$root"
./stoker --version >/dev/null   # build first, outside the measurement
for w in W2 W5; do
  dir=$data/images; pattern="images-{000000..000019}.tar"
  [ $w = W5 ] && dir=$data/large-images && pattern="large-{000000..000009}.tar"
  peer=$(/usr/bin/python3 bench/peers/torch_peer.py "$data" --workloads $w --workers 2 --repeats 1 | grep '^{' | tail -1)
  echo "{\"workload\": \"$w\", \"loader\": \"DataLoader, 2 workers\", \"samplesPerSec\": $(echo "$peer" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["median"])')}"
  rm -rf "$data/image-cache"
  for opts in "" "--image-cache ram" "--image-cache ram --image-cache-max-side 256" "--image-cache $data/image-cache" "--image-cache $data/image-cache"; do
    /usr/bin/time -f '%M' -o /tmp/stoker-cache-rss ./stoker bench shards "$dir/$pattern" --transform train --batch 64 \
      --workers 2 --epochs 3 $opts --json | tail -1 | /usr/bin/python3 -c '
import json, sys
r = json.load(sys.stdin)
rss = int(open("/tmp/stoker-cache-rss").read().split()[-1]) * 1024
print(json.dumps({"workload": sys.argv[1], "loader": "stoker " + (sys.argv[2].replace(sys.argv[3], "DIR") or "(no cache)"),
                  "samplesPerSecThreeEpochs": round(r["samplesPerSec"], 1),
                  "samplesPerSecAfterFirstEpoch": round(r["samplesPerSecAfterFirstEpoch"], 1), "peakRssBytes": rss}))' "$w" "$opts" "$data/image-cache"
  done
  du -s --block-size=1 "$data/image-cache" | awk -v w=$w '{print "{\"workload\": \"" w "\", \"diskCacheBytes\": " $1 "}"}'
done
rm -rf /tmp/stoker-cache-rss "$data/image-cache"
