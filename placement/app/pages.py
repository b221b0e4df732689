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
    python -m placement.app.pages --from RUN_DIR  # first copy RUN_DIR/measured/NAME.md beside its page

A section name is unique over all pages, so a run that writes ``measured/NAME.md`` into its
output folder names the page it belongs to; ``--from`` copies each such fragment into that
page's ``measured/`` folder before splicing. Bad input (a marker without its pair, a section
twice, a missing fragment, a run's fragment no page has a section for) is one line
``error: <page>: <what is wrong>``, exit 2, and nothing is written.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from placement.errors import InstanceError
from placement.io import write_text

__all__ = ["MARKER", "begin_marker", "end_marker", "sections", "splice", "splice_page", "pages", "owners",
           "main"]

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


def owners(paths: list[Path]) -> dict[str, Path]:
    """Each section name of ``paths`` and the page that holds it (a name on two pages is an error)."""
    out: dict[str, Path] = {}
    for page in paths:
        for name in sections(page.read_text(), str(page)):
            if name in out:
                raise InstanceError(str(page), f"section {name!r} is also on {out[name]}")
            out[name] = page
    return out


def _copy_run_fragments(run_dir: Path, paths: list[Path]) -> list[tuple[Path, str]]:
    """The (destination, text) of every ``run_dir/measured/*.md``, each beside its page."""
    found = sorted((run_dir / "measured").glob("*.md"))
    if not found:
        raise InstanceError(str(run_dir), "holds no measured/*.md fragment")
    by_name = owners(paths)
    out = []
    for frag in found:
        if frag.stem not in by_name:
            raise InstanceError(str(frag), "no page has a section of this name")
        out.append((by_name[frag.stem].parent / "measured" / frag.name, frag.read_text()))
    return out


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    run_dir = None
    if "--from" in args:
        i = args.index("--from")
        if i + 1 >= len(args):
            print("error: --from: give the folder of a run", file=sys.stderr)
            return 2
        run_dir = Path(args[i + 1])
        del args[i:i + 2]
    paths = [Path(a) for a in args if a != "--check"] or pages()
    try:
        copies = _copy_run_fragments(run_dir, paths) if run_dir is not None else []
        owners(paths)
        staged = {dest: text for dest, text in copies}
        updates = []
        for p in paths:
            text = p.read_text()
            names = sections(text, str(p))
            frags = _fragments(p, [n for n in names if p.parent / "measured" / f"{n}.md" not in staged])
            frags.update({d.stem: s for d, s in staged.items() if d.parent.parent == p.parent and d.stem in names})
            updates.append((p, text, splice(text, frags, str(p))))
    except (OSError, InstanceError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if check:
        stale = [p for p, old, new in updates if old != new]
        for p in stale:
            print(f"{p}: its measured sections differ from measured/*.md", file=sys.stderr)
        return 1 if stale else 0
    for dest, text in copies:
        write_text(dest, text)
    stale = [p for p, old, new in updates if old != new]
    for p, _, new in updates:
        if p in stale:
            write_text(p, new)
            print(f"updated the measured sections of {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
