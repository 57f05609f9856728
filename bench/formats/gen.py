#!/usr/bin/python3
"""Data for bench/formats.sh: the same rows (id int64, vec float32[64], label int32) as an MDS
dataset, a LitData dataset (label as LitData's int, an int64) and a TFRecord file of tf.train.Examples, written by this script with numpy alone (the
layouts the readers' interop tests check against files the real writers made).

Usage: gen.py OUT_DIR [ROWS]
"""
import json
import os
import struct
import sys

import numpy as np

DIM = 64


def rows(n):
    rng = np.random.default_rng(0)
    vec = rng.standard_normal((n, DIM), dtype=np.float32)
    return np.arange(n, dtype=np.int64), vec, (np.arange(n) % 1000).astype(np.int32)


def mds(out, ids, vec, labels, per_shard=50_000):
    os.makedirs(out, exist_ok=True)
    names, encodings, sizes = ["id", "label", "vec"], ["int", "int32", f"ndarray:float32:{DIM}"], [8, 4, 4 * DIM]
    shards = []
    for s, start in enumerate(range(0, len(ids), per_shard)):
        end = min(start + per_shard, len(ids))
        n = end - start
        config = {"column_encodings": encodings, "column_names": names, "column_sizes": sizes, "compression": None,
                  "format": "mds", "hashes": [], "size_limit": 1 << 30, "version": 2}
        head = json.dumps(config, sort_keys=True).encode()
        sample = 8 + 4 + 4 * DIM
        body = np.empty((n, sample), np.uint8)
        body[:, 0:8] = ids[start:end].view(np.uint8).reshape(n, 8)
        body[:, 8:12] = labels[start:end].view(np.uint8).reshape(n, 4)
        body[:, 12:] = vec[start:end].view(np.uint8).reshape(n, 4 * DIM)
        first = 4 + 4 * (n + 1) + len(head)
        offsets = (first + sample * np.arange(n + 1)).astype(np.uint32)
        name = f"shard.{s:05d}.mds"
        data = struct.pack("<I", n) + offsets.tobytes() + head + body.tobytes()
        open(os.path.join(out, name), "wb").write(data)
        shards.append(dict(config, raw_data={"basename": name, "bytes": len(data), "hashes": {}}, samples=n, zip_data=None))
    json.dump({"shards": shards, "version": 2}, open(os.path.join(out, "index.json"), "w"), sort_keys=True)


def litdata(out, ids, vec, labels, per_chunk=50_000):
    """A LitData PyTreeLoader dataset of dict items {id, label, vec}: a u32 size per leaf, then the leaves."""
    os.makedirs(out, exist_ok=True)
    chunks = []
    sizes = struct.pack("<III", 8, 8, 4 * DIM)
    for c, start in enumerate(range(0, len(ids), per_chunk)):
        end = min(start + per_chunk, len(ids))
        n = end - start
        item = 12 + 8 + 8 + 4 * DIM
        body = np.empty((n, item), np.uint8)
        body[:, 0:12] = np.frombuffer(sizes, np.uint8)
        body[:, 12:20] = ids[start:end].view(np.uint8).reshape(n, 8)
        body[:, 20:28] = labels[start:end].astype(np.int64).view(np.uint8).reshape(n, 8)
        body[:, 28:] = vec[start:end].view(np.uint8).reshape(n, 4 * DIM)
        first = 4 + 4 * (n + 1)
        offsets = (first + item * np.arange(n + 1)).astype(np.uint32)
        name = f"chunk-0-{c}.bin"
        data = struct.pack("<I", n) + offsets.tobytes() + body.tobytes()
        open(os.path.join(out, name), "wb").write(data)
        chunks.append({"chunk_bytes": len(data), "chunk_size": n, "dim": None, "filename": name})
    leaf = {"type": None, "context": None, "children_spec": []}
    spec = [1, {"type": "builtins.dict", "context": json.dumps(["id", "label", "vec"]), "children_spec": [leaf, leaf, leaf]}]
    config = {"chunk_bytes": 1 << 26, "chunk_size": None, "compression": None, "data_format": ["int", "int", "no_header_numpy:9"],
              "data_spec": json.dumps(spec), "encryption": None, "item_loader": "PyTreeLoader"}
    json.dump({"chunks": chunks, "config": config, "updated_at": "0"}, open(os.path.join(out, "index.json"), "w"), sort_keys=True)


def varint(v):
    out = bytearray()
    v &= (1 << 64) - 1
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def masked_crc(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc = _TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    crc ^= 0xFFFFFFFF
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


_TABLE = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    _TABLE.append(c)


def feature(key, kind, payload):
    lst = b"\x0a" + varint(len(payload)) + payload           # the list's packed values
    feat = bytes([(kind << 3) | 2]) + varint(len(lst)) + lst   # Feature{kind = list}
    k = key.encode()
    entry = b"\x0a" + varint(len(k)) + k + b"\x12" + varint(len(feat)) + feat
    return b"\x0a" + varint(len(entry)) + entry


def tfrecord(path, ids, vec, labels):
    with open(path, "wb") as f:
        for i in range(len(ids)):
            feats = (feature("id", 3, varint(int(ids[i]))) + feature("label", 3, varint(int(labels[i])))
                     + feature("vec", 2, vec[i].tobytes()))
            rec = b"\x0a" + varint(len(feats)) + feats
            length = struct.pack("<Q", len(rec))
            f.write(length + struct.pack("<I", masked_crc(length)) + rec + struct.pack("<I", masked_crc(rec)))


def main():
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 200_000
    ids, vec, labels = rows(n)
    mds(os.path.join(out, "mds"), ids, vec, labels)
    litdata(os.path.join(out, "litdata"), ids, vec, labels)
    np.save(os.path.join(out, "rows.npy"), vec)
    tfrecord(os.path.join(out, "rows.tfrecord"), ids, vec, labels)
    print(f"{n} rows written to {out}")


if __name__ == "__main__":
    main()
