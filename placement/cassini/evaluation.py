"""Reference evaluation of CASSINI shifts on the integer time grid, and the link-sharing model.

This module is the single source of truth: exact models and heuristics are judged by
:func:`evaluate`, never by their own (angle-grid) numbers.

Semantics (shared by the reference evaluation, the exact model and the heuristics)
--------------------------------
link demand
    With integer shifts ``0 <= s_j < iter_j``, job j's demand at integer time t is the
    bandwidth of its phase at ``(t - s_j) mod iter_j``; a link's demand ``d(t)`` sums
    its jobs, ``t = 0 .. p-1`` with ``p`` the LCM of the link's iteration times.
link score (Table 1, Eqs. 1-2 on the time grid)
    ``1 - sum_t max(0, d(t) - C) / (p C)``.
candidate score
    Mean link score over the candidate's shared links (links carrying more than one
    job: the links Algorithm 2 scores and averages); 1.0 when no link is shared.
link-sharing model (iteration times)
    On a link at time t, an overload factor ``f(t) = max(1, d(t)/C)``: every flow gets the
    share ``C/d(t)`` of its demand, so each time unit a job transmits on that link takes
    ``f(t)`` units. Job j's extra time per iteration on link l is
    ``sum_{t : b_j(t) > 0} (f(t) - 1) / r_j`` (``r_j = p/iter_j`` iterations on the circle),
    and its iteration time is ``iter_j`` plus the largest extra over its loaded links (a ring
    all-reduce waits for its slowest hop). This is a first-order static model: it does not
    re-simulate the stretched timeline. More overlap never makes a job faster: adding
    demand can only raise ``f(t)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .instance import CassiniInstance, CassiniSolution, lcm
from .profiles import JobProfile

__all__ = ["link_demand", "link_score", "CassiniEvaluation", "evaluate", "violations",
           "iteration_times", "candidate_scores"]


def link_demand(jobs: Sequence[JobProfile], shifts: Sequence[int], perimeter: int | None = None) -> np.ndarray:
    """``d(t)`` for ``t = 0 .. p-1`` on the integer grid (``p`` = LCM of the iteration times)."""
    p = perimeter or lcm(j.iteration_time for j in jobs)
    t = np.arange(p, dtype=np.int64)
    d = np.zeros(p)
    for job, s in zip(jobs, shifts, strict=True):
        d += job.demand[(t - int(s)) % job.iteration_time]
    return d


def link_score(jobs: Sequence[JobProfile], shifts: Sequence[int], capacity: float) -> float:
    """Compatibility score of a link on the integer time grid (the formula of the module docstring)."""
    d = link_demand(jobs, shifts)
    return 1.0 - float(np.maximum(d - capacity, 0.0).sum()) / (len(d) * capacity)


def _job_extra(jobs: Sequence[JobProfile], shifts: Sequence[int], capacity: float) -> np.ndarray:
    """Per-job extra time per iteration on one link under the link-sharing model."""
    p = lcm(j.iteration_time for j in jobs)
    t = np.arange(p, dtype=np.int64)
    own = np.stack([job.demand[(t - int(s)) % job.iteration_time] for job, s in zip(jobs, shifts, strict=True)])
    f = np.maximum(own.sum(axis=0) / capacity, 1.0)
    r = np.array([p // j.iteration_time for j in jobs], dtype=float)
    return ((own > 0) * (f - 1.0)[None, :]).sum(axis=1) / r


def iteration_times(inst: CassiniInstance, candidate: str, shifts: dict[str, int]) -> dict[str, float]:
    """Iteration time of every job of a candidate under the link-sharing model (module docstring)."""
    extra = {j.name: 0.0 for j in inst.jobs}
    cap = inst.topology.capacity
    for lk, names in inst.link_jobs(candidate).items():
        jobs = [inst.job[n] for n in names]
        ex = _job_extra(jobs, [shifts.get(n, 0) for n in names], cap[lk])
        for n, e in zip(names, ex, strict=True):
            extra[n] = max(extra[n], float(e))
    return {j.name: j.iteration_time + extra[j.name] for j in inst.jobs}


def candidate_scores(inst: CassiniInstance, candidate: str, shifts: dict[str, int]) -> dict[str, float]:
    """Integer-grid score of every shared link of a candidate."""
    cap = inst.topology.capacity
    return {lk: link_score([inst.job[n] for n in names], [shifts.get(n, 0) for n in names], cap[lk])
            for lk, names in inst.shared_links(candidate).items()}


@dataclass
class CassiniEvaluation:
    """Reference evaluation of one solution (see the module docstring)."""

    candidate: str
    link_scores: dict[str, float]
    iteration_times: dict[str, float]
    measures: dict[str, float] = field(default_factory=dict)

    @property
    def score(self) -> float:
        """The objective: mean shared-link score (to maximize)."""
        return float(np.mean(list(self.link_scores.values()))) if self.link_scores else 1.0

    def terms(self) -> dict[str, float]:
        out = {"score": self.score, "candidate": self.candidate,
               "min_link_score": min(self.link_scores.values(), default=1.0),
               "shared_links": len(self.link_scores)}
        out.update(self.measures)
        return out


def evaluate(inst: CassiniInstance, sol: CassiniSolution) -> CassiniEvaluation:
    """Per-link scores, their mean, and iteration times of ``sol`` on the integer time grid."""
    shifts = sol.shift
    scores = candidate_scores(inst, sol.candidate, shifts)
    times = iteration_times(inst, sol.candidate, shifts)
    slow = np.array([times[j.name] / j.iteration_time for j in inst.jobs])
    measures = {"mean_slowdown": float(slow.mean()), "p95_slowdown": float(np.percentile(slow, 95)),
                "max_slowdown": float(slow.max())}
    return CassiniEvaluation(sol.candidate, scores, times, measures)


def violations(inst: CassiniInstance, sol: CassiniSolution) -> list[str]:
    """Broken hard constraints: an unknown candidate or a shift outside ``[0, iter_j)``."""
    out = []
    if sol.candidate not in inst.candidate_index:
        out.append(f"candidate {sol.candidate!r} is not in the instance")
    for name, s in sol.shifts:
        it = inst.job[name].iteration_time
        if not 0 <= s < it:
            out.append(f"shift of {name} is {s}, must be in [0, {it})")
    return out
