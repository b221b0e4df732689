"""FIFO with first-fit consolidated placement: the floor every simulated policy is compared with.

Jobs start in submit order (a preempted job keeps its place by submit time); the head of the
queue blocks those behind it (strict FIFO) unless ``backfill=True``, which lets later jobs start
when the head does not fit (our option; not from a paper). Placement:
:func:`placement.sim.placement.first_fit_consolidated` (fewest machines, then one rack, then one
dynamic cluster, then anywhere). Never preempts.

With ``data`` (a :class:`~placement.solvers.online.mast_data.DataPlacement`, the one MAST
receives) a job may run only in a region holding its tables, inside one region (as a MAST gang):
its regions are tried in index order, the first where it fits wins (ours: the FIFO baseline
beside MAST and federation in ``placement reproduce mast``'s allocation rate).
"""

from __future__ import annotations

import numpy as np
from placement.solvers.online.mast_data import DataPlacement

from placement.sim.placement import first_fit_consolidated
from placement.sim.policy import Policy, Start

__all__ = ["FIFO"]


class FIFO(Policy):
    """First in, first out; ``backfill`` lets jobs behind a blocked head start."""

    name = "fifo"

    def __init__(self, backfill: bool = False, data: DataPlacement | None = None):   # data: a Python caller's
        if not (data is None or isinstance(data, DataPlacement)):
            raise ValueError("data: must be None or a DataPlacement")
        self.backfill = backfill
        self.data = data
        self._region: np.ndarray | None = None
        self.calls = 0
        self.placements_tried = 0

    def schedule(self, view, events):
        self.calls += 1
        if view.n_free == 0:
            return []
        free = view.free.copy()
        n_free = int(free.sum())
        out = []
        for job in view.pending:
            if job.gpus > n_free:
                if self.backfill:
                    continue
                break
            self.placements_tried += 1
            gpus = self._place(view, free, job)
            if gpus is None:
                if self.backfill:
                    continue
                break
            free[list(gpus)] = False
            n_free -= job.gpus
            out.append(Start(job.id, gpus))
            if n_free == 0:
                break
        return out

    def _place(self, view, free, job):
        """First-fit GPUs for ``job`` anywhere, or inside one region holding its tables (``data``)."""
        if self.data is None:
            return first_fit_consolidated(view.cluster, free, job.gpus, job.gpu_type)
        if self._region is None:
            self._region = np.asarray(view.cluster.region)
        mask = self.data.regions_holding(self.data.tables_of(job.id, job.gpu_type, job.tables))
        for r in range(len(self.data.regions)):
            if mask >> r & 1:
                here = free & (self._region == r)
                if int(here.sum()) >= job.gpus:
                    gpus = first_fit_consolidated(view.cluster, here, job.gpus, job.gpu_type)
                    if gpus is not None:
                        return gpus
        return None

    def stats(self):
        return {"schedule_calls": self.calls, "placements_tried": self.placements_tried,
                "backfill": self.backfill}
