"""Benchmark harness (app layer): exact vs heuristic on each family's default instances.

For every registered family (or those named with ``--problem``) and every
default instance, each benchmark solver runs once; the table reports status,
objective (reference evaluation), the exact model's bound, the gap to the exact
optimum (or to its bound when optimality was not proven) and wall time, and
the time ratio against the exact model measured in the same run. Families add
their own sections (scale runs, plots) through ``ProblemSpec.bench_extra``.

Outputs in ``--out``: ``results.csv``, ``results.json``, ``report.md``, ``figures.md``
(the run's summary lines per family in the block README.md quotes, see
:mod:`placement.app.report`) and PNG plots; all written atomically.
"""

from __future__ import annotations

import csv
import inspect
import io
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ...io import check_output_folder, write_json, write_text
from ...registry import BenchSection, call_solver, get_problem, problems, resolve
from ...result import SolveResult, Status, relative_gap
from ..report import figures_section, fmt, markdown_table, save_figure

__all__ = ["run_bench", "reference_value", "bench_command", "machine_line"]

COLUMNS = ["problem", "instance", "solver", "status", "objective", "bound", "gap_to_exact",
           "wall_time_s", "time_ratio_vs_exact"]


def reference_value(exact: Any) -> float | None:
    """The exact optimum when proven, else the exact model's best bound."""
    if exact is None:
        return None
    if exact.status == "optimal":
        return exact.objective
    return exact.bound


def bench_command(problems_: list[str] | None, quick: bool, scale: bool, seed: int) -> str:
    """The command line that reproduces a run (without ``--out``), as quoted in ``figures.md``."""
    parts = ["placement bench"] + [f"--problem {p}" for p in problems_ or []]
    parts += ["--quick"] * quick + ["--scale"] * scale + ([f"--seed {seed}"] if seed else [])
    return " ".join(parts)


def machine_line() -> str:
    """What the figures were measured on (no periods: it ends a sentence in ``figures.md``)."""
    return f"{os.cpu_count()} CPU(s), {platform.system()} {platform.machine()}".replace(".", "_")


def _plot_gaps(rows: list[dict[str, Any]], problem: str, out_dir: Path) -> str | None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    heur = [r for r in rows if r["problem"] == problem and r["gap_to_exact"] is not None
            and r["solver"] != get_problem(problem).exact_solver]
    if not heur:
        return None
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.8))
    labels = [f"{r['instance']}\n{r['solver']}" for r in heur]
    ax1.bar(range(len(heur)), [100 * r["gap_to_exact"] for r in heur], color="tab:orange")
    ax1.set_xticks(range(len(heur)), labels, rotation=45, ha="right", fontsize=7)
    ax1.set_ylabel("gap to exact (%)")
    ax1.set_title(f"{problem}: heuristic gap to the exact optimum/bound")
    ratios = [r["time_ratio_vs_exact"] for r in heur]
    ax2.bar(range(len(heur)), ratios, color="tab:blue")
    ax2.set_yscale("log")
    ax2.set_xticks(range(len(heur)), labels, rotation=45, ha="right", fontsize=7)
    ax2.set_ylabel("heuristic time / exact time")
    ax2.set_title("time ratio (same run)")
    fig.tight_layout()
    return save_figure(fig, out_dir, f"{problem}_gap_time.png")


def _run_family(name: str, quick: bool, progress: Progress, rows: list[dict[str, Any]]) -> list[str]:
    spec = get_problem(name)
    summary: list[str] = []
    if spec.bench_instances is None:
        return summary
    cases = spec.bench_instances(quick)
    task = progress.add_task(f"{name}", total=len(cases) * len(spec.bench_solvers))
    gaps: dict[str, list[float]] = {}
    for inst_name, instance in cases:
        results = {}
        for solver in spec.bench_solvers:
            progress.update(task, description=f"{name}: {inst_name} / {solver}")
            t0 = time.perf_counter()
            try:
                res = call_solver(spec, solver, instance, **spec.bench_options.get(solver, {}))
            except Exception as exc:  # a failing solver is a row with status error, not a crashed run
                res = SolveResult(Status.ERROR, solver, message=f"{type(exc).__name__}: {exc}", sense=spec.sense)
            res.wall_time_s = res.wall_time_s or (time.perf_counter() - t0)
            results[solver] = res
            progress.advance(task)
        exact = results.get(spec.exact_solver)
        ref = reference_value(exact)
        for solver, res in results.items():
            gap = relative_gap(res.objective, ref, spec.sense)
            if solver != spec.exact_solver and gap is not None:
                gaps.setdefault(solver, []).append(gap)
            ratio = (res.wall_time_s / exact.wall_time_s) if exact is not None and exact.wall_time_s > 0 else None
            rows.append({"problem": name, "instance": inst_name, "solver": solver, "status": str(res.status),
                         "objective": res.objective, "bound": res.bound,
                         "gap_to_exact": gap, "wall_time_s": res.wall_time_s,
                         "time_ratio_vs_exact": ratio})
    for solver, g in gaps.items():
        summary.append(f"{name}: {solver} gap to exact, median {100 * statistics.median(g):.3f}% "
                       f"max {100 * max(g):.3f}% over {len(g)} instances")
    proven = [r for r in rows if r["problem"] == name and r["solver"] == spec.exact_solver
              and r["status"] == "optimal"]
    if proven:
        summary.append(f"{name}: exact model proved optimality on {len(proven)} of {len(cases)} instances")
    return summary


def run_bench(problems_: list[str] | None = None, quick: bool = False, scale: bool = False,
              out_dir: str = "bench-results", seed: int = 0) -> int:
    """Run the benchmark suite and write its outputs; returns the process exit code."""
    # The output folder is checked before any solve: a file in its place is one line, exit 2.
    out = check_output_folder(out_dir, "--out", files=("results.csv", "results.json", "report.md", "figures.md"))
    console = Console(width=None if sys.stdout.isatty() else 160)  # pipes and CI logs get full columns
    names = problems_ or list(problems())
    rows: list[dict[str, Any]] = []
    summary: list[str] = []
    by_family: dict[str, list[str]] = {}
    sections: list[BenchSection] = []
    t0 = time.perf_counter()
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console, transient=False) as progress:
        for name in names:
            mark = len(summary)
            summary += _run_family(name, quick, progress, rows)
            spec = get_problem(name)
            if spec.bench_extra is not None:
                hook = resolve(spec.bench_extra)
                kwargs = {"out_dir": out, "quick": quick, "scale": scale, "seed": seed, "progress": progress}
                if "rows" in inspect.signature(hook).parameters:  # the family's rows of the main table
                    kwargs["rows"] = [r for r in rows if r["problem"] == name]
                extra = hook(**kwargs)
                sections += extra
                for s in extra:
                    summary += s.summary
            by_family[name] = summary[mark:]
    elapsed = time.perf_counter() - t0

    if rows:  # families without an exact-vs-heuristic table (the simulator's) print only their sections
        table = Table(title="exact vs heuristic (objective = reference evaluation)")
        for c in COLUMNS:
            table.add_column(c, justify="right" if c not in ("problem", "instance", "solver", "status") else "left")
        for r in rows:
            table.add_row(*(fmt(r[c]) if c != "gap_to_exact" or r[c] is None else f"{100 * r[c]:.3f}%"
                            for c in COLUMNS))
        console.print(table)

    figures = [f for f in (_plot_gaps(rows, n, out) for n in names) if f]
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS)
    writer.writeheader()
    writer.writerows(rows)
    write_text(out / "results.csv", buf.getvalue())
    write_json(out / "results.json", {"rows": rows, "sections": [
        {"title": s.title, "rows": s.rows, "figures": s.figures} for s in sections],
        "summary": summary, "elapsed_s": elapsed})
    md = ["# placement bench", "", f"Total time {elapsed:.1f} s.", "", "## Summary", ""]
    md += [f"- {line}" for line in summary] + [""]
    if rows:
        md += ["## Exact vs heuristic", "", markdown_table(rows, COLUMNS), ""]
    md += [f"![{f}]({f})" for f in figures]
    for s in sections:
        md += ["", f"## {s.title}", "", s.markdown, ""] + [f"![{f}]({f})" for f in s.figures]
    write_text(out / "report.md", "\n".join(md) + "\n")
    write_text(out / "figures.md", figures_section(bench_command(problems_, quick, scale, seed), elapsed,
                                                   machine_line(), {k: v for k, v in by_family.items() if v}))

    console.print("[bold]What this run showed:[/bold]")
    for line in summary:
        console.print(f"  - {line}")
    console.print(f"wrote {out}/results.csv, results.json, report.md, figures.md and {len(figures) + sum(len(s.figures) for s in sections)} plot(s) in {elapsed:.1f} s")
    return 0
