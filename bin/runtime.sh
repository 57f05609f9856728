#!/usr/bin/env bash
# Builds Stoker's self-contained runtime in DEST: a jlinked Java 25 runtime with only the modules
# Stoker uses (debug stripped) in jdk/, stoker-cli.jar and the jars its manifest names
# in lib/ (the libraries that carry native code keep only linux-x86_64's), and the native libraries
# Stoker loads in native/ (libjpeg-turbo, libjpeg for the region decoder, ISA-L), which its
# starters put on LD_LIBRARY_PATH. The wheel (bin/wheel.sh) and the GPU bundle carry it.
# Usage: bin/runtime.sh DEST
#   The runtime's modules are stored uncompressed: the wheel that carries it deflates them better
#   than jlink's own compression (34 MB against 41 MB) and the JVM starts faster.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:?usage: bin/runtime.sh DEST}
command -v zip >/dev/null && command -v unzip >/dev/null && command -v objcopy >/dev/null \
  || { echo "runtime: zip, unzip and objcopy are needed (Debian: apt-get install zip unzip binutils)" >&2; exit 2; }
cd "$root"
./stoker --version >/dev/null   # builds if needed
source bin/jdk.sh
rm -rf "$dest"
mkdir -p "$dest/lib" "$dest/native"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# the jars: stoker-cli.jar and those its manifest's Class-Path names
cp stoker-cli/target/stoker-cli.jar "$dest/"
unzip -p stoker-cli/target/stoker-cli.jar META-INF/MANIFEST.MF | tr -d '\r' \
  | awk '/^Class-Path:/ {sub(/^Class-Path: /, ""); p = 1; printf "%s", $0; next} p && /^ / {sub(/^ /, ""); printf "%s", $0; next} {p = 0}' \
  | tr ' ' '\n' | grep . >"$work/jars"
while read -r jar; do
  cp "stoker-cli/target/$jar" "$dest/$jar"
done <"$work/jars"
# native libraries for other systems: only linux-x86_64's are kept
for jar in "$dest"/lib/zstd-jni-*.jar "$dest"/lib/snappy-java-*.jar "$dest"/lib/lz4-java-*.jar; do
  [ -f "$jar" ] || continue
  zip -q -d "$jar" $(unzip -Z1 "$jar" | grep -E '^(linux/|darwin/|win/|freebsd/|aix/|org/xerial/snappy/native/|net/jpountz/util/)[^/]' \
    | grep -v -E '(linux/amd64/|Linux/x86_64/|linux/x86_64/)' | grep -v '/$' | grep -E '\.(so|dylib|dll|jnilib|a)$') >/dev/null 2>&1 || true
done

# the runtime: the modules the jars use, and the Vector API's
# (jdeps over the jars as modules, plus what is reached by reflection or only through TLS and the
# libraries' service lookups: HTTPS, XML for S3's answers, charsets, the flight recorder's events
# Parquet's reader emits, java.sql's types Jackson knows)
mods=$(jdeps --multi-release 25 --ignore-missing-deps --print-module-deps --module-path "$dest/lib" \
  --add-modules ALL-MODULE-PATH "$dest/stoker-cli.jar" 2>/dev/null | grep -v "^WARNING")
mods=$(echo "$mods,jdk.incubator.vector,jdk.unsupported,java.logging,jdk.net,java.net.http,java.xml,java.naming,java.management,jdk.crypto.ec,jdk.charsets,jdk.zipfs,jdk.jfr,java.sql" \
  | tr , '\n' | sort -u)
mods=$(echo "$mods" | paste -sd,)
compress=zip-0
jlink --add-modules "$mods" --strip-java-debug-attributes --strip-native-debug-symbols objcopy=/usr/bin/objcopy --no-header-files \
  --no-man-pages --compress "$compress" --output "$dest/jdk" 2>&1 | { grep -v '^WARNING: Using incubator modules' >&2 || true; }
strip --strip-unneeded "$dest/jdk/lib/server/libjvm.so"   # its symbols: 5 MiB
# headless: the X11 toolkit, the splash screen and sound are never loaded (the server starts with
# java.awt.headless=true; charts and grids draw off-screen), and they link X and ALSA libraries
# that manylinux does not promise a system has (bin/manylinux.py would refuse the wheel)
rm -f "$dest"/jdk/lib/{libawt_xawt,libjawt,libsplashscreen,libjsound}.so
for lib in libturbojpeg.so.0 libisal.so.2 libjpeg.so.62; do
  f=$(ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64/ && !f {f = $NF} END {print f}')   # no early exit: ldconfig keeps its pipe
  [ -n "$f" ] || { echo "runtime: $lib is not installed here (Debian: libturbojpeg0, libisal2, libjpeg62-turbo)" >&2; exit 1; }
  cp -L "$f" "$dest/native/$lib"
done
echo "$mods" >"$dest/modules"
