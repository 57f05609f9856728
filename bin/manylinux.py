"""The manylinux platform tag a set of ELF files really needs, read from the files themselves (as
auditwheel does): the highest glibc symbol version any of them imports, the machine they are built
for, and the libraries they link that are neither bundled beside them nor on the manylinux policy's
list of libraries every system has (PEP 600).

    python3 bin/manylinux.py DIR      prints the tag, or one line saying why there is none (exit 1)
"""
import os
import struct
import sys

# PEP 600 / auditwheel's policy: the libraries a manylinux wheel may take from the system
SYSTEM_LIBRARIES = frozenset("""
    libgcc_s.so.1 libstdc++.so.6 libm.so.6 libdl.so.2 librt.so.1 libc.so.6 libnsl.so.1 libutil.so.1
    libpthread.so.0 libresolv.so.2 libX11.so.6 libXext.so.6 libXrender.so.1 libICE.so.6 libSM.so.6
    libGL.so.1 libgobject-2.0.so.0 libgthread-2.0.so.0 libglib-2.0.so.0
    ld-linux-x86-64.so.2 ld-linux-aarch64.so.1""".split())
MACHINES = {62: "x86_64", 183: "aarch64"}
OLDEST_GLIBC = (2, 17)  # the oldest manylinux tag pip knows for these machines (manylinux2014)
# the C++ runtime's symbol versions manylinux_2_17 allows: a bundled library needing more than
# these would need a newer libstdc++ than the oldest systems the tag promises have
CXX_LIMITS = {"GLIBCXX": (3, 4, 19), "CXXABI": (1, 3, 7), "GCC": (4, 8, 0)}

SHT_DYNAMIC, SHT_GNU_VERNEED = 6, 0x6FFFFFFE
DT_NEEDED = 1


class NotElf(Exception):
    pass


class Elf:
    """What a 64-bit little-endian ELF file needs from the system: its machine, the libraries it
    links (DT_NEEDED) and the symbol versions it imports, by library (.gnu.version_r)."""

    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            data = f.read()
        if data[:4] != b"\x7fELF":
            raise NotElf(path)
        if data[4] != 2 or data[5] != 1:
            raise ValueError(f"{path}: not a 64-bit little-endian ELF file (class {data[4]}, data {data[5]})")
        try:
            self._read(data)
        except (struct.error, IndexError, ValueError, UnicodeDecodeError) as e:
            raise ValueError(f"{path}: a malformed ELF file ({e})") from None

    def _read(self, data):
        path = self.path
        machine, = struct.unpack_from("<H", data, 18)
        self.machine = MACHINES.get(machine, f"e_machine {machine}")
        shoff, = struct.unpack_from("<Q", data, 40)
        shentsize, shnum = struct.unpack_from("<HH", data, 58)
        if shoff + shentsize * shnum > len(data):
            raise ValueError(f"{path}: section headers at byte {shoff} run past the file's {len(data)} bytes")
        sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]

        def string(section, offset):
            start = sections[section][4] + offset
            return data[start:data.index(b"\0", start)].decode()

        self.needed = []
        self.versions = {}  # library -> set of version names, e.g. "libc.so.6" -> {"GLIBC_2.14", ...}
        for _, kind, _, _, off, size, link, info, _, entsize in sections:
            if kind == SHT_DYNAMIC:
                for at in range(off, off + size, entsize):
                    tag, value = struct.unpack_from("<qQ", data, at)
                    if tag == DT_NEEDED:
                        self.needed.append(string(link, value))
            elif kind == SHT_GNU_VERNEED:
                at = off
                for _ in range(info):  # sh_info: the number of Verneed entries
                    _, count, file, aux, next_need = struct.unpack_from("<HHIII", data, at)
                    names = self.versions.setdefault(string(link, file), set())
                    a = at + aux
                    for _ in range(count):
                        _, _, _, name, next_aux = struct.unpack_from("<IHHII", data, a)
                        names.add(string(link, name))
                        a += next_aux
                    at += next_need

    def glibc(self):
        """The highest GLIBC_x.y version this file imports, as a tuple, or None."""
        found = [version(n, "GLIBC") for names in self.versions.values() for n in names]
        found = [v for v in found if v]
        return max(found) if found else None


def version(name, prefix):
    """(2, 14) for version("GLIBC_2.14", "GLIBC"); None for another prefix or a private name."""
    head, _, tail = name.partition("_")
    if head != prefix:
        return None
    try:
        return tuple(int(p) for p in tail.split("."))
    except ValueError:
        return None


def elf_files(root):
    for top, dirs, names in os.walk(root):
        dirs.sort()
        for name in sorted(names):
            path = os.path.join(top, name)
            if os.path.isfile(path) and not os.path.islink(path):
                try:
                    yield Elf(path)
                except NotElf:
                    pass


def platform_tag(root):
    """manylinux_X_Y_ARCH for the ELF files under root; ValueError naming the file that breaks it."""
    elves = list(elf_files(root))
    if not elves:
        raise ValueError(f"{root}: no ELF files: a platform wheel needs none of this")
    bundled = {os.path.basename(e.path) for e in elves}
    machines = {e.machine for e in elves}
    if len(machines) != 1:
        raise ValueError(f"{root}: ELF files for several machines: " +
                         ", ".join(f"{m} ({next(e.path for e in elves if e.machine == m)})" for m in sorted(machines)))
    machine = machines.pop()
    if machine not in MACHINES.values():
        raise ValueError(f"{elves[0].path}: built for {machine}, not x86_64 or aarch64")
    glibc = OLDEST_GLIBC
    for e in elves:
        for lib in e.needed:
            if lib not in bundled and lib not in SYSTEM_LIBRARIES:
                raise ValueError(f"{e.path}: links {lib}, which is neither bundled nor on the manylinux policy's list")
        for names in e.versions.values():
            for name in names:
                for prefix, limit in CXX_LIMITS.items():
                    v = version(name, prefix)
                    if v and v > limit:
                        raise ValueError(f"{e.path}: needs {name}, newer than manylinux's "
                                         f"{prefix}_{'.'.join(map(str, limit))}")
        needs = e.glibc()
        if needs and needs > glibc:
            glibc = needs
    return f"manylinux_{glibc[0]}_{glibc[1]}_{machine}"


def main():
    try:
        print(platform_tag(sys.argv[1]))
    except (ValueError, OSError) as e:
        sys.exit(f"manylinux: {e}")


if __name__ == "__main__":
    main()
