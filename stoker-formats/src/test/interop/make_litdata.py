#!/usr/bin/python3
"""Writes Lightning LitData interop fixtures with litdata's own, unmodified BinaryWriter.

Usage:
    /usr/bin/python3 make_litdata.py LITDATA_SRC [--old-src LITDATA_0_2_56_SRC] [--out DIR]
                                     [--commit SHA] [--old-commit SHA]

LITDATA_SRC is a work tree of github.com/Lightning-AI/litData (the directory that holds `src/`,
or `src/` itself). --old-src is a work tree of the same repository at tag v0.2.56 (the last
release whose `tensor` serializer writes a little-endian header); without it pytree-0.2.56/ is
left as it is. Debian packages used: python3-numpy, python3-torch, python3-pil,
python3-packaging, python3-zstd (litdata's `import zstd`), python3-zstandard (its chunk
decompression), python3-cryptography (FernetEncryption), python3-tqdm, python3-filelock,
python3-requests.

Environment shims (nothing of litdata's serializing, chunking, compression, encryption or
index code is replaced):
  * `lightning_utilities` (PyPI only) is replaced by a minimal module whose RequirementCache
    answers as the real one does: distribution version check when a version is given, else
    "is the module importable" (stub modules below count as not installed).
  * Debian's torch is 1.13, which has no `torch.uint16` (litdata's dtype table entry 20);
    when missing it is set to an inert placeholder object so the table can be built. No
    fixture stores a torch uint16.
  * Pillow 9.4's Image.frombytes refuses a memoryview, which litdata's reader passes it
    (mmap slices); for the read-back checks it is wrapped to copy a memoryview to bytes.
  * TokensLoader's torch path needs torch.dtype.itemsize (torch >= 2.1), so the block check
    of tokens/ reads a copy whose index.json names the numpy dtype of the same width
    (no_header_numpy:2 for no_header_tensor:16); the chunk bytes read are the fixture's.
  * cloud/ML packages litdata imports but never uses for local writing (boto3, obstore,
    lightning_sdk, ...) are inert stub modules (a meta-path finder consulted last, so
    installed modules always win).

Writes under OUT (default: ../resources/interop/litdata next to this script):
    pytree/            12 dict items (int, str, float, bool, bytes, numpy, torch, PIL), 3 chunks
    pytree-0.2.56/     the same items by litdata v0.2.56 (little-endian tensor header)
    zstd/              a column subset, compression="zstd"
    tokens/            TokensLoader, torch int32 token arrays (no_header_tensor:16)
    tokens-uint16/     TokensLoader, numpy uint16 token arrays (no_header_numpy:5)
    encrypted/         FernetEncryption level "sample" (+ fernet.pem: the salt)
    encrypted-chunk/   FernetEncryption level "chunk"  (+ fernet.pem: the salt)
    corrupt/truncated/   pytree/ with chunk-0-1.bin cut inside an item
    corrupt/bad_offset/  pytree/ with one offsets-table entry pointing past the end of the file
    */expected.jsonl   one JSON object per item, global order (see README.md)
    tokens*/expected_blocks.jsonl   TokensLoader(block_size=8) blocks
and checks every expected file by reading the fixture back with litdata's StreamingDataset.
"""
import argparse
import importlib.abc
import importlib.machinery
import importlib.metadata
import importlib.util
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import types

import numpy as np
from PIL import Image

PASSWORD = 'stoker-litdata-test-password'

# --------------------------------------------------------------------------------------------
# Environment shims.

STUB_ROOTS = [
    'av', 'azure', 'boto3', 'botocore', 'fsspec', 'google', 'huggingface_hub', 'importlib_metadata',
    'lightning_sdk', 'nibabel', 'obstore', 'pdfplumber', 'polars', 'pyarrow', 'tifffile', 'torch_geometric',
    'torchcodec', 'torchvision', 'trimesh', 'uvloop', 'viztracer'
]


class _StubAttr(type):
    """Metaclass: any attribute of a stub class is another stub class (usable as base/except)."""

    def __getattr__(cls, name):
        if name.startswith('__'):
            raise AttributeError(name)
        return _StubAttr(name, (Exception,), {})


def _stub_module(name):
    mod = types.ModuleType(name)
    mod.__path__ = []

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


STUBBED = set()


class RequirementCache:
    """lightning_utilities.core.imports.RequirementCache, reduced to what litdata asks of it."""

    def __init__(self, requirement='', module=None):
        self.requirement = requirement
        self.module = module
        self.available = self._check()
        self.message = f'{requirement!r} {"met" if self.available else "not met"}'

    def _module_available(self, name):
        if name.split('.')[0] in STUBBED:
            return False
        try:
            return importlib.util.find_spec(name) is not None
        except Exception:
            return False

    def _check(self):
        from packaging.requirements import InvalidRequirement, Requirement
        try:
            req = Requirement(self.requirement)
        except InvalidRequirement:
            return self._module_available(self.module or self.requirement)
        try:
            dist_ok = req.specifier.contains(importlib.metadata.version(req.name), prereleases=True)
        except importlib.metadata.PackageNotFoundError:
            dist_ok = False
        if dist_ok:
            return True
        if not str(req.specifier) or self.module is not None:
            return self._module_available(self.module or self.requirement)
        return False

    def __bool__(self):
        return self.available

    def __str__(self):
        return self.message

    __repr__ = __str__


def install_shims(litdata_src):
    src = os.path.abspath(litdata_src)
    if os.path.isdir(os.path.join(src, 'src', 'litdata')):
        src = os.path.join(src, 'src')
    sys.path.insert(0, src)
    lu = types.ModuleType('lightning_utilities')
    lu.__path__ = []
    core = types.ModuleType('lightning_utilities.core')
    core.__path__ = []
    imports = types.ModuleType('lightning_utilities.core.imports')
    imports.RequirementCache = RequirementCache
    lu.core, core.imports = core, imports
    sys.modules.update({'lightning_utilities': lu, 'lightning_utilities.core': core,
                        'lightning_utilities.core.imports': imports})
    import torch
    shimmed = []
    if not hasattr(torch, 'uint16'):
        torch.uint16 = type('uint16_unavailable_in_this_torch', (), {})()
        shimmed.append('torch.uint16')
    from PIL import Image as PILImage
    if not getattr(PILImage.frombytes, '_stoker_shim', False):
        orig = PILImage.frombytes

        def frombytes(mode, size, data, *a, **k):
            if isinstance(data, memoryview):
                data = data.tobytes()
            return orig(mode, size, data, *a, **k)

        frombytes._stoker_shim = True
        PILImage.frombytes = frombytes
        shimmed.append('PIL.Image.frombytes(memoryview)')
    missing = [r for r in STUB_ROOTS if importlib.util.find_spec(r) is None]
    STUBBED.update(missing)
    sys.meta_path.append(_StubFinder(missing))  # last: real modules always win
    os.environ.setdefault('LITDATA_DISABLE_VERSION_CHECK', '1')
    return src, missing, shimmed


# --------------------------------------------------------------------------------------------
# Expected-value rendering (the format `stoker cat` prints; same conventions as make_mds.py).


from catjson import blob, fnum, nd, sha  # noqa: E402,F401  (stoker cat's JSON form, shared)


def render(value):
    """Render one pytree leaf (an input value or what litdata's reader decoded)."""
    import torch
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):  # litdata <= 0.2.5x decodes int as numpy.int64
        return int(value)
    if isinstance(value, (float, np.floating)):
        return fnum(value)
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return blob(value)
    if isinstance(value, np.ndarray):
        return nd(value)
    if isinstance(value, torch.Tensor):
        return nd(value.contiguous().numpy())
    if isinstance(value, Image.Image):
        if value.mode in ('L', 'RGB', 'RGBA'):
            return nd(np.asarray(value))
        return blob(value.tobytes())
    raise TypeError(type(value))


def render_item(item):
    if isinstance(item, dict):
        return {k: render(v) for k, v in item.items()}
    return render(item)


def dumps(row):
    return json.dumps(row, ensure_ascii=False, allow_nan=False)


def write_jsonl(path, rows):
    with open(path, 'w', encoding='utf-8') as f:
        for row in rows:
            f.write(dumps(row) + '\n')


def same(a, b):
    """Equal, including dict key order."""
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return dumps(a) == dumps(b)


# --------------------------------------------------------------------------------------------
# Fixture data.


def rng(seed):
    return np.random.RandomState(seed)


def image(mode, w, h, seed):
    r = rng(seed)
    channels = {'L': None, 'RGB': 3, 'RGBA': 4}[mode]
    shape = (h, w) if channels is None else (h, w, channels)
    return Image.fromarray(r.randint(0, 256, shape).astype(np.uint8), mode)


N_PYTREE = 12
PYTREE_CHUNK_BYTES = 1000


def pytree_items():
    import torch
    labels = [0, 1, -1, 2**63 - 1, -2**63, 42, -123456789, 2**40, 7, 1000000, -9, 12]
    names = ['', 'hello', 'héllo wörld', '日本語テキスト', 'emoji 🦀🚀', 'tab\tnewline\nquote"',
             'a' * 40, 'Ωμέγα', 'nul\u0000byte', 'مرحبا', 'x', 'last']
    scores = [0.0, 0.1, -2.5, 1e300, -1e-300, float('inf'), 3.141592653589793, float('-inf'),
              float('nan'), 1.0, -0.0, 123456.789]
    raws = [b'', b'\x00', b'\x00\xff\x10\x80', bytes(range(64)), b'hello', b'\xde\xad\xbe\xef',
            b'x' * 30, b'\n', b'LitData', b'\x01\x02', b'\xff' * 3, 'ü'.encode()]
    arr_shapes = [(2, 3), (3, 2), (1, 4), (4, 1), (2, 2), (3, 3), (2, 3, 2), (1, 1), (5, 2), (2, 5), (0, 3),
                  (4, 4)]
    vec_lens = [3, 1, 0, 4, 5, 2, 8, 3, 1, 6, 2, 4]
    t_shapes = [(2, 2), (1, 3), (3, 1), (2, 4), (0, 2), (3, 3), (2, 3, 2), (1, 1), (4, 2), (2, 1), (3, 2),
                (4, 5)]
    t1_lens = [2, 0, 1, 3, 5, 4, 2, 1, 6, 3, 2, 1]
    img_specs = [('RGB', 4, 3), ('L', 3, 2), ('RGBA', 2, 2), ('RGB', 1, 1), ('L', 5, 4), ('RGB', 3, 5),
                 ('RGBA', 3, 1), ('L', 1, 1), ('RGB', 2, 3), ('L', 4, 4), ('RGBA', 2, 3), ('RGB', 6, 2)]
    items = []
    for i in range(N_PYTREE):
        r = rng(100 + i)
        n = int(np.prod(arr_shapes[i]))
        arr = (np.arange(n, dtype=np.int64) * 1237 - 20000 + i).astype(np.int16).reshape(arr_shapes[i])
        if n:
            arr.ravel()[0] = -32768 if i % 2 else 32767
        vec = r.standard_normal(vec_lens[i]).astype(np.float32)
        if i == 6:
            vec[1:4] = [np.nan, np.inf, -np.inf]
        t = torch.from_numpy(r.standard_normal(t_shapes[i]).astype(np.float32))
        t1 = torch.tensor([(j + 1) * (-1) ** j * 10 ** (j + i % 7) for j in range(t1_lens[i])], dtype=torch.int64)
        if i == 3:
            t1 = torch.tensor([2**63 - 1, -2**63, 0], dtype=torch.int64)
        mode, w, h = img_specs[i]
        items.append({
            'label': labels[i],
            'name': names[i],
            'score': scores[i],
            'flag': i % 3 == 0,
            'raw': raws[i],
            'arr': arr,
            'vec': vec,
            't': t,
            't1': t1,
            'img': image(mode, w, h, 200 + i),
        })
    return items


ZSTD_KEYS = ['name', 'label', 'arr', 't', 'vec', 'raw']


def zstd_items():
    items = []
    for i, it in enumerate(pytree_items()):
        sub = {k: it[k] for k in ZSTD_KEYS}
        sub['raw'] = bytes(rng(300 + i).randint(0, 4, 64 * (i + 1)).astype(np.uint8))  # compressible
        items.append(sub)
    return items


TOKEN_LENGTHS = [5, 11, 3, 17, 8, 2, 13, 7, 9, 4, 20, 6]
TOKENS_CHUNK_SIZE = 30  # tokens per chunk (TokensLoader counts tokens, not items)
BLOCK_SIZE = 8


def token_arrays(dtype):
    out = []
    next_token = 1
    for i, n in enumerate(TOKEN_LENGTHS):
        vals = np.arange(next_token, next_token + n, dtype=np.int64)
        next_token += n
        if dtype == 'int32':
            vals = vals * 1000 + i  # values > 65535 to show the width
            if i == 4:
                vals[0] = 2**31 - 1
                vals[1] = -1
        else:
            vals = vals * 500 + i
            if i == 4:
                vals[0] = 65535
        out.append(vals.astype(dtype))
    return out


# --------------------------------------------------------------------------------------------
# Writing and reading back with litdata.


def write(folder, items, **kwargs):
    from litdata.streaming.writer import BinaryWriter
    if os.path.exists(folder):
        shutil.rmtree(folder)
    os.makedirs(folder)
    writer = BinaryWriter(folder, **kwargs)
    for i, item in enumerate(items):
        writer[i] = item
    writer.done()
    writer.merge()
    leftovers = [f for f in os.listdir(folder) if f != 'index.json' and not f.startswith('chunk-')]
    assert not leftovers, leftovers
    with open(os.path.join(folder, 'index.json')) as f:
        return json.load(f)


def read_back(folder, data_format=None, **kwargs):
    """Read every item with litdata's StreamingDataset, on a copy (litdata's local reader
    decompresses `*.zstd.bin` in place and deletes the original). data_format, when given,
    replaces config.data_format in the copy's index.json."""
    from litdata import StreamingDataset
    tmp = tempfile.mkdtemp(prefix='litdata-read-')
    try:
        copy = os.path.join(tmp, 'data')
        shutil.copytree(folder, copy)
        if data_format is not None:
            with open(os.path.join(copy, 'index.json')) as f:
                index = json.load(f)
            index['config']['data_format'] = data_format
            with open(os.path.join(copy, 'index.json'), 'w') as f:
                json.dump(index, f)
        ds = StreamingDataset(copy, cache_dir=os.path.join(tmp, 'cache'), **kwargs)
        return [ds[i] for i in range(len(ds))]
    finally:
        shutil.rmtree(tmp)


def check_items(folder, rows, **kwargs):
    got = [render_item(x) for x in read_back(folder, **kwargs)]
    assert len(got) == len(rows), (folder, len(got), len(rows))
    for i, (g, e) in enumerate(zip(got, rows)):
        assert same(g, e), (folder, i, g, e)


def chunk_items(folder):
    """Item blobs of every chunk (uncompressed files only), in index.json order."""
    with open(os.path.join(folder, 'index.json')) as f:
        index = json.load(f)
    out = []
    for chunk in index['chunks']:
        with open(os.path.join(folder, chunk['filename']), 'rb') as f:
            data = f.read()
        n = struct.unpack_from('<I', data, 0)[0]
        offsets = struct.unpack_from(f'<{n + 1}I', data, 4)
        assert n == chunk['chunk_size'] and offsets[0] == 4 + 4 * (n + 1) and offsets[-1] == len(data)
        out.append([data[offsets[j]:offsets[j + 1]] for j in range(n)])
    return index, out


def tensor_header_endianness(folder, leaf):
    """'big' or 'little', from the first item's `tensor` leaf header (our own parse)."""
    index, chunks = chunk_items(folder)
    fmt = index['config']['data_format']
    k = fmt.index('tensor') if leaf is None else leaf
    item = chunks[0][0]
    sizes = struct.unpack_from(f'<{len(fmt)}I', item, 0)
    pos = 4 * len(fmt) + sum(sizes[:k])
    be = struct.unpack_from('>II', item, pos)
    le = struct.unpack_from('<II', item, pos)
    return ('big', be) if be[1] < 64 else ('little', le)


def make_pytree(root, name, compression=None, items=None, **kwargs):
    folder = os.path.join(root, name)
    items = pytree_items() if items is None else items
    index = write(folder, items, compression=compression, **kwargs)
    rows = [render_item(x) for x in items]
    write_jsonl(os.path.join(folder, 'expected.jsonl'), rows)
    return folder, index, rows


def make_tokens(root, name, dtype, as_torch):
    import torch
    from litdata.streaming.item_loader import TokensLoader
    from litdata.streaming.serializers import _get_serializers
    folder = os.path.join(root, name)
    arrays = token_arrays(dtype)
    items = [torch.from_numpy(a) for a in arrays] if as_torch else arrays
    index = write(folder, items, chunk_size=TOKENS_CHUNK_SIZE, item_loader=TokensLoader())
    rows = [nd(a) for a in arrays]
    write_jsonl(os.path.join(folder, 'expected.jsonl'), rows)
    # blocks: per chunk, never across chunks, tail dropped
    blocks = []
    pos = 0
    for chunk in index['chunks']:
        toks = np.concatenate(arrays[pos:pos + chunk['chunk_size']])
        pos += chunk['chunk_size']
        assert chunk['dim'] == len(toks)
        for b in range(len(toks) // BLOCK_SIZE):
            blocks.append({'tokens': [int(v) for v in toks[b * BLOCK_SIZE:(b + 1) * BLOCK_SIZE]]})
    assert pos == len(arrays)
    write_jsonl(os.path.join(folder, 'expected_blocks.jsonl'), blocks)
    # check items with litdata's own serializer on the raw item blobs
    fmt = index['config']['data_format']
    assert len(fmt) == 1
    serializer = _get_serializers(None)[fmt[0].split(':')[0]]
    serializer.setup(fmt[0])
    _, chunks = chunk_items(folder)
    decoded = [serializer.deserialize(b) for blobs in chunks for b in blobs]
    assert [render(x) for x in decoded] == rows
    # check blocks with litdata's StreamingDataset + TokensLoader. Its torch path needs
    # torch.dtype.itemsize (torch >= 2.1; Debian has 1.13), so a torch fixture is read as the
    # numpy dtype of the same width and kind (same chunk bytes, only the index's name differs).
    read_format = None
    if fmt[0].startswith('no_header_tensor:') and not hasattr(torch.int32, 'itemsize'):
        np_index = {'int32': 2, 'int64': 3, 'uint8': 4, 'int16': 1, 'float32': 9}[dtype]
        read_format = [f'no_header_numpy:{np_index}']
    got = read_back(folder, data_format=read_format, item_loader=TokensLoader(block_size=BLOCK_SIZE))
    got = [{'tokens': [int(v) for v in np.asarray(x).tolist()]} for x in got]
    assert got == blocks, (got, blocks)
    return folder, index


def make_encrypted(root, name, level):
    from litdata.utilities.encryption import FernetEncryption
    folder = os.path.join(root, name)
    enc = FernetEncryption(password=PASSWORD, level=level)
    items = pytree_items()[:6]
    index = write(folder, items, chunk_bytes=1500, encryption=enc)
    enc.save(os.path.join(folder, 'fernet.pem'))
    rows = [render_item(x) for x in items]
    write_jsonl(os.path.join(folder, 'expected.jsonl'), rows)
    loaded = FernetEncryption.load(os.path.join(folder, 'fernet.pem'), password=PASSWORD)
    check_items(folder, rows, encryption=loaded)
    return folder, index


def make_corrupt(root, src):
    out = {}
    base = os.path.join(root, 'corrupt')
    if os.path.exists(base):
        shutil.rmtree(base)
    index, chunks = chunk_items(src)
    target = index['chunks'][1]['filename']
    n = index['chunks'][1]['chunk_size']
    with open(os.path.join(src, target), 'rb') as f:
        data = f.read()
    offsets = struct.unpack_from(f'<{n + 1}I', data, 4)

    # truncated: cut in the middle of the chunk's second item
    folder = os.path.join(base, 'truncated')
    shutil.copytree(src, folder)
    os.remove(os.path.join(folder, 'expected.jsonl'))
    cut = (offsets[1] + offsets[2]) // 2
    with open(os.path.join(folder, target), 'wb') as f:
        f.write(data[:cut])
    out['truncated'] = dict(file=target, size=len(data), cut=cut, item=1, item_range=(offsets[1], offsets[2]),
                            n=n)

    # bad_offset: offsets[2] (end of item 1 / start of item 2) pointed past the end of the file
    folder = os.path.join(base, 'bad_offset')
    shutil.copytree(src, folder)
    os.remove(os.path.join(folder, 'expected.jsonl'))
    bad = bytearray(data)
    new = len(data) + 1000
    struct.pack_into('<I', bad, 4 + 4 * 2, new)
    with open(os.path.join(folder, target), 'wb') as f:
        f.write(bytes(bad))
    out['bad_offset'] = dict(file=target, size=len(data), entry=2, old=offsets[2], new=new, byte=4 + 4 * 2, n=n)
    return out


# --------------------------------------------------------------------------------------------


def old_main(args):
    """Child process: pytree-0.2.56/ with litdata v0.2.56."""
    src, stubbed, shimmed = install_shims(args.litdata_src)
    import litdata
    root = os.path.abspath(args.out)
    folder, index, rows = make_pytree(root, 'pytree-0.2.56', chunk_bytes=PYTREE_CHUNK_BYTES)
    check_items(folder, rows)
    print(json.dumps({'version': litdata.__version__, 'index': index, 'stubbed': stubbed, 'shimmed': shimmed,
                      'tensor_header': tensor_header_endianness(folder, None)}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('litdata_src')
    ap.add_argument('--old-src', default=None, help='litdata work tree at tag v0.2.56')
    ap.add_argument('--out', default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  '..', 'resources', 'interop', 'litdata'))
    ap.add_argument('--commit', default=None, help='litdata commit, recorded in the report')
    ap.add_argument('--old-commit', default=None)
    ap.add_argument('--child-old', action='store_true', help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child_old:
        return old_main(args)
    root = os.path.abspath(args.out)
    os.makedirs(root, exist_ok=True)
    src, stubbed, shimmed = install_shims(args.litdata_src)
    import litdata
    report = {'version': litdata.__version__, 'commit': args.commit, 'stubbed': stubbed, 'shimmed': shimmed,
              'fixtures': {}}

    folder, index, rows = make_pytree(root, 'pytree', chunk_bytes=PYTREE_CHUNK_BYTES)
    check_items(folder, rows)
    report['fixtures']['pytree'] = index
    report['tensor_header'] = tensor_header_endianness(folder, None)

    folder, index, rows = make_pytree(root, 'zstd', compression='zstd', items=zstd_items(), chunk_bytes=2000)
    check_items(folder, rows)
    report['fixtures']['zstd'] = index

    for name, dtype, as_torch in [('tokens', 'int32', True), ('tokens-uint16', 'uint16', False)]:
        _, index = make_tokens(root, name, dtype, as_torch)
        report['fixtures'][name] = index

    for name, level in [('encrypted', 'sample'), ('encrypted-chunk', 'chunk')]:
        _, index = make_encrypted(root, name, level)
        report['fixtures'][name] = index

    report['corrupt'] = make_corrupt(root, os.path.join(root, 'pytree'))

    if args.old_src:
        res = subprocess.run([sys.executable, os.path.abspath(__file__), args.old_src, '--out', root,
                              '--child-old'], capture_output=True, text=True)
        if res.returncode != 0:
            sys.stderr.write(res.stderr)
            raise SystemExit('litdata v0.2.56 run failed')
        old = json.loads(res.stdout.strip().splitlines()[-1])
        old['commit'] = args.old_commit
        report['old'] = old
        # the same items, so the same expected values
        with open(os.path.join(root, 'pytree', 'expected.jsonl'), 'rb') as a, \
                open(os.path.join(root, 'pytree-0.2.56', 'expected.jsonl'), 'rb') as b:
            assert a.read() == b.read()

    print(json.dumps(report, indent=1, default=str))


if __name__ == '__main__':
    main()
