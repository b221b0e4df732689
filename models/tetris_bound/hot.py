"""A closed-form lower bound on MAST Tetris (Figure 4, expressions (1), (2), (7), (8)) from hot tables, in numpy.

For every instance size, in seconds: no LP. The argument, per table ``t`` with home ``rho``
in some optimal placement:

* every ML job reading ``t`` is in ``rho`` or NULL (R(job) of an ML job is the common
  home of all its tables, §3 / the reference evaluation): a single-table reader is in
  ``rho``; a multi-table reader is in ``rho`` (its GPU-hours add to ``D[rho,g,k]``) or
  NULL (expression (1) counts all its tables' bytes, ``w1 * size_j``);
* each ML job is charged to one table only (the one of its tables with the most
  readers), so the charged job sets are disjoint and their cross-region bytes add up;
* the (7) x (8) term of cell ``(rho, g, k)`` is at least ``c * w_k * (d - s)_+^2`` where
  ``d`` is the share of the charged jobs placed there, ``s = S[rho,g]/TS[g]`` and ``c =
  sigmoid(max(0, single-reader GPU-hours of g - S[rho,g]))`` (every other job only adds
  demand, and both factors are non-decreasing in it above ``s``); ``(x - s)_+^2`` is
  superadditive on ``x >= 0`` and the sigmoid factor of the sum is at least each part's,
  so tables sharing a region cost at least the sum of their separate terms; every other
  term of (1)-(3) is non-negative and dropped;
* the choice "placed or NULL" of the multi-table readers is relaxed to a fraction in
  [0, 1] (a continuous knapsack with a convex penalty, solved exactly below).

So ``sum_t min_rho C_t(rho)`` is a valid lower bound, with ``C_t(rho)`` the relaxed
minimum above; the quota, storage, CPU, (6), analytics jobs, (9) and the other tables'
readers are all dropped (each only raises the optimum). It is weak where no table is hot
and strong where a few tables carry many jobs (MAST's Zipf popularity, Figure 3).
"""

from __future__ import annotations

import time

import numpy as np

from placement.result import SolveResult, Status
from placement.tetris import TetrisInstance, sigmoid

__all__ = ["solve", "table_costs"]

REL_SAFETY = 1e-9


def _group_min(size: np.ndarray, sigma: np.ndarray, e: float, s: float, A: float, w1: float) -> float:
    """``min_{theta in [0,1]^n} w1 * sum size_j (1 - theta_j) + A * (e + sum theta_j sigma_j - s)_+^2``, exactly.

    The saved bytes for a placed share ``D`` are concave piecewise linear (jobs by bytes per
    share, descending: the fractional knapsack), the penalty convex; the minimum is at the
    clipped stationary point of one segment, so every segment's is evaluated.
    """
    free = sigma <= 0
    size, sigma = size[~free].astype(float), sigma[~free]   # jobs without demand are placed for free
    if not len(size):
        return 0.0
    if A <= 0:
        return 0.0
    order = np.argsort(-(size / sigma), kind="stable")
    size, sigma = size[order], sigma[order]
    c_hi = np.cumsum(sigma)
    c_lo = c_hi - sigma
    z_lo = np.cumsum(size) - size       # bytes saved at the start of each segment
    slope = size / sigma
    total = float(size.sum())
    # stationary point of w1*(total - z_lo - slope*(D - c_lo)) + A*(e + D - s)^2 on the segment
    D = np.clip(s - e + w1 * slope / (2.0 * A), c_lo, c_hi)
    cost = w1 * (total - z_lo - slope * (D - c_lo)) + A * np.maximum(0.0, e + D - s) ** 2
    # and the segment ends (where the penalty's kink at e + D = s may sit)
    Dk = np.clip(s - e, c_lo, c_hi)
    cost_k = w1 * (total - z_lo - slope * (Dk - c_lo)) + A * np.maximum(0.0, e + Dk - s) ** 2
    return float(min(cost.min(), cost_k.min(), w1 * total + A * max(0.0, e - s) ** 2))


def table_costs(inst: TetrisInstance, tables: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(C, owner)``: ``C[i, rho]`` the relaxed cost of table ``tables[i]`` homed at ``rho`` (module
    docstring) and, per job, the table it is charged to (-1 for analytics jobs)."""
    A_ = inst.arrays
    R = inst.n_regions
    w1, w2 = float(inst.w1), float(inst.w2)
    ml = A_.job_ml.astype(bool)
    lens = np.diff(A_.job_ptr)
    readers = np.diff(A_.tab_ptr)
    # each ML job charged to its table with the most readers (ties: the lowest index)
    key = readers[A_.job_tab] * (A_.job_tab.max(initial=0) + 1) - A_.job_tab
    best_entry = np.full(len(lens), -1, dtype=np.int64)
    if len(key):
        order = np.lexsort((-key, A_.entry_job))   # per job, the entry with the largest key first
        first = np.ones(len(order), dtype=bool)
        first[1:] = A_.entry_job[order][1:] != A_.entry_job[order][:-1]
        best_entry[A_.entry_job[order][first]] = order[first]
    owner = np.where(ml & (best_entry >= 0), A_.job_tab[np.maximum(best_entry, 0)], -1)
    TD = A_.total_demand.astype(float)
    TS = A_.total_supply.astype(float)
    s_share = np.where(TS[None, :] > 0, A_.supply / np.where(TS > 0, TS, 1.0)[None, :], 0.0)   # [R, G]
    if tables is None:
        tables = np.unique(owner[owner >= 0])
    C = np.zeros((len(tables), R))
    jobs_by_owner = np.argsort(owner, kind="stable")
    own_sorted = owner[jobs_by_owner]
    for i, t in enumerate(np.asarray(tables).tolist()):
        lo, hi = np.searchsorted(own_sorted, [t, t + 1])
        js = jobs_by_owner[lo:hi]
        if not len(js):
            continue
        g, k = A_.job_gpu[js], A_.job_prio[js]
        sigma = A_.job_gh[js] / np.where(TD > 0, TD, 1.0)[g, k]
        single = lens[js] == 1
        # GPU-hours of the single-table readers per type: forced into rho, they fix the sigmoid floor
        single_gh = np.bincount(g[single], weights=A_.job_gh[js][single], minlength=TD.shape[0])
        for rho in range(R):
            c = sigmoid(np.maximum(0.0, single_gh - A_.supply[rho]))     # [G]
            total = 0.0
            for gk in np.unique(g * TD.shape[1] + k).tolist():
                gg, kk = divmod(gk, TD.shape[1])
                if TD[gg, kk] <= 0:
                    continue
                sel = (g == gg) & (k == kk)
                e = float(sigma[sel & single].sum())
                multi = sel & ~single
                Aw = w2 * float(c[gg]) * float(A_.prio_w[kk])
                total += _group_min(A_.job_size[js][multi], sigma[multi], e, float(s_share[rho, gg]), Aw, w1)
            C[i, rho] = total
    return C, owner


def solve(inst: TetrisInstance, *, max_tables: int | None = 2000, time_limit: float | None = None,
          seed: int = 0) -> SolveResult:
    """The hot-table bound (module docstring) as a ``SolveResult``.

    ``max_tables``: only the tables with the most charged ML GPU-hours share get a term
    (dropping the others' non-negative terms keeps the bound valid); ``None``: all.
    ``time_limit`` and ``seed`` are accepted as every solver's keywords (unused: the
    computation is closed-form and deterministic).
    """
    del seed, time_limit
    t0 = time.perf_counter()
    A_ = inst.arrays
    _, owner = table_costs(inst, np.zeros(0, dtype=np.int64))
    TD = A_.total_demand.astype(float)
    ml = np.flatnonzero(owner >= 0)
    share = A_.job_gh[ml] / np.where(TD > 0, TD, 1.0)[A_.job_gpu[ml], A_.job_prio[ml]]
    weight = np.bincount(owner[ml], weights=share, minlength=inst.n_tables)
    cand = np.flatnonzero(weight > 0)
    if max_tables is not None and len(cand) > max_tables:
        cand = cand[np.argsort(-weight[cand], kind="stable")[:max_tables]]
    C, _ = table_costs(inst, cand)
    per_table = C.min(axis=1) if len(cand) else np.zeros(0)
    raw = float(per_table.sum())
    bound = max(0.0, raw - REL_SAFETY * max(1.0, abs(raw)))
    wall = time.perf_counter() - t0
    top = np.argsort(-per_table)[:10]
    stats = {"tables": len(cand), "instance": inst.name,
             "top_tables": [[int(cand[i]), float(per_table[i])] for i in top],
             "positive_terms": int((per_table > 0).sum())}
    return SolveResult(Status.OPTIMAL, "tetris-bound-hot", objective=None, bound=bound, wall_time_s=wall,
                       stats=stats)
