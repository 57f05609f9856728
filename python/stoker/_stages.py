"""One loop over a loader (``Pass``), and the stage a batch may go through between the ring and the
user: a function on a thread of its own (``map=``, a decode on the device), the Python worker
processes (a transform's tail, ``sample_map=``), or a copy to the GPU (``device=``).

A stage works ``depth`` batches ahead of the loop, in order: ``start`` begins a batch's work as it
comes from the ring, ``result`` waits for it when the loop asks, ``cancel`` settles one the user
never gets (the server takes its slot back: the batch is disarmed, NOTE [Batches the user owns] in
``_ring``), ``finish`` settles everything at the pass's end.
"""

import collections
import concurrent.futures
from typing import Any, Callable, Deque, Optional, Sequence, Tuple

from . import _protocol as P
from ._ring import KEY_FIELD, named
from .errors import StokerError

_STALE = "this iterator is stale: a newer iter() over the loader took over"


class Stage:
    """What a batch goes through before the user gets it (the base: nothing)."""

    depth = 2

    def make_room(self) -> None:
        """Before the pass takes another batch from the ring."""

    def start(self, batch: Any, number: int) -> Any:
        raise NotImplementedError

    def result(self, work: Any) -> Any:
        raise NotImplementedError

    def cancel(self, work: Any) -> None:
        raise NotImplementedError

    def finish(self) -> None:
        """The pass is over (ended, or left): nothing of it runs any more."""


class Pass:
    """One loop over the loader: one epoch (or the rest of a loaded state's)."""

    __slots__ = ("session", "stage", "names", "done", "stale", "taken", "end_counter", "queue")

    def __init__(self, session: Any, stage: Optional[Stage] = None, names: Optional[Tuple[str, ...]] = None) -> None:
        self.session = session
        self.stage = stage
        self.names = names  # fields= as the ring's batches give them (a stage may select them itself)
        self.done = False
        self.stale = False
        self.taken = 0
        self.end_counter = None
        self.queue: Deque[Tuple[int, Any]] = collections.deque()  # (counter, the stage's work)

    def __iter__(self) -> "Pass":
        return self

    def __len__(self) -> int:
        return self.session.length()

    def __next__(self) -> Any:
        stage = self.stage
        if stage is None:  # the batches as the ring gives them
            try:
                counter, batch = self.session.take(self, self.names)
            except StopIteration:
                self._ended()
                raise
            self.session.handed(counter)
            return batch
        if self.stale:
            raise StokerError(_STALE)
        queue = self.queue
        stage.make_room()
        while not self.done and len(queue) <= stage.depth:
            try:
                counter, batch = self.session.take(self, self.names)
            except StopIteration:
                break
            queue.append((counter, stage.start(batch, self.taken - 1)))
            del batch
            stage.make_room()
        if not queue:
            stage.finish()
            self._ended()
            raise StopIteration
        counter, work = queue.popleft()
        try:
            out = stage.result(work)
        except BaseException:
            del work
            self.drop()
            raise
        self.session.handed(counter)
        return out

    def _ended(self) -> None:
        if self.end_counter is not None:
            self.session.ended(self.end_counter)
            self.end_counter = None

    def drop(self) -> None:
        """Batches taken but not handed to the user: the server takes their slots back."""
        if self.stage is None:
            return
        while self.queue:
            self.stage.cancel(self.queue.popleft()[1])
        self.stage.finish()


class OnThread(Stage):
    """``fn`` on each batch, on a thread of its own a few batches ahead of the loop (torch's
    operations release the GIL, so it runs while the loop does)."""

    def __init__(self, fn: Callable[[Any], Any], epoch: int, what: str) -> None:
        self.fn = fn
        self.epoch = epoch
        self.what = what
        self.pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="stoker-map")

    def start(self, batch: Any, number: int) -> Any:
        return number, self.pool.submit(self.fn, batch), batch

    def result(self, work: Any) -> Any:
        number, future, _ = work
        try:
            return future.result()
        except Exception as e:
            raise StokerError(f"stoker.Loader: {self.what} raised on batch {number} of epoch {self.epoch}: "
                              f"{type(e).__name__}: {e}") from e

    def cancel(self, work: Any) -> None:
        _, future, batch = work
        future.cancel()
        try:
            future.result()
        except BaseException:
            pass
        batch._owner.disarm()

    def finish(self) -> None:
        self.pool.shutdown(wait=True)


def decoded(decoder: Callable[[Any], Any], fn: Optional[Callable[[Any], Any]],
            names: Optional[Sequence[str]]) -> Callable[[Any], Any]:
    """The function of a loader that decodes on the device: decode, then ``fields``, then the user's map."""
    def run(batch: Any) -> Any:
        out = decoder(batch)
        del batch  # the JPEGs' slot may go back now
        if names is not None:
            out = tuple(out[n] for n in names)
        return out if fn is None else fn(out)
    return run


class ToDevice(Stage):
    """Each batch copied to the device (NOTE in ``_device``): ``depth`` copies in flight; a host
    batch goes back only once its copy is done."""

    def __init__(self, session: Any, backend: Any, depth: int = 2) -> None:
        self.session = session
        self.backend = backend
        self.depth = depth
        self.unfinished: Deque[Tuple[Any, Any]] = collections.deque()  # (host batch, event): handed out, copying

    def make_room(self) -> None:
        """Copies that are done give their host batches back; if this process holds every batch the
        server may hand out and nothing is on its way, the oldest copy must finish first."""
        while self.unfinished and self.backend.done(self.unfinished[0][1]):
            self.unfinished.popleft()[0].release()
        while self.session.holds_all():
            if not self.unfinished:
                return  # nothing of ours to give: the user holds the rest
            batch, event = self.unfinished.popleft()
            self.backend.wait(event)
            batch.release()
            self.session.report()

    def start(self, batch: Any, number: int) -> Any:
        ring = self.session.ring  # the slot page-locked (the backend asks CUDA once a slot, for the loader's life)
        self.backend.register(ring.address() + P.RING_HEADER + batch._owner.slot * ring.slot_bytes, ring.slot_bytes)
        tensors = []
        if isinstance(batch, tuple):  # fields=(...): a tuple, in that order
            moved = tuple(self._move(v, tensors) for v in batch)
        else:
            moved = {name: self._move(v, tensors) for name, v in batch.items()}
        return batch, moved, tensors, self.backend.record()

    def _move(self, value: Any, tensors: list) -> Any:
        """A field's copy on the device (a variable-length field's offsets and bytes both)."""
        if isinstance(value, tuple):
            out = tuple(self.backend.copy(v) for v in value)
            tensors.extend(out)
            return out
        out = self.backend.copy(value)
        tensors.append(out)
        return out

    def result(self, work: Any) -> Any:
        batch, moved, tensors, event = work
        self.backend.hand_over(event, tensors)
        self.unfinished.append((batch, event))
        return moved

    def cancel(self, work: Any) -> None:
        batch, _, _, event = work
        self.backend.wait(event)
        batch._owner.disarm()

    def finish(self) -> None:
        """Every copy done, every host batch back."""
        while self.unfinished:
            batch, event = self.unfinished.popleft()
            self.backend.wait(event)
            batch.release()
        self.session.report()


class _InWorkers(Stage):
    """A stage whose work is done by the loader's Python workers (NOTE [Python workers] in
    ``_workers``), each run seeded from the loader's seed, the epoch and a key of the sample or
    the batch (``seed_of``); a ticket it started holds its ring batch until the workers are done."""

    def __init__(self, pool: Any, session: Any, seed: int, rank: int) -> None:
        from ._workers import sample_seed
        self.seed_of = sample_seed
        self.pool = pool
        self.session = session
        self.seed = seed
        self.rank = rank
        self.first = session.first_batch()  # the place in the rank's epoch of the pass's first batch

    def cancel(self, ticket: Any) -> None:
        batch = ticket["batch"]
        self.pool.drop(ticket)
        if batch is not None:
            batch._owner.disarm()


class BatchWorkers(_InWorkers):
    """Each batch through ``collate_fn`` and ``map`` in a Python worker, as many batches ahead of
    the loop as there are workers, handed over in order. Each is seeded by the batch's place in the
    rank's epoch, so the batches are the same for any number of workers and after a resume."""

    def __init__(self, pool: Any, session: Any, seed: int, rank: int) -> None:
        super().__init__(pool, session, seed, rank)
        self.depth = max(2, pool.workers)

    def start(self, batch: Any, number: int) -> Any:
        epoch = self.session.info["epoch"]
        seed = self.seed_of(self.seed, epoch, f"batch {self.first + number} of rank {self.rank}")
        return self.pool.submit_batch(batch, seed, epoch, number)

    def result(self, ticket: Any) -> Any:
        out = self.pool.collect_batch(ticket)
        ticket["batch"] = None  # its ring slot may go back now
        return out


class PythonWorkers(_InWorkers):
    """Each batch's samples through the per-sample functions in the Python workers (NOTE [Which
    part runs where] in ``_pytransform``), ``depth`` batches ahead of the loop; then ``fields``
    and ``map`` (on the loop's thread)."""

    def __init__(self, pool: Any, session: Any, names: Optional[Tuple[str, ...]], keys: bool,
                 fn: Optional[Callable[[Any], Any]], seed: int, rank: int, depth: int = 2) -> None:
        super().__init__(pool, session, seed, rank)
        self.names = names
        self.keys = keys  # whether the user asked for __key__ (the workers always get it)
        self.fn = fn
        self.depth = depth  # each batch is split among all the workers: a few ahead keep them busy
        self.tensor = pool.torch.Tensor

    def pooled(self, name: str, value: Any) -> bool:
        """Whether a field of the ring's batch goes through the per-sample functions: one shape a sample."""
        return name != KEY_FIELD and isinstance(value, self.tensor)

    def start(self, batch: Any, number: int) -> Any:
        epoch = self.session.info["epoch"]
        if KEY_FIELD in batch:
            keys = batch[KEY_FIELD]
        else:  # no keys: by the batch's place in the rank's epoch, and the row
            place = self.first + number
            rows = next((v.shape[0] for v in batch.values() if isinstance(v, self.tensor)), 0)
            keys = [f"row {r} of batch {place} of rank {self.rank}" for r in range(rows)]
        seeds = [self.seed_of(self.seed, epoch, k) for k in keys]
        ticket = self.pool.submit({k: v for k, v in batch.items() if self.pooled(k, v)}, keys, seeds, epoch, number)
        ticket["batch"] = batch
        return ticket

    def result(self, ticket: Any) -> Any:
        batch = ticket["batch"]
        fields = self.pool.collect(ticket)
        ticket["batch"] = None
        out = type(batch)()
        out._owner = batch._owner
        for name, value in batch.items():  # the fields no function saw pass through: keys, variable-length ones
            if not self.pooled(name, value) and (name != KEY_FIELD or self.keys):
                out[name] = value
        out.update(fields)
        del batch
        if self.names is not None:
            unknown = [n for n in self.names if n not in out]
            if unknown:
                raise ValueError(f"stoker.Loader: fields {unknown} are not fields of the batches; they have {list(out)}")
            out = named(out, self.names)
        if self.fn is not None:
            try:
                out = self.fn(out)
            except Exception as e:
                raise StokerError(f"stoker.Loader: {self.fn.what} raised on batch {ticket['number']} of epoch "
                                  f"{ticket['epoch']}: {type(e).__name__}: {e}") from e
        return out
