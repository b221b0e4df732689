"""The CASSINI hot paths as they were before they were made faster (reference implementations,
kept verbatim apart from their names): the test of sameness (tests/cassini/test_cassini_fast_paths.py)
compares the fast ones with them on generated scenes, and ``placement bench cassini``'s speed
section (:mod:`.cassini_speed`) times both on the same input.

- :func:`rank_candidates_reference`: Algorithm 2 without the per-link optimum cache
  (:data:`placement.solvers.affinity._OPTIMA`), with the repair rebuilding the moving job's demand
  rows on every visit and a loopy candidate's score from the full :func:`evaluate` (iteration
  times included);
- :func:`placement_bound_reference`: the bound reading each job's profile at every interval.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Sequence
from typing import Literal

import networkx as nx
import numpy as np

from placement.solvers.affinity import LinkOptimum, bfs_shifts
from placement.solvers.rotation import link_circle, search_link

from ...cassini.affinity import affinity_graph, has_loop
from ...cassini.catalogue import PROFILES, profile_of
from ...cassini.evaluation import evaluate, link_score
from ...cassini.instance import CassiniInstance, CassiniSolution
from ...sim.link_metrics import _clipped_intervals
from ...sim.links import LinkSharing
from ...sim.log import EventLog
from ...sim.trace import Trace

__all__ = ["rank_candidates_reference", "placement_bound_reference"]


def link_optima_reference(inst: CassiniInstance, candidate: str, method: str = "auto", seed: int = 0,
                refine: bool = True) -> dict[str, LinkOptimum]:
    """Per-link optimum of every shared link of a candidate (Algorithm 2 lines 17-22)."""
    out = {}
    cap = inst.topology.capacity
    for lk, names in inst.shared_links(candidate).items():
        circ = link_circle(inst, lk, names, refine=refine)
        rot, sc, used = search_link(circ, method=method, seed=seed)
        sh = circ.shifts(rot)
        out[lk] = LinkOptimum(names, dict(zip(names, sh, strict=True)), sc,
                              link_score([inst.job[n] for n in names], sh, cap[lk]),
                              circ.n_angles, circ.mode, circ.faithful, used)
    return out


def repair_shifts_reference(inst: CassiniInstance, candidate: str, shifts: dict[str, int], jobs: Sequence[str],
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
            p = inst.perimeter(shared[lk])
            t = np.arange(p, dtype=np.int64)
            base = np.zeros(p)
            for m in shared[lk]:
                if m != n:
                    base += inst.job[m].demand[(t - shifts.get(m, 0)) % inst.job[m].iteration_time]
            rows = max(1, (1 << 22) // p)  # at most ~4M demand values at once
            for lo in range(0, len(cand), rows):
                mine = job.demand[(t[None, :] - cand[lo:lo + rows, None]) % job.iteration_time]
                cost[lo:lo + rows] += np.maximum(base[None, :] + mine - cap[lk], 0.0).sum(axis=1) / (p * cap[lk])
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


def candidate_plan_reference(inst: CassiniInstance, name: str, loops: str, method: str, seed: int) -> dict:
    shared = inst.shared_links(name)
    loopy = has_loop(shared)
    row = {"candidate": name, "loop_free": not loopy, "shared_links": len(shared), "score": None,
           "shifts": None, "per_link_optimum_mean": None, "repair_moves": 0}
    if loopy and loops == "discard":
        return row
    opt = link_optima_reference(inst, name, method=method, seed=seed)
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
                  link_score([inst.job[n] for n in shared[lk]], [shifts[n] for n in shared[lk]],
                             inst.topology.capacity[lk]) < o.score - 1e-12]
        start = sorted({n for lk in broken for n in shared[lk]} & loop_jobs)
        shifts, row["repair_moves"] = repair_shifts_reference(inst, name, shifts, sorted(loop_jobs), start=start)
    full = {j.name: int(shifts.get(j.name, 0)) for j in inst.jobs}
    sol = CassiniSolution(name, tuple(full.items()))
    row["shifts"] = full
    row["score"] = evaluate(inst, sol).score if loopy else row["per_link_optimum_mean"]
    row["link_optima"] = opt
    return row


def rank_candidates_reference(inst: CassiniInstance, loops: Literal["fallback", "discard"] = "fallback",
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
        rows.append(candidate_plan_reference(inst, c.name, loops, method, seed))
    order = {c.name: i for i, c in enumerate(inst.candidates)}
    rows.sort(key=lambda r: (r["score"] is None, -(r["score"] or 0.0), not r["loop_free"], order[r["candidate"]]))
    return rows



def placement_bound_reference(trace: Trace, log: EventLog, links: LinkSharing, start: float = -math.inf,
                  end: float = math.inf, only=None) -> dict[str, float]:
    """The per-iteration bound on a run's own placements: how far the run is from the best any
    time shift could reach *on these placements* (for Themis, the most a shift could gain on
    Themis's placements, formerly read as CASSINI's "ceiling", which it is not: CASSINI changes
    placements; for Th+CASSINI, how far its shifts are from holding), from its log: each interval's job iteration cannot be shorter than its ideal one, nor shorter than
    ``ideal * L`` with ``L`` the largest offered mean load over capacity of its links (a link
    cannot carry more than its capacity on average; equal stretching assumed). Over the run's
    own iterations in ``[start, end]`` (weights: iterations run at the logged factor):
    ``iteration_ms_mean``, ``bound_ms_mean``, ``ideal_ms_mean``; ``ceiling`` = run / bound and
    ``over_ideal`` = run / ideal. ``only`` (job ids) restricts the iterations measured (every
    running job still loads the links)."""
    cap = links.topology.capacity
    sw = sit = sb = sid = 0.0
    for t0, t1, run, factor in _clipped_intervals(trace, log, start, end):
        load: dict[str, float] = {}
        on = {}
        for jid, (job, gpus, _) in run.items():
            if job.model in PROFILES:
                on[jid] = links.links(gpus)
                bw = profile_of(job.model, jid).mean_bandwidth
                for lk in on[jid]:
                    load[lk] = load.get(lk, 0.0) + bw
        for jid, lks in on.items():
            if only is not None and jid not in only:
                continue
            ideal = PROFILES[run[jid][0].model][1]
            f = factor.get(jid, 1.0)
            it = ideal / f
            w = (t1 - t0) * 1000.0 / it
            bound = ideal * max([1.0] + [load[lk] / cap[lk] for lk in lks])
            sw += w
            sit += w * it
            sb += w * min(bound, it)
            sid += w * ideal
    if not sw:
        return {"iteration_ms_mean": math.nan, "bound_ms_mean": math.nan, "ideal_ms_mean": math.nan,
                "ceiling": math.nan, "over_ideal": math.nan}
    return {"iteration_ms_mean": sit / sw, "bound_ms_mean": sb / sw, "ideal_ms_mean": sid / sw,
            "ceiling": sit / sb, "over_ideal": sit / sid}
