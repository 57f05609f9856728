#!/usr/bin/env bash
# Builds the region-of-interest JPEG decoder (stoker_jpeg.c) into the module's classes, where
# dev.stoker.formats.image.Jpeg finds it: dev/stoker/formats/image/native/linux-<os.arch>/libstokerjpeg.so. It needs a C
# compiler and libjpeg-turbo's headers (Debian: gcc libjpeg62-turbo-dev); without them the build
# goes on, says so, and JPEGs decode whole through TurboJPEG (the same pixels, slower).
# Usage: build.sh CLASSES_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) arch=amd64 ;;
  Linux-aarch64) arch=aarch64 ;;
  *) echo "stoker-formats: no region-of-interest JPEG decoder for $(uname -s) $(uname -m): JPEGs decode whole"; exit 0 ;;
esac
out="$1/dev/stoker/formats/image/native/linux-$arch/libstokerjpeg.so"
cc=${CC:-cc}
if ! command -v "$cc" >/dev/null 2>&1 || ! echo '#include <stdio.h>
#include <jpeglib.h>' | "$cc" -E - >/dev/null 2>&1; then
  echo "stoker-formats: WARNING no C compiler or libjpeg headers (Debian: apt-get install gcc libjpeg62-turbo-dev):" \
    "built without the region-of-interest JPEG decoder; JPEGs decode whole, slower"
  rm -f "$out"
  exit 0
fi
if [ "$out" -nt "$here/stoker_jpeg.c" ]; then
  exit 0
fi
mkdir -p "$(dirname "$out")"
"$cc" -O2 -shared -fPIC -Wall -Wextra -Werror -o "$out.tmp" "$here/stoker_jpeg.c" -ljpeg
mv "$out.tmp" "$out"
