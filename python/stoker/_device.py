"""Batches to a CUDA device: ``stoker.Loader(..., device="cuda")``.

Each slot of the shared-memory ring is registered with CUDA the first time a batch comes from it
(``cudaHostRegister``: page-locked, so a copy from it is a DMA that runs while the CPU goes on; the
ring grows as batches are held, so it is registered slot by slot, not as a whole). Each batch is
copied host-to-device on a side stream with ``non_blocking=True`` and an event recorded after it;
``depth`` copies are kept in flight ahead of the loop. A host batch is released (its slot goes
back to the server) only once its copy's event has completed: the server would overwrite it. The loop's stream waits on that event before it
uses the batch, and each device tensor is marked as used by the loop's stream
(``record_stream``), so that the caching allocator, which saw it allocated on the side stream,
does not hand its memory out again while the loop still reads it.

The CUDA calls are made through a backend object, so that the flow (what is freed when, what
waits on what) is tested without a GPU by a backend that records them.
"""

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
        self.registered = []
        self.tried = set()  # slot addresses asked for, once each for the loader's life (a pass or an epoch anew
        #                     would find them registered: CUDA refuses a range twice, and the refusal is then
        #                     raised by the next unrelated CUDA call)

    def register(self, address, nbytes):
        """Page-locks a slot, once; False (copies then go from pageable memory, slower) if CUDA refuses."""
        if address in self.tried:
            return address in self.registered
        self.tried.add(address)
        try:
            with self.torch.cuda.device(self.device):
                rc = self.torch.cuda.cudart().cudaHostRegister(address, nbytes, 0)
        except (AttributeError, RuntimeError):  # a torch without the binding: pageable copies
            return False
        if int(rc) != 0:
            self._clear_error()
            return False
        self.registered.append(address)
        return True

    def _clear_error(self):
        """CUDA keeps a refused call's error as its last error, which torch's next kernel launch would
        raise as its own: a launch whose check reads (and so clears) it, here."""
        try:
            self.torch.zeros(1, device=self.device).add_(1)
            self.torch.cuda.synchronize(self.device)
        except RuntimeError:
            pass

    def close(self):
        """Every copy done, every slot unregistered."""
        self.side.synchronize()  # no copy may still read the ring
        with self.torch.cuda.device(self.device):
            for address in self.registered:
                self.torch.cuda.cudart().cudaHostUnregister(address)
        self.registered = []

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
