"""``device="cuda"``: the flow of copies, events and slots, checked without a GPU by a backend that
records the CUDA calls and finishes each copy only when the test says so; and the error a machine
without CUDA gives at once."""

import collections

import numpy as np
import pytest

import stoker
from stoker import _device
from conftest import bench_digests

torch = pytest.importorskip("torch")


class FakeCuda:
    """Stands in for TorchCuda: a copy snapshots the host bytes when it is issued (a DMA reads them
    while it runs: the snapshot is compared with what the ring holds when the copy finishes, so a
    slot given back too early, and overwritten by the server, shows); events finish when told."""

    def __init__(self, loader, finish_after=2):
        self.loader = loader
        self.finish_after = finish_after  # an event is done once it has been asked about this often
        self.events = []
        self.handed = []
        self.copies = collections.defaultdict(list)  # event number -> [(host view, snapshot)]
        self.pending = []

    def copy(self, tensor):
        snapshot = tensor.clone()
        self.pending.append((tensor, snapshot))
        return snapshot

    def record(self):
        e = {"n": len(self.events), "asked": 0, "finished": False}
        self.copies[e["n"]] = self.pending
        self.pending = []
        self.events.append(e)
        return e

    def _finish(self, e):
        if not e["finished"]:
            for host, snapshot in self.copies[e["n"]]:
                # the ring still holds what the copy read: its slot was not given back before this
                assert torch.equal(host, snapshot), f"copy {e['n']}: its slot was reused before the copy finished"
            e["finished"] = True
            e["finished_at_give"] = None

    def hand_over(self, e, tensors):
        self.handed.append(e["n"])

    def done(self, e):
        e["asked"] += 1
        if e["asked"] >= self.finish_after:
            self._finish(e)
        return e["finished"]

    def wait(self, e):
        self._finish(e)

    def register(self, address, nbytes):
        return True

    def close(self):
        pass

    class _Side:
        def synchronize(self):
            pass

    side = _Side()


def device_pass(loader, finish_after):
    """Iterates as device="cuda" does, with the fake backend, which checks that each host batch
    goes back only after its copy finished; then every host batch is back."""
    fake = FakeCuda(loader, finish_after)
    loader._session()
    loader._backend = fake  # stands in for the CUDA backend device="cuda" makes
    out = list(loader)
    assert all(e["finished"] for e in fake.events), "the pass ended with copies unfinished"
    assert fake.handed == list(range(len(fake.events))), "batches handed over in order, each once"
    assert loader._ring.live == 0, "every host batch given back"
    return out, len(fake.events)


@pytest.mark.parametrize("finish_after", [1, 3, 50])
@pytest.mark.parametrize("ahead", [2, 3, 8])
def test_device_flow_gives_every_batch_in_order_and_frees_slots_only_after_their_copies(data, tmp_path, ahead,
                                                                                            finish_after):
    opts = ["--seq-len", "32", "--batch", "5", "--seed", "4"]
    expected = bench_digests(tmp_path, "tokens", data / "tokens.bin", *opts)
    with stoker.Loader("tokens", data / "tokens.bin", seq_len=32, batch=5, seed=4, ahead=ahead) as loader:
        out, copied = device_pass(loader, finish_after)
        assert [stoker.testing.batch_digest(b) for b in out] == expected
        assert copied == len(expected), "every batch copied once"
        # the loader goes on: the next pass (the next epoch) works the same
        out2, _ = device_pass(loader, finish_after)
        assert len(out2) == len(expected)


def test_variable_length_fields_are_moved_too(data):
    shards = [str(data / f"shard-{s:06d}.tar") for s in range(3)]
    with stoker.Loader("shards", *shards, transform="none", batch=4, shuffle=False, ahead=2) as loader:
        out, _ = device_pass(loader, 2)
    assert out and all(isinstance(b["jpg"], tuple) and len(b["jpg"]) == 2 for b in out)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_device_cuda_without_cuda_fails_at_once_saying_where_it_looked(data):
    with pytest.raises(stoker.StokerError) as e:
        stoker.Loader("tokens", data / "tokens.bin", seq_len=32, device="cuda")
    message = str(e.value)
    assert "CUDA was not found" in message
    assert "torch.version.cuda is None" in message or "/dev/nvidia" in message, message


def test_a_bad_device_is_a_value_error_and_cpu_is_the_host(data):
    with pytest.raises(ValueError, match="option 'device'"):
        stoker.Loader("tokens", data / "tokens.bin", seq_len=32, device="tpu")
    with pytest.raises(ValueError, match="as_numpy"):
        stoker.Loader("tokens", data / "tokens.bin", seq_len=32, device="cuda", as_numpy=True)
    with stoker.Loader("tokens", data / "tokens.bin", seq_len=32, batch=4, device="cpu") as loader:
        b = next(iter(loader))
        assert b["x"].device.type == "cpu"


def test_each_slot_is_page_locked_once_for_the_loaders_life():
    """CUDA refuses to register a range twice and keeps the refusal as its last error, which the
    next unrelated kernel launch raises: a second pass (an epoch) must not ask again, and a refusal
    must be cleared where it happens."""
    import types
    asked, cleared = [], []

    class Cudart:
        def cudaHostRegister(self, address, nbytes, flags):
            asked.append(address)
            return 712 if asked.count(address) > 1 or address == 300 else 0  # AlreadyRegistered

    class Ctx:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    class Zeros:
        def add_(self, v):
            cleared.append(v)

    fake = types.SimpleNamespace(
        device=lambda d, *i: types.SimpleNamespace(type="cuda", index=0),
        zeros=lambda *a, **k: Zeros(),
        cuda=types.SimpleNamespace(current_device=lambda: 0, Stream=lambda device: None, device=lambda d: Ctx(),
                                   cudart=lambda: Cudart(), synchronize=lambda d=None: None))
    backend = _device.TorchCuda(fake, "cuda:0")
    assert backend.register(100, 64) and backend.register(200, 64)
    assert backend.register(100, 64) and backend.register(200, 64)  # the next pass
    assert asked == [100, 200] and not cleared
    assert not backend.register(300, 64) and not backend.register(300, 64)
    assert asked == [100, 200, 300] and len(cleared) == 1, "a refusal asked once and its error cleared"
    assert backend.registered == [100, 200]
