"""Options are checked in Python, before any JVM work, and match the CLI's."""

import re

import pytest

import stoker
from stoker import _options
from conftest import stoker_cli


@pytest.fixture
def no_server(monkeypatch):
    """Fails the test if a server is started."""
    import stoker.loader

    def refuse(*a, **k):
        raise AssertionError("a server was started")

    monkeypatch.setattr(stoker.loader, "Server", refuse)


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
    args = _options.command_line("tokens", ["a.bin"], dict(batch_size=8, num_workers=2, drop_last=True))
    assert args == ["tokens", "a.bin", "--batch", "8", "--workers", "2", "--drop-last"]
    with pytest.raises(ValueError, match="given twice"):
        _options.command_line("tokens", ["a.bin"], dict(batch_size=8, batch=8))


def cli_options(source):
    """The long options `stoker bench SOURCE --help` lists."""
    text = stoker_cli("bench", source, "--help").stdout
    return {m.group(1) for m in re.finditer(r"--([a-z][a-z0-9-]*)", text)}


# the bench loop's own options, and help: no meaning for a loader in a training loop; and the
# Parquet decompression ceiling, a benchmark's yardstick
BENCH_ONLY = {"json", "digest", "no-digest", "digests", "ids", "stop-after", "save-state", "resume", "plot", "trace", "steps",
              "step-ms", "epochs", "help", "version", "debug", "ceiling"}


@pytest.mark.parametrize("source", sorted(_options.SOURCES))
def test_the_python_table_matches_the_cli(source):
    python = {n.replace("_", "-") for n in dict(_options.COMMON, **_options.SOURCES[source][1])}
    cli = cli_options(source) - BENCH_ONLY
    assert python == cli, f"only in Python: {python - cli}; only in the CLI: {cli - python}"


def test_rank_and_world_size_come_from_the_environment_unless_given(no_server, monkeypatch):
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "3")
    args = stoker.Loader("tokens", "a.bin")._args
    assert args[args.index("--rank") + 1] == "1" and args[args.index("--world-size") + 1] == "3"
    args = stoker.Loader("tokens", "a.bin", rank=0, world_size=2)._args
    assert args[args.index("--rank") + 1] == "0" and args[args.index("--world-size") + 1] == "2"
