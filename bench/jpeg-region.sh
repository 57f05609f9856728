#!/usr/bin/env bash
# JPEG decoders for a RandomResizedCrop(224) crop, one thread, from C (stoker-bench/src/tools/jpeg_region.c):
# the whole image, a lossless crop then decode, Stoker's region decoder, entropy decoding alone.
# The first 3,000 JPEGs of W5. Needs gcc, libjpeg62-turbo-dev, libturbojpeg0-dev and the data:
#   /usr/bin/python3 bench/peers/gen_data.py /tmp/stoker-bench --only=W5
# Usage: bench/jpeg-region.sh [REPEATS] [DATA_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
repeats=${1:-3}
data=${2:-/tmp/stoker-bench}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 - "$data/large-images" "$work" <<'PY'
import glob, os, sys, tarfile
n = 0
for shard in sorted(glob.glob(os.path.join(sys.argv[1], "large-*.tar")))[:3]:
    with tarfile.open(shard) as tf:
        for m in tf:
            if m.name.endswith(".jpg"):
                with open(os.path.join(sys.argv[2], "%05d.jpg" % n), "wb") as f:
                    f.write(tf.extractfile(m).read())
                n += 1
print("%d JPEGs" % n)
PY
gcc -O2 -o "$work/jpeg_region" "$root/stoker-bench/src/tools/jpeg_region.c" "$root/stoker-formats/src/main/c/stoker_jpeg.c" \
  -ljpeg -lturbojpeg -lm
for r in $(seq "$repeats"); do
  "$work/jpeg_region" "$work" 3000
done
