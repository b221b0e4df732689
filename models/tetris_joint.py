"""Homes and replicas placed by one MIP (MAST Figure 4 with §3.5; §3.1 and §6 name it as future work).

MAST decides home regions first (Figure 4, §3.2-3.4) and extra replicas afterwards
(§3.5), and names a formulation deciding both at once as future work (§3.1, §6).
This module is that formulation on our semantics, declarative Pyomo solved by
HiGHS, built on top of the exact home model :func:`placement.models.tetris.build` (its
variables, rows and objective terms (1)-(3) are reused as they are, not copied).

Semantics
---------
The objective ``J`` and the constraints are defined in
:mod:`placement.tetris.replica_eval` (the reference evaluation every answer is
judged by):

    minimize  J = w1*(1) + w2*(2) + w3*(3) - lambda * G_run - mu * N_dr

with (1)-(3) of Figure 4 on the homes, ``G_run`` the GPU-hours of the ML jobs some
region can run (every table they read is present there and the region has their
GPU type: data-GPU collocation, §3.1) and ``N_dr`` the tables with a copy outside
their home (§3.5's DR replica). Hard constraints: Figure 4's (4)-(6) and the move
quota on the homes, (4) counting homes plus replicas, and replica bytes at most
``replica_budget``.

Variables and rows added to the home model
------------------------------------------
``y[t,r]`` (binary, ``m.rep``; the home model's ``m.y`` are its overload levels)
    A replica of table t in region r; ``x[t,r] + y[t,r] <= 1`` (no replica at
    home), so ``present(t,r) = x[t,r] + y[t,r]`` is 0 or 1.
(4) with replicas
    The home model's storage rows are switched off and replaced by
    ``sum_t size_t (x[t,r] + y[t,r]) <= storage_capacity(r)``.
Replica budget
    ``sum_{t,r} size_t y[t,r] <= replica_budget`` (when given).
Runnable jobs (an AND over tables, an OR over regions)
    For an ML job j with GPU-hours > 0 and each region r that has its GPU type,
    ``v[j,r] <= present(t,r)`` for every table t of j; ``u[j] <= sum_r v[j,r]``,
    ``0 <= v, u <= 1`` continuous. At binary ``x, y`` the largest ``u[j]`` is 1 iff
    some such region holds all of j's tables, and minimization pushes ``u`` up, so
    ``-lambda sum_j gh_j u[j]`` is exactly ``-lambda G_run``.
DR copies
    ``d[t] <= sum_r y[t,r]``, ``0 <= d[t] <= 1``: ``-mu sum_t d[t]`` is ``-mu N_dr``.

With ``y = 0`` every new row holds and (4) is the home model's, so the joint model
is feasible exactly when the home model is, and with ``lambda = mu = 0`` (any
budget: a replica then only costs room) its optimum is the home model's optimum.
With ``replica_budget = 0`` and ``lambda > 0`` no replica is made, but the homes
are still chosen for the jobs they alone make runnable.

Relation to the sequential pipeline
-----------------------------------
The sequential pipeline (homes by ``models/tetris.py``, LNS or hill climbing, then
``solvers/replicas.py``) is a lexicographic heuristic for ``J``: it first minimizes
``w1*(1) + w2*(2) + w3*(3)`` alone (exactly with the home MIP, heuristically with
LNS or hill climbing), then, homes fixed, its phase 1 (collocation replicas) is a
greedy heuristic for ``max G_run`` and its phase 3 (DR copies) one for
``max N_dr``, both within the storage left. Phase 2 (hot tables per GPU type)
spreads load over more regions, which ``J`` does not value (a job counts once
however many regions can run it). ``solve(fix_home=...)`` is the exact second
stage (optimal replicas for given homes). Whenever the sequential result's
replica bytes fit the budget it is a feasible point of this model, so the joint
optimum is never worse in ``J``.

Statuses: ``optimal`` (HiGHS proved optimality, no lazy secant is violated, and
the reference evaluation of the rounded answer agrees with the bound within
``mip_gap``), ``feasible`` (that check failed; the best verified answer is kept),
``time_limit`` (incumbent or none), ``infeasible`` (proven; the message names the
hard-constraint family, found by the home model when the homes alone cannot be
placed), ``error``.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import pyomo.environ as pyo
from placement.models.backends import MipSolver, check_mip_solver, outcome, require
from placement.models.backends import solver as mip_backend
from placement.models.tetris import DEFAULT_HIGHS_OPTIONS, add_violated_secants
from placement.models.tetris import build as build_home
from placement.models.tetris import solve as solve_home

from placement.result import SolveResult, Status, relative_gap
from placement.tetris import TetrisInstance, TetrisSolution, violations
from placement.tetris.replica_eval import (
    check_joint_options,
    default_weights,
    evaluate_joint,
    joint_violations,
)

__all__ = ["build", "solve"]

ABS_GAP = 1e-6


def build(inst: TetrisInstance, *, replica_budget: int | None = None, runnable_weight: float | None = None,
          dr_weight: float | None = None) -> pyo.ConcreteModel:
    """The joint model (module docstring): the home model of :func:`placement.models.tetris.build` plus replicas.

    Weights default to :func:`placement.tetris.replica_eval.default_weights`.
    The model keeps the home model's ``m._squares`` (lazy secants of (7) and
    (9)); its objective is ``m.joint_obj`` (the home objective ``m.obj`` is
    deactivated and is one of its terms).
    """
    budget, lam, mu = check_joint_options(replica_budget, runnable_weight, dr_weight)
    d_lam, d_mu = default_weights(inst)
    lam = d_lam if lam is None else lam
    mu = d_mu if mu is None else mu
    A = inst.arrays
    R, T = inst.n_regions, inst.n_tables
    size = A.size.tolist()
    m = build_home(inst)
    tr = [(t, r) for t in range(T) for r in range(R)]
    m.rep = pyo.Var(tr, domain=pyo.Binary)
    m.copy_not_home = pyo.Constraint(tr, rule=lambda m, t, r: m.x[t, r] + m.rep[t, r] <= 1)

    def present(t, r):
        return m.x[t, r] + m.rep[t, r]

    m.storage.deactivate()  # (4) again, now counting replicas
    m.storage_copies = pyo.Constraint(range(R), rule=lambda m, r: sum(
        size[t] * present(t, r) for t in range(T)) <= int(A.storage_cap[r]))
    m._families["storage"] = [m.storage_copies]
    rep_bytes = sum(size[t] * m.rep[t, r] for t, r in tr)
    m.replica_bytes = pyo.Expression(expr=rep_bytes)
    if budget is not None:
        m.budget = pyo.Constraint(expr=rep_bytes <= budget)

    ml = np.flatnonzero(A.job_ml & (A.job_gh > 0)).tolist() if lam > 0 else []
    reach = {j: np.flatnonzero(A.supply[:, A.job_gpu[j]] > 0).tolist() for j in ml}
    tabs = {j: A.job_tab[A.job_ptr[j]:A.job_ptr[j + 1]].tolist() for j in ml}
    jr = [(j, r) for j in ml for r in reach[j]]
    m.v = pyo.Var(jr, bounds=(0, 1))
    m.v_le = pyo.Constraint([(j, r, t) for j, r in jr for t in tabs[j]],
                            rule=lambda m, j, r, t: m.v[j, r] <= present(t, r))
    m.u = pyo.Var(ml, bounds=(0, 1))
    m.u_le = pyo.Constraint(ml, rule=lambda m, j: m.u[j] <= sum(m.v[j, r] for r in reach[j]))
    m.runnable_gpu_hours = pyo.Expression(expr=sum(int(A.job_gh[j]) * m.u[j] for j in ml))

    dr_tables = list(range(T)) if mu > 0 and R > 1 else []
    m.d = pyo.Var(dr_tables, bounds=(0, 1))
    m.d_le = pyo.Constraint(dr_tables, rule=lambda m, t: m.d[t] <= sum(m.rep[t, r] for r in range(R)))
    m.dr_tables = pyo.Expression(expr=sum(m.d[t] for t in dr_tables))

    m.obj.deactivate()
    m.joint_obj = pyo.Objective(expr=m.obj.expr - lam * m.runnable_gpu_hours - mu * m.dr_tables,
                                sense=pyo.minimize)
    m._weights = (lam, mu)
    m._budget = budget
    return m


def _fix(m: pyo.ConcreteModel, inst: TetrisInstance, home, replicas) -> None:
    """Fix the homes (and the replicas when given) to a placement."""
    home = np.asarray(home, dtype=np.int64)
    for (t, r), v in m.x.items():
        v.fix(1 if home[t] == r else 0)
    if replicas is not None:
        for (t, r), v in m.rep.items():
            v.fix(1 if r in replicas[t] else 0)


def _rounded(m: pyo.ConcreteModel, inst: TetrisInstance) -> TetrisSolution:
    """The incumbent as a placement: each table at its largest ``x``, replicas where ``y`` (``m.rep``) ``> 1/2``."""
    R = inst.n_regions
    home = np.array([max(range(R), key=lambda r: pyo.value(m.x[t, r])) for t in range(inst.n_tables)],
                    dtype=np.int64)
    reps = tuple(tuple(r for r in range(R) if r != home[t] and pyo.value(m.rep[t, r]) > 0.5)
                 for t in range(inst.n_tables))
    return TetrisSolution(home=home, replicas=reps)


def solve(inst: TetrisInstance, *, replica_budget: int | None = None, runnable_weight: float | None = None,
          dr_weight: float | None = None, time_limit: float = 60.0, mip_gap: float = 1e-6, max_rounds: int = 200,
          tol: float = 1e-9, highs_options: dict | None = None,
          fix_home: TetrisSolution | np.ndarray | None = None,
          fix_solution: TetrisSolution | None = None, mip_solver: MipSolver = "highs",
          on_model: Callable[[pyo.ConcreteModel], None] | None = None) -> SolveResult:
    """Place homes and replicas jointly (module docstring), then verify the answer.

    Parameters
    ----------
    replica_budget : int, optional
        Total replica bytes allowed (``None``: only storage (4) limits replicas).
    runnable_weight, dr_weight : float, optional
        ``lambda`` and ``mu`` of the objective (defaults:
        :func:`placement.tetris.replica_eval.default_weights`).
    time_limit, mip_gap, max_rounds, tol, highs_options
        As for :func:`placement.models.tetris.solve` (lazy-secant rounds; HiGHS options merged
        over ``placement.models.tetris.DEFAULT_HIGHS_OPTIONS``).
    fix_home : optional
        Homes given: only the replicas are decided (the exact second stage of the
        sequential pipeline).
    fix_solution : TetrisSolution, optional
        Homes and replicas given: the model's value of that point (``infeasible``
        when it breaks a hard constraint).
    mip_solver, on_model
        As for :func:`placement.models.tetris.solve` (HiGHS, SCIP or CBC per round; the model
        after the last round handed to ``on_model``).

    Returns
    -------
    SolveResult
        ``objective`` is the reference ``J`` of :func:`~placement.tetris.replica_eval.evaluate_joint`
        at ``solution`` (homes and replicas), ``bound`` a valid lower bound on the
        optimum of ``J``. ``stats``: the joint measures (home objective, runnable ML
        jobs and GPU-hours, DR coverage, replica bytes, storage), the weights, the
        budget, model size, rounds, build and solve seconds, the model's own value
        and ``verification``.

    Raises
    ------
    ValueError
        ``replica_budget``, ``runnable_weight`` or ``dr_weight`` out of range (one line, the field named).
    """
    t0 = time.perf_counter()
    budget, lam, mu = check_joint_options(replica_budget, runnable_weight, dr_weight)
    require(check_mip_solver(mip_solver))
    deadline = t0 + time_limit
    m = build(inst, replica_budget=budget, runnable_weight=lam, dr_weight=mu)
    lam, mu = m._weights
    weights = {"runnable_weight": lam, "dr_weight": mu}
    stats: dict = {"replica_budget": budget, **weights, "build_s": time.perf_counter() - t0, "rounds": 0,
                   "lazy_cuts": 0,
                   "binaries": sum(1 for v in m.component_data_objects(pyo.Var) if v.is_binary()),
                   "variables": sum(1 for _ in m.component_data_objects(pyo.Var)),
                   "constraints": sum(1 for _ in m.component_data_objects(pyo.Constraint, active=True)),
                   "verification": []}

    def done(status, sol=None, bound=None, message=""):
        ev = evaluate_joint(inst, sol, **weights) if sol is not None else None
        if ev is not None:
            stats.update(ev.measures)
            if bound is not None and bound > ev.objective:  # a bound above a verified value is not a bound
                stats["bound_clamped"] = bound
                bound = ev.objective
            stats["gap"] = relative_gap(ev.objective, bound, relative_to="value")  # HiGHS's mip_rel_gap
        wall = time.perf_counter() - t0
        stats["solve_s"] = wall - stats["build_s"]
        if on_model is not None:
            on_model(m)
        return SolveResult(status, "joint", solution=sol, objective=None if ev is None else ev.objective,
                           bound=bound, wall_time_s=wall, stats=stats, message=message)

    if m._infeasible:  # rows of the home model that are constant and cannot hold
        return done(Status.INFEASIBLE, message="infeasible: cannot be met whatever the tables do: "
                    + "; ".join(m._infeasible))
    known = None  # a verified feasible point: the fallback answer
    if fix_solution is not None:
        viol = joint_violations(inst, fix_solution, budget)
        if viol:
            return done(Status.INFEASIBLE, message=f"infeasible: the given placement breaks {'; '.join(viol)}")
        _fix(m, inst, fix_solution.home, fix_solution.replicas or tuple(() for _ in inst.tables))
        known = fix_solution
    elif fix_home is not None:
        home = np.asarray(fix_home.home if isinstance(fix_home, TetrisSolution) else fix_home, dtype=np.int64)
        viol = violations(inst, home)
        if viol:
            return done(Status.INFEASIBLE, message=f"infeasible: the given homes break {'; '.join(viol)}")
        _fix(m, inst, home, None)
        known = TetrisSolution(home=home, replicas=tuple(() for _ in inst.tables))
    else:
        start = TetrisSolution(home=inst.arrays.home0.copy(), replicas=tuple(() for _ in inst.tables))
        if not joint_violations(inst, start, budget):
            known = start
    best = known
    best_obj = None if known is None else evaluate_joint(inst, known, **weights).objective

    options = {**DEFAULT_HIGHS_OPTIONS, **(highs_options or {})}
    opt = mip_backend(mip_solver)
    stats["mip_solver"] = mip_solver
    bound = None
    status, message = Status.ERROR, ""
    for _ in range(max_rounds):
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            status, message = Status.TIME_LIMIT, "time limit before the cut rounds converged"
            break
        stats["rounds"] += 1
        res = opt.solve(m, time_limit=remaining, rel_gap=mip_gap, threads=1, tee=False, load_solutions=False,
                        raise_exception_on_nonoptimal_result=False, solver_options=options)
        out = outcome(res)
        if out.termination == "infeasible":
            if known is not None:  # an infeasibility claim is checked like a value
                status, message = Status.FEASIBLE, "HiGHS claimed infeasibility but a feasible placement is known"
                break
            home_res = solve_home(inst, time_limit=max(1.0, deadline - time.perf_counter()))
            reason = home_res.message if home_res.status == Status.INFEASIBLE else \
                "the replica rows cannot hold with the homes' constraints"
            stats["home_model_status"] = str(home_res.status)
            return done(Status.INFEASIBLE, message=reason if reason.startswith("infeasible") else
                        f"infeasible: {reason}")
        if out.bound is not None:
            bound = out.bound if bound is None else max(bound, out.bound)  # each round's is valid
        if not out.has_solution:
            status, message = Status(out.stop), out.condition
            break
        sol = _rounded(m, inst)
        ev = evaluate_joint(inst, sol, **weights)
        viol = joint_violations(inst, sol, budget)
        model_obj = pyo.value(m.joint_obj)
        added = len(add_violated_secants(m, tol))
        stats["lazy_cuts"] += added
        converged = added == 0 and out.converged
        check = {"model_objective": model_obj, "reference_objective": ev.objective, "bound": bound,
                 "violations": viol, "lazy_cuts": added}
        stats["model_objective"] = model_obj
        if not viol and (best_obj is None or ev.objective < best_obj):
            best, best_obj = sol, ev.objective
        if added:
            if out.converged:
                continue
            status, message = Status.TIME_LIMIT, out.condition
            break
        check["verified"] = converged and not viol and bound is not None and \
            ev.objective - bound <= max(mip_gap * abs(ev.objective), ABS_GAP)
        stats["verification"].append(check)
        if check["verified"]:
            status, message = Status.OPTIMAL, ""
            best, best_obj = sol, ev.objective
        elif converged:
            status = Status.FEASIBLE
            message = (f"not verified: model value {model_obj:.10g}, reference {ev.objective:.10g}, bound {bound}"
                       + (f", violations: {'; '.join(viol)}" if viol else ""))
        else:
            status = Status.TIME_LIMIT if out.termination == "time_limit" else Status.FEASIBLE
            message = out.condition
        break
    else:
        status, message = Status.FEASIBLE, f"stopped after {max_rounds} cut rounds"
    if status == Status.ERROR:
        best = None
    return done(status, best, bound, message)
