"""``stoker.Loader``: Stoker's batches in a Python training loop, with no copy, owned by the user.

Batches are collated by the JVM straight into a shared-memory ring that this process maps; each
batch is a dict of tensors (or numpy arrays) that view the ring. A batch is the user's for as long
as any of its arrays is alive (``_ring``, NOTE [Batches the user owns]). The session with the
server is ``_session``; what a batch goes through on its way to the user, ``_stages``; the
keywords, ``_settings``.
"""

import os
from typing import Any, Dict, Iterator, List, Optional, Union

from . import _decode, _help
from . import _device
from . import _pytransform
from . import _workers
from . import _settings
from . import _stages
from ._session import Session
from .errors import StokerError

try:
    import torch
except ImportError:  # numpy arrays then
    torch = None


class Loader:
    __doc__ = _help.loader_doc()  # what it does, and every option with its default and meaning

    def __init__(self, source: Any, *paths: Any, as_numpy: Optional[bool] = None, ahead: Optional[int] = None,
                 ring_bytes: Optional[int] = None, timeout: float = 0, fields: Optional[Any] = None,
                 map: Optional[Any] = None, server: Optional[Any] = None,
                 python_workers: Union[None, int, str] = None, sample_map: Optional[Any] = None,
                 collate_fn: Optional[Any] = None, **options: Any) -> None:
        self._options, self._spec = _settings.resolve(source, paths, options, as_numpy, ahead, ring_bytes, timeout,
                                                      fields, map, server, python_workers, sample_map, collate_fn)
        o = self._options
        self._s = Session(self._spec, o.server, None if o.numpy else torch, o.ahead, o.ring_bytes, o.timeout)
        self._decoder = None
        self._backend = None
        self._pool = None
        self._iterating: Optional[_stages.Pass] = None
        self._closed = False

    # the session's parts, for tests and benchmarks
    _server = property(lambda self: self._s.server)
    _info = property(lambda self: self._s.info)
    _ring = property(lambda self: self._s.ring)

    def _session(self) -> Session:
        """The session, opened on first use, with what the Python side needs beside it."""
        if self._closed:
            raise StokerError("the loader is closed")
        s = self._s
        s.check_process()
        if s.conn is not None:
            return s
        s.open()
        o = self._options
        try:
            known = [f.name for f in s.ring.fields]
            if o.decode_on is not None:
                if not all(n in known for n in _decode.ENCODED):
                    raise ValueError(f"stoker.Loader: decode_on= is for image sources that decode (transform train or "
                                     f"eval); this one's fields are {known}")
                self._decoder = _decode.JpegDecoder(torch, o.decode_on, self._spec["source"].get("images", {}))
                known = ["image"] + [n for n in known if n not in _decode.ENCODED]
            if o.names is not None and o.step is None:  # else the per-sample functions say the fields
                unknown = [n for n in o.names if n not in known]
                if unknown:
                    raise ValueError(f"stoker.Loader: fields {unknown} are not fields of this source; it has {known}")
            if o.device is not None:
                self._backend = _device.TorchCuda(torch, o.device)
            if o.pool():
                self._pool = _workers.Pool(torch, s.ring, o.step, o.python_workers, os.path.dirname(s.info["ring"]),
                                           o.batch_step)
            if o.plan is not None or o.pool():
                _pytransform.say_once(self._where())  # once a loader
        except BaseException:
            self._teardown()
            raise
        return s

    def __iter__(self) -> Iterator[Any]:
        s = self._session()
        self._stop_pass()
        s.start()
        o = self._options
        stage = None
        seed, rank = self._spec["loader"].get("seed", 0), self._spec["loader"].get("rank", 0)
        if o.step is not None:
            stage = _stages.PythonWorkers(self._pool, s, o.names, o.keys, o.batch_step, seed, rank)
        elif o.batch_in_workers:
            stage = _stages.BatchWorkers(self._pool, s, seed, rank)
        elif self._backend is not None:
            stage = _stages.ToDevice(s, self._backend)
        elif self._decoder is not None:
            stage = _stages.OnThread(_stages.decoded(self._decoder, o.batch_step, o.names), s.info["epoch"],
                                     o.batch_step.what if o.batch_step is not None else "the decode")
        elif o.batch_step is not None:
            stage = _stages.OnThread(o.batch_step, s.info["epoch"], o.batch_step.what)
        self._iterating = _stages.Pass(s, stage, o.spec_names())
        return self._iterating

    def _stop_pass(self) -> None:
        """The running pass (if any) is over: batches taken from the socket but not handed to the
        user go back to the server with the new request, which takes their slots back itself."""
        it = self._iterating
        if it is not None:
            it.stale = True
            it.drop()
            self._iterating = None
        self._s.stop()

    def __len__(self) -> int:
        return self._session().length()

    def set_epoch(self, epoch: int) -> None:
        """The next loop runs this epoch from its start (after load_state_dict with the state's
        epoch, the state is continued instead, so a resumed run may call it as always)."""
        if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 0:
            raise ValueError(f"stoker.Loader: set_epoch takes an integer >= 0, got {epoch!r}")
        self._s.position.epoch_request = epoch

    @property
    def epoch(self) -> int:
        """The epoch of the loop that runs now (between loops, of the next one, unless the last was left early)."""
        s = self._session()
        return s.info["epoch"] if s.position.epoch_request < 0 else s.position.epoch_request

    def state_dict(self) -> Dict[str, Any]:
        """Where the loop stands: after the last batch it was given. A small dict (torch.save-able)."""
        if self._s.conn is None and self._s.pending_state is not None:
            return {"version": 1, "loader": self._s.pending_state}
        return {"version": 1, "loader": self._session().state()}

    def load_state_dict(self, state: Union[Dict[str, Any], List[Dict[str, Any]]]) -> None:
        """Continues from a state_dict(); rank and world size may differ (elastic resume). A state
        that does not fit this loader (another seed, other data, or not all the parts it needs) is
        refused here, with a ValueError saying what differs.

        One rank's state resumes that rank at its world size (any rank, at an epoch's start).
        Another rank or world size mid-epoch takes the list of every old rank's state_dict()
        (``torch.distributed.all_gather_object`` gathers them), merged into one: ranks read by
        index must have stood together; each stream of a streaming source continues where it
        stood (``streams=``)."""
        if isinstance(state, (list, tuple)):
            if not state:
                raise ValueError("stoker.Loader: load_state_dict got an empty list of states")
            for part in state:
                _settings.check_state(part)
            loader = [part["loader"] for part in state]
            loader = [x for part in loader for x in (part if isinstance(part, list) else [part])]
        else:
            _settings.check_state(state)
            loader = state["loader"]
        s = self._s
        if s.conn is None:  # the session opens with it now, so that a state that does not fit is refused here
            before, s.pending_state = s.pending_state, loader
            try:
                self._session()
            except BaseException:
                if s.conn is None:
                    s.pending_state = before
                raise
            return
        self._stop_pass()
        s.load(loader)

    def stats(self) -> Dict[str, Any]:
        """The JVM loader's stats, plus this process's: seconds waited for batches and spent handing them over."""
        out = self._session().stats()
        o = self._options
        if o.plan is not None or o.pool():
            out["transform"] = self._where()
            out["transformJvm"] = list(o.plan.known) if o.plan is not None else []
            out["transformPython"] = o.step.describe() if o.step is not None else []
            out["pythonWorkers"] = o.python_workers if o.pool() else 0
        return out

    def _where(self) -> str:
        o = self._options
        return _pytransform.describe(o.plan, o.step, o.python_workers,
                                     o.batch_step.describe() if o.batch_in_workers else None)

    def close(self) -> None:
        """Stops the server's loader (idempotent). Batches still held stay readable until they are gone."""
        if self._closed:
            return
        self._closed = True
        if os.getpid() != self._s.pid:  # a forked copy: the session is the parent's
            return
        if self._iterating is not None:
            self._iterating.stale = True
            try:
                self._iterating.drop()
            except Exception:
                pass
        self._s.bye()
        self._teardown()

    def _teardown(self) -> None:
        if self._iterating is not None:
            self._iterating.stale = True
        try:
            if self._backend is not None:
                self._backend.close()
        finally:
            self._backend = None
            try:
                if self._pool is not None:
                    self._pool.close()  # its workers read the ring
            finally:
                self._pool = None
                self._s.close()

    def __enter__(self) -> "Loader":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass
