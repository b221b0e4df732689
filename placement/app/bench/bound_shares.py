"""Each Tetris lower bound's share of the proven optimum on the instance library's largest proven instances.

``python -m placement.app.bench.bound_shares [MIN_TABLES] [OUT]`` runs the decompositions that
scale to 100,000 tables (``lagrange``, ``forest``, ``reach``: 10 s each) and the LP (60 s) on every
``optimal`` Tetris row of ``instances/library/manifest.csv`` with at least ``MIN_TABLES`` tables
(default 40), checks each bound against the proven optimum (a bound above it is an error, never a
row), and writes ``OUT/measured/bounds-largest-proven.md`` (default ``bound-shares``), the fragment of
the Tetris bounds page (``python -m placement.app.pages --from OUT``).
"""

from __future__ import annotations

import csv
import json
import statistics
import sys
from pathlib import Path

from ...io import write_text

METHODS = (("lagrange", 10.0), ("forest", 10.0), ("reach", 10.0), ("lp", 60.0))
LIBRARY = Path(__file__).resolve().parents[3] / "instances" / "library"


def shares(min_tables: int = 40, methods=METHODS, library: Path = LIBRARY) -> list[dict]:
    """One row per proven library instance of at least ``min_tables`` tables: its optimum and each
    method's certified bound (raises when a bound exceeds the optimum)."""
    from placement.models import tetris_bound
    from placement.tetris import load_instance

    rows = []
    with open(library / "manifest.csv", newline="") as f:
        manifest = [r for r in csv.DictReader(f) if r["family"] == "tetris" and r["status"] == "optimal"]
    for r in manifest:
        inst = load_instance(json.loads((library / "tetris" / f"{r['name']}.json").read_text()))
        if inst.n_tables < min_tables:
            continue
        opt = float(r["objective"])
        row = {"instance": r["name"], "tables": inst.n_tables, "optimum": opt}
        for method, limit in methods:
            b = tetris_bound.solve(inst, method=method, time_limit=limit).bound
            if b is not None and b > opt + 1e-7 * max(1.0, abs(opt)):
                raise RuntimeError(f"{method} bound {b!r} above the proven optimum {opt!r} of {r['name']}")
            row[method] = b
        rows.append(row)
    return rows


def fragment(rows: list[dict], methods=METHODS) -> str:
    """The page's table: each bound as a share of the optimum, per instance, with the medians."""
    names = [m for m, _ in methods]
    head = ("Bound / proven optimum on the instance library's proven Tetris instances of "
            f"{min(r['tables'] for r in rows)}-{max(r['tables'] for r in rows)} tables "
            f"(`python -m placement.app.bench.bound_shares`; " + ", ".join(f"{m} {t:g} s" for m, t in methods)
            + "; one run each on a shared 2-core machine).")
    lines = [head, "", "| instance | optimum | " + " | ".join(names) + " |", "| --- " * (2 + len(names)) + "|"]
    for r in rows:
        cells = ["--" if r[m] is None else f"{100 * r[m] / r['optimum']:.1f}%" for m in names]
        lines.append(f"| {r['instance'].removeprefix('tetris-')} | {r['optimum']:,.1f} | " + " | ".join(cells) + " |")
    med = {m: statistics.median(100 * r[m] / r["optimum"] for r in rows if r[m] is not None) for m in names}
    lo = {m: min(100 * r[m] / r["optimum"] for r in rows if r[m] is not None) for m in names}
    hi = {m: max(100 * r[m] / r["optimum"] for r in rows if r[m] is not None) for m in names}
    lines += ["", "Medians (min to max): " + "; ".join(f"{m} {med[m]:.1f}% ({lo[m]:.1f} to {hi[m]:.1f})" for m in names)
              + f". {len(rows)} instances, every bound at or below its optimum."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    min_tables = int(args[0]) if args else 40
    out = Path(args[1]) if len(args) > 1 else Path("bound-shares")
    rows = shares(min_tables)
    if not rows:
        print(f"error: min_tables: no proven Tetris instance has {min_tables} tables or more", file=sys.stderr)
        return 2
    write_text(out / "measured" / "bounds-largest-proven.md", fragment(rows))
    print(f"wrote {out / 'measured' / 'bounds-largest-proven.md'} ({len(rows)} instances)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
