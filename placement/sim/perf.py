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
- a model not in Table 1 (or None) runs at 1.0 (no data to slow it down). Before a run the app
  refuses a model name not in Table 1 (:func:`check_models`: ``ResNet-18`` is not ``ResNet18``)
  and warns when multi-GPU jobs name no model (:func:`model_note`), so no job runs at full speed
  without the caller being told.
"""

from __future__ import annotations

import difflib
from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..errors import InstanceError
from .table1 import DALLY_MODELS, DALLY_SKEW, DALLY_TABLE1

if TYPE_CHECKING:  # pragma: no cover
    from .trace import Job

__all__ = ["PerfModel", "IdealPerf", "DallyPerf", "DALLY_TABLE1", "DALLY_MODELS", "DALLY_SKEW", "check_models",
           "model_note", "near_miss"]

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


def near_miss(value: str, known: Iterable[str]) -> str:
    """``"; did you mean 'ResNet18'?"`` for the known names closest to ``value`` (a name that
    differs only in case or punctuation first, then :func:`difflib.get_close_matches`), or ``""``."""
    known = list(known)

    def fold(x: str) -> str:
        return "".join(c for c in x.lower() if c.isalnum())

    close = [k for k in known if fold(k) == fold(value)]
    if close:
        return f"; did you mean {close[0]!r}?"
    close += [k for k in difflib.get_close_matches(value, known, n=2, cutoff=0.6) if k not in close]
    low = {k.lower(): k for k in known}
    close += [low[k] for k in difflib.get_close_matches(value.lower(), list(low), n=2, cutoff=0.6)
              if low[k] not in close]
    return f"; did you mean {' or '.join(repr(c) for c in close[:2])}?" if close else ""


def check_models(jobs, known: Iterable[str], perf: str, *, allow_none: bool = True) -> None:
    """Every job's ``model`` checked against the names a performance model has data for (``known``:
    Dally Table 1's rows for ``dally``; the measured applications for ``goodput``), before a run:
    one :class:`InstanceError` naming the first job whose model is not one of them, with the
    nearest names (``job 'j3' model: 'resnet18' is not a model perf 'dally' knows (Dally Table 1:
    VGG11, ...); did you mean 'ResNet18'?``). ``allow_none``: a job without a model passes (Dally:
    it runs at full speed, :func:`model_note` says so)."""
    known = list(known)
    names = set(known)
    for j in jobs:
        m = j.model
        if m is None and allow_none:
            continue
        if m not in names:
            raise InstanceError(f"job {j.id[:60]!r} model",
                                f"{m if m is None else str(m)[:60]!r} is not a model perf {perf!r} knows "
                                f"({', '.join(known)}){'' if m is None else near_miss(str(m), known)}")


def model_note(jobs, perf: str) -> str | None:
    """The warning for a run under Dally's model (``dally``, ``dally-machine``) whose multi-GPU
    jobs name no model: those run at full speed wherever they are placed (no Table 1 row). None
    when every multi-GPU job names one."""
    multi = [j for j in jobs if j.gpus > 1]
    blank = sum(1 for j in multi if j.model is None)
    if not blank:
        return None
    return (f"{blank:,} of {len(multi):,} multi-GPU jobs name no model, so perf {perf!r} runs them at full speed "
            f"on any placement (no network effect): give each job a 'model' column value, one of "
            f"{', '.join(DALLY_MODELS)} (Dally Table 1)")
