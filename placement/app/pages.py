"""Generated "Measured" sections of the reference pages: splice stored run fragments into a page.

A page marks each generated section with a pair of markers::

    <!-- measured:NAME:begin -->
    ...
    <!-- measured:NAME:end -->

and the text between them is the fragment ``measured/NAME.md`` in the page's folder: a
markdown table (or list) that a run wrote, its first line naming the command and seeds that
made it. Numbers are changed in the fragment, never in the page: ``python -m
placement.app.pages`` replaces the text between every pair of markers with its fragment and
nothing else, and writes each page atomically (:func:`placement.io.write_text`).

Terms: a *section* is one ``NAME`` with its two markers; a *fragment* is the file that fills
it. NAME is lower-case letters, digits and hyphens.

Command line::

    python -m placement.app.pages                 # every page under placement/ and instances/
    python -m placement.app.pages PAGE.md ...     # only these pages
    python -m placement.app.pages --check         # write nothing; exit 1 if a page differs

Bad input (a marker without its pair, a section twice, a missing fragment) is one line
``error: <page>: <what is wrong>``, exit 2, and no page is written.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from placement.errors import InstanceError
from placement.io import write_text

__all__ = ["MARKER", "begin_marker", "end_marker", "sections", "splice", "splice_page", "pages", "main"]

ROOT = Path(__file__).resolve().parents[2]
MARKER = re.compile(r"<!-- measured:([a-z0-9-]+):(begin|end) -->")


def begin_marker(name: str) -> str:
    return f"<!-- measured:{name}:begin -->"


def end_marker(name: str) -> str:
    return f"<!-- measured:{name}:end -->"


def sections(text: str, where: str = "page") -> list[str]:
    """The section names of ``text`` in order; each must open once and close after it opens,
    with no section inside another (else :class:`InstanceError` naming ``where``)."""
    names: list[str] = []
    open_name = None
    for m in MARKER.finditer(text):
        name, kind = m.group(1), m.group(2)
        if kind == "begin":
            if open_name is not None:
                raise InstanceError(where, f"section {name!r} opens inside section {open_name!r}")
            if name in names:
                raise InstanceError(where, f"section {name!r} appears twice")
            open_name = name
        else:
            if open_name != name:
                raise InstanceError(where, f"section {name!r} closes without its begin marker")
            names.append(name)
            open_name = None
    if open_name is not None:
        raise InstanceError(where, f"section {open_name!r} has no end marker")
    return names


def splice(text: str, fragments: dict[str, str], where: str = "page") -> str:
    """``text`` with the body of every section replaced by its fragment (one newline either
    side of the fragment); text outside the markers is returned unchanged."""
    for name in sections(text, where):
        if name not in fragments:
            raise InstanceError(where, f"section {name!r} has no fragment measured/{name}.md")
        begin, end = begin_marker(name), end_marker(name)
        head, rest = text.split(begin, 1)
        _, tail = rest.split(end, 1)
        text = f"{head}{begin}\n{fragments[name].strip(chr(10))}\n{end}{tail}"
    return text


def _fragments(page: Path, names: list[str]) -> dict[str, str]:
    out = {}
    for name in names:
        path = page.parent / "measured" / f"{name}.md"
        if not path.is_file():
            raise InstanceError(str(page), f"section {name!r} has no fragment {path}")
        out[name] = path.read_text()
    return out


def splice_page(page: Path) -> tuple[str, str]:
    """The page's text now and as its stored fragments make it."""
    text = page.read_text()
    return text, splice(text, _fragments(page, sections(text, str(page))), str(page))


def pages() -> list[Path]:
    """Every markdown page under ``placement/`` and ``instances/`` that holds a section."""
    found = [p for folder in ("placement", "instances") for p in sorted((ROOT / folder).rglob("*.md"))
             if p.parent.name != "measured"]
    return [p for p in found if MARKER.search(p.read_text())]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    check = "--check" in args
    paths = [Path(a) for a in args if a != "--check"] or pages()
    try:
        updates = [(p, *splice_page(p)) for p in paths]
    except (OSError, InstanceError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    stale = [p for p, old, new in updates if old != new]
    if check:
        for p in stale:
            print(f"{p}: its measured sections differ from measured/*.md", file=sys.stderr)
        return 1 if stale else 0
    for p, _, new in updates:
        if p in stale:
            write_text(p, new)
            print(f"updated the measured sections of {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
