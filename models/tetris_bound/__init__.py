"""A lower bound on MAST Tetris (Figure 4, expressions (1)-(9)) that scales: a relaxation in matrix form.

The exact model (:mod:`placement.models.tetris`) proves optima up to about 60 tables; past a
few thousand tables neither Pyomo's per-variable cost nor HiGHS's branch and bound
fit in minutes. This package builds a **relaxation** of the same formulation with
numpy and hands it to HiGHS through ``highspy`` (``Highs.passModel``), so the
model transfer costs seconds at 100,000 tables instead of minutes.

Why this relaxation (the choice was made by measurement, see the Tetris page)
---------------------------------------------------------------------------------
The formulation is the exact model's (module docstring of :mod:`placement.models.tetris`)
with three changes, each of which can only lower the optimum, so every value it
proves is at most the exact optimum:

1. ``x``, ``a``, ``b`` and the overload levels ``y`` are continuous in ``[0, 1]``
   (``integer=False``, the LP relaxation; ``integer=True`` keeps them integer and
   reports HiGHS's MIP dual bound: only for small instances and the tests).
2. The squares (7) and (9) are cut by **tangents** ``z >= f(p) + f'(p) (n - p)``
   (valid at every real ``n``, so also at the fractional demands of the LP) at a
   grid of points, then, in rounds, at the LP's own demands until no tangent is
   violated by more than ``tol`` (outer approximation; each round's value is a
   valid bound, the last is the tightest); and, where a square's argument has at
   most ``MAX_CHORD_VALUES`` reachable values (subset sums of the GPU-hours of the
   jobs of (g, k), or of table sizes), by the chords between consecutive reachable
   values (valid at every integer placement, as the exact model's chords).
3. The exact-argmax rows of analytics jobs under a CPU limit (R^2 rows per job)
   are dropped: their ``b`` may then pick any region for (5), a relaxation.

One change makes it tighter than the exact model's LP: the analytics majority
``m_j = max_r L[j,r]`` is written in disjunctive form, ``m_j <= sum_r u[j,r]``,
``u[j,r] <= L[j,r]``, ``u[j,r] <= size_j b[j,r]`` (exact at one-hot ``b``; it implies
the exact model's big-M rows ``m_j <= L[j,r] + size_j (1 - b[j,r])`` at every
fractional ``b``, under which a job split ``1/R`` over the regions reads its bytes
nearly for free). ``analytics_hull=False`` keeps the big-M rows for comparison.

Everything else -- one home per table, the AND rows of ML jobs, storage (4) (as
column bounds), CPU (5), home GPU-hours (6), the move quota, the disaggregated (7) x (8)
product over the overload levels with per-level big-M -- is the exact model's, row for row.

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

The bound is certified in numpy (:func:`dual_bound`): for any row multipliers, the
Lagrangian value ``b'y + sum_j min(r_j l_j, r_j u_j)`` (every column is boxed) is a
valid bound, so it is computed at each round's duals and never taken from the solver;
an interior-point or PDLP iterate stopped by the time limit still gives a valid (weaker)
bound. Measured at 1,000 x 2,000 x 10 (seed 38001, machine shared): HiGHS's IPM 87
iterations, 27.6 s CPU, dual bound equal to the LP value to 1e-8; 16 iterations
(time limit): -2.6e8 (useless but valid); PDLP 8,758 / 27,373 iterations: 41,263 /
59,977 (the LP's value 103,344). At 10,000 x 20,000 x 16 IPM took 17 s CPU per
iteration (0.3 s at 1,000; the same with the dense rows split) and had 20 iterations after
342 s CPU; PDLP (21,313 iterations in 600 s) reached no positive bound either. Neither
certifies anything at 10,000 tables within 10 minutes here.

Statuses: ``optimal`` (the relaxation solved: ``bound`` is valid; ``objective``
is the relaxation's value, not a placement's), ``time_limit`` (``bound`` is the best
round's dual bound, a time-limited round's included; no dual at all: no bound), ``infeasible`` (the
relaxation is infeasible, hence the instance too), ``error``.

Layout: :mod:`~placement.models.tetris_bound.relaxation` (the matrix, :func:`build`, the
certificates :func:`dual_bound` and :func:`farkas_value`, the HiGHS model transfer, the
constants) <- the four methods :mod:`~placement.models.tetris_bound.lp` (the outer-approximation
rounds), :mod:`~placement.models.tetris_bound.branch`, :mod:`~placement.models.tetris_bound.hot`
and :mod:`~placement.models.tetris_bound.mip` <- this ``__init__`` (the dispatcher :func:`solve`,
and the relaxation's public names re-exported). Nothing imports the dispatcher back: a method
module imports ``.relaxation`` (and another method module if it needs one), never a name
defined here, so the package has no import circle (``tests/core/test_imports.py``).
"""

from __future__ import annotations

from placement.errors import InstanceError
from placement.result import SolveResult
from placement.tetris import TetrisInstance

from . import branch, hot, lp, mip
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

__all__ = ["solve", "build", "dual_bound", "farkas_value", "BoundModel", "run_until", "add_tangents",
           "highs_model", "peak_rss_mb", "SATURATION_LEVEL", "REL_SAFETY", "GRID_TANGENTS",
           "SIMPLEX_MAX_COLUMNS", "PDLP_MIN_COLUMNS", "DENSE_ROW", "MAX_CHORD_VALUES", "SUBSET_SUM_BITS"]


def solve(inst: TetrisInstance, *, time_limit: float = 600.0, integer: bool = False, tangents: int = GRID_TANGENTS,
          max_rounds: int = 30, tol: float = 1e-6, mip_gap: float = 1e-6, track_memory: bool = False,
          lp_solver: str = "choose", analytics_hull: bool = True, dense_row: int = DENSE_ROW,
          method: str = "lp", max_nodes: int | None = None, seed: int = 0) -> SolveResult:
    """A valid lower bound on the optimum of (1)-(9) (module docstring), as a ``SolveResult``.

    Parameters
    ----------
    method : {"lp", "branch", "hot", "mip"}
        "lp": the package's relaxation (the parameters below;
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
        Seconds for the build and all rounds.
    integer : bool
        Keep x, b, y integer and report HiGHS's MIP dual bound (one round; small instances).
    tangents : int
        Grid tangents per square term before the first round (plus one at its minimum).
    max_rounds, tol
        Outer-approximation rounds of the LP: a tangent is added at every square whose
        epigraph value is below the square by more than ``tol`` (relative); at most
        ``max_rounds`` solves.
    lp_solver : {"choose", "simplex", "ipm", "pdlp"}
        HiGHS's LP method: "choose" takes dual simplex up to ``SIMPLEX_MAX_COLUMNS``
        columns (warm restarts make the tangent rounds cheap), the interior-point method
        without crossover up to ``PDLP_MIN_COLUMNS`` and HiGHS's first-order PDLP beyond
        (see the Tetris page for the measurements behind each threshold). Presolve is off
        (HiGHS's presolve stalled on this model).
    dense_row : int
        Rows with more entries are rewritten through partial sums
        (:meth:`BoundModel._split_dense_rows`; 0: never).
    analytics_hull : bool
        The disjunctive form of the analytics majority (default; tighter) or the exact
        model's big-M rows (for comparison).
    track_memory : bool
        Record Python's peak traced allocation of the build (``stats["build_peak_mb"]``;
        slows the build).
    seed : int
        "mip": HiGHS's random seed; otherwise unused (the bound is deterministic).

    Returns
    -------
    SolveResult
        ``bound``: the valid lower bound. For the LP it is :func:`dual_bound` at each
        round's row duals, computed here (never HiGHS's number), so a round stopped by the
        time limit still gives one; the best round's, floored at 0 (every term of (1)-(3)
        is non-negative). ``objective``: the solver's value of the last round that
        finished (the relaxation's value, not a placement's); ``solution`` is None.
        ``stats``: columns, rows, nonzeros, rounds, tangents, build / transfer / solve
        seconds, per-round dual bounds (``round_values``) and solver values
        (``round_lp_values``), the process's peak resident memory.
    """
    if not time_limit > 0:
        raise InstanceError("time_limit", "must be a positive number of seconds")
    if method not in ("lp", "branch", "hot", "mip"):
        raise InstanceError("method", f"must be 'lp', 'branch', 'hot' or 'mip', got {method!r}")
    if method == "mip":
        return mip.solve(inst, time_limit=time_limit, tangents=tangents, mip_gap=mip_gap, seed=seed)
    if method == "branch":
        return branch.solve(inst, time_limit=time_limit, max_nodes=max_nodes, tangents=tangents,
                            max_rounds=max_rounds, tol=tol, dense_row=dense_row)
    if method == "hot":
        return hot.solve(inst)
    return lp.solve(inst, time_limit=time_limit, integer=integer, tangents=tangents, max_rounds=max_rounds,
                    tol=tol, mip_gap=mip_gap, track_memory=track_memory, lp_solver=lp_solver,
                    analytics_hull=analytics_hull, dense_row=dense_row)
