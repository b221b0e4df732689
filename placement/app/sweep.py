"""``placement sweep``: a grid of solves or simulations as a Dask task graph, resumable (app layer).

A *sweep spec* (YAML or JSON) names a grid; every point of the grid is a *cell*, run as
one task. Two kinds:

``kind: solve``::

    kind: solve
    family: tetris                       # a registered problem family
    solvers: [exact, hill-climb, hill-climb-ils]
    sizes:                               # `placement generate <family>` options, one mapping per size
      - {tables: 10, jobs: 15, regions: 3}
      - {tables: 20, jobs: 40, regions: 4}
    seeds: [0, 1, 2]                     # generator seed (the solver gets the same seed)
    time_limit: 30                       # seconds per solve (optional)
    options: {hill-climb: {max_passes: 1}}   # per-solver keyword arguments (optional)

``kind: simulate``::

    kind: simulate
    policies: [fifo, dally, tiresias]
    traces:                              # `placement simulate` inputs: a file or a shipped name, window options
      - {trace: philly, hours: 6, sample: 200}
    clusters: [1x1x2x8x8, 1x1x4x8x8]     # `--cluster` values
    seeds: [0, 1]
    options: {dally: {}}                 # per-policy constructor arguments (optional)

Cells reuse the command line's own parsers and loaders (``generate``, ``solve``,
``simulate``), so a spec is validated exactly like the equivalent commands: before any
cell runs, every size is parsed and generated once (seed of the first cell), every
solver or policy and its options checked, every trace and cluster loaded; the first
problem is one line naming the field (``sizes[1].tables: must be a positive integer``).

**Results.** One row per cell: its inputs, ``status``, ``objective``, ``bound``, ``gap``
(the solver's own gap to its bound), ``gap_to_best`` (to the exact solver's objective on
the same instance, or the best bound when the exact solver did not prove optimality),
``wall_time_s``, the solver statistics or simulation metrics (flattened, numbers only),
``error``. Written to ``results.parquet`` (pyarrow) and ``results.csv``, with
``summary.md`` and ``gap_vs_size.png`` / ``metric_vs_cluster.png``.

**Resumable.** Each finished cell is written at once, atomically, to
``DIR/cells/<key>.json``; ``key`` is a SHA-256 of the cell's canonical inputs and the
package version. Rerunning the same spec into the same folder runs only the missing
cells (a changed package version reruns everything). A cell whose solver raises is
recorded with ``status: error`` and the message, and the sweep goes on.

**Execution.** ``--workers 0`` runs the cells one after another in this process, no
Dask. Otherwise a Dask ``LocalCluster`` (``--workers N`` processes, one thread each,
default 2) or the scheduler at ``--scheduler ADDRESS``. One task per cell; results are
stored by this process as tasks finish.

**Faults.** A worker process that dies mid-cell (killed, out of memory) is detected by
the scheduler, which reruns the cell on another worker, up to Dask's
``distributed.scheduler.allowed-failures`` (3) times; the cell then lands once. What is
*not* retried: a cell that raises (recorded as an error row, since a solver bug would
fail again), and the sweep process itself — if it is killed, rerun the same command:
finished cells are on disk and only the missing ones run.

**Determinism.** Every cell is seeded and the exact models run single-threaded, so the
same spec gives the same rows serially, on a LocalCluster or resumed, apart from wall
times and time-based statistics, as long as no cell stops at its time limit (a time limit
cuts work at a wall-clock moment).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import math
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from ..errors import InstanceError
from ..io import read_document, write_bytes, write_json, write_text

__all__ = ["add_parser", "cmd_sweep", "load_spec", "expand_cells", "run_cell", "run_sweep", "cell_key"]

_TIME_STATS = ("time", "_s", "per_s", "wall", "seconds", "moves_per")


def _package_version() -> str:
    try:
        return version("placement")
    except PackageNotFoundError:  # running from a source tree without an install
        return "0+unknown"


def _flag(key: str) -> str:
    return "--" + str(key).replace("_", "-")


def _argv(options: dict[str, Any], where: str = "options") -> list[str]:
    out: list[str] = []
    for k, v in options.items():
        if not isinstance(k, str):
            raise InstanceError(f"{where}.{k}", "option names must be strings")
        if v is None:
            raise InstanceError(f"{where}.{k}", "must have a value")
        if not isinstance(v, (str, int, float)):
            raise InstanceError(f"{where}.{k}", f"must be a number, a string or a boolean, got {type(v).__name__}")
        if isinstance(v, bool):
            if v:
                out.append(_flag(k))
            continue
        out += [_flag(k), str(v)]
    return out


def _parse(argv: list[str], where: str) -> argparse.Namespace:
    """Parse a command line with the CLI's own parser; errors name the spec field."""
    from .commands import base_parser

    try:
        return base_parser()[0].parse_args(argv)
    except InstanceError as exc:
        raise InstanceError(f"{where}.{exc.field.lstrip('-').replace('-', '_')}", exc.message) from None


def _seq(doc: dict, key: str, *, required: bool = True) -> list:
    v = doc.get(key)
    if v is None and not required:
        return []
    if not isinstance(v, list) or not v:
        raise InstanceError(key, "must be a non-empty list")
    if len(v) > 10_000:
        raise InstanceError(key, "must have at most 10,000 entries")
    return v


def load_spec(path: str | Path) -> dict[str, Any]:
    """Read and validate a sweep spec; returns it normalized. Raises :class:`InstanceError`."""
    doc = read_document(path)
    if not isinstance(doc, dict):
        raise InstanceError("spec", "must be a mapping with a 'kind'")
    kind = doc.get("kind", "solve")
    known: dict[str, set[str]] = {"solve": {"kind", "family", "solvers", "sizes", "seeds", "time_limit", "options", "name"},
             "simulate": {"kind", "policies", "traces", "clusters", "seeds", "options", "name"}}
    if not isinstance(kind, str) or kind not in known:
        raise InstanceError("kind", f"must be 'solve' or 'simulate', got {kind!r}")
    for key in doc:
        if not isinstance(key, str) or key not in known[kind]:
            raise InstanceError(str(key), f"is not a field of a {kind} sweep (fields: {', '.join(sorted(known[kind]))})")
    seeds = _seq(doc, "seeds")
    for i, s in enumerate(seeds):
        if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s <= 2**32:
            raise InstanceError(f"seeds[{i}]", f"must be an integer in 0..2**32, got {s!r}")
    options = doc.get("options") or {}
    if not isinstance(options, dict) or not all(isinstance(v, dict) for v in options.values()):
        raise InstanceError("options", "must map a solver or policy name to a mapping of keyword arguments")
    spec: dict[str, Any] = {"kind": kind, "seeds": seeds, "options": options, "name": str(doc.get("name", ""))}
    if kind == "solve":
        from ..registry import get_problem

        fam = doc.get("family")
        if not isinstance(fam, str):
            raise InstanceError("family", "must name a problem family")
        try:
            pspec = get_problem(fam)
        except InstanceError as exc:
            raise InstanceError("family", exc.message) from None
        solvers = _seq(doc, "solvers")
        for i, s in enumerate(solvers):
            if not isinstance(s, str) or s not in pspec.solvers:
                raise InstanceError(f"solvers[{i}]", f"must be one of {sorted(pspec.solvers)}, got {s!r}")
        for name in options:
            if name not in solvers:
                raise InstanceError(f"options.{name}", "names a solver that is not in 'solvers'")
        sizes = _seq(doc, "sizes")
        for i, sz in enumerate(sizes):
            if not isinstance(sz, dict):
                raise InstanceError(f"sizes[{i}]", "must be a mapping of generate options")
        tl = doc.get("time_limit")
        if tl is not None and (isinstance(tl, bool) or not isinstance(tl, (int, float))
                               or not math.isfinite(tl) or tl <= 0):
            raise InstanceError("time_limit", f"must be a positive number of seconds, got {tl!r}")
        spec.update(family=fam, solvers=solvers, sizes=sizes, time_limit=tl)
    else:
        from ..sim.policies import policy_names

        POLICIES = policy_names()

        policies = _seq(doc, "policies")
        for i, p in enumerate(policies):
            if not isinstance(p, str) or p not in POLICIES:
                raise InstanceError(f"policies[{i}]", f"must be one of {sorted(POLICIES)}, got {p!r}")
        for name in options:
            if name not in policies:
                raise InstanceError(f"options.{name}", "names a policy that is not in 'policies'")
        traces = _seq(doc, "traces")
        for i, t in enumerate(traces):
            if not isinstance(t, dict) or not isinstance(t.get("trace"), str):
                raise InstanceError(f"traces[{i}]", "must be a mapping with 'trace' (a file or a shipped name)")
        clusters = _seq(doc, "clusters")
        for i, c in enumerate(clusters):
            if not isinstance(c, str):
                raise InstanceError(f"clusters[{i}]", "must be a --cluster value (a spec file or RxCxKxMxG)")
        spec.update(policies=policies, traces=traces, clusters=clusters)
    return spec


MAX_CELLS = 100_000


def expand_cells(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """Every cell of the grid, in a stable order (size or trace, cluster, seed, solver or policy).

    Refuses a grid of more than ``MAX_CELLS`` cells before building it (one line).
    """
    axes = (("sizes", "seeds", "solvers") if spec["kind"] == "solve" else ("traces", "clusters", "seeds", "policies"))
    n = math.prod(len(spec[a]) for a in axes)
    if n > MAX_CELLS:
        raise InstanceError("spec", f"the grid {' x '.join(str(len(spec[a])) for a in axes)} = {n:,} cells "
                                    f"exceeds {MAX_CELLS:,}; split the sweep")
    cells = []
    if spec["kind"] == "solve":
        for si, size in enumerate(spec["sizes"]):
            for seed in spec["seeds"]:
                for solver in spec["solvers"]:
                    cells.append({"kind": "solve", "family": spec["family"], "size": size, "size_index": si,
                                  "seed": seed, "solver": solver, "time_limit": spec["time_limit"],
                                  "options": spec["options"].get(solver, {})})
    else:
        for ti, tr in enumerate(spec["traces"]):
            for cluster in spec["clusters"]:
                for seed in spec["seeds"]:
                    for policy in spec["policies"]:
                        cells.append({"kind": "simulate", "trace": tr, "trace_index": ti, "cluster": cluster,
                                      "seed": seed, "policy": policy, "options": spec["options"].get(policy, {})})
    return cells


def cell_key(cell: dict[str, Any], package_version: str | None = None) -> str:
    """SHA-256 of the cell's canonical inputs and the package version."""
    blob = json.dumps({"cell": cell, "version": package_version or _package_version()},
                      sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def validate_cells(spec: dict[str, Any], cells: list[dict[str, Any]]) -> None:
    """Everything a cell needs, checked before any cell runs (one line naming the field)."""
    from ..registry import check_solver_options, get_problem

    if spec["kind"] == "solve":
        pspec = get_problem(spec["family"])
        for si, size in enumerate(spec["sizes"]):
            args = _parse(["generate", spec["family"], *_argv(size, f"sizes[{si}]"), "--seed", str(spec["seeds"][0])],
                          f"sizes[{si}]")
            try:
                pspec.generate(args)  # the generator's own checks (counts, memory bound)
            except InstanceError as exc:
                raise InstanceError(f"sizes[{si}].{exc.field.lstrip('-').replace('-', '_')}", exc.message) from None
        for solver in spec["solvers"]:
            try:
                check_solver_options(pspec, solver, dict(spec["options"].get(solver, {})),
                                     reserved={"seed": "seeds", "time_limit": "time_limit"})
            except InstanceError as exc:
                raise InstanceError(f"options.{solver}", exc.message) from None
    else:
        from .policy_data import check_policy_options
        from .simulate import load_inputs

        for ti, tr in enumerate(spec["traces"]):
            for cluster in spec["clusters"]:
                args = _sim_args(tr, cluster, spec["seeds"][0], "fifo", f"traces[{ti}]")
                load_inputs(args)
        for p in spec["policies"]:
            try:
                check_policy_options(p, spec["options"].get(p, {}))
            except InstanceError as exc:
                raise InstanceError(f"options.{p}", exc.message) from None


def _sim_args(tr: dict[str, Any], cluster: str, seed: int, policy: str, where: str) -> argparse.Namespace:
    window = {k: v for k, v in tr.items() if k != "trace"}
    return _parse(["simulate", tr["trace"], "--policy", policy, "--cluster", cluster, "--seed", str(seed),
                   *_argv(window, where), "-o", "unused"], where)


def _numbers(prefix: str, d: dict[str, Any], out: dict[str, Any]) -> None:
    for k, v in d.items():
        if isinstance(v, bool) or v is None:
            continue
        if isinstance(v, (int, float)) and math.isfinite(float(v)):
            out[f"{prefix}{k}"] = v


def run_cell(cell: dict[str, Any]) -> dict[str, Any]:
    """Run one cell and return its row (never raises: an exception becomes ``status: error``)."""
    t0 = time.perf_counter()
    row: dict[str, Any] = {"kind": cell["kind"], "seed": cell["seed"]}
    try:
        if cell["kind"] == "solve":
            row.update(family=cell["family"], size=json.dumps(cell["size"], sort_keys=True),
                       size_index=cell["size_index"], solver=cell["solver"])
            _run_solve(cell, row)
        else:
            row.update(trace=json.dumps(cell["trace"], sort_keys=True), trace_index=cell["trace_index"],
                       cluster=cell["cluster"], policy=cell["policy"])
            _run_simulate(cell, row)
        row.setdefault("error", "")
    except Exception as exc:  # recorded, and the sweep goes on
        row.update(status="error", error=f"{exc.__class__.__name__}: {' '.join(str(exc).split())[:500]}")
    row["wall_time_s"] = time.perf_counter() - t0
    return row


def _run_solve(cell: dict[str, Any], row: dict[str, Any]) -> None:
    from ..registry import call_solver, get_problem, solver_parameters

    pspec = get_problem(cell["family"])
    args = _parse(["generate", cell["family"], *_argv(cell["size"]), "--seed", str(cell["seed"])], "size")
    inst = pspec.generate(args)
    takes = solver_parameters(pspec, cell["solver"])  # seed and time limit only where the solver has them
    common = {k: v for k, v in (("time_limit", cell["time_limit"]), ("seed", cell["seed"])) if k in takes}
    res = call_solver(pspec, cell["solver"], inst, **common, **cell["options"])
    row.update(status=str(res.status), objective=res.objective, bound=res.bound, gap=res.gap,
               solver_time_s=res.wall_time_s, sense=pspec.sense, message=res.message or "")
    _numbers("stat.", res.stats or {}, row)


def _run_simulate(cell: dict[str, Any], row: dict[str, Any]) -> None:
    from .simulate import load_inputs, run_simulation

    args = _sim_args(cell["trace"], cell["cluster"], cell["seed"], cell["policy"], "trace")
    inst, _ = load_inputs(args)
    _res, _rows, summ, broken = run_simulation(inst, cell["policy"], seed=cell["seed"], options=cell["options"])
    row.update(status="ok" if not broken else "replay_violations", replay_violations=len(broken))
    _numbers("", summ, row)


def _attach_gaps(rows: list[dict[str, Any]]) -> None:
    """``gap_to_best``: each solve row against the best known value of its instance."""
    from ..result import relative_gap

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


def _columns(rows: list[dict[str, Any]]) -> list[str]:
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

    cols = _columns(rows)
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
    from .report import markdown_table

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
    v = sorted(x for x in vals if isinstance(x, (int, float)))
    return v[len(v) // 2] if v else None


def _plots(out: Path, spec: dict[str, Any], rows: list[dict[str, Any]]) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .report import save_figure

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


def _connect(scheduler: str | None, workers: int):
    """A Dask client: a LocalCluster of ``workers`` processes, or the scheduler at ``scheduler``."""
    from dask.distributed import Client, LocalCluster

    if scheduler:
        try:
            return Client(scheduler, timeout="5s"), None
        except (OSError, TimeoutError, ValueError) as exc:
            raise InstanceError("--scheduler", f"cannot reach {scheduler!r} ({exc.__class__.__name__})") from None
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
    return Client(cluster), cluster


def run_sweep(spec: dict[str, Any], out: Path, *, workers: int = 2, scheduler: str | None = None,
              progress: bool = True, on_cell=None) -> dict[str, Any]:
    """Run the missing cells of ``spec`` into ``out``; returns counts and the rows."""
    cells = expand_cells(spec)
    validate_cells(spec, cells)
    ver = _package_version()
    keys = [cell_key(c, ver) for c in cells]
    store = out / "cells"
    store.mkdir(parents=True, exist_ok=True)
    missing = [(k, c) for k, c in zip(keys, cells, strict=True) if not (store / f"{k}.json").exists()]
    stats = {"cells": len(cells), "cached": len(cells) - len(missing), "ran": 0}

    def land(key: str, cell: dict[str, Any], row: dict[str, Any]) -> None:
        write_json(store / f"{key}.json", {"key": key, "version": ver, "cell": cell, "row": row})
        stats["ran"] += 1
        if on_cell is not None:
            on_cell(key, row)

    bar = _progress(progress, len(missing))
    t0 = time.perf_counter()
    try:
        if workers == 0 and not scheduler:
            for key, cell in missing:
                land(key, cell, run_cell(cell))
                bar.advance()
        elif missing:
            from dask.distributed import as_completed

            client, cluster = _connect(scheduler, workers)
            try:
                futures = {client.submit(run_cell, cell, key=f"cell-{key}", pure=False): (key, cell)
                           for key, cell in missing}
                for fut in as_completed(futures):
                    key, cell = futures[fut]
                    try:
                        row = fut.result()
                    except Exception as exc:  # the cell's worker died more often than allowed
                        row = {"kind": cell["kind"], "seed": cell["seed"], "status": "error",
                               "error": f"{exc.__class__.__name__}: {exc}"[:500]}
                    land(key, cell, row)
                    bar.advance()
            finally:
                client.close()
                if cluster is not None:
                    cluster.close()
    finally:
        bar.stop()
    stats["elapsed_s"] = time.perf_counter() - t0
    rows = []
    for key in keys:
        rec = json.loads((store / f"{key}.json").read_text())
        rows.append(rec["row"])
    _attach_gaps(rows)
    stats["files"] = write_results(out, spec, rows)
    stats["rows"] = rows
    return stats


class _NoBar:
    def advance(self) -> None:
        pass

    def stop(self) -> None:
        pass


def _progress(enabled: bool, total: int):
    if not enabled or total == 0:
        return _NoBar()
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    prog = Progress(TextColumn("sweep"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), transient=True)
    prog.start()
    task = prog.add_task("cells", total=total)

    class Bar:
        def advance(self) -> None:
            prog.advance(task)

        def stop(self) -> None:
            prog.stop()

    return Bar()


def compare_serial(spec: dict[str, Any], out: Path, workers: int = 2) -> dict[str, Any]:
    """Run the grid serially and on a LocalCluster side by side (fresh folders); speed-up and overhead.

    ``overhead_per_task_s`` = (cluster elapsed − Σ cell wall time / workers) / cells: what the
    scheduler, process start-up and result transfer cost per cell beyond perfect division of work.
    """
    serial = run_sweep(spec, out / "serial", workers=0, progress=False)
    par = run_sweep(spec, out / f"workers-{workers}", workers=workers, progress=False)
    work = sum(r["wall_time_s"] for r in par["rows"])
    n = max(1, par["ran"])
    return {"cells": par["ran"], "serial_s": serial["elapsed_s"], "cluster_s": par["elapsed_s"],
            "speedup": serial["elapsed_s"] / par["elapsed_s"] if par["elapsed_s"] else None,
            "overhead_per_task_s": (par["elapsed_s"] - work / workers) / n,
            "rows_equal": _same_rows(serial["rows"], par["rows"])}


def _same_rows(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> bool:
    def strip(rows):
        return [{k: v for k, v in r.items() if not any(t in k for t in _TIME_STATS)} for r in rows]
    return strip(a) == strip(b)


def add_parser(sub) -> None:
    p = sub.add_parser("sweep", help="run a grid of solves or simulations (Dask; resumable)")
    p.add_argument("spec", help="sweep spec (YAML or JSON)")
    p.add_argument("-o", "--output", default="sweep-results", help="output folder (default: sweep-results)")
    p.add_argument("--scheduler", default=None, help="address of a running Dask scheduler (default: a LocalCluster)")
    p.add_argument("--workers", type=int, default=2, help="LocalCluster worker processes; 0 = serial, no Dask")
    p.add_argument("--compare-serial", action="store_true",
                   help="benchmark: run the grid serially and on the LocalCluster side by side (fresh folders)")
    p.set_defaults(func=cmd_sweep)


def cmd_sweep(args: argparse.Namespace) -> int:
    if args.workers < 0 or args.workers > 256:
        raise InstanceError("--workers", "must be an integer in 0..256")
    out = Path(args.output)
    if out.exists() and not out.is_dir():
        raise InstanceError("-o", f"{args.output!r} is a file; give a folder")
    if not out.exists() and not out.parent.is_dir():
        raise InstanceError("-o", f"folder {str(out.parent)!r} does not exist")
    spec = load_spec(args.spec)
    if args.compare_serial:
        if args.workers < 1 or args.scheduler:
            raise InstanceError("--compare-serial", "needs a LocalCluster (--workers N >= 1, no --scheduler)")
        cmp_ = compare_serial(spec, out, workers=args.workers)
        write_json(out / "speedup.json", cmp_)
        print(f"{cmp_['cells']} cells: serial {cmp_['serial_s']:.2f} s, {args.workers} workers "
              f"{cmp_['cluster_s']:.2f} s, speed-up {cmp_['speedup']:.2f}x, scheduler overhead "
              f"{1000 * cmp_['overhead_per_task_s']:.0f} ms per cell, rows equal: {cmp_['rows_equal']}")
        return 0
    stats = run_sweep(spec, out, workers=args.workers, scheduler=args.scheduler)
    errors = sum(r.get("status") == "error" for r in stats["rows"])
    print(f"{stats['cells']} cells: {stats['ran']} ran, {stats['cached']} from earlier runs, {errors} errors "
          f"({stats['elapsed_s']:.1f} s)")
    print((out / "summary.md").read_text().rstrip())
    print(f"wrote {', '.join(str(out / f) for f in stats['files'])}")
    return 0
