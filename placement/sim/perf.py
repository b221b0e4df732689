"""Performance models: a job's progress rate on a placement (DESIGN.md, "Performance model").

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

from .trace import Job

__all__ = ["PerfModel", "IdealPerf", "DallyPerf", "DALLY_TABLE1", "DALLY_MODELS"]

# Dally Table 1 (Dally §3.2): communication overhead as a fraction of compute time per tier
# (machine, rack, network), transcribed from papers/dally-network-sensitive-dl.txt.
DALLY_TABLE1: dict[str, tuple[float, float, float]] = {
    "VGG11": (0.01, 0.06, 0.07),
    "AlexNet": (0.02, 0.13, 1.00),
    "MobileNetV3": (0.42, 9.40, 195.92),
    "ResNet18": (0.07, 1.16, 27.49),
    "ResNet50": (0.12, 0.12, 0.38),
    "BERT-large": (0.08, 0.23, 7.15),
}
# Table 1's skew column (High / Low), for policies that use Tiresias-style skew.
DALLY_SKEW = {"VGG11": "High", "AlexNet": "High", "MobileNetV3": "High", "ResNet18": "Low",
              "ResNet50": "Low", "BERT-large": "Low"}
DALLY_MODELS = tuple(DALLY_TABLE1)
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
