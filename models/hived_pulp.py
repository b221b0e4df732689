"""The HiveD VC-assignment model of :mod:`placement.models.hived`, written a second time in PuLP.

Same index sets (:func:`placement.models.hived.structure`), same rows, built with PuLP and
solved by HiGHS through ``pulp.HiGHS`` (the highspy API). It exists as an
independent modelling-layer check: the tests require both to reach the same
optimum on generated hierarchies and on the real HiveD configs, and the
benchmark can time the two layers side by side.

PuLP facts this module relies on (measured with PuLP 3.3.2): on a time limit PuLP reports
``status == 1``, so the solution status is read from ``prob.sol_status``
(1 optimal, 2 feasible only); infeasible is status -1 without an exception; for
a maximization HiGHS's ``mip_dual_bound`` comes back negated.

``mip_solver`` picks PuLP's own interface to the backend (:mod:`placement.models.backends`):
``pulp.HiGHS``, ``pulp.SCIP_PY`` (PySCIPOpt; its dual bound from ``getDualbound``) or
``pulp.PULP_CBC_CMD`` (the binary PuLP ships; it reports no bound, so a proven answer's bound is
what its gap proves: ``value + mip_gap |value|``).
"""

from __future__ import annotations

import math
import time
from typing import Literal

import pulp

from placement.hived.cells import HivedInstance
from placement.hived.evaluation import Binding, HivedSolution, evaluate
from placement.result import SolveResult, Status

from .backends import MipSolver, check_mip_solver, require
from .hived import pinned_bindings, structure
from .verification import verify

__all__ = ["build", "solve"]

SOLVER = "exact-pulp"


def build(inst: HivedInstance, form: Literal["max", "feasibility"] = "max") -> tuple[pulp.LpProblem, dict]:
    """The PuLP model and its variables by ``(t, c, k, i)`` key (see :mod:`placement.models.hived`)."""
    if form not in ("max", "feasibility"):
        raise ValueError("form must be 'max' or 'feasibility'")
    st = structure(inst)
    prob = pulp.LpProblem(f"hived_{inst.name or 'instance'}", pulp.LpMaximize)
    x = {key: prob.add_variable("x_" + "_".join(map(str, key)), cat=pulp.LpBinary) for key in st.index}
    prob += pulp.lpSum(x.values()) + st.n_pins
    for n, row in enumerate(st.cover):
        prob += pulp.lpSum(x[key] for key in row) <= 1, f"disjoint_{n}"
    for n, (t, c, k, r) in enumerate(st.reservations):
        terms = st.groups.get((t, c, k))
        if terms:
            lhs = pulp.lpSum(x[key] for key in terms)
            prob += (lhs == r) if form == "feasibility" else (lhs <= r), f"reserve_{n}"
    return prob, x


def solve(inst: HivedInstance, *, time_limit: float = 60.0, mip_gap: float = 0.0,
          form: Literal["max", "feasibility"] = "max", mip_solver: MipSolver = "highs") -> SolveResult:
    """Solve with PuLP + HiGHS (or ``mip_solver``, module docstring); statuses, objective and
    verification as :func:`placement.models.hived.solve`."""
    t0 = time.perf_counter()
    require(check_mip_solver(mip_solver))
    st = structure(inst)
    stats = {"form": form, "binaries": len(st.index), "layer": "pulp", "mip_solver": mip_solver}
    if form == "feasibility" and st.empty:
        return SolveResult(Status.INFEASIBLE, SOLVER, wall_time_s=time.perf_counter() - t0, stats=stats,
                           sense="max", message="a reservation has no physical cell outside the pinned cells")
    if not st.index:
        sol = HivedSolution(tuple(pinned_bindings(inst)))
        ev = evaluate(inst, sol)
        return SolveResult(Status.OPTIMAL, SOLVER, solution=sol, objective=ev.objective, bound=ev.objective,
                           wall_time_s=time.perf_counter() - t0, stats=stats, sense="max")
    prob, x = build(inst, form)
    stats["build_s"] = time.perf_counter() - t0
    status = prob.solve(_pulp_solver(mip_solver, time_limit, mip_gap))
    stats["solve_s"] = time.perf_counter() - t0 - stats["build_s"]
    if status == pulp.LpStatusInfeasible:
        return SolveResult(Status.INFEASIBLE, SOLVER, wall_time_s=time.perf_counter() - t0, stats=stats,
                           sense="max", message="no one-to-one mapping of all reserved cells exists")
    if prob.sol_status not in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible):
        return SolveResult(Status.TIME_LIMIT if prob.sol_status == pulp.LpSolutionNoSolutionFound else Status.ERROR,
                           SOLVER, wall_time_s=time.perf_counter() - t0, stats=stats, sense="max",
                           message=pulp.LpSolution[prob.sol_status])
    bindings = [Binding(*key) for key, var in x.items() if (var.value() or 0) > 0.5]
    sol = HivedSolution(tuple(bindings + pinned_bindings(inst)))
    ev = evaluate(inst, sol)
    proven = prob.sol_status == pulp.LpSolutionOptimal
    model_value = pulp.value(prob.objective)
    # HiGHS's and SCIP's dual bounds leave out the objective's constant (the pinned cells);
    # PuLP's value of the objective counts it.
    if mip_solver == "highs":
        dual = -prob.solverModel.getInfo().mip_dual_bound + st.n_pins  # negated for maximization (PuLP 3.3.2)
    elif mip_solver == "scip":
        dual = prob.solverModel.getDualbound() + st.n_pins
    else:
        dual = model_value + mip_gap * abs(model_value) if proven else math.inf
    bound = min(float(inst.n_reserved), math.floor(dual + 1e-6)) if math.isfinite(dual) else None
    stats["model_objective"] = model_value
    v = verify(Status.OPTIMAL if proven else Status.TIME_LIMIT, model_value, ev.objective,
               bound if bound is not None else float(inst.n_reserved), sense="max", mip_gap=mip_gap)
    stats["verification"] = v.record
    return SolveResult(v.status, SOLVER, solution=sol, objective=ev.objective, bound=v.bound,
                       wall_time_s=time.perf_counter() - t0, stats=stats, sense="max", message=v.message)


def _pulp_solver(name: str, time_limit: float, mip_gap: float):
    """PuLP's interface to backend ``name`` (one thread, quiet)."""
    if name == "scip":
        return pulp.SCIP_PY(msg=False, timeLimit=time_limit, gapRel=mip_gap)
    if name == "cbc":
        return pulp.PULP_CBC_CMD(msg=False, timeLimit=time_limit, gapRel=mip_gap, threads=1)
    return pulp.HiGHS(msg=False, timeLimit=time_limit, gapRel=mip_gap, threads=1)
