"""Options are checked in Python, before any JVM work, and become specs (SpecContractTest, in Java, holds the
tables to the specs)."""

import os
import pathlib
import re

import pytest

import stoker
from stoker import _options


@pytest.fixture
def no_server(monkeypatch):
    """Fails the test if a server is started."""
    import stoker._process

    def refuse(*a, **k):
        raise AssertionError("a server was started")

    monkeypatch.setattr(stoker._process, "Server", refuse)


@pytest.mark.parametrize("options, named", [
    (dict(seq_lenn=1024), "seq_lenn"),
    (dict(batch=0), "batch"),
    (dict(batch_size="32"), "batch_size"),
    (dict(workers=-1), "workers"),
    (dict(windows="sliding"), "windows"),
    (dict(shuffle="yes"), "shuffle"),
    (dict(drop_last=1), "drop_last"),
    (dict(errors="ignore"), "errors"),
    (dict(transform="train224"), "transform"),
])
def test_a_bad_option_raises_value_error_naming_it_before_any_jvm_work(no_server, options, named):
    with pytest.raises(ValueError, match=re.escape(f"'{named}'")):
        stoker.Loader("tokens", "train.bin", **options)


def test_an_unknown_option_suggests_the_near_one(no_server):
    with pytest.raises(ValueError, match="did you mean 'seq_len'"):
        stoker.Loader("tokens", "train.bin", seqlen=8)


def test_an_unknown_source_or_missing_paths_are_refused(no_server):
    with pytest.raises(ValueError, match="unknown source"):
        stoker.Loader("images", "x")
    with pytest.raises(ValueError, match="needs at least one path"):
        stoker.Loader("tokens")
    with pytest.raises(ValueError, match="rank 2 is not in a world of 2"):
        stoker.Loader("synthetic", rank=2, world_size=2)


def test_pytorch_names_are_aliases(no_server):
    spec = _options.spec("tokens", ["a.bin"], dict(batch=8, num_workers=2, drop_last=True))
    assert spec == {"source": {"kind": "tokens", "paths": [os.path.abspath("a.bin")]},
                    "loader": {"batch_size": 8, "workers": 2, "drop_last": True}}
    with pytest.raises(ValueError, match="given twice"):
        _options.spec("tokens", ["a.bin"], dict(batch_size=8, batch=8))


def test_image_and_cache_options_go_to_their_nested_specs(no_server):
    spec = _options.spec("shards", ["s-{0..3}.tar"], dict(size=176, scale=(0.35, 1), shard_cache_bytes=10 ** 9, workers="auto"))
    assert spec == {"source": {"kind": "shards", "paths": [os.path.abspath("s-{0..3}.tar")], "images": {"size": 176, "scale": [0.35, 1.0]},
                               "cache": {"shard_cache_bytes": 10 ** 9}},
                    "loader": {"workers": None}}
    assert _options.spec("jsonl", ["a.jsonl"], dict(skip_bad=True))["loader"] == {"errors": "skip-sample"}
    assert _options.spec("hdf5", ["a.h5"], dict(dataset="/x"))["source"] == {"kind": "hdf5", "path": os.path.abspath("a.h5"),
                                                                              "datasets": ["/x"]}


def test_a_source_value_holds_the_source_options_and_the_loader_the_rest(no_server):
    train = stoker.sources.tokens("a.bin", seq_len=8, out_dtype="int32")
    assert train == stoker.sources.tokens("a.bin", out_dtype="int32", seq_len=8)
    assert train.spec == {"kind": "tokens", "paths": [os.path.abspath("a.bin")], "seq_len": 8, "out_dtype": "int32"}
    assert stoker.Loader(train, batch_size=4)._spec["source"] == train.spec
    with pytest.raises(ValueError, match="'batch_size' is the loader's"):
        stoker.sources.tokens("a.bin", batch_size=4)
    with pytest.raises(ValueError, match="'seq_len' is the source's"):
        stoker.Loader(train, seq_len=16)
    with pytest.raises(ValueError, match="'seq_lenn'"):
        stoker.sources.tokens("a.bin", seq_lenn=16)
    assert len({train, stoker.sources.tokens("a.bin", out_dtype="int32", seq_len=8)}) == 1, "equal values hash alike"
    h5 = stoker.sources.hdf5("a.h5", dataset=["/x"])
    assert stoker.Loader(h5, batch_size=4)._spec["source"] == {"kind": "hdf5", "path": os.path.abspath("a.h5"),
                                                                 "datasets": ["/x"]}
    assert stoker.Loader(stoker.sources.jsonl("a.jsonl"), skip_bad=True)._spec["loader"]["errors"] == "skip-sample"


def test_rank_and_world_size_come_from_the_environment_unless_given(no_server, monkeypatch):
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "3")
    loader = stoker.Loader("tokens", "a.bin")._spec["loader"]
    assert (loader["rank"], loader["world_size"]) == (1, 3)
    loader = stoker.Loader("tokens", "a.bin", rank=0, world_size=2)._spec["loader"]
    assert (loader["rank"], loader["world_size"]) == (0, 2)


def test_help_holds_every_option_with_its_meaning():
    """help(stoker.sources.KIND) and help(stoker.Loader) name every option the specs take, each
    with the command line's meaning (_schema.json), so an installed wheel's help is complete."""
    import stoker
    from stoker import _help, _options
    schema = _options.schema()
    for kind, options in schema["sources"].items():
        doc = getattr(stoker.sources, kind).__doc__
        for name in options:
            assert f"- ``{name}``: " in doc, f"help(stoker.sources.{kind}) says nothing of {name}"
            assert _help.meanings(kind)[name].split()[0] in doc
    for name in schema["loader"]:
        assert f"- ``{name}``: " in stoker.Loader.__doc__, f"help(stoker.Loader) says nothing of {name}"


def test_local_paths_and_folders_are_the_callers_urls_stay_as_given(no_server, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    spec = _options.spec("jsonl", ["d/a.jsonl", "s3://bucket/b.jsonl", pathlib.Path("c.jsonl")],
                         dict(window_cache="./windows", shard_cache="shards"))
    assert spec["source"] == {"kind": "jsonl", "paths": [str(tmp_path / "d/a.jsonl"), "s3://bucket/b.jsonl",
                                                         str(tmp_path / "c.jsonl")],
                              "window_cache": str(tmp_path / "windows"), "cache": {"shard_cache": str(tmp_path / "shards")}}
    images = _options.spec("shards", ["x.tar"], dict(image_cache=pathlib.Path("kept")))["source"]["images"]
    assert images == {"image_cache": str(tmp_path / "kept")}


@pytest.mark.parametrize("option, value, words", [("image_cache", "bogus", "'ram' or 'disk'"), ("cache", "Disk", "'ram' or 'disk'"),
                                                  ("window_cache", "ram", "'disk'")])
def test_a_word_that_is_no_mode_of_a_folder_option_is_refused_not_made_a_folder(no_server, option, value, words):
    source = "jsonl" if option == "window_cache" else "shards"
    with pytest.raises(ValueError, match=f"'{option}' must be {words}, or a folder: a path with a '/'"):
        stoker.Loader(source, "x", **{option: value})
    assert _options.spec("shards", ["x.tar"], dict(image_cache="disk"))["source"]["images"] == {"image_cache": "disk"}


def test_a_path_that_is_no_string_is_refused_naming_the_source_and_the_value(no_server):
    with pytest.raises(ValueError, match=r"stoker.sources.tokens: source 'tokens' takes paths or URLs \(strings or "
                                         r"os.PathLike\), got 123 \(int\)"):
        stoker.sources.tokens(123)
    with pytest.raises(ValueError, match=r"stoker.Loader: .* got None \(NoneType\)"):
        stoker.Loader("shards", None)


def test_a_source_prints_without_the_secrets_of_its_urls(no_server):
    train = stoker.sources.shards("https://alice:s3cr3t@host/x-{0..2}.tar?X-Amz-Date=1&X-Amz-Signature=f00d",
                                  "s3://b/y.tar?X-Amz-Security-Token=t0k")
    text = repr(train) + str(train)
    assert "s3cr3t" not in text and "f00d" not in text and "t0k" not in text, text
    assert "alice:***@host" in text and "X-Amz-Signature=***" in text and "X-Amz-Date=1" in text, text
    for call in (lambda: stoker.Loader("synthetic", "https://alice:s3cr3t@host/x.tar"),
                 lambda: stoker.Loader(train, "https://alice:s3cr3t@host/x.tar")):
        with pytest.raises(ValueError) as e:
            call()
        assert "s3cr3t" not in str(e.value) and "alice:***@host" in str(e.value), str(e.value)


# NOTE [A DataLoader's keywords]: each taken where it means something, else refused saying what to give

def loader_spec(**options):
    return stoker.Loader("tokens", "t.bin", seq_len=8, **options)._spec["loader"]


def test_dataloader_keywords_that_mean_something_are_taken(no_server):
    assert loader_spec(persistent_workers=True) == loader_spec()
    assert loader_spec(persistent_workers=False) == loader_spec()
    assert loader_spec(pin_memory=False) == loader_spec()
    assert loader_spec(num_workers=3, prefetch_factor=2)["prefetch"] == 6, "as many ahead as a DataLoader's"
    assert loader_spec(prefetch_factor=None, sampler=None, collate_fn=None, worker_init_fn=None, generator=None,
                       batch_sampler=None, in_order=True) == loader_spec(), "a DataLoader's defaults ask for nothing"


@pytest.mark.parametrize("options, says", [
    (dict(pin_memory=True), "device='cuda'"),
    (dict(pin_memory="yes"), "True or False"),
    (dict(persistent_workers=1), "True or False"),
    (dict(prefetch_factor=2), "prefetch=N"),
    (dict(prefetch_factor=2, num_workers=2, prefetch=4), "not both"),
    (dict(prefetch_factor=0, num_workers=2), ">= 1"),
    (dict(worker_init_fn=print), "map="),
    (dict(generator=object()), "seed=generator.initial_seed()"),
    (dict(sampler=[1, 2]), "world_size="),
    (dict(batch_sampler=[1, 2]), "batch_size="),
    (dict(collate_fn=print, python_workers=2, as_numpy=True), "give python_workers=0"),
    (dict(multiprocessing_context="spawn"), "threads of one JVM"),
    (dict(batch_size=None), "give batch_size=N"),
])
def test_other_dataloader_keywords_are_refused_saying_what_to_give(no_server, options, says):
    with pytest.raises(ValueError) as e:
        stoker.Loader("tokens", "t.bin", seq_len=8, **options)
    message = str(e.value)
    assert says in message, message
    assert "did you mean" not in message and "for source" not in message, message


def test_a_hint_is_never_an_option_of_another_meaning(no_server):
    with pytest.raises(ValueError) as e:
        stoker.Loader("tokens", "t.bin", seq_len=8, pin_memory=True)
    assert "'in_memory'" not in str(e.value) and "did you mean" not in str(e.value)
    with pytest.raises(ValueError, match="did you mean 'in_memory'"):
        stoker.Loader("tokens", "t.bin", seq_len=8, in_memroy=True)
    with pytest.raises(ValueError, match="did you mean 'ring_bytes'"):
        stoker.Loader("tokens", "t.bin", seq_len=8, ring_byte=1 << 20)
    with pytest.raises(ValueError) as e:
        stoker.Loader("tokens", "t.bin", seq_len=8, zzz=1)
    assert "did you mean" not in str(e.value)


def test_another_sources_option_says_whose_it_is(no_server):
    with pytest.raises(ValueError, match="'size' is not one of source 'tokens'; it is of 'shards', 'folder'"):
        stoker.Loader("tokens", "t.bin", seq_len=8, size=160)


def test_the_caches_earlier_names_are_taken_as_their_names_now(no_server, tmp_path, monkeypatch):
    """One scheme: a cache is named by what it keeps (image_cache, shard_cache, decoded_cache_mb,
    window_cache); the names it had before are aliases, the same spec, and both at once is an error."""
    monkeypatch.chdir(tmp_path)
    old = _options.spec("shards", ["x.tar"], dict(cache="ram", cache_max_side=512, cache_bytes=1 << 30,
                                                  cache_dir="./c", cache_size=1 << 20))
    new = _options.spec("shards", ["x.tar"], dict(image_cache="ram", image_cache_max_side=512,
                                                  image_cache_bytes=1 << 30, shard_cache="./c", shard_cache_bytes=1 << 20))
    assert old == new
    assert new["source"]["images"] == {"image_cache": "ram", "image_cache_max_side": 512, "image_cache_bytes": 1 << 30}
    assert new["source"]["cache"] == {"shard_cache": str(tmp_path / "c"), "shard_cache_bytes": 1 << 20}
    assert _options.spec("parquet", ["t.parquet"], dict(cache_mb=64))["source"]["decoded_cache_mb"] == 64
    with pytest.raises(ValueError, match="given twice"):
        _options.spec("shards", ["x.tar"], dict(cache="ram", image_cache="disk"))
    with pytest.raises(ValueError, match="image_cache|'cache'"):
        _options.spec("shards", ["x.tar"], dict(cache="rma"))
