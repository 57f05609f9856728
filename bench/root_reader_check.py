#!/usr/bin/env python3
"""Checks that Stoker's ROOT reader and uproot read the same values from the given files.

Each file's tree is dumped by bench/RootDump.java (Stoker's reader: RootFile + RootTable) and every
branch compared, value for value and entry length for entry length, with uproot (bench/uproot_env.py).
Usage (after ./stoker --version has built the jars; STOKER_CLASSPATH overrides stoker-cli/target/lib/*):
  root_reader_check.py [--tree tree] FILE.root...
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import uproot_env  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", default="tree")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    root = os.path.dirname(here)
    java = os.path.join(os.environ.get("JAVA_HOME", "/usr"), "bin", "java")
    bad = 0
    for f in a.files:
        with tempfile.TemporaryDirectory() as out:
            subprocess.run([java, "--enable-native-access=ALL-UNNAMED", "-cp", os.environ.get("STOKER_CLASSPATH", os.path.join(root, "stoker-cli/target/lib/*")),
                            os.path.join(here, "RootDump.java"), f, a.tree, out], check=True, stdout=subprocess.DEVNULL)
            tree = uproot_env.open_file(f)[a.tree]
            for name in tree.keys():
                arr = tree[name].array(library="np")
                got = open(os.path.join(out, name + ".values"), "rb").read()
                if arr.dtype == object:
                    ref = np.concatenate(arr) if len(arr) else np.zeros(0)
                    offsets = np.frombuffer(open(os.path.join(out, name + ".offsets"), "rb").read(), "<i8")
                    same = np.array_equal(np.diff(offsets), [len(x) for x in arr])
                else:
                    ref, same = arr, True
                same = same and np.array_equal(np.frombuffer(got, ref.dtype.newbyteorder("<")), ref)
                if not same:
                    print(f"{f}: branch {name} differs between Stoker and uproot")
                    bad += 1
            print(f"{f}: {len(tree.keys())} branches, {tree.num_entries} entries: Stoker reads what uproot reads"
                  if not bad else f"{f}: differences")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
