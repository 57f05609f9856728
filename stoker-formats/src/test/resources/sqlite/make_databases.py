"""Writes the SQLite databases SqliteEventsTest reads, with Python's sqlite3, and what SQLite itself
reads back from them (expected.json): python3 make_databases.py OUT_DIR."""
import json
import os
import random
import sqlite3
import sys

out = sys.argv[1]
rng = random.Random(55)

PULSES = ("CREATE TABLE pulses (dom_x FLOAT, raw BLOB, dom_y REAL, charge FLOAT, string INTEGER, "
          "note TEXT, event_no INTEGER NOT NULL)")
TRUTH = "CREATE TABLE truth (energy FLOAT, pid INTEGER, event_no INTEGER PRIMARY KEY NOT NULL)"


def events(n):
    """(event_no, rows) for n events: sparse event numbers, 0 to 40 rows, some with none."""
    out = []
    for i in range(n):
        k = 0 if i % 17 == 5 else rng.randint(1, 40)
        rows = []
        for j in range(k):
            dom_x = float(rng.randint(-500, 500)) if j % 3 == 0 else rng.uniform(-500, 500)  # integral reals are stored as integers
            raw = os.urandom(3000) if rng.random() < 0.01 else (b"" if j % 2 else None)  # some rows spill to overflow pages
            charge = None if rng.random() < 0.02 else rng.lognormvariate(0, 1)
            rows.append((dom_x, raw, rng.gauss(0, 100), charge, rng.randint(1, 86), "x" * rng.randint(0, 20)))
        out.append((7 * i + 3, rows))
    return out


def write(name, page_size, shuffled=False, without_rowid=False):
    path = os.path.join(out, name)
    con = sqlite3.connect(path)
    con.execute("PRAGMA page_size = %d" % page_size)
    if without_rowid:
        con.execute("CREATE TABLE pulses (k INTEGER, charge FLOAT, event_no INTEGER NOT NULL, PRIMARY KEY (event_no, k)) WITHOUT ROWID")
        con.execute(TRUTH)
        con.executemany("INSERT INTO pulses VALUES (?, ?, ?)", [(k, 0.5 * k, e) for e in range(10) for k in range(3)])
        con.executemany("INSERT INTO truth VALUES (?, ?, ?)", [(1.0, 1, e) for e in range(10)])
        con.commit()
        con.close()
        return
    con.execute(PULSES)
    con.execute(TRUTH)
    evs = events(1200)
    rows = [r + (e,) for e, rs in evs for r in rs]
    rows.append((1.0, None, 2.0, 3.0, 4, "", 999999))  # an event the truth table does not have
    if shuffled:
        rng.shuffle(rows)
    con.executemany("INSERT INTO pulses VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    truth = [(rng.uniform(1, 1000), rng.choice([12, -12, 14, 16]), e) for e, _ in evs]
    rng.shuffle(truth)  # inserted out of order: read in event_no order all the same
    con.executemany("INSERT INTO truth VALUES (?, ?, ?)", truth)
    con.execute("CREATE INDEX event_no_pulses ON pulses (event_no)")
    con.commit()
    expected = []
    for (e,) in con.execute("SELECT event_no FROM truth ORDER BY event_no"):
        ps = con.execute("SELECT dom_x, dom_y, charge, string FROM pulses WHERE event_no = ? ORDER BY rowid", (e,)).fetchall()
        energy, pid = con.execute("SELECT energy, pid FROM truth WHERE event_no = ?", (e,)).fetchone()
        expected.append({"event_no": e, "dom_x": [p[0] for p in ps], "dom_y": [p[1] for p in ps],
                         "charge": [p[2] for p in ps], "string": [p[3] for p in ps], "energy": energy, "pid": pid})
    con.close()
    return expected


def blob(name):
    path = os.path.join(out, name)
    con = sqlite3.connect(path)
    con.execute("PRAGMA page_size = 512")
    con.execute("CREATE TABLE t (b BLOB, event_no INTEGER)")
    con.execute("INSERT INTO t VALUES (?, 1)", (bytes(range(256)) * 20,))
    con.commit()
    con.close()


expected = {"graphnet.db": write("graphnet.db", 1024), "unordered.db": write("unordered.db", 4096, shuffled=True)}
write("without_rowid.db", 4096, without_rowid=True)
blob("blob.db")
with open(os.path.join(out, "expected.json"), "w") as f:
    json.dump(expected, f)
