"""MAST Tetris (Figure 4, expressions (1)-(9)) as a MIP over the relaxation's matrix: a bound and a placement.

What: the matrix of :mod:`placement.models.tetris_bound.relaxation` with ``x``, ``b`` and the overload levels
``y`` integer and the exact model's argmax rows for analytics jobs under a CPU limit put
back (``exact_argmax``; :meth:`placement.models.tetris_bound.relaxation.BoundModel._argmax_rows`), solved by
HiGHS's branch and cut within the time limit. Every integer point of this model is a
placement that meets (4)-(6) and the move quota, and the only relaxation left is the
squares (7) and (9), cut from below by tangents (valid at every real argument) and, where
an argument has at most ``MAX_CHORD_VALUES`` reachable values, by chords (valid at every
integer placement). So

* HiGHS's MIP dual bound is a lower bound on the optimum of (1)-(9) (kept
  ``REL_SAFETY`` below HiGHS's number); and
* HiGHS's incumbent, read as a home per table, is a feasible placement whose value by the
  reference evaluation (:func:`placement.tetris.evaluation.evaluate`) is at least the
  model's value at it (the tangents under-estimate the squares). That reference value is
  the reported ``objective``; the model's value is in ``stats["model_objective"]``.

**The bound is HiGHS's number, not certified in numpy** (unlike the LP and the branching
of :mod:`placement.models.tetris_bound.branch`, whose every leaf is a dual certificate computed here):
a branch and cut has no short certificate. It has the standing of the exact model's bound
(:mod:`placement.models.tetris`), and ``stats["bound_certificate"]`` says so. Checked: at most the
brute-force optimum on hypothesis instances and the exact model's proven optimum on fresh
seeds (``tests/tetris/test_tetris_bound_mip.py``).

Why (measured, Tetris page): at 1,000 x 2,000 x 10 (seed 38001) HiGHS's root alone, with
its domain propagation and cuts, reaches 234,644 in 40 s, where the LP relaxation gives
103,790 and the numpy-certified branching 164,258 in 600 s; without the argmax rows the
same MIP stops at 205,411 (analytics jobs then count for (5) in a region of the model's
choosing, so its placements break (5)).
"""

from __future__ import annotations

import math
import time

import numpy as np

from placement.errors import InstanceError
from placement.result import SolveResult, Status
from placement.tetris import TetrisInstance, TetrisSolution
from placement.tetris.evaluation import evaluate, violations

from ..backends import MipSolver, check_mip_solver, require, solve_highs_model
from . import relaxation

__all__ = ["solve", "argmax_nonzeros"]

CERTIFICATE = "HiGHS MIP dual bound of the relaxation (not certified in numpy)"
MAX_ARGMAX_NONZEROS = 20_000_000   # the argmax rows' entries; beyond, the MIP is refused before any allocation


def argmax_nonzeros(inst: TetrisInstance) -> int:
    """Entries of the argmax rows the MIP would add: ``(2 n_j + 1) R (R - 1)`` per multi-table analytics
    job of a CPU-limited app (counted from the instance's arrays, before anything is built)."""
    A = inst.arrays
    lens = np.diff(A.job_ptr)
    capped = np.isfinite(A.cpu_cap).any(axis=1)
    an = (~A.job_ml.astype(bool)) & (lens > 1) & (A.job_size > 0) & (A.job_app >= 0)
    an &= capped[np.maximum(A.job_app, 0)] if len(capped) else False
    R = inst.n_regions
    return int((2 * lens[an] + 1).sum()) * R * (R - 1)


def solve(inst: TetrisInstance, *, time_limit: float = 600.0, tangents: int = relaxation.GRID_TANGENTS,
          mip_gap: float = 1e-6, presolve: bool = True, seed: int = 0, mip_solver: MipSolver = "highs") -> SolveResult:
    """A lower bound and a feasible placement from the MIP of the relaxation (module docstring).

    Parameters
    ----------
    time_limit : float
        Seconds for the build and HiGHS's branch and cut (one thread).
    tangents : int
        Grid tangents per square term (as :func:`placement.models.tetris_bound.relaxation.build`).
    mip_gap : float
        HiGHS's relative gap at which it stops.
    presolve : bool
        HiGHS's presolve (on by default: at 1,000 tables it took HiGHS's gap at 600 s from 7.1% to 0.7%;
        the LP methods keep it off, where it stalled).
    seed : int
        HiGHS's random seed (its heuristics); same seed, no time limit reached: same result.
    mip_solver : {"highs", "scip", "cbc"}
        HiGHS in memory, or SCIP / CBC on the same matrix written as MPS
        (:func:`placement.models.backends.solve_highs_model`); ``presolve`` and ``seed`` are HiGHS's.

    Returns
    -------
    SolveResult
        ``objective``: the reference evaluation of HiGHS's incumbent placement (``solution``);
        ``bound``: HiGHS's dual bound less ``REL_SAFETY``, floored at 0 and never above the
        objective. Status ``optimal`` when the two meet within ``mip_gap``, ``feasible`` with a
        placement otherwise, ``time_limit`` with a bound and no placement, ``infeasible`` when
        HiGHS proves the model empty (HiGHS's proof, like the bound). ``stats``: columns, rows,
        argmax rows, HiGHS's status, nodes, its gap, the model's value at the incumbent,
        ``bound_certificate``, build / solve seconds, peak memory.
    """
    if not time_limit > 0:
        raise InstanceError("time_limit", "must be a positive number of seconds")
    if not 0 <= mip_gap < 1:
        raise InstanceError("mip_gap", f"must be in [0, 1), got {mip_gap}")
    require(check_mip_solver(mip_solver))
    nz = argmax_nonzeros(inst)
    if nz > MAX_ARGMAX_NONZEROS:
        raise InstanceError("method", f"mip: the argmax rows alone would hold {nz:,} entries (limit "
                                      f"{MAX_ARGMAX_NONZEROS:,}); use method=lp, branch or hot at this size")
    t0 = time.perf_counter()
    m = relaxation.build(inst, integer=True, tangents=tangents, exact_argmax=True)
    build_s = time.perf_counter() - t0
    h, nnz = relaxation.highs_model(m, max(0.01, time_limit - build_s), mip_gap)
    h.setOptionValue("presolve", "on" if presolve else "off")
    h.setOptionValue("random_seed", int(seed) % 2_147_483_647)
    out, x = solve_highs_model(h, mip_solver, time_limit=max(0.01, time_limit - build_s), mip_gap=mip_gap)
    name = "tetris-bound-mip"
    stats: dict = {"columns": m.n_cols, "rows": m.rows.n, "nonzeros": nnz, "argmax_rows": m.argmax_rows,
                   "mip_solver": mip_solver, "highs_status": out.message or out.termination,
                   "nodes": out.stats.get("nodes"), "bound_certificate": CERTIFICATE, "build_s": build_s,
                   "solve_s": time.perf_counter() - t0 - build_s, "instance": inst.name}
    wall = time.perf_counter() - t0
    if out.termination == "infeasible":
        stats["peak_rss_mb"] = relaxation.peak_rss_mb()
        return SolveResult(Status.INFEASIBLE, name, wall_time_s=wall, stats=stats,
                           message="HiGHS proves the model empty, so no placement meets (4)-(6) and the quota")
    dual = float(out.bound) if out.bound is not None else math.nan
    bound = max(0.0, dual - relaxation.REL_SAFETY * max(1.0, abs(dual))) if np.isfinite(dual) else None
    home = None
    if x is not None:   # the solver holds an incumbent
        X = m.x_matrix(x)
        home = np.argmax(X, axis=1).astype(np.int64)
        stats["model_objective"] = float(out.objective)
        stats["integrality_error"] = float(np.abs(X - np.round(X)).max()) if X.size else 0.0
    stats["peak_rss_mb"] = relaxation.peak_rss_mb()
    if home is None:
        return SolveResult(Status.TIME_LIMIT if bound is not None else Status.ERROR, name, bound=bound,
                           wall_time_s=wall, stats=stats,
                           message=f"no placement found; HiGHS: {stats['highs_status']}")
    ev = evaluate(inst, home)
    viol = violations(inst, home, ev)
    if viol:   # cannot happen with integer x and b (the rows are the exact model's); reported if it does
        stats["violations"] = viol[:5]
        return SolveResult(Status.ERROR, name, bound=bound, wall_time_s=wall, stats=stats,
                           message=f"HiGHS's incumbent breaks a constraint: {viol[0]}")
    value = ev.objective
    if bound is not None and bound > value + 1e-6 * max(1.0, abs(value)):
        stats["bound_inconsistent"] = bound   # a valid bound is never above a placement's value
        bound = value
    proven = bound is not None and value <= bound + mip_gap * max(1.0, abs(value)) + 1e-9
    return SolveResult(Status.OPTIMAL if proven else Status.FEASIBLE, name, solution=TetrisSolution(home=home),
                       objective=value, bound=bound, wall_time_s=wall, stats=stats,
                       message=f"placement {value:.6g}, bound {bound if bound is None else f'{bound:.6g}'} ({CERTIFICATE})")
