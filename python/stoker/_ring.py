"""The shared-memory ring as this process sees it: its layout, and batches the user owns.

NOTE [Batches the user owns] (the server's side is in ``Session.java``): every array or
tensor of a batch views its slot of the ring with no copy, and through numpy's chain of bases
keeps one ``_Owner`` object alive (``torch.from_numpy`` keeps the array it wraps alive, so a
tensor does too). When the last of them is gone the owner's finalizer puts the slot on the
ring's ``dead`` queue, from whatever thread dropped it; the loop gives queued slots back to the
server through the ring (``Session.report``). ``Batch.release()`` does the same at once. The
server never writes a slot the client holds, so a batch the user keeps never changes.
``close()`` unmaps the ring only when nothing views it; otherwise the mapping lives until the
last view is gone, so a tensor read after ``Loader.close()`` still reads its batch and never
faults.
"""

import collections
import mmap
import os

import numpy as np

from . import _protocol as P
from .errors import StokerError

KEY_FIELD = "__key__"
# numpy has no bfloat16: its bits; torch.from_numpy takes no unsigned type wider than a byte
_NUMPY = {"bfloat16": "uint16"}
_SIGNED = {"uint16": "int16", "uint32": "int32", "uint64": "int64", "bfloat16": "int16"}


class _SlotArray(np.ndarray):
    """A uint8 array over one slot; it carries the batch's owner, and every view of it keeps it alive."""

    __slots__ = ("stoker_owner",)  # no __dict__: one object fewer for each field of each batch


class _Owner:
    """Gives a slot back when it is garbage: the last view of the batch is gone (or on release())."""

    __slots__ = ("ring", "slot", "counter")

    def __init__(self, ring, slot, counter):
        self.ring = ring
        self.slot = slot
        self.counter = counter

    def give_back(self):
        ring = self.ring
        if ring is not None:
            self.ring = None
            if not ring.closed:
                ring.dead.append(self.slot)  # thread-safe; the loop sends it

    def disarm(self):
        """The server took the slot back itself: the batch was never handed to the user (loop thread only)."""
        ring = self.ring
        if ring is not None:
            self.ring = None
            ring.live -= 1

    def __del__(self):
        try:
            self.give_back()
        except Exception:  # at interpreter exit
            pass


class Batch(dict):
    """A batch: field name -> tensor (or numpy array), viewing shared memory with no copy.

    The batch is yours: its memory goes back to the loader only when the last of its arrays and
    tensors (and this dict) is gone, so a batch kept in a list, queued on another thread or
    sliced never changes. Call ``release()`` to give it back at once, in a loop that wants the
    memory back before Python drops the objects; its arrays must not be read after that.
    """

    __slots__ = ("_owner",)

    def release(self) -> None:
        """Gives the batch's memory back now; its arrays and tensors must not be read afterwards."""
        self._owner.give_back()


class BatchTuple(tuple):
    """A batch as a tuple of the fields named by ``fields=``, owned as a ``Batch`` is."""

    def release(self) -> None:
        """Gives the batch's memory back now; its arrays and tensors must not be read afterwards."""
        self._owner.give_back()


def named(batch, names):
    """``fields=``: the batch as a BatchTuple of those fields, in that order, owned as the batch is."""
    t = BatchTuple(batch[n] for n in names)
    t._owner = batch._owner
    return t


class _Field:
    __slots__ = ("index", "name", "dtype", "shape", "variable", "ragged", "np_dtype", "torch_dtype", "signed",
                 "sample_bytes")

    def __init__(self, index, spec, torch):
        self.index = index
        self.name = spec["name"]
        self.dtype = spec["dtype"]
        self.shape = tuple(spec["shape"])
        self.variable = spec["variable"]
        self.ragged = spec.get("ragged", False)  # a list of numbers a sample: typed values, element offsets
        self.np_dtype = np.dtype(_NUMPY.get(self.dtype, self.dtype))
        count = 1
        for d in self.shape:
            count *= d
        self.sample_bytes = count * self.np_dtype.itemsize
        self.signed = None
        self.torch_dtype = None
        if torch is not None and (self.ragged or not self.variable):
            self.torch_dtype = getattr(torch, self.dtype, None)
            if self.torch_dtype is None:
                raise StokerError(f"field '{self.name}' is {self.dtype}, which this torch ({torch.__version__}) has no "
                                  "dtype for: use as_numpy=True, or a torch that has it")
            if self.dtype in _SIGNED:
                self.signed = np.dtype(_SIGNED[self.dtype])


class Ring:
    """The mapped ring of one session, and the slots this process holds."""

    def __init__(self, info, torch):
        self.torch = torch
        self.path = info["ring"]
        self.slot_bytes = info["slotBytes"]
        self.dead = collections.deque()
        self.closed = False
        self.live = 0  # batches handed out whose slots have not been given back
        fd = os.open(self.path, os.O_RDWR)
        try:
            self.mm = mmap.mmap(fd, info["ringBytes"], mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        finally:
            os.close(fd)
        magic = bytes(self.mm[:len(P.RING_MAGIC)]).decode("ascii", "replace")
        version = int.from_bytes(self.mm[P.RING_VERSION_AT:P.RING_VERSION_AT + 4], "little")
        slots = int.from_bytes(self.mm[P.RING_SLOTS_AT:P.RING_SLOTS_AT + 4], "little")
        slot_bytes = int.from_bytes(self.mm[P.RING_SLOT_BYTES_AT:P.RING_SLOT_BYTES_AT + 8], "little")
        if magic != P.RING_MAGIC or version != P.VERSION or slot_bytes != self.slot_bytes or \
                P.ring_bytes(slots, slot_bytes) != info["ringBytes"]:
            self.mm.close()
            raise StokerError(f"{self.path}: not a ring of this version ({P.VERSION}) of the stoker package: magic "
                              f"{magic!r}, version {version}, {slots} slots of {slot_bytes} bytes")
        self.slots = slots
        self._slots = {}
        self.fields = [_Field(i, f, torch) for i, f in enumerate(info["fields"])]
        self.capacity = info["batch"]
        # every field one shape a sample, as tensors: the quick way (``_tensors``)
        self.tensors = torch is not None and not any(f.variable for f in self.fields)
        self._headers = {}
        self._plans = {}  # per slot, for all-tensor batches (``_tensors``)
        # the client's report (NOTE [Bridge flow] in Session.java): the last notice taken, what the
        # server waits for, and the queue of slots given back
        self.words = memoryview(self.mm)[P.RING_TAKEN_AT:P.RING_WAITS_AT + 8].cast("q")
        at = P.RING_HEADER + slots * slot_bytes
        self.queue = memoryview(self.mm)[at:at + slots * P.GIVEN_BACK_ENTRY_BYTES].cast("Q")
        self.given = 0  # slots given back so far

    def give_back_dead(self):
        """Gives back the slots whose batches are gone: each is an entry of the ring's queue, written
        in one 8-byte store, numbered so that the server takes it only once it is whole. How many."""
        dead, queue, slots = self.dead, self.queue, self.slots
        n = 0
        while dead:
            slot = dead.popleft()
            k = self.given
            queue[k % slots] = ((k + 1) & 0xFFFFFFFF) << 32 | slot
            self.given = k + 1
            n += 1
        self.live -= n
        return n

    def address(self):
        """The ring's address in this process (for tests of the no-copy property and CUDA registration)."""
        import ctypes
        c = ctypes.c_char.from_buffer(self.mm)
        try:
            return ctypes.addressof(c)
        finally:
            del c

    def batch(self, slot, counter, spill, names):
        """The batch in ``slot``: a Batch (or a BatchTuple of ``names``) of views of the slot."""
        if not 0 <= slot < self.slots:
            raise StokerError(f"the stoker server sent slot {slot} of a ring of {self.slots}")
        owner = _Owner(self, slot, counter)
        self.live += 1
        if self.tensors:
            return self._tensors(slot, owner, names)
        base = P.RING_HEADER + slot * self.slot_bytes
        mm = self.mm
        _, _, rows, _ = P.SLOT_HEAD.unpack_from(mm, base)
        columns = self._slots.get(slot)
        if columns is None:  # per slot, plain full-capacity views of its tensor columns, kept
            columns = self._slots[slot] = {}
        torch = self.torch
        out = Batch()
        out._owner = owner
        whole = None
        spilled = 0
        for f in self.fields:
            data_at, nbytes, offsets_at = P.FIELD_COLUMN.unpack_from(
                mm, base + P.SLOT_FIELD0 + P.FIELD_BYTES * f.index + P.FIELD_DATA)
            if f.variable:
                if whole is None:
                    whole = np.frombuffer(mm, np.uint8, count=self.slot_bytes, offset=base).view(_SlotArray)
                    whole.stoker_owner = owner
                offsets = _view(whole, offsets_at, np.dtype(np.int64), (rows + 1,))
                if data_at == P.NOT_IN_SLOT:
                    data = np.frombuffer(bytearray(spill[spilled:spilled + nbytes]), dtype=np.uint8)
                    spilled += nbytes
                else:
                    data = _view(whole, data_at, np.dtype(np.uint8), (nbytes,))
                if f.ragged:  # the values as their dtype, the offsets counted in values
                    size = f.np_dtype.itemsize
                    data = data.view(f.signed if f.signed is not None else f.np_dtype)
                    offsets = offsets // size
                if f.name == KEY_FIELD:  # the samples' keys, as WebDataset gives them: strings
                    o = offsets.tolist()
                    raw = data.tobytes()
                    out[f.name] = [raw[o[i]:o[i + 1]].decode("utf-8", "replace") for i in range(rows)]
                    continue
                if torch is not None:
                    offsets, data = torch.from_numpy(offsets), torch.from_numpy(data)
                out[f.name] = (offsets, data)
                continue
            column = columns.get(f.index)
            if column is None or column[0] != data_at:
                column = columns[f.index] = (data_at, self._column(slot, f, data_at))
            # one view per batch carries the owner; the slice of it (a second _SlotArray) stops numpy's
            # collapsing of bases there, so every plain view the user makes keeps the owner alive
            owned = column[1].view(_SlotArray)
            owned.stoker_owner = owner
            a = owned[:rows].view(np.ndarray)
            if torch is not None:
                a = torch.from_numpy(a)
                if f.signed is not None:
                    a = a.view(f.torch_dtype)
            elif f.signed is not None:
                a = a.view(f.np_dtype)
            out[f.name] = a
        return out if names is None else named(out, names)

    def _tensors(self, slot, owner, names):
        """A batch whose fields are all tensors of one shape a sample, the most common and the one
        a step of a loop pays for: a plan kept per slot (its header's view, and for each field its
        column's place and view, as in ``batch``), checked against the header, and each field one
        owned view of its column made a tensor."""
        plan = self._plans.get(slot)
        if plan is None:
            plan = self._plans[slot] = self._plan(slot)
        header, fields = plan
        rows = header[P.SLOT_ROWS // 8] & 0xFFFFFFFF  # the u32 rows, beside the u32 fields
        from_numpy = self.torch.from_numpy
        out = Batch()
        out._owner = owner
        for i, (name, at, data_at, column, view) in enumerate(fields):
            if header[at] != data_at:  # the column moved: the plan is made again
                plan = self._plans[slot] = self._plan(slot)
                header, fields = plan
                name, at, data_at, column, view = fields[i]
            owned = column.view(_SlotArray)  # the owner rides on it: the tensor keeps it alive
            owned.stoker_owner = owner
            t = from_numpy(owned)
            if rows != self.capacity:
                t = t[:rows]
            out[name] = t if view is None else t.view(view)
        return out if names is None else named(out, names)

    def _plan(self, slot):
        """The slot's header as int64 words, and for each field: its name, the header's word that
        says where its column is, that place, the column's plain view, and the torch dtype it is
        viewed as (None when it is its own)."""
        header = self._headers.get(slot)
        if header is None:
            base = P.RING_HEADER + slot * self.slot_bytes
            size = P.SLOT_FIELD0 + P.FIELD_BYTES * len(self.fields)
            header = self._headers[slot] = memoryview(self.mm)[base:base + size].cast("q")
        fields = []
        for f in self.fields:
            at = (P.SLOT_FIELD0 + P.FIELD_BYTES * f.index + P.FIELD_DATA) // 8
            data_at = header[at]
            fields.append((f.name, at, data_at, self._column(slot, f, data_at), None if f.signed is None else f.torch_dtype))
        return header, tuple(fields)

    def _column(self, slot, f, data_at):
        """A field's column in a slot, at the batch's capacity: a plain array of its dtype and shape."""
        count = self.capacity * f.sample_bytes
        base = P.RING_HEADER + slot * self.slot_bytes
        plain = np.frombuffer(self.mm, np.uint8, count=count, offset=base + data_at) if count else np.empty(0, np.uint8)
        return plain.view(f.signed if f.signed is not None else f.np_dtype).reshape((self.capacity,) + f.shape)

    def close(self):
        """No more slots go back (the session is over); the mapping goes when nothing views it."""
        self.closed = True
        self.dead.clear()
        self._slots.clear()
        self._plans.clear()
        for header in self._headers.values():
            header.release()
        self._headers.clear()
        for view in (self.words, self.queue):
            view.release()
        if self.mm is not None:
            try:
                self.mm.close()
            except BufferError:
                pass  # batches still viewed: unmapped when the last of them is gone
            self.mm = None


def _view(whole, at, dtype, shape):
    count = 1
    for d in shape:
        count *= d
    raw = whole[at:at + count * dtype.itemsize]
    return raw.view(np.ndarray).view(dtype).reshape(shape)
