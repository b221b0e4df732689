"""Exact counterpart of MAST's RMS (OSDI'24 §4.3): one job's placement in one dynamic
cluster with preemption, as a lexicographic MIP (Pyomo + HiGHS), and the reference
evaluation of any plan.

Terms
-----
snapshot (a mapping, e.g. ``placement.solvers.online.rms.RegionState.dcluster_view``)
    ``free[m]`` free GPUs of the job's type on machine m of the cluster, ``rack[m]`` its
    rack key, and over the jobs running there ``job_ids``, ``job_priority`` (effective
    level, 0 the highest), ``job_start`` (s) and ``alloc[v, m]`` (GPUs of job v on m).
request
    ``n`` GPUs at priority ``priority``; a running job may be preempted only when its
    level is strictly lower (a larger number).
plan
    ``victims`` (ids of jobs to preempt) and ``take[m]`` (GPUs the job takes on m).
cost vector (minimized lexicographically; P_score is its negation)
    c0 = 1 if anything is preempted else 0;
    c1 = -(lowest level number among victims), 0 without victims (preempt lower priorities);
    c2 = number of victims (fewer jobs);
    c3 = sum of the victims' start times (longer-running jobs: earlier starts);
    c4 = racks the job spans; c5 = machines it uses (§4.3: fewest racks and machines).

Lexicographic order by sequential solves
----------------------------------------
Stage k minimizes c_k subject to c_l <= c_l* for every l < k, where c_l* is stage l's
optimum. Claim: after stage k the feasible set is exactly the plans whose prefix
(c_0..c_k) equals the lexicographic minimum of that prefix. Proof by induction: for
k = 0 it is the definition of c_0*. Assume it for k-1: every plan P left has
c_l(P) = c_l* for l < k (it cannot be lower, else its prefix would beat the minimum);
stage k minimizes c_k over exactly these plans, so c_k* is the k-th entry of the
lexicographic minimum, and adding c_k <= c_k* keeps exactly the plans attaining it.
After the last stage every remaining plan is lexicographically minimal. No weights are
needed, so no coefficient is ever larger than the data (weights would have to exceed
products of all lower ranges, ~1e18 here, beyond double precision).
c0, c1, c2, c4, c5 are integers, so "<= c*" is exact; c3 is fixed with an absolute
tolerance of 1e-6 (exact for integer start times; start times are shifted by their
minimum in the model, which changes c3 by a constant once c2 is fixed).

Model (per stage)
-----------------
Variables: x_v binary (preempt v; only jobs of lower priority exist in the model),
p binary, h continuous (c1), y_m integer in [0, free_m + sum_v alloc[v,m]], u_m binary
(machine used), z_r binary (rack used).
    sum_m y_m = n
    y_m <= free_m + sum_v alloc[v,m] x_v     (GPUs taken are free or released)
    y_m <= n u_m,  u_m <= z_rack(m)
    x_v <= p,  h >= -prio_v - H (1 - x_v),  h >= -H p   with H = max victim level
so c0 = p, c1 = h, c2 = sum x, c3 = sum start_v x_v, c4 = sum z, c5 = sum u at the optimum.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

import numpy as np
import pyomo.environ as pyo

from placement.result import SolveResult, Status

__all__ = ["evaluate_plan", "build", "solve", "COST_NAMES"]

COST_NAMES = ("preempts", "neg_min_victim_priority", "victims", "victim_start_sum", "racks", "machines")


def _arrays(snap: Mapping):
    free = np.asarray(snap["free"], dtype=np.int64)
    rack = np.asarray(snap["rack"], dtype=np.int64)
    prio = np.asarray(snap["job_priority"], dtype=np.int64)
    start = np.asarray(snap["job_start"], dtype=float)
    alloc = np.asarray(snap["alloc"], dtype=np.int64).reshape(len(prio), len(free))
    return free, rack, list(snap["job_ids"]), prio, start, alloc


def evaluate_plan(snap: Mapping, n: int, priority: int, victims, take) -> tuple[tuple, list[str]]:
    """Reference evaluation of a plan: ``(cost vector, violations)``.

    Violations: ``take`` not a non-negative integer vector over the machines; not
    exactly ``n`` GPUs; a victim unknown, repeated or not of strictly lower priority;
    a machine asked for more GPUs than it has free plus what the victims release.
    Written independently of the MIP and of RMS (plain loops over the data).
    """
    free, rack, ids, prio, start, alloc = _arrays(snap)
    out: list[str] = []
    take = np.asarray(take)
    if take.shape != free.shape or not np.issubdtype(take.dtype, np.integer) or (take < 0).any():
        return (), [f"take must be {len(free)} non-negative integers"]
    if int(take.sum()) != n:
        out.append(f"takes {int(take.sum())} GPUs, the job needs {n}")
    rows = []
    index = {j: i for i, j in enumerate(ids)}
    for v in victims:
        if v not in index:
            out.append(f"victim {v!r} is not running in this cluster")
        elif index[v] in rows:
            out.append(f"victim {v!r} is repeated")
        else:
            rows.append(index[v])
            if prio[index[v]] <= priority:
                out.append(f"victim {v!r} has priority {prio[index[v]]}, not lower than {priority}")
    for m in range(len(free)):
        released = sum(int(alloc[r, m]) for r in rows)
        if take[m] > free[m] + released:
            out.append(f"machine {m}: takes {int(take[m])} > free {int(free[m])} + released {released}")
    used = [m for m in range(len(free)) if take[m] > 0]
    racks = len({int(rack[m]) for m in used})
    if rows:
        cost = (1, -min(int(prio[r]) for r in rows), len(rows), float(sum(start[r] for r in rows)),
                racks, len(used))
    else:
        cost = (0, 0, 0, 0.0, racks, len(used))
    return cost, out


def build(snap: Mapping, n: int, priority: int) -> pyo.ConcreteModel:
    """The declarative model (all stages' expressions; no objective yet)."""
    free, rack, ids, prio, start, alloc = _arrays(snap)
    allowed = [v for v in range(len(ids)) if prio[v] > priority]
    racks = sorted({int(r) for r in rack})
    m = pyo.ConcreteModel(name="mast_rms")
    m.M = pyo.RangeSet(0, len(free) - 1) if len(free) else pyo.Set(initialize=[])
    m.V = pyo.Set(initialize=allowed)
    m.R = pyo.Set(initialize=racks)
    H = int(max((prio[v] for v in allowed), default=0))
    s0 = float(min((start[v] for v in allowed), default=0.0))
    ub = {mm: int(free[mm] + sum(alloc[v, mm] for v in allowed)) for mm in range(len(free))}
    m.x = pyo.Var(m.V, domain=pyo.Binary)
    m.p = pyo.Var(domain=pyo.Binary)
    m.h = pyo.Var(bounds=(-H, 0))
    m.y = pyo.Var(m.M, domain=pyo.NonNegativeIntegers, bounds=lambda _, mm: (0, ub[mm]))
    m.u = pyo.Var(m.M, domain=pyo.Binary)
    m.z = pyo.Var(m.R, domain=pyo.Binary)
    m.demand = pyo.Constraint(expr=sum(m.y[mm] for mm in m.M) == n)
    m.supply = pyo.Constraint(m.M, rule=lambda b, mm: b.y[mm] <= int(free[mm]) + sum(
        int(alloc[v, mm]) * b.x[v] for v in allowed if alloc[v, mm]))
    m.use = pyo.Constraint(m.M, rule=lambda b, mm: b.y[mm] <= n * b.u[mm])
    m.in_rack = pyo.Constraint(m.M, rule=lambda b, mm: b.u[mm] <= b.z[int(rack[mm])])
    m.any = pyo.Constraint(m.V, rule=lambda b, v: b.x[v] <= b.p)
    m.lvl = pyo.Constraint(m.V, rule=lambda b, v: b.h >= -int(prio[v]) - H * (1 - b.x[v]))
    m.lvl0 = pyo.Constraint(expr=m.h >= -H * m.p)
    m.costs = [m.p, m.h, sum(m.x[v] for v in allowed),
               sum((float(start[v]) - s0) * m.x[v] for v in allowed),
               sum(m.z[r] for r in racks), sum(m.u[mm] for mm in m.M)]
    m.s0 = s0
    m.stages = pyo.ConstraintList()
    return m


def solve(snap: Mapping, n: int, priority: int, *, time_limit: float = 60.0, c3_tol: float = 1e-6) -> SolveResult:
    """Lexicographically optimal plan by sequential HiGHS solves (see the module docstring).

    Statuses: ``optimal`` (the plan passes :func:`evaluate_plan` and its cost equals the
    stages' optima); ``infeasible`` (no plan exists even preempting every lower-priority
    job); ``time_limit`` (a stage hit the limit; ``solution`` is None); ``error`` (the
    reference evaluation disagrees with the model). The solution is
    ``{"victims": [...], "take": array}``; ``stats["cost"]`` is its reference cost vector
    (``objective`` is None: the objective is a vector, not a number).
    """
    from pyomo.contrib.solver.common.factory import SolverFactory
    from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition

    t0 = time.perf_counter()
    m = build(snap, n, priority)
    opt = SolverFactory("highs")
    optima: list[float] = []
    for k, expr in enumerate(m.costs):
        if isinstance(expr, (int, float)):  # no variable in this term (e.g. nothing preemptable)
            optima.append(float(expr))
            continue
        m.obj = pyo.Objective(expr=expr, sense=pyo.minimize)
        left = max(1e-3, time_limit - (time.perf_counter() - t0))
        res = opt.solve(m, time_limit=left, rel_gap=0.0, abs_gap=0.0, threads=1, tee=False,
                        load_solutions=False, raise_exception_on_nonoptimal_result=False)
        m.del_component(m.obj)
        tc = res.termination_condition
        if tc in (TerminationCondition.provenInfeasible, TerminationCondition.infeasibleOrUnbounded):
            return SolveResult(Status.INFEASIBLE, "mast-rms-mip", wall_time_s=time.perf_counter() - t0,
                               stats={"stages": k}, message="no plan even preempting every lower-priority job")
        if res.solution_status != SolutionStatus.optimal:
            st = Status.TIME_LIMIT if tc == TerminationCondition.maxTimeLimit else Status.ERROR
            return SolveResult(st, "mast-rms-mip", wall_time_s=time.perf_counter() - t0,
                               stats={"stages": k}, message=f"stage {k}: {tc}")
        res.solution_loader.load_vars()
        val = float(res.incumbent_objective)
        if k == 3:
            m.stages.add(expr <= val + c3_tol)
        else:
            val = round(val)
            m.stages.add(expr <= val)
        optima.append(val)
    free, _, _, _, _, _ = _arrays(snap)
    victims = [v for v in m.V if pyo.value(m.x[v]) > 0.5]
    ids = list(snap["job_ids"])
    take = np.array([int(round(pyo.value(m.y[mm]))) for mm in range(len(free))], dtype=np.int64)
    plan = {"victims": [ids[v] for v in victims], "take": take}
    cost, bad = evaluate_plan(snap, n, priority, plan["victims"], take)
    model_cost = (optima[0], optima[1], optima[2], optima[3] + (m.s0 * optima[2] if optima[0] else 0.0),
                  optima[4], optima[5])
    agree = (not bad and all(cost[i] == model_cost[i] for i in (0, 1, 2, 4, 5))
             and abs(cost[3] - model_cost[3]) <= c3_tol + 1e-9 * abs(cost[3]))
    return SolveResult(Status.OPTIMAL if agree else Status.ERROR, "mast-rms-mip", solution=plan,
                       wall_time_s=time.perf_counter() - t0,
                       stats={"cost": cost, "model_cost": model_cost, "violations": bad},
                       message="" if agree else f"reference evaluation {cost} != model {model_cost}: {bad}")
