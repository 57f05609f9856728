# The Debian packages the tests use, as one list that ./test and .ci/run share: sourced, it sets
# `missing` to those this machine lacks (an array of package names).
#   numpy         writes and reads the files of the interop tests
#   pytest, torch, Pillow   run the Python bridge's tests (a real PyTorch loop)
#   venv          pip install ./python, tested offline in a virtual environment
#   torchvision   decodes JPEGs as the GPU path does (decode_on=), checked here on the CPU
#   libturbojpeg0 decodes JPEG as Pillow does (without it Stoker falls back to javax.imageio)
#   libisal2      inflates gzip (without it, zlib: slower, the same bytes)
#   gcc, libjpeg62-turbo-dev  build the region-of-interest JPEG decoder and the stand-in CUDA
#                 runtime stoker-cuda's tests bind to
#   zip, unzip, binutils  build the wheel (.ci/run tests it): jars trimmed, the runtime stripped
#   lz4, xxhash   write LZ4 baskets of the JetClass-shaped ROOT trees the root source is tested on
py=${STOKER_PYTHON:-/usr/bin/python3}
missing=()
"$py" -c "import numpy" >/dev/null 2>&1 || missing+=(python3-numpy)
"$py" -c "import pytest" >/dev/null 2>&1 || missing+=(python3-pytest)
"$py" -c "import torch" >/dev/null 2>&1 || missing+=(python3-torch)
"$py" -c "import PIL" >/dev/null 2>&1 || missing+=(python3-pil)
"$py" -c "import torchvision" >/dev/null 2>&1 || missing+=(python3-torchvision)
"$py" -c "import ensurepip" >/dev/null 2>&1 || missing+=(python3-venv)
"$py" -c "import lz4.block" >/dev/null 2>&1 || missing+=(python3-lz4)
"$py" -c "import xxhash" >/dev/null 2>&1 || missing+=(python3-xxhash)
ls /usr/lib/*/libturbojpeg.so.0 >/dev/null 2>&1 || missing+=(libturbojpeg0)
ls /usr/lib/*/libisal.so.2 >/dev/null 2>&1 || missing+=(libisal2)
command -v gcc >/dev/null 2>&1 || missing+=(gcc)
[ -e /usr/include/jpeglib.h ] || missing+=(libjpeg62-turbo-dev)
command -v zip >/dev/null 2>&1 || missing+=(zip)
command -v unzip >/dev/null 2>&1 || missing+=(unzip)
command -v objcopy >/dev/null 2>&1 || missing+=(binutils)
