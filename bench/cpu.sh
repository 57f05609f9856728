# Shared by the remote benchmarks (sourced). CPU accounting: CPU seconds of a server process, of
# the benchmark's own finished runs, and of the whole machine, to tell how much other processes took
# during a run on a shared machine; all in clock ticks, secs A B prints (B - A) in seconds. And
# compare_remote, the timed loop both scripts run.
ticks=$(getconf CLK_TCK)
pid_cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }                    # utime + stime of one process
machine_cpu() { awk '/^cpu /{print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat; } # busy time of every CPU
# user + sys of a shell's finished children, from what its `times` printed (run `times >FILE` in
# the benchmark's own shell: inside $(...) it would count the subshell's children)
children_cpu() { awk -v t="$ticks" 'NR == 2 {split($1, u, /[ms]/); split($2, s, /[ms]/);
  printf "%d\n", (u[1] * 60 + u[2] + s[1] * 60 + s[2]) * t}' "$1"; }
secs() { awk -v a="$1" -v b="$2" -v t="$ticks" 'BEGIN {printf "%.2f", (b - a) / t}'; }
median() { printf '%s\n' "$@" | sort -g | sed -n "$(( ($# + 1) / 2 ))p"; }

# W2 from local disk (through the index, then as a stream), then
# from REMOTE as a stream (--stream) through the shard cache cold (emptied first) and warm, REPEATS times, with the server's
# CPU and what other processes took per repeat; needs ./stoker, $repeats, $server (the server's pid)
# and $tmp; STEP_MS simulates a training step per batch (default 0: the loader alone). The streams
# keep stream order within the shuffled shard order (--shuffle-window-bytes 0), as BENCHMARKS.md's
# figures were measured before streams got a default window; WINDOW=BYTES sets one.
# Usage: compare_remote LOCAL REMOTE [SUFFIX for the median line]
compare_remote() {
  run() { ./stoker bench shards "$@" --shuffle-window-bytes "${WINDOW:-0}" --transform train224 --batch 64 --workers 2 --step-ms "${STEP_MS:-0}" --json --shard-cache "$tmp/c" 2>"$tmp/err" \
    | python3 -c 'import json,sys; print(round(json.loads(sys.stdin.readline())["samplesPerSec"]))' >"$tmp/rate"; }
  L=(); S=(); C=(); W=(); CS=(); WS=()
  for r in $(seq "$repeats"); do
    times >"$tmp/t"; m0=$(machine_cpu); k0=$(children_cpu "$tmp/t"); s0=$(pid_cpu $server)
    run "$1"; l=$(cat "$tmp/rate")
    run "$1" --stream; st=$(cat "$tmp/rate")
    rm -rf "$tmp/c"
    a=$(pid_cpu $server); run "$2" --stream; c=$(cat "$tmp/rate"); b=$(pid_cpu $server); cstats=$(grep -v "incubator modules" "$tmp/err")
    run "$2" --stream; w=$(cat "$tmp/rate"); z=$(pid_cpu $server)
    times >"$tmp/t"; m1=$(machine_cpu); k1=$(children_cpu "$tmp/t")
    other=$(( (m1 - m0) - (k1 - k0) - (z - s0) ))
    L+=("$l"); S+=("$st"); C+=("$c"); W+=("$w"); CS+=("$(secs "$a" "$b")"); WS+=("$(secs "$b" "$z")")
    echo "repeat $r: local $l  local streamed $st  cold $c  warm $w samples/s; server CPU cold ${CS[-1]} s, warm ${WS[-1]} s;" \
      "other processes $(secs 0 $other) s   ($cstats)"
  done
  echo "median: local $(median "${L[@]}")  local streamed $(median "${S[@]}")  cold $(median "${C[@]}")  warm $(median "${W[@]}") samples/s;" \
    "server CPU cold $(median "${CS[@]}") s, warm $(median "${WS[@]}") s${3:-}"
}
