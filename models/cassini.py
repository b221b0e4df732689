"""Exact CASSINI models solved by HiGHS (Pyomo): the per-link rotation model and the cluster shift model.

Per-link rotation model (Table 1)
---------------------------------
Binary ``x[j,k] = 1`` when job j is rotated by k slots of the unified circle,
``0 <= k < K_j`` (Eq. 4, one rotation within the first iteration; job 0 fixed at 0
when that is a symmetry, see :mod:`placement.solvers.rotation`), ``sum_k x[j,k] = 1``;
``excess[alpha] >= sum_{j,k} bw_circle_j(alpha - k) x[j,k] - C`` (Eqs. 1, 3), ``excess >= 0``;
maximize ``score = 1 - sum_alpha excess[alpha] / (|A| C)`` (Eq. 2). On a faithful grid
(see :mod:`placement.cassini.circle`) this is exact for integer time shifts.

Cluster-level shift model (the paper's "complex approach", §4.1)
----------------------------------------------------------------
One shift per job across all shared links of a candidate: binary ``y[j,m] = 1`` when
job j's shift is ``m G`` with ``G`` the GCD of the phase boundaries of the jobs on
shared links and ``0 <= m G < iter_j``. Every link l is cut into ``p_l / G`` slots of
``G`` time units, on which each job's demand is constant for lattice shifts;
``e[l,i] >= sum_{j,m} d_j((i - m) G mod iter_j) y[j,m] - C_l``; maximize the mean over
shared links of ``1 - G sum_i e[l,i] / (p_l C_l)``. The excess is piecewise linear in
the shifts with breakpoints on the ``G`` lattice, so the optimum over the lattice is
the optimum over all integer shifts: the model is exact, loops included. One job per
connected component of the Affinity graph is fixed at shift 0 (turning a component
together leaves every link score unchanged).

Statuses: ``optimal``; ``feasible`` when the result fails verification; ``time_limit`` with
or without an incumbent; ``error`` when HiGHS fails. ``objective`` is always the integer-grid
reference score of the returned shifts. Verification (:mod:`placement.models.verification`, recorded in
``stats["verification"]``): a result is ``optimal`` only when the model's objective equals that
reference score within 1e-6 and the gap from it to the solver's bound is at most ``mip_gap``;
otherwise it is ``feasible`` with an honest bound (``None`` when the model and the evaluation
disagree, e.g. the per-link model on a grid that is not faithful) and a message.
"""

from __future__ import annotations

import math
import time
from typing import Literal

import networkx as nx
import numpy as np
import pyomo.environ as pyo

from placement.cassini.affinity import affinity_graph
from placement.cassini.circle import UnifiedCircle, unified_circle
from placement.cassini.evaluation import evaluate, link_score
from placement.cassini.instance import CassiniInstance, CassiniSolution
from placement.result import SolveResult, Status

from .backends import MipSolver, check_mip_solver, outcome, require
from .backends import solver as mip_backend
from .verification import verify

__all__ = ["build_link", "solve_link", "build_cluster", "model_terms", "solve_cluster", "solve", "compose_shifts",
           "solve_table1"]


def _fix_first(c: UnifiedCircle) -> bool:
    return all(c.n_angles * j.iteration_time % c.perimeter == 0 for j in c.jobs)


def build_link(c: UnifiedCircle) -> pyo.ConcreteModel:
    """Table 1 for one link (see the module docstring)."""
    m = pyo.ConcreteModel(name="cassini_link")
    n, A = len(c.jobs), c.n_angles
    m.X = pyo.Set(initialize=[(j, k) for j in range(n) for k in range(c.n_rotations[j])], dimen=2)
    m.A = pyo.RangeSet(0, A - 1)
    m.x = pyo.Var(m.X, domain=pyo.Binary)
    m.excess = pyo.Var(m.A, domain=pyo.NonNegativeReals)
    m.one = pyo.Constraint(range(n), rule=lambda m, j: sum(m.x[j, k] for k in range(c.n_rotations[j])) == 1)
    if _fix_first(c):
        m.x[0, 0].fix(1)
    mats = [c.rolled(j) for j in range(n)]

    def excess_rule(m, a):
        terms = [mats[j][k, a] * m.x[j, k] for j in range(n) for k in range(c.n_rotations[j]) if mats[j][k, a] != 0]
        if not terms:
            return pyo.Constraint.Skip
        return m.excess[a] >= sum(terms) - c.capacity

    m.eq3 = pyo.Constraint(m.A, rule=excess_rule)
    m.obj = pyo.Objective(expr=1 - sum(m.excess[a] for a in m.A) / (A * c.capacity), sense=pyo.maximize)
    return m


def _run(m, time_limit: float, mip_gap: float, mip_solver: str = "highs"):
    opt = mip_backend(require(check_mip_solver(mip_solver)))
    res = opt.solve(m, time_limit=max(time_limit, 1e-3), rel_gap=mip_gap, threads=1, tee=False,
                    load_solutions=False, raise_exception_on_nonoptimal_result=False)
    out = outcome(res)
    status = Status.OPTIMAL if out.converged and out.has_solution else Status(out.stop)
    return status, out.has_solution, out.bound, out.condition


def solve_link(c: UnifiedCircle, time_limit: float = 60.0, mip_gap: float = 1e-9,
               mip_solver: MipSolver = "highs") -> SolveResult:
    """Solve Table 1 for one link. ``solution`` is the rotation list; ``stats["shifts"]`` the Eq. 5 shifts.

    ``objective`` is the integer-grid score of the shifts; ``bound`` the model's bound on the
    angle-grid score (a bound on every integer shift only when the grid is faithful).
    ``mip_solver``: HiGHS in memory, or SCIP / CBC on the model written as MPS
    (:mod:`placement.models.backends`); every backend's answer is verified the same way.
    """
    t0 = time.perf_counter()
    m = build_link(c)
    build_s = time.perf_counter() - t0
    status, has, bound, tc = _run(m, time_limit - build_s, mip_gap, mip_solver)
    stats = {"build_s": build_s, "n_angles": c.n_angles, "faithful": c.faithful, "mode": c.mode,
             "binaries": len(m.X), "termination": tc}
    if not has:
        return SolveResult(status, "exact-link", None, None, bound, time.perf_counter() - t0, stats, tc, sense="max")
    rot = [next(k for k in range(c.n_rotations[j]) if pyo.value(m.x[j, k]) > 0.5) for j in range(len(c.jobs))]
    sh = c.shifts(rot)
    stats.update(shifts=sh, circle_score=c.score(rot), model_objective=pyo.value(m.obj))
    obj = link_score(c.jobs, sh, c.capacity)
    v = verify(status, stats["model_objective"], obj, bound, sense="max", mip_gap=mip_gap)
    stats["verification"] = v.record
    if not c.faithful and not v.record["verified"]:
        v.message += " (the angle grid is not faithful: the model scores averaged slots, not integer times)"
    return SolveResult(v.status, "exact-link", rot, obj, v.bound, time.perf_counter() - t0, stats, v.message,
                       sense="max")


def _lattice(inst: CassiniInstance, candidate: str) -> tuple[dict, list[str], int]:
    shared = inst.shared_links(candidate)
    jobs = sorted({n for names in shared.values() for n in names}, key=[j.name for j in inst.jobs].index)
    G = 0
    for n in jobs:
        for b in inst.job[n].boundaries[1:]:
            G = math.gcd(G, b)
    return shared, jobs, max(G, 1)


def _link_tables(inst: CassiniInstance, names, G: int, domain: dict[str, list[int]]) -> dict[str, np.ndarray]:
    """Per job of a link: ``Q[idx, i]`` = its demand on lattice slot i when shifted by ``domain[idx] G``."""
    p = inst.perimeter(names)
    i = np.arange(p // G)
    out = {}
    for n in names:
        job = inst.job[n]
        k = np.asarray(domain[n])
        out[n] = job.demand[((i[None, :] - k[:, None]) * G) % job.iteration_time]
    return out


def _config_costs(tables: dict[str, np.ndarray], names, capacity: float, G: int, chunk: int = 1 << 14) -> np.ndarray:
    """Excess (time units) of every joint configuration of a link's jobs, C-order over ``names``."""
    sizes = [tables[n].shape[0] for n in names]
    total = math.prod(sizes)
    out = np.empty(total)
    slots = next(iter(tables.values())).shape[1]
    chunk = max(1, min(chunk, (1 << 22) // slots))  # at most ~4M demand values (32 MB) at once
    for start in range(0, total, chunk):
        flat = np.arange(start, min(total, start + chunk))
        idx = np.unravel_index(flat, sizes)
        dem = sum(tables[n][k] for n, k in zip(names, idx, strict=True))
        out[flat] = G * np.maximum(dem - capacity, 0.0).sum(axis=1)
    return out


def build_cluster(inst: CassiniInstance, candidate: str, formulation: str = "auto",
                  config_limit: int = 20_000) -> pyo.ConcreteModel:
    """The cluster-level shift model of one candidate (see the module docstring).

    ``formulation``: ``"slot"`` writes the excess of every lattice slot of every link;
    ``"config"`` gives each link a variable per joint configuration of its jobs' shifts,
    with its precomputed excess, tied to the job shifts by marginal constraints
    (``sum`` of a link's configurations with job j at shift m equals ``y[j, m]``), whose LP
    relaxation is far tighter (exact on loop-free graphs of two-job links); ``"auto"``
    uses ``config`` on links with at most ``config_limit`` configurations, ``slot`` elsewhere.
    Both are exact.
    """
    shared, jobs, G = _lattice(inst, candidate)
    cap = inst.topology.capacity
    m = pyo.ConcreteModel(name="cassini_cluster")
    m.G = G
    domain = {n: list(range(inst.job[n].iteration_time // G)) for n in jobs}
    for comp in nx.connected_components(affinity_graph(shared)):
        first = min((nd[1] for nd in comp if nd[0] == "job"), key=jobs.index)
        domain[first] = [0]
    m.domain = domain
    m.Y = pyo.Set(initialize=[(n, k) for n in jobs for k in domain[n]], dimen=2)
    m.y = pyo.Var(m.Y, domain=pyo.Binary)
    m.one = pyo.Constraint(jobs, rule=lambda m, n: sum(m.y[n, k] for k in domain[n]) == 1)
    m.links = pyo.Block(list(shared))
    objective_terms = []
    n_config = n_slot = 0
    for lk, names in shared.items():
        b = m.links[lk]
        tables = _link_tables(inst, names, G, domain)
        w = 1.0 / (inst.perimeter(names) * cap[lk])
        size = math.prod(len(domain[n]) for n in names)  # Python ints: no overflow
        if formulation == "config" or (formulation == "auto" and size <= config_limit):
            n_config += 1
            costs = _config_costs(tables, names, cap[lk], G)
            b.z = pyo.Var(range(size), domain=pyo.NonNegativeReals)
            idx = np.unravel_index(np.arange(size), [len(domain[n]) for n in names])
            b.marg = pyo.ConstraintList()
            for n, col in zip(names, idx, strict=True):
                for pos, k in enumerate(domain[n]):
                    members = np.flatnonzero(col == pos)
                    b.marg.add(sum(b.z[int(c)] for c in members) == m.y[n, k])
            objective_terms.append(1 - w * sum(float(costs[c]) * b.z[c] for c in range(size) if costs[c] != 0))
        else:
            n_slot += 1
            S = next(iter(tables.values())).shape[1]
            b.e = pyo.Var(range(S), domain=pyo.NonNegativeReals)
            b.rows = pyo.ConstraintList()
            for i in range(S):
                terms = [tables[n][pos, i] * m.y[n, k] for n in names for pos, k in enumerate(domain[n])
                         if tables[n][pos, i] != 0]
                if terms:
                    b.rows.add(b.e[i] >= sum(terms) - cap[lk])
            objective_terms.append(1 - w * G * sum(b.e[i] for i in range(S)))
    m.n_config, m.n_slot = n_config, n_slot
    m.obj = pyo.Objective(expr=sum(objective_terms) / len(objective_terms) if objective_terms else 1.0,
                          sense=pyo.maximize)
    return m


def model_terms(inst: CassiniInstance, candidate: str, formulation: str = "auto",
                config_limit: int = 20_000) -> int:
    """Upper estimate of the nonzeros of :func:`build_cluster` (checked before building it)."""
    shared, _, G = _lattice(inst, candidate)
    total = 0
    for names in shared.values():
        dom = [inst.job[n].iteration_time // G for n in names]
        size = math.prod(dom)
        if formulation == "config" or (formulation == "auto" and size <= config_limit):
            total += size * (len(names) + 1)
        else:
            total += (inst.perimeter(names) // G) * sum(dom)
    return total


def solve_cluster(inst: CassiniInstance, candidate: str, time_limit: float = 60.0,
                  mip_gap: float = 1e-9, formulation: str = "auto", max_terms: int = 3_000_000,
                  mip_solver: MipSolver = "highs") -> SolveResult:
    """Exact unique shifts for one candidate (the cluster-level model).

    Returns ``error`` without building when the model would exceed ``max_terms`` nonzeros.
    ``mip_solver`` as for :func:`solve_link`.
    """
    t0 = time.perf_counter()
    shared = inst.shared_links(candidate)
    if not shared:
        sol = CassiniSolution(candidate, tuple((j.name, 0) for j in inst.jobs))
        return SolveResult(Status.OPTIMAL, "exact", sol, evaluate(inst, sol).score, 1.0, time.perf_counter() - t0,
                           {"shared_links": 0}, sense="max")
    terms = model_terms(inst, candidate, formulation)
    if terms > max_terms:
        return SolveResult(Status.ERROR, "exact", None, None, None, time.perf_counter() - t0,
                           {"model_terms": terms, "shared_links": len(shared)},
                           f"the cluster model would have {terms} terms > max_terms {max_terms} "
                           "(long unified circles on a fine lattice); use the affinity solver", sense="max")
    m = build_cluster(inst, candidate, formulation=formulation)
    build_s = time.perf_counter() - t0
    status, has, bound, tc = _run(m, time_limit - build_s, mip_gap, mip_solver)
    stats = {"build_s": build_s, "lattice": m.G, "binaries": len(m.Y), "config_links": m.n_config,
             "slot_links": m.n_slot, "termination": tc, "shared_links": len(shared)}
    if not has:
        return SolveResult(status, "exact", None, None, bound, time.perf_counter() - t0, stats, tc, sense="max")
    shifts = {n: 0 for n in (j.name for j in inst.jobs)}
    for n, k in m.Y:
        if pyo.value(m.y[n, k]) > 0.5:
            shifts[n] = k * m.G
    sol = CassiniSolution(candidate, tuple(shifts.items()))
    stats["model_objective"] = pyo.value(m.obj)
    obj = evaluate(inst, sol).score
    v = verify(status, stats["model_objective"], obj, bound, sense="max", mip_gap=mip_gap)
    stats["verification"] = v.record
    return SolveResult(v.status, "exact", sol, obj, v.bound, time.perf_counter() - t0, stats, v.message,
                       sense="max")


def solve(inst: CassiniInstance, time_limit: float = 60.0, mip_gap: float = 1e-9,
          formulation: Literal["auto", "config", "slot"] = "auto", mip_solver: MipSolver = "highs") -> SolveResult:
    """Best candidate and exact unique shifts: the cluster model on every candidate.

    ``mip_solver``: the MIP solver of every candidate's model (:func:`solve_cluster`).

    The time limit is shared evenly among the candidates still to solve. ``optimal`` when
    every candidate was solved to optimality, or when the best score reaches the bounds of the
    candidates cut short; ``stats["candidates"]`` lists each one.
    """
    t0 = time.perf_counter()
    best, rows, statuses, bounds, messages = None, [], [], [], []
    for i, c in enumerate(inst.candidates):
        left = time_limit - (time.perf_counter() - t0)
        r = solve_cluster(inst, c.name, time_limit=max(left / (len(inst.candidates) - i), 1e-3), mip_gap=mip_gap,
                          formulation=formulation, mip_solver=mip_solver)
        rows.append({"candidate": c.name, "status": str(r.status), "score": r.objective, "bound": r.bound,
                     "time_s": r.wall_time_s, "verified": r.stats.get("verification", {}).get("verified")})
        statuses.append(r.status)
        if r.message and r.message not in messages:
            messages.append(r.message)
        bounds.append(r.bound if r.bound is not None else (r.objective if r.status == Status.OPTIMAL else None))
        if r.objective is not None and (best is None or r.objective > best.objective + 1e-12):
            best = r
    if all(s == Status.OPTIMAL for s in statuses):
        status = Status.OPTIMAL
    elif any(s == Status.ERROR for s in statuses):
        status = Status.ERROR
    elif all(s in (Status.OPTIMAL, Status.FEASIBLE) for s in statuses):
        status = Status.FEASIBLE  # solved, but some candidate failed verification
    else:
        status = Status.TIME_LIMIT
    bound = max(bounds) if all(b is not None for b in bounds) else None
    # Candidates cut short whose (verified-honest) bounds lie below the best score cannot win.
    if status in (Status.TIME_LIMIT, Status.FEASIBLE) and best is not None and bound is not None and best.objective >= bound - 1e-9:
        status = Status.OPTIMAL
    stats = {"candidates": rows}
    if best is not None:
        stats.update({k: v for k, v in best.stats.items()})
        stats["candidate"] = best.solution.candidate
    return SolveResult(status, "exact", best.solution if best else None, best.objective if best else None, bound,
                       time.perf_counter() - t0, stats, "; ".join(messages), sense="max")


def compose_shifts(link_jobs: dict[str, tuple[str, ...]], link_shifts: dict[str, dict[str, int]],
                   iteration: dict[str, int]) -> dict[str, int]:
    """Unique shifts from per-link shifts by a breadth-first walk of the Affinity graph (Algorithm 1).

    Per component, its first job (instance order of ``link_jobs``) gets shift 0; crossing link l from
    job j to job k sets ``s_k = (s_j - t_j^l + t_k^l) mod iter_k`` (Eq. 5 weights ``t``). The same rule
    as :func:`placement.solvers.affinity.bfs_shifts`, rebuilt here with a fixed root because ``models/`` does not
    import ``solvers/``. On loop-free graphs every link keeps its per-link optimum; with loops some
    links may not, which :func:`solve_table1` detects by evaluating them.
    """
    g = affinity_graph(link_jobs)
    order = {n: i for i, n in enumerate(n for names in link_jobs.values() for n in names)}
    shifts: dict[str, int] = {}
    for comp in sorted(nx.connected_components(g), key=lambda c: min(order[n[1]] for n in c if n[0] == "job")):
        root = min((n[1] for n in comp if n[0] == "job"), key=order.__getitem__)
        shifts[root] = 0
        reached_by: dict[str, str] = {}  # link -> the job the walk reached it from
        for u, v in nx.bfs_edges(g, ("job", root), sort_neighbors=sorted):
            if u[0] == "job":
                reached_by[v[1]] = u[1]
            else:  # link -> job: place the job relative to the job that reached the link
                lk, j, k = u[1], reached_by[u[1]], v[1]
                shifts[k] = (shifts[j] - link_shifts[lk][j] + link_shifts[lk][k]) % iteration[k]
    return shifts


def solve_table1(inst: CassiniInstance, time_limit: float = 60.0, mip_gap: float = 1e-9,
                 mip_solver: MipSolver = "highs") -> SolveResult:
    """Table 1 per link on every candidate (``--solver table1``), then unique shifts and the reference score.

    For each candidate, each shared link's unified circle (instance precision) is solved exactly by
    :func:`solve_link` (the paper's per-link optimization model); per-link optima and their verified
    bounds are reported in ``stats["candidates"][i]["links"]``. The per-link shifts are made unique by
    :func:`compose_shifts` and the resulting solution is scored by the reference evaluation: that is
    ``objective``. A link is *consistent* when its score under the unique shifts equals its per-link
    optimum; a candidate whose links are all consistent reaches the mean of its per-link optima.

    ``bound``: the largest over candidates of the mean per-link bound (each link's score is at most its
    own optimum, so no shift assignment of any candidate scores more); ``None`` when some link's bound
    is not verified (a grid that is not faithful). ``optimal`` when the best reference score reaches
    that bound within ``mip_gap`` (:func:`placement.models.verification.verify`), else ``feasible`` with the bound;
    ``time_limit``/``error`` when a link model ends without a solution. The time limit is shared evenly
    among the links still to solve. ``mip_solver`` as for :func:`solve_link`.
    """
    t0 = time.perf_counter()
    cap = inst.topology.capacity
    iteration = {j.name: j.iteration_time for j in inst.jobs}
    plans = [(c.name, inst.shared_links(c.name)) for c in inst.candidates]
    left_links = sum(len(s) for _, s in plans)
    rows, best, bounds, failures = [], None, [], []
    for cand, shared in plans:
        links, shifts_by_link, link_bounds, ok = {}, {}, [], True
        for lk, names in shared.items():
            budget = max((time_limit - (time.perf_counter() - t0)) / max(left_links, 1), 1e-3)
            left_links -= 1
            circ = unified_circle([inst.job[n] for n in names], cap[lk], inst.precision_deg, inst.max_angles)
            r = solve_link(circ, time_limit=budget, mip_gap=mip_gap, mip_solver=mip_solver)
            links[lk] = {"jobs": list(names), "status": str(r.status), "optimum": r.objective, "bound": r.bound,
                         "faithful": circ.faithful, "time_s": r.wall_time_s}
            link_bounds.append(r.bound)
            if r.solution is None:
                ok = False
                failures.append(r.status)
                continue
            shifts_by_link[lk] = dict(zip(names, r.stats["shifts"], strict=True))
        row = {"candidate": cand, "links": links}
        cand_bound = (sum(link_bounds) / len(link_bounds) if link_bounds else 1.0) \
            if all(b is not None for b in link_bounds) else None
        bounds.append(cand_bound)
        row["bound"] = cand_bound
        if ok:
            shifts = compose_shifts(shared, shifts_by_link, iteration)
            sol = CassiniSolution(cand, tuple((j.name, shifts.get(j.name, 0)) for j in inst.jobs))
            ev = evaluate(inst, sol)
            for lk, info in links.items():
                info["score"] = ev.link_scores[lk]
                info["consistent"] = abs(ev.link_scores[lk] - info["optimum"]) <= 1e-9
            row.update(score=ev.score, consistent=all(i["consistent"] for i in links.values()))
            if best is None or ev.score > best[1] + 1e-12:
                best = (sol, ev.score, row)
        rows.append(row)
    stats: dict = {"candidates": rows}
    elapsed = time.perf_counter() - t0
    if best is None:
        status = Status.TIME_LIMIT if Status.TIME_LIMIT in failures else Status.ERROR
        return SolveResult(status, "table1", None, None, None, elapsed, stats, "no candidate got every link solved",
                           sense="max")
    sol, score, row = best
    bound = max(bounds) if all(b is not None for b in bounds) else None
    v = verify(Status.OPTIMAL if not failures else Status.TIME_LIMIT, score, score, bound, sense="max",
               mip_gap=mip_gap)
    stats.update(candidate=sol.candidate, consistent=row["consistent"], verification=v.record)
    message = "" if row["consistent"] else \
        "the per-link optima of the chosen candidate are not all reached by one shift per job (Affinity loop)"
    if bound is None:
        message = "; ".join(m for m in (message, "no verified bound (a link model hit its time limit or its grid is not faithful)") if m)
    return SolveResult(v.status, "table1", sol, score, v.bound if bound is not None else None, elapsed, stats,
                       "; ".join(m for m in (message, v.message) if m), sense="max")
