"""What both examples share: the device, and a loop that times the loader's wait against the step."""

import json
import time

import torch


def device():
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def train(batches, step, steps, dev, label):
    """Runs `steps` training steps over `batches`; returns and prints step time, loader wait per
    step and the accelerator's idle share (the wait's share of the loop's time)."""
    it = iter(batches)
    wait = compute = 0.0
    losses = []
    t_start = time.perf_counter()
    for i in range(steps):
        t0 = time.perf_counter()
        try:
            batch = next(it)
        except StopIteration:
            it = iter(batches)   # the next epoch
            batch = next(it)
        t1 = time.perf_counter()
        loss = step(batch)
        if dev.type == "cuda":
            torch.cuda.synchronize()
        t2 = time.perf_counter()
        if i > 0:                # the first batch pays for start-up on both sides
            wait += t1 - t0
            compute += t2 - t1
        losses.append(loss)
    total = time.perf_counter() - t_start
    n = max(1, steps - 1)
    result = {"loader": label, "steps": steps, "step_ms": 1e3 * (wait + compute) / n, "wait_ms": 1e3 * wait / n,
              "idle_share": wait / max(1e-9, wait + compute), "first_loss": losses[0], "last_loss": losses[-1],
              "seconds": total}
    print(f"{label:>10}: {steps} steps, {result['step_ms']:.1f} ms a step, loader wait {result['wait_ms']:.2f} ms a step, "
          f"accelerator idle {100 * result['idle_share']:.1f}%, loss {losses[0]:.3f} -> {losses[-1]:.3f}")
    return result


def run(batches, step, o, dev, closing=None):
    """Trains, closes the Stoker loader if there is one, prints the result as JSON when asked."""
    try:
        result = train(batches, step, o.steps, dev, o.loader)
    finally:
        if closing is not None:
            closing.close()
    if o.json:
        print(json.dumps(result))
    return result
