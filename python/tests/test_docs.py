"""The docs' Python blocks fenced ``python run`` (README.md's and every page's under docs/), taken
from the files themselves and run, each in a folder of its own: a change that breaks one fails
here (the checkout's files; skipped in an installed package's tests run elsewhere)."""

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"^```python run\n(.*?)^```$", re.S | re.M)


def blocks():
    pages = [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md")) if (ROOT / "docs").is_dir() else []
    return [(f"{page.relative_to(ROOT)}#{i}", code) for page in pages
            for i, code in enumerate(BLOCK.findall(page.read_text(encoding="utf-8")))]


def test_the_docs_have_blocks_that_run():
    if not (ROOT / "docs").is_dir():
        pytest.skip("not a checkout of Stoker")
    assert blocks(), "no block fenced python run in README.md or docs/"


@pytest.mark.parametrize("where, code", blocks(), ids=[w for w, _ in blocks()])
def test_a_docs_block_runs(where, code, tmp_path, monkeypatch):
    pytest.importorskip("torch")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, where, "exec"), {"__name__": "__docs__"})
