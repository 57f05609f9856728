"""Host-to-device bandwidth, each way a training loop may copy, against the ceiling measured the
same minute (a large pinned cudaMemcpyAsync, timed with CUDA events). One JSON line per way:

- ceiling: one pinned 256 MiB tensor copied with non_blocking=True, 20 times;
- pageable: the same bytes from ordinary (pageable) memory;
- pin_memory: a pageable batch pinned with tensor.pin_memory() (as the DataLoader's pin thread
  does), then copied;
- stoker bridge: stoker.Loader("synthetic", ..., device="cuda"): 64 MiB batches from the shared
  ring, registered once, copied on a side stream; against the same loader on the host alone
  (what the loader makes without a copy), so the copy's share shows.
The JVM-side pinned allocator is not measured (stoker-cuda is not built yet).
"""

import argparse
import json
import sys
import time

import torch

MIB = 1 << 20


def timed(fn, reps, device):
    fn()
    torch.cuda.synchronize(device)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        fn()
    end.record()
    torch.cuda.synchronize(device)
    return start.elapsed_time(end) / 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    device = torch.device(args.device)
    n = args.mib * MIB
    out = open(args.out, "a") if args.out else sys.stdout
    dst = torch.empty(n, dtype=torch.uint8, device=device)
    pinned = torch.empty(n, dtype=torch.uint8).pin_memory()
    pageable = torch.empty(n, dtype=torch.uint8)
    pinned.fill_(1)
    pageable.fill_(1)

    def emit(way, seconds, nbytes, **more):
        print(json.dumps(dict(way=way, gbPerSec=nbytes / seconds / 1e9, bytes=nbytes, seconds=seconds,
                              device=torch.cuda.get_device_name(device), torch=torch.__version__, **more)), file=out, flush=True)

    ceiling = args.reps * n / timed(lambda: dst.copy_(pinned, non_blocking=True), args.reps, device) / 1e9
    emit("ceiling: pinned cudaMemcpyAsync", args.reps * n / (ceiling * 1e9), args.reps * n)
    s = timed(lambda: dst.copy_(pageable, non_blocking=True), args.reps, device)
    emit("pageable", s, args.reps * n, ofCeiling=args.reps * n / s / 1e9 / ceiling)
    s = timed(lambda: dst.copy_(pageable.pin_memory(), non_blocking=True), args.reps, device)
    emit("tensor.pin_memory() then copy", s, args.reps * n, ofCeiling=args.reps * n / s / 1e9 / ceiling)

    import stoker
    sample = MIB
    batch = 64
    samples = batch * 60
    for dev in (None, str(device)):
        with stoker.Loader("synthetic", samples=samples, sample_bytes=sample, batch=batch, device=dev, seed=1) as loader:
            for _ in loader:  # warm
                pass
            torch.cuda.synchronize(device)
            t0 = time.perf_counter()
            nbytes = 0
            for b in loader:
                nbytes += sum(v.numel() * v.element_size() for v in b.values() if not isinstance(v, tuple))
            torch.cuda.synchronize(device)
            s = time.perf_counter() - t0
        emit("stoker bridge, " + ("to the device" if dev else "host only (no copy)"), s, nbytes,
             ofCeiling=nbytes / s / 1e9 / ceiling)
    ceiling2 = args.reps * n / timed(lambda: dst.copy_(pinned, non_blocking=True), args.reps, device) / 1e9
    emit("ceiling again, after", args.reps * n / (ceiling2 * 1e9), args.reps * n)


if __name__ == "__main__":
    main()
