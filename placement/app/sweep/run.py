"""Running a sweep: one cell (a solve or a simulation, never raising), the grid serially or
on a Dask LocalCluster / a running scheduler, resumable, with a serial-vs-parallel comparison."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

from ...errors import InstanceError
from ...io import staged_folder, write_json
from ..run import package_version
from .report import _attach_gaps, write_results
from .spec import _argv, _parse, _sim_args, cell_key, expand_cells, validate_cells

__all__ = ["run_cell", "run_sweep", "compare_serial"]

_TIME_STATS = ("time", "_s", "per_s", "wall", "seconds", "moves_per")


def _numbers(prefix: str, d: dict[str, Any], out: dict[str, Any]) -> None:
    for k, v in d.items():
        if isinstance(v, bool) or v is None:
            continue
        if isinstance(v, (int, float)) and math.isfinite(float(v)):
            out[f"{prefix}{k}"] = v


def run_cell(cell: dict[str, Any]) -> dict[str, Any]:
    """Run one cell and return its row (never raises: an exception becomes ``status: error``)."""
    t0 = time.perf_counter()
    row: dict[str, Any] = {"kind": cell["kind"], "seed": cell["seed"], "version": package_version(),
                           "options": json.dumps(cell.get("options") or {}, sort_keys=True)}
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
    from ...registry import call_solver, get_problem, solver_parameters

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
    from ..run import command_line, load_inputs, run_simulation

    args = _sim_args(cell["trace"], cell["cluster"], cell["seed"], cell["policy"], "trace")
    inst, _ = load_inputs(args)
    record: dict[str, Any] = {}
    _res, _rows, summ, broken = run_simulation(inst, cell["policy"], seed=cell["seed"], options=cell["options"],
                                               record=record)
    # what made the row: the policy's options with its defaults, the perf model, the command line
    row.update(resolved_options=json.dumps(record["resolved_options"], sort_keys=True), perf=inst.perf,
               command=command_line(cell["trace"]["trace"], cell["cluster"], cell["policy"], cell["options"],
                                    cell["seed"], args.perf, args.start, args.hours, args.sample,
                                    args.checkpoint, args.scan))
    row.update(status="ok" if not broken else "replay_violations", replay_violations=len(broken))
    _numbers("", summ, row)


CONNECT_TIMEOUT_S = 5.0   # how long a --scheduler address is tried before the one-line error


def _connect(scheduler: str | None, workers: int):
    """A Dask client: a LocalCluster of ``workers`` processes, or the scheduler at ``scheduler``
    (tried for ``CONNECT_TIMEOUT_S`` seconds: Dask retries a refused connection until then)."""
    from dask.distributed import Client, LocalCluster

    if scheduler:
        try:
            return Client(scheduler, timeout=f"{CONNECT_TIMEOUT_S}s"), None
        except (OSError, TimeoutError, ValueError) as exc:
            raise InstanceError("--scheduler", f"cannot reach {scheduler!r} ({exc.__class__.__name__})") from None
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
    return Client(cluster), cluster


def run_sweep(spec: dict[str, Any], out: Path, *, workers: int = 2, scheduler: str | None = None,
              progress: bool = True, on_cell=None) -> dict[str, Any]:
    """Run the missing cells of ``spec`` into ``out``; returns counts and the rows."""
    cells = expand_cells(spec)
    validate_cells(spec, cells)
    ver = package_version()
    keys = [cell_key(c, ver) for c in cells]
    store = out / "cells"  # created when the first cell lands: a sweep that fails first leaves nothing
    missing = [(k, c) for k, c in zip(keys, cells, strict=True) if not (store / f"{k}.json").exists()]
    stats = {"cells": len(cells), "cached": len(cells) - len(missing), "ran": 0}

    def land(key: str, cell: dict[str, Any], row: dict[str, Any]) -> None:
        store.mkdir(parents=True, exist_ok=True)
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
    with staged_folder(out) as stage:  # the result files land as one set, or not at all
        stats["files"] = write_results(stage, spec, rows)
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
