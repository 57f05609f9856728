"""SQLite event tables in GraphNeT's layout, read through the bridge: what SQLite itself reads."""
import os
import sqlite3

import numpy as np
import pytest

import stoker

FEATURES = ["dom_x", "dom_y", "charge", "string"]


@pytest.fixture(scope="module")
def database(tmp_path_factory):
    """Events 3, 10, 17, ... with 0 to 12 pulses each (some none), stored by event; a truth row each."""
    path = str(tmp_path_factory.mktemp("sqlite") / "events.db")
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE pulses (dom_x FLOAT, dom_y FLOAT, charge FLOAT, string INTEGER, event_no INTEGER NOT NULL)")
    con.execute("CREATE TABLE truth (energy FLOAT, pid INTEGER, event_no INTEGER PRIMARY KEY NOT NULL)")
    rng = np.random.default_rng(5)
    for i in range(300):
        e = 7 * i + 3
        n = 0 if i % 11 == 4 else int(rng.integers(1, 13))
        con.executemany("INSERT INTO pulses VALUES (?, ?, ?, ?, ?)",
                        [(float(rng.normal()), float(rng.normal()), None if rng.random() < 0.05 else float(rng.random()),
                          int(rng.integers(1, 87)), e) for _ in range(n)])
        con.execute("INSERT INTO truth VALUES (?, ?, ?)", (float(rng.uniform(1, 100)), int(rng.integers(0, 3)), e))
    con.execute("CREATE INDEX event_no_pulses ON pulses (event_no)")
    con.commit()
    con.close()
    return path


def _events(path):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    out = []
    for (e,) in con.execute("SELECT event_no FROM truth ORDER BY event_no"):
        rows = con.execute(f"SELECT {', '.join(FEATURES)} FROM pulses WHERE event_no = ? ORDER BY rowid", (e,)).fetchall()
        energy, pid = con.execute("SELECT energy, pid FROM truth WHERE event_no = ?", (e,)).fetchone()
        out.append((e, rows, energy, pid))
    con.close()
    return out


def _read(loader):
    got = []
    for batch in loader:
        offsets, _ = batch["charge"]
        for r in range(len(offsets) - 1):
            rows = []
            for j in range(int(offsets[r]), int(offsets[r + 1])):
                values = (batch[f][1][j].item() for f in FEATURES)
                rows.append(tuple(None if v != v else v for v in values))  # NULL reads as NaN
            got.append((int(batch["event_no"][r]), rows, float(batch["energy"][r]), int(batch["pid"][r])))
    return got


def _same(got, want):
    assert len(got) == len(want)
    for (e, rows, energy, pid), (we, wrows, wenergy, wpid) in zip(got, want):
        assert (e, energy, pid) == (we, wenergy, wpid)
        assert len(rows) == len(wrows), e
        for a, b in zip(rows, wrows):
            assert a == b, e


def test_events_read_as_sqlite_reads_them(database):
    source = stoker.sources.sqlite(database, pulses="pulses", truth="truth", features=FEATURES,
                                   truth_features=["event_no", "energy", "pid"])
    with stoker.Loader(source, batch_size=16, shuffle=False, as_numpy=True) as loader:
        got = _read(loader)
    _same(got, _events(database))
    assert any(len(rows) == 0 for _, rows, _, _ in got), "an event without pulses has length 0"


def test_the_same_events_once_each_for_any_worker_count_and_in_memory(database):
    source = stoker.sources.sqlite(database, pulses="pulses", truth="truth", features=FEATURES,
                                   truth_features=["event_no", "energy", "pid"])
    runs = []
    for workers, in_memory in ((1, False), (3, False), (2, True)):
        with stoker.Loader(source, batch_size=8, shuffle=True, seed=3, num_workers=workers, in_memory=in_memory,
                           as_numpy=True) as loader:
            runs.append(_read(loader))
    assert runs[0] == runs[1] == runs[2]
    assert sorted(e for e, _, _, _ in runs[0]) == [e for e, _, _, _ in _events(database)]


def test_float32_for_every_field(database):
    source = stoker.sources.sqlite(database, pulses="pulses", truth="truth", features=["charge"],
                                   truth_features=["energy"], dtype="float32")
    with stoker.Loader(source, batch_size=8, shuffle=False, as_numpy=True) as loader:
        batch = next(iter(loader))
        assert batch["charge"][1].dtype == np.float32 and batch["energy"].dtype == np.float32


def test_a_missing_table_is_named(database):
    with pytest.raises(ValueError, match=r"no table 'pulse' \(it has pulses, truth\)"):
        with stoker.Loader(stoker.sources.sqlite(database, pulses="pulse", truth="truth"), batch_size=4) as loader:
            next(iter(loader))


def test_pulses_is_required():
    with pytest.raises(ValueError, match="pulses=TABLE"):
        stoker.sources.sqlite("events.db")


def test_the_database_is_not_written_to(database):
    before = os.stat(database)
    with stoker.Loader(stoker.sources.sqlite(database, pulses="pulses", truth="truth"), batch_size=32) as loader:
        for _ in loader:
            pass
    after = os.stat(database)
    assert (before.st_mtime_ns, before.st_size) == (after.st_mtime_ns, after.st_size)
    folder = os.listdir(os.path.dirname(database))
    assert not [f for f in folder if f.endswith(("-journal", "-wal", "-shm"))], folder
