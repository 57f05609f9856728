"""``python -m stoker ARGS`` (and the ``stoker`` command a wheel installs): Stoker's command line,
run by the runtime the package was installed with (or as ``stoker.Loader`` finds its server).

    python -m stoker bench synthetic --samples 100000
    python -m stoker inspect data/train.bin
"""

import signal
import subprocess
import sys
import threading

from ._process import JVM_NOTICE, server_command, server_env
from .errors import StokerError


def main(argv=None):
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        cmd = server_command()
    except StokerError as e:
        print(f"stoker: {e}", file=sys.stderr)
        return 2
    # the JVM announces the Vector API's module at every start: the one line of stderr the CLI's
    # contract has no room for is left out, everything else passes line by line
    p = subprocess.Popen(cmd + args, env=server_env(), stderr=subprocess.PIPE)

    def copy():
        for line in p.stderr:
            if not line.startswith(JVM_NOTICE.encode()):
                sys.stderr.buffer.write(line)
                sys.stderr.buffer.flush()

    t = threading.Thread(target=copy, daemon=True)
    t.start()
    for s in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, lambda n, f: p.send_signal(n))
    while True:
        try:
            rc = p.wait()
            break
        except KeyboardInterrupt:
            p.send_signal(signal.SIGINT)
    t.join()
    return 128 - rc if rc < 0 else rc  # killed by signal n: 128 + n, as a shell says


if __name__ == "__main__":
    sys.exit(main())
