"""The README's fidelity table, generated from reproduction runs (app layer).

Every ``placement reproduce`` run writes ``claims.json`` beside ``report.md``. The README holds
one block between two HTML comment markers, regenerated with::

    placement reproduce dally --quick --out reproduce-dally      # and the other papers
    python -m placement.app.reproduce.fidelity README.md reproduce-*/claims.json

which replaces the text between the markers (atomically) and nothing else: one row per claim
(paper, claim, the paper's number, ours as median and min-max over seeds, whether it holds),
and under the table the command each paper's rows came from. Papers are listed in the order
of the files given.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ...errors import InstanceError
from ...io import write_text
from ..report import markdown_table

__all__ = ["BEGIN", "END", "fidelity_block", "replace_block", "main"]

BEGIN = ("<!-- fidelity:begin (generated from `placement reproduce` runs by "
         "`python -m placement.app.reproduce.fidelity`; do not edit by hand) -->")
END = "<!-- fidelity:end -->"
_VERDICT = {True: "yes", False: "no", None: "not judged"}


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "/")


def fidelity_block(docs: list[dict[str, Any]]) -> str:
    """The markdown between the markers, from parsed ``claims.json`` documents."""
    rows = []
    for d in docs:
        for c in d["claims"]:
            rows.append({"paper": d["paper"], "claim": _cell(c["claim"]),
                         "paper's number": _cell(f"{c['paper']} ({c['source']})"),
                         "ours": _cell(c["ours_text"]), "holds": _VERDICT[c["holds"]]})
    lines = [markdown_table(rows, ["paper", "claim", "paper's number", "ours", "holds"]) if rows
             else "(no reproduction run yet)", ""]
    for d in docs:
        runs = (f"`{d['command']}`: {d['seeds']} seeds, {d['elapsed_s']:.0f} s, {d['logs']} logs "
                + ("all passing replay_check" if d["replay_ok"] else "SOME FAILING replay_check"))
        lines.append(f"- {d['paper']}: {runs}.")
    return "\n".join(lines)


def replace_block(text: str, block: str, where: str = "README") -> str:
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        raise InstanceError(where, "must hold the fidelity markers once each, begin before end")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{block}\n{END}{tail}"


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
    if len(args) < 2:
        print("usage: python -m placement.app.reproduce.fidelity README.md CLAIMS.json...", file=sys.stderr)
        return 2
    try:
        docs = [_load(p) for p in args[1:]]
        page = Path(args[0])
        write_text(page, replace_block(page.read_text(), fidelity_block(docs), args[0]))
    except (InstanceError, OSError) as exc:
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
