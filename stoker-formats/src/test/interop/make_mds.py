#!/usr/bin/python3
"""Writes MosaicML Streaming (MDS) interop fixtures with streaming's own, unmodified MDSWriter.

Usage:
    /usr/bin/python3 make_mds.py STREAMING_SRC [--out DIR] [--commit SHA]

STREAMING_SRC is a work tree of github.com/mosaicml/streaming (the directory that holds the
`streaming` package). Debian packages used: python3-numpy, python3-pil, python3-torch (streaming
imports torch), python3-zstd (streaming's `import zstd`), python3-brotli, python3-snappy,
python3-xxhash, python3-catalogue (streaming's registries need the real one); python3-tqdm and
python3-filelock if present. Streaming also imports cloud/ML packages it does not need for local writing
(boto3, azure, transformers, ...); those that are not installed are replaced by inert stub
modules (a meta-path finder consulted last, so installed modules always win). Nothing of
streaming's encoding, compression, writing or merging code is replaced.

Writes under OUT (default: ../resources/interop/mds next to this script):
    all/                every MDS encoding except pkl, uncompressed, several shards
    zstd/ zstd-7/ gz/ bz2/ br/ snappy/   the same small dataset, compressed per codec
    merged/             0/ and 1/ from two writers + streaming's merge_index top-level index
    pkl/                a dataset with a `pkl` column (no expected.jsonl: must be refused)
    corrupt/truncated/  all/ with shard 0 cut mid-sample
    corrupt/bad_offset/ all/ with one byte of shard 0's offset table flipped
    */expected.jsonl    one JSON object per sample, storage order (see README.md)
and checks every expected.jsonl by reading the fixture back with streaming's MDSReader.
"""
import argparse
import importlib.abc
import importlib.machinery
import io
import json
import os
import shutil
import sys
import tempfile
import types
from decimal import Decimal

import numpy as np
from PIL import Image

# --------------------------------------------------------------------------------------------
# Stubs for packages streaming imports but local writing never uses.

STUB_ROOTS = [
    'absl', 'alipcs_py', 'azure', 'boto3', 'botocore', 'databricks', 'datasets', 'filelock',
    'google', 'huggingface_hub', 'oci', 'pandas', 'paramiko', 'pyarrow', 'pyspark', 'tensorflow',
    'tokenization', 'torchvision', 'tqdm', 'transformers'
]


class _StubAttr(type):
    """Metaclass: any attribute of a stub class is another stub class (usable as base/except)."""

    def __getattr__(cls, name):
        if name.startswith('__'):
            raise AttributeError(name)
        return _StubAttr(name, (Exception,), {})


def _stub_module(name):
    mod = types.ModuleType(name)
    mod.__path__ = []  # a package, so submodules can be imported

    def __getattr__(attr):
        if attr.startswith('__'):
            raise AttributeError(attr)
        return _StubAttr(attr, (Exception,), {})

    mod.__getattr__ = __getattr__
    return mod


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):

    def __init__(self, roots):
        self.roots = set(roots)

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split('.')[0] in self.roots:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        return _stub_module(spec.name)

    def exec_module(self, module):
        pass


def install_stubs():
    import importlib.util
    missing = [r for r in STUB_ROOTS if importlib.util.find_spec(r) is None]
    sys.meta_path.append(_StubFinder(missing))  # last: real modules always win
    return missing


# --------------------------------------------------------------------------------------------
# Expected-value rendering (the format `stoker cat` prints).


from catjson import blob, fnum, nd, sha  # noqa: E402,F401  (stoker cat's JSON form, shared)


def pil_obj(img):
    if img.mode in ('L', 'RGB', 'RGBA'):
        return nd(np.asarray(img))
    return blob(img.tobytes())  # the raw part MDS stores after `width, height, len, mode`


_SCALARS = {
    'uint8': np.uint8, 'uint16': np.uint16, 'uint32': np.uint32, 'uint64': np.uint64,
    'int8': np.int8, 'int16': np.int16, 'int32': np.int32, 'int64': np.int64,
    'float16': np.float16, 'float32': np.float32, 'float64': np.float64,
}


def image_bytes(fmt, value):
    if isinstance(value, bytes):  # mds_encode stores any bytes value untouched
        return value
    if fmt == 'JPEG' and getattr(value, 'format', None) == 'JPEG' and \
            getattr(value, 'filename', None):
        with open(value.filename, 'rb') as f:  # JpegImageFile opened from a file: file bytes
            return f.read()
    out = io.BytesIO()
    value.save(out, format=fmt)
    return out.getvalue()


def expect_from_input(encoding, value):
    """Render an input value as the reader should show it after the round trip."""
    base = encoding.split(':')[0]
    if isinstance(value, bytes) and base not in ('bytes', 'jpeg', 'png'):
        raise ValueError('fixture inputs pass bytes only to bytes/jpeg/png columns')
    if base == 'bytes':
        return blob(value)
    if base == 'str':
        return value
    if base == 'int':
        assert int(np.int64(value)) == value
        return value
    if base in _SCALARS:
        stored = _SCALARS[base](value)
        if base.startswith('float'):
            return fnum(stored)
        assert int(stored) == value, (base, value)
        return int(stored)
    if base == 'str_int':
        return int(value)
    if base == 'str_float':
        return fnum(value)
    if base == 'str_decimal':
        return str(value)
    if base == 'json':
        return json.loads(json.dumps(value))
    if base == 'ndarray':
        return nd(value)
    if base == 'pil':
        return pil_obj(value)
    if base == 'jpeg':
        return blob(image_bytes('JPEG', value))
    if base == 'png':
        return blob(image_bytes('PNG', value))
    if base in ('jpeg_array', 'jpegarray'):
        return [blob(b) for b in value]
    if encoding == 'list[jpeg]':
        return [blob(image_bytes('JPEG', v)) for v in value]
    if encoding == 'list[png]':
        return [blob(image_bytes('PNG', v)) for v in value]
    if encoding == 'list[pil]':
        return [pil_obj(v) for v in value]
    raise ValueError(encoding)


def expect_from_decoded(encoding, value):
    """Render what streaming's reader decoded (JPEG/PNG decoders patched to return bytes)."""
    base = encoding.split(':')[0]
    if base == 'bytes':
        return blob(value)
    if base == 'str':
        return value
    if base == 'int':
        return int(value)
    if base in _SCALARS:
        assert isinstance(value, _SCALARS[base]), (base, type(value))
        return fnum(value) if base.startswith('float') else int(value)
    if base == 'str_int':
        assert isinstance(value, int)
        return value
    if base == 'str_float':
        assert isinstance(value, float)
        return fnum(value)
    if base == 'str_decimal':
        assert isinstance(value, Decimal)
        return str(value)
    if base == 'json':
        return value
    if base == 'ndarray':
        return nd(value)
    if base == 'pil':
        return pil_obj(value)
    if base in ('jpeg', 'png'):
        return blob(value)
    if base in ('jpeg_array', 'jpegarray') or encoding in ('list[jpeg]', 'list[png]'):
        return [blob(v) for v in value]
    if encoding == 'list[pil]':
        return [pil_obj(v) for v in value]
    raise ValueError(encoding)


def dumps(row):
    return json.dumps(row, ensure_ascii=False, allow_nan=False)


# --------------------------------------------------------------------------------------------
# Fixture data.


def rng(seed):
    return np.random.RandomState(seed)


def rgb(w, h, seed):
    return Image.fromarray(rng(seed).randint(0, 256, (h, w, 3)).astype(np.uint8), 'RGB')


def gray(w, h, seed):
    return Image.fromarray(rng(seed).randint(0, 256, (h, w)).astype(np.uint8), 'L')


def pil_image(mode, w, h, seed):
    r = rng(seed)
    if mode == 'RGB':
        return rgb(w, h, seed)
    if mode == 'L':
        return gray(w, h, seed)
    if mode in ('RGBA', 'CMYK'):
        return Image.fromarray(r.randint(0, 256, (h, w, 4)).astype(np.uint8), mode)
    if mode == 'LA':
        return Image.fromarray(r.randint(0, 256, (h, w, 4)).astype(np.uint8), 'RGBA').convert('LA')
    if mode == '1':
        return Image.fromarray(r.randint(0, 2, (h, w)).astype(bool))
    if mode == 'P':
        return rgb(w, h, seed).convert('P', palette=Image.ADAPTIVE, colors=8)
    if mode == 'I;16':
        img = Image.fromarray(r.randint(0, 65536, (h, w)).astype(np.uint16))
        assert img.mode == 'I;16'
        return img
    if mode == 'I':
        return Image.fromarray(r.randint(-2**31, 2**31 - 1, (h, w)).astype(np.int32), 'I')
    if mode == 'F':
        a = r.standard_normal((h, w)).astype(np.float32)
        return Image.fromarray(a, 'F')
    raise ValueError(mode)


ALL_COLUMNS = {
    'bytes': 'bytes',
    'str': 'str',
    'int': 'int',
    'uint8': 'uint8',
    'uint16': 'uint16',
    'uint32': 'uint32',
    'uint64': 'uint64',
    'int8': 'int8',
    'int16': 'int16',
    'int32': 'int32',
    'int64': 'int64',
    'float16': 'float16',
    'float32': 'float32',
    'float64': 'float64',
    'str_int': 'str_int',
    'str_float': 'str_float',
    'str_decimal': 'str_decimal',
    'json': 'json',
    'ndarray': 'ndarray',
    'ndarray_int16': 'ndarray:int16',
    'ndarray_f32_3x4': 'ndarray:float32:3,4',
    'pil': 'pil',
    'jpeg': 'jpeg',
    'png': 'png',
    'jpeg_array': 'jpeg_array',
    'list_jpeg': 'list[jpeg]',
    'list_png': 'list[png]',
    'list_pil': 'list[pil]',
}

N_ALL = 12


def all_samples(tmp):
    nan, inf = float('nan'), float('inf')
    col = {}
    col['bytes'] = [b'', b'\x00', b'\x00\xff\x10\x80', bytes(range(256)), b'hello', b'\xde\xad\xbe\xef',
                    b'x' * 100, b'\n', b'MDS', b'\x01\x02', b'\xff' * 3, 'ü'.encode()]
    col['str'] = ['', 'hello', 'héllo wörld', '日本語テキスト', 'emoji 🦀🚀', 'tab\tnewline\nquote"',
                  'a' * 50, 'Ωμέγα', '\u0000nul', 'مرحبا', 'x', 'last']
    col['int'] = [0, 1, -1, 2**63 - 1, -2**63, 42, -123456789, 2**40, -2**40, 7, 1000000, -9]
    col['uint8'] = [0, 1, 255, 128, 7, 200, 0, 255, 3, 4, 5, 6]
    col['uint16'] = [0, 65535, 1, 256, 1000, 40000, 2, 3, 4, 5, 6, 7]
    col['uint32'] = [0, 2**32 - 1, 1, 2**31, 65536, 123456, 7, 8, 9, 10, 11, 12]
    col['uint64'] = [0, 2**64 - 1, 1, 2**63, 2**63 - 1, 2**32, 5, 6, 7, 8, 9, 10]
    col['int8'] = [0, -128, 127, -1, 1, 50, -50, 2, 3, 4, 5, 6]
    col['int16'] = [0, -32768, 32767, -1, 1, 1000, -1000, 2, 3, 4, 5, 6]
    col['int32'] = [0, -2**31, 2**31 - 1, -1, 1, 100000, -100000, 2, 3, 4, 5, 6]
    col['int64'] = [0, -2**63, 2**63 - 1, -1, 1, 2**53 + 1, -(2**53 + 1), 2, 3, 4, 5, 6]
    col['float16'] = [0.0, 0.1, -2.5, 65504.0, 6e-08, nan, inf, -inf, 1.0, -0.0, 0.333, 1000.5]
    col['float32'] = [0.0, 0.1, -2.5, 3.4028234663852886e+38, 1e-45, nan, inf, -inf, 1.0, -0.0,
                      16777217.0, 0.333]
    col['float64'] = [0.0, 0.1, -2.5, 1.7976931348623157e+308, 5e-324, nan, inf, -inf, 1.0, -0.0,
                      2**53 + 1.0, 1 / 3]
    col['str_int'] = [0, 2**64 + 1, -2**70, 12, 2**64 - 1, -1, 10**30, 5, 6, 7, 8, -(10**25)]
    col['str_float'] = [0.0, 0.1, -2.5e-10, 1e300, nan, inf, -inf, 1e16, 123456789.0, -0.0, 1 / 3,
                        5e-324]
    col['str_decimal'] = [Decimal('0'), Decimal('3.14159265358979323846264338327950288'),
                          Decimal('-0.00'), Decimal('1E+3'), Decimal('123456789012345678901234567890'),
                          Decimal('-1.5e-7'), Decimal('0.1'), Decimal('Infinity'), Decimal('2'),
                          Decimal('100.000'), Decimal('-42'), Decimal('7.5')]
    col['json'] = [{'a': 1, 'b': [1, 2, {'c': None}]}, [1, 'two', 3.5, True, False, None], 'just a string',
                   42, None, {'nested': {'deep': {'deeper': [[], {}]}}, 'ü': 'ñ'}, 2**70, -0.5,
                   {'list': list(range(5))}, [], {}, {'emoji': '🦀', 'q': 'say "hi"'}]
    nd_vals = [
        np.array([1, 2, 3], np.uint8),
        np.array([[-128, 0, 127], [1, -1, 2]], np.int8),
        np.array([0, 1, 65535, 300], np.uint16),
        np.arange(6, dtype=np.int16).reshape(2, 3).T,  # non-contiguous input: stored C order
        np.array([0.5, np.nan, np.inf, -np.inf], np.float16),
        np.array([0, 2**32 - 1], np.uint32).reshape(1, 1, 1, 2),
        np.array([-2**31, 2**31 - 1, 0], np.int32),
        np.array([[0.1, np.nan], [-0.0, 1e30]], np.float32),
        np.array([2**64 - 1, 0], np.uint64),
        np.array([-2**63, 2**63 - 1], np.int64),
        np.array([[np.nan, np.inf, -np.inf], [-0.0, 0.1, 1e-300]], np.float64),
        (np.arange(300) % 256 - 128).astype(np.int8).reshape(1, 300),  # shape code 1 (uint16)
    ]
    col['ndarray'] = nd_vals
    col['ndarray_int16'] = [np.array(v, np.int16) for v in [
        [-32768, 32767], [[1, 2], [3, 4], [5, 6]], [0], list(range(-5, 5)), [[7]], [1, 2, 3],
        np.arange(260) - 130, [[[1, 2]]], [42], [-1, -2], [0, 0, 0, 0], [9]]]
    f34 = []
    for i in range(N_ALL):
        a = (np.arange(12, dtype=np.float32).reshape(3, 4) + i) / 4
        if i == 1:
            a[0, 0], a[1, 1], a[2, 2] = np.nan, np.inf, -np.inf
        f34.append(a)
    col['ndarray_f32_3x4'] = f34
    modes = ['RGB', 'L', 'RGBA', '1', 'P', 'I;16', 'F', 'LA', 'CMYK', 'RGB', 'L', 'I']
    sizes = [(5, 3), (5, 3), (2, 2), (9, 3), (4, 4), (3, 2), (2, 3), (3, 1), (1, 2), (1, 1), (3, 5),
             (2, 2)]
    col['pil'] = [pil_image(m, w, h, 100 + i) for i, (m, (w, h)) in enumerate(zip(modes, sizes))]
    # jpeg: PIL images (writer re-encodes at PIL defaults), one JPEG opened from a file (writer
    # stores the file's bytes), one raw bytes value (stored untouched).
    jpeg_file = os.path.join(tmp, 'from_file.jpg')
    rgb(6, 4, 7).save(jpeg_file, format='JPEG', quality=95)
    raw_jpeg = io.BytesIO()
    gray(4, 4, 8).save(raw_jpeg, format='JPEG', quality=50)
    jp = []
    for i in range(N_ALL):
        if i == 2:
            jp.append(Image.open(jpeg_file))
        elif i == 5:
            jp.append(raw_jpeg.getvalue())
        elif i % 3 == 1:
            jp.append(gray(5, 3, 200 + i))
        else:
            jp.append(rgb(5, 3, 200 + i))
    col['jpeg'] = jp
    png_modes = ['RGB', 'L', 'RGBA', '1', 'P', 'I;16', 'LA', 'I', 'RGB', 'L', 'RGBA', 'P']
    col['png'] = [pil_image(m, w, h, 300 + i)
                  for i, (m, (w, h)) in enumerate(zip(png_modes, sizes))]

    def jpeg_bytes(img, q):
        b = io.BytesIO()
        img.save(b, format='JPEG', quality=q)
        return b.getvalue()

    col['jpeg_array'] = [[jpeg_bytes(rgb(3, 2, 400 + 10 * i + k), 75) for k in range(n)]
                         for i, n in enumerate([2, 2, 1, 3, 2, 2, 2, 1, 2, 2, 3, 2])]
    col['list_jpeg'] = [[rgb(2, 2, 500 + 10 * i + k) if k % 2 == 0 else gray(2, 2, 500 + 10 * i + k)
                         for k in range(n)]
                        for i, n in enumerate([2, 1, 0, 3, 2, 2, 1, 2, 2, 1, 2, 2])]
    col['list_png'] = [[pil_image(['RGB', 'L', 'RGBA', 'P'][(i + k) % 4], 2, 3, 600 + 10 * i + k)
                        for k in range(n)]
                       for i, n in enumerate([2, 0, 1, 2, 3, 2, 1, 2, 1, 2, 2, 1])]
    col['list_pil'] = [[pil_image(['RGB', 'L', 'RGBA', '1', 'I;16'][(i + k) % 5], 2, 2,
                                  700 + 10 * i + k) for k in range(n)]
                       for i, n in enumerate([1, 2, 0, 2, 1, 2, 1, 2, 1, 2, 1, 3])]
    assert set(col) == set(ALL_COLUMNS) and all(len(v) == N_ALL for v in col.values())
    return [{k: col[k][i] for k in ALL_COLUMNS} for i in range(N_ALL)]


SIMPLE_COLUMNS = {'str': 'str', 'int': 'int', 'ndarray': 'ndarray', 'bytes': 'bytes'}


def simple_samples(n, seed, big=True):
    text = ('The quick brown fox jumps over the lazy dog. Größe, 日本語. ' * 8)
    out = []
    for i in range(n):
        r = rng(seed + i)
        if big and i == n - 2:
            arr = np.zeros((1, 65536), np.uint8)  # shape code 2 (uint32 dims); compresses well
            arr[0, -1] = 7
        elif i % 3 == 0:
            arr = r.randint(-1000, 1000, (2, 3)).astype(np.int32)
        elif i % 3 == 1:
            arr = r.standard_normal(5).astype(np.float64)
        else:
            arr = r.randint(0, 256, (4, 4, 3)).astype(np.uint8)
        out.append({
            'str': f'sample {i}: ' + text[:40 + 37 * i],
            'int': (i - n // 2) * 1000003,
            'ndarray': arr,
            'bytes': bytes(r.randint(0, 256, 16 + 11 * i).astype(np.uint8)) + b'\x00' * 64,
        })
    return out


# --------------------------------------------------------------------------------------------
# Writing and verifying.


def write(out, columns, samples, **kwargs):
    from streaming.base.format.mds.writer import MDSWriter
    if os.path.exists(out):
        shutil.rmtree(out)
    with MDSWriter(out=out, columns=columns, **kwargs) as w:
        for s in samples:
            w.write(s)


def expected_rows(columns, samples):
    names = sorted(columns)
    return [{k: expect_from_input(columns[k], s[k]) for k in names} for s in samples]


def write_expected(folder, rows):
    with open(os.path.join(folder, 'expected.jsonl'), 'w', encoding='utf-8') as f:
        for row in rows:
            f.write(dumps(row) + '\n')


def read_back(folder):
    """Read every sample of `folder` with streaming's MDSReader, in index order."""
    from streaming.base import hashing
    from streaming.base.compression import decompress
    from streaming.base.format import reader_from_json
    from streaming.base.format.mds import encodings
    from streaming.base.format.mds.encodings import JPEG, PNG

    tmp = tempfile.mkdtemp(prefix='mds-readback-')
    try:
        shutil.copytree(folder, tmp, dirs_exist_ok=True)
        index = json.load(open(os.path.join(tmp, 'index.json')))
        assert index['version'] == 2
        rows = []
        saved = JPEG.decode, PNG.decode
        JPEG.decode = PNG.decode = lambda self, data: bytes(data)  # keep the stored bytes
        try:
            for info in index['shards']:
                raw_path = os.path.join(tmp, info['raw_data']['basename'])
                if info['zip_data']:
                    # As StreamingDataset does on first use: decompress zip -> raw.
                    zdata = open(os.path.join(tmp, info['zip_data']['basename']), 'rb').read()
                    assert len(zdata) == info['zip_data']['bytes']
                    for algo, want in info['zip_data']['hashes'].items():
                        assert hashing.get_hash(algo, zdata) == want, algo
                    assert not os.path.exists(raw_path)
                    with open(raw_path, 'wb') as f:
                        f.write(decompress(info['compression'], zdata))
                rdata = open(raw_path, 'rb').read()
                assert len(rdata) == info['raw_data']['bytes']
                for algo, want in info['raw_data']['hashes'].items():
                    assert hashing.get_hash(algo, rdata) == want, algo
                reader = reader_from_json(tmp, None, info)
                reader.validate(allow_unsafe_types=False)
                for i in range(info['samples']):
                    sample = reader.decode_sample(reader.get_sample_data(i))
                    names, encs = info['column_names'], info['column_encodings']
                    assert list(sample) == names
                    rows.append({k: expect_from_decoded(e, sample[k]) for k, e in zip(names, encs)})
        finally:
            JPEG.decode, PNG.decode = saved
        assert encodings.JPEG.decode is saved[0]
        return rows
    finally:
        shutil.rmtree(tmp)


def check(folder, rows):
    got = read_back(folder)
    assert len(got) == len(rows), (folder, len(got), len(rows))
    for i, (a, b) in enumerate(zip(got, rows)):
        assert list(a) == list(b), (folder, i, list(a), list(b))
        if dumps(a) != dumps(b):
            for k in a:
                if dumps(a[k]) != dumps(b[k]):
                    raise AssertionError(f'{folder} sample {i} column {k}: {a[k]} != {b[k]}')
    # the file itself
    lines = open(os.path.join(folder, 'expected.jsonl'), encoding='utf-8').read().splitlines()
    assert [json.loads(l) for l in lines] == json.loads(json.dumps(rows)), folder


def shard_layout(path):
    data = open(path, 'rb').read()
    n = int(np.frombuffer(data[:4], np.uint32)[0])
    offsets = np.frombuffer(data[4:4 + 4 * (n + 1)], np.uint32).tolist()
    return data, n, offsets


def make_corrupt(root):
    src = os.path.join(root, 'all')
    index = json.load(open(os.path.join(src, 'index.json')))
    shard0 = index['shards'][0]['raw_data']['basename']
    notes = {}
    for kind in ('truncated', 'bad_offset'):
        dst = os.path.join(root, 'corrupt', kind)
        if os.path.exists(dst):
            shutil.rmtree(dst)
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns('expected.jsonl'))
        data, n, offsets = shard_layout(os.path.join(dst, shard0))
        assert n >= 3 and offsets[-1] == len(data)
        if kind == 'truncated':
            cut = (offsets[1] + offsets[2]) // 2  # in the middle of sample 1
            damaged = data[:cut]
            notes[kind] = (f'{shard0} cut from {len(data)} to {cut} bytes, inside sample 1 '
                           f'[{offsets[1]}, {offsets[2]}); samples 1..{n - 1} of that shard end '
                           f'past EOF; index.json unchanged (raw_data.bytes still {len(data)})')
        else:
            pos = 4 + 4 * 2 + 2  # byte 2 (bits 16..23) of offsets[2]
            damaged = bytearray(data)
            damaged[pos] ^= 0x01
            new = int(np.frombuffer(bytes(damaged[12:16]), np.uint32)[0])
            assert new > len(data)
            damaged = bytes(damaged)
            notes[kind] = (f'{shard0}: byte {pos} XOR 0x01, so offsets[2] = {new} instead of '
                           f'{offsets[2]} (file is {len(data)} bytes): sample 1 ends and sample 2 '
                           f'begins past EOF; sample 0 and the other shards are intact')
        with open(os.path.join(dst, shard0), 'wb') as f:
            f.write(damaged)
    return notes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('streaming_src')
    ap.add_argument('--out', default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  '..', 'resources', 'interop', 'mds'))
    ap.add_argument('--commit', default=None, help='streaming commit, recorded in README.md')
    args = ap.parse_args()
    root = os.path.abspath(args.out)

    sys.path.insert(0, os.path.abspath(args.streaming_src))
    stubbed = install_stubs()
    import PIL
    import streaming
    from streaming.base.compression import get_compressions
    from streaming.base.util import merge_index

    os.makedirs(root, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix='mds-fixtures-')
    made = []
    try:
        # 1. all/
        samples = all_samples(tmp)
        folder = os.path.join(root, 'all')
        write(folder, ALL_COLUMNS, samples, size_limit=20000)
        rows = expected_rows(ALL_COLUMNS, samples)
        write_expected(folder, rows)
        check(folder, rows)
        made.append('all')

        # 2. compressed
        simple = simple_samples(10, 1000)
        simple_rows = expected_rows(SIMPLE_COLUMNS, simple)
        codecs = [('zstd', 'zstd', []), ('zstd-7', 'zstd:7', []), ('gz', 'gz', ['sha1', 'xxh64']),
                  ('bz2', 'bz2', []), ('br', 'br', []), ('snappy', 'snappy', [])]
        for name, algo, hashes in codecs:
            assert algo in get_compressions()
            folder = os.path.join(root, name)
            write(folder, SIMPLE_COLUMNS, simple, compression=algo, hashes=hashes, size_limit=2048)
            write_expected(folder, simple_rows)
            check(folder, simple_rows)
            made.append(name)

        # 3. merged/
        folder = os.path.join(root, 'merged')
        if os.path.exists(folder):
            shutil.rmtree(folder)
        part0 = simple_samples(4, 2000, big=False)
        part1 = simple_samples(5, 3000, big=False)
        write(os.path.join(folder, '0'), SIMPLE_COLUMNS, part0, size_limit=1024)
        write(os.path.join(folder, '1'), SIMPLE_COLUMNS, part1, size_limit=1 << 26)
        merge_index([os.path.join(folder, '0', 'index.json'),
                     os.path.join(folder, '1', 'index.json')], folder)
        rows = expected_rows(SIMPLE_COLUMNS, part0 + part1)
        write_expected(folder, rows)
        check(folder, rows)
        made.append('merged')

        # 4. pkl/
        folder = os.path.join(root, 'pkl')
        write(folder, {'id': 'int', 'obj': 'pkl'},
              [{'id': 0, 'obj': {'a': (1, 2)}}, {'id': 1, 'obj': [1.5, None, 'x']},
               {'id': 2, 'obj': {3, 4}}])
        try:
            read_back(folder)
            raise AssertionError('streaming read a pkl column without allow_unsafe_types')
        except ValueError as e:
            assert 'unsafe type' in str(e), e
        made.append('pkl')

        # 5. corrupt/
        notes = make_corrupt(root)
        made += ['corrupt/truncated', 'corrupt/bad_offset']
    finally:
        shutil.rmtree(tmp)

    write_readme(root, streaming.__version__, args.commit, PIL.__version__, stubbed, notes)
    total = 0
    for dirpath, _, files in os.walk(root):
        for fn in files:
            total += os.path.getsize(os.path.join(dirpath, fn))
    print('made:', ', '.join(made), f'({total} bytes in all)')


README = """\
# MDS interop fixtures

Written by MosaicML Streaming's own `MDSWriter` (and `merge_index` for `merged/`), unmodified:
streaming {version}{commit}, Python {python}, numpy {numpy}, Pillow {pil}, zstd (python-zstd)
{zstd}, Brotli {brotli}, python-snappy {snappy}, xxhash {xxhash} (versions of the Debian
packages python3-*; streaming asks for python-snappy >= 0.6.1, 0.5.3 has the same raw
`snappy.compress`).
Packages streaming imports but never uses for local writing were stubbed: {stubbed}.

Regenerate (from this repository's root, with a work tree of github.com/mosaicml/streaming):

    /usr/bin/python3 stoker-formats/src/test/interop/make_mds.py /path/to/streaming --commit SHA

The script checks each `expected.jsonl` by reading the fixture back with streaming's `MDSReader`.
JPEG bytes depend on the libjpeg Pillow links, so a regeneration elsewhere may change
`jpeg`/`list_jpeg` hashes (expected.jsonl is regenerated with them). The `gz` shards carry the
gzip header's mtime, so they (and the zip hashes in `gz/index.json`) change on every run; the
other files come out byte-identical. `list_jpeg` sample 2 and `list_png` sample 1 are empty lists
(`n = 0`), which the writer and `list[...]` decoding accept.

| folder | what |
|---|---|
| `all/` | every encoding but `pkl`: column name = encoding, except `ndarray_int16` (`ndarray:int16`), `ndarray_f32_3x4` (`ndarray:float32:3,4`), `list_jpeg`/`list_png`/`list_pil` (`list[...]`); uncompressed, 12 samples in {all_shards} shards (samples per shard: {all_per_shard}) |
| `zstd/`, `zstd-7/`, `gz/`, `bz2/`, `br/`, `snappy/` | columns `bytes`, `int`, `ndarray`, `str`; 10 samples; compression `zstd`, `zstd:7`, `gz`, `bz2`, `br`, `snappy`; sample 8's ndarray is uint8 (1, 65536) (shape code 2). `gz/` also carries `hashes: ["sha1", "xxh64"]` |
| `merged/` | `0/` (4 samples, 2 shards) and `1/` (5 samples, 1 shard) by two writers; top-level `index.json` by `merge_index` (basenames `0/shard.00000.mds`, keys not sorted) |
| `pkl/` | columns `id` (int), `obj` (pkl): must be refused by name; no expected.jsonl |
| `corrupt/truncated/` | copy of `all/`: {truncated} |
| `corrupt/bad_offset/` | copy of `all/`: {bad_offset} |

`expected.jsonl`: one object per sample in storage order (shards in index.json order), keys =
`column_names` (sorted). Integers exact (uint64, `str_int` beyond 64 bits); floats (scalars,
`str_float`) as JSON numbers of the value as a float64 (float16/float32 widened), NaN/±Inf as
`"nan"`, `"inf"`, `"-inf"`; `str_decimal` as its text; `str` as a string; `bytes`/`jpeg`/`png` as
`{{"bytes": N, "sha256": HEX}}` of the stored bytes; `json` as the value; `ndarray` as
`{{"dtype", "shape", "sha256" (little-endian C-order data), "values" (only when size <= 16)}}`; `pil`
of mode L/RGB/RGBA as that ndarray object of the pixels (uint8, [H, W] or [H, W, C]), other modes
as `{{"bytes", "sha256"}}` of the raw pixel bytes after the `width, height, len(mode), mode`
header; `jpeg_array`, `list[jpeg]`, `list[png]` as arrays of `{{"bytes", "sha256"}}`; `list[pil]`
as an array of what a `pil` value gives.
"""


def write_readme(root, version, commit, pil_version, stubbed, notes):
    import subprocess

    def deb(pkg):
        try:
            return subprocess.run(['dpkg-query', '-W', '-f', '${Version}', pkg],
                                  capture_output=True, text=True, check=True).stdout or '?'
        except Exception:
            return '?'

    shards = json.load(open(os.path.join(root, 'all', 'index.json')))['shards']
    text = README.format(
        version=version,
        commit=f' (commit {commit})' if commit else '',
        python='.'.join(map(str, sys.version_info[:3])),
        numpy=np.__version__,
        pil=pil_version,
        zstd=deb('python3-zstd'),
        brotli=deb('python3-brotli'),
        snappy=deb('python3-snappy'),
        xxhash=deb('python3-xxhash'),
        stubbed=', '.join(stubbed) or 'none',
        all_shards=len(shards),
        all_per_shard=', '.join(str(x['samples']) for x in shards),
        truncated=notes['truncated'],
        bad_offset=notes['bad_offset'])
    with open(os.path.join(root, 'README.md'), 'w') as f:
        f.write(text)


if __name__ == '__main__':
    main()
