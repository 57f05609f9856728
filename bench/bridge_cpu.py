#!/usr/bin/python3
"""Where the CPU goes per W1 batch: the JVM loop (stoker bench) against a Python loop over the
bridge (stoker.Loader), each thread's CPU time from /proc, per batch. On a machine whose cores
the workers already fill, the bridge's own CPU (the Python loop and the session thread that
publishes batches) is what its rate gives up against the JVM loop.

Usage: bench/bridge_cpu.py DATA_DIR [EPOCHS] [ROUNDS] [WARMUP] [AHEAD]   (DATA_DIR from gen_data.py --only=W1)

The rates are of EPOCHS epochs after WARMUP warm-up epochs (default 1), so that neither side
counts its JIT's first epoch and the other not. WARMUP 0: each from its first batch, JIT
included on both sides. WARMUP above 1 warms the bridge longer; the JVM loop is measured after
one, by which its JIT is done. AHEAD: the bridge's ``ahead=`` (default 0: the session's own).

Each round runs the JVM loop, then the bridge, and prints one line; with more than one round, a
last line gives the medians (of the ratios, of each thread's CPU per batch, and of how often a
batch the session thread and the Python loop slept and were woken: bench/wake_cost.py measures
what a wake-up costs).
"""
import collections
import json
import os
import resource
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
import stoker  # noqa: E402

TCK = os.sysconf("SC_CLK_TCK")
SAMPLE_SECONDS = 0.05  # how often each side's threads are read from /proc: the same for both, as it costs CPU


def threads(pids):
    """Thread name (digits dropped) -> CPU seconds, for the threads of these processes."""
    out = {}
    for pid in pids:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for t in tids:
            try:
                name = open(f"/proc/{pid}/task/{t}/comm").read().strip().rstrip("0123456789-")
                st = open(f"/proc/{pid}/task/{t}/stat").read().rsplit(")", 1)[1].split()
                out[(pid, t)] = (name, (int(st[11]) + int(st[12])) / TCK)
            except OSError:
                pass
    return out


def switches(pid, tid=None):
    """Thread name (digits dropped) -> voluntary context switches (its sleeps, each ended by a
    wake-up), for the threads of a process, or for one of its threads."""
    out = collections.Counter()
    for t in [str(tid)] if tid else os.listdir(f"/proc/{pid}/task"):
        try:
            name = open(f"/proc/{pid}/task/{t}/comm").read().strip().rstrip("0123456789-")
            for line in open(f"/proc/{pid}/task/{t}/status"):
                if line.startswith("voluntary_ctxt_switches:"):
                    out[name] += int(line.split()[1])
        except OSError:
            pass
    return out


def by_name(samples):
    agg = collections.Counter()
    for name, cpu in samples.values():
        agg[name] += cpu
    return agg


def jvm(data, epochs, warmup=1):
    """stoker bench over the W1 file: the rate of ``epochs`` epochs after a warm-up one
    (``samplesPerSecAfterFirstEpoch``), or with ``warmup`` 0 from the first batch, and each
    thread's CPU per batch over the whole run (start-up and the warm-up epoch included)."""
    launcher = os.path.join(ROOT, "stoker")  # the checkout's, else the installed package's (a wheel)
    cmd = ([launcher] if os.path.exists(launcher) else [sys.executable, "-m", "stoker"]) + ["bench", "tokens", os.path.join(data, "tokens", "train.bin"), "--seq-len", "1024",
           "--batch", "32", "--workers", "2", "--epochs", str(epochs + (1 if warmup else 0)), "--json"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    seen = {}
    while p.poll() is None:
        try:
            kids = [int(c) for c in open(f"/proc/{p.pid}/task/{p.pid}/children").read().split()]
        except OSError:
            kids = []
        seen.update(threads([p.pid] + kids))
        time.sleep(SAMPLE_SECONDS)
    r = json.loads(p.stdout.read().decode().strip().splitlines()[-1])
    return (r["samplesPerSecAfterFirstEpoch"] * 1024 if warmup else r["tokensPerSecAfterFirst"]), r["batches"], by_name(seen)


def bridge(data, epochs, warmup=1, ahead=0):
    """A Python loop over the bridge: the rate of ``epochs`` epochs after ``warmup`` warm-up ones
    (0: from the first batch, which is left out as the JVM loop's rate leaves it out), and each
    thread's CPU per batch over them."""
    loader = stoker.Loader("tokens", os.path.join(data, "tokens", "train.bin"), seq_len=1024, batch_size=32, num_workers=2,
                           ahead=ahead or None)
    running_epoch = iter(loader)
    next(running_epoch)  # the server started, the first batch taken
    if warmup:
        for _ in running_epoch:
            pass
        for _ in range(warmup - 1):
            for _ in loader:
                pass
        running_epoch = None
    pid = loader._info["pid"]
    # threads come and go (a pass's workers end with it): each one's CPU from when it was first
    # seen, sampled by a thread of this process, whose own CPU is left out of Python's
    first, last, running = dict(threads([pid])), {}, [True]

    def watch():
        while running[0]:
            for tid, v in threads([pid]).items():
                first.setdefault(tid, (v[0], 0.0))
                last[tid] = v
            time.sleep(SAMPLE_SECONDS)

    watcher = threading.Thread(target=watch, daemon=True)
    me = threading.get_native_id()
    s0 = switches(pid) + switches(os.getpid(), me)
    r0, t0, n = resource.getrusage(resource.RUSAGE_THREAD), time.perf_counter(), 0
    watcher.start()
    for _ in range(epochs):
        for _ in running_epoch if running_epoch is not None else loader:
            n += 1
        running_epoch = None
    seconds = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_THREAD)
    s1 = switches(pid) + switches(os.getpid(), me)
    running[0] = False
    watcher.join()
    loader.close()
    cpu = collections.Counter()
    for tid, (name, v) in last.items():
        cpu[name] += v - first.get(tid, (name, 0.0))[1]
    cpu["python"] = r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
    woken = {k: round((s1[k] - s0[k]) / n, 3) for k in ("stoker-session", "python") if k in s1}
    return n * 32 * 1024 / seconds, n, cpu, woken


def main():
    data = sys.argv[1]
    epochs = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    warmup = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    ahead = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    results = []
    for _ in range(rounds):
        rate_j, batches_j, cpu_j = jvm(data, epochs, warmup)
        rate_b, batches_b, cpu_b, woken = bridge(data, epochs, warmup, ahead)
        r = {"jvm_tokens_per_s": rate_j, "bridge_tokens_per_s": rate_b, "ratio": rate_b / rate_j,
             "jvm_us_per_batch": {k: round(v / batches_j * 1e6, 1) for k, v in cpu_j.most_common() if v > 0.01},
             "bridge_us_per_batch": {k: round(v / batches_b * 1e6, 1) for k, v in sorted(cpu_b.items(), key=lambda x: -x[1])
                                     if v > 0.01},
             "bridge_wakeups_per_batch": woken}
        results.append(r)
        print(json.dumps(r), flush=True)
    if rounds > 1:
        def median(key, sub=None):
            vals = [r[key] if sub is None else r[key].get(sub, 0.0) for r in results]
            return round(statistics.median(vals), 3)
        print(json.dumps({"rounds": rounds, "median_ratio": median("ratio"),
                          "median_jvm_tokens_per_s": median("jvm_tokens_per_s"),
                          "median_bridge_tokens_per_s": median("bridge_tokens_per_s"),
                          "median_bridge_us_per_batch": {k: median("bridge_us_per_batch", k)
                                                         for k in ("stoker-worker", "stoker-session", "python")},
                          "median_jvm_us_per_batch": {k: median("jvm_us_per_batch", k) for k in ("stoker-worker", "java")},
                          "median_bridge_wakeups_per_batch": {k: median("bridge_wakeups_per_batch", k)
                                                              for k in ("stoker-session", "python")}}))


if __name__ == "__main__":
    main()
