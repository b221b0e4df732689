"""The "reach" variant of the Tetris Lagrangian bound: the GPU cells and the storage squares restricted to
*reachable* values.

MAST Figure 4, expressions (2), (7)-(9) and (4). :mod:`placement.models.tetris_bound.lagrange`'s GPU
cell minimizes over a continuous demand share ``y[r,g,k]`` in ``[0, 1]`` and its storage block over a
continuous stored share; with linear prices the ascent can then make every cell's share equal its
supply share ``s[r,g]``, where the square is 0. In every placement, though, ``D[r,g,k]`` is a
*subset sum* of the GPU-hours of the ML jobs of ``(g, k)`` (the jobs whose R(job) is ``r``) and the
stored bytes ``SD[r]`` a subset sum of the table sizes; where such a set has at most
``relaxation.MAX_CHORD_VALUES`` values (:func:`relaxation._subset_sums`, the sets behind the LP's
chords), the minimum over that finite set is taken instead. That is a restriction of the blocks'
domains to values every placement takes, so the value is still at most the Lagrangian's true
minimum over placements and, by weak duality, at most the optimum, at any multipliers; where a set
is larger (dense sums: at scale) the continuous minimum is kept.

Each GPU level's row ``D in [lo, hi]`` is dualized as in :mod:`.lagrange` (any multiplier ``nu`` a
valid level bound), so the cell's inner problem stays separable per ``k``: ``min over y in Y_k`` of
``A_k q(y - s) - b_k y``, an ``argmin`` over at most 257 values per entry. The tables' block is
:mod:`.forest`'s (multi-table ML jobs kept whole along a spanning forest) or, with ``forest=False``,
:mod:`.lagrange`'s.
"""

from __future__ import annotations

import numpy as np

from placement.result import SolveResult
from placement.tetris import TetrisInstance

from . import forest, lagrange
from .relaxation import _subset_sums

__all__ = ["solve", "ReachDecomposition", "ReachForestDecomposition"]


class _Reach:
    """Mixin over a :class:`.lagrange.Decomposition`: the cells' and storage's reachable sets."""

    def _cells(self) -> None:
        super()._cells()
        A, K = self.inst.arrays, self.K
        mlj = np.flatnonzero(A.job_ml.astype(bool))
        sets = {}
        for g in range(self.G):
            for k in range(K):
                if self.TD[g, k] > 0:
                    vals = A.job_gh[mlj[(A.job_gpu[mlj] == g) & (A.job_prio[mlj] == k)]]
                    sv = _subset_sums(vals, int(self.TD[g, k]))
                    sets[g, k] = None if sv is None else sv / float(self.TD[g, k])
        n = len(self.c_r)
        V = max([len(v) for v in sets.values() if v is not None], default=0)
        self.c_has = np.zeros((n, K), dtype=bool)
        self.c_Y = np.zeros((n, K, max(V, 1)))
        for (g, k), sv in sets.items():
            if sv is None:
                continue
            rows = np.flatnonzero(self.c_g == g)
            self.c_has[rows, k] = True
            self.c_Y[rows, k, :] = np.r_[sv, np.full(V - len(sv), sv[-1])][None, :]
        self.n_reach_sets = int(sum(v is not None for v in sets.values()))
        self.n_sets = len(sets)
        st = _subset_sums(A.size, int(A.total_size)) if self.tsz > 0 else None
        self.st_Y = None if st is None else st / self.tsz

    def _inner(self, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`.lagrange.Decomposition._inner`, with the minimum over the reachable shares where known."""
        vals, y = super()._inner(b)
        if not self.c_has.any():
            return vals, y
        Y, s, a = self.c_Y, self.c_s[:, :, None], 1.0 - self.alpha
        u = Y - s
        f = self.c_A[:, :, None] * (a * np.maximum(u, 0.0) ** 2 + np.minimum(u, 0.0) ** 2) - b[:, :, None] * Y
        i = np.argmin(f, axis=2)
        dv = np.take_along_axis(f, i[:, :, None], 2)[:, :, 0]
        dy = np.take_along_axis(Y, i[:, :, None], 2)[:, :, 0]
        return np.where(self.c_has, dv, vals), np.where(self.c_has, dy, y)

    def storage(self, mu: np.ndarray) -> tuple[float, float, np.ndarray]:
        """:meth:`.lagrange.Decomposition.storage` over the reachable stored shares (at most each
        region's capacity) where the table sizes' subset sums are few."""
        if self.st_Y is None:
            return super().storage(mu)
        Y = self.st_Y
        ok = Y[None, :] <= self.st_top[:, None] + 1e-12                                  # [R, V]
        f = self.w3 * (Y[None, :] - self.st_target[:, None]) ** 2 - mu[:, None] * Y[None, :]
        f = np.where(ok, f, np.inf)
        i = np.argmin(f, axis=1)
        v = f[np.arange(self.R), i]
        return float(v.sum()), float(np.abs(v).sum()), Y[i]

    def extra_stats(self) -> dict:
        out = super().extra_stats()
        out.update(reachable_gk_sets=self.n_reach_sets, gk_sets=self.n_sets, reachable_storage=self.st_Y is not None)
        return out


class ReachDecomposition(_Reach, lagrange.Decomposition):
    """:mod:`.lagrange`'s decomposition with the reachable cells and storage (module docstring)."""


class ReachForestDecomposition(_Reach, forest.ForestDecomposition):
    """:mod:`.forest`'s decomposition with the reachable cells and storage (module docstring)."""


def solve(inst: TetrisInstance, *, time_limit: float = 600.0, alpha: float = 0.5, tol: float = 1e-4,
          max_iter: int = 100_000, max_memory_mb: float = lagrange.MAX_MEMORY_MB, start: np.ndarray | None = None,
          cpu: bool = False, seed: int = 0, forest_jobs: bool = True) -> SolveResult:
    """The reach bound (module docstring): :func:`.lagrange.solve`'s ascent over
    :class:`ReachForestDecomposition` (``forest_jobs=False``: :class:`ReachDecomposition`); the same
    parameters, statuses and statistics, plus ``reachable_gk_sets`` (of ``gk_sets``) and
    ``reachable_storage``."""
    cls = ReachForestDecomposition if forest_jobs else ReachDecomposition
    return lagrange.solve(inst, time_limit=time_limit, alpha=alpha, tol=tol, max_iter=max_iter,
                          max_memory_mb=max_memory_mb, start=start, cpu=cpu, seed=seed,
                          decomposition=cls, name="tetris-bound-reach")
