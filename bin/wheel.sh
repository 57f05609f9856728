#!/usr/bin/env bash
# `./stoker wheel OUT_DIR`: writes OUT_DIR/stoker-VERSION-py3-none-manylinux_2_N_x86_64.whl, the
# Python package with everything its server needs, so that `pip install` of that one file runs
# every source with no JDK, no Maven and no checkout: the stoker package, and under
# stoker/_runtime/ Stoker's jars, a jlinked Java 25 runtime and the native libraries Stoker loads
# (bin/runtime.sh). Its tag is the manylinux one this machine's glibc satisfies (the native
# libraries are this machine's).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: stoker wheel OUT_DIR}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$root/bin/runtime.sh" "$work/runtime"
/usr/bin/python3 "$root/bin/make_wheel.py" "$root/python/stoker" "$work/runtime" "$out"
