"""The "forest" method of the Tetris lower bound: the Lagrangian decomposition with multi-table ML jobs
kept whole along a spanning forest of the tables, each tree's subproblem solved exactly.

MAST Figure 4, expressions (1)-(9). :mod:`placement.models.tetris_bound.lagrange` charges each
multi-table ML job to one table (its table with the most readers) at ``min(w1 size_j, price_j(rho))``
in that table's region ``rho``: with linear prices the job follows one of its tables and ignores the
others, which is what makes that bound weak (Tetris page: keeping ML jobs whole is the integrality
that lifts the LP most). Here the tables' block keeps a job's *pair* of tables together:

* the **table graph** has an edge ``{u, v}`` for every pair of tables a multi-table ML job reads
  (the job's owner -- its table with the most readers, as in :mod:`.lagrange` -- with each of its
  other tables; pairs without the owner would lose the dominance below), weighted
  by the bytes ``w1 size_j`` of the jobs reading both; a maximum-weight spanning forest of it
  (Kruskal through :func:`scipy.sparse.csgraph.minimum_spanning_tree`) is fixed once per instance;
* each multi-table ML job with a pair in the forest is charged to one such edge: if its two tables
  share the region ``h`` it costs ``min(w1 size_j, price_j(h))``, otherwise ``w1 size_j`` (NULL,
  expression (1) charges all its bytes). In every placement the job is in region ``h`` only if *all*
  its tables are there, and NULL otherwise, so this is at most its Lagrangian cost; the other jobs
  are charged as in :mod:`.lagrange` (at most their cost too). Every job is charged once;
* the tables' block is then a sum over the forest's trees of ``min over homes`` of unary terms (the
  :mod:`.lagrange` table costs: single readers' prices, the quota's, (6)'s, the stored share's and
  the own-overload term) plus one edge term per tree edge. A tree is solved **exactly** by dynamic
  programming from the leaves: the message of a child ``v`` to its parent's home ``h`` is
  ``min(U_v(h) + same_v(h), min_{h' != h} U_v(h') + null_v)``, O(R) per table with the two smallest
  ``U_v``; the leaves-up passes run per depth level, vectorized in numpy, and the minimizer is read
  back top-down (it gives the supergradient).

So for any multipliers the value is a lower bound of the optimum (weak duality, the same blocks as
:mod:`.lagrange` with a tables' block at most the true one), every evaluation is certified without a
solver (the DP is exact arithmetic up to rounding; the reported value carries :mod:`.lagrange`'s
1e-9 margin), and the block is at least :mod:`.lagrange`'s at the same multipliers (a job's edge term
is at least its owner-only term whenever its owner is on the edge, and the trees' minimum is over
the same homes). The ascent is :func:`.lagrange.solve`'s cutting-plane method. Work per evaluation is
O((T + jobs) R) plus one numpy step per depth level; memory as :mod:`.lagrange` plus a few ``[T, R]``
arrays.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components, minimum_spanning_tree

from placement.result import SolveResult, Status
from placement.tetris import TetrisInstance

from . import lagrange

__all__ = ["solve", "ForestDecomposition", "memory_estimate_mb"]


def memory_estimate_mb(inst: TetrisInstance) -> float:
    """:func:`.lagrange.memory_estimate_mb` plus the forest's ``[T, R]`` and pair arrays."""
    T, J, R = inst.n_tables, inst.n_jobs, inst.n_regions
    return lagrange.memory_estimate_mb(inst) + 8.0 * (6 * T * R + 2 * J * R + 20 * len(inst.arrays.job_tab)) / 2 ** 20


class ForestDecomposition(lagrange.Decomposition):
    """:class:`.lagrange.Decomposition` whose tables' block keeps multi-table ML jobs' pairs whole
    along a spanning forest (module docstring)."""

    def __init__(self, inst: TetrisInstance, alpha: float = 0.5, levels: int = lagrange.LEVELS, cpu: bool = False):
        super().__init__(inst, alpha=alpha, levels=levels, cpu=cpu)
        self._forest()

    def _forest(self) -> None:
        A, T = self.inst.arrays, self.T
        jm = self.jm
        n_m = len(jm)
        # (job position in jm, table) pairs, distinct
        lens = np.diff(A.job_ptr)[jm]
        pos = np.repeat(np.arange(n_m), lens)
        tab = A.job_tab[np.concatenate([np.arange(A.job_ptr[j], A.job_ptr[j + 1]) for j in jm])
                        if n_m else np.zeros(0, dtype=np.int64)].astype(np.int64)
        key = np.unique(pos * T + tab)
        pos, tab = key // T, key % T
        # each job's pairs (owner, other table): an edge term is then at least the owner-only term
        other = tab != self.m_own[pos]
        pj, pu, pv = pos[other], self.m_own[pos[other]], tab[other]
        lo, hi = np.minimum(pu, pv), np.maximum(pu, pv)
        w = self.m_null[pj] + 1e-12 * (1 + self.m_sig[pj])
        W = sp.coo_matrix((w, (lo, hi)), shape=(T, T)).tocsr()
        W.sum_duplicates()
        # maximum-weight spanning forest: Kruskal on a decreasing transform of the weight
        if W.nnz:
            D = W.copy()
            D.data = 1.0 / (1.0 + D.data)
            F = minimum_spanning_tree(D).tocoo()
            fu, fv = np.minimum(F.row, F.col), np.maximum(F.row, F.col)
        else:
            fu = fv = np.zeros(0, dtype=np.int64)
        E = len(fu)
        ekey = fu.astype(np.int64) * T + fv
        order = np.argsort(ekey)
        ekey_s = ekey[order]
        # each job: its heaviest pair in the forest, if any
        pkey = lo * T + hi
        at = np.searchsorted(ekey_s, pkey)
        inf = (at < E) & (ekey_s[np.minimum(at, max(E - 1, 0))] == pkey) if E else np.zeros(len(pkey), dtype=bool)
        pe = np.where(inf, order[np.minimum(at, max(E - 1, 0))], -1)
        wpair = W[lo, hi].A1 if len(lo) else np.zeros(0)
        sel = np.flatnonzero(inf)
        o = np.lexsort((-wpair[sel], pj[sel]))
        sel = sel[o]
        first = np.ones(len(sel), dtype=bool)
        first[1:] = pj[sel][1:] != pj[sel][:-1]
        sel = sel[first]
        self.f_job = pj[sel]                      # positions in jm of the jobs kept whole on an edge
        self.f_edge = pe[sel]
        on_edge = np.zeros(n_m, dtype=bool)
        on_edge[self.f_job] = True
        self.rest = np.flatnonzero(~on_edge)      # charged to their owner as in lagrange
        self.M_rest = sp.csr_matrix((np.ones(len(self.rest)), (self.m_own[self.rest], np.arange(len(self.rest)))),
                                    shape=(T, len(self.rest)))
        # root every tree (the lowest table of each component) and orient its edges: parent, depth
        adj = sp.coo_matrix((np.ones(2 * E), (np.r_[fu, fv], np.r_[fv, fu])), shape=(T, T)).tocsr()
        _, comp = connected_components(adj, directed=False)
        _, roots = np.unique(comp, return_index=True)
        parent = np.full(T, -1, dtype=np.int64)
        depth = np.full(T, -1, dtype=np.int64)
        depth[roots] = 0
        frontier, d = roots, 0
        while len(frontier):
            deg = np.diff(adj.indptr)[frontier]
            src = np.repeat(frontier, deg)
            nb = adj.indices[_gather(adj, frontier)]
            new = depth[nb] < 0
            nb, src = nb[new], src[new]
            depth[nb] = d + 1
            parent[nb] = src
            frontier, d = nb, d + 1
        self.parent, self.depth = parent, depth
        self.levels_ = [np.flatnonzero(depth == k) for k in range(int(depth.max(initial=0)) + 1)]
        # the edge of each forest edge's child: child = the endpoint whose parent is the other
        child = np.where(parent[fv] == fu, fv, fu)
        self.f_child = child[self.f_edge]         # per kept job, the child table of its edge
        self.f_u = parent[self.f_child]           # and its parent
        self.n_edges, self.n_kept = E, len(self.f_job)

    def _homes(self, C: np.ndarray, place: np.ndarray | None) -> tuple:
        """The forest's exact minimum (module docstring): (value, magnitude, home, job regions, placed)."""
        T, R = self.T, self.R
        same = np.zeros((T, R))
        nul = np.zeros(T)
        if place is not None and len(self.rest):
            C += np.asarray(self.M_rest @ np.minimum(self.m_null[self.rest, None], place[self.rest]))
        if place is not None and len(self.f_job):
            np.add.at(same, self.f_child, np.minimum(self.m_null[self.f_job, None], place[self.f_job]))
            np.add.at(nul, self.f_child, self.m_null[self.f_job])
        U = C
        b1 = np.zeros(T)
        b2 = np.full(T, np.inf)
        a1 = np.zeros(T, dtype=np.int64)
        a2 = np.zeros(T, dtype=np.int64)
        for lev in reversed(self.levels_):
            if not len(lev):
                continue
            Uv = U[lev]
            srt = np.argsort(Uv, axis=1, kind="stable")[:, :2] if R > 1 else np.zeros((len(lev), 1), dtype=np.int64)
            a1[lev] = srt[:, 0]
            b1[lev] = Uv[np.arange(len(lev)), srt[:, 0]]
            if R > 1:
                a2[lev] = srt[:, 1]
                b2[lev] = Uv[np.arange(len(lev)), srt[:, 1]]
            kids = lev[self.parent[lev] >= 0]
            if not len(kids):
                continue
            Uk = U[kids]
            other = np.where(np.arange(R)[None, :] == a1[kids, None], b2[kids, None], b1[kids, None]) + nul[kids, None]
            msg = np.minimum(Uk + same[kids], other)
            np.add.at(U, self.parent[kids], msg)
        roots = self.levels_[0] if self.levels_ else np.zeros(0, dtype=np.int64)
        home = np.zeros(T, dtype=np.int64)
        home[roots] = a1[roots]
        for lev in self.levels_[1:]:
            hp = home[self.parent[lev]]
            stay = U[lev, hp] + same[lev, hp]
            alt = np.where(a1[lev] == hp, b2[lev], b1[lev]) + nul[lev]
            home[lev] = np.where(stay <= alt, hp, np.where(a1[lev] == hp, a2[lev], a1[lev]))
        total = float(b1[roots].sum())
        mag = float(np.abs(np.where(np.isfinite(U), U, 0.0)).max(axis=1).sum()) if T else 0.0
        # the jobs' regions and placements at the minimizer
        hr = home[self.m_own].copy()
        placed = np.zeros(len(self.m_own), dtype=bool)
        if place is not None:
            r = self.rest
            placed[r] = place[r, hr[r]] < self.m_null[r]
            f = self.f_job
            hu = home[self.f_u]
            together = hu == home[self.f_child] if len(f) else np.zeros(0, dtype=bool)
            hr[f] = hu
            placed[f] = together & (place[f, hu] < self.m_null[f])
        return total, mag, home, hr, placed

    def objective_at(self, C: np.ndarray, place: np.ndarray, home: np.ndarray) -> float:
        """The forest subproblem's objective at a home vector, evaluated directly (the DP's check)."""
        v = float(C[np.arange(self.T), home].sum())
        r = self.rest
        v += float(np.minimum(self.m_null[r], place[r, home[self.m_own[r]]]).sum())
        f = self.f_job
        hu, hv = home[self.f_u], home[self.f_child]
        v += float(np.where(hu == hv, np.minimum(self.m_null[f], place[f, hu]), self.m_null[f]).sum())
        return v

    def extra_stats(self) -> dict:
        return {**super().extra_stats(), "forest_edges": int(self.n_edges), "jobs_kept_whole": int(self.n_kept),
                "multi_table_ml_jobs": int(len(self.m_own)),
                "tree_depth": int(len(self.levels_) - 1)}


def _gather(adj: sp.csr_matrix, rows: np.ndarray) -> np.ndarray:
    """The column indices of ``rows`` of a CSR matrix, concatenated (vectorized)."""
    s, e = adj.indptr[rows], adj.indptr[rows + 1]
    n = e - s
    off = np.repeat(s - np.r_[0, np.cumsum(n)[:-1]], n)
    return off + np.arange(int(n.sum()))


def solve(inst: TetrisInstance, *, time_limit: float = 600.0, alpha: float = 0.5, tol: float = 1e-4,
          max_iter: int = 100_000, max_memory_mb: float = lagrange.MAX_MEMORY_MB, start: np.ndarray | None = None,
          cpu: bool = False, seed: int = 0) -> SolveResult:
    """The forest bound (module docstring) as a ``SolveResult``: :func:`.lagrange.solve`'s ascent
    over :class:`ForestDecomposition`; the same parameters, statuses and statistics, plus
    ``forest_edges``, ``jobs_kept_whole`` (of ``multi_table_ml_jobs``) and ``tree_depth``."""
    need = memory_estimate_mb(inst)
    if need > max_memory_mb:
        return SolveResult(Status.ERROR, "tetris-bound-forest", stats={
            "memory_estimate_mb": need, "max_memory_mb": max_memory_mb,
            "message": f"memory estimate {need:.0f} MB above max_memory_mb"})
    res = lagrange.solve(inst, time_limit=time_limit, alpha=alpha, tol=tol, max_iter=max_iter,
                         max_memory_mb=max_memory_mb, start=start, cpu=cpu, seed=seed,
                         decomposition=ForestDecomposition, name="tetris-bound-forest")
    res.stats["memory_estimate_mb"] = need
    return res

