"""The Tetris model (MAST Figure 4, expressions (1)-(9)) kept in one persistent HiGHS instance.

A matheuristic solves many neighbourhoods of one instance: tables fixed at the
incumbent, a few free. :func:`placement.models.tetris.solve` with ``fixed=`` builds a new
Pyomo sub-model per neighbourhood and hands it to HiGHS; measured on 20-40 table
instances, about half of each sub-solve was that construction and hand-over.
:class:`PersistentTetris` builds the whole model once (:func:`placement.models.tetris.build`,
every table free, the same declarative Pyomo model), hands it to Pyomo's
persistent HiGHS interface (``pyomo.contrib.solver``'s ``Highs`` with fixed
variables passed as column bounds) once, and then for each neighbourhood

1. fixes ``x[t,r]`` of every table outside the neighbourhood at the incumbent
   (and of a free table at the regions it may not take, at 0), frees the rest --
   only the changed columns' bounds go to HiGHS;
2. runs the lazy-secant rounds of :mod:`placement.models.tetris` (the secants are valid at
   every integer point, so the cuts added by earlier neighbourhoods stay: each
   one is handed over once and the model only gets tighter);
3. rounds the incumbent to a placement and judges it with the reference
   evaluation (:func:`placement.tetris.evaluate`, :func:`violations`).

The answer follows :func:`placement.models.tetris.solve`'s contract for sub-problems:
``optimal`` (the rounds converged and the reference objective is within the gap
of HiGHS's bound), ``feasible`` with ``stats["verification"][-1]["claim"] ==
"infeasible"`` when the cutoff ``objective_bound`` leaves nothing (nothing in
the neighbourhood beats the incumbent, which is returned), ``time_limit`` when a
node or time limit stopped a round (the best verified placement, never worse
than ``start``). Fixed tables' jobs keep their variables (the LP is that of the
whole model with fixed columns), which the sub-models of ``build(fixed=...)``
leave out; presolve stays off (``DEFAULT_HIGHS_OPTIONS``), so HiGHS sees them.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pyomo.environ as pyo
from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition
from pyomo.contrib.solver.solvers.highs import Highs

from placement.result import SolveResult, Status
from placement.tetris import TetrisInstance, TetrisSolution, evaluate, violations

from .tetris import (
    DEFAULT_HIGHS_OPTIONS,
    SATURATION_LEVEL,
    _within_gap,
    add_violated_secants,
    build,
)

__all__ = ["PersistentTetris"]


class PersistentTetris:
    """One instance's exact model, built once, re-solved per neighbourhood (module docstring)."""

    def __init__(self, inst: TetrisInstance, *, saturation: int = SATURATION_LEVEL, tol: float = 1e-9) -> None:
        t0 = time.perf_counter()
        self.inst, self.tol = inst, tol
        self.m = m = build(inst, saturation=saturation)
        self.R = inst.n_regions
        self.x = {(t, r): m.x[t, r] for t in range(inst.n_tables) for r in range(self.R)}
        self.opt = Highs(treat_fixed_vars_as_params=False)
        au = self.opt.config.auto_updates
        for key in ("check_for_new_or_removed_constraints", "check_for_new_or_removed_vars",
                    "check_for_new_or_removed_params", "check_for_new_objective", "update_constraints",
                    "update_vars", "update_parameters", "update_named_expressions", "update_objective"):
            setattr(au, key, False)  # every change is handed over explicitly below
        self.opt.set_instance(m)
        self.solves = 0
        self.build_s = time.perf_counter() - t0

    def _set_free(self, home: np.ndarray, free: np.ndarray, regions) -> int:
        """Fix every table outside ``free`` at ``home``; free tables may take ``regions``. Returns free binaries."""
        is_free = np.zeros(self.inst.n_tables, dtype=bool)
        is_free[free] = True
        allowed = set(int(r) for r in regions)
        changed, n_free = [], 0
        for (t, r), v in self.x.items():
            if is_free[t] and r in allowed:
                n_free += 1
                if v.fixed:
                    v.unfix()
                    changed.append(v)
            else:
                want = 1 if (not is_free[t] and home[t] == r) else 0
                if not v.fixed or v.value != want:
                    v.fix(want)
                    changed.append(v)
        if changed:
            self.opt.update_variables(changed)
        return n_free

    def solve(self, home: np.ndarray, free: np.ndarray, regions, *, time_limit: float, node_limit: int | None,
              mip_gap: float = 1e-6, highs_options: dict | None = None, max_rounds: int = 200) -> SolveResult:
        """The neighbourhood (``free`` tables may take ``regions``, the rest stay at ``home``), exactly.

        ``home`` must be feasible (the incumbent) and ``regions`` must hold the free tables' regions in
        it (they may stay): it is the fallback answer. ``highs_options``
        are merged over ``DEFAULT_HIGHS_OPTIONS`` (e.g. the cutoff ``objective_bound``).
        """
        t0 = time.perf_counter()
        inst, m = self.inst, self.m
        home = np.asarray(home, dtype=np.int64)
        free = np.asarray(free, dtype=np.int64)
        regions = sorted(int(r) for r in regions)
        n_free = self._set_free(home, free, regions)
        options = {**DEFAULT_HIGHS_OPTIONS, **(highs_options or {})}
        if node_limit is not None:
            options["mip_max_nodes"] = int(node_limit)
        start_obj = evaluate(inst, home).objective
        best_home, best_obj = home.copy(), start_obj
        stats: dict = {"binaries": n_free, "rounds": 0, "lazy_cuts": 0, "verification": [], "persistent": True}
        deadline = t0 + time_limit
        bound = None
        status = Status.TIME_LIMIT
        self.solves += 1
        for _ in range(max_rounds):
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                break
            stats["rounds"] += 1
            res = self.opt.solve(m, time_limit=remaining, rel_gap=mip_gap, threads=1, tee=False,
                                 load_solutions=False, raise_exception_on_nonoptimal_result=False,
                                 solver_options=options)
            tc = res.termination_condition
            if tc in (TerminationCondition.provenInfeasible, TerminationCondition.infeasibleOrUnbounded):
                stats["verification"].append({"claim": "infeasible", "known_feasible": True})
                status = Status.FEASIBLE  # the cutoff left nothing: the incumbent is the answer
                break
            if res.objective_bound is not None and math.isfinite(res.objective_bound):
                bound = res.objective_bound if bound is None else max(bound, res.objective_bound)
            if res.solution_status not in (SolutionStatus.optimal, SolutionStatus.feasible):
                break
            res.solution_loader.load_vars()
            cand = np.array([max(regions, key=lambda r, t=t: pyo.value(self.x[t, r])) for t in free.tolist()],
                            dtype=np.int64)
            cand_home = home.copy()
            cand_home[free] = cand
            ev = evaluate(inst, cand_home)
            viol = violations(inst, cand_home, ev)
            stats["verification"].append({"model_objective": pyo.value(m.obj), "reference_objective": ev.objective,
                                          "bound": bound, "violations": viol})
            if not viol and ev.objective < best_obj:
                best_home, best_obj = cand_home, ev.objective
            added = self._add_violated_cuts()
            stats["lazy_cuts"] += added
            if tc != TerminationCondition.convergenceCriteriaSatisfied:
                break  # node or time limit: the best verified placement so far
            if added == 0:
                ok = not viol and _within_gap(ev.objective, bound, mip_gap)
                status = Status.OPTIMAL if ok else Status.FEASIBLE
                break
        wall = time.perf_counter() - t0
        if bound is not None:
            bound = min(bound, best_obj)
        return SolveResult(status, "exact-persistent", solution=TetrisSolution(home=best_home), objective=best_obj,
                           bound=bound, wall_time_s=wall, stats=stats)

    def _add_violated_cuts(self) -> int:
        """Secants at the incumbent's values where it is below a square term; each handed to HiGHS once."""
        new = add_violated_secants(self.m, self.tol)
        if new:
            self.opt.add_constraints(new)
        return len(new)
