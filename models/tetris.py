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
    every round's bound stays valid, the loop is finite). Each round restarts
    HiGHS's branch and bound, so rounds are what a proof costs: the best
    placement known so far (the caller's ``start``, then each round's verified
    incumbent) gets its secants and is handed to HiGHS as its first incumbent,
    and the loop also ends as soon as that placement's reference value is within
    the gap of the best round bound (a proof whatever cuts other points lack).
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

"Exact on integer data" holds for exact binaries. HiGHS accepts a binary within
its integrality tolerance (``mip_feasibility_tolerance``, 1e-6 by default), and
a binary at 1 - 9e-7 times a job of 1e6 GPU-hours removes about one GPU-hour of
demand; a few such jobs hide a real overload of 4 GPU-hours, the level drops to 0
and the sigmoid reads 0.5 instead of 0.98. That was seen: ``optimal``
for a placement 31% worse than the brute-force optimum (tests/tetris/test_tetris_verify.py
keeps the instance). Three defences, in this order:

Tight tolerance by default
    ``DEFAULT_HIGHS_OPTIONS`` sets ``mip_feasibility_tolerance = 1e-9``; the hidden
    demand is then ``1e-9 x GPU-hours``, below one GPU-hour up to ~1e8 GPU-hours
    per region. Measured side by side: solve time 0.9-1.2x of the 1e-6 setting on
    generated 15-30-table instances (same optima); on 150 brute-forceable
    instances with sizes 1e5-2e7 and GPU-hours 1e4-3e6 (supplies within 12
    GPU-hours of a demand sum), 1e-6 fails verification on 12 of them (8%) and
    1e-9 on none, in the same total time.
Verification (:func:`solve`)
    The incumbent is rounded, judged by the reference evaluation and
    ``violations()``, and compared with the bound. ``optimal`` requires no
    violation and ``reference - bound <= max(mip_gap * |reference|, 1e-6)``;
    every check is kept in ``stats["verification"]``. An "infeasible" claim is
    checked too: when a feasible placement is known (the current homes), it is
    not reported (HiGHS at 1e-6 "proved" one such instance infeasible).
Recovery
    A failed check re-solves the same model (with its cuts) at tolerances 1e-10
    (``RECOVERY_OPTIONS``, ``stats["recovery"]``). If that still does not verify,
    the result is ``feasible``: the best verified placement, the bound (a valid
    lower bound either way: hidden demand only makes the model optimistic) and a
    message.
Row scaling (``build(scale=True)``)
    Rows in bytes or GPU-hours divided by a power of ten (largest coefficient at
    most 1000). It cannot help against the failure above -- the hidden demand is
    ``tolerance x coefficient`` in any unit -- and measured on the same 150
    instances: at tolerance 1e-6 it fails verification on 13 (without: 12), at
    1e-9 on none either way, time within 10% on both sets. Off by default.

Sub-problems (``build(fixed=..., regions=...)``)
    Tables with a fixed home become constants; only the free tables, the jobs
    reading them and the (region, GPU type) pairs those jobs can reach get
    variables, the rest of (1)-(3) is a constant of the objective, so the model's
    value is still the full objective. ``solvers/lns.py`` solves such
    neighbourhoods; with all tables free this is the full model.

Statuses: ``optimal`` (HiGHS proved optimality within ``mip_gap``, no cut is
violated and the reference evaluation agrees), ``feasible`` (verification failed
and recovery did not repair it), ``time_limit`` (incumbent or none),
``infeasible`` (proven, and no feasible placement known; the message names the
hard-constraint family that makes it so, see :func:`solve`), ``error``.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pyomo.environ as pyo
from placement.models.backends import MipSolver, check_mip_solver, outcome, require
from placement.models.backends import solver as mip_backend
from pyomo.contrib.solver.common.factory import SolverFactory
from pyomo.contrib.solver.solvers.highs import Highs

from placement.result import SolveResult, Status, relative_gap
from placement.tetris import TetrisInstance, TetrisSolution, evaluate, sigmoid, violations
from placement.tetris.evaluation import (
    demand_tensor,
    gpu_balance_terms,
    job_regions,
    runnable_at_home,
    storage_balance_terms,
)

__all__ = ["build", "solve", "add_violated_secants", "add_secants_at", "SATURATION_LEVEL", "FULL_SECANTS", "DEFAULT_HIGHS_OPTIONS", "SEARCH_OPTIONS", "RECOVERY_OPTIONS"]

SATURATION_LEVEL = 37  # sigmoid(37) == 1.0 exactly in IEEE double
# HiGHS 1.15.1's MIP presolve returned a sub-optimal point as "optimal" on a generated
# instance (tests/tetris/test_tetris_model.py::test_highs_presolve_regression); with presolve off
# the answer is right and, on this compact model, no slower (measured 0.8-1.2x).
DEFAULT_HIGHS_OPTIONS = {"presolve": "off", "mip_feasibility_tolerance": 1e-9}
# Branching of solve(): pseudocosts trusted from the first observation instead of strong-branching
# warm-up. Measured on generated 60x120x6 instances (seeds 11, 12, 13, 103; 120 s): proven in 38-99 s
# against 52 and 115 s and two time limits with HiGHS's default (8).
SEARCH_OPTIONS = {"mip_pscost_minreliable": 0}
# The recovery attempt when verification fails (see solve()).
RECOVERY_OPTIONS = {"mip_feasibility_tolerance": 1e-10, "primal_feasibility_tolerance": 1e-10}
ABS_GAP = 1e-6  # HiGHS's mip_abs_gap: an absolute gap this small also counts as closed
FULL_SECANTS = 64  # integer domains up to this size get every secant up front
INITIAL_SECANTS = 8


@dataclass
class _Square:
    """One convex term z >= (n/den - s)**2 over the integers n in [lo, top]."""

    z: pyo.Var
    n: object  # Pyomo linear expression of the integer argument
    den: float
    s: float
    top: int
    lo: int = 0
    support: list[int] | None = None  # every value n can take (a superset), when few
    n_secants: int = INITIAL_SECANTS  # grid secants up front on a large domain
    key: tuple = ()  # ("gpu", r, g, k) for D[r,g,k] of (7), ("storage", r) for SD[r] of (9)

    def value_at(self, ev) -> int:
        """The integer argument ``n`` at a placement, from its reference evaluation."""
        if self.key[0] == "gpu":
            return int(ev.demand[self.key[1], self.key[2], self.key[3]])
        return int(ev.storage_used[self.key[1]])

    def f(self, n: float) -> float:
        return (n / self.den - self.s) ** 2

    def secant(self, n: int):
        """The cut through (n, f(n)) and (n+1, f(n+1)); valid at every integer."""
        slope = self.f(n + 1) - self.f(n)
        return self.z >= self.f(n) + slope * (self.n - n)

    def chord(self, p: int, q: int):
        """The cut through (p, f(p)) and (q, f(q)), p < q: valid at every integer outside (p, q)."""
        slope = (self.f(q) - self.f(p)) / (q - p)
        return self.z >= self.f(p) + slope * (self.n - p)

    def initial_cuts(self) -> list:
        """Chords between consecutive values of a small support (exact there: one round), else secants."""
        if self.support is not None and 1 < len(self.support) <= FULL_SECANTS + 1 \
                and self.top - self.lo > FULL_SECANTS:
            return [self.chord(p, q) for p, q in zip(self.support, self.support[1:], strict=False)]
        return [self.secant(n) for n in self.initial_points()]

    def initial_points(self) -> list[int]:
        if self.top - self.lo <= FULL_SECANTS:
            return list(range(self.lo, self.top))
        ideal = int(math.floor(self.s * self.den))
        grid = np.linspace(self.lo, self.top - 1, self.n_secants).round().astype(int).tolist()
        return sorted({max(self.lo, min(self.top - 1, p)) for p in grid + [ideal - 1, ideal, ideal + 1]})


@dataclass
class _Fixed:
    """What the fixed tables contribute: constants of every row and of the objective.

    A job is *affected* when at least one of its tables is free; everything an
    unaffected job contributes (R(job), (1), D[r,g,k], CPU, (6)) is a constant.
    """

    fixed: np.ndarray        # [T] region of a fixed table, -1 for a free one
    free: np.ndarray         # indices of the free tables
    regions: list[int]       # regions a free table may take
    affected: np.ndarray     # [J] bool
    cross: int               # (1) of the unaffected jobs
    demand: np.ndarray       # [R, G, K] D of the unaffected ML jobs
    stored: np.ndarray       # [R] bytes of the fixed tables
    moved: int               # bytes of fixed tables away from their current home
    cpu: np.ndarray          # [A, R] CPU-hours of the unaffected jobs
    home_gh: int             # (6) GPU-hours of the unaffected high-priority ML jobs
    load: np.ndarray         # [J, R] bytes of each job's fixed tables per region (affected jobs)


def _fixed_part(inst: TetrisInstance, fixed: np.ndarray | None, regions) -> _Fixed:
    A = inst.arrays
    R, T, J = inst.n_regions, inst.n_tables, inst.n_jobs
    fixed = np.full(T, -1, dtype=np.int64) if fixed is None else np.asarray(fixed, dtype=np.int64).copy()
    if fixed.shape != (T,) or (fixed >= R).any():
        raise ValueError("fixed must hold one region index (or -1 for free) per table")
    fixed[fixed < 0] = -1
    is_free = fixed < 0
    regs = list(range(R)) if regions is None else sorted({int(r) for r in regions})
    if not regs or regs[0] < 0 or regs[-1] >= R:
        raise ValueError("regions must be a non-empty set of region indices")
    affected = np.zeros(J, dtype=bool)
    affected[A.entry_job[is_free[A.job_tab]]] = True
    home = np.where(is_free, 0, fixed)  # a free table's region only matters to affected jobs
    region, load = job_regions(A, home, R)
    una = ~affected
    has = region >= 0
    local = np.where(has, load[np.arange(J), np.where(has, region, 0)], 0)
    cross = int((A.job_size - local)[una].sum())
    demand = demand_tensor(A, np.where(una, region, -1), R)
    stored = np.bincount(fixed[~is_free], weights=A.size[~is_free], minlength=R).astype(np.int64)
    moved = int(A.size[~is_free & (fixed != A.home0)].sum())
    cpu = np.zeros((len(inst.apps), R), dtype=np.int64)
    sel = np.flatnonzero(una & has & (A.job_app >= 0))
    np.add.at(cpu, (A.job_app[sel], region[sel]), A.job_cpu[sel])
    at_home = runnable_at_home(A, np.where(una, region, -1))
    home_gh = int(A.job_gh[at_home & A.job_high].sum())
    # Bytes of each job's *fixed* tables per region (only read for affected jobs).
    fixed_load = np.zeros((J, R), dtype=np.int64)
    fe = ~is_free[A.job_tab]
    np.add.at(fixed_load, (A.entry_job[fe], fixed[A.job_tab[fe]]), A.size[A.job_tab[fe]])
    return _Fixed(fixed, np.flatnonzero(is_free), regs, affected, cross, demand, stored, moved, cpu, home_gh,
                  fixed_load)


def build(inst: TetrisInstance, *, product: Literal["disaggregated", "mccormick"] = "disaggregated",
          fixed: np.ndarray | None = None, regions=None, scale: bool = False,
          saturation: int = SATURATION_LEVEL, initial_secants: int = INITIAL_SECANTS) -> pyo.ConcreteModel:
    """The declarative Pyomo model of Figure 4 (with the initial secant cuts).

    ``initial_secants`` is the number of evenly spread secants each large-domain
    square term starts with (more: a tighter first cut round and a bigger LP; the
    lazy rounds keep the model exact either way).

    ``product`` chooses the linearization of (7) x (8): ``"disaggregated"`` (default,
    ``Q = sum_l W_l``, ``W_l <= Qmax y_l``) or ``"mccormick"`` (``W_l >= Q - Qmax (1 - y_l)``,
    the textbook product with a binary; exact too, with a weaker LP relaxation),
    kept for measuring the difference.

    ``fixed`` (one region index per table, ``-1`` for a free table) builds the
    sub-problem a matheuristic solves: only free tables get variables, only jobs
    reading a free table (the *affected* jobs) get R(job) variables, and everything
    else enters as constants, so the model's objective is still the full objective
    (1)-(3) of the whole placement. ``regions`` restricts the regions a free table
    may take (default: all). Without ``fixed`` this is the full model.

    ``scale`` divides the rows whose coefficients are bytes or GPU-hours (storage
    (4), the move quota, CPU (5), home GPU-hours (6), the overload levels of (8))
    by a power of ten so their largest coefficient is at most 1000 (measured in the
    module docstring: it does not make the model more robust).

    ``saturation`` below ``SATURATION_LEVEL`` merges the overload levels from that
    level up into one whose factor is ``sigmoid(saturation)``: a relaxation (the
    model's value is at most ``1 - sigmoid(saturation)`` of the GPU term below the
    true one, so bounds stay valid) with far fewer binaries, for matheuristics that
    judge their answers by the reference evaluation anyway.

    The model carries ``m._squares`` (the convex terms, for lazy secants), the
    fixed part ``m._fixed``, the constant rows that cannot hold ``m._infeasible``
    and the hard-constraint blocks by family ``m._families`` (for naming the cause
    of an infeasibility). Variables: ``x[t,r]`` home of a free table t, ``a[j,r]``
    R(ML job) indicator, ``b[j,r]`` analytics majority region, ``m[j]`` analytics
    local bytes, ``z`` squared deviations, ``y`` overload levels, ``W`` level-split
    products. The steps below run in this order, which fixes the order of the
    model's rows and columns.
    """
    if product not in ("disaggregated", "mccormick"):
        raise ValueError(f"product must be 'disaggregated' or 'mccormick', got {product!r}")
    c = _Parts(inst, _fixed_part(inst, fixed, regions), scale)
    _table_homes(c)
    _ml_job_regions(c)
    _analytics_job_regions(c)
    _cross_region_bytes(c)
    _storage_and_quota(c)
    _cpu_limits(c)
    _home_threshold(c)
    _gpu_deviations(c, initial_secants)
    _overload_levels(c, saturation)
    _gpu_balance(c, product)
    _storage_balance(c, initial_secants)
    _objective(c)
    return c.m


class _Parts:
    """What the builder steps share: the model, the fixed part and the placement expressions.

    An *affected* job reads at least one free table (see :class:`_Fixed`); only
    affected jobs get R(job) variables. ``possible[j]`` are the regions an affected
    ML job can still be in (all allowed ones, the one region of its fixed tables,
    or none when its fixed tables are apart).
    """

    def __init__(self, inst: TetrisInstance, fx: _Fixed, scale: bool) -> None:
        A = inst.arrays
        self.inst, self.A, self.fx, self.scale = inst, A, fx, scale
        self.R = inst.n_regions
        self.G, self.K = A.total_demand.shape
        self.allowed = fx.regions
        self.allowed_set = set(fx.regions)
        self.free = fx.free.tolist()
        self.size = A.size.tolist()
        self.aff = np.flatnonzero(fx.affected).tolist()
        self.tables_of = {j: A.job_tab[A.job_ptr[j]:A.job_ptr[j + 1]].tolist() for j in self.aff}
        self.free_of = {j: [t for t in self.tables_of[j] if fx.fixed[t] < 0] for j in self.aff}
        self.ml = [j for j in self.aff if A.job_ml[j]]
        self.an = [j for j in self.aff if not A.job_ml[j]]
        self.cpu_apps = {a for a in range(len(inst.apps)) if np.isfinite(A.cpu_cap[a]).any()}
        self.possible: dict[int, list[int]] = {}
        self.multi_an: list[int] = []
        self.stored: dict[int, object] = {}   # (4)/(9): bytes stored per allowed region
        self.demand: dict[tuple[int, int, int], object] = {}   # (7): D[r,g,k] where it varies
        self.var_demand: dict[tuple[int, int, int], list[int]] = {}
        self.rg: list[tuple[int, int]] = []
        self.gk: list[tuple[int, int]] = []
        self.levels: dict[tuple[int, int], list[int]] = {}
        self.rgl: list[tuple[int, int, int]] = []
        self.squares: list[_Square] = []
        self.infeasible: list[str] = []
        self.families: dict[str, list] = {}   # hard-constraint family -> its Pyomo blocks
        self.home_reach = 0   # (6): the most high-priority GPU-hours any placement runs at home
        self.m = pyo.ConcreteModel(name=inst.name or "tetris")

    def X(self, t, r):
        """Table t is at region r: ``x[t,r]``, or 0/1 for a fixed table or a region it may not take."""
        f = self.fx.fixed[t]
        if f >= 0:
            return 1 if f == r else 0
        return self.m.x[t, r] if r in self.allowed_set else 0

    def unit_of(self, coeffs) -> float:
        """The row divisor of ``build(scale=True)`` (1 without scaling)."""
        top = max((abs(float(c)) for c in coeffs), default=1.0)
        return 10.0 ** max(0, math.ceil(math.log10(top)) - 3) if self.scale and top > 1000 else 1.0

    def a(self, j, r):
        """R(ML job j) = r: ``a[j,r]``, the table's ``x`` for a single free table, or 0."""
        if r not in self.possible[j]:
            return 0
        return self.m.x[self.free_of[j][0], r] if len(self.free_of[j]) == 1 else self.m.a[j, r]

    def load(self, j, r):
        """``L[j,r]``: bytes of job j's tables stored at region r."""
        return int(self.fx.load[j, r]) + sum(self.size[t] * self.X(t, r) for t in self.free_of[j])

    def region_of_analytics(self, j, r):
        if self.A.job_size[j] == 0:  # all loads are 0: the argmax tie goes to region 0
            return 1 if r == 0 else 0
        return self.X(self.tables_of[j][0], r) if len(self.tables_of[j]) == 1 else self.m.b[j, r]

    def region_of(self, j, r):
        """R(job j) = r for an affected job of either kind."""
        return self.a(j, r) if self.A.job_ml[j] else self.region_of_analytics(j, r)

    def row(self, expr, rhs, sense, what, unit=1.0):
        """``expr <= rhs`` (sense -1) or ``>=`` (sense 1); a constant row is checked here."""
        if isinstance(expr, (int, float, np.integer)):
            if (expr > rhs) if sense < 0 else (expr < rhs):
                self.infeasible.append(what)
            return pyo.Constraint.Skip
        return expr / unit <= rhs / unit if sense < 0 else expr / unit >= rhs / unit


def _table_homes(c: _Parts) -> None:
    """The decision variables ``x[t,r]`` of the free tables, each at exactly one region."""
    m, allowed = c.m, c.allowed
    m.x = pyo.Var([(t, r) for t in c.free for r in allowed], domain=pyo.Binary)
    m.one_home = pyo.Constraint(c.free, rule=lambda m, t: sum(m.x[t, r] for r in allowed) == 1)


def _ml_job_regions(c: _Parts) -> None:
    """R(job) of the affected ML jobs: ``a[j,r] = AND_t x[t,r]`` over the regions still possible."""
    m, free_of, fixed_of = c.m, c.free_of, c.fx.fixed
    for j in c.ml:
        regs = {int(fixed_of[t]) for t in c.tables_of[j] if fixed_of[t] >= 0}
        c.possible[j] = c.allowed if not regs else [r for r in regs if r in c.allowed_set] if len(regs) == 1 else []
    multi_ml = [(j, r) for j in c.ml if len(free_of[j]) > 1 for r in c.possible[j]]
    m.a = pyo.Var(multi_ml, bounds=(0, 1))
    m.a_le = pyo.Constraint([(j, r, t) for j, r in multi_ml for t in free_of[j]],
                            rule=lambda m, j, r, t: m.a[j, r] <= m.x[t, r])
    m.a_ge = pyo.Constraint(multi_ml, rule=lambda m, j, r: m.a[j, r] >= sum(
        m.x[t, r] for t in free_of[j]) - (len(free_of[j]) - 1))


def _analytics_job_regions(c: _Parts) -> None:
    """R(job) of the affected analytics jobs: local bytes ``m[j] = max_r L[j,r]`` for (1), and the
    exact argmax (ties to the lowest region) where the job's app has a CPU limit (5)."""
    A, m, R, load = c.A, c.m, c.R, c.load
    c.multi_an = multi_an = [j for j in c.an if len(c.tables_of[j]) > 1 and A.job_size[j] > 0]
    exact_an = [j for j in multi_an if A.job_app[j] in c.cpu_apps]
    m.b = pyo.Var(multi_an, range(R), domain=pyo.Binary)
    m.m = pyo.Var(multi_an, bounds=lambda m, j: (0, int(A.job_size[j])))
    m.b_one = pyo.Constraint(multi_an, rule=lambda m, j: sum(m.b[j, r] for r in range(R)) == 1)
    m.m_le = pyo.Constraint(multi_an, range(R), rule=lambda m, j, r: m.m[j] <= load(j, r) + int(A.job_size[j]) * (
        1 - m.b[j, r]))
    m.argmax = pyo.Constraint(
        [(j, r, q) for j in exact_an for r in range(R) for q in range(R) if q != r],
        rule=lambda m, j, r, q: load(j, q) + (1 if q < r else 0) <= load(j, r) + (int(A.job_size[j]) + 1) * (
            1 - m.b[j, r]))


def _cross_region_bytes(c: _Parts) -> None:
    """Expression (1), cross-region bytes: ``m.cross_bytes``."""
    A, m = c.A, c.m
    cross = (c.fx.cross + sum(int(A.job_size[j]) * (1 - sum(c.a(j, r) for r in c.possible[j])) for j in c.ml)
             + sum(int(A.job_size[j]) - m.m[j] for j in c.multi_an))
    m.cross_bytes = pyo.Expression(expr=cross)


def _storage_and_quota(c: _Parts) -> None:
    """Constraint (4), storage per region, and the move quota."""
    A, m, fx, size, free, inst = c.A, c.m, c.fx, c.size, c.free, c.inst
    c.stored = stored = {r: int(fx.stored[r]) + sum(size[t] * m.x[t, r] for t in free) for r in c.allowed}
    u_st = c.unit_of(size[t] for t in free)
    m.storage = pyo.Constraint(range(c.R), rule=lambda m, r: c.row(
        stored.get(r, int(fx.stored[r])), int(A.storage_cap[r]), -1, f"(4) storage of region {r}", u_st))
    c.families["storage"] = [m.storage]
    if inst.move_quota is not None:
        m.quota = pyo.Constraint(rule=lambda m: c.row(
            fx.moved + sum(size[t] * (1 - c.X(t, int(A.home0[t]))) for t in free), inst.move_quota, -1,
            "move quota", u_st))
        c.families["quota"] = [m.quota]


def _cpu_limits(c: _Parts) -> None:
    """Constraint (5), CPU-hours per (app, region) where the app lists a limit."""
    A, m, fx, R = c.A, c.m, c.fx, c.R
    jobs_of_app: dict[int, list[int]] = {}
    for j in c.aff:
        if A.job_app[j] in c.cpu_apps:
            jobs_of_app.setdefault(int(A.job_app[j]), []).append(j)
    for ai, r in np.argwhere(fx.cpu > A.cpu_cap):  # inf where (5) does not apply
        if int(ai) not in jobs_of_app:  # an app no free table touches: its CPU is a constant
            c.infeasible.append(f"(5) CPU of app {int(ai)} in region {int(r)}")

    def cpu_rule(m, ai, r):
        jobs = jobs_of_app[ai]
        expr = int(fx.cpu[ai, r]) + sum(int(A.job_cpu[j]) * c.region_of(j, r) for j in jobs)
        return c.row(expr, int(A.cpu_cap[ai, r]), -1, f"(5) CPU of app {ai} in region {r}",
                     c.unit_of(int(A.job_cpu[j]) for j in jobs))

    m.cpu = pyo.Constraint([(ai, r) for ai in sorted(jobs_of_app) for r in range(R)
                            if np.isfinite(A.cpu_cap[ai, r])], rule=cpu_rule)
    c.families["cpu"] = [m.cpu]


def _home_threshold(c: _Parts) -> None:
    """Constraint (6), high-priority GPU-hours runnable in their home region, at least the threshold.

    Also records ``c.home_reach``, the left side's largest value over all placements
    (every term it can have at once), for a direct proof that (6) cannot hold.
    """
    A, m, inst = c.A, c.m, c.inst
    high = [j for j in c.ml if A.job_high[j]]
    reach = {j: [r for r in c.possible[j] if A.supply[r, A.job_gpu[j]] > 0] for j in high}
    home_expr = c.fx.home_gh + sum(int(A.job_gh[j]) * c.a(j, r) for j in high for r in reach[j])
    m.home = pyo.Constraint(rule=lambda m: c.row(home_expr, inst.home_threshold, 1,
                                                 "(6) high-priority GPU-hours at home",
                                                 c.unit_of(int(A.job_gh[j]) for j in high)))
    c.families["home"] = [m.home]
    c.home_reach = c.fx.home_gh + sum(int(A.job_gh[j]) for j in high if reach[j])


def _gpu_deviations(c: _Parts, initial_secants: int) -> None:
    """Expression (7)'s squared deviations of GPU demand (2): ``z[r,g,k] >= (D[r,g,k]/TD[g,k] - s)**2``.

    Only the (r, g) pairs an affected ML job can reach vary; the others are
    constants of (2) (added in :func:`_gpu_balance`).
    """
    A, m, fx = c.A, c.m, c.fx
    TD, TS = A.total_demand, A.total_supply
    var_demand = c.var_demand
    for j in c.ml:
        for r in c.possible[j]:
            var_demand.setdefault((r, int(A.job_gpu[j]), int(A.job_prio[j])), []).append(j)
    c.gk = gk = [(g, k) for g in range(c.G) for k in range(c.K) if TD[g, k] > 0]
    c.rg = rg = sorted({(r, g) for r, g, _ in var_demand})
    rgk = [(r, g, k) for r, g in rg for gg, k in gk if gg == g and (r, g, k) in var_demand]
    m.z = pyo.Var(rgk, domain=pyo.NonNegativeReals)
    c.demand = demand = {(r, g, k): int(fx.demand[r, g, k]) + sum(int(A.job_gh[j]) * c.a(j, r)
                                                               for j in var_demand[r, g, k])
                         for r, g, k in rgk}
    for r, g, k in rgk:
        lo = int(fx.demand[r, g, k])
        top = lo + int(sum(int(A.job_gh[j]) for j in var_demand[r, g, k]))
        c.squares.append(_Square(m.z[r, g, k], demand[r, g, k], float(TD[g, k]),
                                 float(A.supply[r, g] / TS[g]) if TS[g] > 0 else 0.0, top, lo,
                                 _subset_sums(lo, [int(A.job_gh[j]) for j in var_demand[r, g, k]]),
                                 n_secants=initial_secants, key=("gpu", r, g, k)))


def _overload_levels(c: _Parts, saturation: int) -> None:
    """Expression (8)'s overload ``max(0, D[r,g] - S[r,g])`` as one-hot levels ``y[r,g,l]``.

    Also declares the level-split products ``W[r,g,l]`` of (7) x (8).
    """
    A, m, fx, K, var_demand = c.A, c.m, c.fx, c.K, c.var_demand
    levels, over_hi = c.levels, {}
    for r, g in c.rg:
        base = int(fx.demand[r, g].sum()) - int(A.supply[r, g])
        extra = sum(int(A.job_gh[j]) for k in range(K) for j in var_demand.get((r, g, k), []))
        lo_over, over_hi[r, g] = max(0, base), max(0, base + extra)
        jobs_rg = [int(A.job_gh[j]) for k in range(K) for j in var_demand.get((r, g, k), [])]
        levels[r, g] = _reachable_levels(base, jobs_rg, lo_over, over_hi[r, g], saturation)
    c.rgl = rgl = [(r, g, l) for r, g in c.rg for l in levels[r, g]]
    m.y = pyo.Var(rgl, domain=pyo.Binary)
    m.W = pyo.Var(rgl, domain=pyo.NonNegativeReals)
    m.level_one = pyo.Constraint(c.rg, rule=lambda m, r, g: sum(m.y[r, g, l] for l in levels[r, g]) == 1)
    demand = c.demand

    def level_rule(m, r, g):
        # y[top] means "at least top"; sigmoid(l) == 1.0 for every l >= SATURATION_LEVEL.
        top = levels[r, g][-1]
        rhs = sum(l * m.y[r, g, l] for l in levels[r, g][:-1]) + over_hi[r, g] * m.y[r, g, top]
        over = sum(demand[r, g, k] if (r, g, k) in demand else int(fx.demand[r, g, k])
                   for k in range(K)) - int(A.supply[r, g])
        unit = c.unit_of([over_hi[r, g], *(int(A.job_gh[j]) for k in range(K)
                                           for j in var_demand.get((r, g, k), []))])
        return over / unit <= rhs / unit

    m.level = pyo.Constraint(c.rg, rule=level_rule)


def _gpu_balance(c: _Parts, product: str) -> None:
    """Expression (2), GPU balance: the (7) x (8) product linearized over the levels, ``m.gpu_balance``."""
    A, m, fx, rg, rgl, gk, levels, demand = c.A, c.m, c.fx, c.rg, c.rgl, c.gk, c.levels, c.demand
    TD, TS = A.total_demand, A.total_supply
    const_terms = gpu_balance_terms(A, fx.demand)  # exact for every (r, g) outside `rg`
    rg_set = set(rg)
    gpu_constant = float(sum(const_terms[r, g].sum() for r in range(c.R) for g in range(c.G)
                             if (r, g) not in rg_set))
    qmax = {}
    for r, g in rg:
        s = A.supply[r, g] / TS[g]
        qmax[r, g] = float(sum(A.prio_w[k] * max(s, 1 - s) ** 2 for gg, k in gk if gg == g))
    m._level_qmax = qmax_l = {(r, g, l): _level_qmax(c, r, g, l) for r, g, l in rgl}
    m._levels = levels

    def q(r, g):
        def dev2(k):  # a priority no affected job brings to r: its deviation is a constant
            s = A.supply[r, g] / TS[g] if TS[g] > 0 else 0.0
            return (int(fx.demand[r, g, k]) / float(TD[g, k]) - s) ** 2

        return sum(float(A.prio_w[k]) * (m.z[r, g, k] if (r, g, k) in demand else dev2(k))
                   for gg, k in gk if gg == g)

    if product == "disaggregated":
        m.split = pyo.Constraint(rg, rule=lambda m, r, g: sum(m.W[r, g, l] for l in levels[r, g]) == q(r, g))
        m.split_ub = pyo.Constraint(rgl, rule=lambda m, r, g, l: m.W[r, g, l] <= qmax_l[r, g, l] * m.y[r, g, l])
    else:
        m.mccormick = pyo.Constraint(rgl, rule=lambda m, r, g, l: m.W[r, g, l] >= q(r, g) - qmax[r, g] * (
            1 - m.y[r, g, l]))
    sig = {l: float(sigmoid(l)) for l in range(SATURATION_LEVEL + 1)}
    m.gpu_balance = pyo.Expression(expr=gpu_constant + sum(sig[l] * m.W[r, g, l] for r, g, l in rgl))


def _level_qmax(c: _Parts, r: int, g: int, l: int) -> float:
    """The largest ``Q[r,g] = sum_k w_k (7)`` at overload level ``l``: the big-M of ``W[r,g,l]``.

    Below the top level, level ``l`` holds only when ``D[r,g] <= S[r,g] + l`` (the
    level row), so each ``D[r,g,k]`` lies between its fixed part and
    ``min(its largest value, S + l - the other priorities' fixed parts)``; a
    convex square is largest at an end of that range. At the lowest level of an
    optimal solution (the overload itself, or 0) the product is at most this, so
    no placement loses its true value, and the LP relaxation no longer reads the
    whole deviation at the cheapest level's factor.
    """
    A, fx, K = c.A, c.fx, c.K
    TD, TS = A.total_demand, A.total_supply
    s = A.supply[r, g] / TS[g]
    lo = [int(fx.demand[r, g, k]) for k in range(K)]
    top = [lo[k] + sum(int(A.job_gh[j]) for j in c.var_demand.get((r, g, k), [])) for k in range(K)]
    cap = None if l == c.levels[r, g][-1] else int(A.supply[r, g]) + l
    total = 0.0
    for gg, k in c.gk:
        if gg != g:
            continue
        hi = top[k] if cap is None else max(lo[k], min(top[k], cap - (sum(lo) - lo[k])))
        total += float(A.prio_w[k]) * max((lo[k] / TD[g, k] - s) ** 2, (hi / TD[g, k] - s) ** 2)
    return total


def _storage_balance(c: _Parts, initial_secants: int) -> None:
    """Expressions (3) and (9), storage balance: ``zs[r] >= (stored_r/total - cap_r/capacity)**2``.

    Regions no free table can reach are constants.
    """
    A, m, fx, size, free = c.A, c.m, c.fx, c.size, c.free
    st_terms = storage_balance_terms(A, fx.stored)
    st_var = c.allowed if (A.total_size > 0 and free) else []
    m.zs = pyo.Var(st_var, domain=pyo.NonNegativeReals)
    for r in st_var:
        lo = int(fx.stored[r])
        c.squares.append(_Square(m.zs[r], c.stored[r], float(A.total_size),
                                 float(A.storage_cap[r] / A.total_capacity), lo + sum(size[t] for t in free), lo,
                                 _subset_sums(lo, [size[t] for t in free]), n_secants=initial_secants,
                                 key=("storage", r)))
    st_constant = float(sum(st_terms[r] for r in range(c.R) if r not in set(st_var)))
    m.storage_balance = pyo.Expression(expr=st_constant + sum(m.zs[r] for r in st_var))


def _objective(c: _Parts) -> None:
    """The initial secant cuts of every square term and the objective ``w1 (1) + w2 (2) + w3 (3)``."""
    m, inst = c.m, c.inst
    m.cuts = pyo.ConstraintList()
    for sq in c.squares:
        for cut in sq.initial_cuts():
            m.cuts.add(cut)
    m.obj = pyo.Objective(expr=inst.w1 * m.cross_bytes + inst.w2 * m.gpu_balance + inst.w3 * m.storage_balance,
                          sense=pyo.minimize)
    m._squares = c.squares
    m._cut_points = [set(sq.initial_points()) for sq in c.squares]
    m._fixed = c.fx
    m._infeasible = c.infeasible
    m._families = c.families
    m._home_reach = c.home_reach


SUBSET_SUM_BITS = 1 << 20  # largest window the reachable-level search handles; beyond it all levels stay


def _reachable_levels(base: int, hours: list[int], lo_over: int, hi_over: int,
                      cap: int = SATURATION_LEVEL) -> list[int]:
    """Overload levels ``max(0, base + subset sum of hours)`` that can occur, capped at saturation.

    The overload of (r, g) is ``base + sum of the GPU-hours of the ML jobs placed at
    r`` (``base`` = the fixed demand minus supply). Only levels 0 .. SATURATION_LEVEL
    are distinguished; a superset of the reachable ones keeps the model exact (the
    minimization picks the lowest level at or above the overload, which is then the
    overload itself). A bitset subset-sum over ``hours`` finds them when the window
    ``[-base, -base + SATURATION_LEVEL]`` is small enough; in a sub-problem with a few
    jobs this removes most of the 38 levels.
    """
    full = list(range(min(lo_over, cap), min(hi_over, cap) + 1))
    hi = cap - base  # sums above this saturate
    if len(full) <= 2 or hi >= SUBSET_SUM_BITS or hi < 0:
        return full
    mask = (1 << (hi + 1)) - 1
    bits = 1
    for h in hours:
        bits |= (bits << h) & mask
    first = max(0, -base)  # sums below this leave no overload
    out = {0} if bits & ((1 << first) - 1) else set()
    out.update(base + s for s in range(first, hi + 1) if bits >> s & 1)
    if hi_over >= cap:  # sums beyond the window saturate
        out.add(cap)
    return sorted(lv for lv in out if lv in set(full)) or full


def _subset_sums(base: int, values: list[int], most: int = FULL_SECANTS + 1) -> list[int] | None:
    """``base`` plus every subset sum of ``values``, sorted; ``None`` when more than ``most``."""
    total = sum(values)
    if total >= SUBSET_SUM_BITS or len(values) > 40:
        return None
    bits = 1
    for v in values:
        bits |= bits << v
    digits = bin(bits)[:1:-1]  # bit s of ``bits`` is digits[s]: one pass, not a shift per s
    if digits.count("1") > most:
        return None
    return [base + s for s, d in enumerate(digits) if d == "1"]


def add_violated_secants(m: pyo.ConcreteModel, tol: float) -> list:
    """The lazy outer approximation of the convex terms (7) and (9): at the loaded incumbent, every
    square term whose epigraph variable lies below its curve (relative ``tol``) gets the secants
    around the incumbent's value that the model does not have yet. Returns the added rows (a
    persistent solver is handed them)."""
    new = []
    for sq, pts in zip(m._squares, m._cut_points, strict=True):
        n = int(round(pyo.value(sq.n)))
        if pyo.value(sq.z) < sq.f(n) - tol * max(1.0, sq.f(n)):
            for p in (n - 1, n):
                if sq.lo <= p < sq.top and p not in pts:
                    new.append(m.cuts.add(sq.secant(p)))
                    pts.add(p)
    return new


def add_secants_at(m: pyo.ConcreteModel, ev) -> list:
    """The secants around a placement's values of every square term (its reference evaluation
    ``ev``) that the model does not have yet: the model is exact at that placement afterwards.
    Valid at every integer point, like every secant. Returns the added rows."""
    new = []
    for sq, pts in zip(m._squares, m._cut_points, strict=True):
        if not sq.key:
            continue
        n = sq.value_at(ev)
        for p in (n - 1, n):
            if sq.lo <= p < sq.top and p not in pts:
                new.append(m.cuts.add(sq.secant(p)))
                pts.add(p)
    return new


class _StartedHighs(Highs):
    """Pyomo's persistent HiGHS, handing HiGHS a start (``x`` of a placement) before each run.

    The start is partial (only the ``x`` columns): HiGHS completes it with a small
    sub-MIP (``mip_max_start_nodes``) and keeps it as its first incumbent when the
    completion is feasible; otherwise the run goes on without it. Pyomo 6.10's HiGHS interface
    takes no start, so this reaches into its private ``_solve``, ``_pyomo_var_to_solver_var_map``
    and ``_solver_model``: valid for the Pyomo version pinned in ``pyproject.toml``, to recheck
    when the pin moves (a lost start would cost time, not correctness: the tests against brute
    force would still pass; ``test_highs_receives_the_start`` in
    ``tests/tetris/test_tetris_model_start.py`` fails instead).
    """

    start: list | None = None  # (Pyomo variable, value) pairs

    def _solve(self):
        if self.start:
            vmap = self._pyomo_var_to_solver_var_map
            cols = [(vmap[id(v)], val) for v, val in self.start if id(v) in vmap and not v.fixed]
            if cols:
                self._solver_model.setSolution(len(cols), np.array([c for c, _ in cols], dtype=np.int32),
                                               np.array([val for _, val in cols], dtype=float))
        return super()._solve()


def _x_start(m: pyo.ConcreteModel, home: np.ndarray) -> list:
    """The ``x`` values of a placement, as a start for :class:`_StartedHighs`."""
    return [(v, 1.0 if home[t] == r else 0.0) for (t, r), v in m.x.items()]


def _home_of(m: pyo.ConcreteModel) -> np.ndarray:
    """The incumbent rounded to a placement: each free table at its largest x."""
    fx: _Fixed = m._fixed
    home = fx.fixed.copy()
    for t in fx.free.tolist():
        home[t] = max(fx.regions, key=lambda r: pyo.value(m.x[t, r]))
    return home


def _integrality_violation(m: pyo.ConcreteModel) -> float:
    """Largest distance of a binary variable from 0 or 1 at the loaded incumbent."""
    worst = 0.0
    for v in m.component_data_objects(pyo.Var):
        if v.is_binary() and v.value is not None and not v.fixed:
            worst = max(worst, min(abs(v.value), abs(1.0 - v.value)))
    return worst


def _within_gap(value: float, bound: float | None, mip_gap: float) -> bool:
    """``value - bound <= mip_gap * |value|`` (HiGHS's relative gap), or within ``ABS_GAP``."""
    if bound is None or not math.isfinite(bound):
        return False
    return value - bound <= max(mip_gap * abs(value), ABS_GAP)


class _Rounds:
    """The lazy-secant loop of one HiGHS configuration on one model.

    Keeps the best placement seen so far by its reference value (the caller's
    ``known`` start and every round's incumbent): each round hands it to HiGHS as a
    start, the model gets the secants that make it exact there, and the loop stops
    as soon as its reference value is within the gap of the best bound of any round
    (every round's bound is valid: outer approximation) -- the cuts an incumbent
    still violates cannot change that proof, so no further round is needed for it.
    """

    def __init__(self, inst: TetrisInstance, m: pyo.ConcreteModel, stats: dict, tol: float,
                 known: tuple = (None, None), mip_solver: str = "highs") -> None:
        self.inst, self.m, self.stats, self.tol = inst, m, stats, tol
        # SCIP and CBC read the round's model as an MPS file and get no start (backends.FileSolver).
        self.opt = _StartedHighs() if mip_solver == "highs" else mip_backend(mip_solver)
        self.t0 = time.perf_counter()
        self.best_home, self.best_obj = None, None
        if known[0] is not None:
            self._offer(np.asarray(known[0], dtype=np.int64))

    def _offer(self, home: np.ndarray) -> None:
        """Keep ``home`` when it is feasible and better than the best so far; the model becomes exact there."""
        ev = evaluate(self.inst, home)
        if violations(self.inst, home, ev) or (self.best_obj is not None and ev.objective >= self.best_obj):
            return
        self.best_home, self.best_obj = home.copy(), ev.objective
        self.stats["lazy_cuts"] += len(add_secants_at(self.m, ev))

    def _closed(self, out: dict, mip_gap: float) -> bool:
        """The best placement's reference value is within the gap of the best bound: report it as converged."""
        if self.best_home is None or not _within_gap(self.best_obj, out["bound"], mip_gap):
            return False
        out.update(termination="converged", converged=True, message="", home=self.best_home.copy())
        self.stats["closed_by_bound"] = self.stats.get("closed_by_bound", 0) + 1
        return True

    def run(self, options: dict, deadline: float, mip_gap: float, max_rounds: int) -> dict:
        """Solve, add the secants the incumbent violates, repeat. Returns what happened."""
        m = self.m
        out: dict = {"termination": "error", "home": None, "bound": None, "model_objective": None,
                     "converged": False, "message": ""}
        # The start and the proof by the best bound only at the tight tolerance: at HiGHS's default
        # (1e-6) its infeasibility proofs were seen to be wrong (tests/tetris/test_tetris_verify.py), so
        # a start it "cannot improve on" would be called optimal.
        tight = options.get("mip_feasibility_tolerance", 1e-6) <= DEFAULT_HIGHS_OPTIONS["mip_feasibility_tolerance"]
        for _ in range(max_rounds):
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                out["termination"] = "time_limit"
                return out
            self.stats["rounds"] += 1
            self.opt.start = None if self.best_home is None or not tight else _x_start(m, self.best_home)
            res = self.opt.solve(m, time_limit=remaining, rel_gap=mip_gap, threads=1, tee=False,
                                 load_solutions=False, raise_exception_on_nonoptimal_result=False,
                                 solver_options=options)
            got = outcome(res)
            if got.termination == "infeasible":
                out["termination"] = "infeasible"
                return out
            if got.bound is not None:
                # Each round's bound is valid (outer approximation): keep the best.
                out["bound"] = got.bound if out["bound"] is None else max(out["bound"], got.bound)
            if not got.has_solution:
                if tight and self._closed(out, mip_gap):
                    return out
                out["termination"] = got.stop
                out["message"] = got.condition
                return out
            out["home"] = _home_of(m)
            out["model_objective"] = pyo.value(m.obj)
            out["integrality_violation"] = _integrality_violation(m)
            added = len(add_violated_secants(m, self.tol))
            self.stats["lazy_cuts"] += added
            self._offer(out["home"])
            self.stats.setdefault("round_log", []).append(
                {"s": round(time.perf_counter() - self.t0, 2), "termination": got.condition.split(".")[-1],
                 "bound": res.objective_bound, "model_objective": out["model_objective"],
                 "best_reference": self.best_obj, "added": added})
            if tight and self._closed(out, mip_gap):
                return out
            if added == 0:
                out["converged"] = got.converged
                out["termination"] = "converged" if got.converged else (
                    "time_limit" if got.termination == "time_limit" else "limit")
                out["message"] = "" if got.converged else got.condition
                return out
            if not got.converged:
                out["termination"] = "time_limit" if got.termination == "time_limit" else "limit"
                out["message"] = got.condition
                if self.best_home is not None:
                    out["home"] = self.best_home.copy()
                return out
        out["termination"] = "limit"
        out["message"] = f"stopped after {max_rounds} cut rounds"
        return out


def solve(inst: TetrisInstance, *, time_limit: float = 60.0, mip_gap: float = 1e-6,
          max_rounds: int = 200, tol: float = 1e-9, product: Literal["disaggregated", "mccormick"] = "disaggregated",
          highs_options: dict | None = None, fix_home: TetrisSolution | np.ndarray | None = None,
          fixed: np.ndarray | None = None, regions=None, scale: bool = False, recover: bool = True,
          node_limit: int | None = None, start: np.ndarray | None = None,
          saturation: int = SATURATION_LEVEL, initial_secants: int = INITIAL_SECANTS,
          mip_solver: MipSolver = "highs", on_model: Callable[[pyo.ConcreteModel], None] | None = None
          ) -> SolveResult:
    """Solve Figure 4 exactly with HiGHS (lazy secant rounds), then verify the answer.

    Verification (a solver's own number is never the last word): after the last
    round the incumbent is rounded to a placement, judged by the reference
    :func:`~placement.tetris.evaluate` and :func:`~placement.tetris.violations`,
    and its reference objective is compared with the bound. The result is
    ``optimal`` only if the placement breaks no hard constraint and
    ``reference - bound <= max(mip_gap * |reference|, ABS_GAP)``. When that fails
    (HiGHS's integrality tolerance times large coefficients can hide demand, see
    the module docstring), the model is solved again with ``RECOVERY_OPTIONS``
    (tolerances 1e-10); if that does not verify either, the result is ``feasible``
    with the best verified placement, the honest bound and a message. ``stats
    ["verification"]`` holds one entry per attempt (model and reference objective,
    bound, true gap, integrality violation, violations), ``stats["recovery"]`` the
    steps taken.

    Parameters
    ----------
    time_limit : float
        Seconds for the whole solve (all rounds and the recovery).
    mip_gap : float
        Relative MIP gap passed to HiGHS, and the gap ``optimal`` is verified against.
    max_rounds : int
        Upper bound on cut rounds (each round adds secants violated by the incumbent).
    product : str
        Linearization of (7) x (8), see :func:`build`.
    highs_options : dict, optional
        Extra HiGHS options, merged over ``DEFAULT_HIGHS_OPTIONS`` (presolve off,
        tight integrality tolerance: see those constants).
    fix_home : TetrisSolution or array, optional
        Fix every home and solve only for the auxiliary variables: the model's
        value of one given placement (``infeasible`` if it breaks a hard constraint).
    fixed, regions : optional
        Solve the sub-problem of :func:`build` (tables with ``fixed[t] >= 0`` stay
        there, free tables may take ``regions``). ``optimal`` then means optimal
        for the sub-problem; the objective is still the full objective.
    scale : bool
        Row scaling of :func:`build`.
    recover : bool
        Run the recovery step when verification fails (default True).
    node_limit : int, optional
        HiGHS ``mip_max_nodes`` per round: a deterministic work limit (a time limit
        is not). A round stopped by it is a ``time_limit`` status.
    saturation : int
        See :func:`build`; below ``SATURATION_LEVEL`` the model is a relaxation and
        ``optimal`` is reported only when the reference evaluation still verifies it.
    initial_secants : int
        See :func:`build` (the first round's secants per large-domain square term).
    start : array, optional
        A placement (consistent with ``fixed``) known to the caller; when it is
        feasible it is the fallback result, so the solve never returns worse. The
        full problem uses the instance's current homes by default.
    mip_solver : {"highs", "scip", "cbc"}
        The MIP solver of each round (:mod:`placement.models.backends`): HiGHS in memory
        (default), or SCIP / CBC on the round's model written as MPS (no start handed
        over; ``highs_options`` apply to HiGHS, ``mip_feasibility_tolerance`` is mapped).
        Every backend's answer goes through the same verification.
    on_model : callable, optional
        Called with the model after the last round (all its cuts): what
        :mod:`placement.models.export` writes, an exact model at the answer.

    Returns
    -------
    SolveResult
        ``objective`` is the reference evaluation of ``solution``; ``bound`` a valid
        lower bound on the optimum (of the sub-problem when ``fixed`` is given).
        Statuses: ``optimal`` (verified), ``feasible`` (verification failed and could
        not be recovered), ``time_limit`` (incumbent or none), ``infeasible``
        (proven; ``message`` names the family of hard constraints that makes it
        so, by a direct argument or by dropping families in turn, and
        ``stats["infeasibility"]`` keeps what was tried), ``error``. ``stats``: rounds, cuts, binaries, variables,
        constraints, build and solve seconds, the model's own objective value,
        ``verification`` and ``recovery``.
    """
    t0 = time.perf_counter()
    deadline = t0 + time_limit
    require(check_mip_solver(mip_solver))
    m, stats = _prepare(inst, fix_home, product=product, fixed=fixed, regions=regions, scale=scale,
                        saturation=saturation, initial_secants=initial_secants)
    stats["mip_solver"] = mip_solver
    out = _trivial(inst, m, stats)
    if out is None:
        base = {**DEFAULT_HIGHS_OPTIONS, **SEARCH_OPTIONS, **(highs_options or {})}
        if node_limit is not None:
            base["mip_max_nodes"] = int(node_limit)
        attempts = [("default", base)]
        if recover:
            attempts.append(("tight_tolerances", {**base, **RECOVERY_OPTIONS}))
        if start is None and fixed is None and fix_home is None:
            start = inst.arrays.home0
        known = _known_feasible(inst, m, start, stats)
        out = _settle(_solve_and_verify(inst, m, stats, attempts, known, deadline=deadline, mip_gap=mip_gap,
                                        max_rounds=max_rounds, tol=tol, mip_solver=mip_solver), stats)
        if out.status == Status.INFEASIBLE:
            out.message = _diagnose(inst, m, base, deadline, fix_home, stats)
    if on_model is not None:
        on_model(m)
    return _result(out, stats, t0)


@dataclass
class _Outcome:
    """Where a solve ended: status, message, the best verified placement and the bound."""

    status: Status
    message: str = ""
    home: np.ndarray | None = None
    objective: float | None = None
    bound: float | None = None


def _prepare(inst: TetrisInstance, fix_home, **build_options) -> tuple[pyo.ConcreteModel, dict]:
    """Build the model (every home fixed when ``fix_home`` is given) and start ``stats``."""
    t0 = time.perf_counter()
    m = build(inst, **build_options)
    if fix_home is not None:
        home = np.asarray(fix_home.home if isinstance(fix_home, TetrisSolution) else fix_home, dtype=np.int64)
        for (t, r), v in m.x.items():
            v.fix(1 if home[t] == r else 0)
    build_s = time.perf_counter() - t0
    stats: dict = {"product": build_options["product"], "scale": build_options["scale"], "build_s": build_s,
                   "rounds": 0, "lazy_cuts": 0,
                   "binaries": sum(1 for v in m.component_data_objects(pyo.Var) if v.is_binary()),
                   "variables": sum(1 for _ in m.component_data_objects(pyo.Var)),
                   "constraints": sum(1 for _ in m.component_data_objects(pyo.Constraint, active=True)),
                   "free_tables": len(m._fixed.free), "verification": [], "recovery": []}
    return m, stats


def _trivial(inst: TetrisInstance, m: pyo.ConcreteModel, stats: dict) -> _Outcome | None:
    """The answers that need no solver: a constant row that cannot hold, or nothing left free."""
    if m._infeasible:
        return _Outcome(Status.INFEASIBLE, "cannot be met whatever the free tables do: " + "; ".join(m._infeasible))
    if stats["variables"] == 0:  # nothing free: the fixed placement is the only one
        home = m._fixed.fixed
        ev = evaluate(inst, home)
        stats["model_objective"] = pyo.value(m.obj)
        return _Outcome(Status.OPTIMAL, "", home, ev.objective, ev.objective)
    return None


def _known_feasible(inst: TetrisInstance, m: pyo.ConcreteModel, start, stats: dict) -> tuple:
    """``(home, objective)`` of ``start`` when it is consistent with the model and feasible, else Nones."""
    if start is None:
        return None, None
    start = np.asarray(start, dtype=np.int64)
    fx: _Fixed = m._fixed
    consistent = bool(np.all((fx.fixed < 0) | (start == fx.fixed))) and bool(
        np.isin(start[fx.free], fx.regions).all())
    ev = evaluate(inst, start)
    stats["start_objective"] = ev.objective if consistent else None
    if consistent and not violations(inst, start, ev):  # a known feasible placement: the fallback
        return start.copy(), ev.objective
    return None, None


def _solve_and_verify(inst: TetrisInstance, m: pyo.ConcreteModel, stats: dict, attempts: list, known: tuple,
                      *, deadline: float, mip_gap: float, max_rounds: int, tol: float,
                      mip_solver: str = "highs") -> _Outcome:
    """Each attempt: the lazy-secant rounds, then the verification of its incumbent (module docstring).

    The next attempt (recovery) runs only when an attempt's answer is not verified.
    """
    rounds = _Rounds(inst, m, stats, tol, known, mip_solver)
    best_home, best_obj = known
    bound = None
    status, message = Status.ERROR, ""
    for name, options in attempts:
        if name != "default":
            stats["recovery"].append(name)
        out = rounds.run(options, deadline, mip_gap, max_rounds)
        if out["bound"] is not None:
            bound = out["bound"] if bound is None else max(bound, out["bound"])
        if out["termination"] == "infeasible":
            # HiGHS 1.15.1 at its default tolerances "proved" a feasible generated instance
            # infeasible (tests/tetris/test_tetris_verify.py): the claim is checked like a value.
            stats["verification"].append({"attempt": name, "claim": "infeasible",
                                          "known_feasible": best_home is not None})
            status, message = Status.INFEASIBLE, ""
            if best_home is not None:
                status = Status.FEASIBLE
                message = f"HiGHS claimed infeasibility ({name}) but a feasible placement is known"
                continue
            break
        home = out["home"]
        if home is None:
            status, message = (Status.TIME_LIMIT if out["termination"] == "time_limit" else Status.ERROR), \
                out["message"]
            break
        ev = evaluate(inst, home)
        viol = violations(inst, home, ev)
        check = {"attempt": name, "model_objective": out["model_objective"], "reference_objective": ev.objective,
                 "bound": bound, "true_gap": relative_gap(ev.objective, bound, relative_to="value"),
                 "model_vs_reference": relative_gap(ev.objective, out["model_objective"],
                                                   relative_to="value"),
                 "integrality_violation": out["integrality_violation"], "violations": viol}
        stats["verification"].append(check)
        stats["model_objective"] = out["model_objective"]
        if not viol and (best_obj is None or ev.objective < best_obj):
            best_home, best_obj = home, ev.objective
        check["verified"] = out["converged"] and not viol and _within_gap(ev.objective, bound, mip_gap)
        if check["verified"]:
            status, message = Status.OPTIMAL, ""
            break
        if out["termination"] != "converged":
            status, message = Status.TIME_LIMIT, out["message"]
            break
        status = Status.FEASIBLE
        message = (f"not verified: the model's value {out['model_objective']:.10g} at its incumbent, reference "
                   f"{ev.objective:.10g}, bound {bound}" + (f", violations: {'; '.join(viol)}" if viol else ""))
    return _Outcome(status, message, best_home, best_obj, bound)


def _settle(out: _Outcome, stats: dict) -> _Outcome:
    """The reported answer: no placement without a verified one, a bound never above it, the true gap."""
    if out.home is None or out.status == Status.ERROR:
        if out.status in (Status.OPTIMAL, Status.FEASIBLE):
            out.status = Status.ERROR
            out.message = "no incumbent satisfies the hard constraints after rounding: " + out.message
        out.home, out.objective = None, None
        return out
    if out.bound is not None and out.bound > out.objective:  # a lower bound above a verified value is not a bound
        stats["bound_clamped"] = out.bound
        out.bound = out.objective
    if out.status == Status.OPTIMAL:
        out.bound = min(out.bound, out.objective)
    elif out.status == Status.FEASIBLE:
        gap = relative_gap(out.objective, out.bound, relative_to="value")  # HiGHS's mip_rel_gap
        out.message += f"; kept the best verified placement ({out.objective:.10g}), true gap " + (
            "unknown (no bound)" if gap is None else f"{gap:.3g}")
    return out


def _result(out: _Outcome, stats: dict, t0: float) -> SolveResult:
    """The :class:`SolveResult` of an outcome, with the wall time since ``t0``."""
    wall = time.perf_counter() - t0
    stats["solve_s"] = wall - stats["build_s"]
    sol = None if out.home is None else TetrisSolution(home=out.home)
    return SolveResult(out.status, "exact", solution=sol, objective=out.objective, bound=out.bound,
                       wall_time_s=wall, stats=stats, message=out.message)


# The hard-constraint families of Figure 4, as build() groups their rows in ``m._families``.
FAMILY_NAMES = {"storage": "constraint (4) storage", "quota": "the move quota", "cpu": "constraint (5) CPU",
                "home": "constraint (6) home threshold"}


def _diagnose(inst: TetrisInstance, m: pyo.ConcreteModel, options: dict, deadline: float, fix_home,
              stats: dict) -> str:
    """Name the hard-constraint family that makes a proven-infeasible model infeasible (one line).

    First the direct arguments (:func:`_direct_reasons`); failing those, the model
    is solved for feasibility alone (objective off) with each family of (4), (5),
    (6) and the move quota dropped in turn, then each pair, and so on: the smallest
    sets whose removal leaves a feasible model are named. The re-solves share the
    solve's time limit. Under an objective cutoff (HiGHS's ``objective_bound``, as a
    matheuristic's sub-solves use) infeasibility may be the cutoff's, and only the
    direct arguments are tried. ``stats["infeasibility"]`` keeps what was tried.
    """
    record: dict = {"direct": _direct_reasons(inst, m, fix_home), "dropped": []}
    stats["infeasibility"] = record
    if record["direct"]:
        return "infeasible: " + "; ".join(record["direct"])
    if "objective_bound" in options:
        return "infeasible: proven under the objective cutoff objective_bound (no hard constraint named)"
    families = [f for f in FAMILY_NAMES if f in m._families and any(len(c) for c in m._families[f])]
    m.obj.deactivate()
    try:
        for size in range(1, len(families) + 1):
            found = []
            for subset in itertools.combinations(families, size):
                outcome = _feasible_without(m, subset, options, deadline)
                record["dropped"].append({"families": list(subset), "outcome": outcome})
                if outcome == "unknown":
                    return "infeasible: the constraint family was not identified within the time limit"
                if outcome == "feasible":
                    found.append(subset)
            if found:
                return "infeasible: " + _name_subsets(found)
    finally:
        m.obj.activate()
    return "infeasible: no hard-constraint family explains it (the model stays infeasible without them)"


def _direct_reasons(inst: TetrisInstance, m: pyo.ConcreteModel, fix_home) -> list[str]:
    """Infeasibility proofs that need no solver, one line per family that cannot hold on its own.

    A given placement (``fix_home``) is judged by :func:`~placement.tetris.violations`.
    Otherwise: (6) needs more high-priority GPU-hours at home than all of them
    together can give; (4) the free tables need more bytes than the regions they
    may take have left, or the fixed tables alone overfill a region; the move
    quota is below the bytes of the fixed tables already moved plus the free
    tables that cannot stay home.
    """
    if fix_home is not None:
        home = fix_home.home if isinstance(fix_home, TetrisSolution) else fix_home
        viol = violations(inst, np.asarray(home, dtype=np.int64))
        return [f"the given placement breaks {'; '.join(viol)}"] if viol else []
    A, fx = inst.arrays, m._fixed
    out = []
    if m._home_reach < inst.home_threshold:
        out.append(f"{FAMILY_NAMES['home']}: at most {m._home_reach} high-priority GPU-hours can run in their "
                   f"home region, the threshold is {inst.home_threshold}")
    over = [r for r in fx.regions if fx.stored[r] > A.storage_cap[r]]
    need = int(A.size[fx.free].sum())
    room = sum(max(0, int(A.storage_cap[r] - fx.stored[r])) for r in fx.regions)
    if over:
        r = over[0]
        out.append(f"{FAMILY_NAMES['storage']}: the fixed tables alone store {int(fx.stored[r])} bytes in "
                   f"{inst.region_names[r]}, capacity {int(A.storage_cap[r])}")
    elif need > room:
        out.append(f"{FAMILY_NAMES['storage']}: the tables to place hold {need} bytes, the regions they may take "
                   f"have {room} bytes free")
    if inst.move_quota is not None:
        stay = np.isin(A.home0[fx.free], fx.regions)
        least = fx.moved + int(A.size[fx.free][~stay].sum())
        if least > inst.move_quota:
            out.append(f"{FAMILY_NAMES['quota']}: at least {least} bytes must move, the quota is {inst.move_quota}")
    return out


def _feasible_without(m: pyo.ConcreteModel, families: tuple[str, ...], options: dict, deadline: float) -> str:
    """``feasible``, ``infeasible`` or ``unknown``: HiGHS on the model without these families' rows."""
    remaining = deadline - time.perf_counter()
    if remaining <= 0:
        return "unknown"
    blocks = [c for f in families for c in m._families[f]]
    for c in blocks:
        c.deactivate()
    try:
        res = SolverFactory("highs").solve(m, time_limit=remaining, threads=1, tee=False, load_solutions=False,
                                           raise_exception_on_nonoptimal_result=False, solver_options=options)
    finally:
        for c in blocks:
            c.activate()
    got = outcome(res, load=False)
    return "infeasible" if got.termination == "infeasible" else "feasible" if got.has_solution else "unknown"


def _name_subsets(found: list[tuple[str, ...]]) -> str:
    """The message of :func:`_diagnose` for the smallest family sets whose removal restores feasibility."""
    if len(found[0]) == 1:
        names = [FAMILY_NAMES[s[0]] for s in found]
        if len(names) == 1:
            return f"{names[0]}: without it every other hard constraint can be met"
        return f"{' or '.join(names)}: without any one of them every other hard constraint can be met"
    groups = [" and ".join(FAMILY_NAMES[f] for f in s) for s in found]
    return (f"{' or '.join(groups)}: no single family is the cause; without "
            f"{'these together' if len(groups) == 1 else 'any one of these groups'} every other hard "
            f"constraint can be met")
