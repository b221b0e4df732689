"""Exact model of HiveD VC-assignment feasibility (§3.2), declarative Pyomo solved by HiGHS.

Decision
    ``x[t, c, k, i] = 1`` when a level-``k`` logical cell of VC ``t`` in chain
    ``c`` is bound to physical cell ``(c, k, i)``. Logical cells of one VC at
    one level are interchangeable, so one binary per (VC, physical cell) is
    enough. Physical cells that overlap an owned pinned cell carry no variable
    (pinned cells are fixed bindings of their VC).
Disjointness (a physical cell is bound whole; no GPU covered twice)
    For every chain and every cell ``q`` at the lowest reserved level of the
    chain: ``sum_{p ancestor-or-self of q} sum_t x[t, c, level(p), p] <= 1``.
    Every GPU lies below exactly one such ``q`` and every bound cell covers
    whole ``q`` cells, so this is exactly "no GPU twice".
Feasibility form (``form="feasibility"``)
    ``sum_i x[t, c, k, i] = r[t, c, k]`` for every reservation; the model is
    feasible iff a one-to-one mapping of all logical cells onto disjoint
    physical cells exists.
Optimization form (``form="max"``, the default of :func:`solve`)
    ``sum_i x[t, c, k, i] <= r[t, c, k]`` and maximize the number of honoured
    cells ``sum x`` + pinned cells. The optimum equals ``instance.n_reserved``
    iff the assignment is feasible; otherwise ``n_reserved - optimum`` is the
    smallest number of reserved cells to drop, and the solution names them.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Literal

import pyomo.environ as pyo

from placement.hived.cells import HivedInstance
from placement.hived.evaluation import Binding, HivedSolution, evaluate
from placement.result import SolveResult, Status

from .backends import MipSolver, check_mip_solver, outcome, require
from .backends import solver as mip_backend
from .verification import verify

__all__ = ["build", "solve", "structure", "Structure", "pinned_bindings"]


def _blocked(inst: HivedInstance, c: int) -> tuple[set[tuple[int, int]], list]:
    """Cells of chain ``c`` that overlap an owned pinned cell, and those pinned cells."""
    ch = inst.chains[c]
    pins = [p for p in inst.pinned.values() if p.chain == c and p.id in inst.used_pins]
    out: set[tuple[int, int]] = set()
    for p in pins:
        for k in range(p.level, ch.top + 1):  # the pinned cell and its ancestors
            out.add((k, ch.ancestor(p.level, p.index, k)))
        for k in range(1, p.level):  # its descendants
            g = ch.gpus[p.level] // ch.gpus[k]
            out.update((k, j) for j in range(p.index * g, p.index * g + g))
    return out, pins


def pinned_bindings(inst: HivedInstance) -> list[Binding]:
    return [Binding(inst.vc_index[inst.used_pins[p.id]], p.chain, p.level, p.index, p.id)
            for p in inst.pinned.values() if p.id in inst.used_pins]


@dataclass
class Structure:
    """The model's index sets, shared by the Pyomo model and its PuLP twin (models/hived_pulp.py).

    ``index``: one ``(t, c, k, i)`` per (VC, free physical cell) pair; ``cover``: the
    disjointness rows, each a list of ``index`` keys; ``reservations``: ``(t, c, k, r)``
    with ``r > 0``; ``groups``: ``(t, c, k)`` -> its ``index`` keys; ``n_pins``: pinned
    cells bound by construction; ``empty``: reservations that no free cell can take.
    """

    index: list[tuple[int, int, int, int]]
    cover: list[list[tuple[int, int, int, int]]]
    reservations: list[tuple[int, int, int, int]]
    groups: dict[tuple[int, int, int], list[tuple[int, int, int, int]]]
    n_pins: int
    empty: list[tuple[int, int, int, int]]


def structure(inst: HivedInstance) -> Structure:
    """Index sets and disjointness rows of the feasibility model (see the module docstring)."""
    index: list[tuple[int, int, int, int]] = []
    cover: list[list[tuple[int, int, int, int]]] = []
    n_pins = 0
    for c, ch in enumerate(inst.chains):
        blocked, pins = _blocked(inst, c)
        n_pins += len(pins)
        demand = [(t, k) for t, v in enumerate(inst.vcs) for (cc, k), n in v.reserved.items() if cc == c and n > 0]
        if not demand:
            continue
        by_level: dict[int, list[int]] = {}
        for t, k in demand:
            by_level.setdefault(k, []).append(t)
        for k, vcs in by_level.items():
            for i in range(ch.count[k]):
                if (k, i) not in blocked:
                    index.extend((t, c, k, i) for t in vcs)
        lmin = min(by_level)
        for q in range(ch.count[lmin]):
            if (lmin, q) in blocked:
                continue
            # ancestors of pinned cells carry no variable
            row = [(t, c, k, ch.ancestor(lmin, q, k)) for k, vcs in by_level.items() for t in vcs
                   if (k, ch.ancestor(lmin, q, k)) not in blocked]
            cover.append(row)
    groups: dict[tuple[int, int, int], list] = {}
    for key in index:
        groups.setdefault(key[:3], []).append(key)
    reservations = [(t, c, k, n) for t, v in enumerate(inst.vcs) for (c, k), n in v.reserved.items() if n > 0]
    return Structure(index, cover, reservations, groups, n_pins,
                     [q for q in reservations if q[:3] not in groups])


def build(inst: HivedInstance, form: Literal["max", "feasibility"] = "max") -> pyo.ConcreteModel:
    """The declarative model (see the module docstring); ``form`` is ``"max"`` or ``"feasibility"``."""
    if form not in ("max", "feasibility"):
        raise ValueError("form must be 'max' or 'feasibility'")
    st = structure(inst)
    m = pyo.ConcreteModel(name=f"hived-{inst.name}")
    m.I = pyo.Set(initialize=st.index, dimen=4, ordered=True)
    m.x = pyo.Var(m.I, domain=pyo.Binary)
    m.pinned = pyo.Param(initialize=st.n_pins, mutable=False)
    m.C = pyo.RangeSet(0, len(st.cover) - 1) if st.cover else pyo.Set(initialize=[])
    m.disjoint = pyo.Constraint(m.C, rule=lambda m, n: sum(m.x[key] for key in st.cover[n]) <= 1)
    m.R = pyo.RangeSet(0, len(st.reservations) - 1) if st.reservations else pyo.Set(initialize=[])

    def _res(m, n):
        t, c, k, r = st.reservations[n]
        terms = st.groups.get((t, c, k), [])
        if not terms:  # no physical cell can take it: see m.empty_reservations
            return pyo.Constraint.Skip
        lhs = sum(m.x[key] for key in terms)
        return (lhs == r) if form == "feasibility" else (lhs <= r)

    m.reserve = pyo.Constraint(m.R, rule=_res)
    m.empty_reservations = st.empty
    m.obj = pyo.Objective(expr=sum(m.x[key] for key in st.index) + st.n_pins, sense=pyo.maximize)
    return m


def solve(inst: HivedInstance, *, time_limit: float = 60.0, mip_gap: float = 0.0,
          form: Literal["max", "feasibility"] = "max", mip_solver: MipSolver = "highs") -> SolveResult:
    """Solve the exact model with HiGHS (or ``mip_solver="scip"`` / ``"cbc"`` on the model
    written as MPS, :mod:`placement.models.backends`; every answer verified the same way).

    Returns
    -------
    SolveResult
        ``form="max"``: ``optimal`` with the largest set of honoured reservations
        (objective = honoured cells by the reference evaluation, ``bound`` the
        proven upper bound), ``time_limit`` with the incumbent. ``form="feasibility"``:
        ``optimal`` with a full binding, or ``infeasible``. ``stats["feasible"]`` says
        whether every reservation can be honoured (when proven). ``optimal`` only after
        :func:`placement.models.verification.verify` accepts it: the model's value equals the reference
        evaluation of the rounded binding and the bound is met (``stats["verification"]``);
        otherwise ``feasible`` with an honest bound and a message.
    """
    t0 = time.perf_counter()
    require(check_mip_solver(mip_solver))
    m = build(inst, form)
    build_s = time.perf_counter() - t0
    stats = {"form": form, "binaries": len(m.I), "constraints": len(m.disjoint) + len(m.reserve),
             "build_s": build_s}
    if form == "feasibility" and m.empty_reservations:
        stats["feasible"] = False
        return SolveResult(Status.INFEASIBLE, "exact", wall_time_s=time.perf_counter() - t0, stats=stats,
                           sense="max", message="a reservation has no physical cell outside the pinned cells")
    if len(m.I) == 0:  # nothing to decide: the pinned cells are the whole answer
        sol = HivedSolution(tuple(pinned_bindings(inst)))
        ev = evaluate(inst, sol)
        stats["feasible"] = ev.honoured == inst.n_reserved
        return SolveResult(Status.OPTIMAL, "exact", solution=sol, objective=ev.objective, bound=ev.objective,
                           wall_time_s=time.perf_counter() - t0, stats=stats, sense="max",
                           message="" if stats["feasible"] else
                           f"{inst.n_reserved - ev.honoured} reserved cell(s) cannot be honoured")
    opt = mip_backend(mip_solver)
    stats["mip_solver"] = mip_solver
    try:
        res = opt.solve(m, time_limit=time_limit, rel_gap=mip_gap, threads=1, tee=False,
                        load_solutions=False, raise_exception_on_nonoptimal_result=False)
    except Exception as exc:  # report solver failures as a status, never raise
        return SolveResult(Status.ERROR, "exact", wall_time_s=time.perf_counter() - t0, stats=stats,
                           sense="max", message=f"{exc.__class__.__name__}: {exc}")
    stats["solve_s"] = time.perf_counter() - t0 - build_s
    out = outcome(res)
    if out.termination == "infeasible":
        stats["feasible"] = False
        return SolveResult(Status.INFEASIBLE, "exact", wall_time_s=time.perf_counter() - t0, stats=stats,
                           sense="max", message="no one-to-one mapping of all reserved cells exists")
    if not out.has_solution:
        return SolveResult(Status(out.stop), "exact", wall_time_s=time.perf_counter() - t0, stats=stats,
                           sense="max", message=out.condition)
    bindings = [Binding(t, c, k, i) for (t, c, k, i) in m.I if m.x[t, c, k, i].value > 0.5]
    bindings += pinned_bindings(inst)
    sol = HivedSolution(tuple(bindings))
    ev = evaluate(inst, sol)
    bound = out.bound
    if bound is not None:
        bound = min(float(inst.n_reserved), math.floor(bound + 1e-6))
    stats["model_objective"] = out.incumbent
    v = verify(Status.OPTIMAL if out.converged else Status.TIME_LIMIT, out.incumbent, ev.objective,
               bound if bound is not None else float(inst.n_reserved), sense="max", mip_gap=mip_gap)
    stats["verification"] = v.record
    if v.status == Status.OPTIMAL or ev.honoured == inst.n_reserved:
        stats["feasible"] = ev.honoured == inst.n_reserved
    message = "" if ev.honoured == inst.n_reserved else \
        f"{inst.n_reserved - ev.honoured} reserved cell(s) cannot be honoured"
    return SolveResult(v.status, "exact", solution=sol, objective=ev.objective, bound=v.bound,
                       wall_time_s=time.perf_counter() - t0, stats=stats, sense="max",
                       message="; ".join(m for m in (message, v.message) if m))
