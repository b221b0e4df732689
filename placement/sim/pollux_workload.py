"""The Pollux authors' evaluation workloads (Pollux §5.3; ``petuum/adaptdl`` ``simulator/workloads*``).

A workload CSV has one job a row: ``name,time,application,num_replicas,batch_size`` (submit
time in seconds; the application it trains; the GPUs and batch size "TunedJobs" gives it, used
by the non-adaptive baselines). :func:`load_pollux_workload` reads it into a :class:`Trace`
whose jobs train ``model`` = the application, ask ``gpus`` = ``num_replicas`` and need
``duration`` = the application's total progress (:class:`placement.sim.goodput.Application`),
plus the fixed batch sizes by job id. The cluster is the authors': 16 nodes of 4 GPUs
(:func:`pollux_cluster`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ..errors import InstanceError
from .cluster import Cluster
from .goodput import Application
from .trace import Job, Trace, _cell, _csv_rows, _float, _header, _int, _open_rows

__all__ = ["load_pollux_workload", "read_pollux_rows", "pollux_cluster", "COLUMNS", "MAX_REPLICAS"]

COLUMNS = ("name", "time", "application", "num_replicas", "batch_size")
MAX_REPLICAS = 64


def read_pollux_rows(path: str | os.PathLike, apps: Mapping[str, Application]
                     ) -> tuple[str, list[tuple[Job, float]]]:
    """(file name, [(job, fixed batch size)]) of a workload CSV, every row checked as the trace
    loaders of :mod:`placement.sim.trace_formats` check theirs: the file's size before reading it,
    a UTF-8 byte-order mark dropped, a header naming the :data:`COLUMNS` (in any order; other
    columns are not read), and a bad row is one :class:`InstanceError` naming the file, the row
    (its line number) and the column: an empty or repeated ``name``, an ``application`` that is
    not one of ``apps`` (with the nearest name), a ``time`` that is not a finite number >= 0,
    ``num_replicas`` outside 1..64, a ``batch_size`` outside the application's measured range."""
    from .perf import near_miss

    name, text = _open_rows(path, "CSV")
    rows = _csv_rows(name, text)
    cols, width = _header(name, rows, COLUMNS)
    out: list[tuple[Job, float]] = []
    seen: set[str] = set()
    for n, row in rows:
        jid = _cell(name, n, row, cols, width, "name")
        if not jid:
            raise InstanceError(f"{name} row {n} column 'name'", "must be a non-empty job name")
        if jid in seen:
            raise InstanceError(f"{name} row {n} column 'name'", f"repeats the job name {jid[:40]!r}")
        seen.add(jid)
        app_name = _cell(name, n, row, cols, width, "application")
        app = apps.get(app_name)
        if app is None:
            raise InstanceError(f"{name} row {n} column 'application'", f"must be one of {', '.join(sorted(apps))}, "
                                f"not {app_name[:60]!r}{near_miss(app_name, sorted(apps))}")
        t = _float(name, n, "time", _cell(name, n, row, cols, width, "time"))
        k = _int(name, n, "num_replicas", _cell(name, n, row, cols, width, "num_replicas"), lo=1)
        if k > MAX_REPLICAS:
            raise InstanceError(f"{name} row {n} column 'num_replicas'", f"must be at most {MAX_REPLICAS}, not {k}")
        b = _float(name, n, "batch_size", _cell(name, n, row, cols, width, "batch_size"))
        if not app.init_batch_size <= b <= app.max_batch_size:
            raise InstanceError(f"{name} row {n} column 'batch_size'", f"must be in {app.init_batch_size}.."
                                f"{app.max_batch_size} for {app.name}, not {b:g}")
        out.append((Job(jid, t, k, app.total, model=app.name), b))
    if not out:
        raise InstanceError(name, "has no job rows")
    return name, out


def load_pollux_workload(path, apps: Mapping[str, Application], name: str | None = None
                         ) -> tuple[Trace, dict[str, float]]:
    """(trace, fixed batch size by job id) of one workload CSV (:func:`read_pollux_rows`: a bad
    row is one :class:`InstanceError` naming the file, row and column)."""
    path = Path(path)
    _, rows = read_pollux_rows(path, apps)
    jobs = tuple(job for job, _ in rows)
    batch = {job.id: b for job, b in rows}
    return Trace(name or path.stem, jobs, provenance=f"Pollux workload {path}"), batch


def pollux_cluster() -> Cluster:
    """The authors' simulated cluster: 16 nodes x 4 GPUs (``simulator.py`` defaults)."""
    return Cluster.uniform(racks=1, machines=16, gpus_per_machine=4, name="pollux-16x4")
