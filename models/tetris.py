"""Exact MIP of MAST's Tetris data placement (Figure 4, expressions (1)-(9)), solved by HiGHS.

The model is declarative Pyomo and exact on integer data: at termination its
objective at the incumbent equals the reference evaluation
(:func:`placement.tetris.evaluate`) and its bound is a valid lower bound on the
true optimum. How each non-linear piece is made linear without error:

R(job), ML jobs (AND)
    ``a[j,r] <= x[t,r]`` for each table t of j and ``a[j,r] >= sum_t x[t,r] - (n_j - 1)``:
    with binary ``x`` this forces ``a[j,r] = 1`` iff all of j's tables are at r
    (``a`` may stay continuous). NULL jobs are those with ``sum_r a[j,r] = 0``.
    A single-table job uses ``x`` directly.
R(job), analytics jobs (majority)
    A job whose tables all have size 0 is in region 0 (every load ties at 0).
    (1) only needs the largest per-region load ``m_j = max_r L[j,r]``:
    ``m_j <= L[j,r] + size_j (1 - b[j,r])`` with one-hot ``b`` (minimization drives
    ``m_j`` up to the max). Where the job's app has a CPU limit (5), the region must
    be the exact argmax with ties to the lowest index, so with integer sizes
    ``L[j,r'] + [r' < r] <= L[j,r] + (size_j + 1)(1 - b[j,r])`` for all ``r' != r``.
(1) cross-region bytes
    ``sum_ml size_j (1 - sum_r a[j,r]) + sum_analytics (size_j - m_j)``.
(7) and (9) squared deviations
    Each deviation is a convex function ``f(n) = (n/TD - s)**2`` of an *integer*
    ``n`` (a demand in GPU-hours or a region's stored bytes). The epigraph variable
    ``z >= f`` is cut by secants through consecutive integers ``(n, n+1)``; every
    such secant is below ``f`` at every integer, and the two secants around ``n``
    make ``z = f(n)`` exact there. Domains up to ``FULL_SECANTS`` integers get all
    secants up front; larger ones get a few and then secants are added lazily at
    the incumbent's values until no cut is violated (outer approximation:
    every round's bound stays valid, the loop is finite).
(8) sigmoid overload factor
    The overload ``max(0, D[r,g] - S[r,g])`` is a non-negative integer and
    ``sigmoid(l)`` rounds to exactly 1.0 in double precision for ``l >= 37``, so a
    one-hot level ``y[r,g,l]``, ``l = 0 .. min(37, max overload)`` (the last level
    meaning "at least that") with ``D[r,g] - S[r,g] <= sum_l l*y[r,g,l]`` (big-M on
    the last level) represents it exactly; minimization picks the lowest level.
(7) x (8) product
    ``Q[r,g] = sum_k w_k z[r,g,k]`` is split over the levels: ``Q = sum_l W[l]``,
    ``0 <= W[l] <= Qmax y[l]``, and the term is ``sum_l sigmoid(l) W[l]`` — exact
    for binary ``y`` (a disaggregated McCormick product).
Hard constraints (4), (5), (6) and the move quota are linear in ``x``, ``a``, ``b``.

Statuses: ``optimal`` (HiGHS proved optimality within ``mip_gap`` and no cut is
violated), ``time_limit`` (incumbent or none), ``infeasible`` (proven), ``error``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo
from pyomo.contrib.solver.common.factory import SolverFactory
from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition

from placement.result import SolveResult, Status
from placement.tetris import TetrisInstance, TetrisSolution, evaluate, sigmoid, violations

__all__ = ["build", "solve", "SATURATION_LEVEL", "FULL_SECANTS", "DEFAULT_HIGHS_OPTIONS"]

SATURATION_LEVEL = 37  # sigmoid(37) == 1.0 exactly in IEEE double
# HiGHS 1.15.1's MIP presolve returned a sub-optimal point as "optimal" on a generated
# instance (tests/test_tetris_model.py::test_highs_presolve_regression); with presolve off
# the answer is right and, on this compact model, no slower (measured 0.8-1.2x).
DEFAULT_HIGHS_OPTIONS = {"presolve": "off"}
FULL_SECANTS = 64  # integer domains up to this size get every secant up front
INITIAL_SECANTS = 8


@dataclass
class _Square:
    """One convex term z >= (n/den - s)**2 over the integers n in [0, top]."""

    z: pyo.Var
    n: object  # Pyomo linear expression of the integer argument
    den: float
    s: float
    top: int

    def f(self, n: float) -> float:
        return (n / self.den - self.s) ** 2

    def secant(self, n: int):
        """The cut through (n, f(n)) and (n+1, f(n+1)); valid at every integer."""
        slope = self.f(n + 1) - self.f(n)
        return self.z >= self.f(n) + slope * (self.n - n)

    def initial_points(self) -> list[int]:
        if self.top <= FULL_SECANTS:
            return list(range(self.top))
        ideal = int(math.floor(self.s * self.den))
        grid = np.linspace(0, self.top - 1, INITIAL_SECANTS).round().astype(int).tolist()
        return sorted({max(0, min(self.top - 1, p)) for p in grid + [ideal - 1, ideal, ideal + 1]})


def build(inst: TetrisInstance, *, product: str = "disaggregated") -> pyo.ConcreteModel:
    """The declarative Pyomo model of Figure 4 (with the initial secant cuts).

    ``product`` chooses the linearization of (7) x (8): ``"disaggregated"`` (default,
    ``Q = sum_l W_l``, ``W_l <= Qmax y_l``) or ``"mccormick"`` (``W_l >= Q - Qmax (1 - y_l)``,
    the textbook product with a binary; exact too, with a weaker LP relaxation),
    kept for measuring the difference.

    The model carries ``m._squares`` (the convex terms, for lazy secants) and the
    index maps used by :func:`solve`. Variables: ``x[t,r]`` home of table t,
    ``a[j,r]`` R(ML job) indicator, ``b[j,r]`` analytics majority region,
    ``m[j]`` analytics local bytes, ``z`` squared deviations, ``y`` overload levels,
    ``W`` level-split products.
    """
    A = inst.arrays
    R, T = inst.n_regions, inst.n_tables
    G, K = A.total_demand.shape
    m = pyo.ConcreteModel(name=inst.name or "tetris")
    m.R = pyo.RangeSet(0, R - 1)
    m.T = pyo.RangeSet(0, T - 1)
    m.x = pyo.Var(m.T, m.R, domain=pyo.Binary)
    m.one_home = pyo.Constraint(m.T, rule=lambda m, t: sum(m.x[t, r] for r in m.R) == 1)

    size = A.size.tolist()
    tables_of = [A.job_tab[A.job_ptr[j]:A.job_ptr[j + 1]].tolist() for j in range(inst.n_jobs)]
    ml = [j for j in range(inst.n_jobs) if A.job_ml[j]]
    an = [j for j in range(inst.n_jobs) if not A.job_ml[j]]
    cpu_apps = {a for a in range(len(inst.apps)) if np.isfinite(A.cpu_cap[a]).any()}

    # R(job) for ML jobs: a[j, r] = AND_t x[t, r].
    multi_ml = [j for j in ml if len(tables_of[j]) > 1]
    m.a = pyo.Var(multi_ml, m.R, bounds=(0, 1))
    m.a_le = pyo.Constraint([(j, r, t) for j in multi_ml for r in range(R) for t in tables_of[j]],
                            rule=lambda m, j, r, t: m.a[j, r] <= m.x[t, r])
    m.a_ge = pyo.Constraint(multi_ml, m.R, rule=lambda m, j, r: m.a[j, r] >= sum(
        m.x[t, r] for t in tables_of[j]) - (len(tables_of[j]) - 1))

    def a(j, r):
        return m.x[tables_of[j][0], r] if len(tables_of[j]) == 1 else m.a[j, r]

    def load(j, r):
        return sum(size[t] * m.x[t, r] for t in tables_of[j])

    # R(job) for analytics jobs: local bytes m[j] = max_r L[j, r]; exact argmax where (5) needs it.
    multi_an = [j for j in an if len(tables_of[j]) > 1 and A.job_size[j] > 0]
    exact_an = [j for j in multi_an if A.job_app[j] in cpu_apps]
    m.b = pyo.Var(multi_an, m.R, domain=pyo.Binary)
    m.m = pyo.Var(multi_an, bounds=lambda m, j: (0, int(A.job_size[j])))
    m.b_one = pyo.Constraint(multi_an, rule=lambda m, j: sum(m.b[j, r] for r in m.R) == 1)
    m.m_le = pyo.Constraint(multi_an, m.R, rule=lambda m, j, r: m.m[j] <= load(j, r) + int(A.job_size[j]) * (
        1 - m.b[j, r]))
    m.argmax = pyo.Constraint(
        [(j, r, q) for j in exact_an for r in range(R) for q in range(R) if q != r],
        rule=lambda m, j, r, q: load(j, q) + (1 if q < r else 0) <= load(j, r) + (int(A.job_size[j]) + 1) * (
            1 - m.b[j, r]))

    def region_of_analytics(j, r):
        if A.job_size[j] == 0:  # all loads are 0: the argmax tie goes to region 0
            return 1 if r == 0 else 0
        return m.x[tables_of[j][0], r] if len(tables_of[j]) == 1 else m.b[j, r]

    # (1) cross-region bytes.
    cross = (sum(int(A.job_size[j]) * (1 - sum(a(j, r) for r in range(R))) for j in ml)
             + sum(int(A.job_size[j]) - m.m[j] for j in multi_an))
    m.cross_bytes = pyo.Expression(expr=cross)

    # (4) storage, move quota.
    stored = {r: sum(size[t] * m.x[t, r] for t in range(T)) for r in range(R)}
    m.storage = pyo.Constraint(m.R, rule=lambda m, r: stored[r] <= int(A.storage_cap[r]))
    if inst.move_quota is not None:
        m.quota = pyo.Constraint(expr=sum(size[t] * (1 - m.x[t, int(A.home0[t])]) for t in range(T))
                                 <= inst.move_quota)

    # (5) CPU per (app, region) where listed.
    def cpu_rule(m, ai, r):
        jobs = [j for j in range(inst.n_jobs) if A.job_app[j] == ai]
        expr = (sum(int(A.job_cpu[j]) * a(j, r) for j in jobs if A.job_ml[j])
                + sum(int(A.job_cpu[j]) * region_of_analytics(j, r) for j in jobs if not A.job_ml[j]))
        if isinstance(expr, (int, float)):
            return pyo.Constraint.Feasible if expr <= A.cpu_cap[ai, r] else pyo.Constraint.Infeasible
        return expr <= int(A.cpu_cap[ai, r])

    m.cpu = pyo.Constraint([(ai, r) for ai in sorted(cpu_apps) for r in range(R) if np.isfinite(A.cpu_cap[ai, r])],
                           rule=cpu_rule)

    # (6) high-priority GPU-hours runnable in their home region.
    home_expr = sum(int(A.job_gh[j]) * a(j, r) for j in ml if A.job_high[j]
                    for r in range(R) if A.supply[r, A.job_gpu[j]] > 0)
    if isinstance(home_expr, (int, float)):
        m.home_infeasible = home_expr < inst.home_threshold
    else:
        m.home = pyo.Constraint(expr=home_expr >= inst.home_threshold)

    # (2), (7), (8): GPU balance.
    squares: list[_Square] = []
    TD, TS = A.total_demand, A.total_supply
    demand = {}
    for g in range(G):
        for k in range(K):
            jobs = [j for j in ml if A.job_gpu[j] == g and A.job_prio[j] == k]
            for r in range(R):
                demand[r, g, k] = sum(int(A.job_gh[j]) * a(j, r) for j in jobs)
    gk = [(g, k) for g in range(G) for k in range(K) if TD[g, k] > 0]
    m.z = pyo.Var([(r, g, k) for r in range(R) for g, k in gk], domain=pyo.NonNegativeReals)
    for r in range(R):
        for g, k in gk:
            squares.append(_Square(m.z[r, g, k], demand[r, g, k], float(TD[g, k]),
                                   float(A.supply[r, g] / TS[g]) if TS[g] > 0 else 0.0, int(TD[g, k])))
    rg = sorted({(r, g) for r in range(R) for g, _ in gk})
    levels = {}
    for r, g in rg:
        over_max = max(0, int(TD[g].sum()) - int(A.supply[r, g]))
        levels[r, g] = list(range(min(over_max, SATURATION_LEVEL) + 1))
    m.y = pyo.Var([(r, g, l) for r, g in rg for l in levels[r, g]], domain=pyo.Binary)
    m.W = pyo.Var([(r, g, l) for r, g in rg for l in levels[r, g]], domain=pyo.NonNegativeReals)
    m.level_one = pyo.Constraint(rg, rule=lambda m, r, g: sum(m.y[r, g, l] for l in levels[r, g]) == 1)

    def level_rule(m, r, g):
        top = levels[r, g][-1]
        over_max = max(0, int(TD[g].sum()) - int(A.supply[r, g]))
        rhs = sum(l * m.y[r, g, l] for l in levels[r, g][:-1]) + over_max * m.y[r, g, top]
        return sum(demand[r, g, k] for k in range(K)) - int(A.supply[r, g]) <= rhs

    m.level = pyo.Constraint(rg, rule=level_rule)
    qmax = {}
    for r, g in rg:
        s = A.supply[r, g] / TS[g]
        qmax[r, g] = float(sum(A.prio_w[k] * max(s, 1 - s) ** 2 for gg, k in gk if gg == g))
    def q(r, g):
        return sum(float(A.prio_w[k]) * m.z[r, g, k] for gg, k in gk if gg == g)

    rgl = [(r, g, l) for r, g in rg for l in levels[r, g]]
    if product == "disaggregated":
        m.split = pyo.Constraint(rg, rule=lambda m, r, g: sum(m.W[r, g, l] for l in levels[r, g]) == q(r, g))
        m.split_ub = pyo.Constraint(rgl, rule=lambda m, r, g, l: m.W[r, g, l] <= qmax[r, g] * m.y[r, g, l])
    elif product == "mccormick":
        m.mccormick = pyo.Constraint(rgl, rule=lambda m, r, g, l: m.W[r, g, l] >= q(r, g) - qmax[r, g] * (
            1 - m.y[r, g, l]))
    else:
        raise ValueError(f"product must be 'disaggregated' or 'mccormick', got {product!r}")
    sig = {l: float(sigmoid(l)) for l in range(SATURATION_LEVEL + 1)}
    m.gpu_balance = pyo.Expression(expr=sum(sig[l] * m.W[r, g, l] for r, g in rg for l in levels[r, g]))

    # (3), (9): storage balance.
    m.zs = pyo.Var(m.R, domain=pyo.NonNegativeReals)
    if A.total_size > 0:
        for r in range(R):
            squares.append(_Square(m.zs[r], stored[r], float(A.total_size),
                                   float(A.storage_cap[r] / A.total_capacity), int(A.total_size)))
    m.storage_balance = pyo.Expression(expr=sum(m.zs[r] for r in m.R) if A.total_size > 0 else 0.0)

    m.cuts = pyo.ConstraintList()
    for sq in squares:
        for n in sq.initial_points():
            m.cuts.add(sq.secant(n))
    m.obj = pyo.Objective(expr=inst.w1 * m.cross_bytes + inst.w2 * m.gpu_balance + inst.w3 * m.storage_balance,
                          sense=pyo.minimize)
    m._squares = squares
    m._cut_points = [set(sq.initial_points()) for sq in squares]
    return m


def _home_of(m: pyo.ConcreteModel, inst: TetrisInstance) -> np.ndarray:
    home = np.zeros(inst.n_tables, dtype=np.int64)
    for t in range(inst.n_tables):
        home[t] = max(range(inst.n_regions), key=lambda r: pyo.value(m.x[t, r]))
    return home


def solve(inst: TetrisInstance, *, time_limit: float = 60.0, mip_gap: float = 1e-6,
          max_rounds: int = 200, tol: float = 1e-9, product: str = "disaggregated",
          highs_options: dict | None = None,
          fix_home: TetrisSolution | np.ndarray | None = None) -> SolveResult:
    """Solve Figure 4 exactly with HiGHS (lazy secant rounds; see the module docstring).

    Parameters
    ----------
    time_limit : float
        Seconds for the whole solve (all rounds).
    mip_gap : float
        Relative MIP gap passed to HiGHS.
    max_rounds : int
        Upper bound on cut rounds (each round adds secants violated by the incumbent).
    product : str
        Linearization of (7) x (8), see :func:`build`.
    highs_options : dict, optional
        Extra HiGHS options, merged over ``DEFAULT_HIGHS_OPTIONS`` (presolve off:
        see the note at that constant).
    fix_home : TetrisSolution or array, optional
        Fix every home and solve only for the auxiliary variables: the model's
        value of one given placement (``infeasible`` if it breaks a hard constraint).

    Returns
    -------
    SolveResult
        ``objective`` is the reference evaluation of ``solution``; ``bound`` a valid
        lower bound on the optimum. ``stats``: rounds, cuts, binaries, variables,
        constraints, build and solve seconds, and the model's own objective value.
    """
    t0 = time.perf_counter()
    m = build(inst, product=product)
    if fix_home is not None:
        home = np.asarray(fix_home.home if isinstance(fix_home, TetrisSolution) else fix_home, dtype=np.int64)
        for t in range(inst.n_tables):
            for r in range(inst.n_regions):
                m.x[t, r].fix(1 if home[t] == r else 0)
    build_s = time.perf_counter() - t0
    stats: dict = {"product": product, "build_s": build_s, "rounds": 0, "lazy_cuts": 0,
                   "binaries": sum(1 for v in m.component_data_objects(pyo.Var) if v.is_binary()),
                   "variables": sum(1 for _ in m.component_data_objects(pyo.Var)),
                   "constraints": sum(1 for _ in m.component_data_objects(pyo.Constraint, active=True))}
    if getattr(m, "home_infeasible", False):
        return SolveResult(Status.INFEASIBLE, "exact", wall_time_s=time.perf_counter() - t0, stats=stats,
                           message="(6) cannot be met: no high-priority ML job can run at home")
    opt = SolverFactory("highs")
    best_home, best_obj, bound = None, None, None
    status = Status.ERROR
    message = ""
    for _ in range(max_rounds):
        remaining = time_limit - (time.perf_counter() - t0)
        if remaining <= 0:
            status = Status.TIME_LIMIT
            break
        stats["rounds"] += 1
        res = opt.solve(m, time_limit=remaining, rel_gap=mip_gap, threads=1, tee=False,
                        load_solutions=False, raise_exception_on_nonoptimal_result=False,
                        solver_options={**DEFAULT_HIGHS_OPTIONS, **(highs_options or {})})
        tc = res.termination_condition
        if tc in (TerminationCondition.provenInfeasible, TerminationCondition.infeasibleOrUnbounded):
            status = Status.INFEASIBLE
            break
        if res.objective_bound is not None and math.isfinite(res.objective_bound):
            bound = res.objective_bound if bound is None else max(bound, res.objective_bound)
        if res.solution_status not in (SolutionStatus.optimal, SolutionStatus.feasible):
            status = Status.TIME_LIMIT if tc == TerminationCondition.maxTimeLimit else Status.ERROR
            message = str(tc)
            break
        res.solution_loader.load_vars()
        home = _home_of(m, inst)
        true_obj = evaluate(inst, home).objective
        if best_obj is None or true_obj < best_obj:
            best_obj, best_home = true_obj, home
            stats["model_objective"] = pyo.value(m.obj)
        added = 0
        for sq, pts in zip(m._squares, m._cut_points, strict=True):
            n = int(round(pyo.value(sq.n)))
            if pyo.value(sq.z) < sq.f(n) - tol * max(1.0, sq.f(n)):
                for p in (n - 1, n):
                    if 0 <= p < sq.top and p not in pts:
                        m.cuts.add(sq.secant(p))
                        pts.add(p)
                        added += 1
        stats["lazy_cuts"] += added
        if added == 0:
            status = Status.OPTIMAL if tc == TerminationCondition.convergenceCriteriaSatisfied else Status.TIME_LIMIT
            stats["model_objective"] = pyo.value(m.obj)
            break
        if tc == TerminationCondition.maxTimeLimit:
            status = Status.TIME_LIMIT
            break
    else:
        status = Status.TIME_LIMIT
        message = f"stopped after {max_rounds} cut rounds"
    wall = time.perf_counter() - t0
    stats["solve_s"] = wall - build_s
    sol = TetrisSolution(home=best_home) if best_home is not None else None
    if sol is not None and violations(inst, sol):
        return SolveResult(Status.ERROR, "exact", solution=sol, objective=best_obj, bound=bound, wall_time_s=wall,
                           stats=stats, message="solver returned a placement that violates hard constraints: "
                           + "; ".join(violations(inst, sol)))
    if status == Status.OPTIMAL and best_obj is not None and bound is not None:
        bound = min(bound, best_obj)
    return SolveResult(status, "exact", solution=sol, objective=best_obj, bound=bound, wall_time_s=wall,
                       stats=stats, message=message)
