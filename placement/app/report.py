"""Report helpers of the app layer: number formatting, markdown tables, PNG figures, and the
bench page's generated figures section.

Generated figures
-----------------
Every ``placement bench`` run writes ``figures.md`` in its output folder: the run's summary
lines (the figures the reference pages quote), one block per family, between two HTML comment markers.
``placement/app/bench/README.md`` holds one such block, copied verbatim from a run; it is
regenerated with::

    placement bench --out bench-results
    python -m placement.app.report placement/app/bench/README.md bench-results/figures.md

which replaces the text between the markers (atomically) and nothing else. The format is fixed
by :func:`figures_section` and read back by :func:`parse_figures_section`; a test requires the
page's block to be exactly what :func:`figures_section` renders from its parsed content.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
from pathlib import Path
from typing import Any

from ..io import write_bytes, write_text

__all__ = ["agg_backend", "fmt", "markdown_table", "save_figure", "figures_section", "parse_figures_section",
           "replace_figures_section", "BEGIN", "END"]

BEGIN = "<!-- bench-figures:begin (written by `placement bench` in figures.md; do not edit by hand) -->"
END = "<!-- bench-figures:end -->"
_RUN = re.compile(r"^Run: `(?P<command>placement bench[^`]*)`, (?P<elapsed>\d+) s in all on (?P<machine>[^.]+)\.$")


def fmt(v: Any) -> str:
    """A table cell: ``-`` for missing values, 4 significant digits for floats."""
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def markdown_table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    """A GitHub markdown table of ``rows`` restricted to ``columns`` (missing cells print ``-``)."""
    out = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    out += ["| " + " | ".join(fmt(r.get(c)) for c in columns) + " |" for r in rows]
    return "\n".join(out)


def save_figure(fig, out_dir: str | Path, name: str, dpi: int = 110) -> str:
    """Write a matplotlib figure as PNG atomically, close it, and return its file name."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    plt.close(fig)
    write_bytes(Path(out_dir) / name, buf.getvalue())
    return name


def figures_section(command: str, elapsed_s: float, machine: str, families: dict[str, list[str]]) -> str:
    """The generated figures block: a run line, then per family a ``**family**`` line and its bullets."""
    if "\n" in command or "`" in command or "." in machine or "\n" in machine:
        raise ValueError("command and machine must be single lines (machine without '.')")
    lines = [BEGIN, f"Run: `{command}`, {round(elapsed_s)} s in all on {machine}."]
    for fam, bullets in families.items():
        lines += ["", f"**{fam}**", ""] + [f"- {' '.join(b.split())}" for b in bullets]
    return "\n".join(lines + [END]) + "\n"


def parse_figures_section(text: str) -> dict[str, Any]:
    """Read a block written by :func:`figures_section` (the first one in ``text``); ``ValueError`` if malformed."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise ValueError("no generated figures section (markers missing or out of order)")
    body = text[start + len(BEGIN):end].strip("\n").split("\n")
    m = _RUN.match(body[0]) if body else None
    if m is None:
        raise ValueError(f"the first line must be the run line, got {body[:1]!r}")
    families: dict[str, list[str]] = {}
    current = None
    for line in body[1:]:
        if not line:
            continue
        if line.startswith("**") and line.endswith("**"):
            current = line[2:-2]
            families[current] = []
        elif line.startswith("- ") and current is not None:
            families[current].append(line[2:])
        else:
            raise ValueError(f"unexpected line in the figures section: {line!r}")
    return {"command": m["command"], "elapsed_s": float(m["elapsed"]), "machine": m["machine"], "families": families}


def replace_figures_section(readme: str, section: str) -> str:
    """``readme`` with its generated block replaced by ``section`` (exactly one block must exist)."""
    if readme.count(BEGIN) != 1 or readme.count(END) != 1:
        raise ValueError("the page must hold exactly one generated figures section")
    start, end = readme.index(BEGIN), readme.index(END) + len(END)
    return readme[:start] + section.rstrip("\n") + readme[end:]


@contextlib.contextmanager
def agg_backend():
    """Draw the files' figures with Agg, then give the caller's backend back (a notebook keeps
    its inline plots; the reproductions and the sweep select Agg for themselves). The caller's
    backend is loaded first: in a Jupyter kernel, loading the inline backend while it is the
    selected one is what registers the figures' PNG display, which a backend switched back to
    later would lack (a notebook's first plot after a bench would show as text)."""
    import matplotlib
    import matplotlib.pyplot as plt

    before = matplotlib.get_backend()
    with contextlib.suppress(Exception):
        plt.switch_backend(before)
    try:
        yield
    finally:
        if matplotlib.get_backend() != before:
            with contextlib.suppress(Exception):
                matplotlib.use(before)


def main(argv: list[str] | None = None) -> int:
    """``python -m placement.app.report PAGE.md bench-results/figures.md``: update the page's block."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m placement.app.report PAGE.md FIGURES.md", file=sys.stderr)
        return 2
    readme, figures = (Path(a) for a in args)
    try:
        section = Path(figures).read_text()
        parse_figures_section(section)
        new = replace_figures_section(readme.read_text(), section)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    write_text(readme, new)
    print(f"updated the generated figures section of {readme}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
