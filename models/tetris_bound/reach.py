"""The "reach" variant of the Tetris Lagrangian bound: the GPU cells and the storage squares restricted to
*reachable* values.

MAST Figure 4, expressions (2), (7)-(9) and (4). :mod:`placement.models.tetris_bound.lagrange`'s GPU
cell minimizes over a continuous demand share ``y[r,g,k]`` in ``[0, 1]`` and its storage block over a
continuous stored share; with linear prices the ascent can then make every cell's share equal its
supply share ``s[r,g]``, where the square is 0. In every placement, though, ``D[r,g,k]`` is a
*subset sum* of the GPU-hours of the ML jobs of ``(g, k)`` (the jobs whose R(job) is ``r``) and the
stored bytes ``SD[r]`` a subset sum of the table sizes (the sets behind the LP's chords, here
without the LP's 256-value cap): where the sum's total fits ``relaxation.SUBSET_SUM_BITS`` bits
(:func:`subset_sums`), the minimum over that finite set is taken instead. That is a restriction of
the blocks' domains to values every placement takes, so the value is still at most the
Lagrangian's true minimum over placements and, by weak duality, at most the optimum, at any
multipliers; where a total is larger the continuous minimum is kept.

Each GPU level's row ``D in [lo, hi]`` is dualized as in :mod:`.lagrange` (any multiplier ``nu`` a
valid level bound), so the cell's inner problem stays separable per ``k``: ``min over y in Y_k`` of
``A_k q(y - s) - b_k y``, convex in ``y``: its minimum over a finite set is at one of the set's two
neighbours of the continuous minimizer (a binary search per entry, any set size). The tables' block is
:mod:`.forest`'s (multi-table ML jobs kept whole along a spanning forest) or, with ``forest=False``,
:mod:`.lagrange`'s.
"""

from __future__ import annotations

import numpy as np

from placement.result import SolveResult
from placement.tetris import TetrisInstance

from . import forest, lagrange
from .relaxation import subset_sums

__all__ = ["solve", "subset_sums", "ReachDecomposition", "ReachForestDecomposition"]


def _nearest_min(f, grid: np.ndarray, x: np.ndarray, den: float) -> tuple[np.ndarray, np.ndarray]:
    """min over ``grid / den`` of a convex ``f`` whose minimizer over the reals is ``x``: the grid's two
    neighbours of ``x`` (convexity), returned as (value, point)."""
    i = np.searchsorted(grid, x * den)
    lo = grid[np.clip(i - 1, 0, len(grid) - 1)] / den
    hi = grid[np.clip(i, 0, len(grid) - 1)] / den
    f_lo, f_hi = f(lo), f(hi)
    pick = f_hi < f_lo
    return np.where(pick, f_hi, f_lo), np.where(pick, hi, lo)


class _Reach:
    """Mixin over a :class:`.lagrange.Decomposition`: the cells' and storage's reachable sets."""

    def _cells(self) -> None:
        super()._cells()
        A, K = self.inst.arrays, self.K
        mlj = np.flatnonzero(A.job_ml.astype(bool))
        self.c_sets: dict[tuple[int, int], np.ndarray] = {}
        self.c_has = np.zeros((len(self.c_r), K), dtype=bool)
        n_sets = 0
        for g in range(self.G):
            for k in range(K):
                if self.TD[g, k] > 0:
                    n_sets += 1
                    vals = A.job_gh[mlj[(A.job_gpu[mlj] == g) & (A.job_prio[mlj] == k)]]
                    sv = subset_sums(vals, int(self.TD[g, k]))
                    if sv is not None:
                        self.c_sets[g, k] = sv
                        self.c_has[self.c_g == g, k] = True
        self.n_reach_sets, self.n_sets = len(self.c_sets), n_sets
        self.reach_values = int(sum(len(v) for v in self.c_sets.values()))
        self.st_set = subset_sums(A.size, int(A.total_size)) if self.tsz > 0 else None

    def _inner(self, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`.lagrange.Decomposition._inner`, with the minimum over the reachable shares where known:
        the function is convex in ``y``, so it is one of the two reachable neighbours of the continuous
        minimizer."""
        vals, y = super()._inner(b)
        a = 1.0 - self.alpha
        for (g, k), grid in self.c_sets.items():
            rows = np.flatnonzero(self.c_g == g)
            Ak, sk, bk = self.c_A[rows, k], self.c_s[rows, k], b[rows, k]

            def f(z, Ak=Ak, sk=sk, bk=bk):
                u = z - sk
                return Ak * (a * np.maximum(u, 0.0) ** 2 + np.minimum(u, 0.0) ** 2) - bk * z

            vals[rows, k], y[rows, k] = _nearest_min(f, grid, y[rows, k], float(self.TD[g, k]))
        return vals, y

    def storage(self, mu: np.ndarray) -> tuple[float, float, np.ndarray]:
        """:meth:`.lagrange.Decomposition.storage` over the reachable stored shares (subset sums of the
        table sizes, at most each region's capacity), when the sizes' total is within the bitset."""
        value, mag, y = super().storage(mu)
        if self.st_set is None:
            return value, mag, y
        R, w3, t = self.R, self.w3, self.st_target
        v = np.empty(R)
        out = np.empty(R)
        for r in range(R):
            grid = self.st_set[self.st_set <= self.st_top[r] * self.tsz + 1e-9]

            def f(z, r=r):
                return w3 * (z - t[r]) ** 2 - mu[r] * z

            vr, yr = _nearest_min(f, grid, np.array([y[r]]), self.tsz)
            v[r], out[r] = vr[0], yr[0]
        return float(v.sum()), float(np.abs(v).sum()), out

    def extra_stats(self) -> dict:
        out = super().extra_stats()
        out.update(reachable_gk_sets=self.n_reach_sets, gk_sets=self.n_sets, reachable_values=self.reach_values,
                   reachable_storage=self.st_set is not None)
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
