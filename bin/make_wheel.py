#!/usr/bin/python3
"""Writes the stoker wheel: PACKAGE_DIR (python/stoker) with RUNTIME_DIR (bin/runtime.sh's) as
stoker/_runtime, and the dist-info pip needs (METADATA, WHEEL, entry_points.txt, RECORD).

Usage: make_wheel.py PACKAGE_DIR RUNTIME_DIR OUT_DIR   (prints the wheel's path)
"""
import base64
import hashlib
import os
import re
import stat
import sys
import zipfile

import manylinux  # beside this file

LIMIT = 60_000_000  # bytes: the wheel must stay small enough to carry anywhere


def version(package):
    with open(os.path.join(package, "__init__.py")) as f:
        return re.search(r'^__version__ = "([^"]+)"', f.read(), re.M).group(1)


def long_description(package):
    """The package's README (python/README.md), the body of METADATA: what `pip show -v` and an index show."""
    with open(os.path.join(os.path.dirname(package), "README.md"), encoding="utf-8") as f:
        return f.read()


def files(package, runtime):
    """(path in the wheel, file on disk), the package's Python files and the runtime."""
    for name in sorted(os.listdir(package)):
        # the options' schema, which their checks and help read (NOTE [One schema]); PEP 561's marker
        if name.endswith(".py") or name in ("_schema.json", "py.typed"):
            yield f"stoker/{name}", os.path.join(package, name)
    for top, dirs, names in os.walk(runtime):
        dirs.sort()
        for name in sorted(names):
            path = os.path.join(top, name)
            yield "stoker/_runtime/" + os.path.relpath(path, runtime), path


def main():
    package, runtime, out = sys.argv[1:4]
    v = version(package)
    try:  # the tag the runtime's own ELF files need (the highest glibc they import), not this machine's
        tag = f"py3-none-{manylinux.platform_tag(runtime)}"
    except ValueError as e:
        sys.exit(f"make_wheel: {e}")
    wheel = os.path.join(out, f"stoker-{v}-{tag}.whl")
    info = f"stoker-{v}.dist-info"
    meta = {
        f"{info}/METADATA": "\n".join([
            "Metadata-Version: 2.1", "Name: stoker", f"Version: {v}",
            "Summary: Stoker's data loader for Python training loops: batches from the JVM through shared memory, no copy",
            "Requires-Python: >=3.9", "Requires-Dist: numpy", "Provides-Extra: torch", 'Requires-Dist: torch; extra == "torch"',
            "Description-Content-Type: text/markdown", "", long_description(package)]),
        f"{info}/WHEEL": f"Wheel-Version: 1.0\nGenerator: stoker make_wheel.py\nRoot-Is-Purelib: false\nTag: {tag}\n",
        f"{info}/entry_points.txt": "[console_scripts]\nstoker = stoker.__main__:main\n",
        f"{info}/top_level.txt": "stoker\n",
    }
    lines = []
    tmp = wheel + ".partial"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:

        def add(arc, data, executable=False):
            zi = zipfile.ZipInfo(arc, date_time=(2024, 1, 1, 0, 0, 0))
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.external_attr = (stat.S_IFREG | (0o755 if executable else 0o644)) << 16  # pip keeps the x bit
            z.writestr(zi, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            lines.append(f"{arc},sha256={digest},{len(data)}")

        for arc, path in files(package, runtime):
            with open(path, "rb") as f:
                add(arc, f.read(), os.access(path, os.X_OK))
        for arc, text in meta.items():
            add(arc, text.encode())
        lines.append(f"{info}/RECORD,,")
        zi = zipfile.ZipInfo(f"{info}/RECORD", date_time=(2024, 1, 1, 0, 0, 0))
        zi.external_attr = (stat.S_IFREG | 0o644) << 16
        z.writestr(zi, "\n".join(lines) + "\n")
    size = os.path.getsize(tmp)
    if size > LIMIT:
        os.remove(tmp)
        sys.exit(f"make_wheel: the wheel would be {size:,} bytes, more than {LIMIT:,}")
    os.replace(tmp, wheel)
    print(wheel)


if __name__ == "__main__":
    main()
