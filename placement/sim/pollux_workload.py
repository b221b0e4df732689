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

import csv
from collections.abc import Mapping
from pathlib import Path

from ..errors import InstanceError
from .cluster import Cluster
from .goodput import Application
from .trace import Job, Trace

__all__ = ["load_pollux_workload", "pollux_cluster", "COLUMNS"]

COLUMNS = ("name", "time", "application", "num_replicas", "batch_size")


def load_pollux_workload(path, apps: Mapping[str, Application], name: str | None = None
                         ) -> tuple[Trace, dict[str, float]]:
    """(trace, fixed batch size by job id) of one workload CSV; a bad row is one
    :class:`InstanceError` naming the file, line and column."""
    path = Path(path)
    jobs, batch = [], {}
    with open(path, newline="") as f:
        rd = csv.DictReader(f)
        if tuple(rd.fieldnames or ()) != COLUMNS:
            raise InstanceError(str(path), f"header must be {','.join(COLUMNS)}")
        for line, row in enumerate(rd, start=2):
            where = f"{path.name} line {line}"
            app = apps.get(row["application"])
            if app is None:
                raise InstanceError(f"{where} column application", f"must be one of {', '.join(sorted(apps))}")
            try:
                t, k, b = float(row["time"]), int(row["num_replicas"]), float(row["batch_size"])
            except ValueError:
                raise InstanceError(f"{where}", "time, num_replicas and batch_size must be numbers") from None
            if not (t >= 0 and 1 <= k <= 64 and app.init_batch_size <= b <= app.max_batch_size):
                raise InstanceError(f"{where}", f"needs time >= 0, 1 <= num_replicas <= 64 and batch_size "
                                    f"in {app.init_batch_size}..{app.max_batch_size}")
            jobs.append(Job(row["name"], t, k, app.total, model=app.name))
            batch[row["name"]] = b
    if not jobs:
        raise InstanceError(str(path), "has no jobs")
    return Trace(name or path.stem, tuple(jobs), provenance=f"Pollux workload {path}"), batch


def pollux_cluster() -> Cluster:
    """The authors' simulated cluster: 16 nodes x 4 GPUs (``simulator.py`` defaults)."""
    return Cluster.uniform(racks=1, machines=16, gpus_per_machine=4, name="pollux-16x4")
