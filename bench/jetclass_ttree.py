#!/usr/bin/env python3
"""Writes JetClass-shaped ROOT TTrees for the ROOT benchmark (bench/root-vs-uproot.sh) and its checks.

No ROOT installation is needed: this is a small TTree writer of its own (numpy, zlib, and Debian's
python3-lz4 + python3-xxhash for LZ4), writing what ROOT 6 writes for a tree of leaf-list branches:

  file header (small, fVersion 62206) | TFile key + TDirectory | baskets (one TKey each) |
  TTree key (TTree 20, TBranch 13, TLeafI/TLeafF 1 over TLeaf 2) | StreamerInfo key (an empty TList) |
  keys list | free-segments list

With --subdir NAME the tree's key lives in a TDirectory NAME (its key and record after the top directory's,
its own keys list before the top one; the tree's and baskets' fSeekPdir point at it). With --gap BYTES the
baskets start after a sparse hole; a file ending past 2e9 bytes (TFile::kStartBigFile) is written in ROOT's
large format: fVersion + 1000000 with 64-bit fEND/fSeekFree/fSeekInfo, keys past 2e9 as TKey 1004 and
directory records as TDirectory 1005 (64-bit seeks), TFree 1001.

Each tree is named `tree` and holds, per jet:
  n_part                     int32, the leaf count (mean ~51 particles, 5th-95th percentile 26-83, at most 128)
  part_px[n_part] ... part_pt[n_part]   17 jagged float32 branches (leaf-count arrays, with entry offsets)
  jet_pt, jet_eta, jet_energy float32;  label int32 (1 for signal files, 0 for background)

Every branch's baskets start at the same entries (clusters of --cluster entries; fAutoFlush says so).
Baskets are compressed as ROOT does: blocks of at most 2^24-1 bytes behind a 9-byte header ("ZL" + a zlib
stream for fCompress 1xx; "L4" + the XXH64 of the compressed block + an LZ4 block for 4xx), stored raw
when compression would not shrink them. Values are big-endian; a jagged basket ends with its entry
offsets (count, one offset per entry counted from the key's start, a trailing 0).

Usage:
  python3 bench/jetclass_ttree.py OUT_DIR [--codec lz4|zlib] [--signal 4] [--background 4]
                                  [--jets 10000] [--cluster 1000] [--seed 1] [--subdir NAME] [--gap BYTES]
writes OUT_DIR/{signal,background}_N.root. `--check` reads every file back with uproot (bench/uproot_env.py)
and compares every value with what was written.
"""
import argparse
import os
import struct
import sys
import time
import zlib

import numpy as np

PARTICLE_FEATURES = [
    "part_px", "part_py", "part_pz", "part_energy", "part_deta", "part_dphi",
    "part_d0val", "part_d0err", "part_dzval", "part_dzerr", "part_charge",
    "part_isChargedHadron", "part_isNeutralHadron", "part_isPhoton", "part_isElectron", "part_isMuon",
    "part_pt",
]
JET_FEATURES = ["jet_pt", "jet_eta", "jet_energy"]
MAX_PARTICLES = 128

K_BYTE_COUNT = 0x40000000
K_NEW_CLASS = 0xFFFFFFFF
K_MAP_OFFSET = 2
DATIME = ((2026 - 1995) << 26) | (1 << 22) | (1 << 17)  # 2026-01-01 00:00:00, so files are reproducible
START_BIG_FILE = 2000000000  # TFile::kStartBigFile: records past it are written with 64-bit seeks
DIRECTORY_LENGTH = 60  # TDirectoryFile::Sizeof(), either width


# ---------------------------------------------------------------- events

def jets(n, signal, rng):
    """n JetClass-like jets: a dict of name -> numpy array (jagged ones flat, with 'n_part' the counts)."""
    # particle multiplicity: mean ~50, 30..128 mostly; signal jets (e.g. top) a little busier
    mean = 56.0 if signal else 46.0
    counts = np.clip(np.round(rng.gamma(9.0, mean / 9.0, n)), 1, MAX_PARTICLES).astype(np.int32)
    total = int(counts.sum())
    jet_pt = rng.uniform(500.0, 1000.0, n).astype(np.float32)
    jet_eta = rng.uniform(-2.0, 2.0, n).astype(np.float32)
    owner = np.repeat(np.arange(n), counts)
    # momentum fractions falling with rank, as in real jets
    z = rng.exponential(1.0, total) * np.repeat(jet_pt / counts, counts) * 0.9
    deta = rng.normal(0.0, 0.12 if signal else 0.08, total)
    dphi = rng.normal(0.0, 0.12 if signal else 0.08, total)
    eta = np.repeat(jet_eta, counts) + deta
    phi = rng.uniform(-np.pi, np.pi, n)[owner] + dphi
    pt = z
    px, py, pz = pt * np.cos(phi), pt * np.sin(phi), pt * np.sinh(eta)
    energy = np.sqrt(px * px + py * py + pz * pz)
    kind = rng.choice(5, total, p=[0.55, 0.08, 0.30, 0.04, 0.03])  # ch. hadron, neu. hadron, photon, e, mu
    charged = (kind == 0) | (kind == 3) | (kind == 4)
    charge = np.where(charged, rng.choice([-1.0, 1.0], total), 0.0)
    d0 = np.where(charged, rng.normal(0.0, 0.05, total), 0.0)
    d0err = np.where(charged, rng.gamma(2.0, 0.01, total), 0.0)
    dz = np.where(charged, rng.normal(0.0, 0.1, total), 0.0)
    dzerr = np.where(charged, rng.gamma(2.0, 0.02, total), 0.0)
    out = {
        "n_part": counts,
        "part_px": px, "part_py": py, "part_pz": pz, "part_energy": energy,
        "part_deta": deta, "part_dphi": dphi,
        "part_d0val": d0, "part_d0err": d0err, "part_dzval": dz, "part_dzerr": dzerr,
        "part_charge": charge,
        "part_isChargedHadron": kind == 0, "part_isNeutralHadron": kind == 1, "part_isPhoton": kind == 2,
        "part_isElectron": kind == 3, "part_isMuon": kind == 4,
        "part_pt": pt,
        "jet_pt": jet_pt, "jet_eta": jet_eta,
        "jet_energy": (np.bincount(owner, weights=energy, minlength=n)),
        "label": np.full(n, 1 if signal else 0, np.int32),
    }
    for k in PARTICLE_FEATURES + JET_FEATURES:
        out[k] = np.asarray(out[k], np.float32)
    return out


# ---------------------------------------------------------------- compression

def compress(data, setting):
    """ROOT's blocks for fCompress `setting` (algorithm * 100 + level); the raw bytes when that would not shrink."""
    algorithm, level = divmod(setting, 100)
    if level == 0:
        return data
    out = []
    for start in range(0, len(data), 0xFFFFFF):
        block = data[start:start + 0xFFFFFF]
        if algorithm in (0, 1):
            body, tag, method = zlib.compress(block, level), b"ZL", 8
        elif algorithm == 4:
            import lz4.block
            import xxhash
            packed = lz4.block.compress(block, mode="high_compression", compression=level, store_size=False)
            body, tag, method = struct.pack(">Q", xxhash.xxh64(packed).intdigest()) + packed, b"L4", 1
        else:
            raise ValueError(f"compression setting {setting}: this writer knows zlib (1xx) and LZ4 (4xx)")
        if len(body) > 0xFFFFFF:
            return data
        out.append(tag + bytes([method]) + len(body).to_bytes(3, "little") + len(block).to_bytes(3, "little") + body)
    joined = b"".join(out)
    return joined if len(joined) < len(data) else data


# ---------------------------------------------------------------- serialization helpers

def tstring(s):
    b = s.encode()
    return (bytes([len(b)]) if len(b) < 255 else b"\xff" + struct.pack(">I", len(b))) + b


class Buf:
    """A growing buffer whose positions count from `base` (the key length), as ROOT's object references do."""

    def __init__(self, base):
        self.b = bytearray()
        self.base = base

    def put(self, data):
        self.b += data

    def pos(self):
        return self.base + len(self.b)

    def begin(self, version):
        """Starts a versioned record: a byte count (patched by end) then the version."""
        at = len(self.b)
        self.b += b"\0\0\0\0" + struct.pack(">H", version)
        return at

    def end(self, at):
        struct.pack_into(">I", self.b, at, (len(self.b) - at - 4) | K_BYTE_COUNT)

    def begin_any(self, cls):
        """Starts an object written through a pointer: byte count, new-class tag, class name. Returns (start, ref)."""
        at = len(self.b)
        ref = self.pos() + K_MAP_OFFSET
        self.b += b"\0\0\0\0" + struct.pack(">I", K_NEW_CLASS) + cls.encode() + b"\0"
        return at, ref

    def end_any(self, at):
        self.end(at)

    def tobject(self, bits=0x03000000):
        self.put(struct.pack(">HII", 1, 0, bits))

    def tnamed(self, name, title):
        at = self.begin(1)
        self.tobject()
        self.put(tstring(name) + tstring(title))
        self.end(at)

    def objarray(self, items):
        """A TObjArray of objects; each item is a callable writing one object (pointer header included)."""
        at = self.begin(3)
        self.tobject()
        self.put(tstring("") + struct.pack(">ii", len(items), 0))
        for item in items:
            item()
        self.end(at)

    def io_features(self):
        # ROOT::TIOFeatures, class version 0 (so its checksum follows), fIOBits = 0
        at = self.begin(0)
        self.put(struct.pack(">I", 0x1AA12F10) + b"\0")
        self.end(at)


def key_header(nbytes, objlen, keylen, seek, pdir, cls, name, title, cycle=1):
    """A TKey header: version 4 with 32-bit fSeekKey/fSeekPdir, or 1004 with 64-bit ones past START_BIG_FILE."""
    if seek > START_BIG_FILE:
        head = struct.pack(">ihiIhhqq", nbytes, 1004, objlen, DATIME, keylen, cycle, seek, pdir)
    else:
        head = struct.pack(">ihiIhhii", nbytes, 4, objlen, DATIME, keylen, cycle, seek, pdir)
    return head + tstring(cls) + tstring(name) + tstring(title)


def key_length(cls, name, title, extra=0, seek=0):
    """The length of the key header key_header writes at `seek` (8 bytes more past START_BIG_FILE)."""
    return 26 + len(tstring(cls)) + len(tstring(name)) + len(tstring(title)) + extra + (8 if seek > START_BIG_FILE else 0)


def directory_record(nbytes_keys, nbytes_name, seek_dir, seek_parent, seek_keys):
    """TDirectoryFile's record (60 bytes): version 5 with 32-bit seeks and 12 spare bytes, or 1005 with 64-bit seeks."""
    if max(seek_dir, seek_parent, seek_keys) > START_BIG_FILE:
        out = struct.pack(">hIIiiqqq", 1005, DATIME, DATIME, nbytes_keys, nbytes_name, seek_dir, seek_parent, seek_keys)
        out += struct.pack(">H", 1) + bytes(16)
    else:
        out = struct.pack(">hIIiiiii", 5, DATIME, DATIME, nbytes_keys, nbytes_name, seek_dir, seek_parent, seek_keys)
        out += struct.pack(">H", 1) + bytes(16) + bytes(12)
    assert len(out) == DIRECTORY_LENGTH
    return out


# ---------------------------------------------------------------- the file

class Branch:
    def __init__(self, name, dtype, counter=None):
        self.name = name
        self.dtype = np.dtype(dtype).newbyteorder(">")
        self.letter = "F" if self.dtype.kind == "f" else "I"
        self.counter = counter
        self.bytes, self.entry, self.seek = [], [], []
        self.tot = self.zip = 0
        self.maximum = 0


def write_tree(path, data, setting, cluster, tree_name="tree", subdir=None, gap=0):
    """Writes `data` (from jets()) as a TTree `tree_name` in a new file at `path`, baskets every `cluster` entries.

    subdir="NAME" puts the tree in a TDirectory NAME inside the top directory (read it as "NAME/tree_name");
    gap=BYTES leaves a hole of that many bytes before the baskets (sparse: the file is seeked over, not
    written). A file ending past TFile::kStartBigFile (2e9 bytes) is written as ROOT's large format.
    """
    n = len(data["n_part"])
    counts = data["n_part"].astype(np.int64)
    offsets = np.concatenate([[0], np.cumsum(counts)])
    fname = os.path.basename(path)
    branches = [Branch("n_part", np.int32)]
    branches += [Branch(f, np.float32, counter="n_part") for f in PARTICLE_FEATURES]
    branches += [Branch(f, np.float32) for f in JET_FEATURES] + [Branch("label", np.int32)]
    branches[0].maximum = int(counts.max()) if n else 0
    with open(path, "wb") as f:
        f.write(b"\0" * 100)
        # the TFile key and its TDirectory record, rewritten once the keys list is placed
        top_keylen = key_length("TFile", fname, "")
        named = tstring(fname) + tstring("")
        top_objlen = len(named) + DIRECTORY_LENGTH
        f.write(b"\0" * (top_keylen + top_objlen))
        # a subdirectory: its key and TDirectory record (right after the top one, as TDirectory::mkdir
        # places it), rewritten once its keys list is placed
        dir_seek = 100
        if subdir is not None:
            if not subdir or "/" in subdir:
                raise ValueError(f"subdir {subdir!r}: one directory name")
            dir_seek = f.tell()
            sub_keylen = key_length("TDirectory", subdir, subdir, seek=dir_seek)
            f.write(b"\0" * (sub_keylen + DIRECTORY_LENGTH))
        if gap:
            f.seek(f.tell() + gap)
        # baskets, cluster by cluster
        for lo in range(0, n, cluster):
            hi = min(n, lo + cluster)
            for b in branches:
                if b.counter is None:
                    values = data[b.name][lo:hi].astype(b.dtype)
                    raw = values.tobytes()
                    entry_offsets = None
                else:
                    values = data[b.name][offsets[lo]:offsets[hi]].astype(b.dtype)
                    raw = values.tobytes()
                    entry_offsets = (offsets[lo:hi] - offsets[lo]) * 4
                seek = f.tell()
                keylen = key_length("TBasket", b.name, tree_name, 18 + 1, seek=seek)
                obj = raw
                if entry_offsets is not None:
                    table = np.concatenate([[hi - lo + 1], entry_offsets + keylen, [0]]).astype(">i4")
                    obj = raw + table.tobytes()
                packed = compress(obj, setting)
                nbytes = keylen + len(packed)
                nev_buf_size = max(1000, hi - lo + 1) if entry_offsets is not None else b.dtype.itemsize
                head = key_header(nbytes, len(obj), keylen, seek, dir_seek, "TBasket", b.name, tree_name)
                head += struct.pack(">Hiiii", 3, 32000, nev_buf_size, hi - lo, keylen + len(raw)) + b"\0"
                assert len(head) == keylen
                f.write(head + packed)
                b.bytes.append(nbytes)
                b.entry.append(lo)
                b.seek.append(seek)
                b.tot += keylen + len(obj)
                b.zip += nbytes
        # the TTree
        tree_seek = f.tell()
        tree_keylen = key_length("TTree", tree_name, tree_name, seek=tree_seek)
        tree = tree_bytes(tree_keylen, tree_name, n, cluster, branches, setting)
        tree_key = key_header(tree_keylen + len(tree), len(tree), tree_keylen, tree_seek, dir_seek, "TTree", tree_name, tree_name)
        f.write(tree_key + tree)
        # streamer infos: an empty TList (readers of TTree 20 / TBranch 13 / TLeaf 2 do not need them)
        info = Buf(0)
        at = info.begin(5)
        info.tobject()
        info.put(tstring("") + struct.pack(">i", 0))
        info.end(at)
        info_seek = f.tell()
        info_keylen = key_length("TList", "StreamerInfo", "Doubly linked list", seek=info_seek)
        info_nbytes = info_keylen + len(info.b)
        f.write(key_header(info_nbytes, len(info.b), info_keylen, info_seek, 100, "TList", "StreamerInfo", "Doubly linked list") + info.b)
        top_entry = tree_key
        if subdir is not None:
            # the subdirectory's keys list (the tree), then its key in the top directory's keys list
            sub_keys_seek = f.tell()
            sub_keys_keylen = key_length("TDirectory", subdir, subdir, seek=sub_keys_seek)
            sub_keys_obj = struct.pack(">i", 1) + tree_key
            sub_keys_nbytes = sub_keys_keylen + len(sub_keys_obj)
            f.write(key_header(sub_keys_nbytes, len(sub_keys_obj), sub_keys_keylen, sub_keys_seek, dir_seek, "TDirectory",
                               subdir, subdir) + sub_keys_obj)
            top_entry = key_header(sub_keylen + DIRECTORY_LENGTH, DIRECTORY_LENGTH, sub_keylen, dir_seek, 100, "TDirectory",
                                   subdir, subdir)
        # keys list: the top directory's one key (the tree, or the subdirectory)
        keys_seek = f.tell()
        keys_keylen = key_length("TFile", fname, "", seek=keys_seek)
        keys_obj = struct.pack(">i", 1) + top_entry
        keys_nbytes = keys_keylen + len(keys_obj)
        f.write(key_header(keys_nbytes, len(keys_obj), keys_keylen, keys_seek, 100, "TFile", fname, "") + keys_obj)
        # free segments: everything after the end of the file
        free_seek = f.tell()
        free_keylen = key_length("TFile", fname, "", seek=free_seek)
        if free_seek > START_BIG_FILE:
            free_obj = struct.pack(">hqq", 1001, free_seek + free_keylen + 18, 1000000000000)
        else:
            free_obj = struct.pack(">hii", 1, free_seek + free_keylen + 10, START_BIG_FILE)
        free_nbytes = free_keylen + len(free_obj)
        f.write(key_header(free_nbytes, len(free_obj), free_keylen, free_seek, 100, "TFile", fname, "") + free_obj)
        end = f.tell()
        if subdir is not None:
            f.seek(dir_seek)
            f.write(key_header(sub_keylen + DIRECTORY_LENGTH, DIRECTORY_LENGTH, sub_keylen, dir_seek, 100, "TDirectory", subdir, subdir)
                    + directory_record(sub_keys_nbytes, sub_keylen, dir_seek, 100, sub_keys_seek))
        nbytes_name = top_keylen + len(named)
        f.seek(100)
        f.write(key_header(top_keylen + top_objlen, top_objlen, top_keylen, 100, 0, "TFile", fname, "") + named
                + directory_record(keys_nbytes, nbytes_name, 100, 0, keys_seek))
        if end > START_BIG_FILE:  # ROOT's large header: fVersion + 1000000, 64-bit fEND, fSeekFree, fSeekInfo; fUnits 8
            header = struct.pack(">4siiqqiiiBiqiH16s", b"root", 62206 + 1000000, 100, end, free_seek, free_nbytes, 1, nbytes_name, 8,
                                 setting, info_seek, info_nbytes, 1, bytes(16))
        else:
            header = struct.pack(">4siiiiiiiBiiiH16s", b"root", 62206, 100, end, free_seek, free_nbytes, 1, nbytes_name, 4,
                                 setting, info_seek, info_nbytes, 1, bytes(16))
        f.seek(0)
        f.write(header)
    return end


def tree_bytes(keylen, name, entries, cluster, branches, setting):
    t = Buf(keylen)
    at = t.begin(20)
    t.tnamed(name, name)
    for version, body in ((2, struct.pack(">hhh", 602, 1, 1)), (2, struct.pack(">hh", 0, 1001)), (2, struct.pack(">hhf", 1, 1, 1.0))):
        a = t.begin(version)  # TAttLine, TAttFill, TAttMarker
        t.put(body)
        t.end(a)
    tot = sum(b.tot for b in branches)
    zipped = sum(b.zip for b in branches)
    t.put(struct.pack(">qqqqqdiiiiIqqqqqq", entries, tot, zipped, zipped, zipped, 1.0, 0, 25, 0, 1000, 0,
                      1000000000000, 1000000000000, 0, -300000000, cluster, 1000000))
    t.put(b"\0\0")  # fClusterRangeEnd, fClusterSize: empty arrays
    t.io_features()
    leaf_refs = {}

    def branch_writer(b):
        def write():
            a, _ = t.begin_any("TBranch")
            v = t.begin(13)
            dims = f"[{b.counter}]" if b.counter else ""
            t.tnamed(b.name, f"{b.name}{dims}/{b.letter}")
            fa = t.begin(2)  # TAttFill
            t.put(struct.pack(">hh", 0, 1001))
            t.end(fa)
            nb = len(b.bytes)
            t.put(struct.pack(">iiiiq", setting, 32000, 1000 if b.counter else 0, nb, entries))
            t.io_features()
            t.put(struct.pack(">iIiqqqq", 0, nb + 1, 0, entries, 0, b.tot, b.zip))
            t.objarray([])  # sub-branches

            def leaf():
                la, ref = t.begin_any("TLeaf" + b.letter)
                leaf_refs[b.name] = ref
                lv = t.begin(1)
                tl = t.begin(2)
                t.tnamed(b.name, b.name + dims)
                t.put(struct.pack(">iii??", 1, 4, 0, b.name == "n_part", False))
                t.put(struct.pack(">I", leaf_refs[b.counter] if b.counter else 0))  # fLeafCount
                t.end(tl)
                t.put(struct.pack(">ii" if b.letter == "I" else ">ff", 0, b.maximum))
                t.end(lv)
                t.end_any(la)

            t.objarray([leaf])
            t.objarray([])  # no baskets kept in memory
            t.put(b"\x01" + np.array(b.bytes + [0], ">i4").tobytes())
            t.put(b"\x01" + np.array(b.entry + [entries], ">i8").tobytes())
            t.put(b"\x01" + np.array(b.seek + [0], ">i8").tobytes())
            t.put(tstring(""))  # fFileName
            t.end(v)
            t.end_any(a)
        return write

    t.objarray([branch_writer(b) for b in branches])
    # fLeaves: the same leaves, by reference
    la = t.begin(3)
    t.tobject()
    t.put(tstring("") + struct.pack(">ii", len(branches), 0))
    for b in branches:
        t.put(struct.pack(">I", leaf_refs[b.name]))
    t.end(la)
    t.put(bytes(28))  # fAliases, fIndexValues, fIndex, fTreeIndex, fFriends, fUserInfo, fBranchRef: all empty
    t.end(at)
    return bytes(t.b)


# ---------------------------------------------------------------- check with uproot

def check(path, data, tree="tree"):
    """Reads the tree `tree` ("dir/name" in a subdirectory) of `path` with uproot (numpy only) and compares every
    value with `data`; returns the entry count."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import uproot_env
    tree = uproot_env.open_file(path)[tree]
    got = tree.arrays(["n_part", "label"] + JET_FEATURES, library="np")
    for k in ["n_part", "label"] + JET_FEATURES:
        if not np.array_equal(got[k], data[k]):
            raise SystemExit(f"{path}: {k} differs")
    for k in PARTICLE_FEATURES:
        arr = tree[k].array(library="np")
        flat = np.concatenate(arr) if len(arr) else np.zeros(0, np.float32)
        if not (np.array_equal([len(x) for x in arr], data["n_part"]) and np.array_equal(flat, data[k])):
            raise SystemExit(f"{path}: {k} differs")
    return tree.num_entries


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--codec", choices=["lz4", "zlib"], default="lz4")
    ap.add_argument("--level", type=int, default=None, help="compression level (default: 4 for LZ4, 1 for zlib)")
    ap.add_argument("--signal", type=int, default=4)
    ap.add_argument("--background", type=int, default=4)
    ap.add_argument("--jets", type=int, default=10000, help="jets per file")
    ap.add_argument("--cluster", type=int, default=1000, help="entries per basket")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--subdir", default=None, help="write each tree in this TDirectory (read it as SUBDIR/tree)")
    ap.add_argument("--gap", type=int, default=0, help="a sparse hole of this many bytes before the baskets "
                    "(past 2e9 the file is written in ROOT's large format)")
    ap.add_argument("--check", action="store_true", help="read every file back with uproot and compare")
    a = ap.parse_args()
    level = a.level if a.level is not None else (4 if a.codec == "lz4" else 1)
    setting = (4 if a.codec == "lz4" else 1) * 100 + level
    os.makedirs(a.out, exist_ok=True)
    rng = np.random.default_rng(a.seed)
    for kind, count in (("signal", a.signal), ("background", a.background)):
        for i in range(count):
            t0 = time.time()
            data = jets(a.jets, kind == "signal", rng)
            path = os.path.join(a.out, f"{kind}_{i}.root")
            size = write_tree(path, data, setting, a.cluster, subdir=a.subdir, gap=a.gap)
            raw = sum(data[k].nbytes for k in data)
            msg = f"{path}: {a.jets} jets, {int(data['n_part'].sum())} particles, {size / 1e6:.1f} MB ({raw / 1e6:.1f} MB raw), fCompress {setting}, {time.time() - t0:.1f} s"
            if a.check:
                check(path, data, tree=f"{a.subdir}/tree" if a.subdir else "tree")
                msg += ", uproot reads it back identically"
            print(msg, flush=True)


if __name__ == "__main__":
    main()
