"""Reference evaluation of homes and replicas placed together (MAST §3.3 and §3.5).

MAST places homes first (Figure 4, §3.2-3.4) and replicas afterwards (§3.5); its
§3.1 and §6 name a formulation that decides both at once as future work. This module
defines the objective of such a joint placement and judges any (homes, replicas)
pair by it, from its definition and independently of any model: the joint MIP
(``models/tetris_joint.py``) must reproduce these numbers at every solve.

Terms
-----
replica
    A copy of table ``t`` in a region other than its home;
    ``solution.replicas[t]`` lists them (sorted region indices).
present(t, r)
    Table ``t`` is held in region ``r``: its home or one of its replicas.
runnable ML job (data-GPU collocation, §3.1)
    Some region holds every table the job reads (``present``) and has the job's
    GPU type (supply > 0). GPU-hours of runnable jobs: ``G_run``.
DR copy
    A table with at least one replica has a copy outside its home (§3.5's disaster
    recovery replica); ``N_dr`` counts such tables.
replica bytes
    ``sum_t size[t] * len(replicas[t])``; ``storage_overhead`` is replica bytes /
    total table bytes (MAST reports +75-125%).

Joint objective (minimized)
---------------------------
``J = w1*(1) + w2*(2) + w3*(3) - lambda * G_run - mu * N_dr``

(1)-(3) are Figure 4's terms on the homes, exactly as :func:`~placement.tetris.evaluate`
computes them (replicas do not change R(job), demand or the storage balance (9)).
``lambda`` (``runnable_weight``) prices one runnable GPU-hour in objective units;
``mu`` (``dr_weight``) prices one table with a DR copy. Defaults
(:func:`default_weights`): ``lambda = w1 * total table bytes / total ML GPU-hours``
-- making every ML job runnable is worth as much as reading every table once across
regions -- and ``mu = lambda * (smallest positive ML GPU-hours) / (T + 1)``, so all DR
copies together are worth less than the smallest ML job becoming runnable (DR ranks
after runnability, as in §3.5's order: collocation fixes jobs, DR copies come with
what is left).

Hard constraints: (4)-(6) and the move quota of Figure 4 on the homes, with (4)
counting every copy (homes plus replicas per region, §3.5), no replica in its
table's home region, and the **replica budget**: replica bytes <= ``replica_budget``
(``None``: no budget beyond (4)).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..validate import integer, number
from .evaluation import TetrisEvaluation, evaluate, stored_bytes, violations
from .instance import TetrisInstance, TetrisSolution

__all__ = ["JointEvaluation", "evaluate_joint", "joint_violations", "default_weights", "check_joint_options",
           "present_matrix", "runnable_jobs"]


def default_weights(inst: TetrisInstance) -> tuple[float, float]:
    """``(lambda, mu)``: the default prices of a runnable GPU-hour and of a DR copy (module docstring)."""
    a = inst.arrays
    gh = a.job_gh[a.job_ml]
    total_gh = int(gh.sum())
    lam = inst.w1 * max(1, a.total_size) / total_gh if total_gh > 0 else inst.w1
    smallest = int(gh[gh > 0].min()) if total_gh > 0 else 1
    return float(lam), float(lam * smallest / (inst.n_tables + 1))


def check_joint_options(replica_budget, runnable_weight, dr_weight) -> tuple[int | None, float | None,
                                                                           float | None]:
    """Validate the joint problem's parameters: one :class:`InstanceError` naming the field.

    ``replica_budget`` must be ``None`` or an integer >= 0 (bytes); the weights
    ``None`` (default) or finite numbers >= 0.
    """
    budget = None if replica_budget is None else integer(replica_budget, "replica_budget")
    lam = None if runnable_weight is None else number(runnable_weight, "runnable_weight")
    mu = None if dr_weight is None else number(dr_weight, "dr_weight")
    return budget, lam, mu


def present_matrix(inst: TetrisInstance, home: np.ndarray, replicas) -> np.ndarray:
    """``P[t, r]``: table t is held in region r (home or replica)."""
    P = np.zeros((inst.n_tables, inst.n_regions), dtype=bool)
    P[np.arange(inst.n_tables), home] = True
    if replicas is not None:
        for t, regs in enumerate(replicas):
            P[t, list(regs)] = True
    return P


def runnable_jobs(inst: TetrisInstance, P: np.ndarray) -> np.ndarray:
    """Per job: an ML job some region can run (all its tables present there and its GPU type)."""
    a = inst.arrays
    if inst.n_jobs == 0:
        return np.zeros(0, dtype=bool)
    # Every job reads at least one table (validated), so reduceat sees no empty segment.
    all_there = np.logical_and.reduceat(P[a.job_tab], a.job_ptr[:-1], axis=0)  # [J, R]
    has_type = (a.supply[:, np.maximum(a.job_gpu, 0)] > 0).T  # [J, R]
    return a.job_ml & (all_there & has_type).any(axis=1)


@dataclass
class JointEvaluation:
    """The joint objective, its parts and the measures of one (homes, replicas) pair."""

    objective: float
    home: TetrisEvaluation
    runnable: np.ndarray
    runnable_gpu_hours: int
    dr_tables: int
    replica_bytes: int
    storage_used: np.ndarray
    runnable_weight: float
    dr_weight: float
    measures: dict

    @property
    def home_objective(self) -> float:
        return self.home.objective


def evaluate_joint(inst: TetrisInstance, sol: TetrisSolution, *, runnable_weight: float | None = None,
                   dr_weight: float | None = None) -> JointEvaluation:
    """Evaluate ``J`` (module docstring) and the collocation measures of homes plus replicas.

    ``sol.replicas`` may be ``None`` (no replica). Weights default to :func:`default_weights`.
    """
    _, lam, mu = check_joint_options(None, runnable_weight, dr_weight)
    d_lam, d_mu = default_weights(inst)
    lam = d_lam if lam is None else lam
    mu = d_mu if mu is None else mu
    a = inst.arrays
    home = np.asarray(sol.home, dtype=np.int64)
    reps = sol.replicas
    ev = evaluate(inst, home)
    P = present_matrix(inst, home, reps)
    runnable = runnable_jobs(inst, P)
    g_run = int(a.job_gh[runnable].sum())
    n_copies = P.sum(axis=1)  # a replica in the home region is a violation, not a copy
    dr = int((n_copies > 1).sum())
    rep_bytes = int((a.size * (n_copies - 1)).sum())
    used = stored_bytes(inst, home, reps)
    ml, high, gh = a.job_ml, a.job_high, a.job_gh
    T = inst.n_tables
    measures = {
        "home_objective": ev.objective,
        "runnable_ml_jobs": int(runnable.sum()),
        "ml_jobs": int(ml.sum()),
        "runnable_gpu_hours": g_run,
        "ml_gpu_hours": int(gh[ml].sum()),
        "collocation_jobs": float(runnable[ml].mean()) if ml.any() else 1.0,
        "collocation_gpu_hours": float(g_run / gh[ml].sum()) if gh[ml].sum() else 1.0,
        "collocation_high_gpu_hours": float(gh[runnable & high].sum() / gh[high].sum()) if gh[high].sum() else 1.0,
        "dr_tables": dr,
        "dr_coverage": dr / T if T else 1.0,
        "replica_bytes": rep_bytes,
        "storage_overhead": rep_bytes / a.total_size if a.total_size else 0.0,
        "storage_used": int(used.sum()),
        "storage_used_share": float(used.sum() / a.total_capacity),
    }
    return JointEvaluation(objective=ev.objective - lam * g_run - mu * dr, home=ev, runnable=runnable,
                           runnable_gpu_hours=g_run, dr_tables=dr, replica_bytes=rep_bytes, storage_used=used,
                           runnable_weight=lam, dr_weight=mu, measures=measures)


def joint_violations(inst: TetrisInstance, sol: TetrisSolution, replica_budget: int | None = None) -> list[str]:
    """Every broken hard constraint of the joint problem, one line each.

    Figure 4's (4)-(6) and the move quota (:func:`~placement.tetris.violations`,
    whose (4) counts replicas), a replica in its table's home region or listed
    twice, and replica bytes above ``replica_budget``.
    """
    budget, _, _ = check_joint_options(replica_budget, None, None)
    a = inst.arrays
    home = np.asarray(sol.home, dtype=np.int64)
    out = violations(inst, TetrisSolution(home=home, replicas=sol.replicas))
    rep_bytes = 0
    for t, regs in enumerate(sol.replicas or ()):
        if int(home[t]) in regs:
            out.append(f"replica of {inst.tables[t].name} in its home region {inst.region_names[home[t]]}")
        if len(set(regs)) != len(regs):
            out.append(f"replicas of {inst.tables[t].name} list a region twice")
        rep_bytes += int(a.size[t]) * len(regs)
    if budget is not None and rep_bytes > budget:
        out.append(f"replica budget: {rep_bytes} replica bytes > {budget}")
    return out
