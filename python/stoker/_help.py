"""The options' help, as the command line gives it: the meanings in ``_schema.json`` (written from
the CLI's own descriptions of ``stoker bench KIND``, and held to them by a test) made into the
docstrings of ``stoker.Loader`` and of each ``stoker.sources`` function, so that ``help()`` of an
installed package holds every option with its default and meaning."""

import textwrap

from ._options import SCHEMA, SOURCES


def meanings(name):
    """Spec ``name``'s options (``loader``, or a kind of source: its paths, its own and its nested
    specs' options, in the spec's order), each with its meaning."""
    defs = SCHEMA["$defs"]
    out = {}
    for option, schema in defs[name]["properties"].items():
        if "$ref" in schema:
            out.update(meanings(schema["$ref"].rsplit("/", 1)[1]))
        elif option != "kind":
            out[option] = schema["description"]
    return out

_INDENT = "    "


def _entries(options, indent):
    lines = []
    for name, meaning in options.items():
        lines += textwrap.wrap(f"- ``{name}``: {meaning}", width=96, initial_indent=indent,
                               subsequent_indent=indent + "  ", break_on_hyphens=False)
    return "\n".join(lines)


def source_doc(kind, doc):
    """``doc`` (a source function's own line) with the source's summary and every option it takes."""
    summary = "\n".join(textwrap.wrap(SCHEMA["$defs"][kind]["description"], width=96, initial_indent=_INDENT, subsequent_indent=_INDENT))
    return (f"{doc.rstrip()}\n\n{summary}\n\n{_INDENT}Options (keywords; ``stoker bench {kind} --help`` has the same, "
            f"dashed):\n\n{_entries(meanings(kind), _INDENT)}\n\n{_INDENT}The loader's options go to "
            f"``stoker.Loader``: ``help(stoker.Loader)``.\n")


LOADER = """Loads batches with Stoker for a Python training loop.

    ``stoker.Loader(stoker.sources.tokens("train.bin", seq_len=1024), batch_size=32)`` takes a
    source (a value: ``stoker.sources``) and the loader's options, as ``DataLoader(dataset, ...)``
    does; ``stoker.Loader("tokens", "train.bin", seq_len=1024, batch_size=32)`` is the same, the
    source's kind, paths and options given in one call. The options are the specs' (listed
    below, and each source's in ``help(stoker.sources.KIND)``), the flags of ``stoker bench``
    without their dashes: the same options give the same batches as ``stoker bench``. PyTorch's
    names ``batch_size``, ``num_workers``, ``shuffle``, ``drop_last`` and ``timeout`` work as in a
    ``DataLoader``.

    Batches are yours. Each batch is a dict, field name -> tensor (numpy arrays with
    ``as_numpy=True``), viewing shared memory the JVM wrote, with no copy. A batch's memory goes
    back to the loader only when the last of its tensors (and views of them, and the dict) is
    gone, so batches kept in a list, queued ahead on a thread, or sliced never change, and a
    tensor read after ``close()`` still holds its batch. ``batch.release()`` gives the memory back
    at once, for a loop that wants it before Python drops the objects (its tensors must not be
    read after that). Held batches live in a ring in shared memory that grows up to ``ring_bytes``
    (default: half of the shared memory that is free when the loader starts); when you hold that
    much, the loader waits for you to drop some and says so once on stderr.

    Iterating: each ``for`` loop runs one epoch, as a DataLoader's does: a loop left early and a
    new ``for`` start the next epoch, unless a state was just loaded (``load_state_dict``), which
    the next loop continues. ``set_epoch(n)`` makes the next loop run epoch n from its start (a
    resumed run may call it with the state's epoch: the state is continued). ``len(loader)`` is
    the batches of the next loop.

    Images (``"shards"``, ``"folder"``) are recipes of values, torchvision's transforms:
    ``transform="train"`` (RandomResizedCrop with ``size=224``, ``scale=(0.08, 1)``,
    ``ratio=(3/4, 4/3)``, then a flip with probability ``flip=0.5``, then ImageNet's normalize),
    ``transform="eval"`` (Resize to ``resize=size*8/7``, CenterCrop ``size``, ``flip=0``), or
    ``transform="none"`` (each member its own field of bytes: ``members=`` chooses which, by default
    the first sample's, and a sample that differs is an error); ``image_dtype="uint8"`` leaves normalizing to the
    GPU; ``label=`` takes the label from ``"cls"`` (the default; -1 where a sample has none),
    another member (``"txt"``), a field of the ``.json`` member (``"json:label"``) or nowhere
    (``"none"``); ``keys=True`` adds ``__key__``, the samples' keys as strings. ``image_cache="ram"`` keeps
    the decoded images in memory between epochs (shards and folders read by index), so later epochs
    only crop, flip and resample; each image is kept at the DCT scale its crop decodes at without a
    cache, and the batches equal those with nothing kept, to the bit. ``image_cache_max_side=N`` keeps
    each image at the DCT scale whose longer side is at most N (a change of the data);
    ``image_cache_bytes`` bounds the cache (default: half the machine's memory), and a cache estimated
    past it is refused before the first batch. ``image_cache="disk"`` (or a folder: a ``pathlib.Path``,
    or a path with a ``/``, so a misspelt word is an error) keeps
    them in one file that every process on the node reading the same images shares, and the next
    run finds (a file that fails its check is made again). JSON lines: ``window_cache="disk"`` (or a
    folder) keeps each shard's packed windows, so later epochs read them back instead of tokenizing
    again (a file that fails its check is packed again). Any source: ``in_memory=True``
    copies its local files into memory first (their size checked; removed when the loader closes,
    or a second after its process is killed). Remote files are cached in ``shard_cache``, by default
    ``~/.cache/stoker/shards``; a folder another user owns or can write is refused. The caches'
    earlier names (``cache``, ``cache_max_side``, ``cache_bytes``, ``cache_dir``, ``cache_size``,
    ``cache_mb``) are taken as these. Streamed sources:
    ``streams=N`` splits each epoch into N streams, so that ``load_state_dict`` of the list of every
    old rank's ``state_dict()`` resumes at another world size.

    Ragged fields (a variable-length list of numbers a sample: a jet's particles, an event's
    pulses; ROOT vectors, Parquet ``list<float>`` columns, Arrow lists, HDF5 variable-length
    datasets) arrive as ``(offsets, values)``: the values of the whole batch in their dtype, and
    ``B + 1`` offsets counted in values. Padding turns them into what a model takes, in the JVM,
    written straight into the batch:
    ``pad={"Jet_*": 128}`` makes each ragged field whose name matches a glob (``*``, ``?``; the
    first glob that matches counts) a tensor ``[B, 128]`` of its dtype, values past 128 dropped and
    counted (``stats()["truncatedSamples"]``, ``stats()["droppedValues"]``); ``pad_value=`` fills
    what a sample lacks (default 0). ``stack={"particles": ["Part_px", "Part_py", ...]}`` makes one
    tensor ``[B, N, F]`` of fields that have one length in each sample (feature ``j`` the ``j``-th
    field; a sample where they differ fails naming them), converted to ``stack_dtype``
    (default ``"float32"``), its ``N`` from the ``pad`` glob that names the stack
    (``pad={"particles": 128}``). ``lengths=True`` follows each padded field or stack ``NAME`` with
    ``NAME_len`` (int64 ``[B]``: the entries it holds, at most ``N``), ``mask=True`` with
    ``NAME_mask`` (bool ``[B, N]``). Ragged fields no glob names stay ``(offsets, values)``.

    Options of the Python side:

    - ``fields``: a tuple of field names: each batch is a tuple of those fields in that order
      (``for x, y in loader``); a name that is not a field is an error. Default: a dict of all.
    - ``map``: a function applied to each batch, in order, a few batches ahead of the loop: on a
      thread of its own (torch operations release the GIL, so it runs while the loop does), or,
      with ``python_workers=N``, in N Python worker processes, a batch each; the loop gets its
      results, owned as batches are. An exception in it is raised in the loop, naming the batch.
    - ``collate_fn``: a DataLoader's: a function of the batch's samples (a list of dicts of views
      of the batch: a row of each tensor, a variable-length field's values, a key; tuples with
      ``fields=``) that returns the batch; where ``map`` runs, before it.
    - ``transform`` (images) also takes torchvision's transforms as they are: a ``Compose``, an
      ``nn.Sequential`` or a list. Its known prefix runs in the JVM with torchvision's semantics:
      ``RandomResizedCrop`` (any square ``size``, ``scale``, ``ratio``; bilinear, antialiased) or
      ``Resize(N)`` + ``CenterCrop``, then ``RandomHorizontalFlip(p)``, then ``ToTensor()`` +
      ``Normalize`` with ImageNet's mean and std (or ``PILToTensor()``); a parameter the JVM does
      not implement as torchvision does (another interpolation, a crop that is not square,
      ``antialias=False``) is refused, naming it. From the first transform it does not run, the
      rest runs in Python on each sample the JVM decoded, as torchvision would have run it (on a
      PIL image before ``ToTensor``, on a tensor after), in ``python_workers`` processes. Which
      part runs where is said once on stderr and in ``stats()["transform"]``.
    - ``sample_map``: a function of one sample (a dict of the fields of one shape a sample, as
      tensors) that returns a dict of tensors (or arrays, numbers) of one shape a field: each
      batch is the samples' results, collated (variable-length fields and ``__key__`` pass
      through as they are). It runs after a transform's Python part, in the same workers.
    - ``python_workers``: the processes that run the Python functions (``"auto"``: one a core;
      ``0``: in this process), forked once when the loader starts; they read their inputs from the
      ring with no copy and write their outputs into shared memory, which is the user's as a batch
      is. Per-sample functions run there by default (``"auto"``); ``map`` and ``collate_fn`` only
      when ``python_workers`` is given (a function of whole batches may use the GPU, or state of
      this process, which a worker process has not), and not beside per-sample functions (they
      then run on the loop's thread). Each sample's functions run with torch's, numpy's and
      ``random``'s generators seeded from the loader's seed, the epoch and the sample's key
      (sources without keys: its batch's place in the rank's epoch and its row), and each batch's
      from the seed, the epoch and the batch's place, so the batches are the same for any number
      of workers and after a resume. An exception names the sample or batch and is raised in the
      loop; a worker that dies raises ``stoker.LoaderDied`` with its exit status. What a worker
      hands back is tensors, arrays, numbers and strings, in dicts, lists and tuples.
    - ``timeout``: seconds to wait for a batch (0, the default: no limit); past it, ``next()``
      raises ``stoker.LoaderTimeout`` (a ``TimeoutError``) saying what it waited for and what the
      server is doing. A server that dies raises ``stoker.LoaderDied`` within a second, timeout or
      not.
    - ``as_numpy``: numpy arrays instead of torch tensors (the default when torch is missing).
    - ``ring_bytes``: the bound of the shared-memory ring in bytes (see above).
    - ``ahead``: batches the server may hand over ahead of the loop (default: as many as fit
      4 MiB, between 2 and 32).
    - ``server``: ``"process"`` (the default): one ``stoker serve`` for all of this process's
      loaders (train and validation, several datasets), started by the first and ended when the
      last closes (or the process ends), so that a second loader's first batch needs no JVM start
      and the JVM's memory is paid once; each loader has its own session and ring, and closing
      one leaves the others running. A forked child never uses its parent's: a loader made there
      starts the child's own. ``"node"``: one server for all the processes of this node (8 ranks
      with a train and a validation loader each: one JVM), started by the first under a lock file
      in ``$STOKER_NODE_DIR`` (else ``stoker-UID`` in the temporary folder; a folder of this
      user's alone), attached to by the others, and ended after the last of them has closed its
      loaders or ended. ``"own"``: a server for this loader alone. A socket path (a
      ``pathlib.Path``, or a path with a ``/``): a running ``stoker serve`` (one a node, started
      with ``--stay``) instead of starting one. Paths and folders are the caller's: relative ones
      (data, ``image_cache``, ``window_cache``, ``shard_cache``) are made absolute against this process's
      working folder before a server sees them; URLs stay as given.
    - ``device``: ``"cuda"`` (or ``"cuda:N"``, a ``torch.device``) yields the batches on that GPU,
      each copied from the ring on a side stream a few ahead of the loop (``stoker._device``);
      without CUDA it fails at once, saying where it looked.
    - ``decode_on`` (images): ``"cuda"`` (``"cuda:N"``, a ``torch.device``) hands each JPEG over
      undecoded with the crop and flip the workers drew, and decodes, crops, resizes and flips on
      that GPU (torchvision's nvJPEG decode) a few batches ahead of the loop; the batches are on
      that GPU. ``"torchvision"`` does the same on the CPU. ``"cpu"`` (the default): the workers
      decode. ``map`` runs after the decode.

    A DataLoader's other keywords: ``pin_memory=True`` goes with ``device="cuda"`` (which
    page-locks the ring's slots and copies each batch a few ahead; without ``device=`` it is
    refused, saying so: Stoker's batches are in shared memory already), ``persistent_workers`` is
    taken (the JVM's workers live as long as the loader), ``prefetch_factor`` with an integer
    ``num_workers`` sets ``prefetch`` to their product; ``worker_init_fn``, ``generator``,
    ``sampler``, ``batch_sampler``, ``multiprocessing_context`` and ``batch_size=None`` are
    refused, each saying what to give instead; ``collate_fn`` is taken (above).

    Defaults that differ from a DataLoader's, and why: ``shuffle`` is on (``order="shuffle"``;
    a training loader shuffles, and Stoker's shuffle costs no memory), with ``seed=0`` (every
    rank and every run agree on the order, as DistributedSampler's seed 0 does; give another seed
    for another order); images get training crops unless ``transform="eval"``; ``num_workers``
    is ``"auto"`` (tuned while running; threads in one JVM, not processes). Rank and world size
    default to torch.distributed's when it is initialized, else to the ``RANK`` and
    ``WORLD_SIZE`` environment variables.
    """


def loader_doc(doc=LOADER):
    """``doc`` (stoker.Loader's) with the loader's options and the list of sources."""
    kinds = ", ".join(f"``{k}``" for k in SOURCES)
    return (f"{doc.rstrip()}\n\n{_INDENT}Options of the loader (the same give the same batches as ``stoker bench``):\n\n"
            f"{_entries(meanings('loader'), _INDENT)}\n\n{_INDENT}Sources: {kinds}; each one's options, with their "
            f"defaults: ``help(stoker.sources.KIND)``.\n")
