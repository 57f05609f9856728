# CPU accounting for the remote benchmarks (sourced): CPU seconds of a server process, of the
# benchmark's own finished runs, and of the whole machine, to tell how much other processes took
# during a run on a shared machine. All in clock ticks; secs A B prints (B - A) in seconds.
ticks=$(getconf CLK_TCK)
pid_cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }                    # utime + stime of one process
machine_cpu() { awk '/^cpu /{print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat; } # busy time of every CPU
# user + sys of a shell's finished children, from what its `times` printed (run `times >FILE` in
# the benchmark's own shell: inside $(...) it would count the subshell's children)
children_cpu() { awk -v t="$ticks" 'NR == 2 {split($1, u, /[ms]/); split($2, s, /[ms]/);
  printf "%d\n", (u[1] * 60 + u[2] + s[1] * 60 + s[2]) * t}' "$1"; }
secs() { awk -v a="$1" -v b="$2" -v t="$ticks" 'BEGIN {printf "%.2f", (b - a) / t}'; }
median() { printf '%s\n' "$@" | sort -g | sed -n "$(( ($# + 1) / 2 ))p"; }
