"""A sweep's outputs: gaps to the best value per instance, results.csv / results.parquet,
summary.md and plots."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from ...io import write_bytes, write_text

__all__ = ["write_results", "columns"]


def _attach_gaps(rows: list[dict[str, Any]]) -> None:
    """``gap_to_best``: each solve row against the best known value of its instance."""
    from ...result import relative_gap

    by_inst: dict[tuple, list[dict[str, Any]]] = {}
    for r in rows:
        if r.get("kind") == "solve":
            by_inst.setdefault((r["family"], r["size"], r["seed"]), []).append(r)
    for group in by_inst.values():
        sense = group[0].get("sense", "min")
        vals = [r["objective"] for r in group if r.get("objective") is not None]
        if not vals:
            continue
        best = min(vals) if sense == "min" else max(vals)
        for r in group:
            r["gap_to_best"] = relative_gap(r.get("objective"), best, sense) if r.get("objective") is not None else None


def columns(rows: list[dict[str, Any]]) -> list[str]:
    first = ["kind", "family", "size", "size_index", "trace", "trace_index", "cluster", "seed", "solver", "policy",
             "status", "objective", "bound", "gap", "gap_to_best", "wall_time_s", "error"]
    seen = [c for c in first if any(c in r for r in rows)]
    rest = sorted({k for r in rows for k in r} - set(seen))
    return seen + rest


def write_results(out: Path, spec: dict[str, Any], rows: list[dict[str, Any]]) -> list[str]:
    """results.csv, results.parquet, summary.md and plots; returns the written file names."""
    import csv

    import pyarrow as pa
    import pyarrow.parquet as pq

    cols = columns(rows)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n", extrasaction="ignore")
    w.writeheader()
    for r in rows:
        w.writerow({c: ("" if r.get(c) is None else r.get(c)) for c in cols})
    write_text(out / "results.csv", buf.getvalue())
    table = pa.Table.from_pylist([{c: r.get(c) for c in cols} for r in rows])
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    write_bytes(out / "results.parquet", sink.getvalue().to_pybytes())
    written = ["results.csv", "results.parquet"]
    md = _summary_markdown(spec, rows)
    write_text(out / "summary.md", md)
    written.append("summary.md")
    written += _plots(out, spec, rows)
    return written


def _summary_markdown(spec: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    from ..report import markdown_table

    lines = [f"# Sweep {spec.get('name') or ''}".rstrip(), "", f"{len(rows)} cells, "
             f"{sum(r.get('status') == 'error' for r in rows)} errors.", ""]
    if spec["kind"] == "solve":
        table = []
        for solver in spec["solvers"]:
            mine = [r for r in rows if r.get("solver") == solver]
            gaps = sorted(r["gap_to_best"] for r in mine if r.get("gap_to_best") is not None)
            statuses: dict[str, int] = {}
            for r in mine:
                statuses[r.get("status", "?")] = statuses.get(r.get("status", "?"), 0) + 1
            table.append({"solver": solver, "cells": len(mine),
                          "statuses": ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())),
                          "median gap to best": gaps[len(gaps) // 2] if gaps else None,
                          "max gap to best": gaps[-1] if gaps else None,
                          "median time (s)": _median([r["wall_time_s"] for r in mine])})
        lines.append(markdown_table(table, list(table[0]) if table else []))
    else:
        table = []
        for policy in spec["policies"]:
            for cluster in spec["clusters"]:
                mine = [r for r in rows if r.get("policy") == policy and r.get("cluster") == cluster]
                table.append({"policy": policy, "cluster": cluster, "cells": len(mine),
                              "mean JCT (s)": _median([r.get("mean_jct_s") for r in mine]),
                              "makespan (s)": _median([r.get("makespan_s") for r in mine]),
                              "mean queueing delay (s)": _median([r.get("mean_queueing_delay_s") for r in mine]),
                              "replay violations": sum(r.get("replay_violations", 0) or 0 for r in mine)})
        lines.append(markdown_table(table, list(table[0]) if table else []))
        lines.append("")
        lines.append("Medians over seeds and traces.")
    return "\n".join(lines) + "\n"


def _median(vals: list[Any]) -> float | None:
    """The median of the numbers (the mean of the middle two for an even count), or None."""
    import statistics

    v = [x for x in vals if isinstance(x, (int, float)) and not isinstance(x, bool)]
    return statistics.median(v) if v else None


def _plots(out: Path, spec: dict[str, Any], rows: list[dict[str, Any]]) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..report import save_figure

    fig, ax = plt.subplots(figsize=(6, 4))
    if spec["kind"] == "solve":
        for solver in spec["solvers"]:
            pts = sorted((r["size_index"], r["gap_to_best"]) for r in rows
                         if r.get("solver") == solver and r.get("gap_to_best") is not None)
            if pts:
                xs = sorted({p[0] for p in pts})
                ax.plot(xs, [_median([g for i, g in pts if i == x]) for x in xs], marker="o", label=solver)
        ax.set_xticks(range(len(spec["sizes"])))
        ax.set_xticklabels([" ".join(f"{v}" for v in s.values()) for s in spec["sizes"]], fontsize=7)
        ax.set_xlabel("size (generate options)")
        ax.set_ylabel("median gap to best known")
        name = "gap_vs_size.png"
    else:
        for policy in spec["policies"]:
            ys = [_median([r.get("mean_jct_s") for r in rows if r.get("policy") == policy and r.get("cluster") == c])
                  for c in spec["clusters"]]
            ax.plot(range(len(spec["clusters"])), [y if y is not None else float("nan") for y in ys],
                    marker="o", label=policy)
        ax.set_xticks(range(len(spec["clusters"])))
        ax.set_xticklabels(spec["clusters"], fontsize=7)
        ax.set_xlabel("cluster")
        ax.set_ylabel("median mean JCT (s)")
        name = "metric_vs_cluster.png"
    ax.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, out, name)
    return [name]
