"""Per-link rotation search (CASSINI Table 1) and the paper's "simple approach" to unique shifts.

Terms
-----
rotation ``k_j``
    Slots by which job j's unified circle is turned, ``0 <= k_j < K_j`` (Eq. 4), see
    :mod:`placement.cassini.circle`. Job 0 of a link is fixed at 0 when every ``K_j``
    spans exactly one iteration (turning all circles together leaves the score unchanged).
exhaustive search
    Every combination of rotations, vectorized with numpy in chunks: the demand of a
    combination is a sum of rows of the per-job rotated-slot matrices. Exact on the
    angle grid; equal to the integer-grid optimum when the grid is faithful.
local search
    Beyond ``exhaustive_limit`` combinations: greedy insertion (jobs by decreasing mean
    bandwidth, each at its best rotation against those already placed), then coordinate
    descent (each job moved to its best rotation against all others, vectorized over
    its ``K_j`` rotations, until no move improves), repeated from ``restarts`` seeded
    random starts (stopping early once no excess is left); the best is kept. Never
    better than exhaustive search. ``auto`` searches exhaustively up to 4096 combinations
    (two jobs always at 5 degrees), locally beyond.

:func:`solve` is the CLI solver ``rotation``: every shared link of every candidate is
solved independently, candidates are ranked by their mean per-link circle score,
and each job of the top candidate takes the per-link shift of one of its links
chosen at random (the "simple approach" of §4.1, which the paper shows cancels
the benefit; the ``affinity`` solver is the paper's answer).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Literal

import numpy as np

from placement.cassini.circle import UnifiedCircle, unified_circle
from placement.cassini.evaluation import evaluate, link_score
from placement.cassini.instance import CassiniInstance, CassiniSolution
from placement.result import SolveResult, Status

__all__ = ["search_link", "exhaustive", "local_search", "link_circle", "solve"]


def _excess(demand: np.ndarray, capacity: float) -> np.ndarray:
    return np.maximum(demand - capacity, 0.0).sum(axis=-1)


def _fix_first(c: UnifiedCircle) -> bool:
    """Turning all circles together is a symmetry when each K_j covers exactly one iteration."""
    return all(c.n_angles * j.iteration_time % c.perimeter == 0 for j in c.jobs)


def exhaustive(c: UnifiedCircle, chunk: int = 1 << 15) -> tuple[list[int], float, int]:
    """Vectorized exhaustive search over all rotations: ``(rotations, circle score, combinations)``.

    Ties go to the lexicographically smallest rotation vector.
    """
    n = len(c.jobs)
    mats = [c.rolled(j) for j in range(n)]
    free = list(range(1, n)) if _fix_first(c) else list(range(n))
    base = c.slots[0].copy() if free and free[0] == 1 else np.zeros(c.n_angles)
    if n == 1 and _fix_first(c):
        return [0], c.score([0]), 1
    sizes = [c.n_rotations[j] for j in free]
    total = math.prod(sizes)
    best_val, best_idx = np.inf, 0
    chunk = max(1, min(chunk, (1 << 22) // c.n_angles))  # at most ~4M demand values (32 MB) at once
    for start in range(0, total, chunk):
        flat = np.arange(start, min(total, start + chunk))
        ks = np.unravel_index(flat, sizes)
        dem = np.broadcast_to(base, (len(flat), c.n_angles)).copy()
        for j, k in zip(free, ks, strict=True):
            dem += mats[j][k]
        ex = _excess(dem, c.capacity)
        i = int(np.argmin(ex))
        if ex[i] < best_val - 1e-12:
            best_val, best_idx = float(ex[i]), int(flat[i])
    rot = [0] * n
    for j, k in zip(free, np.unravel_index(best_idx, sizes), strict=True):
        rot[j] = int(k)
    return rot, 1.0 - best_val / (c.n_angles * c.capacity), total


def _descend(c: UnifiedCircle, mats: list[np.ndarray], rot: list[int], movable: list[int]) -> tuple[list[int], float]:
    demand = c.demand(rot)
    cur = float(_excess(demand, c.capacity))
    improved = True
    while improved:
        improved = False
        for j in movable:
            others = demand - mats[j][rot[j]]
            ex = _excess(others[None, :] + mats[j], c.capacity)
            k = int(np.argmin(ex))
            if ex[k] < cur - 1e-12:
                rot[j], cur, demand = k, float(ex[k]), others + mats[j][k]
                improved = True
    return rot, cur


def local_search(c: UnifiedCircle, restarts: int = 4, seed: int = 0) -> tuple[list[int], float, int]:
    """Greedy insertion + coordinate descent with seeded restarts: ``(rotations, circle score, descents)``."""
    n = len(c.jobs)
    mats = [c.rolled(j) for j in range(n)]
    movable = list(range(1, n)) if _fix_first(c) else list(range(n))
    order = sorted(range(n), key=lambda j: -c.slots[j].mean())
    rot = [0] * n
    demand = np.zeros(c.n_angles)
    for j in order:
        if j in movable:
            rot[j] = int(np.argmin(_excess(demand[None, :] + mats[j], c.capacity)))
        demand += mats[j][rot[j]]
    best_rot, best = _descend(c, mats, rot, movable)
    rng = np.random.default_rng(seed)
    runs = 1
    for _ in range(restarts):
        if best <= 1e-12:  # no excess left: nothing can improve
            break
        runs += 1
        start = [0 if j not in movable else int(rng.integers(c.n_rotations[j])) for j in range(n)]
        r, v = _descend(c, mats, start, movable)
        if v < best - 1e-12:
            best_rot, best = list(r), v
    return best_rot, 1.0 - best / (c.n_angles * c.capacity), runs


def search_link(c: UnifiedCircle, method: Literal["auto", "exhaustive", "local"] = "auto", exhaustive_limit: int = 4096,
                restarts: int = 4, seed: int = 0) -> tuple[list[int], float, str]:
    """Best rotations of one link: ``(rotations, circle score, method used)``.

    ``method``: ``"exhaustive"``, ``"local"`` or ``"auto"`` (exhaustive when the number of
    combinations is at most ``exhaustive_limit``).
    """
    free = c.n_rotations[1:] if _fix_first(c) else c.n_rotations
    if method == "auto":
        method = "exhaustive" if math.prod(free) <= exhaustive_limit else "local"
    if method == "exhaustive":
        rot, score, _ = exhaustive(c)
    elif method == "local":
        rot, score, _ = local_search(c, restarts=restarts, seed=seed)
    else:
        raise ValueError(f"method must be 'auto', 'exhaustive' or 'local', got {method!r}")
    return rot, score, method


def link_circle(inst: CassiniInstance, link: str, jobs: Sequence[str], refine: bool = True) -> UnifiedCircle:
    """Unified circle of a link of an instance at the instance's precision."""
    return unified_circle([inst.job[n] for n in jobs], inst.topology.capacity[link], inst.precision_deg,
                          inst.max_angles, refine=refine)


def solve(inst: CassiniInstance, seed: int = 0, method: Literal["auto", "exhaustive", "local"] = "auto",
          time_limit: float | None = None) -> SolveResult:
    """Per-link rotations on every shared link; unique shifts by the §4.1 "simple approach".

    Returns ``feasible`` (a heuristic), or ``time_limit`` when ``time_limit`` seconds ran out
    before every candidate was ranked (the best ranked one is returned); ``stats`` holds per-candidate mean circle scores, the
    per-link optimum scores of the chosen candidate and the search methods used.
    """
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    ranked = []
    per_cand = {}
    errors: list[float] = []  # |circle score - integer-grid score| per solved link
    for c in inst.candidates:
        if per_cand and time_limit is not None and time.perf_counter() - t0 > time_limit:
            break  # candidates left are not ranked (status time_limit)
        links = {}
        for lk, names in inst.shared_links(c.name).items():
            circ = link_circle(inst, lk, names)
            rot, sc, used = search_link(circ, method=method, seed=seed)
            links[lk] = (dict(zip(names, circ.shifts(rot), strict=True)), sc, used)
            errors.append(abs(sc - link_score([inst.job[n] for n in names], circ.shifts(rot),
                                              inst.topology.capacity[lk])))
        per_cand[c.name] = links
        mean = float(np.mean([v[1] for v in links.values()])) if links else 1.0
        ranked.append((mean, c.name))
    ranked.sort(key=lambda x: -x[0])
    top = ranked[0][1]
    choices: dict[str, list[int]] = {}
    for shifts, _, _ in per_cand[top].values():
        for n, s in shifts.items():
            choices.setdefault(n, []).append(s)
    shifts = {j.name: (int(rng.choice(choices[j.name])) if j.name in choices else 0) for j in inst.jobs}
    sol = CassiniSolution(top, tuple((j.name, shifts[j.name]) for j in inst.jobs))
    ev = evaluate(inst, sol)
    link_opt = {}
    for lk, (sh, _sc, _) in per_cand[top].items():
        names = inst.shared_links(top)[lk]
        link_opt[lk] = link_score([inst.job[n] for n in names], [sh[n] for n in names],
                                  inst.topology.capacity[lk])
    status = Status.TIME_LIMIT if len(per_cand) < len(inst.candidates) else Status.FEASIBLE
    return SolveResult(status, "rotation", sol, ev.score, None, time.perf_counter() - t0,
                       stats={"ranking": [{"candidate": n, "mean_circle_score": s} for s, n in ranked],
                              "per_link_optimum_scores": link_opt,
                              "per_link_optimum_mean": float(np.mean(list(link_opt.values()))) if link_opt else 1.0,
                              "methods": sorted({v[2] for links in per_cand.values() for v in links.values()}),
                              "shared_links": len(link_opt), "circle_error_max": max(errors, default=0.0)},
                       message="unique shifts by the simple approach (random per-link pick, §4.1)", sense="max")
