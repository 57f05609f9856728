"""Batches to a CUDA device: ``stoker.Loader(..., device="cuda")``.

The shared-memory ring is registered with CUDA once (``cudaHostRegister``: page-locked, so a copy
from it is a DMA that runs while the CPU goes on). Each batch is copied host-to-device on a side
stream with ``non_blocking=True`` and an event recorded after it; ``depth`` copies are kept in
flight ahead of the loop. A batch's ring slot goes back to the server only once its copy's event
has completed (the server would overwrite it). The loop's stream waits on that event before it
uses the batch, and each device tensor is marked as used by the loop's stream
(``record_stream``), so that the caching allocator, which saw it allocated on the side stream,
does not hand its memory out again while the loop still reads it.

The CUDA calls are made through a backend object, so that the flow (what is freed when, what
waits on what) is tested without a GPU by a backend that records them.
"""

import collections
import os


def cuda_missing_reason(torch, device):
    """Why ``device`` cannot be used, in words naming where CUDA was looked for; None when it can."""
    if torch is None:
        return "CUDA was not found: torch is not importable, and Stoker reaches CUDA through it"
    if torch.version.cuda is None:
        return (f"CUDA was not found: this torch ({torch.__version__}) is built without CUDA "
                "(torch.version.cuda is None)")
    if not torch.cuda.is_available():
        nodes = sorted(n for n in os.listdir("/dev") if n.startswith("nvidia")) if os.path.isdir("/dev") else []
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        return (f"CUDA was not found: torch {torch.__version__} (CUDA {torch.version.cuda}) sees no device "
                f"(torch.cuda.is_available() is False; /dev/nvidia*: {', '.join(nodes) or 'none'}"
                + (f"; CUDA_VISIBLE_DEVICES={visible!r}" if visible is not None else "") + ")")
    index = torch.device(device).index
    if index is not None and index >= torch.cuda.device_count():
        return f"CUDA device {index} was not found: torch sees {torch.cuda.device_count()} device(s)"
    return None


class TorchCuda:
    """The CUDA calls, through torch."""

    def __init__(self, torch, device):
        self.torch = torch
        self.device = torch.device(device)
        if self.device.index is None:
            self.device = torch.device("cuda", torch.cuda.current_device())
        self.side = torch.cuda.Stream(device=self.device)
        self.registered = None

    def register(self, address, nbytes):
        """Page-locks the ring; False (copies then go from pageable memory, slower) if CUDA refuses."""
        with self.torch.cuda.device(self.device):
            rc = self.torch.cuda.cudart().cudaHostRegister(address, nbytes, 0)
        if int(rc) != 0:
            return False
        self.registered = address
        return True

    def unregister(self):
        if self.registered is not None:
            with self.torch.cuda.device(self.device):
                self.torch.cuda.cudart().cudaHostUnregister(self.registered)
            self.registered = None

    def copy(self, tensor):
        with self.torch.cuda.stream(self.side):
            return tensor.to(self.device, non_blocking=True)

    def record(self):
        event = self.torch.cuda.Event()
        event.record(self.side)
        return event

    def hand_over(self, event, tensors):
        stream = self.torch.cuda.current_stream(self.device)
        stream.wait_event(event)
        for t in tensors:
            t.record_stream(stream)

    def done(self, event):
        return event.query()

    def wait(self, event):
        event.synchronize()


class DevicePass:
    """One iteration over the loader, its batches on the device: ``depth`` copies in flight."""

    __slots__ = ("loader", "host", "backend", "depth", "inflight", "unfinished", "done", "stale")

    def __init__(self, loader, host, backend, depth):
        self.loader = loader
        self.host = host
        self.backend = backend
        self.depth = depth
        self.inflight = collections.deque()  # (slot, device batch, event), copies issued, not yet handed out
        self.unfinished = collections.deque()  # (slot, event): handed out, slot held until the copy is done
        self.done = False
        self.stale = False

    def __iter__(self):
        return self

    def __len__(self):
        return len(self.loader)

    def __next__(self):
        self._free_finished()
        while not self.done and len(self.inflight) < self.depth + 1:
            self._make_room()
            try:
                slot, batch = self.loader._take(self.host)
            except StopIteration:
                self.done = True
                break
            tensors = []
            moved = {}
            for name, value in batch.items():
                if isinstance(value, tuple):
                    moved[name] = tuple(self.backend.copy(v) for v in value)
                    tensors.extend(moved[name])
                else:
                    moved[name] = self.backend.copy(value)
                    tensors.append(moved[name])
            self.inflight.append([slot, moved, tensors, self.backend.record()])
        if not self.inflight:
            self._finish()
            raise StopIteration
        slot, moved, tensors, event = self.inflight.popleft()
        self.backend.hand_over(event, tensors)
        if slot is not None:
            self.unfinished.append((slot, event))
        return moved

    def _free_finished(self):
        while self.unfinished and self.backend.done(self.unfinished[0][1]):
            self.loader._give(self.unfinished.popleft()[0])

    def _make_room(self):
        """Before asking for another batch: if the server has every slot out and nothing is on the
        way, the oldest copy must finish so that its slot can go back (a batch in flight keeps its
        device copy for the loop and gives its slot up early)."""
        while self.loader._starved():
            if self.unfinished:
                slot, event = self.unfinished.popleft()
            else:
                entry = next((e for e in self.inflight if e[0] is not None), None)
                if entry is None:
                    return  # nothing of ours to give: the server's slots are elsewhere
                slot, event = entry[0], entry[3]
                entry[0] = None
            self.backend.wait(event)
            self.loader._give(slot)
            self.loader._flush()

    def _finish(self):
        """The pass's end: every copy done, every slot back."""
        while self.unfinished:
            slot, event = self.unfinished.popleft()
            self.backend.wait(event)
            self.loader._give(slot)
        self.loader._flush()
