"""One server for all of a process's loaders (NOTE [One server a process] in ``_process.py``): the
second loader's first batch needs no JVM start, closing one leaves the others running, and the
server ends with the last of them, leaving nothing behind."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import stoker
from stoker import _process
from conftest import PACKAGE_PARENT


def server_pid(loader):
    return loader._info["pid"]


def gone(pid, within=10.0):
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except OSError:
            return True
        time.sleep(0.05)
    return False


def first_tokens(batch):
    return [int(v) for v in batch["x"][:, 0].tolist()]


def test_two_loaders_share_one_server_and_the_second_starts_at_once(data):
    with stoker.Loader("tokens", data / "tokens.bin", seq_len=50, batch=4) as train:
        next(iter(train))
        t0 = time.monotonic()
        with stoker.Loader("tokens", data / "tokens.bin", seq_len=20, batch=8, order="sequential") as val:
            b = next(iter(val))
            second = time.monotonic() - t0
            assert server_pid(val) == server_pid(train)
            assert val._server is train._server
            assert first_tokens(b) == [20 * i for i in range(8)]
    assert second < 2.0, f"the second loader's first batch took {second:.2f} s"


def test_closing_one_loader_leaves_the_other_running_and_the_last_ends_the_server(data):
    a = stoker.Loader("tokens", data / "tokens.bin", seq_len=50, batch=4, order="sequential")
    b = stoker.Loader("tokens", data / "tokens.bin", seq_len=50, batch=4, order="sequential")
    first = next(iter(a))
    expected = [first_tokens(x) for x in b]
    pid, sock_dir = server_pid(a), a._server.dir
    assert server_pid(b) == pid
    a.close()
    del first
    assert not gone(pid, within=0.5), "the server ended with one of its two loaders"
    assert [first_tokens(x) for x in b] == expected, "the remaining loader runs as before"
    b.close()
    assert gone(pid), "the server outlived the last loader"
    assert not os.path.exists(sock_dir), "the socket's directory was left behind"
    assert "process" not in _process._SHARED


def test_a_loader_after_the_last_closed_starts_a_new_server(data):
    with stoker.Loader("tokens", data / "tokens.bin", seq_len=50, batch=4) as a:
        next(iter(a))
        first = server_pid(a)
    with stoker.Loader("tokens", data / "tokens.bin", seq_len=50, batch=4) as b:
        next(iter(b))
        assert server_pid(b) != first
    assert gone(first)


def test_own_gives_a_loader_a_server_of_its_own(data):
    with stoker.Loader("tokens", data / "tokens.bin", seq_len=50, batch=4) as shared, \
            stoker.Loader("tokens", data / "tokens.bin", seq_len=50, batch=4, server="own") as own:
        next(iter(shared))
        next(iter(own))
        assert server_pid(own) != server_pid(shared)
        pid = server_pid(own)
    assert gone(pid)


def test_a_dead_shared_server_fails_its_loaders_and_the_next_loader_starts_another(data):
    a = stoker.Loader("tokens", data / "tokens.bin", seq_len=50, batch=4)
    b = stoker.Loader("tokens", data / "tokens.bin", seq_len=50, batch=4)
    ia, ib = iter(a), iter(b)
    next(ia)
    next(ib)
    pid = server_pid(a)
    os.kill(pid, signal.SIGKILL)
    for it in (ia, ib):
        with pytest.raises(stoker.LoaderDied, match="signal 9"):
            for _ in it:
                pass
    with stoker.Loader("tokens", data / "tokens.bin", seq_len=50, batch=4) as c:
        next(iter(c))
        assert server_pid(c) != pid
    a.close()
    b.close()


def test_a_bad_server_option_is_refused_saying_what_it_takes(no_jvm):
    with pytest.raises(ValueError, match="'process'.*'node'.*'own'.*socket path"):
        stoker.Loader("tokens", "t.bin", seq_len=8, server="proces")


@pytest.fixture
def no_jvm(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("a server was started")
    monkeypatch.setattr(_process, "Server", refuse)


FORKED = textwrap.dedent("""
    import os, sys
    sys.path.insert(0, {python!r})
    import stoker
    a = stoker.Loader("tokens", {path!r}, seq_len=50, batch=4)
    next(iter(a))
    parent_server = a._info["pid"]
    child = os.fork()
    if child == 0:  # as a DataLoader worker is made: the parent's loader and server are not the child's
        try:
            with stoker.Loader("tokens", {path!r}, seq_len=50, batch=4) as c:
                next(iter(c))
                ok = c._info["pid"] != parent_server
        except BaseException as e:
            print("child:", e, flush=True)
            ok = False
        os._exit(0 if ok else 3)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0, status
    b = stoker.Loader("tokens", {path!r}, seq_len=50, batch=4)
    next(iter(b))
    assert b._info["pid"] == parent_server, "the child ended the parent's server"
    # a forked child that lives on, holding copies of the server's sockets, does not keep it
    child = os.fork()
    if child == 0:
        import time
        time.sleep(5)
        os._exit(0)
    a.close(); b.close()
    print(parent_server, child, flush=True)
""")


def test_a_forked_child_starts_its_own_server_and_never_ends_its_parents(data):
    code = FORKED.format(python=PACKAGE_PARENT, path=str(data / "tokens.bin"))
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    server, child = map(int, r.stdout.split())
    assert gone(server, within=2.0), "the server waited for a forked child's copy of its sockets"
    assert time.monotonic() - t0 < 60
    try:
        os.kill(child, signal.SIGKILL)
    except ProcessLookupError:
        pass


RANK = textwrap.dedent("""
    import sys
    sys.path.insert(0, {python!r})
    import stoker
    loader = stoker.Loader("tokens", {path!r}, seq_len=50, batch=4, server="node")
    it = iter(loader)
    next(it)
    print(loader._info["pid"], flush=True)
    for line in sys.stdin:
        if line.strip() == "next":
            next(it)
            print("ok", flush=True)
        else:
            break
    loader.close()
""")


def test_the_processes_of_a_node_share_one_server_that_ends_after_the_last(data, tmp_path):
    env = dict(os.environ, STOKER_NODE_DIR=str(tmp_path / "node"))
    code = RANK.format(python=PACKAGE_PARENT, path=str(data / "tokens.bin"))
    ranks = [subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              env=env) for _ in range(2)]
    try:
        pids = [int(r.stdout.readline()) for r in ranks]
        assert pids[0] == pids[1], "two processes of the node started a server each"
        assert oct(os.stat(tmp_path / "node").st_mode & 0o777) == "0o700"
        first = ranks[0] if _started_by(ranks[0].pid, pids[0]) else ranks[1]
        other = ranks[1] if first is ranks[0] else ranks[0]
        first.stdin.write("stop\n")
        first.stdin.flush()
        assert first.wait(timeout=30) == 0
        other.stdin.write("next\n")
        other.stdin.flush()
        assert other.stdout.readline().strip() == "ok", "the server ended with the process that started it"
        other.stdin.write("stop\n")
        other.stdin.flush()
        assert other.wait(timeout=30) == 0
        assert gone(pids[0]), "the node's server outlived its last process"
        assert not os.path.exists(tmp_path / "node" / "node.sock")
    finally:
        for r in ranks:
            if r.poll() is None:
                r.kill()
                r.wait()


def _started_by(parent, pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1]) == parent
    except OSError:
        return False


def test_a_node_folder_of_others_or_open_to_others_is_refused(tmp_path, monkeypatch):
    folder = tmp_path / "open"
    folder.mkdir(mode=0o777)
    os.chmod(folder, 0o777)
    monkeypatch.setenv("STOKER_NODE_DIR", str(folder))
    with pytest.raises(stoker.StokerError, match="this user's alone"):
        _process.node_folder()
