"""The relaxation behind the Tetris lower bound (:mod:`placement.models.tetris_bound`): its matrix and certificates.

The exact model (:mod:`placement.models.tetris`) proves optima up to about 60 tables; past a
few thousand tables neither Pyomo's per-variable cost nor HiGHS's branch and bound
fit in minutes. This module builds a **relaxation** of the same formulation with
numpy and hands it to HiGHS through ``highspy`` (``Highs.passModel``, :func:`highs_model`), so the
model transfer costs seconds at 100,000 tables instead of minutes. Every method of the
package solves this matrix: the LP (:mod:`placement.models.tetris_bound.lp`), the branching
(:mod:`placement.models.tetris_bound.branch`) and the MIP (:mod:`placement.models.tetris_bound.mip`).

Why this relaxation (the choice was made by measurement, see the Tetris page)
---------------------------------------------------------------------------------
The formulation is the exact model's (module docstring of :mod:`placement.models.tetris`)
with three changes, each of which can only lower the optimum, so every value it
proves is at most the exact optimum:

1. ``x``, ``a``, ``b`` and the overload levels ``y`` are continuous in ``[0, 1]``
   (``integer=False``, the LP relaxation; ``integer=True`` keeps them integer and
   reports HiGHS's MIP dual bound: only for small instances and the tests).
2. The squares (7) and (9) are cut by **tangents** ``z >= f(p) + f'(p) (n - p)``
   (valid at every real ``n``, so also at the fractional demands of the LP) at a
   grid of points, then, in rounds, at the LP's own demands until no tangent is
   violated by more than ``tol`` (outer approximation, :func:`add_tangents`; each round's value is a
   valid bound, the last is the tightest); and, where a square's argument has at
   most ``MAX_CHORD_VALUES`` reachable values (subset sums of the GPU-hours of the
   jobs of (g, k), or of table sizes), by the chords between consecutive reachable
   values (valid at every integer placement, as the exact model's chords).
3. The exact-argmax rows of analytics jobs under a CPU limit (R^2 rows per job)
   are dropped: their ``b`` may then pick any region for (5), a relaxation.

One change makes it tighter than the exact model's LP: the analytics majority
``m_j = max_r L[j,r]`` is written in disjunctive form, ``m_j <= sum_r u[j,r]``,
``u[j,r] <= L[j,r]``, ``u[j,r] <= size_j b[j,r]`` (exact at one-hot ``b``; it implies
the exact model's big-M rows ``m_j <= L[j,r] + size_j (1 - b[j,r])`` at every
fractional ``b``, under which a job split ``1/R`` over the regions reads its bytes
nearly for free). ``analytics_hull=False`` keeps the big-M rows for comparison.
A second (``fixings=True``, the default): the homes and job regions (5) forbids in every
feasible placement (:mod:`placement.models.tetris_bound.fixings`) get zero upper bounds -- what
HiGHS's MIP presolve finds from the homes' integrality; at 1,000 tables it takes the LP from
103,344 to about 196,000 (Tetris page).

Everything else -- one home per table, the AND rows of ML jobs, storage (4) (as
column bounds), CPU (5), home GPU-hours (6), the move quota, the disaggregated (7) x (8)
product over the overload levels with per-level big-M -- is the exact model's, row for row.

The bound is certified in numpy (:func:`dual_bound`): for any row multipliers, the
Lagrangian value ``b'y + sum_j min(r_j l_j, r_j u_j)`` (every column is boxed) is a
valid bound, so it is computed at each round's duals and never taken from the solver;
an interior-point or PDLP iterate stopped by the time limit still gives a valid (weaker)
bound. :func:`farkas_value` is its cost-free part: positive at a ray, it proves the
relaxation (a branching node's, with its column bounds) empty.
"""

from __future__ import annotations

import math
import time

import numpy as np

from placement.errors import InstanceError
from placement.tetris import TetrisInstance, sigmoid

from .fixings import cpu_fixings

__all__ = ["BoundModel", "build", "dual_bound", "farkas_value", "run_until", "add_tangents", "highs_model",
           "peak_rss_mb", "SATURATION_LEVEL", "REL_SAFETY", "GRID_TANGENTS", "SIMPLEX_MAX_COLUMNS",
           "PDLP_MIN_COLUMNS", "DENSE_ROW", "MAX_CHORD_VALUES", "SUBSET_SUM_BITS"]

SATURATION_LEVEL = 37  # sigmoid(37) == 1.0 in double precision (as models/tetris.py)
REL_SAFETY = 1e-6
GRID_TANGENTS = 64
SIMPLEX_MAX_COLUMNS = 10_000
PDLP_MIN_COLUMNS = 1_000_000   # IPM converges at 469,606 columns (10,000 tables) in 22 min; PDLP certified nothing there
DENSE_ROW = 256
MAX_CHORD_VALUES = 256
SUBSET_SUM_BITS = 1 << 20


class _Rows:
    """COO triplets of the constraint matrix, appended block by block (numpy arrays)."""

    def __init__(self) -> None:
        self.i: list[np.ndarray] = []
        self.j: list[np.ndarray] = []
        self.v: list[np.ndarray] = []
        self.lo: list[np.ndarray] = []
        self.hi: list[np.ndarray] = []
        self.n = 0

    def add(self, rows: np.ndarray, cols: np.ndarray, vals, lo, hi, n_rows: int) -> int:
        """Entries ``(rows + self.n, cols, vals)`` and ``n_rows`` new rows with bounds; returns the first row."""
        first = self.n
        rows = np.asarray(rows, dtype=np.int64)
        self.i.append(rows + first)
        self.j.append(np.asarray(cols, dtype=np.int64))
        self.v.append(np.broadcast_to(np.asarray(vals, dtype=float), rows.shape).astype(float))
        self.lo.append(np.broadcast_to(np.asarray(lo, dtype=float), (n_rows,)).astype(float))
        self.hi.append(np.broadcast_to(np.asarray(hi, dtype=float), (n_rows,)).astype(float))
        self.n += n_rows
        return first


class BoundModel:
    """The relaxation's matrix and the index maps of its columns (see the module docstring).

    Columns: ``x[t,r]`` (``t*R + r``), ``a`` per multi-table ML job and region, ``b``
    and ``m`` per multi-table analytics job, ``D[r,g,k]`` and ``z[r,g,k]``, ``SD[r]``
    and ``zs[r]``, and ``y``, ``W`` per (r, g, level).
    """

    def __init__(self, inst: TetrisInstance, integer: bool, tangents: int, analytics_hull: bool = True,
                 dense_row: int = 0, exact_argmax: bool = False, fixings: bool = True) -> None:
        A = inst.arrays
        self.inst, self.integer, self.analytics_hull = inst, integer, analytics_hull
        self.exact_argmax, self.argmax_rows = exact_argmax, 0
        R, T = inst.n_regions, inst.n_tables
        G, K = A.total_demand.shape
        self.R, self.T, self.G, self.K = R, T, G, K
        lens = np.diff(A.job_ptr)
        ml = A.job_ml.astype(bool)
        self.multi_ml = np.flatnonzero(ml & (lens > 1))
        self.multi_an = np.flatnonzero(~ml & (lens > 1) & (A.job_size > 0))
        lo: list[np.ndarray] = []
        hi: list[np.ndarray] = []
        cost: list[np.ndarray] = []
        integ: list[np.ndarray] = []
        n = 0

        def block(count: int, lb, ub, c, is_int: bool) -> int:
            nonlocal n
            first = n
            lo.append(np.broadcast_to(np.asarray(lb, float), (count,)).astype(float))
            hi.append(np.broadcast_to(np.asarray(ub, float), (count,)).astype(float))
            cost.append(np.broadcast_to(np.asarray(c, float), (count,)).astype(float))
            integ.append(np.full(count, is_int))
            n += count
            return first

        w1, w2, w3 = float(inst.w1), float(inst.w2), float(inst.w3)
        nM, nA = len(self.multi_ml), len(self.multi_an)
        self.ox = block(T * R, 0.0, 1.0, 0.0, integer)
        mm_size = A.job_size[self.multi_ml].astype(float)
        self.oa = block(nM * R, 0.0, 1.0, np.repeat(-w1 * mm_size, R), False)
        self.ob = block(nA * R, 0.0, 1.0, 0.0, integer)
        self.om = block(nA, 0.0, A.job_size[self.multi_an].astype(float), -w1, False)
        # u[j,r] <= min(L[j,r], size_j b[j,r]): the disjunctive form of m_j = max_r L[j,r]
        self.ou = block(nA * R if analytics_hull else 0, 0.0,
                        np.repeat(A.job_size[self.multi_an].astype(float), R if analytics_hull else 0),
                        0.0, False)
        self.offset = w1 * float(mm_size.sum() + A.job_size[self.multi_an].sum())
        TD = A.total_demand.astype(float)
        TS = A.total_supply.astype(float)
        self.TD = TD
        self.s = np.where(TS[None, :] > 0, A.supply / np.where(TS > 0, TS, 1.0)[None, :], 0.0)  # [R, G]
        self.od = block(R * G * K, 0.0, 1.0, 0.0, False)  # demand shares D[r,g,k] / TD[g,k]
        # z <= the square's largest value on its domain [0, 1] (a column bound the optimum never meets)
        zmax = np.maximum(self.s[:, :, None] ** 2, (1.0 - self.s[:, :, None]) ** 2) * np.ones((1, 1, K))
        self.oz = block(R * G * K, 0.0, np.where((TD > 0)[None], zmax, 0.0).ravel(), 0.0, False)
        tot = max(1.0, float(A.total_size))
        self.osd = block(R, 0.0, A.storage_cap / tot, 0.0, False)  # stored shares; (4) as the column's bound
        cap_share = A.storage_cap / max(1.0, float(A.total_capacity))
        top_s = np.minimum(A.storage_cap, A.total_size) / tot
        self.ozs = block(R, 0.0, np.maximum(cap_share ** 2, (top_s - cap_share) ** 2), w3, False)
        # Overload levels per (r, g) with demand: 0 .. min(37, largest overload).
        TDg = TD.sum(axis=1)
        self.levels: dict[tuple[int, int], tuple[int, np.ndarray]] = {}
        sig_l = sigmoid(np.arange(SATURATION_LEVEL + 1))
        for r in range(R):
            for g in range(G):
                if TDg[g] <= 0:
                    continue
                over_hi = max(0, int(TDg[g]) - int(A.supply[r, g]))
                L = min(SATURATION_LEVEL, over_hi)
                oy = block(L + 1, 0.0, 1.0, 0.0, integer)
                ow = block(L + 1, 0.0, self._level_qmax(r, g, L, over_hi), w2 * sig_l[:L + 1], False)
                self.levels[r, g] = (over_hi, np.array([oy, ow]))
        self.n_cols = n
        self.col_lo, self.col_hi = np.concatenate(lo), np.concatenate(hi)
        self.cost, self.integ = np.concatenate(cost), np.concatenate(integ)
        self.rows = _Rows()
        self._rows(A, lens)
        self.fixed_cols = self._fix(cpu_fixings(inst)) if fixings else 0
        self.split_rows = self._split_dense_rows(dense_row) if dense_row else 0
        self.tangent_rows = 0
        self._grid_tangents(tangents)

    def _split_dense_rows(self, limit: int) -> int:
        """Rewrite every row with more than ``limit`` entries through partial sums (returns how many).

        A row ``lo <= sum_j c_j v_j <= hi`` over n columns becomes ``lo <= sum_i s_i <= hi``
        with ``s_i = sum_{j in chunk i} c_j v_j`` (an equality row per chunk of ``limit - 1``
        entries; ``s_i`` boxed by the chunk's smallest and largest value), repeated until no
        row is longer: the same feasible set, projected. The quota, storage, (6) and demand
        rows have one entry per table or job; an interior-point method's normal equations
        fill in as the square of such a row. Measured at 10,000 tables: not the cause of
        HiGHS's IPM taking ~17 s per iteration there (the same with and without; Tetris page).
        """
        if limit < 3:
            raise InstanceError("dense_row", f"must be 0 or at least 3, got {limit}")
        rows = self.rows
        ri, rj, rv = np.concatenate(rows.i), np.concatenate(rows.j), np.concatenate(rows.v)
        lo, hi = np.concatenate(rows.lo), np.concatenate(rows.hi)
        new_lo, new_hi = [self.col_lo], [self.col_hi]
        n_cols, n_rows, split = self.n_cols, rows.n, 0
        while True:
            order = np.argsort(ri, kind="stable")
            ri, rj, rv = ri[order], rj[order], rv[order]
            counts = np.bincount(ri, minlength=n_rows)
            long_rows = np.flatnonzero(counts > limit)
            if not len(long_rows):
                break
            split += len(long_rows)
            starts = np.concatenate([[0], np.cumsum(counts)])
            is_long = np.zeros(n_rows, dtype=bool)
            is_long[long_rows] = True
            ent_long = is_long[ri]
            size = max(2, limit - 1)                          # a chunk row also holds its s_i
            pos = np.arange(len(ri)) - starts[ri]          # position of the entry in its row
            chunk = pos // size                              # chunk within the row
            n_chunks = (counts[long_rows] + size - 1) // size
            first_chunk = np.zeros(n_rows, dtype=np.int64)
            first_chunk[long_rows] = np.concatenate([[0], np.cumsum(n_chunks)[:-1]])
            total = int(n_chunks.sum())
            cid = first_chunk[ri[ent_long]] + chunk[ent_long]   # global chunk index per long entry
            vlo = np.concatenate(new_lo)
            vhi = np.concatenate(new_hi)
            e_j, e_v = rj[ent_long], rv[ent_long]
            lo_c = np.bincount(cid, weights=np.minimum(e_v * vlo[e_j], e_v * vhi[e_j]), minlength=total)
            hi_c = np.bincount(cid, weights=np.maximum(e_v * vlo[e_j], e_v * vhi[e_j]), minlength=total)
            s_col = n_cols + np.arange(total)
            new_lo.append(lo_c - 1e-9 * np.abs(lo_c))
            new_hi.append(hi_c + 1e-9 * np.abs(hi_c))
            n_cols += total
            # chunk rows: s_i - sum c_j v_j = 0
            c_row = n_rows + np.arange(total)
            chunk_i = np.concatenate([c_row, c_row[cid]])
            chunk_j = np.concatenate([s_col, e_j])
            chunk_v = np.concatenate([np.ones(total), -e_v])
            # the long rows keep only their partial sums
            owner = np.repeat(long_rows, n_chunks)
            ri = np.concatenate([ri[~ent_long], owner, chunk_i])
            rj = np.concatenate([rj[~ent_long], s_col, chunk_j])
            rv = np.concatenate([rv[~ent_long], np.ones(total), chunk_v])
            lo = np.concatenate([lo, np.zeros(total)])
            hi = np.concatenate([hi, np.zeros(total)])
            n_rows += total
        added = n_cols - self.n_cols
        if added:
            self.col_lo = np.concatenate(new_lo)
            self.col_hi = np.concatenate(new_hi)
            self.cost = np.concatenate([self.cost, np.zeros(added)])
            self.integ = np.concatenate([self.integ, np.zeros(added, dtype=bool)])
            self.n_cols = n_cols
            self.rows = _Rows()
            self.rows.i, self.rows.j, self.rows.v = [ri], [rj], [rv]
            self.rows.lo, self.rows.hi, self.rows.n = [lo], [hi], n_rows
        return split

    def _fix(self, fx) -> int:
        """Zero upper bounds on the columns (5) forbids in every feasible placement
        (:mod:`placement.models.tetris_bound.fixings`): ``x[t,r]``, and ``a`` / ``b`` of multi-table jobs;
        returns how many were open."""
        R = self.R
        cols = [self.ox + np.flatnonzero(fx.table.ravel())]
        for first, members in ((self.oa, self.multi_ml), (self.ob, self.multi_an)):
            if len(members):
                jj, rr = np.nonzero(fx.job[members])
                cols.append(first + jj * R + rr)
        c = np.concatenate(cols)
        n = int((self.col_hi[c] > 0).sum())
        self.col_hi[c] = 0.0
        return n

    def x_matrix(self, col_value: np.ndarray) -> np.ndarray:
        """The ``x`` block of a column vector as a [tables, regions] matrix (a view)."""
        return np.asarray(col_value)[self.ox:self.ox + self.T * self.R].reshape(self.T, self.R)

    # -- columns of R(job) -----------------------------------------------------------------
    def region_cols(self, jobs: np.ndarray) -> np.ndarray:
        """[len(jobs), R] column of "R(job) = r" per job (x of the single table, a or b), -1 for a constant."""
        A, R = self.inst.arrays, self.R
        out = np.full((len(jobs), R), -1, dtype=np.int64)
        lens = np.diff(A.job_ptr)[jobs]
        single = lens == 1
        t0 = A.job_tab[A.job_ptr[jobs]]
        out[single] = self.ox + t0[single, None] * R + np.arange(R)[None, :]
        for first, members in ((self.oa, self.multi_ml), (self.ob, self.multi_an)):
            if not len(members):
                continue
            pos = np.searchsorted(members, jobs)
            hit = (~single) & (pos < len(members)) & (members[np.minimum(pos, len(members) - 1)] == jobs)
            out[hit] = first + pos[hit, None] * R + np.arange(R)[None, :]
        return out

    def _rows(self, A, lens: np.ndarray) -> None:
        R, T, G, K, rows, inst = self.R, self.T, self.G, self.K, self.rows, self.inst
        rr = np.arange(R)
        # one home per table
        rows.add(np.repeat(np.arange(T), R), self.ox + np.arange(T * R), 1.0, 1.0, 1.0, T)
        # ML AND rows: a[j,r] <= x[t,r]; a[j,r] >= sum_t x[t,r] - (n_j - 1)
        mm = self.multi_ml
        if len(mm):
            n_j = lens[mm]
            ent_job, ent_tab = A.job_entries(mm)
            E = len(ent_job)
            rid = np.repeat(np.arange(E * R), 2)
            cols = np.empty(2 * E * R, dtype=np.int64)
            cols[0::2] = self.oa + (ent_job[:, None] * R + rr).ravel()
            cols[1::2] = self.ox + (ent_tab[:, None] * R + rr).ravel()
            vals = np.tile([1.0, -1.0], E * R)
            rows.add(rid, cols, vals, -np.inf, 0.0, E * R)
            # a >= sum x - (n - 1): row (i, r) has a[i,r] and the x of each table
            ge_row = np.concatenate([np.arange(len(mm) * R), (ent_job[:, None] * R + rr).ravel()])
            ge_col = np.concatenate([self.oa + np.arange(len(mm) * R), self.ox + (ent_tab[:, None] * R + rr).ravel()])
            ge_val = np.concatenate([np.ones(len(mm) * R), -np.ones(E * R)])
            rows.add(ge_row, ge_col, ge_val, np.repeat(1.0 - n_j, R), np.inf, len(mm) * R)
        # analytics local bytes m_j = max_r L[j,r], L[j,r] = sum_t size_t x[t,r]; sum_r b = 1.
        # Disjunctive form (default): m_j <= sum_r u[j,r], u[j,r] <= L[j,r], u[j,r] <= size_j b[j,r]
        # (exact at one-hot b; at fractional b it implies the big-M form below, never weaker).
        # Big-M form (analytics_hull=False, the exact model's rows): m_j <= L[j,r] + size_j (1 - b[j,r]).
        ma = self.multi_an
        if len(ma):
            n_j = lens[ma]
            ent_job, ent_tab = A.job_entries(ma)
            nr = len(ma) * R
            sz = A.job_size[ma].astype(float)
            r_x = (ent_job[:, None] * R + rr).ravel()
            c_x = self.ox + (ent_tab[:, None] * R + rr).ravel()
            v_x = -np.repeat(A.size[ent_tab].astype(float), R)
            if self.analytics_hull:
                rows.add(np.concatenate([np.arange(len(ma)), np.repeat(np.arange(len(ma)), R)]),
                         np.concatenate([self.om + np.arange(len(ma)), self.ou + np.arange(nr)]),
                         np.concatenate([np.ones(len(ma)), -np.ones(nr)]), -np.inf, 0.0, len(ma))
                rows.add(np.concatenate([np.arange(nr), r_x]), np.concatenate([self.ou + np.arange(nr), c_x]),
                         np.concatenate([np.ones(nr), v_x]), -np.inf, 0.0, nr)
                rows.add(np.repeat(np.arange(nr), 2),
                         np.ravel(np.column_stack([self.ou + np.arange(nr), self.ob + np.arange(nr)])),
                         np.ravel(np.column_stack([np.ones(nr), -np.repeat(sz, R)])), -np.inf, 0.0, nr)
            else:
                r_m = np.arange(nr)
                c_m = self.om + np.repeat(np.arange(len(ma)), R)
                r_b, c_b, v_b = np.arange(nr), self.ob + np.arange(nr), np.repeat(sz, R)
                rows.add(np.concatenate([r_m, r_b, r_x]), np.concatenate([c_m, c_b, c_x]),
                         np.concatenate([np.ones(nr), v_b, v_x]), -np.inf, np.repeat(sz, R), nr)
            rows.add(np.repeat(np.arange(len(ma)), R), self.ob + np.arange(nr), 1.0, 1.0, 1.0, len(ma))
            if self.exact_argmax:
                self._argmax_rows(A, lens)
        # SD[r] / total = sum_t (size_t / total) x[t,r]  (storage (4) is the column's bound)
        tot = max(1.0, float(A.total_size))
        rows.add(np.concatenate([rr, np.tile(rr, T)]),
                 np.concatenate([self.osd + rr, self.ox + np.arange(T * R)]),
                 np.concatenate([np.ones(R), -np.repeat(A.size / tot, R)]), 0.0, 0.0, R)
        # move quota: sum_t size_t x[t, home0_t] >= total - quota
        if inst.move_quota is not None:
            rows.add(np.zeros(T, dtype=np.int64), self.ox + np.arange(T) * R + A.home0, A.size.astype(float),
                     float(A.size.sum()) - float(inst.move_quota), np.inf, 1)
        jobs = np.arange(len(A.job_ptr) - 1)
        regcol = self.region_cols(jobs)
        const_r0 = (~A.job_ml.astype(bool)) & (A.job_size == 0)  # analytics with nothing stored: region 0
        regcol[const_r0] = -1
        # CPU (5) per (app, region) with a limit
        cap = A.cpu_cap
        limited = np.isfinite(cap)
        if limited.any() and len(jobs):
            app = A.job_app
            sel = np.flatnonzero((app >= 0) & limited[np.maximum(app, 0)].any(axis=1))
            cell_id = -np.ones(cap.shape, dtype=np.int64)
            cell_id[limited] = np.arange(limited.sum())
            jj = np.repeat(sel, R)
            r_of = np.tile(rr, len(sel))
            cid = cell_id[app[jj], r_of]
            col = regcol[jj, r_of]
            keep = (cid >= 0) & (col >= 0)
            const = np.zeros(limited.sum())
            kc = (cid >= 0) & const_r0[jj] & (r_of == 0)
            np.add.at(const, cid[kc], A.job_cpu[jj[kc]].astype(float))
            rows.add(cid[keep], col[keep], A.job_cpu[jj[keep]].astype(float), -np.inf, cap[limited] - const,
                     int(limited.sum()))
        # (6): high-priority GPU-hours of ML jobs whose region has their GPU type >= threshold
        high = np.flatnonzero(A.job_ml.astype(bool) & A.job_high.astype(bool))
        if inst.home_threshold > 0 or len(high):
            jj = np.repeat(high, R)
            r_of = np.tile(rr, len(high))
            ok = A.supply[r_of, A.job_gpu[jj]] > 0
            rows.add(np.zeros(ok.sum(), dtype=np.int64), regcol[jj[ok], r_of[ok]], A.job_gh[jj[ok]].astype(float),
                     float(inst.home_threshold), np.inf, 1)
        # D[r,g,k] / TD[g,k] = sum of the shares of the ML jobs (g, k) with R(job) = r
        mlj = np.flatnonzero(A.job_ml.astype(bool))
        d_rows = rr[None, :] * G * K + (A.job_gpu[mlj] * K + A.job_prio[mlj])[:, None]  # [n_ml, R]
        share = A.job_gh[mlj] / self.TD[A.job_gpu[mlj], A.job_prio[mlj]]
        rows.add(np.concatenate([np.arange(R * G * K), d_rows.ravel()]),
                 np.concatenate([self.od + np.arange(R * G * K), regcol[mlj].ravel()]),
                 np.concatenate([np.ones(R * G * K), -np.repeat(share, R)]), 0.0, 0.0, R * G * K)
        # overload levels, the level-split product and its per-level big-M
        w = A.prio_w.astype(float)
        for (r, g), (over_hi, (oy, ow)) in self.levels.items():
            L = min(SATURATION_LEVEL, over_hi)
            lv = np.arange(L + 1, dtype=float)
            coef = lv.copy()
            coef[-1] = over_hi
            dcols = self.od + (r * G + g) * K + np.arange(K)
            rows.add(np.zeros(K + L + 1, dtype=np.int64), np.concatenate([dcols, oy + np.arange(L + 1)]),
                     np.concatenate([self.TD[g], -coef]), -np.inf, float(A.supply[r, g]), 1)
            rows.add(np.zeros(L + 1, dtype=np.int64), oy + np.arange(L + 1), 1.0, 1.0, 1.0, 1)
            ks = np.flatnonzero(self.TD[g] > 0)
            zcols = self.oz + (r * G + g) * K + ks
            rows.add(np.zeros(L + 1 + len(ks), dtype=np.int64), np.concatenate([ow + np.arange(L + 1), zcols]),
                     np.concatenate([np.ones(L + 1), -w[ks]]), 0.0, 0.0, 1)
            qmax = self._level_qmax(r, g, L, over_hi)
            rows.add(np.repeat(np.arange(L + 1), 2),
                     np.ravel(np.column_stack([ow + np.arange(L + 1), oy + np.arange(L + 1)])),
                     np.ravel(np.column_stack([np.ones(L + 1), -qmax])), -np.inf, 0.0, L + 1)

    def _argmax_rows(self, A, lens: np.ndarray) -> None:
        """The exact model's argmax rows (``placement.models.tetris._analytics_job_regions``) for the multi-table
        analytics jobs of an app with a CPU limit: ``L[j,q] + [q < r] <= L[j,r] + (size_j + 1)(1 - b[j,r])``
        for every ``q != r``, so at integer ``x`` and ``b`` the region ``b`` picks is R(job) (ties to the
        lowest index) and (5) counts the job where the reference evaluation does."""
        R, ma = self.R, self.multi_an
        cap_apps = np.isfinite(A.cpu_cap).any(axis=1)
        pos = np.flatnonzero((A.job_app[ma] >= 0) & cap_apps[np.maximum(A.job_app[ma], 0)])
        if not len(pos) or R < 2:
            return
        jobs = ma[pos]
        ent_job, ent_tab = A.job_entries(jobs)
        pr, pq = np.nonzero(~np.eye(R, dtype=bool))          # every ordered pair r != q
        P = len(pr)
        sz = A.job_size[jobs].astype(float) + 1.0
        row_of = ent_job[:, None] * P + np.arange(P)          # [E, P]
        tsz = A.size[ent_tab].astype(float)[:, None]
        n_rows = len(jobs) * P
        rid = np.concatenate([row_of.ravel(), row_of.ravel(), np.arange(n_rows)])
        cols = np.concatenate([(self.ox + ent_tab[:, None] * R + pq[None, :]).ravel(),
                               (self.ox + ent_tab[:, None] * R + pr[None, :]).ravel(),
                               (self.ob + pos[:, None] * R + pr[None, :]).ravel()])
        vals = np.concatenate([np.broadcast_to(tsz, row_of.shape).ravel(),
                               -np.broadcast_to(tsz, row_of.shape).ravel(), np.repeat(sz, P)])
        rhs = (sz[:, None] - (pq < pr)[None, :]).ravel()
        self.rows.add(rid, cols, vals, -np.inf, rhs, n_rows)
        self.argmax_rows = n_rows

    def _level_qmax(self, r: int, g: int, L: int, over_hi: int) -> np.ndarray:
        """Largest ``Q[r,g] = sum_k w_k (D_k/TD_k - s)^2`` at each level: D_k in [0, min(TD_k, S + l)] below the top."""
        A = self.inst.arrays
        s, S = self.s[r, g], float(A.supply[r, g])
        out = np.zeros(L + 1)
        for k in np.flatnonzero(self.TD[g] > 0):
            td = self.TD[g, k]
            hi = np.minimum(td, S + np.arange(L + 1, dtype=float))
            hi[-1] = td  # the top level: "at least L", any demand
            out += float(A.prio_w[k]) * np.maximum(s ** 2, (hi / td - s) ** 2)
        return out

    # -- the squares -------------------------------------------------------------------------
    def squares(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per square: (argument column, epigraph column, denominator, target share, domain top)."""
        A, R, G, K = self.inst.arrays, self.R, self.G, self.K
        r, g, k = np.unravel_index(np.arange(R * G * K), (R, G, K))
        on = self.TD[g, k] > 0
        st = np.arange(R if A.total_size > 0 else 0)  # (9) is 0 when nothing is stored (as evaluate())
        n_col = np.concatenate([self.od + np.arange(R * G * K)[on], self.osd + st])
        z_col = np.concatenate([self.oz + np.arange(R * G * K)[on], self.ozs + st])
        den = np.ones(len(n_col))  # the arguments are shares already
        tgt = np.concatenate([self.s[r, g][on], (A.storage_cap / max(1.0, float(A.total_capacity)))[st]])
        top = np.concatenate([np.ones(int(on.sum())),
                              (np.minimum(A.storage_cap, A.total_size) / max(1.0, float(A.total_size)))[st]])
        return n_col, z_col, den, tgt, top

    def tangent_block(self, idx: np.ndarray, p: np.ndarray) -> tuple:
        """Rows ``z - f'(p) n >= f(p) - f'(p) p`` for squares ``idx`` at points ``p``."""
        n_col, z_col, den, tgt, _ = self.sq
        d, s = den[idx], tgt[idx]
        f = (p / d - s) ** 2
        fp = 2.0 * (p / d - s) / d
        keep = np.abs(fp) >= 1e-9  # a flatter tangent is z >= ~0, the column's own bound
        idx, p, f, fp = idx[keep], p[keep], f[keep], fp[keep]
        k = len(idx)
        rid = np.repeat(np.arange(k), 2)
        cols = np.ravel(np.column_stack([z_col[idx], n_col[idx]]))
        vals = np.ravel(np.column_stack([np.ones(k), -fp]))
        return rid, cols, vals, f - fp * p

    def _grid_tangents(self, n: int) -> None:
        self.sq = self.squares()
        _, _, den, tgt, top = self.sq
        pts = np.linspace(0.0, 1.0, max(2, n))[None, :] * top[:, None]
        pts = np.concatenate([pts, (tgt * den)[:, None]], axis=1)
        idx = np.repeat(np.arange(len(den)), pts.shape[1])
        rid, cols, vals, rhs = self.tangent_block(idx, pts.ravel())
        self.rows.add(rid, cols, vals, rhs, np.inf, len(rhs))
        self.tangent_rows += len(rhs)
        self._chords()

    def _chords(self) -> None:
        """Chords between consecutive *reachable* values of a square's argument (few values only).

        D[r,g,k] is a subset sum of the GPU-hours of the ML jobs (g, k), stored bytes a
        subset sum of table sizes; when such a set has at most ``MAX_CHORD_VALUES``
        values, the chord through each consecutive pair is valid at every reachable
        value (convexity) though not between them: a relaxation of the integer
        problem that is much tighter than tangents on small instances (where the
        exact model's chords come from too), and absent at scale, where the sums are dense.
        """
        A, R, K = self.inst.arrays, self.R, self.K
        mlj = np.flatnonzero(A.job_ml.astype(bool))
        n_col, z_col, _, tgt, _ = self.sq
        on = (self.TD > 0).ravel()
        sets: list[np.ndarray | None] = []
        for gk in np.flatnonzero(on):
            g, k = divmod(int(gk), K)
            vals = A.job_gh[mlj[(A.job_gpu[mlj] == g) & (A.job_prio[mlj] == k)]]
            sets.append(_chord_values(vals, int(self.TD[g, k])))
        st = _chord_values(A.size, int(A.total_size))
        rid_l, col_l, val_l, rhs_l = [], [], [], []
        n_gk = int(on.sum())
        for q in range(len(n_col)):
            if q < R * n_gk:
                r, i = divmod(q, n_gk)
                reach, den = sets[i], float(self.TD.ravel()[np.flatnonzero(on)[i]])
            else:  # storage squares exist only when something is stored
                reach, den = st, max(1.0, float(A.total_size))
            if reach is None or len(reach) < 2:
                continue
            p, v = reach[:-1] / den, reach[1:] / den
            fp, fv = (p - tgt[q]) ** 2, (v - tgt[q]) ** 2
            slope = (fv - fp) / (v - p)
            m = len(p)
            rid_l.append(np.repeat(np.arange(m), 2) + sum(len(x) for x in rhs_l))
            col_l.append(np.ravel(np.column_stack([np.full(m, z_col[q]), np.full(m, n_col[q])])))
            val_l.append(np.ravel(np.column_stack([np.ones(m), -slope])))
            rhs_l.append(fp - slope * p)
        if rhs_l:
            rhs = np.concatenate(rhs_l)
            self.rows.add(np.concatenate(rid_l), np.concatenate(col_l), np.concatenate(val_l), rhs, np.inf, len(rhs))
            self.tangent_rows += len(rhs)

    def violated(self, col_value: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray]:
        """Squares whose epigraph value is below ``f`` at the LP's argument by more than ``tol`` (relative)."""
        n_col, z_col, den, tgt, _ = self.sq
        n_val = col_value[n_col]
        f = (n_val / den - tgt) ** 2
        bad = np.flatnonzero(col_value[z_col] < f - tol * np.maximum(1.0, f))
        return bad, n_val[bad]


def dual_bound(m: BoundModel, row_dual: np.ndarray, col_lo: np.ndarray | None = None,
               col_hi: np.ndarray | None = None, polish: bool = True, exact: bool = True) -> tuple[float, dict]:
    """The Lagrangian value of the relaxation at the row multipliers ``row_dual``: a valid lower bound for *any* vector.

    For ``min c'x + offset`` s.t. ``lo <= A x <= hi`` and ``l <= x <= u`` (every column of
    :class:`BoundModel` is boxed), weak duality gives, for every ``y``,
    ``c'x >= sum_i y_i^+ lo_i - y_i^- hi_i + sum_j min(r_j l_j, r_j u_j)`` with ``r = c - A'y``,
    once ``y_i`` is clipped to 0 where the bound it multiplies is infinite. Computed here in
    numpy from the model's own matrix (every row, lazy tangents included, in HiGHS's order),
    so the number does not rest on the solver's feasibility tolerances: an interior-point or
    PDLP iterate stopped by the time limit still gives a valid bound, only a weaker one.
    ``col_lo`` / ``col_hi`` replace the model's column bounds (a branch-and-bound node's
    fixings, :mod:`placement.models.tetris_bound.branch`): the bound is then that node's.
    Returns the bound and its parts (``stats``).

    ``polish`` (default) first maximizes the value exactly over the multiplier of each *choice row*
    (``sum_j x_j = 1`` over columns ``x_j in [0, u_j]``: one home per table, one majority region per
    analytics job, one overload level per GPU cell), the others held: see :func:`polish_duals`. Any
    multipliers are valid, so this only raises the bound (the larger of the two values is returned;
    ``stats["dual_unpolished"]`` is the other). ``exact=False`` sums the parts with numpy (the
    branching's nodes: 3 ms instead of 7 at 1,000 tables, a wider margin). Why: an interior-point solver leaves free
    multipliers on such rows that are far from their best values (3.4e11 on the home row of a table
    whose other homes the fixings closed, cancelled by its open column's reduced cost), and stopped
    early or "imprecise" its multipliers lose value there (Tetris page).
    """
    value, clipped, row_part, col_part = _lagrangian(m, row_dual, m.cost, m.offset, col_lo, col_hi, "duals", exact)
    stats = {"dual_clipped_rows": clipped, "dual_row_part": row_part, "dual_col_part": col_part}
    if polish:
        y2, n_rows = polish_duals(m, row_dual, col_lo, col_hi)
        v2, _, rp2, cp2 = _lagrangian(m, y2, m.cost, m.offset, col_lo, col_hi, "duals", exact)
        stats.update(dual_unpolished=value, polished_rows=n_rows)
        if v2 > value:
            value = v2
            stats.update(dual_row_part=rp2, dual_col_part=cp2)
    return value, stats


def _choice_rows(m: BoundModel, ri, rj, rv, lo, hi, lo_c, hi_c) -> tuple[np.ndarray, np.ndarray]:
    """Entries (row, column) of the *choice rows*: ``lo = hi = 1``, every coefficient 1, every
    column's lower bound 0 and upper bound finite, and no column in two of them (those rows are dropped)."""
    one = (lo == 1.0) & (hi == 1.0)
    bad = np.bincount(ri, weights=(rv != 1.0) | (lo_c[rj] != 0.0) | ~np.isfinite(hi_c[rj]), minlength=len(lo)) > 0
    cand = one & ~bad
    e = np.flatnonzero(cand[ri])
    uses = np.bincount(rj[e], minlength=m.n_cols)
    shared = np.bincount(ri[e], weights=uses[rj[e]] > 1, minlength=len(lo)) > 0
    e = e[~shared[ri[e]]]
    return ri[e], rj[e]


def polish_duals(m: BoundModel, row_dual: np.ndarray, col_lo: np.ndarray | None = None,
                 col_hi: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """The multipliers with each choice row's entry replaced by its exact maximizer (the others held).

    On a choice row ``sum_j x_j = 1``, ``0 <= x_j <= u_j``, whose columns are in no other choice row,
    the Lagrangian value as a function of the row's multiplier ``t`` alone is
    ``t + sum_j min(0, u_j (c'_j - t)) + const`` (``c'_j`` the column's reduced cost without this
    row): concave, slope ``1 - sum_{j: c'_j < t} u_j``, so its maximum is at the smallest ``c'_j``
    (in increasing order) at which the ``u_j`` summed reach 1. The rows are column-disjoint, so all
    are set at once and the value rises by the sum of their gains. A row whose ``u`` sum to less than
    1 (no feasible point) keeps its multiplier. Returns the new multipliers and how many rows moved.
    """
    rows = m.rows
    y = np.asarray(row_dual, dtype=float).copy()
    y[~np.isfinite(y)] = 0.0
    ri, rj, rv = np.concatenate(rows.i), np.concatenate(rows.j), np.concatenate(rows.v)
    lo, hi = np.concatenate(rows.lo), np.concatenate(rows.hi)
    lo_c = m.col_lo if col_lo is None else col_lo
    hi_c = m.col_hi if col_hi is None else col_hi
    ci, cj = _choice_rows(m, ri, rj, rv, lo, hi, lo_c, hi_c)
    if not len(ci):
        return y, 0
    yc, _ = _clip_multipliers(y, lo, hi)
    r = m.cost - np.bincount(rj, weights=rv * yc[ri], minlength=m.n_cols)
    cp = r[cj] + yc[ci]                                   # reduced cost without the choice row
    u = np.maximum(hi_c[cj], 0.0)
    order = np.lexsort((cp, ci))
    ci, cp, u = ci[order], cp[order], u[order]
    start = np.r_[0, np.flatnonzero(np.diff(ci)) + 1]
    cum = np.cumsum(u)
    before = np.repeat(cum[start] - u[start], np.diff(np.r_[start, len(ci)]))
    reach = (cum - before) >= 1.0
    # the first entry of each row at which the u reach 1
    first = np.flatnonzero(reach & np.r_[True, (ci[1:] != ci[:-1]) | ~reach[:-1]])
    first = first[np.r_[True, ci[first][1:] != ci[first][:-1]]] if len(first) else first
    y[ci[first]] = cp[first]
    return y, int(len(first))


def _clip_multipliers(mult: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, int]:
    """A copy of the multipliers with non-finite ones set to 0, and 0 wherever the row side a multiplier
    prices is infinite (``y > 0`` needs a finite ``lo``, ``y < 0`` a finite ``hi``); with how many
    finite multipliers were clipped that way."""
    y = np.asarray(mult, dtype=float).copy()
    y[~np.isfinite(y)] = 0.0
    bad = ((y > 0) & ~np.isfinite(lo)) | ((y < 0) & ~np.isfinite(hi))
    y[bad] = 0.0
    return y, int(bad.sum())


def _lagrangian(m: BoundModel, mult: np.ndarray, cost, offset: float, col_lo, col_hi,
                what: str, exact: bool = True) -> tuple[float, int, float, float]:
    """``offset + sum_i y_i^+ lo_i - y_i^- hi_i + sum_j min(r_j l_j, r_j u_j)`` with ``r = cost - A'y``
    at the multipliers ``mult`` (clipped to 0 where the row side they multiply is infinite),
    less a bound on its floating-point error (:func:`_rounding_margin`); with the clipped count and
    both parts.
    :func:`dual_bound` (the model's cost) and :func:`farkas_value` (no cost) share it."""
    rows = m.rows
    lo, hi = np.concatenate(rows.lo), np.concatenate(rows.hi)
    if len(mult) != len(lo):
        raise RuntimeError(f"tetris_bound: {len(mult)} {what} for {len(lo)} rows (a bug)")
    y, clipped = _clip_multipliers(mult, lo, hi)
    lo_y, hi_y = np.where(y > 0, lo, 0.0), np.where(y < 0, hi, 0.0)
    aty = np.zeros(m.n_cols)
    mag = np.zeros(m.n_cols)
    for i, j, v in zip(rows.i, rows.j, rows.v, strict=True):
        vy = v * y[i]
        aty += np.bincount(j, weights=vy, minlength=m.n_cols)
        mag += np.bincount(j, weights=np.abs(vy), minlength=m.n_cols)
    r = cost - aty
    lo_c = m.col_lo if col_lo is None else col_lo
    hi_c = m.col_hi if col_hi is None else col_hi
    col_terms = np.minimum(r * lo_c, r * hi_c)
    row_terms = np.where(y > 0, y * lo_y, 0.0) + np.where(y < 0, y * hi_y, 0.0)
    if exact:   # the parts summed exactly (math.fsum); else numpy's sum, its error in the margin
        row_part, col_part = math.fsum(row_terms.tolist()), math.fsum(col_terms.tolist())
    else:
        row_part, col_part = float(row_terms.sum()), float(col_terms.sum())
    margin = _rounding_margin(_entry_counts(m), mag, cost, r, lo_c, hi_c, row_terms, col_terms, offset, exact)
    return offset + row_part + col_part - margin, clipped, row_part, col_part


def _entry_counts(m: BoundModel) -> np.ndarray:
    """Entries per column of ``m``'s matrix, cached until rows are added (tangent rounds)."""
    key = (m.rows.n, len(m.rows.i))
    cached = getattr(m, "_counts", None)
    if cached is None or cached[0] != key:
        cnt = np.zeros(m.n_cols)
        for j in m.rows.j:
            cnt += np.bincount(j, minlength=m.n_cols)
        m._counts = (key, cnt)
    return m._counts[1]


def _rounding_margin(cnt, mag, cost, r, lo_c, hi_c, row_terms, col_terms, offset, exact: bool) -> float:
    """A bound on the floating-point error of :func:`_lagrangian`'s value, twice the textbook one
    (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., eq. (4.4) and Lemma 3.1):
    ``(A'y)_j`` summed entry by entry (``np.bincount``) over ``n_j`` products is within
    ``gamma_{n_j + 1} sum_i |a_ij y_i|`` of the exact value, ``gamma_n = n u / (1 - n u)`` with the unit
    roundoff ``u = 2^-53``; the subtraction from the cost, the products with the column bounds and the
    row terms add ``u`` of each magnitude; the two parts are summed exactly (``math.fsum``; with
    ``exact=False`` by numpy, ``gamma`` of the number of terms times their magnitudes: faster, for the
    branching's many nodes) and added with ``u`` of their magnitudes. The earlier margin, 1e-9 of every magnitude summed, was
    far above this and cost the bound 1% at 1,000 tables, where an interior point leaves free row
    multipliers of 1e11 that cancel in the sum (Tetris page)."""
    u = 2.0 ** -53
    gamma = _gamma(cnt + 2.0, u)
    width = np.maximum(np.abs(lo_c), np.where(np.isfinite(hi_c), np.abs(hi_c), 0.0))
    err_r = gamma * mag + u * (np.abs(cost) + np.abs(r))          # |computed r_j - exact r_j|
    a_row, a_col = float(np.abs(row_terms).sum()), float(np.abs(col_terms).sum())
    err = float((err_r * width).sum()) + 2.0 * u * (a_row + a_col)
    if not exact:   # the two parts summed in any order (Higham (4.4): gamma_{n-1} of the magnitudes)
        err += float(_gamma(len(row_terms), u)) * a_row + float(_gamma(len(col_terms), u)) * a_col
    err += 4.0 * u * (abs(offset) + a_row + a_col)
    return 2.0 * err


def _gamma(n, u: float):
    """Higham's ``gamma_n = n u / (1 - n u)`` (scalar or per entry; the denominator floored at 1/2)."""
    return n * u / np.maximum(1.0 - n * u, 0.5)


def farkas_value(m: BoundModel, ray: np.ndarray, col_lo: np.ndarray | None = None,
                 col_hi: np.ndarray | None = None) -> float:
    """The infeasibility certificate of a row-multiplier ray, computed in numpy: positive means no point exists.

    For ``lo <= A x <= hi``, ``l <= x <= u`` and any ``y`` (clipped to 0 where the row side it
    multiplies is infinite), every feasible ``x`` has ``0 = y'Ax - y'Ax >= psi(y)`` with
    ``psi(y) = sum_i y_i^+ lo_i - y_i^- hi_i + sum_j min(-(A'y)_j l_j, -(A'y)_j u_j)``
    (the cost-free part of :func:`dual_bound`), so ``psi(y) > 0`` proves the system empty.
    Returns ``psi`` minus a bound on its floating-point error (:func:`_rounding_margin`).
    """
    return _lagrangian(m, ray, 0.0, 0.0, col_lo, col_hi, "ray entries")[0]


def subset_sums(values: np.ndarray, top: int, cap: int | None = None) -> np.ndarray | None:
    """Every subset sum of the integers ``values`` up to ``top``, sorted (int64), or None when ``top``
    exceeds ``SUBSET_SUM_BITS`` (a bitset of ``top + 1`` bits, one shift per value) or, with ``cap``,
    when there are more than ``cap`` sums (the chords' ``MAX_CHORD_VALUES``)."""
    if top > SUBSET_SUM_BITS:
        return None
    bits, mask = 1, (1 << (top + 1)) - 1
    for v in np.asarray(values).tolist():
        bits = (bits | (bits << int(v))) & mask
        if cap is not None and bits.bit_count() > cap:
            return None
    raw = np.frombuffer(bits.to_bytes(top // 8 + 1, "little"), dtype=np.uint8)
    return np.flatnonzero(np.unpackbits(raw, bitorder="little")).astype(np.int64)


def _chord_values(values: np.ndarray, top: int) -> np.ndarray | None:
    """The chords' points: :func:`subset_sums` capped at ``MAX_CHORD_VALUES``, as floats."""
    out = subset_sums(values, top, cap=MAX_CHORD_VALUES)
    return None if out is None else out.astype(float)


def build(inst: TetrisInstance, *, integer: bool = False, tangents: int = GRID_TANGENTS,
          analytics_hull: bool = True, dense_row: int = DENSE_ROW, exact_argmax: bool = False,
          fixings: bool = True) -> BoundModel:
    """The relaxation of Figure 4 in matrix form (module docstring); ``integer`` keeps x, b, y integer;
    ``analytics_hull=False`` writes the analytics majority as the exact model's big-M rows (weaker LP);
    ``exact_argmax`` adds the exact model's argmax rows for analytics jobs under a CPU limit (change 3
    undone: with ``integer`` every solution is then a feasible placement); ``fixings`` (default) closes
    the columns (5) forbids in every feasible placement (:mod:`placement.models.tetris_bound.fixings`)."""
    return BoundModel(inst, integer, tangents, analytics_hull, dense_row, exact_argmax, fixings)


def run_until(h, deadline: float) -> None:
    """Run HiGHS until ``deadline`` (``time.perf_counter()``): its ``time_limit`` counts the run time
    summed over all runs of one ``Highs`` object (ERGO-Code/HiGHS#1477), so the limit is that sum
    plus what is left (at least 0.01 s)."""
    h.setOptionValue("time_limit", h.getRunTime() + max(0.01, deadline - time.perf_counter()))
    h.run()


def add_tangents(m: BoundModel, h, x: np.ndarray, tol: float) -> int:
    """One outer-approximation round at the LP solution ``x``: a tangent at every square violated by
    more than ``tol`` (:meth:`BoundModel.violated`), added to HiGHS and to ``m.rows`` (the same rows in
    the same order, so :func:`dual_bound` sees them); returns how many (0: none violated)."""
    import highspy

    bad, at = m.violated(x, tol)
    if not len(bad):
        return 0
    rid, cols, vals, rhs = m.tangent_block(bad, at)
    if not len(rhs):
        return 0
    starts = np.searchsorted(rid, np.arange(len(rhs) + 1)).astype(np.int32)
    h.addRows(len(rhs), rhs, np.full(len(rhs), highspy.kHighsInf), len(vals), starts, cols.astype(np.int32), vals)
    m.rows.add(rid, cols, vals, rhs, np.inf, len(rhs))
    return len(rhs)


def highs_model(m: BoundModel, time_limit: float, mip_gap: float):
    """A ``highspy.Highs`` holding the model ``m`` (one thread, presolve off, ``time_limit`` and
    ``mip_rel_gap`` set; duplicate entries summed, zeros dropped) and its number of nonzeros."""
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    h.setOptionValue("presolve", "off")
    h.setOptionValue("time_limit", max(0.01, float(time_limit)))
    h.setOptionValue("mip_rel_gap", float(mip_gap))
    inf = highspy.kHighsInf
    rows = m.rows
    ri, rj, rv = np.concatenate(rows.i), np.concatenate(rows.j), np.concatenate(rows.v)
    if len(ri) and not (0 <= ri.min() and ri.max() < rows.n and 0 <= rj.min() and rj.max() < m.n_cols):
        raise RuntimeError("tetris_bound: an index outside the matrix (a bug)")
    # Jobs reading the same single table share its x columns: duplicate entries are summed.
    key, inv = np.unique(rj * np.int64(rows.n) + ri, return_inverse=True)
    rv = np.bincount(inv.ravel(), weights=rv, minlength=len(key))
    rj, ri = key // rows.n, key % rows.n
    keep = rv != 0.0
    ri, rj, rv = ri[keep], rj[keep], rv[keep]
    rlo, rhi = np.concatenate(rows.lo), np.concatenate(rows.hi)
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = m.n_cols, rows.n
    lp.col_cost_ = m.cost
    lp.col_lower_ = m.col_lo
    lp.col_upper_ = np.where(np.isinf(m.col_hi), inf, m.col_hi)
    lp.row_lower_ = np.where(np.isinf(rlo), -inf, rlo)
    lp.row_upper_ = np.where(np.isinf(rhi), inf, rhi)
    lp.offset_ = m.offset
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise   # np.unique sorted the keys column by column
    lp.a_matrix_.start_ = np.searchsorted(rj, np.arange(m.n_cols + 1)).astype(np.int32)
    lp.a_matrix_.index_ = ri.astype(np.int32)
    lp.a_matrix_.value_ = rv
    lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = m.n_cols, rows.n
    if m.integer:
        lp.integrality_ = [highspy.HighsVarType.kInteger if b else highspy.HighsVarType.kContinuous
                           for b in m.integ]
    del ri, rj, rv
    h.passModel(lp)
    return h, int(keep.sum())


def peak_rss_mb() -> float:
    """The process's peak resident set size in MB (Linux ``ru_maxrss`` is in KB)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
