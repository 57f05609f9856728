#!/usr/bin/python3
"""GraphNeT-shaped SQLite events: Stoker's sqlite source against GraphNeT's own way of reading them
(a torch Dataset whose __getitem__ runs one `SELECT ... WHERE event_no = ?` on the pulse table and
one on the truth table, as graphnet.data.dataset.SQLiteDataset does, in a DataLoader of 2 workers).
Both sides deliver the same padded batches: pulses as float32 [B, N, F] (N = --pad, zeros after
each event's end, longer events cut) with the lengths, truth as float32 [B, T], events shuffled.
GraphNeT's side pads with this script's numpy function (pad(), one vectorized scatter a batch);
Stoker's loader pads in the JVM (stack= the five features, pad= N, lengths=True).

  make:  sqlite_graphnet.py make FILE [--events 40000]   (~30 pulses an event: ~1.2M pulse rows;
                                                          5 features, 4 truth columns, as GraphNeT
                                                          writes them: FLOAT columns, an index on
                                                          event_no, truth keyed by event_no)
  run:   sqlite_graphnet.py run FILE [--batch 256] [--workers 2] [--pad 64] [--seconds 10] [--repeats 1]
Prints one JSON line per side: events/s (median over repeats) over --seconds after the first
batch, epoch after epoch (40,000 events are an epoch of a few seconds: the steady state is
measured, not the JVM's warm-up), and the time to the first batch (Stoker's includes the server's
start and, the first time a database is read, building its event index).
"""
import argparse
import json
import os
import sqlite3
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

FEATURES = ["dom_x", "dom_y", "dom_z", "dom_time", "charge"]
TRUTH = ["energy", "zenith", "azimuth", "pid"]


def make(path, events):
    if os.path.exists(path):
        os.remove(path)
    rng = np.random.default_rng(0)
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE pulses (dom_x FLOAT, dom_y FLOAT, dom_z FLOAT, dom_time FLOAT, charge FLOAT, "
                "event_no INTEGER NOT NULL)")
    con.execute("CREATE TABLE truth (energy FLOAT, zenith FLOAT, azimuth FLOAT, pid FLOAT, "
                "event_no INTEGER PRIMARY KEY NOT NULL)")
    counts = np.clip(rng.poisson(30, events), 1, None)
    for start in range(0, events, 5000):
        rows = []
        for e in range(start, min(events, start + 5000)):
            v = rng.standard_normal((counts[e], 5))
            rows += [(*map(float, r), e) for r in v]
        con.executemany("INSERT INTO pulses VALUES (?, ?, ?, ?, ?, ?)", rows)
    t = rng.random((events, 4))
    con.executemany("INSERT INTO truth VALUES (?, ?, ?, ?, ?)", [(*map(float, r), e) for e, r in enumerate(t)])
    con.execute("CREATE INDEX event_no_pulses ON pulses (event_no)")
    con.commit()
    con.close()
    print(json.dumps({"file": path, "events": events, "pulses": int(counts.sum()), "bytes": os.path.getsize(path)}))


PAD = 64


def pad(values, offsets, n):
    """[total, F] values and B+1 row offsets -> float32 [B, n, F] zero-padded (longer events cut), and
    int64 lengths [B] (at most n)."""
    counts = np.diff(offsets)
    out = np.zeros((len(counts), n, values.shape[1]), np.float32)
    rows = np.repeat(np.arange(len(counts)), counts)
    pos = np.arange(len(values)) - np.repeat(offsets[:-1], counts)
    keep = pos < n
    out[rows[keep], pos[keep]] = values[keep]
    return out, np.minimum(counts, n)


class GraphnetStyle:
    """GraphNeT's SQLiteDataset, reduced to what it reads: a query per table per event."""

    def __init__(self, path):
        self.path = path
        self.conn = None
        with sqlite3.connect(path) as c:
            self.events = [e for (e,) in c.execute("SELECT event_no FROM truth")]

    def __len__(self):
        return len(self.events)

    def __getitem__(self, i):
        if self.conn is None:
            self.conn = sqlite3.connect(self.path)  # one connection a worker, opened in the worker
        e = self.events[i]
        pulses = self.conn.execute(f"SELECT {', '.join(FEATURES)} FROM pulses WHERE event_no = {e}").fetchall()
        truth = self.conn.execute(f"SELECT {', '.join(TRUTH)} FROM truth WHERE event_no = {e}").fetchall()
        return np.asarray(pulses, np.float32).reshape(-1, len(FEATURES)), np.asarray(truth[0], np.float32)


def collate(items):
    lengths = np.array([len(p) for p, _ in items])
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    x, n = pad(np.concatenate([p for p, _ in items]), offsets, PAD)
    return x, n, np.stack([t for _, t in items])


def consume(epochs, seconds, t0=None):
    """Events/s after the first batch over `seconds`, epoch after epoch (each call of epochs() is an
    epoch's batches): the steady state, JIT warm-up and worker start-up past; and the seconds to the
    first batch from t0 (default: from the first epoch's start)."""
    t0 = time.perf_counter() if t0 is None else t0
    it = iter(epochs())
    next(it)
    t1 = time.perf_counter()
    events = 0
    while time.perf_counter() - t1 < seconds:
        for b in it:
            events += len(b[1])
            if time.perf_counter() - t1 >= seconds:
                break
        it = iter(epochs())
    return events / (time.perf_counter() - t1), t1 - t0, None


def peer(path, batch, workers, seconds):
    import torch
    from torch.utils.data import DataLoader
    torch.set_num_threads(1)
    loader = DataLoader(GraphnetStyle(path), batch_size=batch, shuffle=True, num_workers=workers, collate_fn=collate,
                        persistent_workers=workers > 0)  # its workers kept from epoch to epoch, as Stoker's are
    rate, first, _ = consume(lambda: loader, seconds)
    return rate, first


def stoker_side(path, batch, workers, seconds):
    import stoker
    source = stoker.sources.sqlite(path, pulses="pulses", truth="truth", features=FEATURES, truth_features=TRUTH,
                                   dtype="float32")

    def padded(loader):
        for b in loader:
            yield b["pulses"], b["pulses_len"], np.stack([b[t] for t in TRUTH], axis=1)

    t0 = time.perf_counter()  # the server's start and the event index count towards the first batch
    with stoker.Loader(source, batch_size=batch, shuffle=True, num_workers=workers, as_numpy=True,
                       stack={"pulses": FEATURES}, pad={"pulses": PAD}, lengths=True) as loader:
        rate, first, _ = consume(lambda: padded(loader), seconds, t0)
        return rate, first


def main():
    global PAD
    a = argparse.ArgumentParser()
    a.add_argument("what", choices=("make", "run"))
    a.add_argument("file")
    a.add_argument("--events", type=int, default=40000)
    a.add_argument("--batch", type=int, default=256)
    a.add_argument("--workers", type=int, default=2)
    a.add_argument("--pad", type=int, default=PAD, help="pulses an event is padded (or cut) to")
    a.add_argument("--seconds", type=float, default=10)
    a.add_argument("--repeats", type=int, default=1)
    a.add_argument("--sides", default="graphnet,stoker")
    o = a.parse_args()
    if o.what == "make":
        make(o.file, o.events)
        return
    PAD = o.pad
    for side in o.sides.split(","):
        run = peer if side == "graphnet" else stoker_side
        rates, firsts = [], []
        for _ in range(o.repeats):
            r, f = run(o.file, o.batch, o.workers, o.seconds)
            rates.append(r)
            firsts.append(f)
        print(json.dumps({"side": side, "workers": o.workers, "batch": o.batch, "pad": PAD,
                          "events_per_s": round(statistics.median(rates)),
                          "first_batch_s": round(firsts[0], 3), "repeats": o.repeats}), flush=True)


if __name__ == "__main__":
    main()
