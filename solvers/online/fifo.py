"""FIFO with first-fit consolidated placement: the floor every simulated policy is compared with.

Jobs start in submit order (a preempted job keeps its place by submit time); the head of the
queue blocks those behind it (strict FIFO) unless ``backfill=True``, which lets later jobs start
when the head does not fit (our option; not from a paper). Placement:
:func:`placement.sim.placement.first_fit_consolidated` (fewest machines, then one rack, then one
dynamic cluster, then anywhere). Never preempts.
"""

from __future__ import annotations

from placement.sim.placement import first_fit_consolidated
from placement.sim.policy import Policy, Start

__all__ = ["FIFO"]


class FIFO(Policy):
    """First in, first out; ``backfill`` lets jobs behind a blocked head start."""

    name = "fifo"

    def __init__(self, backfill: bool = False):
        self.backfill = backfill
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
            gpus = first_fit_consolidated(view.cluster, free, job.gpus, job.gpu_type)
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

    def stats(self):
        return {"schedule_calls": self.calls, "placements_tried": self.placements_tried,
                "backfill": self.backfill}
