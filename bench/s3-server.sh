# Sourced by the S3 benchmarks: start_s3_server DIR PORT [S3Server options] builds
# stoker-bench's jar if it is stale, serves DIR as the bucket `bucket` of an S3-compatible server on
# loopback (dev.stoker.bench.S3Server: S3Proxy, signed requests), points Stoker at it with dummy
# credentials, waits until it serves, and sets $tmp (a temporary folder) and $server (its pid);
# both go when the script exits. Needs JAVA_HOME (bin/jdk.sh) and the repository as the working
# directory.
start_s3_server() {
  local dir=$1 port=$2
  shift 2
  local jar=stoker-bench/target/benchmarks.jar
  if [ ! -f "$jar" ] || [ -n "$(find stoker-bench/src stoker-bench/pom.xml -newer "$jar" -print -quit)" ]; then
    mvn -B -q -DskipTests package -pl stoker-bench -am >/dev/null
  fi
  # dummy credentials: the server checks the signatures made with them
  export AWS_ACCESS_KEY_ID=stoker-bench AWS_SECRET_ACCESS_KEY=stoker-bench-secret AWS_REGION=us-east-1
  export STOKER_S3_ENDPOINT=http://127.0.0.1:$port
  tmp=$(mktemp -d)
  "$JAVA_HOME/bin/java" -cp "$jar" dev.stoker.bench.S3Server "$dir" "$port" bucket "$@" >"$tmp/server.log" 2>&1 &
  server=$!
  trap 'kill $server 2>/dev/null; wait $server 2>/dev/null || true; rm -rf "$tmp"' EXIT
  for _ in $(seq 240); do
    grep -q '^ready' "$tmp/server.log" && break
    kill -0 $server 2>/dev/null || { cat "$tmp/server.log" >&2; exit 1; }
    sleep 0.25
  done
  grep '^ready' "$tmp/server.log" || { echo "S3 server did not start" >&2; cat "$tmp/server.log" >&2; exit 1; }
}
