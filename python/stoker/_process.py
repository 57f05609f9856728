"""Starting ``stoker serve``: finding the server, starting it, and telling how it died."""

import collections
import os
import shlex
import shutil
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
    """A private ``stoker serve`` process: started for one Loader, gone when it closes (and when
    this process dies, since the server watches it)."""

    def __init__(self, start_timeout=900.0):
        self.dir = tempfile.mkdtemp(prefix="stoker-")
        self.socket_path = os.path.join(self.dir, "serve.sock")
        env = server_env()
        # no hsperfdata file in /tmp that a killed JVM would leave behind
        env["STOKER_JAVA_OPTS"] = (env.get("STOKER_JAVA_OPTS", "") + " -XX:-UsePerfData").strip()
        cmd = server_command() + ["serve", "--socket", self.socket_path, "--parent", str(os.getpid()), "--owns-dir"]
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

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.cleanup()

    def close(self, timeout=10.0):
        """Waits for the server to exit (it does once its last client has gone)."""
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.cleanup()

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)
