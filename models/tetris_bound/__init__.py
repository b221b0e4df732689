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

Statuses: each method's module says which it returns (the LP's: :mod:`placement.models.tetris_bound.lp`).

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

from ..backends import MipSolver, check_mip_solver
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
          method: str = "lp", max_nodes: int | None = None, seed: int = 0,
          mip_solver: MipSolver = "highs") -> SolveResult:
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
        Seconds for the whole method (build and all solves).
    seed : int
        "mip": HiGHS's random seed; otherwise unused (the bound is deterministic).
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
    if method not in ("lp", "branch", "hot", "mip"):
        raise InstanceError("method", f"must be 'lp', 'branch', 'hot' or 'mip', got {method!r}")
    check_mip_solver(mip_solver)
    if mip_solver != "highs" and method != "mip":
        raise InstanceError("mip_solver", f"{mip_solver!r} applies to method='mip' only (method {method!r} "
                                          "certifies its bound from HiGHS's duals)")
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
