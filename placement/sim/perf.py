"""Performance models: a job's progress rate on a placement (reference page: placement/sim/README.md).

A job needs ``duration`` units of work (its ideal run time, s); on a placement it progresses at
``rate(job, tier)`` work per second, 1.0 being ideal. :class:`DallyPerf` follows Dally Table 1
(Dally §3.2, "Communication overhead as a % of compute time", ASTRA-sim on NVSwitch / GPU-direct
RDMA / Ethernet): an iteration takes compute x (1 + overhead), so the rate is
``1 / (1 + overhead[model][tier])``.

Choices where the paper is silent (ours):

- the ideal time is compute only, as Dally's T_total-ideal-run (§4.3.1: "we assume no
  communication overhead for ideal JCT calculations"), so a consolidated multi-GPU job already
  runs at ``1 / (1 + machine overhead)``; pass ``baseline="machine"`` to make the machine tier
  1.0 instead (trace durations read as consolidated run times);
- a 1-GPU job communicates with nobody: rate 1.0;
- the ``cluster`` tier (several racks of one dynamic cluster) uses the ``Network`` column (Dally
  has three tiers: machine, rack, network);
- a model not in Table 1 (or None) runs at 1.0 (no data to slow it down).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

from .table1 import DALLY_MODELS, DALLY_SKEW, DALLY_TABLE1

if TYPE_CHECKING:  # pragma: no cover
    from .trace import Job

__all__ = ["PerfModel", "IdealPerf", "DallyPerf", "DALLY_TABLE1", "DALLY_MODELS", "DALLY_SKEW"]

_TIER_COLUMN = {"machine": 0, "rack": 1, "cluster": 2, "network": 2}


class PerfModel(ABC):
    """Base: ``rate(job, tier)`` -> progress per second (1.0 = ideal)."""

    name = "perf"

    @abstractmethod
    def rate(self, job: Job, tier: str) -> float:
        """Progress per second of ``job`` placed across ``tier``."""


class IdealPerf(PerfModel):
    """Every placement runs at the ideal rate 1.0."""

    name = "ideal"

    def rate(self, job: Job, tier: str) -> float:
        return 1.0


class DallyPerf(PerfModel):
    """Dally Table 1 overheads by model and tier (module docstring for the choices)."""

    name = "dally"

    def __init__(self, table: dict[str, tuple[float, float, float]] | None = None,
                 baseline: str | None = None):
        if baseline not in (None, "machine"):
            raise ValueError("baseline must be None or 'machine'")
        self.table = dict(DALLY_TABLE1 if table is None else table)
        self.baseline = baseline

    def overhead(self, model: str | None, tier: str) -> float:
        row = self.table.get(model) if model is not None else None
        return 0.0 if row is None else row[_TIER_COLUMN[tier]]

    def rate(self, job: Job, tier: str) -> float:
        if job.gpus <= 1 or job.model not in self.table:
            return 1.0
        r = 1.0 / (1.0 + self.overhead(job.model, tier))
        if self.baseline == "machine":
            r *= 1.0 + self.overhead(job.model, "machine")
        return r
