"""The federated baseline of MAST §5.6: early binding of each workload to one region.

At arrival a workload is dispatched to the eligible region (one holding its tables and
GPU type, as for MAST) with the lowest demand-over-supply ratio of its GPU type, where
demand is the GPUs requested by the workloads of that type dispatched there and not yet
finished (queued or running) and supply the region's GPUs of the type; ties go to the
lowest region index. It then stays there (also after a preemption): the same GMS order
and the same RMS (with preemption) run inside that region only. Everything else
(quotas, negative cache, data replication when no region is eligible) is
:class:`placement.solvers.online.mast.MastPolicy`'s, so the two differ only in the binding.
"""

from __future__ import annotations

import numpy as np
from placement.solvers.online.mast import MastPolicy

__all__ = ["FederatedPolicy"]


class FederatedPolicy(MastPolicy):
    """MAST's GMS + RMS with dispatch at arrival to the least loaded region (§5.6)."""

    name = "federated"

    def _setup(self, *args, **kwargs) -> None:
        super()._setup(*args, **kwargs)
        self._demand = np.zeros_like(self.supply)
        self._home: dict = {}

    def _dispatch(self, job_id, mask: int, now: float) -> int:
        n, g, _, _, _, _ = self.jobs[job_id]
        if job_id in self._home:                 # already bound (replication finished later)
            self._demand[self._home[job_id], g] -= n
        regions = [r for r in range(len(self.states)) if mask >> r & 1]
        ratio = [self._demand[r, g] / self.supply[r, g] for r in regions]
        r = regions[int(np.argmin(ratio))]
        self._demand[r, g] += n
        self._home[job_id] = r
        self._st["dispatched"] = self._st.get("dispatched", 0) + 1
        return 1 << r

    def _on_finish(self, job_id, now: float) -> None:
        r = self._home.pop(job_id, None)
        if r is not None:
            n, g, _, _, _, _ = self.jobs[job_id]
            self._demand[r, g] -= n
        super()._on_finish(job_id, now)
