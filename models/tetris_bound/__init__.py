"""A lower bound on MAST Tetris (Figure 4, expressions (1)-(9)) that scales: a relaxation in matrix form.

The exact model (:mod:`placement.models.tetris`) proves optima up to about 60 tables; past a
few thousand tables neither Pyomo's per-variable cost nor HiGHS's branch and bound
fit in minutes. This package builds a **relaxation** of the same formulation with
numpy and hands it to HiGHS through ``highspy`` (``Highs.passModel``), so the
model transfer costs seconds at 100,000 tables instead of minutes.

The relaxation -- the exact formulation with ``x``, ``a``, ``b``, ``y`` continuous, the squares
(7) and (9) cut by tangents and chords, the argmax rows of CPU-limited analytics jobs dropped,
the analytics majority in disjunctive form -- and why each change was made are written once,
in :mod:`placement.models.tetris_bound.relaxation`'s docstring, beside the code that builds it.

Where the LP loses (measured on 8 proven instances 20x40x4 to 40x80x5, seeds 9601-9608,
Tetris page): the GPU balance (2), through the *fractional placement of ML jobs*. The LP's
(7) sum is 1.3-3x below the optimum's while its sigmoid factor (8) stays near 0.5 as the
optimum's does (0.52-0.67); keeping the ML jobs whole (``a`` and single-table ML jobs'
``x`` integer, the rest relaxed) lifts the bound from 34-65% of the optimum to 68-91%,
and with the overload levels ``y`` integer too to 84-99%, while ``y`` integer alone gives
0-23% more. The disjunctive analytics rows gave 0-6%. A Lagrangian relaxation that
separates the jobs from the tables has the LP's value (a job's region choice is a
simplex). At scale the loss is in the tables: a hot table's LP home is spread over the
regions, and its readers' demand with it. :mod:`placement.models.tetris_bound.branch` branches on
hot tables' homes over this LP (every leaf certified by :func:`dual_bound`, closed
leaves by :func:`farkas_value`): 69-98% of the optimum on the 13 proven instances,
164,258 at 1,000 tables in 600 s (this LP alone: 103,790); ``method="branch"`` runs it.

Every method assumes (5)'s fixings (:mod:`placement.models.tetris_bound.fixings`): homes a table
cannot have because the jobs it alone decides would break an app's CPU capacity there, and the job
regions that follow. They were the bound's main loss at scale (the LP and the Lagrangian spread a
hot table over such regions): at 10,000 x 20,000 x 16 the forest rose from 302,821 to 1,354,228 in
240 s (seed 52203; Tetris page).

The bound is certified in numpy (:func:`dual_bound`): for any row multipliers, the
Lagrangian value ``b'y + sum_j min(r_j l_j, r_j u_j)`` (every column is boxed) is a
valid bound, so it is computed at each round's duals and never taken from the solver;
an interior-point or PDLP iterate stopped by the time limit still gives a valid (weaker)
bound. Measured at 1,000 x 2,000 x 10 (seed 38001, machine shared): HiGHS's IPM 87
iterations, 27.6 s CPU, dual bound equal to the LP value to 1e-8; 16 iterations
(time limit): -2.6e8 (useless but valid); PDLP 8,758 / 27,373 iterations: 41,263 /
59,977 (the LP's value 103,344; both before the fixings). With the fixings the LP is 225,131 at
1,000 tables, and at 10,000 x 20,000 x 16 (seed 52203) IPX converges in 212 iterations and 1,340 s
on one thread ("imprecise", value 1,675,261); its multipliers certify 1,674,923 since the certificate's
rounding margin is a floating-point error bound and the choice rows' multipliers are polished
(:func:`dual_bound`; the earlier margin, 1e-9 of every magnitude, lost 7% there to multipliers of
1e13 that cancel). PDLP (21,313 iterations in 600 s before the fixings) reached no positive bound.

Statuses: each method's module says which it returns (the LP's: :mod:`placement.models.tetris_bound.lp`).

Layout: :mod:`~placement.models.tetris_bound.relaxation` (the matrix, :func:`build`, the
certificates :func:`dual_bound` and :func:`farkas_value`, the HiGHS model transfer, the
constants) <- the six methods :mod:`~placement.models.tetris_bound.lp` (the outer-approximation
rounds), :mod:`~placement.models.tetris_bound.branch`, :mod:`~placement.models.tetris_bound.hot`,
:mod:`~placement.models.tetris_bound.lagrange` (a decomposition in numpy, no LP of the instance),
:mod:`~placement.models.tetris_bound.forest` (the same, jobs kept whole along a spanning forest) and
:mod:`~placement.models.tetris_bound.mip` <- this ``__init__`` (the dispatcher :func:`solve`,
and the relaxation's public names re-exported). Nothing imports the dispatcher back: a method
module imports ``.relaxation`` (and another method module if it needs one), never a name
defined here, so the package has no import circle (``tests/core/test_imports.py``).
"""

from __future__ import annotations

from placement.errors import InstanceError
from placement.result import SolveResult
from placement.tetris import TetrisInstance

from ..backends import MipSolver, check_mip_solver
from . import branch, forest, hot, lagrange, lp, mip, reach
from .relaxation import (
    DENSE_ROW,
    GRID_TANGENTS,
    MAX_CHORD_VALUES,
    PDLP_MIN_COLUMNS,
    REL_SAFETY,
    SATURATION_LEVEL,
    SIMPLEX_MAX_COLUMNS,
    SUBSET_SUM_BITS,
    BoundModel,
    add_tangents,
    build,
    dual_bound,
    farkas_value,
    highs_model,
    peak_rss_mb,
    run_until,
)

__all__ = ["solve", "choose_method", "AUTO_BRANCH_MAX_TABLES", "AUTO_LP_MAX_TABLES", "build", "dual_bound", "farkas_value", "BoundModel", "run_until", "add_tangents",
           "highs_model", "peak_rss_mb", "SATURATION_LEVEL", "REL_SAFETY", "GRID_TANGENTS",
           "SIMPLEX_MAX_COLUMNS", "PDLP_MIN_COLUMNS", "DENSE_ROW", "MAX_CHORD_VALUES", "SUBSET_SUM_BITS"]


METHODS = ("auto", "lp", "branch", "hot", "lagrange", "forest", "reach", "mip")
AUTO_BRANCH_MAX_TABLES = 2_000   # the LP's root finishes within minutes up to here (1,000 tables: 27 s CPU)
AUTO_BRANCH_MIN_SECONDS = 0.03   # seconds per table the branching needs to pass its root LP (measured, Tetris page)
AUTO_LP_MAX_TABLES = 12_000      # the LP's interior point converges here within 30 minutes (10,000 tables: 1,340 s)
AUTO_LP_MIN_SECONDS = 0.16       # seconds per table the LP needs beside the forest's floor (measured, Tetris page)
AUTO_FOREST_FLOOR_S = 240.0      # the forest first, as the floor under the LP (converged by 240 s at 10,000 tables)


def choose_method(inst: TetrisInstance, time_limit: float) -> tuple[str, str]:
    """The method "auto" runs and why: the strongest numpy-certified bound that fits.

    Measured (Tetris page, "A lower bound at scale"): branching on hot tables' homes over the LP
    is the tightest certified bound wherever its root LP finishes (69-98% of the optimum on 13 proven
    instances; 164,258 at 1,000 tables against the LP's 103,790), which HiGHS does within minutes up
    to ``AUTO_BRANCH_MAX_TABLES`` tables given about ``AUTO_BRANCH_MIN_SECONDS`` per table. With (5)'s
    fixings the LP alone is above the forest (1,000 tables: 225,131 against 207,291 in 120 s; 10,000
    tables, seed 52203: 1,675,261 against 1,354,268), and HiGHS's interior point solves it at 10,000
    tables in 1,340 s on one thread: so up to ``AUTO_LP_MAX_TABLES`` tables, given
    ``AUTO_LP_MIN_SECONDS`` per table, "lp" -- after the forest, run first for at most
    ``AUTO_FOREST_FLOOR_S`` seconds as its floor (an interior point stopped by the time limit
    certifies little). Beyond, the Lagrangian decomposition with multi-table ML jobs kept whole along
    a spanning forest ("forest", linear in tables; at the same multipliers never below "lagrange") is
    the strongest that runs, then "lagrange" if only its smaller memory estimate fits. "mip" is
    tighter still but its bound is HiGHS's number, so "auto" never picks it.
    """
    T = inst.n_tables
    if T <= AUTO_BRANCH_MAX_TABLES and time_limit >= AUTO_BRANCH_MIN_SECONDS * T:
        return "branch", f"{T} tables <= {AUTO_BRANCH_MAX_TABLES} and {time_limit:g} s for the root LP"
    need_f = forest.memory_estimate_mb(inst)
    if (AUTO_BRANCH_MAX_TABLES < T <= AUTO_LP_MAX_TABLES and time_limit >= AUTO_LP_MIN_SECONDS * T
            and need_f <= lagrange.MAX_MEMORY_MB):
        return "lp", (f"{AUTO_BRANCH_MAX_TABLES} < {T} tables <= {AUTO_LP_MAX_TABLES} and {time_limit:g} s for the "
                      f"LP's interior point, the forest first as its floor")
    why = (f"{T} tables > {AUTO_BRANCH_MAX_TABLES}" if T > AUTO_BRANCH_MAX_TABLES
           else f"{time_limit:g} s < {AUTO_BRANCH_MIN_SECONDS} s per table for the LP's root")
    if T > AUTO_BRANCH_MAX_TABLES and T <= AUTO_LP_MAX_TABLES:
        why += f" and {time_limit:g} s < {AUTO_LP_MIN_SECONDS} s per table for the LP"
    if need_f <= lagrange.MAX_MEMORY_MB:
        return "forest", why + f"; memory estimate {need_f:.0f} MB"
    need = lagrange.memory_estimate_mb(inst)
    if need <= lagrange.MAX_MEMORY_MB:
        return "lagrange", why + f"; the forest's memory estimate {need_f:.0f} MB too large, the Lagrangian's {need:.0f} MB"
    return "hot", f"the Lagrangian's memory estimate {need:.0f} MB > {lagrange.MAX_MEMORY_MB:.0f} MB"


def _auto(inst: TetrisInstance, *, time_limit: float, alpha: float, **branch_options) -> SolveResult:
    """``method="auto"``: the hot-table bound first (seconds), then :func:`choose_method`'s method in
    the time left; the larger bound is reported (both are valid), the other's in ``stats``."""
    import time

    t0 = time.perf_counter()
    choice, reason = choose_method(inst, time_limit)
    h = hot.solve(inst)
    left = time_limit - (time.perf_counter() - t0)
    res, ran = h, choice
    if choice != "hot" and left > 0:
        if choice == "branch":
            res = branch.solve(inst, time_limit=left, **branch_options)
        elif choice == "lp":
            floor = forest.solve(inst, time_limit=min(AUTO_FOREST_FLOOR_S, 0.15 * left), alpha=alpha)
            left = time_limit - (time.perf_counter() - t0)
            res = lp.solve(inst, time_limit=left, tangents=branch_options["tangents"],
                           max_rounds=branch_options["max_rounds"], tol=branch_options["tol"],
                           dense_row=branch_options["dense_row"]) if left > 0 else floor
            if res is not floor and (res.bound is None or (floor.bound is not None and floor.bound > res.bound)):
                floor.stats["bound_lp"] = res.bound
                res, ran = floor, "forest"
            else:
                res.stats["bound_forest"] = floor.bound
        else:
            res = (forest if choice == "forest" else lagrange).solve(inst, time_limit=left, alpha=alpha)
    used = ran if res is not h else "hot"
    if res is not h and (res.bound is None or (h.bound is not None and h.bound > res.bound)):
        res.stats["bound_" + ran] = res.bound
        res.bound, used = h.bound, "hot"
    res.stats["method"] = used
    res.stats["auto"] = {"choice": choice, "reason": reason, "hot_bound": h.bound}
    res.wall_time_s = time.perf_counter() - t0
    return res


def solve(inst: TetrisInstance, *, time_limit: float = 600.0, integer: bool = False, tangents: int = GRID_TANGENTS,
          max_rounds: int = 30, tol: float = 1e-6, mip_gap: float = 1e-6, track_memory: bool = False,
          lp_solver: str = "choose", analytics_hull: bool = True, dense_row: int = DENSE_ROW,
          method: str = "auto", max_nodes: int | None = None, seed: int = 0,
          mip_solver: MipSolver = "highs", alpha: float = 0.5) -> SolveResult:
    """A valid lower bound on the optimum of (1)-(9) (module docstring), as a ``SolveResult``.

    Parameters
    ----------
    method : {"auto", "lp", "branch", "hot", "lagrange", "forest", "reach", "mip"}
        "auto" (the default): the strongest *numpy-certified* method that fits the instance and
        ``time_limit`` (:func:`choose_method`), floored by "hot"; ``stats["method"]`` names the
        method whose bound is reported and ``stats["auto"]`` the choice and its reason.
        "lagrange": the Lagrangian decomposition (:mod:`placement.models.tetris_bound.lagrange`;
        linear in tables, certified at any multipliers, runs at 100,000 tables, weak: the Tetris
        page). "forest": the same with multi-table ML jobs kept whole along a spanning forest of the
        tables, each tree solved exactly (:mod:`placement.models.tetris_bound.forest`; never below
        "lagrange" at the same multipliers). "reach": "forest" with the GPU cells and storage squares
        restricted to reachable values (subset sums; :mod:`placement.models.tetris_bound.reach`: stronger on
        small instances, the same at scale). "lp": the package's relaxation (the parameters below;
        :mod:`placement.models.tetris_bound.lp`); "branch": best-first branching on
        hot tables' homes over the same LP, every leaf certified in numpy, within ``time_limit``
        (:mod:`placement.models.tetris_bound.branch`); "hot": the closed-form hot-table bound
        (:mod:`placement.models.tetris_bound.hot`; seconds at any size, weak); "mip": the same matrix with
        x, b, y integer and the argmax rows back, solved by HiGHS's branch and cut
        (:mod:`placement.models.tetris_bound.mip`): the tightest bound up to ~1,000 tables and a feasible
        placement as ``solution``, but HiGHS's number, not certified in numpy.
    max_nodes : int, optional
        "branch" only: a node limit besides ``time_limit``.
    time_limit : float
        Seconds for the whole method (build and all solves).
    seed : int
        "mip": HiGHS's random seed; otherwise unused (the bound is deterministic).
    alpha : float
        "lagrange", "forest" and "reach" only: the share of the overload squares charged to the hot tables' own overloads.
    mip_solver : {"highs", "scip", "cbc"}
        "mip" only: the solver of the MIP (:mod:`placement.models.backends`). The other methods
        certify their bound from HiGHS's duals in numpy and run HiGHS only.
    integer, tangents, max_rounds, tol, mip_gap, lp_solver, dense_row, analytics_hull, track_memory
        The relaxation's and the LP's options, as :func:`placement.models.tetris_bound.lp.solve`
        documents them; "branch" takes ``tangents``, ``max_rounds``, ``tol`` and ``dense_row``,
        "mip" ``tangents`` and ``mip_gap``, "hot" none.

    Returns
    -------
    SolveResult
        The method's: ``bound`` a valid lower bound (certified in numpy for "lp", "branch" and
        "hot"; HiGHS's dual bound for "mip", with a feasible placement as ``solution``), and the
        statistics each method documents.
    """
    if not time_limit > 0:
        raise InstanceError("time_limit", "must be a positive number of seconds")
    if method not in METHODS:
        raise InstanceError("method", f"must be one of {', '.join(map(repr, METHODS))}, got {method!r}")
    check_mip_solver(mip_solver)
    if mip_solver != "highs" and method != "mip":
        raise InstanceError("mip_solver", f"{mip_solver!r} applies to method='mip' only (method {method!r} "
                                          "certifies its bound from HiGHS's duals)")
    if method == "auto":
        return _auto(inst, time_limit=time_limit, max_nodes=max_nodes, tangents=tangents, max_rounds=max_rounds,
                     tol=tol, dense_row=dense_row, alpha=alpha)
    if method == "lagrange":
        return lagrange.solve(inst, time_limit=time_limit, alpha=alpha)
    if method == "forest":
        return forest.solve(inst, time_limit=time_limit, alpha=alpha)
    if method == "reach":
        return reach.solve(inst, time_limit=time_limit, alpha=alpha)
    if method == "mip":
        return mip.solve(inst, time_limit=time_limit, tangents=tangents, mip_gap=mip_gap, seed=seed,
                         mip_solver=mip_solver)
    if method == "branch":
        return branch.solve(inst, time_limit=time_limit, max_nodes=max_nodes, tangents=tangents,
                            max_rounds=max_rounds, tol=tol, dense_row=dense_row)
    if method == "hot":
        return hot.solve(inst)
    return lp.solve(inst, time_limit=time_limit, integer=integer, tangents=tangents, max_rounds=max_rounds,
                    tol=tol, mip_gap=mip_gap, track_memory=track_memory, lp_solver=lp_solver,
                    analytics_hull=analytics_hull, dense_row=dense_row)
