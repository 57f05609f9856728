# Sourced by ./stoker and ./test: finds a JDK 25 or newer and exports JAVA_HOME.
# Order: $JAVA_HOME if it is 25+, then `java` on PATH, then the usual install locations.
# Prints a clear message and exits 2 when there is none.

stoker_java_major() {   # $1 = java executable; prints its feature version (e.g. 25)
  "$1" -XshowSettings:properties -version 2>&1 |
    sed -n 's/^ *java\.specification\.version = \([0-9][0-9]*\).*/\1/p' | head -n 1
}

stoker_find_jdk() {
  local candidates=() c major
  [ -n "${JAVA_HOME:-}" ] && candidates+=("$JAVA_HOME")
  if command -v javac >/dev/null 2>&1; then
    candidates+=("$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")")
  fi
  for c in /usr/lib/jvm/*25* /usr/lib/jvm/*2[6-9]* /usr/lib/jvm/*3[0-9]* \
           /usr/local/lib/jvm/* /opt/java/* /opt/jdk* /Library/Java/JavaVirtualMachines/*/Contents/Home \
           "$HOME"/.sdkman/candidates/java/* "$HOME"/.jdks/*; do
    [ -d "$c" ] && candidates+=("$c")
  done
  for c in "${candidates[@]}"; do
    [ -x "$c/bin/java" ] && [ -x "$c/bin/javac" ] || continue
    major=$(stoker_java_major "$c/bin/java")
    if [ -n "$major" ] && [ "$major" -ge 25 ]; then
      printf '%s\n' "$c"
      return 0
    fi
  done
  return 1
}

if ! STOKER_JDK=$(stoker_find_jdk); then
  echo "stoker: no JDK 25 or newer found (looked at JAVA_HOME, javac on PATH and /usr/lib/jvm)." >&2
  echo "stoker: install one (for example Temurin 25) or set JAVA_HOME to it." >&2
  exit 2
fi
export JAVA_HOME="$STOKER_JDK"
export PATH="$JAVA_HOME/bin:$PATH"
