"""The "lp" method of the Tetris lower bound: the LP relaxation, solved in outer-approximation rounds.

The matrix is :mod:`placement.models.tetris_bound.relaxation`'s (``integer=False``; ``integer=True``
keeps ``x``, ``b``, ``y`` integer and reports HiGHS's MIP dual bound, one round: small instances and
the tests). Each round solves it with HiGHS, computes :func:`~placement.models.tetris_bound.relaxation.dual_bound`
at the round's row duals in numpy (never HiGHS's number) and adds a tangent at every square the
solution violates (:func:`~placement.models.tetris_bound.relaxation.add_tangents`), until none is
violated by more than ``tol``, ``max_rounds`` solves, or the time limit. The bound is the best
round's, floored at 0.

Statuses: ``optimal`` (the relaxation solved: ``bound`` is valid; ``objective``
is the relaxation's value, not a placement's), ``time_limit`` (``bound`` is the best
round's dual bound, a time-limited round's included; no dual at all: no bound), ``feasible`` (the
last round ended otherwise with multipliers -- IPX's "imprecise" end at 10,000 tables, HiGHS's model
status Unknown: ``bound`` is their certificate, valid whatever the status), ``infeasible`` (the
relaxation is infeasible, hence the instance too), ``error``.
"""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable

import numpy as np

from placement.errors import InstanceError
from placement.result import SolveResult, Status
from placement.tetris import TetrisInstance

from . import relaxation

__all__ = ["solve"]


def _repaired(m, row_dual: np.ndarray, value: float, seconds: float, stats: dict) -> float:
    """The better of ``value`` and the certificate at the repaired multipliers (the polished ones,
    then :func:`.repair.repair_duals` for ``seconds``); its gain and work in ``stats["repair"]``."""
    from .repair import repair_duals

    if seconds <= 0:
        return value
    y, _ = relaxation.polish_duals(m, row_dual)
    y, rs = repair_duals(m, y, seconds=seconds)
    fixed, _ = relaxation.dual_bound(m, y)
    stats["repair"] = {**rs, "before": value, "after": fixed, "gain": max(0.0, fixed - value)}
    return max(value, fixed)


def solve(inst: TetrisInstance, *, time_limit: float = 600.0, integer: bool = False,
          tangents: int = relaxation.GRID_TANGENTS, max_rounds: int = 30, tol: float = 1e-6,
          mip_gap: float = 1e-6, track_memory: bool = False, lp_solver: str = "choose",
          analytics_hull: bool = True, dense_row: int = relaxation.DENSE_ROW,
          on_round: Callable[[np.ndarray, float], object] | None = None, repair_s: float = 300.0) -> SolveResult:
    """The LP relaxation's certified bound (module docstring), as a ``SolveResult``.

    Parameters
    ----------
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
    mip_gap : float
        HiGHS's relative MIP gap (``integer`` only).
    lp_solver : {"choose", "simplex", "ipm", "pdlp"}
        HiGHS's LP method: "choose" takes dual simplex up to ``SIMPLEX_MAX_COLUMNS``
        columns (warm restarts make the tangent rounds cheap), the interior-point method
        without crossover up to ``PDLP_MIN_COLUMNS`` and HiGHS's first-order PDLP beyond
        (see the Tetris page for the measurements behind each threshold). Presolve is off
        (HiGHS's presolve stalled on this model).
    repair_s : float
        Seconds for repairing the multipliers of a round that did not end optimal (IPX
        "imprecise", or stopped by the time limit): exact coordinate ascent on the certificate's
        Lagrangian (:mod:`placement.models.tetris_bound.repair`), within the time left; the
        bound is the better of the two certificates (0: off).
    dense_row : int
        Rows with more entries are rewritten through partial sums
        (:meth:`~placement.models.tetris_bound.relaxation.BoundModel._split_dense_rows`; 0: never).
    analytics_hull : bool
        The disjunctive form of the analytics majority (default; tighter) or the exact
        model's big-M rows (for comparison).
    track_memory : bool
        Record Python's peak traced allocation of the build (``stats["build_peak_mb"]``;
        slows the build).
    on_round : callable, optional
        ``on_round(X, deadline)`` after every round that gives a primal point: ``X`` the round's
        values of ``x`` (tables x regions), ``deadline`` the solve's (``time.perf_counter()``
        clock). :mod:`placement.solvers.branch_round` rounds ``X`` into placements there; its time
        counts against ``time_limit``, and a callback that returns after the deadline ends the rounds.

    Returns
    -------
    SolveResult
        ``bound``: :func:`~placement.models.tetris_bound.relaxation.dual_bound` at each
        round's row duals, computed here (never HiGHS's number), so a round stopped by the
        time limit still gives one; the best round's, floored at 0 (every term of (1)-(3)
        is non-negative). ``objective``: the solver's value of the last round that
        finished (the relaxation's value, not a placement's); ``solution`` is None.
        ``stats``: columns, rows, nonzeros, rounds, tangents, build / transfer / solve
        seconds, per-round dual bounds (``round_values``) and solver values of the rounds solved
        to optimality (``round_lp_values``), HiGHS's own value of the last round that gave
        multipliers (``last_round_solver_value``: an "imprecise" interior point's, beside its
        certificate), the process's peak resident memory.
    """
    import highspy

    if not time_limit > 0:
        raise InstanceError("time_limit", "must be a positive number of seconds")
    if lp_solver not in ("choose", "simplex", "ipm", "pdlp"):
        raise InstanceError("lp_solver", f"must be 'choose', 'simplex', 'ipm' or 'pdlp', got {lp_solver!r}")
    t0 = time.perf_counter()
    if track_memory:
        tracemalloc.start()
    m = relaxation.build(inst, integer=integer, tangents=tangents, analytics_hull=analytics_hull,
                         dense_row=dense_row)
    build_s = time.perf_counter() - t0
    stats: dict = {"integer": integer, "columns": m.n_cols, "rows": m.rows.n, "build_s": build_s,
                   "split_rows": m.split_rows}
    if track_memory:
        stats["build_peak_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    t1 = time.perf_counter()
    h, nnz = relaxation.highs_model(m, time_limit - build_s, mip_gap)
    if lp_solver == "choose":
        lp_solver = ("simplex" if m.n_cols <= relaxation.SIMPLEX_MAX_COLUMNS or integer
                     else "ipm" if m.n_cols < relaxation.PDLP_MIN_COLUMNS else "pdlp")
    h.setOptionValue("solver", lp_solver)
    if lp_solver == "ipm":
        h.setOptionValue("run_crossover", "off")  # the dual bound needs no vertex
    stats.update(nonzeros=nnz, transfer_s=time.perf_counter() - t1, lp_solver=lp_solver, instance=inst.name)
    deadline = t0 + time_limit
    best, status, values, lp_values, rounds, added = None, None, [], [], 0, 0
    while True:
        relaxation.run_until(h, deadline)
        rounds += 1
        status = h.getModelStatus()
        info = h.getInfo()
        if integer:
            if status in (highspy.HighsModelStatus.kOptimal, highspy.HighsModelStatus.kTimeLimit,
                          highspy.HighsModelStatus.kSolutionLimit):
                dual = float(info.mip_dual_bound)
                if np.isfinite(dual):
                    best = dual - relaxation.REL_SAFETY * max(1.0, abs(dual))
                    values.append(dual)
            break
        sol = h.getSolution()
        # any multipliers certify (dual_bound), whatever the status: at 10,000 tables IPX ends
        # "imprecise" (model status Unknown) with multipliers worth 99.98% of the LP's value
        if sol.dual_valid and status != highspy.HighsModelStatus.kInfeasible:
            value, parts = relaxation.dual_bound(m, np.asarray(sol.row_dual))
            if status != highspy.HighsModelStatus.kOptimal and repair_s > 0:
                value = _repaired(m, np.asarray(sol.row_dual), value, min(repair_s, deadline - time.perf_counter()),
                                  stats)
            values.append(value)
            best = value if best is None else max(best, value)
            stats["dual_clipped_rows"] = parts["dual_clipped_rows"]
            stats["last_round_solver_value"] = float(info.objective_function_value)   # HiGHS's, beside the certificate
        if on_round is not None and sol.value_valid and not integer:
            on_round(m.x_matrix(sol.col_value), deadline)
        if status != highspy.HighsModelStatus.kOptimal:
            break
        lp_values.append(float(info.objective_function_value))
        if rounds >= max_rounds or time.perf_counter() >= deadline:
            break
        n_new = relaxation.add_tangents(m, h, np.asarray(sol.col_value), tol)
        if not n_new:
            break
        added += n_new
    wall = time.perf_counter() - t0
    stats.update(rounds=rounds, tangents=m.tangent_rows + added, lazy_tangents=added, round_values=values,
                 round_lp_values=lp_values, solve_s=wall - build_s - stats["transfer_s"],
                 peak_rss_mb=relaxation.peak_rss_mb(), simplex_iterations=int(info.simplex_iteration_count),
                 ipm_iterations=int(info.ipm_iteration_count), pdlp_iterations=int(info.pdlp_iteration_count))
    name = "tetris-bound-" + ("mip" if integer else "lp")
    stats["last_round_status"] = h.modelStatusToString(status)
    if best is None:
        if status == highspy.HighsModelStatus.kInfeasible:
            return SolveResult(Status.INFEASIBLE, name, wall_time_s=wall, stats=stats,
                               message="the relaxation is infeasible, so the instance is too")
        if status == highspy.HighsModelStatus.kTimeLimit:
            return SolveResult(Status.TIME_LIMIT, name, wall_time_s=wall, stats=stats,
                               message="no round of the relaxation gave a dual in time")
        return SolveResult(Status.ERROR, name, wall_time_s=wall, stats=stats,
                           message=f"HiGHS: {h.modelStatusToString(status)}")
    bound = max(0.0, best)
    ok = status == highspy.HighsModelStatus.kOptimal
    objective = (values[-1] if integer else lp_values[-1]) if (values if integer else lp_values) else None
    msg = "" if ok else (f"the last round ended with HiGHS status {stats['last_round_status']!r}; "
                         f"the bound is the best round's dual bound")
    st = (Status.OPTIMAL if ok else Status.TIME_LIMIT if status == highspy.HighsModelStatus.kTimeLimit
          else Status.FEASIBLE)
    return SolveResult(st, name, objective=objective, bound=bound, wall_time_s=wall, stats=stats, message=msg)
