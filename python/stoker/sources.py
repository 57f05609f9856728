"""Sources as values: what to read and how a sample is made of it, apart from the loader's options.

    import stoker
    from stoker import sources

    train = sources.shards("s3://bucket/train-{000000..000146}.tar", size=176, scale=(0.35, 1))
    loader = stoker.Loader(train, batch_size=256, fields=("image", "label"))

Each function checks its options at once (the keywords ``stoker.Loader("shards", ...)`` takes for
the source, each with its default and meaning in the function's ``help()``) and returns a ``Source``: plain data, equal to another with the same
options, whose ``spec`` is the JSON the server's ``dev.stoker.sources`` reads. The loader's options
(``batch_size``, ``shuffle``, ``num_workers``, ...) go to ``stoker.Loader``.
"""

import json
import os
from typing import Any, Mapping, Optional, Sequence, Union

from . import _help, _options

PathLike = Union[str, "os.PathLike[str]"]


class Source:
    """A source spec: ``kind`` (``"tokens"``, ``"shards"``, ...), its paths and its options."""

    def __init__(self, kind: str, *paths: Any, **options: Any) -> None:
        try:
            spec = _options.spec(kind, paths, options)
        except ValueError as e:
            raise ValueError(str(e).replace("stoker.Loader:", f"stoker.sources.{kind}:", 1)) from None
        if spec["loader"]:
            name = next(n for n in options if _options.ALIASES.get(n, n) in spec["loader"] or n == "skip_bad")
            raise ValueError(f"stoker.sources.{kind}: option '{name}' is the loader's, not the source's: "
                             f"give it to stoker.Loader")
        self.kind = kind
        self.paths = tuple(paths)
        self.options = dict(options)
        self.spec = spec["source"]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Source) and self.spec == other.spec

    def __hash__(self) -> int:
        return hash(json.dumps(self.spec, sort_keys=True))

    def __repr__(self) -> str:
        """The call that makes this source, with the secrets of its URLs (passwords, signatures) as ``***``."""
        args = [repr(str(p)) for p in self.paths] + [f"{k}={v!r}" for k, v in self.options.items()]
        return _options.redact(f"stoker.sources.{self.kind}({', '.join(args)})")


def synthetic(**options: Any) -> Source:
    """``samples`` samples of ``sample_bytes`` bytes, a pure function of the index, each costing ``work_us`` of CPU."""
    return Source("synthetic", **options)


def tokens(*paths: PathLike, **options: Any) -> Source:
    """Windows of ``seq_len`` + 1 tokens from token files (raw ``.bin`` of ``dtype``, ``.npy``, Megatron ``.bin/.idx``).

    A ``.npy``, a ``torch.save`` archive (``.pt``: BabyLlama's ``torch.save(tensor, "tokenized.pt")``)
    or a safetensors file is read as its one-dimensional integer tensor, whatever its name. A file
    whose first bytes show another format (another zip archive, HDF5, Parquet, ROOT, SQLite, Arrow,
    a compressed file, an HTML page, text) is refused, naming it; ``raw=True`` reads every file as
    raw tokens as it is."""
    return Source("tokens", *paths, **options)


def jsonl(*paths: PathLike, **options: Any) -> Source:
    """JSON lines, the text of ``field`` tokenized by ``tokenizer`` and packed into windows of ``seq_len`` tokens."""
    return Source("jsonl", *paths, **options)


def shards(*patterns: PathLike, **options: Any) -> Source:
    """WebDataset tar shards (brace patterns, paths, http(s):// and s3:// URLs), made batches by the image options."""
    return Source("shards", *patterns, **options)


def folder(path: PathLike, **options: Any) -> Source:
    """An image folder (``root/CLASS/IMAGE.jpg``) as torchvision's ImageFolder, made batches by the image options."""
    return Source("folder", path, **options)


def hdf5(path: PathLike, **options: Any) -> Source:
    """``datasets`` of an HDF5 file, the first axis being the sample axis."""
    return Source("hdf5", path, **options)


def sqlite(path: PathLike, pulses: Optional[str] = None, truth: Optional[str] = None, index: str = "event_no",
           features: Sequence[str] = (), truth_features: Sequence[str] = (), **options: Any) -> Source:
    """Events of an SQLite database in GraphNeT's layout, read without SQLite (the file is never written to).

    ``pulses`` is the table of many rows per event, ``truth`` the table of one row per event, both
    keyed by the ``index`` column (``event_no``). Each event is a sample, in the truth table's
    ``event_no`` order; each of ``features`` (default: every pulse column but ``index``) is a ragged
    field (the event's rows in stored order, none for an event without rows: element offsets and
    typed values), each of ``truth_features`` a scalar. ``dtype`` (``"float32"``, ``"float64"``,
    ``"int64"``) sets every field's type; by default a column declared INTEGER reads as int64 and any
    other as float64. ``in_memory=True`` on the loader copies the database into ``/dev/shm`` first.

        train = stoker.sources.sqlite("events.db", pulses="SRTInIcePulses", truth="truth",
                                      features=["dom_x", "dom_y", "dom_z", "dom_time", "charge"],
                                      truth_features=["energy", "zenith"], dtype="float32")
    """
    given = {"pulses": pulses, "truth": truth, "index": index, "features": list(features),
             "truth_features": list(truth_features)}
    given = {k: v for k, v in given.items() if v is not None and v != []}
    return Source("sqlite", path, **given, **options)


def parquet(path: PathLike, **options: Any) -> Source:
    """Rows of a Parquet file, the projected ``columns`` as fields."""
    return Source("parquet", path, **options)


def mds(path: PathLike, **options: Any) -> Source:
    """A MosaicML Streaming (MDS) dataset as it is: the folder of ``index.json`` and its shards, each column a field."""
    return Source("mds", path, **options)


def tfrecord(*paths: PathLike, **options: Any) -> Source:
    """TFRecord files as they are (plain, GZIP, ZLIB), records as ``tf.train.Example`` (``decode``), each feature a field."""
    return Source("tfrecord", *paths, **options)


def arrayrecord(*paths: PathLike, **options: Any) -> Source:
    """ArrayRecord files (Grain's format) as they are, read by index: each record's bytes, or ``decode="example"``."""
    return Source("arrayrecord", *paths, **options)


def arrow(*paths: PathLike, **options: Any) -> Source:
    """Arrow files as Hugging Face ``datasets`` saves them: a ``save_to_disk`` folder, a split's folder, or ``.arrow`` files."""
    return Source("arrow", *paths, **options)


def litdata(path: PathLike, **options: Any) -> Source:
    """A LitData optimized dataset as it is: PyTree items, or a TokensLoader dataset's blocks of ``block_size`` tokens."""
    return Source("litdata", path, **options)


def arrays(files: Union[PathLike, Sequence[PathLike]], properties: Optional[PathLike] = None,
           **options: Any) -> Source:
    """Named arrays as fields, the first dimension the sample: ``files`` maps field names to files, or is one file.

    ``files`` is ``{"x": "x.npy", ...}``, each a ``.npy`` of any rank and dtype, a ``.pt`` or
    ``.safetensors`` file of one tensor, or a raw file as ``np.memmap`` writes it, given with its
    dtype and shape (``{"path": "x.bin", "dtype": "float32", "shape": [N, 127, 4]}``; -1 first:
    as many samples as the file holds) or named in ``properties``, a JSON file of
    ``{"NAME": {"dtype": ..., "shape": [...]}}`` (PolarBERT's ``memmap_properties.json``; a
    structured dtype makes a field ``NAME.MEMBER`` of each member). ``{"path": "x.npy",
    "lengths": "l.npy"}`` is a ragged field: sample ``i`` is the first ``l[i]`` rows of ``x[i]``,
    delivered as offsets and values. Or ``files`` is one ``.pt`` (``torch.save``), ``.safetensors``
    or ``.npz`` file whose named tensors are the fields (its pickle is read as data: a file that
    holds anything but tensors and dicts of them is refused). Every field needs the same number of
    samples."""
    if properties is not None:
        options["properties"] = properties
    if isinstance(files, (str, os.PathLike)):
        return Source("arrays", files, **options)
    return Source("arrays", files=files, **options)


def root(paths: Union[None, PathLike, Sequence[PathLike], Mapping[str, Any]] = None, *more: PathLike,
         **options: Any) -> Source:
    """Entries of a ``tree`` (a TTree or an RNTuple; ``dir/name`` in a subdirectory) in CERN ROOT files.

    ``paths`` is a file or a list of them, or several files as arguments (local paths, http(s)://
    or s3:// URLs read by ranged requests), one dataset in file order. ``branches`` selects branches by glob (default: every
    branch Stoker reads). Scalars and fixed-size arrays arrive as tensors; variable-length
    branches (``T[n]``, ``std::vector<T>``) as ragged fields: ``(offsets, values)``, the values
    typed and the offsets counted in values. A selected string, object or nested container is an
    error naming it and its type. Field names are the branch paths, ``/`` written as ``.``.

    Labelled inputs: ``paths`` a dict of groups of files, ``{"signal": [...], "background": [...]}``,
    is one dataset, group after group, with one more field ``label`` (int64: the group's number in
    the dict's order; ``label=`` names it otherwise). ``weights={"signal": 1, "background": 3}``
    draws an epoch's entries from the groups in those proportions instead, each group in its own
    shuffled order, a group drawn beyond its size passing through it again."""
    if isinstance(paths, dict) or (paths is None and "groups" in options):
        if more or (paths is not None and "groups" in options):
            raise ValueError("stoker.sources.root: groups of files ({'signal': [...], ...}) take no more paths")
        return Source("root", **({"groups": paths} if paths is not None else {}), **options)
    if paths is None:
        raise ValueError("stoker.sources.root: name the ROOT files, or groups of them ({'signal': [...], ...})")
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    return Source("root", *paths, *more, **options)


for _kind in _options.SOURCES:  # every option, its default and meaning, in help(stoker.sources.KIND)
    globals()[_kind].__doc__ = _help.source_doc(_kind, globals()[_kind].__doc__)
