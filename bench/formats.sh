#!/bin/bash
# Other loaders' formats read by Stoker, against the raw read of the same bytes through the same
# loader: 200,000 rows of (id int64, label int32, vec float32[64]) as an Arrow stream (Apache Arrow's
# JavaScript writer, 1000-row record batches as Hugging Face datasets writes them), an MDS dataset, a
# LitData dataset and a TFRecord file of tf.train.Examples (bench/formats/gen.py, numpy), an ArrayRecord
# file of the rows' raw bytes (stoker-formats/src/test/interop/MakeArrayRecord.java), and as raw
# int32 windows of the same 268 bytes a row (the tokens source: one copy from the mapped file per
# sample, no decoding).
# Each configuration runs 3 times, alternating; the medians are printed, samples/s after the first batch.
#
# With STREAMING_SRC set (a checkout of mosaicml/streaming), MosaicML Streaming's own MDS reader
# reads the same MDS dataset in the same run (bench/formats/mds_peer.py).
#
# Usage: [STREAMING_SRC=DIR] bench/formats.sh [DATA_DIR] [ROWS]     (needs node and npm for the Arrow file)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
DATA=${1:-/tmp/stoker-formats}
ROWS=${2:-200000}
mkdir -p "$DATA"
cd "$ROOT"
. bin/jdk.sh
"$ROOT/stoker" --version >/dev/null # built if it is not
if [ ! -f "$DATA/rows.arrow" ] || [ ! -d "$DATA/litdata" ]; then
    /usr/bin/python3 "$HERE/formats/gen.py" "$DATA" "$ROWS"
    npm install --silent --prefix "$DATA/.arrowjs" apache-arrow@21.2.0 >/dev/null
    cp "$HERE/formats/gen_arrow.mjs" "$DATA/.arrowjs/"
    node "$DATA/.arrowjs/gen_arrow.mjs" "$DATA"
    /usr/bin/python3 -c "import numpy as np, sys; np.load(sys.argv[1]).tofile(sys.argv[2])" "$DATA/rows.npy" "$DATA/rows.bin"
fi
if [ ! -f "$DATA/rows.array_record" ]; then
    # in the riegeli package, to hash with Stoker's package-private HighwayHash
    jar=stoker-cli/target/stoker-cli.jar
    "$JAVA_HOME/bin/javac" -d "$DATA/.make-array-record" -cp "$jar" stoker-formats/src/test/interop/MakeArrayRecord.java
    "$JAVA_HOME/bin/java" -cp "$jar:$DATA/.make-array-record" dev.stoker.formats.riegeli.MakeArrayRecord "$DATA"
fi
run() { # ORDER NAME ARGS...
    local order=$1 name=$2
    shift 2
    "$ROOT/stoker" bench "$@" --batch 256 --workers 2 --epochs 3 --order "$order" --json 2>/dev/null | tail -1 \
        | /usr/bin/python3 -c "import json, sys; print('$name $order', json.load(sys.stdin)['samplesPerSecAfterFirst'])"
}
for order in shuffle sequential; do
    for i in 1 2 3; do
        run "$order" raw tokens "$DATA/rows.bin" --seq-len 66 --dtype int32 --out-dtype int32
        run "$order" arrow arrow "$DATA/rows.arrow"
        run "$order" mds mds "$DATA/mds"
        run "$order" litdata litdata "$DATA/litdata"
        run "$order" tfrecord tfrecord "$DATA/rows.tfrecord"
        run "$order" arrayrecord arrayrecord "$DATA/rows.array_record"
    done
done | /usr/bin/python3 -c "
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in sys.stdin:
    name, order, rate = line.split()
    runs[(order, name)].append(float(rate))
for order in ('shuffle', 'sequential'):
    raw = statistics.median(runs[(order, 'raw')])
    for name in ('raw', 'arrow', 'mds', 'litdata', 'tfrecord', 'arrayrecord'):
        m = statistics.median(runs[(order, name)])
        print(f'{order:10} {name:11} {m / 1e6:6.2f} M samples/s  {m / raw:6.1%} of raw  (runs: {[round(r / 1e6, 2) for r in runs[(order, name)]]})')
"
if [ -n "${STREAMING_SRC:-}" ]; then
    /usr/bin/python3 "$HERE/formats/mds_peer.py" "$STREAMING_SRC" "$DATA"
fi
