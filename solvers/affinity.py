"""Affinity graph time shifts (CASSINI Algorithm 1) and candidate ranking (Algorithm 2).

Terms
-----
per-link optimum
    Rotations of one shared link found by :func:`placement.solvers.rotation.search_link` and turned
    into per-link shifts ``t_j^l`` by Eq. 5 (the edge weights ``w_(j,l)`` of the Affinity graph).
BFS shifts (Algorithm 1)
    Per connected component, a seeded random job gets ``t = 0``; BFS over jobs only, and
    reaching job k from job j through link l sets ``t_k = (t_j - t_j^l + t_k^l) mod iter_k``.
    On a loop-free graph this keeps every pairwise relative shift of every link
    (Theorem 1), so every link scores its per-link optimum under one shift per job.
loopy candidate
    Its Affinity graph has a cycle (:mod:`placement.cassini.affinity`). The paper discards
    it (``loops="discard"``). Our default ``loops="fallback"`` keeps it: BFS still follows a
    spanning forest of the graph (the per-link constraints of non-tree edges are what a
    loop cannot honour), then a *repair* by coordinate descent on the integer time grid
    moves one job of a loopy component at a time to the shift, on the component's time
    lattice, that maximizes the mean score of its links, until no move improves. The
    candidate is then ranked by the reference score of those shifts, which is
    achievable, like the loop-free candidates' mean per-link optimum.
ranking (Algorithm 2)
    Candidates sorted by decreasing mean shared-link score (ties: loop-free first, then
    input order); the top one gets the BFS (or fallback) shifts.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import networkx as nx
import numpy as np
from placement.solvers.rotation import link_circle, search_link

from placement.cassini.affinity import affinity_graph, has_loop, job_node
from placement.cassini.evaluation import evaluate, link_score
from placement.cassini.instance import CassiniInstance, CassiniSolution, lcm
from placement.result import SolveResult, Status

__all__ = ["LinkOptimum", "link_optima", "bfs_shifts", "repair_shifts", "rank_candidates", "solve"]


@dataclass
class LinkOptimum:
    jobs: tuple[str, ...]
    shifts: dict[str, int]      # t_j^l on the integer grid (Eq. 5)
    circle_score: float         # score on the angle grid
    score: float                # reference (integer-grid) score of the shifts
    n_angles: int
    mode: str
    faithful: bool
    method: str


#: per-link optima by content (:func:`_optimum_key`): a link's optimum is a function of its jobs'
#: names and profiles, its capacity, the instance's angle grid and the search's options alone, so
#: rankings that see the same link set again (the candidates of one ranking share most links, and
#: consecutive rankings most of their jobs) reuse it; cleared when it reaches the limit
_OPTIMA: dict[tuple, LinkOptimum] = {}
OPTIMA_LIMIT = 50_000


def _optimum_key(inst: CassiniInstance, lk: str, names, method: str, seed: int, refine: bool) -> tuple:
    jobs = tuple((n, inst.job[n].iteration_time, inst.job[n].phases) for n in names)
    return (jobs, float(inst.topology.capacity[lk]), inst.precision_deg, inst.max_angles, method, seed, refine)


def link_optima(inst: CassiniInstance, candidate: str, method: str = "auto", seed: int = 0,
                refine: bool = True) -> dict[str, LinkOptimum]:
    """Per-link optimum of every shared link of a candidate (Algorithm 2 lines 17-22); each link
    solved once per content (:data:`_OPTIMA`; the same floats as solving it again)."""
    out = {}
    cap = inst.topology.capacity
    for lk, names in inst.shared_links(candidate).items():
        key = _optimum_key(inst, lk, names, method, seed, refine)
        hit = _OPTIMA.get(key)
        if hit is None:
            circ = link_circle(inst, lk, names, refine=refine)
            rot, sc, used = search_link(circ, method=method, seed=seed)
            sh = circ.shifts(rot)
            hit = LinkOptimum(names, dict(zip(names, sh, strict=True)), sc,
                              link_score([inst.job[n] for n in names], sh, cap[lk]),
                              circ.n_angles, circ.mode, circ.faithful, used)
            if len(_OPTIMA) >= OPTIMA_LIMIT:
                _OPTIMA.clear()
            _OPTIMA[key] = hit
        out[lk] = LinkOptimum(hit.jobs, dict(hit.shifts), hit.circle_score, hit.score, hit.n_angles, hit.mode,
                              hit.faithful, hit.method)
    return out


def bfs_shifts(link_jobs: Mapping[str, Sequence[str]], link_shifts: Mapping[str, Mapping[str, int]],
               iteration: Mapping[str, int], seed: int = 0, start: str | None = None) -> dict[str, int]:
    """Algorithm 1: one shift per job of the Affinity graph, component by component.

    ``link_shifts[l][j]`` is the edge weight ``t_j^l``. The reference job of a component is
    ``start`` when it lies there, else a seeded random job (line 7). Jobs outside the graph
    get no entry.
    """
    g = affinity_graph(link_jobs)
    rng = np.random.default_rng(seed)
    shifts: dict[str, int] = {}
    comps = sorted(sorted(n[1] for n in comp if n[0] == "job") for comp in nx.connected_components(g))
    for jobs in comps:
        root = start if start in jobs else jobs[int(rng.integers(len(jobs)))]
        shifts[root] = 0
        q = deque([root])
        while q:
            j = q.popleft()
            for lnode in sorted(g.neighbors(job_node(j))):
                lk = lnode[1]
                for knode in sorted(g.neighbors(lnode)):
                    k = knode[1]
                    if k not in shifts:
                        shifts[k] = (shifts[j] - link_shifts[lk][j] + link_shifts[lk][k]) % iteration[k]
                        q.append(k)
    return shifts


#: a job's demand at every lattice shift over a perimeter (:func:`_lattice_rows`), by (profile, perimeter,
#: step), and the number of values held (emptied past :data:`ROWS_LIMIT`)
_ROWS: dict[tuple, list[np.ndarray]] = {}
_ROWS_HELD = [0]
ROWS_LIMIT = 1 << 23


#: a job's demand over a perimeter at one shift (:func:`_shifted`), by (profile, perimeter, shift), and
#: the number of values held (emptied past :data:`ROWS_LIMIT`)
_SHIFTED: dict[tuple, np.ndarray] = {}
_SHIFTED_HELD = [0]


def _shifted(job, p: int, s: int) -> np.ndarray:
    """``job.demand[(t - s) % iteration]`` for ``t = 0 .. p-1`` (read-only; the row
    :func:`placement.cassini.evaluation.link_demand` sums), cached by the job's profile, ``p`` and ``s``."""
    key = (job.iteration_time, job.phases, p, s)
    row = _SHIFTED.get(key)
    if row is None:
        row = job.demand[(np.arange(p, dtype=np.int64) - int(s)) % job.iteration_time]
        row.setflags(write=False)
        if _SHIFTED_HELD[0] + p > ROWS_LIMIT:
            _SHIFTED.clear()
            _SHIFTED_HELD[0] = 0
        _SHIFTED[key] = row
        _SHIFTED_HELD[0] += p
    return row


#: :func:`_link_score` by content (the jobs' profiles and shifts in link order, the capacity)
_SCORES: dict[tuple, float] = {}


def _link_score(jobs, shifts, capacity: float) -> float:
    """:func:`placement.cassini.evaluation.link_score` (the same operations in the same order, so the
    same float) on the cached shifted rows, once per content (:data:`_SCORES`)."""
    key = (tuple((j.iteration_time, j.phases, s) for j, s in zip(jobs, shifts, strict=True)), float(capacity))
    got = _SCORES.get(key)
    if got is None:
        p = lcm(j.iteration_time for j in jobs)
        d = np.zeros(p)
        for job, s in zip(jobs, shifts, strict=True):
            d += _shifted(job, p, s)
        got = 1.0 - float(np.maximum(d - capacity, 0.0).sum()) / (len(d) * capacity)
        if len(_SCORES) >= EXCESS_LIMIT:
            _SCORES.clear()
        _SCORES[key] = got
    return got


def _lattice_rows(job, p: int, step: int, cand: np.ndarray, t: np.ndarray, rows: int) -> list[np.ndarray]:
    """``job``'s demand at times ``t`` (``0 .. p-1``) shifted by each lattice shift ``cand``, in blocks
    of ``rows`` shifts: a function of the job's profile, ``p`` and ``step`` alone, so the repairs of
    every candidate and ranking where the job sits on a link of that perimeter share it (read-only)."""
    key = (job.iteration_time, job.phases, p, step)
    got = _ROWS.get(key)
    if got is None:
        got = [job.demand[(t[None, :] - cand[lo:lo + rows, None]) % job.iteration_time]
               for lo in range(0, len(cand), rows)]
        for a in got:
            a.setflags(write=False)
        if _ROWS_HELD[0] + len(cand) * p > ROWS_LIMIT:
            _ROWS.clear()
            _ROWS_HELD[0] = 0
        _ROWS[key] = got
        _ROWS_HELD[0] += len(cand) * p
    return got


#: one link's excess at every lattice shift of a moving job (the repair's cost term), by content
#: (:func:`repair_shifts`), emptied past :data:`EXCESS_LIMIT` entries
_EXCESS: dict[tuple, np.ndarray] = {}
EXCESS_LIMIT = 200_000


def repair_shifts(inst: CassiniInstance, candidate: str, shifts: dict[str, int], jobs: Sequence[str],
                  start: Sequence[str] | None = None, max_moves: int = 10_000) -> tuple[dict[str, int], int]:
    """Coordinate descent on the integer grid over ``jobs`` (the loopy fallback): ``(shifts, moves)``.

    A move puts one job at the lattice shift maximizing the mean score of the shared links
    it traverses, the others fixed; the lattice step is the GCD of the jobs' phase
    boundaries and current shifts, on which a single job's best shift lies (breakpoints of
    a piecewise linear excess). Work-list order: the jobs of ``start`` (default: all of
    ``jobs``) first; when a job moves, the jobs sharing a link with it are queued again.
    Stops when the list is empty (no single move improves) or after ``max_moves``.
    Never lowers the candidate score.
    """
    shared = inst.shared_links(candidate)
    cap = inst.topology.capacity
    allowed = set(jobs)
    on: dict[str, list[str]] = {}
    for lk, names in shared.items():
        for n in names:
            on.setdefault(n, []).append(lk)
    step = 0
    for n in jobs:
        for b in inst.job[n].boundaries[1:]:
            step = math.gcd(step, b)
        step = math.gcd(step, shifts.get(n, 0))
    step = max(step, 1)
    shifts = dict(shifts)
    per = {lk: inst.perimeter(names) for lk, names in shared.items()}
    queue = deque(sorted(set(start if start is not None else jobs) & allowed))
    queued = set(queue)
    moves = 0
    while queue and moves < max_moves:
        n = queue.popleft()
        queued.discard(n)
        job = inst.job[n]
        cand = np.arange(0, job.iteration_time, step, dtype=np.int64)
        cost = np.zeros(len(cand))
        for lk in on.get(n, []):
            p = per[lk]
            # the link's excess at every lattice shift of n: a function of n's profile, the others'
            # profiles and shifts (in link order), the perimeter, the step and the capacity alone
            key = ((job.iteration_time, job.phases), p, step, float(cap[lk]),
                   tuple((inst.job[m].iteration_time, inst.job[m].phases, shifts.get(m, 0))
                         for m in shared[lk] if m != n))
            part = _EXCESS.get(key)
            if part is None:
                t = np.arange(p, dtype=np.int64)
                base = np.zeros(p)
                for m in shared[lk]:
                    if m != n:
                        base += _shifted(inst.job[m], p, shifts.get(m, 0))
                rows = max(1, (1 << 22) // p)  # at most ~4M demand values at once
                mines = _lattice_rows(job, p, step, cand, t, rows)
                part = np.concatenate([np.maximum(base[None, :] + mine - cap[lk], 0.0).sum(axis=1) / (p * cap[lk])
                                       for mine in mines])
                part.setflags(write=False)
                if len(_EXCESS) >= EXCESS_LIMIT:
                    _EXCESS.clear()
                _EXCESS[key] = part
            cost += part
        cur = shifts.get(n, 0) // step  # the step divides every current shift
        best = int(np.argmin(cost))
        if cost[best] < cost[cur] - 1e-12:
            shifts[n] = int(cand[best])
            moves += 1
            for lk in on.get(n, []):
                for m in shared[lk]:
                    if m != n and m in allowed and m not in queued:
                        queue.append(m)
                        queued.add(m)
    return shifts, moves


def _candidate_plan(inst: CassiniInstance, name: str, loops: str, method: str, seed: int) -> dict:
    shared = inst.shared_links(name)
    cap = inst.topology.capacity
    loopy = has_loop(shared)
    row = {"candidate": name, "loop_free": not loopy, "shared_links": len(shared), "score": None,
           "shifts": None, "per_link_optimum_mean": None, "repair_moves": 0}
    if loopy and loops == "discard":
        return row
    opt = link_optima(inst, name, method=method, seed=seed)
    row["per_link_optimum_mean"] = float(np.mean([o.score for o in opt.values()])) if opt else 1.0
    row["circle_error_max"] = max((abs(o.circle_score - o.score) for o in opt.values()), default=0.0)
    row["coarse_links"] = sum(o.mode == "coarse" for o in opt.values())
    iters = {j.name: j.iteration_time for j in inst.jobs}
    shifts = bfs_shifts(shared, {lk: o.shifts for lk, o in opt.items()}, iters, seed=seed)
    if loopy:
        g = affinity_graph(shared)
        loop_jobs = set()
        for comp in nx.connected_components(g):
            sub = g.subgraph(comp)
            if sub.number_of_edges() >= sub.number_of_nodes():
                loop_jobs |= {n[1] for n in comp if n[0] == "job"}
        # Only jobs on links that BFS left below their per-link optimum can gain by moving.
        broken = [lk for lk, o in opt.items() if lk in shared and
                  _link_score([inst.job[n] for n in shared[lk]], [shifts[n] for n in shared[lk]],
                              inst.topology.capacity[lk]) < o.score - 1e-12]
        start = sorted({n for lk in broken for n in shared[lk]} & loop_jobs)
        shifts, row["repair_moves"] = repair_shifts(inst, name, shifts, sorted(loop_jobs), start=start)
    full = {j.name: int(shifts.get(j.name, 0)) for j in inst.jobs}
    row["shifts"] = full
    # a loopy candidate's reference score: evaluate(inst, sol).score, the mean of its shared links'
    # integer-grid scores (the same floats, without the iteration times it also computes)
    row["score"] = (float(np.mean([_link_score([inst.job[n] for n in names], [full[n] for n in names], cap[lk])
                                   for lk, names in shared.items()])) if shared else 1.0) if loopy \
        else row["per_link_optimum_mean"]
    row["link_optima"] = opt
    return row


def rank_candidates(inst: CassiniInstance, loops: Literal["fallback", "discard"] = "fallback",
          method: Literal["auto", "exhaustive", "local"] = "auto",
                    seed: int = 0, time_limit: float | None = None) -> list[dict]:
    """Algorithm 2: score every candidate and sort them (see the module docstring).

    Rows carry ``candidate``, ``loop_free``, ``score`` (``None`` for discarded loopy
    candidates, which sort last), ``shifts`` and the per-link optima. With ``time_limit``
    (seconds), candidates left when it runs out are not scored (``skipped``, sorted last);
    the first candidate is always scored.
    """
    if loops not in ("fallback", "discard"):
        raise ValueError(f"loops must be 'fallback' or 'discard', got {loops!r}")
    t0 = time.perf_counter()
    rows = []
    for c in inst.candidates:
        if rows and time_limit is not None and time.perf_counter() - t0 > time_limit:
            rows.append({"candidate": c.name, "loop_free": not has_loop(inst.shared_links(c.name)), "score": None,
                         "shifts": None, "per_link_optimum_mean": None, "repair_moves": 0, "skipped": True,
                         "shared_links": len(inst.shared_links(c.name))})
            continue
        rows.append(_candidate_plan(inst, c.name, loops, method, seed))
    order = {c.name: i for i, c in enumerate(inst.candidates)}
    rows.sort(key=lambda r: (r["score"] is None, -(r["score"] or 0.0), not r["loop_free"], order[r["candidate"]]))
    return rows


def solve(inst: CassiniInstance, seed: int = 0, loops: Literal["fallback", "discard"] = "fallback",
          method: Literal["auto", "exhaustive", "local"] = "auto",
          time_limit: float | None = None) -> SolveResult:
    """CASSINI module (Algorithm 2 with Algorithm 1): top candidate and unique time shifts.

    Statuses: ``feasible``; ``time_limit`` (with the best scored candidate) when
    ``time_limit`` cut the ranking short; ``infeasible`` (``stats["proof"] = False``: not a proof)
    when ``loops="discard"`` and every scored candidate has a loop.
    """
    t0 = time.perf_counter()
    rows = rank_candidates(inst, loops=loops, method=method, seed=seed, time_limit=time_limit)
    table = [{k: r.get(k) for k in ("candidate", "loop_free", "score", "per_link_optimum_mean",
                                     "shared_links", "repair_moves")} for r in rows]
    top = rows[0]
    if top["score"] is None:
        return SolveResult(Status.INFEASIBLE, "affinity", None, None, None, time.perf_counter() - t0,
                           stats={"proof": False, "ranking": table},
                           message="every candidate has a loop in its Affinity graph", sense="max")
    sol = CassiniSolution(top["candidate"], tuple(top["shifts"].items()))
    ev = evaluate(inst, sol)
    opt = top["link_optima"]
    stats = {"ranking": table, "candidate": top["candidate"], "loop_free": top["loop_free"],
             "per_link_optimum_mean": top["per_link_optimum_mean"],
             "links_at_per_link_optimum": sum(abs(ev.link_scores[lk] - o.score) <= 1e-9 for lk, o in opt.items()),
             "shared_links": len(opt), "circle_error_max": top.get("circle_error_max", 0.0),
             "coarse_links": top.get("coarse_links", 0),
             "loopy_candidates": sum(not r["loop_free"] for r in rows),
             "skipped_candidates": sum(bool(r.get("skipped")) for r in rows),
             "methods": sorted({o.method for o in opt.values()}),
             "angles": sorted({o.n_angles for o in opt.values()})}
    msg = "loop-free: Theorem 1 shifts" if top["loop_free"] else "loopy: spanning-forest BFS + repair fallback"
    status = Status.TIME_LIMIT if stats["skipped_candidates"] else Status.FEASIBLE
    return SolveResult(status, "affinity", sol, ev.score, None, time.perf_counter() - t0,
                       stats=stats, message=msg, sense="max")
