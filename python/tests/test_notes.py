"""Every ``NOTE [X]`` that the code and the docs name is written down somewhere: a comment
``NOTE [X]: ...`` in the code, or a paragraph ``**NOTE [X].**`` in the design docs. A NOTE renamed
or removed without its references fails here (the checkout's files; skipped in an installed
package's tests run elsewhere)."""

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SUFFIXES = {".java", ".py", ".md", ".c", ".h", ".sh"}
SKIP = {"target", ".git", "build", "__pycache__", "node_modules"}
# a line break inside a name, with what a comment or a list puts at the next line's start
BREAK = re.compile(r"\s*\n\s*(?:\*|//|#|-)?\s*")
DEFINED = re.compile(r"NOTE \[([^\]]+)\]:|\*\*NOTE \[([^\]]+)\]\.?\*\*")
NAMED = re.compile(r"NOTE \[([^\]]+)\]")


def sources():
    for path in ROOT.rglob("*"):
        if any(part in SKIP for part in path.relative_to(ROOT).parts) or not path.is_file():
            continue
        if path.suffix in SUFFIXES or path.name in ("stoker", "test") and path.parent == ROOT:
            yield path


def test_every_note_named_is_written_down():
    if not (ROOT / "docs" / "design").is_dir():
        pytest.skip("not a checkout of Stoker")
    defined, named = set(), {}
    for path in sources():
        text = BREAK.sub(" ", path.read_text(encoding="utf-8", errors="replace"))
        for m in DEFINED.finditer(text):
            defined.add(m.group(1) or m.group(2))
        for m in NAMED.finditer(text):
            named.setdefault(m.group(1), str(path.relative_to(ROOT)))
    assert len(defined) > 50, f"only {len(defined)} NOTEs found: the scan is broken"
    missing = {name: where for name, where in named.items() if name not in defined}
    assert not missing, "NOTEs named but written nowhere (name: a file naming it): " + repr(missing)
