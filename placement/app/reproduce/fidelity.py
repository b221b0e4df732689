"""The fidelity tables, generated from reproduction runs (app layer).

Every ``placement reproduce`` run writes ``claims.json`` beside ``report.md``. Two generated blocks
quote them, each between two HTML comment markers:

- the full table, on the reproductions' reference page (``placement/app/reproduce/README.md``,
  markers :data:`BEGIN` / :data:`END`): one row per claim (paper, claim, the paper's number,
  ours as median and min-max over seeds, the verdict of :func:`.claims.verdict`), and under the
  table the command each paper's rows came from (a full run is marked as such);
- the front door's summary (``README.md``, markers :data:`SUMMARY_BEGIN` / :data:`SUMMARY_END`):
  one line per paper, the count of claims per verdict category, with a link to the full table.

Regenerated with::

    placement reproduce dally --quick --out reproduce-dally      # and the other papers
    python -m placement.app.reproduce.fidelity placement/app/reproduce/README.md README.md reproduce-*/claims.json

which replaces the text between the markers each page holds (atomically) and nothing else.
Arguments ending in ``.md`` are pages, the others ``claims.json`` files. A paper with no file
given keeps its rows, its run line and its summary line as the page holds them (so one paper's
new run regenerates its own rows only); the papers keep the page's order, and a paper new to
the page follows them in the order of the files given.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ...errors import InstanceError
from ...io import write_text
from ..report import markdown_table

__all__ = ["BEGIN", "END", "SUMMARY_BEGIN", "SUMMARY_END", "fidelity_block", "summary_block", "replace_block",
           "measured_fragment", "main", "PAGE"]

BEGIN = ("<!-- fidelity:begin (generated from `placement reproduce` runs by "
         "`python -m placement.app.reproduce.fidelity`; do not edit by hand) -->")
END = "<!-- fidelity:end -->"
SUMMARY_BEGIN = ("<!-- fidelity-summary:begin (generated from `placement reproduce` runs by "
                 "`python -m placement.app.reproduce.fidelity`; do not edit by hand) -->")
SUMMARY_END = "<!-- fidelity-summary:end -->"
PAGE = Path(__file__).resolve().parent / "README.md"   # the reproductions' reference page
_LEGACY = {True: "yes (own rule)", False: "no (own rule)", None: "not judged"}


def _verdict(c: dict[str, Any]) -> str:
    """A row's verdict category; a ``claims.json`` written before the contract has only ``holds``."""
    v = c.get("verdict")
    return v if isinstance(v, str) else _LEGACY.get(c.get("holds"), "not judged")


def _counts(d: dict[str, Any]) -> dict[str, int]:
    from .claims import VERDICTS

    got = [_verdict(c) for c in d["claims"]]
    order = list(VERDICTS) + sorted({g for g in got if g not in VERDICTS})
    return {v: got.count(v) for v in order if got.count(v)}


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "/")


def fidelity_block(docs: list[dict[str, Any]]) -> str:
    """The markdown between the markers, from parsed ``claims.json`` documents."""
    rows = []
    for d in docs:
        for c in d["claims"]:
            reading = f" [{c['reading']}]" if c.get("reading") else ""
            rows.append({"paper": d["paper"], "claim": _cell(c["claim"] + reading),
                         "paper's number": _cell(f"{c['paper']} ({c['source']})"),
                         "ours": _cell(c["ours_text"]), "verdict": _verdict(c)})
    lines = [markdown_table(rows, ["paper", "claim", "paper's number", "ours", "verdict"]) if rows
             else "(no reproduction run yet)", ""]
    for d in docs:
        runs = (f"`{d['command']}`{'' if d.get('quick') else ' (full run)'}: {d['seeds']} seeds, "
                f"{d['elapsed_s']:.0f} s, {d['logs']} logs "
                + ("all passing replay_check" if d["replay_ok"] else "SOME FAILING replay_check"))
        lines.append(f"- {d['paper']}: {runs}.")
    return "\n".join(lines)


def measured_fragment(doc: dict[str, Any]) -> str:
    """A run's ``measured/<paper>-reproduce.md`` (written beside its ``claims.json``): the run, its
    verdict counts, its knobs' statuses and one row per claim -- the generated "Measured" section of
    the paper's reference page (``python -m placement.app.pages --from DIR`` splices it in)."""
    counts = ", ".join(f"{n} {v}" for v, n in _counts(doc).items()) or "no claims"
    knobs = doc.get("knobs") or {}
    head = (f"From `{doc['command']}`: {doc['seeds']} seeds, {doc['elapsed_s']:,.0f} s, {doc['logs']} logs "
            + ("all passing `replay_check`" if doc["replay_ok"] else "SOME FAILING `replay_check`")
            + f". Verdicts ({len(doc['claims'])} claims): {counts}."
            + (" Knobs: " + "; ".join(f"{k} {v}" for k, v in knobs.items()) + "." if knobs else ""))
    rows = [{"claim": _cell(c["claim"] + (f" [{c['reading']}]" if c.get("reading") else "")),
             "paper": _cell(f"{c['paper']} ({c['source']})"), "ours": _cell(c["ours_text"]), "verdict": _verdict(c)}
            for c in doc["claims"]]
    return head + ("\n\n" + markdown_table(rows, ["claim", "paper", "ours", "verdict"]) if rows else "") + "\n"


def summary_block(docs: list[dict[str, Any]], link: str) -> str:
    """One line per paper: its claims per verdict category, the run, a link to the table."""
    lines = []
    for d in docs:
        counts = ", ".join(f"{n} {v}" for v, n in _counts(d).items()) or "no claims"
        lines.append(f"- **{d['paper']}**: {len(d['claims'])} claims: {counts}"
                     + f"; `{d['command']}`, {d['seeds']} seeds, {d['logs']} logs "
                     + ("all passing replay_check" if d["replay_ok"] else "SOME FAILING replay_check")
                     + f" ([claims]({link}))")
    return "\n".join(lines) if lines else "(no reproduction run yet)"


def _has(text: str, begin: str, end: str) -> bool:
    return begin in text or end in text


def replace_block(text: str, block: str, where: str = "README", begin: str = BEGIN, end: str = END) -> str:
    if text.count(begin) != 1 or text.count(end) != 1 or text.index(begin) > text.index(end):
        raise InstanceError(where, "must hold the fidelity markers once each, begin before end")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{block}\n{end}{tail}"


def _block_of(text: str, begin: str, end: str) -> str:
    """The text between the markers (the markers checked by :func:`replace_block`)."""
    if text.count(begin) != 1 or text.count(end) != 1 or text.index(begin) > text.index(end):
        return ""
    return text.split(begin, 1)[1].split(end, 1)[0]


def _table_parts(block: str) -> tuple[list[str], dict[str, list[str]], dict[str, str]]:
    """(the papers in order, each paper's table rows, each paper's run line) of a fidelity block."""
    order: list[str] = []
    rows: dict[str, list[str]] = {}
    runs: dict[str, str] = {}
    lines = [ln for ln in block.splitlines() if ln.strip()]
    for ln in lines[2:] if len(lines) > 1 and lines[1].startswith("|---") else []:
        if ln.startswith("| "):
            paper = ln.split("|")[1].strip()
            if paper not in rows:
                order.append(paper)
            rows.setdefault(paper, []).append(ln)
    for ln in lines:
        if ln.startswith("- ") and ": " in ln and not ln.startswith("- **"):
            paper = ln[2:].split(":", 1)[0]
            runs[paper] = ln
            if paper not in rows:
                order.append(paper)
                rows[paper] = []
    return order, rows, runs


def _merged_table(old: str, new: str) -> str:
    """``new``'s rows and run lines, with the rows and run lines of ``old``'s other papers kept."""
    o_order, o_rows, o_runs = _table_parts(old)
    n_order, n_rows, n_runs = _table_parts(new)
    kept = [p for p in o_order if p not in n_rows]
    if not kept:
        return new
    order = [p for p in o_order if p in n_rows or p in kept] + [p for p in n_order if p not in o_order]
    head = next((ln for ln in new.splitlines() if ln.startswith("| paper |")), None)
    head = head or next((ln for ln in old.splitlines() if ln.startswith("| paper |")), "")
    sep = "|" + "---|" * (head.count("|") - 1)
    body = [ln for p in order for ln in (n_rows[p] if p in n_rows else o_rows[p])]
    runs = [(n_runs if p in n_rows else o_runs).get(p) for p in order]
    return "\n".join([head, sep, *body, "", *[r for r in runs if r]])


def _merged_summary(old: str, new: str) -> str:
    """``new``'s summary lines, with ``old``'s lines of the other papers kept in their place."""
    def parts(block):
        got = {}
        for ln in block.splitlines():
            if ln.startswith("- **") and "**" in ln[4:]:
                got[ln[4:].split("**", 1)[0]] = ln
        return got

    o, n = parts(old), parts(new)
    if not n or all(p in n for p in o):
        return new
    order = list(o) + [p for p in n if p not in o]
    return "\n".join(n.get(p, o.get(p)) for p in order)


def regenerate(page: Path, docs: list[dict[str, Any]]) -> str:
    """The page's text with every generated block it holds replaced (at least one); papers
    without a document keep their rows and lines (module doc)."""
    import os

    text = page.read_text()
    if not _has(text, BEGIN, END) and not _has(text, SUMMARY_BEGIN, SUMMARY_END):
        raise InstanceError(str(page), "must hold the fidelity markers once each, begin before end")
    if _has(text, BEGIN, END):
        block = _merged_table(_block_of(text, BEGIN, END), fidelity_block(docs))
        text = replace_block(text, block, str(page))
    if _has(text, SUMMARY_BEGIN, SUMMARY_END):
        link = Path(os.path.relpath(PAGE, page.resolve().parent)).as_posix() + "#fidelity-table"
        block = _merged_summary(_block_of(text, SUMMARY_BEGIN, SUMMARY_END), summary_block(docs, link))
        text = replace_block(text, block, str(page), SUMMARY_BEGIN, SUMMARY_END)
    return text


def _load(path: str) -> dict[str, Any]:
    from ...io import read_document

    doc = read_document(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("claims"), list):
        raise InstanceError(path, "must be a claims.json written by `placement reproduce`")
    for key in ("paper", "command", "seeds", "elapsed_s", "logs", "replay_ok"):
        if key not in doc:
            raise InstanceError(f"{path}: {key}", "missing")
    return doc


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print("usage: python -m placement.app.reproduce.fidelity PAGE.md [PAGE.md...] CLAIMS.json...", file=sys.stderr)
        return 2
    pages = [Path(args[0])] + [Path(a) for a in args[1:] if a.endswith(".md")]
    claims = [a for a in args[1:] if not a.endswith(".md")]
    try:
        if not claims:
            raise InstanceError("CLAIMS", "give at least one claims.json written by `placement reproduce`")
        docs = [_load(p) for p in claims]
        texts = [(page, regenerate(page, docs)) for page in pages]  # every page checked before any is written
        for page, text in texts:
            write_text(page, text)
    except (InstanceError, OSError) as exc:
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
