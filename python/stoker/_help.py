"""The options' help, as the command line gives it: ``_reference.json`` (written from the CLI's own
descriptions of ``stoker bench KIND``, and held to them by a test) made into the docstrings of
``stoker.Loader`` and of each ``stoker.sources`` function, so that ``help()`` of an installed
package holds every option with its default and meaning."""

import json
import os
import textwrap

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "_reference.json"), encoding="utf-8") as _f:
    REFERENCE = json.load(_f)

_INDENT = "    "


def _entries(options, indent):
    lines = []
    for name, meaning in options.items():
        lines += textwrap.wrap(f"- ``{name}``: {meaning}", width=96, initial_indent=indent,
                               subsequent_indent=indent + "  ", break_on_hyphens=False)
    return "\n".join(lines)


def source_doc(kind, doc):
    """``doc`` (a source function's own line) with the source's summary and every option it takes."""
    entry = REFERENCE["sources"][kind]
    summary = "\n".join(textwrap.wrap(entry["summary"], width=96, initial_indent=_INDENT, subsequent_indent=_INDENT))
    return (f"{doc.rstrip()}\n\n{summary}\n\n{_INDENT}Options (keywords; ``stoker bench {kind} --help`` has the same, "
            f"dashed):\n\n{_entries(entry['options'], _INDENT)}\n\n{_INDENT}The loader's options go to "
            f"``stoker.Loader``: ``help(stoker.Loader)``.\n")


def loader_doc(doc):
    """``doc`` (stoker.Loader's) with the loader's options and the list of sources."""
    kinds = ", ".join(f"``{k}``" for k in REFERENCE["sources"])
    return (f"{doc.rstrip()}\n\n{_INDENT}Options of the loader (the same give the same batches as ``stoker bench``):\n\n"
            f"{_entries(REFERENCE['loader'], _INDENT)}\n\n{_INDENT}Sources: {kinds}; each one's options, with their "
            f"defaults: ``help(stoker.sources.KIND)``.\n")
