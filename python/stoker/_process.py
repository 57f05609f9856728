"""Starting ``stoker serve``: finding the server, starting it, and telling how it died."""

import collections
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

from .errors import LoaderDied, StokerError

_HERE = os.path.dirname(os.path.abspath(__file__))


# what the JVM prints at every start when the Vector API's incubator module is added
JVM_NOTICE = "WARNING: Using incubator modules:"
# what the launcher of a checkout says while it builds before the server starts: passed on to the user
_STARTING = ("stoker: building", "stoker: built in", "stoker: waiting for another", "stoker: preparing")


# the runtime a wheel carries (bin/runtime.sh): a jlinked JDK, the jars, the native libraries
RUNTIME = os.path.join(_HERE, "_runtime")


def _java(java, jar):
    opts = shlex.split(os.environ.get("STOKER_JAVA_OPTS", ""))  # as the launcher takes them
    gc = [] if any("GC" in o for o in opts) else ["-XX:+UseSerialGC"]
    return [java, "--enable-native-access=ALL-UNNAMED", "--add-modules=jdk.incubator.vector", "-Djava.awt.headless=true",
            *gc, *opts, "-jar", jar]


def server_env(env=None):
    """The environment the server starts with: with the wheel's runtime, its native libraries
    (libjpeg-turbo, ISA-L) on LD_LIBRARY_PATH."""
    env = dict(os.environ if env is None else env)
    native = os.path.join(RUNTIME, "native")
    if not os.environ.get("STOKER_JAR") and os.path.isdir(native):
        env["LD_LIBRARY_PATH"] = native + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    return env


def server_command():
    """How to start the server (or the CLI): $STOKER_JAR (with $STOKER_JAVA), the runtime this
    package was installed with (a wheel), $STOKER_LAUNCHER, the ``stoker`` launcher of the source
    tree this package lives in, or ``stoker`` on the PATH."""
    jar = os.environ.get("STOKER_JAR")
    if jar:
        java = os.environ.get("STOKER_JAVA") or shutil.which("java")
        if not java:
            raise StokerError("STOKER_JAR is set but no java was found (set STOKER_JAVA)")
        return _java(java, jar)
    bundled = os.path.join(RUNTIME, "stoker-cli.jar")
    if os.path.isfile(bundled):
        return _java(os.environ.get("STOKER_JAVA") or os.path.join(RUNTIME, "jdk", "bin", "java"), bundled)
    looked = []
    for candidate in (os.environ.get("STOKER_LAUNCHER"),
                      os.path.join(os.path.dirname(os.path.dirname(_HERE)), "stoker"),
                      shutil.which("stoker")):
        if candidate:
            looked.append(candidate)
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return [candidate]
    raise StokerError("cannot find the stoker server: set STOKER_LAUNCHER to the stoker launcher, or STOKER_JAR "
                      "(and STOKER_JAVA) to stoker-cli.jar; looked at " + ", ".join(looked or ["nothing"]))


class Server:
    """A ``stoker serve`` process of this Python process: started for one Loader (``server="own"``)
    or shared by all of this process's loaders (``shared()``), gone when its last loader closes
    (and when this process dies, since the server watches it).

    A shared server holds one connection of its own, the keeper, that sends nothing: the server
    exits when its last client has gone, so the keeper keeps it serving while loaders come and go,
    and ``close()`` shuts the keeper's socket down (a shutdown reaches the server even when a forked
    child holds a copy of the descriptor), after which the server exits once its last loader's
    session has ended."""

    def __init__(self, start_timeout=900.0, keep=False, node_folder=None):
        self.node = node_folder is not None
        self.dir = node_folder if self.node else tempfile.mkdtemp(prefix="stoker-")
        self.socket_path = os.path.join(self.dir, "node.sock" if self.node else "serve.sock")
        env = server_env()
        # no hsperfdata file in /tmp that a killed JVM would leave behind
        env["STOKER_JAVA_OPTS"] = (env.get("STOKER_JAVA_OPTS", "") + " -XX:-UsePerfData").strip()
        # a node's server serves the node's processes while any holds its keeper, not only this one
        cmd = server_command() + ["serve", "--socket", self.socket_path] + (
            [] if self.node else ["--parent", str(os.getpid()), "--owns-dir"])
        self.stderr = collections.deque(maxlen=40)
        try:
            self.process = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                            stderr=subprocess.PIPE, env=env)
        except OSError as e:
            shutil.rmtree(self.dir, ignore_errors=True)
            raise StokerError(f"cannot start the stoker server ({cmd[0]}): {e}") from e
        self._ready = threading.Event()
        self._stderr_done = threading.Event()
        threading.Thread(target=self._drain_stdout, daemon=True, name="stoker-server-stdout").start()
        threading.Thread(target=self._drain_stderr, daemon=True, name="stoker-server-stderr").start()
        deadline = time.monotonic() + start_timeout
        while not self._ready.wait(0.05):
            if self.process.poll() is not None:
                self.process.wait()
                self._stderr_done.wait(2)
                self.cleanup()
                raise self.died("did not start")
            if time.monotonic() > deadline:
                self.kill()
                raise StokerError(f"the stoker server did not start within {start_timeout:.0f} s")
        self.owner = os.getpid()
        self.users = 0  # loaders of this process that use it (a shared server's)
        self.keeper = None
        if keep:
            try:
                self.keeper = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.keeper.connect(self.socket_path)
            except OSError as e:
                self.kill()
                raise StokerError(f"cannot connect to the stoker server at {self.socket_path}: {e}") from e

    def _drain_stdout(self):
        for line in self.process.stdout:
            if line.startswith(b"stoker serve: listening on"):
                self._ready.set()

    def _drain_stderr(self):
        for line in self.process.stderr:
            text = line.decode("utf-8", "replace").rstrip()
            if not text.startswith(JVM_NOTICE):  # the JVM's, on every start: not the server's to report
                self.stderr.append(text)
                if not self._ready.is_set() and text.startswith(_STARTING):
                    print(text, file=sys.stderr, flush=True)  # a first use from a checkout builds: say so
        self._stderr_done.set()

    def died(self, what="died"):
        code = self.process.poll()
        if code is None:
            try:
                code = self.process.wait(1.0)
            except subprocess.TimeoutExpired:
                code = None
        self._stderr_done.wait(1.0)
        status = "is still running" if code is None else (
            f"was killed by signal {-code}" if code < 0 else f"exited with status {code}")
        tail = "\n".join(self.stderr) or "(nothing on stderr)"
        return LoaderDied(f"the stoker server (pid {self.process.pid}) {what}: it {status}; its last lines:\n{tail}",
                          code)

    def alive(self):
        return self.process.poll() is None

    def _let_go(self):
        """The keeper's socket shut down: the server exits once its last loader's session has ended."""
        if self.keeper is not None:
            try:
                self.keeper.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self.keeper.close()
            self.keeper = None

    def kill(self):
        self._let_go()
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.cleanup()

    def close(self, timeout=10.0):
        """Waits for the server to exit (it does once its last client has gone)."""
        self._let_go()
        if self.node:
            return  # other processes of the node may still use it: it exits after the last of them
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.cleanup()

    def cleanup(self):
        if not self.node:
            shutil.rmtree(self.dir, ignore_errors=True)


class Attached:
    """A node's server that another process started (``server="node"``): this process holds a
    keeper on it, as its starter does; the server exits when the last keeper and client are gone."""

    def __init__(self, folder, keeper):
        self.dir = folder
        self.socket_path = os.path.join(folder, "node.sock")
        self.keeper = keeper
        self.owner = os.getpid()
        self.users = 0
        self.node = True

    def alive(self):
        import select
        try:
            readable, _, _ = select.select([self.keeper], [], [], 0)
        except (OSError, ValueError):
            return False
        return not readable  # the keeper sends nothing: readable means the server closed it

    def died(self, what="died"):
        return LoaderDied(f"the node's stoker server at {self.socket_path} {what} (another process started it; its "
                          "stderr is that process's)", None)

    def kill(self):
        self.close()

    def close(self, timeout=0):
        if self.keeper is not None:
            try:
                self.keeper.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self.keeper.close()
            self.keeper = None


# NOTE [One server a process]: the loaders of one Python process (train and validation, several
# datasets) share one ``stoker serve``, started by the first and ended when the last closes, so
# that a second loader's first batch needs no JVM start, and the JVM's own memory (classes, code,
# heap) is paid once. Each loader has its own session, ring and socket on it, as the ranks of a
# node have on a node's server: closing one leaves the others running. A forked child (a
# DataLoader worker, ``os.fork``) never uses or ends its parent's server: the owner's pid is
# checked, and a loader made in the child starts the child's own.
#
# NOTE [One server a node]: ``server="node"`` shares one server among the processes of a node (the
# ranks of a job, each with its loaders) the same way: its socket is ``node.sock`` in a folder of
# this user's alone (``$STOKER_NODE_DIR``, else ``stoker-UID`` in the temporary folder), and a lock
# file there (``flock``) makes one process, the owner, start it while the others wait and attach.
# Every process holds a keeper on it; the server is started without ``--parent``, so it serves
# until the last process's keeper and clients are gone (a process that dies closes them), however
# the processes end, in whatever order.
_LOCK = threading.RLock()
_SHARED = {}  # "process" or "node" -> the server


def shared(kind="process"):
    """This process's shared server (``kind`` "process" or "node"), started or attached when there
    is none (or the last one died), with one more user: give it back with ``release``."""
    with _LOCK:
        s = _SHARED.get(kind)
        if s is not None and s.owner == os.getpid():
            s.users += 1  # held before anything that may run a finalizer that releases it
            if s.alive():
                return s
            release(s)  # dead: its loaders raise LoaderDied; a new loader gets a new server
        _SHARED.pop(kind, None)
        s = Server(keep=True) if kind == "process" else _node_server()
        s.kind = kind
        s.users = 1
        _SHARED[kind] = s
        return s


def node_folder():
    """The folder of the node's server: this user's alone, made if missing, refused if it is not."""
    folder = os.environ.get("STOKER_NODE_DIR") or os.path.join(tempfile.gettempdir(), f"stoker-{os.getuid()}")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        st = os.lstat(folder)
    except OSError as e:
        raise StokerError(f"cannot make the node server's folder {folder}: {e}") from e
    import stat
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise StokerError(f"{folder}: the node server's folder must be a folder of this user's alone (mode 700), "
                          f"not owned by uid {st.st_uid} with mode {oct(st.st_mode & 0o777)}; set STOKER_NODE_DIR "
                          "to another")
    return folder


def _node_server():
    import fcntl
    folder = node_folder()
    with open(os.path.join(folder, "node.lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one process starts it; the others wait here, then attach
        keeper = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            keeper.connect(os.path.join(folder, "node.sock"))
            return Attached(folder, keeper)
        except OSError:
            keeper.close()  # none listens (or a dead one's socket, which the new server replaces)
        return Server(keep=True, node_folder=folder)


def release(server):
    """One user of a shared server fewer; after the last, the server is let go (and a process's
    own waited for)."""
    with _LOCK:
        if server.owner != os.getpid():
            return  # a forked copy: the parent's
        server.users -= 1
        if server.users > 0:
            return
        kind = getattr(server, "kind", "process")
        if _SHARED.get(kind) is server:
            del _SHARED[kind]
    server.close()
