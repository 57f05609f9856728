#!/usr/bin/python3
"""What one wake-up costs on this machine: two processes hand a message back and forth over a
Unix socket (the bridge's socket), each sleeping in recv() until the other's send() wakes it.
Prints the round trip's wall time and one side's CPU time for each message it receives (the
send that wakes the other side, the sleep, the wake-up and the recv), medians of ROUNDS.

Usage: bench/wake_cost.py [MESSAGES] [ROUNDS]
"""
import os
import resource
import socket
import statistics
import sys
import time


def round_trips(n):
    a, b = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        a.close()
        for _ in range(n):
            b.recv(8)
            b.send(b"r" * 8)
        os._exit(0)
    b.close()
    r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    for _ in range(n):
        a.send(b"s" * 8)
        a.recv(8)
    seconds, r1 = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_SELF)
    os.waitpid(pid, 0)
    a.close()
    cpu = r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
    return seconds / n * 1e6, cpu / n * 1e6, (r1.ru_stime - r0.ru_stime) / n * 1e6


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    runs = [round_trips(n) for _ in range(rounds)]
    wall, cpu, sys_ = (statistics.median(r[i] for r in runs) for i in range(3))
    print(f'{{"round_trip_us": {wall:.1f}, "cpu_per_wake_us": {cpu:.1f}, "of_it_kernel_us": {sys_:.1f}, "rounds": {rounds}}}')


if __name__ == "__main__":
    main()
