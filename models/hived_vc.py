"""VC assignment fitted to a trace: an exact MIP (declarative Pyomo, HiGHS).

HiveD leaves the VC assignment to users (§6 "VC assignment"; §5.3 assigns "cells from level-1 to
level-4 ... [matching] the distribution of its demands on each level"). We fit it.

Cluster
    One chain of 8-GPU nodes with HiveD's 4-level hierarchy (§5): level 1 GPU, 2 PCIe switch
    (2 GPUs), 3 CPU socket (4 GPUs), 4 node (8 GPUs); ``n_nodes`` top cells. Racks sit above
    the nodes in the simulator's cluster, but VC cells stop at the node level (our choice): a
    job of more than 8 GPUs asks for ``ceil(g/8)`` node cells, as HiveD's multi-cell requests do.
Demand (:func:`demand_from_jobs`)
    ``D[t, k]``: GPU-seconds of tenant ``t``'s jobs whose request level is ``k`` (the smallest
    level whose cells hold the job; GPUs counted as whole cells, i.e. what the job reserves).
Decision
    ``x[t, k]`` integer: level-``k`` cells of tenant ``t``; ``G_t = sum_k g_k x[t, k]`` GPUs.
Constraints
    Capacity, Eq. (1) at time 0 written linearly: for every level ``k``,
    ``sum_t sum_{j >= k} g_j x[t, j] <= n_nodes * 8`` (with no pinned cells the top-down check of
    :mod:`placement.hived.feasibility` reduces to these). ``cover_largest`` (default on, our
    choice): every tenant can run its largest job in its own VC
    (``sum_{j >= k*} g_j x[t, j] >= cells(largest)``). ``levels`` restricts the levels used (node
    level only for Figure 11); ``totals`` fixes ``G_t`` (same GPUs per tenant as another fit).
Objective (lexicographic, three HiGHS solves)
    1. share: ``sum_t |G_t - q_t|`` with ``q_t = C * D_t / sum D`` (the GPU share proportional to
       trace demand); 2. fairness, with the share fixed at its optimum: the largest relative
       shortfall ``max_t max(0, (q_t - G_t) / q_t)``, so that when the cover constraints force a
       cut, it is spread over the tenants instead of falling on whichever the L1 optimum happens
       to pick (``fair=False`` skips it, the earlier fit); 3. mix, with both fixed:
       ``sum_{t,k} |g_k x[t, k] - G_t * D[t, k] / D_t|`` (the level mix follows the tenant's
       GPU-number distribution as far as capacity allows).
:func:`evaluate` and :func:`shortfall` recompute the numbers from the counts alone; the result reports those
(a solver's number is never the last word) and the assignment is checked by
:func:`placement.hived.feasibility.is_feasible`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from placement.errors import InstanceError
from placement.hived.cells import Chain, HivedInstance, VirtualCluster
from placement.hived.feasibility import is_feasible
from placement.result import SolveResult, Status

__all__ = ["NODE_CHAIN", "LEVEL_GPUS", "request_level", "request_cells", "demand_from_jobs",
           "VCAssignment", "evaluate", "shortfall", "solve", "to_instance", "node_level_then_multi"]

LEVEL_GPUS = (0, 1, 2, 4, 8)  # g_k, index = level
K = 4
NODE_CHAIN = ("GPU", "PCIE-SWITCH", "CPU-SOCKET", "NODE")


def request_level(gpus: int) -> int:
    """The level a job of ``gpus`` GPUs asks for (multi-node jobs: the node level)."""
    for k in range(1, K + 1):
        if LEVEL_GPUS[k] >= gpus:
            return k
    return K


def request_cells(gpus: int) -> int:
    """Number of cells of :func:`request_level` the job asks for (1 unless more than a node)."""
    return 1 if gpus <= LEVEL_GPUS[K] else math.ceil(gpus / LEVEL_GPUS[K])


def demand_from_jobs(jobs: Iterable) -> dict[str, tuple[float, ...]]:
    """Tenant -> GPU-seconds per level ``(D[t,1], ..., D[t,4])`` (whole cells, see module doc)."""
    out: dict[str, list[float]] = {}
    for j in jobs:
        k = request_level(j.gpus)
        d = out.setdefault(j.tenant, [0.0] * K)
        d[k - 1] += request_cells(j.gpus) * LEVEL_GPUS[k] * float(j.duration)
    return {t: tuple(v) for t, v in sorted(out.items())}


@dataclass(frozen=True)
class VCAssignment:
    """Cells per level per tenant: ``cells[t] = (x1, x2, x3, x4)``; ``n_nodes`` of the chain."""

    n_nodes: int
    cells: dict[str, tuple[int, ...]]

    def gpus(self, tenant: str) -> int:
        return sum(LEVEL_GPUS[k + 1] * n for k, n in enumerate(self.cells[tenant]))

    @property
    def total_gpus(self) -> int:
        return sum(self.gpus(t) for t in self.cells)


def _targets(demand: Mapping[str, tuple[float, ...]], capacity: int) -> dict[str, float]:
    tot = sum(sum(d) for d in demand.values())
    if tot <= 0:
        return {t: capacity / len(demand) for t in demand}
    return {t: capacity * sum(d) / tot for t, d in demand.items()}


def _mix(d: tuple[float, ...]) -> tuple[float, ...]:
    s = sum(d)
    return tuple(x / s for x in d) if s > 0 else (0.0,) * K


def evaluate(assign: VCAssignment, demand: Mapping[str, tuple[float, ...]]) -> tuple[float, float]:
    """Reference evaluation: (share deviation, mix deviation) of the module doc, from counts."""
    q = _targets(demand, assign.n_nodes * LEVEL_GPUS[K])
    share = sum(abs(assign.gpus(t) - q[t]) for t in demand)
    mix = 0.0
    for t, d in demand.items():
        p, g = _mix(d), assign.gpus(t)
        mix += sum(abs(LEVEL_GPUS[k + 1] * assign.cells[t][k] - g * p[k]) for k in range(K))
    return share, mix


def shortfall(assign: VCAssignment, demand: Mapping[str, tuple[float, ...]]) -> float:
    """Reference evaluation of stage 2: the largest relative shortfall against the share,
    ``max_t max(0, (q_t - G_t) / q_t)`` over tenants with a positive share."""
    q = _targets(demand, assign.n_nodes * LEVEL_GPUS[K])
    return max([max(0.0, (q[t] - assign.gpus(t)) / q[t]) for t in demand if q[t] > 0], default=0.0)


def _largest_cells(jobs_largest: Mapping[str, int] | None, t: str) -> tuple[int, int]:
    if not jobs_largest or t not in jobs_largest:
        return 1, 0
    g = jobs_largest[t]
    k = request_level(g)
    return k, request_cells(g) * LEVEL_GPUS[k]


def to_instance(assign: VCAssignment, name: str = "vc-fit") -> HivedInstance:
    """The assignment as a :class:`HivedInstance` (one node chain) for the feasibility check."""
    chain = Chain("NODE", NODE_CHAIN, (1, 2, 2, 2), K, assign.n_nodes)
    vcs = tuple(VirtualCluster(t, {(0, k + 1): n for k, n in enumerate(c) if n}) for t, c in assign.cells.items())
    return HivedInstance(name, (chain,), vcs)


def _build(demand, n_nodes, levels, largest, totals):
    import pyomo.environ as pyo  # here, not at the top: simulations import this module (tenants)
    C = n_nodes * LEVEL_GPUS[K]
    q = _targets(demand, C)
    T = list(demand)
    m = pyo.ConcreteModel()
    m.T = pyo.Set(initialize=T, ordered=True)
    m.L = pyo.Set(initialize=range(1, K + 1))
    m.x = pyo.Var(m.T, m.L, domain=pyo.NonNegativeIntegers, bounds=(0, C))
    for t in T:
        for k in m.L:
            if k not in levels:
                m.x[t, k].fix(0)
    G = {t: sum(LEVEL_GPUS[k] * m.x[t, k] for k in m.L) for t in T}
    m.cap = pyo.Constraint(m.L, rule=lambda m, k: sum(
        LEVEL_GPUS[j] * m.x[t, j] for t in m.T for j in range(k, K + 1)) <= C)
    m.cover = pyo.ConstraintList()
    for t in T:
        k, g = _largest_cells(largest, t)
        if g:
            m.cover.add(sum(LEVEL_GPUS[j] * m.x[t, j] for j in range(k, K + 1)) >= g)
        if totals is not None:
            m.cover.add(G[t] == totals[t])
    m.s = pyo.Var(m.T, domain=pyo.NonNegativeReals)  # |G_t - q_t|
    m.s_lo = pyo.Constraint(m.T, rule=lambda m, t: m.s[t] >= G[t] - q[t])
    m.s_hi = pyo.Constraint(m.T, rule=lambda m, t: m.s[t] >= q[t] - G[t])
    m.u = pyo.Var(m.T, m.L, domain=pyo.NonNegativeReals)  # |g_k x - G_t p_k|
    p = {t: _mix(demand[t]) for t in T}
    m.u_lo = pyo.Constraint(m.T, m.L, rule=lambda m, t, k: m.u[t, k] >= LEVEL_GPUS[k] * m.x[t, k] - G[t] * p[t][k - 1])
    m.u_hi = pyo.Constraint(m.T, m.L, rule=lambda m, t, k: m.u[t, k] >= G[t] * p[t][k - 1] - LEVEL_GPUS[k] * m.x[t, k])
    m.z = pyo.Var(domain=pyo.NonNegativeReals)  # the largest relative shortfall
    m.z_def = pyo.Constraint([t for t in T if q[t] > 0], rule=lambda m, t: m.z * q[t] >= q[t] - G[t])
    m.share = pyo.Expression(expr=sum(m.s[t] for t in T))
    m.mix = pyo.Expression(expr=sum(m.u[t, k] for t in T for k in m.L))
    m.obj1 = pyo.Objective(expr=m.share, sense=pyo.minimize)
    m.obj_fair = pyo.Objective(expr=m.z, sense=pyo.minimize)
    m.obj_fair.deactivate()
    m.obj2 = pyo.Objective(expr=m.mix, sense=pyo.minimize)
    m.obj2.deactivate()
    return m


def solve(demand: Mapping[str, tuple[float, ...]], n_nodes: int, *, levels: Iterable[int] = (1, 2, 3, 4),
          largest: Mapping[str, int] | None = None, totals: Mapping[str, int] | None = None,
          time_limit: float = 60.0, share_tol: float = 1e-6, fair: bool = True) -> SolveResult:
    """Fit the VC assignment (module doc). ``largest``: tenant -> its largest job's GPUs (the
    cover constraint; ``None`` = no cover); ``fair``: the min-max shortfall stage. Status
    ``optimal`` when every stage is proven."""
    if not demand:
        raise InstanceError("demand", "must name at least one tenant")
    if not isinstance(n_nodes, int) or n_nodes < 1:
        raise InstanceError("n_nodes", f"must be a positive integer, not {n_nodes!r}")
    levels = set(levels)
    if not levels or not levels <= {1, 2, 3, 4}:
        raise InstanceError("levels", "must be a non-empty subset of 1..4")
    for t, d in demand.items():
        if len(d) != K or any(not math.isfinite(x) or x < 0 for x in d):
            raise InstanceError(f"demand[{t}]", "must be 4 finite non-negative GPU-seconds")
    import pyomo.environ as pyo
    from pyomo.contrib.solver.common.factory import SolverFactory
    from pyomo.contrib.solver.common.results import SolutionStatus

    t0 = time.perf_counter()
    m = _build(demand, n_nodes, levels, largest, totals)
    opt = SolverFactory("highs")
    kw = dict(time_limit=time_limit, rel_gap=0.0, threads=1, tee=False, load_solutions=False,
              raise_exception_on_nonoptimal_result=False)
    stats: dict = {"tenants": len(demand), "n_nodes": n_nodes, "levels": sorted(levels)}
    status = Status.OPTIMAL
    res = opt.solve(m, **kw)
    if res.solution_status == SolutionStatus.infeasible or (
            res.solution_status == SolutionStatus.noSolution and "nfeasible" in str(res.termination_condition)):
        return SolveResult(Status.INFEASIBLE, "hived-vc", None, None, None,
                           stats={**stats, "proof": True, "seconds": time.perf_counter() - t0})
    if res.solution_status not in (SolutionStatus.optimal, SolutionStatus.feasible):
        return SolveResult(Status.TIME_LIMIT, "hived-vc", None, None, None,
                           stats={**stats, "seconds": time.perf_counter() - t0})
    if res.solution_status != SolutionStatus.optimal:
        status = Status.TIME_LIMIT
    res.solution_loader.load_vars()
    share_opt = pyo.value(m.share)
    stats["share_bound"] = res.objective_bound
    m.fix_share = pyo.Constraint(expr=m.share <= share_opt + share_tol)
    m.obj1.deactivate()
    if fair:
        m.obj_fair.activate()
        resf, proven = _stage(opt, m, kw)
        status = status if proven else Status.TIME_LIMIT
        if resf is not None:
            m.fix_fair = pyo.Constraint(expr=m.z <= pyo.value(m.z) + share_tol)
        m.obj_fair.deactivate()
    m.obj2.activate()
    res2, proven = _stage(opt, m, kw)
    status = status if proven else Status.TIME_LIMIT
    if res2 is not None:
        stats["mix_bound"] = res2.objective_bound
    cells = {t: tuple(int(round(pyo.value(m.x[t, k]))) for k in range(1, K + 1)) for t in demand}
    assign = VCAssignment(n_nodes, cells)
    share, mix = evaluate(assign, demand)
    feasible = is_feasible(to_instance(assign))
    stats.update(share=share, mix=mix, shortfall=shortfall(assign, demand), feasible=feasible,
                 seconds=time.perf_counter() - t0)
    if not feasible:
        return SolveResult(Status.ERROR, "hived-vc", assign, share, None, stats=stats,
                           message="solver answer fails the feasibility check")
    return SolveResult(status, "hived-vc", assign, share, stats.get("share_bound"), stats=stats)


def _stage(opt, m, kw):
    """Solve a later lexicographic stage: (its result with the solution loaded, or None when it
    found none; whether it was proven optimal)."""
    from pyomo.contrib.solver.common.results import SolutionStatus

    res = opt.solve(m, **kw)
    if res.solution_status not in (SolutionStatus.optimal, SolutionStatus.feasible):
        return None, False
    res.solution_loader.load_vars()
    return res, res.solution_status == SolutionStatus.optimal


def node_level_then_multi(demand, n_nodes, largest=None, time_limit=60.0, fair: bool = True
                          ) -> tuple[SolveResult, SolveResult]:
    """Figure 11's pair: the node-level-only fit, then the multi-level fit with the same GPUs
    per tenant (``totals`` taken from the node-level fit)."""
    node = solve(demand, n_nodes, levels=(K,), largest=largest, time_limit=time_limit, fair=fair)
    if node.solution is None:
        return node, node
    totals = {t: node.solution.gpus(t) for t in demand}
    multi = solve(demand, n_nodes, largest=largest, totals=totals, time_limit=time_limit)
    return node, multi
