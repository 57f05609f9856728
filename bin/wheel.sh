#!/usr/bin/env bash
# `./stoker wheel OUT_DIR`: writes OUT_DIR/stoker-VERSION-py3-none-manylinux_X_Y_ARCH.whl, the
# Python package with everything its server needs, so that `pip install` of that one file runs
# every source with no JDK, no Maven and no checkout: the stoker package, and under
# stoker/_runtime/ Stoker's jars, a jlinked Java 25 runtime and the native libraries Stoker loads
# (bin/runtime.sh). Its tag is the one the runtime's own ELF files need (bin/manylinux.py: the
# highest glibc symbol version they import), not this machine's glibc.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
usage() {
  cat <<'USAGE'
usage: stoker wheel OUT_DIR
Builds the self-contained Python wheel into OUT_DIR: the stoker package with Stoker's jars, a
jlinked Java 25 runtime and the native libraries it loads, tagged with the manylinux platform its
ELF files need (glibc 2.17 and later). Install it with: pip install OUT_DIR/stoker-*.whl
USAGE
}
out=
for arg in "$@"; do
  case "$arg" in
    -h|--help) usage; exit 0 ;;
    -*) echo "stoker: wheel: unknown option $arg" >&2; echo "usage: stoker wheel --help" >&2; exit 2 ;;
    *) [ -z "$out" ] || { echo "stoker: wheel: one OUT_DIR, not '$out' and '$arg'" >&2; exit 2; }; out=$arg ;;
  esac
done
[ -n "$out" ] || { echo "stoker: wheel: OUT_DIR is needed" >&2; echo "usage: stoker wheel --help" >&2; exit 2; }
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$root/bin/runtime.sh" "$work/runtime"
/usr/bin/python3 "$root/bin/make_wheel.py" "$root/python/stoker" "$work/runtime" "$out"
