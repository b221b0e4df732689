"""The "lagrange" method of the Tetris lower bound: a Lagrangian decomposition in numpy, linear in tables.

MAST Figure 4, expressions (1)-(9). The LP (:mod:`placement.models.tetris_bound.lp`) does not
finish at 10,000 tables; this bound's work per evaluation is one pass over the (table, region)
and (job, region) pairs, so it runs at 100,000 tables. The linking quantities -- the demand
shares ``y[r,g,k] = D[r,g,k]/TD[g,k]`` and the stored share ``SD[r]/sum(size)`` -- are copied
and the copies' equality is dualized with multipliers ``lam[r,g,k]`` and ``mu[r]``; for any
multipliers the value below is at most the optimum (weak duality), so every evaluated point is a
certified bound and the ascent only decides how good it is.

For any placement the objective is at least the sum of three independent minima:

* **tables** (each table with its readers whole): table ``t`` at region ``rho`` costs
  ``mu[rho] size_t/sum(size)`` + ``sum lam[rho,g_j,k_j] sigma_j`` over its single-table ML
  readers (they are in ``rho``: R(job) is the common home) + for each multi-table ML job
  charged to ``t`` (one table per job, the one with most readers, as the hot-table bound)
  ``min(w1 size_j, lam[rho,g_j,k_j] sigma_j)`` (in ``rho`` or NULL, which expression (1)
  charges all its bytes) + ``alpha`` times the table's own overload
  ``w2 sum_{g,k} w_k sigmoid(max(0, e_g - S[rho,g])) (e_{g,k} - s[rho,g])_+^2`` of its
  single readers' shares ``e``: ``(u - s)_+^2`` is convex and 0 at 0, hence superadditive, so
  the demand of several tables in one region costs at least the sum of their own overloads
  (:mod:`placement.models.tetris_bound.hot`'s argument), and the rest of that square,
  ``(1 - alpha)``, stays below. Analytics jobs' bytes (at least 0), (4)-(6) and the quota are
  dropped; each only raises the optimum;
* **GPU cells** ``(r, g)``: ``min over y in [0,1]^K`` of ``w2 sigmoid(max(0, D - S)) sum_k w_k
  q(y_k - s) - sum_k lam_k y_k`` with ``q(u) = (1 - alpha) u_+^2 + u_-^2``. ``D`` is an integer
  (GPU-hours are), so the cell splits into levels ``D <= S`` (sigmoid 1/2), ``D = S + l`` for
  ``l = 1..L-1`` and ``D >= S + L`` (the sigmoid at least its value at the level's bottom);
  each level is a separable convex problem with one linear row whose dual function is
  evaluated exactly in closed form at a bisected multiplier -- every multiplier gives a
  lower bound of that level, so the cell's term is the minimum over levels of those values;
* **storage** per region: ``min over SD in [0, min(cap, sum(size))]`` of ``w3 (SD/sum(size) -
  cap/sum(cap))^2 - mu SD/sum(size)`` in closed form ((4) kept as the domain).

The multipliers are raised by a box-step cutting-plane method (Kelley's cuts from the
supergradients, an LP in the ``R(GK + 1)`` multipliers solved by HiGHS, the box grown after an
improving step and shrunk after a failed one). With ``alpha = 0`` the decomposition has the value
of a relaxation no tighter than the LP's (a job's region choice against linear prices is a
vertex); ``alpha > 0`` keeps each hot table's single readers whole in one region, which the LP
spreads. The bound reported is the best evaluated value less a rounding margin of 1e-9 of the
magnitudes summed, and is at most the optimum on every proven instance (tests).

Statuses: ``optimal`` (the ascent stopped: no cut predicts a gain above ``tol``; the bound is
the decomposition's value within ``tol``, not the problem's optimum), ``time_limit`` (the time
limit or ``max_iter`` evaluations, ``stats["stopped_by"]`` says which: the best bound so far,
valid), ``error`` (the memory estimate exceeds ``max_memory_mb``; nothing allocated).
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from placement.errors import InstanceError
from placement.result import SolveResult, Status
from placement.tetris import TetrisInstance, sigmoid

from . import hot
from .fixings import cpu_fixings
from .relaxation import peak_rss_mb

__all__ = ["solve", "Decomposition", "LEVELS", "MAX_MEMORY_MB", "memory_estimate_mb"]

MAX_MEMORY_MB = 12_000.0   # the default refusal threshold of the memory estimate
LEVELS = 12          # overload levels per GPU cell; sigmoid(12) = 1 - 6e-6
REL_SAFETY = 1e-9
_BISECT = 60


def memory_estimate_mb(inst: TetrisInstance) -> float:
    """Peak bytes of one evaluation, estimated before anything is allocated: a few (table, region)
    and (multi-table job, region) float arrays and the sparse incidences."""
    T, J, R = inst.n_tables, inst.n_jobs, inst.n_regions
    entries = len(inst.arrays.job_tab)
    return (8.0 * (6 * T * R + 4 * J * R) + 40.0 * (entries + T + J)) / 2 ** 20 + 50.0


class Decomposition:
    """The three blocks of the module docstring for one instance and ``alpha``; :meth:`value`
    evaluates the Lagrangian at the multipliers ``(lam [R, G*K], mu [R])``."""

    def __init__(self, inst: TetrisInstance, alpha: float = 0.5, levels: int = LEVELS, cpu: bool = False):
        if not 0.0 <= alpha <= 1.0:
            raise InstanceError("alpha", f"must be in [0, 1], got {alpha!r}")
        A = inst.arrays
        self.inst, self.alpha, self.L = inst, float(alpha), int(levels)
        R, T = inst.n_regions, inst.n_tables
        G, K = A.total_demand.shape
        self.R, self.T, self.G, self.K, self.GK = R, T, G, K, G * K
        self.w1, self.w2, self.w3 = float(inst.w1), float(inst.w2), float(inst.w3)
        TD = A.total_demand.astype(float)
        self.TD = TD
        TS = A.total_supply.astype(float)
        self.s = np.where(TS[None, :] > 0, A.supply / np.where(TS > 0, TS, 1.0)[None, :], 0.0)   # [R, G]
        self.on = (TD > 0).ravel()                                                              # [GK]
        lens = np.diff(A.job_ptr)
        J = len(lens)
        ml = A.job_ml.astype(bool) & (lens > 0)
        starts = np.minimum(A.job_ptr[:-1], max(0, len(A.job_tab) - 1))
        if len(A.job_tab):
            tmin = np.minimum.reduceat(A.job_tab, starts)
            tmax = np.maximum.reduceat(A.job_tab, starts)
        else:
            tmin = tmax = np.zeros(J, dtype=np.int64)
        single = ml & (tmin == tmax)
        multi = ml & ~single
        gk = np.where(ml, A.job_gpu * K + A.job_prio, 0)
        sig = np.where(ml, A.job_gh / np.where(TD > 0, TD, 1.0)[np.maximum(A.job_gpu, 0), np.maximum(A.job_prio, 0)],
                       0.0)
        js = np.flatnonzero(single)
        self.s_tab, self.s_gk, self.s_sig = tmin[js], gk[js], sig[js]
        self.s_g = np.maximum(A.job_gpu[js], 0)
        self.S = sp.csr_matrix((self.s_sig, (self.s_tab, self.s_gk)), shape=(T, self.GK))
        _, owner = hot.table_costs(inst, np.zeros(0, dtype=np.int64))
        jm = np.flatnonzero(multi)
        self.m_own, self.m_gk, self.m_sig = owner[jm], gk[jm], sig[jm]
        self.m_null = self.w1 * A.job_size[jm].astype(float)
        self.jm = jm
        self.M = sp.csr_matrix((np.ones(len(jm)), (self.m_own, np.arange(len(jm)))), shape=(T, len(jm)))
        self.tsz = float(A.total_size)
        self.size_share = A.size / self.tsz if self.tsz > 0 else np.zeros(T)
        cap = A.storage_cap.astype(float)
        self.st_target = cap / max(1.0, float(A.total_capacity))
        self.st_top = np.minimum(cap, self.tsz) / self.tsz if self.tsz > 0 else np.zeros(R)
        # the quota and (6), dualized with multipliers rho >= 0 and nu >= 0
        self.quota = None if inst.move_quota is None else float(inst.move_quota)
        self.home0 = A.home0
        self.threshold = float(inst.home_threshold)
        has = (A.supply > 0).astype(float)                                               # [R, G]
        self.has = has
        hi_gh = np.where(A.job_high.astype(bool) & ml, A.job_gh, 0).astype(float)
        self.s_hi = hi_gh[js]
        self.H = sp.csr_matrix((self.s_hi, (self.s_tab, np.maximum(A.job_gpu[js], 0))), shape=(T, G))
        self.m_hi, self.m_g = hi_gh[jm], np.maximum(A.job_gpu[jm], 0)
        # (5): CPU per capped (app, region), dualized with kappa >= 0
        cap5 = np.isfinite(A.cpu_cap) & cpu
        self.cap_a, self.cap_r = np.nonzero(cap5)
        self.cap_v = A.cpu_cap[cap5].astype(float)
        self.nA = A.cpu_cap.shape[0]
        app = A.job_app
        jcpu = A.job_cpu.astype(float)
        # an analytics job without bytes is in region 0 whatever the homes: a constant use there
        no_bytes = ~A.job_ml.astype(bool) & (A.job_size == 0) & (lens > 0) & (app >= 0) & (jcpu > 0)
        self.z_app, self.z_cpu = app[no_bytes], jcpu[no_bytes]
        one = (tmin == tmax) & (lens > 0) & (app >= 0) & ~no_bytes
        j1 = np.flatnonzero(one & (jcpu > 0))
        self.c1_tab, self.c1_app, self.c1_cpu = tmin[j1], app[j1], jcpu[j1]
        self.Cpu = sp.csr_matrix((self.c1_cpu, (self.c1_tab, self.c1_app)), shape=(T, max(1, self.nA)))
        self.m_app = app[jm]
        self.m_cpu = np.where(self.m_app >= 0, jcpu[jm], 0.0)
        ja = np.flatnonzero(~A.job_ml.astype(bool) & ~one & ~no_bytes & (lens > 0) & (app >= 0) & (jcpu > 0))
        self.a_app, self.a_cpu = app[ja], jcpu[ja]
        self.P = self._own_overload() if self.alpha > 0 else None
        # (5)'s fixings (.fixings): homes and job regions no feasible placement has are closed
        fx = cpu_fixings(inst)
        m_forbid = fx.job[jm]
        self.forbid = fx.table if fx.table.any() else None
        self.m_forbid = m_forbid if m_forbid.any() else None
        self.fixings = {"homes_closed": fx.n_table, "tables_fixed": fx.fixed_tables,
                        "job_regions_closed": int(m_forbid.sum()), "rounds": fx.rounds}
        self._cells()

    # -- the tables' block ------------------------------------------------------------------
    def _own_overload(self) -> tuple[np.ndarray, np.ndarray]:
        """(tables, P[tables, R]): each table's own overload term (module docstring), for the tables
        whose single readers exceed some region's supply share in some (g, k)."""
        A, R, G, K = self.inst.arrays, self.R, self.G, self.K
        e = self.S.toarray() if self.T * self.GK <= 5e7 else None
        if e is None:   # keep memory bounded: only tables with a large share somewhere
            rows = np.unique(self.s_tab[self.s_sig > float(self.s.min())])
            e_rows = self.S[rows].toarray()
        else:
            e_rows = e
            rows = np.arange(self.T)
        smin = self.s.min(axis=0)                                        # [G]
        hot_rows = (e_rows.reshape(len(rows), G, K) > smin[None, :, None]).any(axis=(1, 2))
        rows, e3 = rows[hot_rows], e_rows[hot_rows].reshape(-1, G, K)
        gh = (e3 * self.TD[None]).sum(axis=2)                            # single readers' GPU-hours [n, G]
        P = np.zeros((len(rows), R))
        wk = np.asarray(A.prio_w, dtype=float)
        for r in range(R):
            c = sigmoid(np.maximum(0.0, gh - A.supply[r][None, :]))      # [n, G]
            over = np.maximum(0.0, e3 - self.s[r][None, :, None]) ** 2 * (self.TD > 0)[None]
            P[:, r] = self.w2 * np.einsum("ng,ngk,k->n", c, over, wk)
        return rows, P

    def tables(self, lam: np.ndarray, mu: np.ndarray, rho: float = 0.0, nu: float = 0.0,
               kap: np.ndarray | None = None) -> tuple:
        """(value, magnitude, d lam, d mu, d rho, d nu) of the tables' block at ``(lam [R, GK], mu [R])``
        and the quota's and (6)'s multipliers ``rho``, ``nu`` (their constants included)."""
        C, place = self.unary(lam, mu, rho, nu, kap)
        total, mag_t, home, hr, placed = self._homes(C, place)
        del place
        const = (-rho * self.quota if self.quota is not None else 0.0) + nu * self.threshold
        use = np.zeros((max(1, self.nA), self.R))
        np.add.at(use[:, 0], self.z_app, self.z_cpu)          # analytics jobs without bytes: region 0
        if kap is not None:
            const -= float(kap[self.cap_a, self.cap_r] @ self.cap_v)
            const += float(kap[self.z_app, 0] @ self.z_cpu)
            if len(self.a_app):   # multi-table analytics jobs: in some region, at least the cheapest
                ca = kap[self.a_app] * self.a_cpu[:, None]
                ra = np.argmin(ca, axis=1)
                const += float(ca[np.arange(len(ra)), ra].sum())
                np.add.at(use, (self.a_app, ra), self.a_cpu)
        value, mag = total + const, mag_t + abs(const)
        del C
        d_lam = np.bincount(home[self.s_tab] * self.GK + self.s_gk, weights=self.s_sig,
                            minlength=self.R * self.GK).astype(float)
        credit = float((self.s_hi * self.has[home[self.s_tab], self.s_g]).sum())
        if len(self.m_own):
            cr = self.m_hi * self.has[hr, self.m_g]
            pm = placed & (self.m_app >= 0)
            np.add.at(use, (self.m_app[pm], hr[pm]), self.m_cpu[pm])
            d_lam += np.bincount(hr[placed] * self.GK + self.m_gk[placed], weights=self.m_sig[placed],
                                 minlength=self.R * self.GK)
            credit += float(cr[placed].sum())
        d_mu = np.bincount(home, weights=self.size_share, minlength=self.R).astype(float)
        moved = float(self.inst.arrays.size[home != self.home0].sum())
        d_rho = moved - self.quota if self.quota is not None else 0.0
        np.add.at(use, (self.c1_app, home[self.c1_tab]), self.c1_cpu)
        d_kap = use[self.cap_a, self.cap_r] - self.cap_v
        return value, mag, d_lam.reshape(self.R, self.GK), d_mu, d_rho, self.threshold - credit, d_kap

    def unary(self, lam: np.ndarray, mu: np.ndarray, rho: float = 0.0, nu: float = 0.0,
              kap: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
        """``(C [T, R], place [Jm, R])``: each table's cost per home without the multi-table ML jobs,
        and those jobs' prices per region (``None`` without such jobs)."""
        C = np.asarray(self.S @ lam.T)                                   # [T, R]
        C += self.size_share[:, None] * mu[None, :]
        if rho:
            C += rho * self.inst.arrays.size[:, None] * (np.arange(self.R)[None, :] != self.home0[:, None])
        if nu:
            C -= nu * np.asarray(self.H @ self.has.T)
        if kap is not None:
            C += np.asarray(self.Cpu @ kap)
        if self.P is not None and len(self.P[0]):
            C[self.P[0]] += self.alpha * self.P[1]
        if self.forbid is not None:
            C[self.forbid] = np.inf
        place = None
        if len(self.m_own):
            place = lam[:, self.m_gk].T * self.m_sig[:, None]              # [Jm, R]
            if nu:
                place -= nu * self.m_hi[:, None] * self.has[:, self.m_g].T
            if kap is not None:
                place += kap[np.maximum(self.m_app, 0)] * self.m_cpu[:, None]
            if self.m_forbid is not None:
                place[self.m_forbid] = np.inf
        return C, place

    def _homes(self, C: np.ndarray, place: np.ndarray | None) -> tuple:
        """The tables' choice at unary costs ``C [T, R]`` and the multi-table ML jobs' prices
        ``place [Jm, R]``: each job charged to its owner table, ``min(null, price)`` there. Returns
        (value, magnitude, home [T], each multi-table job's region [Jm], placed [Jm])."""
        if place is not None:
            C += np.asarray(self.M @ np.minimum(self.m_null[:, None], place))
        home = np.argmin(C, axis=1) if self.T else np.zeros(0, dtype=np.int64)
        best = C[np.arange(self.T), home]
        hr = home[self.m_own]
        placed = (place[np.arange(len(hr)), hr] < self.m_null) if place is not None else np.zeros(0, dtype=bool)
        return float(best.sum()), float(np.abs(best).sum()), home, hr, placed

    def extra_stats(self) -> dict:
        """Statistics a subclass adds to the result (here (5)'s fixings, :mod:`.fixings`)."""
        return {"fixings": dict(self.fixings)}

    # -- the GPU cells' block ------------------------------------------------------------------
    def _cells(self) -> None:
        """Per (cell, level) row: the level's sigmoid floor, demand interval and the K coefficients."""
        A, R, G, K, L = self.inst.arrays, self.R, self.G, self.K, self.L
        rows_r, rows_g, lo, hi, c = [], [], [], [], []
        for r in range(R):
            for g in range(G):
                if not (self.TD[g] > 0).any():
                    continue
                S, top = float(A.supply[r, g]), float(self.TD[g].sum())
                for lev in range(L + 1):
                    a, b = (0.0, S) if lev == 0 else ((S + lev, S + lev) if lev < L else (S + L, np.inf))
                    if a > top:
                        break
                    rows_r.append(r)
                    rows_g.append(g)
                    lo.append(a)
                    hi.append(b)
                    c.append(float(sigmoid(float(lev))))
        self.c_r, self.c_g = np.asarray(rows_r, dtype=np.int64), np.asarray(rows_g, dtype=np.int64)
        self.c_lo, self.c_hi, self.c_sig = np.asarray(lo), np.asarray(hi), np.asarray(c)
        wk = np.asarray(A.prio_w, dtype=float)
        self.c_A = self.w2 * self.c_sig[:, None] * wk[None, :] * (self.TD[self.c_g] > 0)   # [n, K]
        self.c_TD = self.TD[self.c_g]                                                        # [n, K]
        self.c_s = self.s[self.c_r, self.c_g][:, None] * np.ones((1, K))

    def _inner(self, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Exact ``min over y in [0,1]`` of ``A q(y - s) - b y`` per entry, and the minimizer."""
        A, s, a = self.c_A, self.c_s, 1.0 - self.alpha

        def f(y):
            u = y - s
            return A * (a * np.maximum(u, 0.0) ** 2 + np.minimum(u, 0.0) ** 2) - b * y

        safe = np.where(A > 0, A, 1.0)
        cands = [np.zeros_like(b), s, np.ones_like(b), np.clip(s + b / (2.0 * safe), 0.0, s)]
        if a > 0:
            cands.append(np.clip(s + b / (2.0 * safe * a), s, 1.0))
        vals = np.stack([f(y) for y in cands])
        i = np.argmin(vals, axis=0)
        return np.take_along_axis(vals, i[None], 0)[0], np.take_along_axis(np.stack(cands), i[None], 0)[0]

    def _level_value(self, lam_rows: np.ndarray, nu: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        on = self.c_TD > 0
        vals, y = self._inner(np.where(on, lam_rows + nu[:, None] * self.c_TD, 0.0))
        vals, y = np.where(on, vals, 0.0), np.where(on, y, 0.0)
        hi = np.where(np.isfinite(self.c_hi), self.c_hi, 0.0)
        side = np.where(nu >= 0, nu * self.c_lo, np.where(np.isfinite(self.c_hi), nu * hi, -np.inf))
        return vals.sum(axis=1) + side, y, (self.c_TD * y).sum(axis=1)

    def cells(self, lam: np.ndarray) -> tuple[float, float, np.ndarray]:
        """(value, magnitude, -d lam) of the GPU cells' block: per cell the minimum over levels of each
        level's dual function at a bisected multiplier ``nu`` (any ``nu`` is a valid level bound)."""
        n = len(self.c_r)
        if not n:
            return 0.0, 0.0, np.zeros((self.R, self.GK))
        lam_rows = lam.reshape(self.R, self.G, self.K)[self.c_r, self.c_g]             # [n, K]
        on = self.c_TD > 0
        big = np.where(on, (2.0 * self.c_A + np.abs(lam_rows)) / np.where(on, self.c_TD, 1.0), 0.0).max(axis=1) + 1.0
        lo_nu = np.where(np.isfinite(self.c_hi), -big, 0.0)
        hi_nu = big.copy()
        for _ in range(_BISECT):
            mid = 0.5 * (lo_nu + hi_nu)
            _, _, tot = self._level_value(lam_rows, mid)
            slope = np.where(mid >= 0, self.c_lo - tot, self.c_hi - tot)
            up = slope > 0
            lo_nu, hi_nu = np.where(up, mid, lo_nu), np.where(up, hi_nu, mid)
        v1, y1, _ = self._level_value(lam_rows, lo_nu)
        v2, y2, _ = self._level_value(lam_rows, hi_nu)
        pick = v2 > v1
        v, y = np.where(pick, v2, v1), np.where(pick[:, None], y2, y1)
        # the cell's value: the lowest level
        cell = self.c_r * self.G + self.c_g
        order = np.lexsort((v, cell))
        first = np.ones(n, dtype=bool)
        first[1:] = cell[order][1:] != cell[order][:-1]
        best = order[first]
        value = float(v[best].sum())
        mag = float(np.abs(v[best]).sum()) + float(np.abs(self.c_A).sum())
        g = np.zeros((self.R, self.G, self.K))
        g[self.c_r[best], self.c_g[best]] = y[best]
        return value, mag, g.reshape(self.R, self.GK)

    # -- the storage block ----------------------------------------------------------------------
    def storage(self, mu: np.ndarray) -> tuple[float, float, np.ndarray]:
        """(value, magnitude, -d mu) of the storage block, in closed form."""
        if self.tsz <= 0:
            return 0.0, 0.0, np.zeros(self.R)
        w3, t, top = self.w3, self.st_target, self.st_top
        cands = [np.zeros(self.R), top, np.clip(t + mu / (2.0 * w3), 0.0, top) if w3 > 0 else top]
        vals = np.stack([w3 * (y - t) ** 2 - mu * y for y in cands])
        i = np.argmin(vals, axis=0)
        y = np.take_along_axis(np.stack(cands), i[None], 0)[0]
        v = np.take_along_axis(vals, i[None], 0)[0]
        return float(v.sum()), float(np.abs(v).sum()), y

    def start(self, home: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Multipliers at a placement ``home``: the slopes of the cells' and the storage terms there
        (the placement's own prices; the ascent starts from them)."""
        from placement.tetris import evaluate

        ev = evaluate(self.inst, home)
        y = np.where(self.TD[None] > 0, ev.demand / np.where(self.TD > 0, self.TD, 1.0)[None], 0.0)   # [R, G, K]
        sig = sigmoid(np.maximum(0.0, ev.demand.sum(axis=2) - self.inst.arrays.supply))                # [R, G]
        u = y - self.s[:, :, None]
        wk = np.asarray(self.inst.arrays.prio_w, dtype=float)
        slope = 2.0 * u * np.where(u > 0, 1.0 - self.alpha, 1.0)
        lam = self.w2 * sig[:, :, None] * wk[None, None, :] * slope
        mu = np.zeros(self.R)
        if self.tsz > 0:
            mu = 2.0 * self.w3 * (ev.storage_used / self.tsz - self.st_target)
        return lam.reshape(self.R, self.GK), mu

    def _unpack(self, v: np.ndarray) -> tuple:
        R, GK = self.R, self.GK
        lam = np.where(self.on[None, :], v[:R * GK].reshape(R, GK), 0.0)
        mu = v[R * GK:R * GK + R] if self.tsz > 0 else np.zeros(R)
        o = R * GK + R
        rho = max(0.0, float(v[o])) if self.quota is not None else 0.0
        nu = max(0.0, float(v[o + 1]))
        kap = None
        if len(self.cap_v):
            kap = np.zeros((max(1, self.nA), R))
            kap[self.cap_a, self.cap_r] = np.maximum(0.0, v[o + 2:])
        return lam, mu, rho, nu, kap

    def homes(self, v: np.ndarray) -> np.ndarray:
        """The tables' block's minimizer (a home per table) at the multipliers ``v`` (as :meth:`value`):
        a placement to start a heuristic from (it may break (4)-(6) and the quota)."""
        C, place = self.unary(*self._unpack(np.asarray(v, dtype=float)))
        return self._homes(C, place)[2]

    def value(self, v: np.ndarray) -> tuple[float, np.ndarray]:
        """The certified Lagrangian value at the multipliers ``v = (lam [R*GK], mu [R], rho, nu, kappa [capped (app,
        region) pairs])`` (less the
        rounding margin; ``rho``, ``nu``, ``kappa`` clipped at 0, ``rho`` 0 without a quota) and a supergradient."""
        lam, mu, rho, nu, kap = self._unpack(v)
        v1, m1, g_lam, g_mu, g_rho, g_nu, g_kap = self.tables(lam, mu, rho, nu, kap)
        v2, m2, y = self.cells(lam)
        v3, m3, ys = self.storage(mu)
        raw = v1 + v2 + v3
        grad = np.concatenate([np.where(self.on[None, :], g_lam - y, 0.0).ravel(), g_mu - ys, [g_rho, g_nu], g_kap])
        return raw - REL_SAFETY * (m1 + m2 + m3 + abs(raw)), grad


def solve(inst: TetrisInstance, *, time_limit: float = 600.0, alpha: float = 0.5, tol: float = 1e-4,
          max_iter: int = 100_000, max_memory_mb: float = MAX_MEMORY_MB, start: np.ndarray | None = None,
          cpu: bool = False, seed: int = 0, decomposition: type | None = None,
          name: str = "tetris-bound-lagrange") -> SolveResult:
    """The Lagrangian bound (module docstring) as a ``SolveResult``.

    Parameters
    ----------
    alpha : float in [0, 1]
        The share of each square's overload part charged to the hot tables' own overloads.
    tol : float
        Stop when the cutting-plane model predicts less than ``tol`` (relative) above the best value.
    max_iter : int
        Evaluations of the Lagrangian at most.
    cpu : bool
        Dualize (5) too, one multiplier per capped (app, region) pair. Off by default: at 10,000
        tables that is 16,000 more multipliers, and the cutting-plane LP then made 56 evaluations in
        240 s and ended below the bound without them (116,623 against 194,353, seed 52001).
    start : array of int, optional
        A placement (home per table) whose prices start the ascent (:meth:`Decomposition.start`);
        default the instance's current homes. Any start gives a valid bound.
    max_memory_mb : float
        Refuse (status ``error``) when :func:`memory_estimate_mb` exceeds it.
    seed : int
        Unused (the method is deterministic); accepted as every solver's keyword.
    decomposition, name
        The blocks' class (default :class:`Decomposition`; :mod:`.forest` passes its own, whose
        tables' block keeps multi-table ML jobs whole along a spanning forest) and the result's name.
    """
    del seed
    decomposition = Decomposition if decomposition is None else decomposition
    if not time_limit > 0:
        raise InstanceError("time_limit", "must be a positive number of seconds")
    t0 = time.perf_counter()
    need = memory_estimate_mb(inst)
    if need > max_memory_mb:
        return SolveResult(Status.ERROR, name, wall_time_s=time.perf_counter() - t0,
                           stats={"memory_estimate_mb": need, "max_memory_mb": max_memory_mb,
                                  "message": f"memory estimate {need:.0f} MB above max_memory_mb"})
    dec = decomposition(inst, alpha=alpha, cpu=cpu)
    build_s = time.perf_counter() - t0
    deadline = t0 + time_limit
    R, GK = dec.R, dec.GK
    nk = len(dec.cap_v)
    # a box per coordinate in the multipliers' natural scale (the squares' slopes)
    wk = np.asarray(inst.arrays.prio_w, dtype=float)
    scale = np.concatenate([np.tile(np.repeat(np.ones(dec.G), dec.K) * np.tile(wk, dec.G), R) * 2 * dec.w2,
                            np.full(R, 2 * max(dec.w3, 1e-9)),
                            [10.0 * max(dec.w1, 1e-9),
                             2 * dec.w2 * float(wk.max(initial=1.0)) / max(1.0, float(dec.TD[dec.TD > 0].min(initial=1.0)))],
                            np.full(nk, max(dec.w1, 1e-9) * float(np.median(inst.arrays.job_size)) /
                                    max(1.0, float(np.median(inst.arrays.job_cpu))))])
    scale = np.maximum(scale, 1e-9)
    lam0, mu0 = dec.start(inst.arrays.home0 if start is None else np.asarray(start, dtype=np.int64))
    n = R * GK + R + 2 + nk
    v = np.concatenate([lam0.ravel(), mu0, np.zeros(2 + nk)])
    lower = np.r_[np.full(R * GK + R, -np.inf), np.zeros(2 + nk)]
    val, gvec = dec.value(v)
    best, best_v = val, v.copy()
    cuts_g, cuts_b = [gvec], [val - float(gvec @ v)]
    delta, it, status, pred, stopped = 0.25, 1, Status.TIME_LIMIT, np.inf, "time_limit"
    log = [(round(time.perf_counter() - t0, 3), best)]
    from scipy.optimize import linprog

    while it < max_iter and time.perf_counter() < deadline:
        Gm = np.asarray(cuts_g)
        # max theta s.t. theta <= b_i + g_i x, x in the box: variables (x, theta), minimize -theta
        A_ub = np.hstack([-Gm, np.ones((len(Gm), 1))])
        lo_b = np.maximum(best_v - delta * scale, lower)
        hi_b = np.maximum(best_v + delta * scale, lo_b)
        if dec.quota is None:
            hi_b[R * GK + R] = 0.0
        bounds = list(zip(lo_b, hi_b, strict=True)) + [(None, None)]
        lp = linprog(np.r_[np.zeros(n), -1.0], A_ub=A_ub, b_ub=np.asarray(cuts_b), bounds=bounds, method="highs")
        if lp.status != 0:
            stopped = "cutting-plane LP failed"
            break
        x, pred = lp.x[:n], -lp.fun
        if pred - best <= tol * max(1.0, abs(best)):
            if delta >= 64:
                status, stopped = Status.OPTIMAL, "converged"
                break
            delta *= 4.0
            continue
        val, gvec = dec.value(x)
        it += 1
        cuts_g.append(gvec)
        cuts_b.append(val - float(gvec @ x))
        if len(cuts_g) > 400:
            cuts_g.pop(0)
            cuts_b.pop(0)
        if val > best + 0.1 * (pred - best):
            best, best_v = val, x.copy()
            delta = min(delta * 2.0, 1e3)
            log.append((round(time.perf_counter() - t0, 3), best))
        elif val > best:
            best, best_v = val, x.copy()
        else:
            delta = max(delta * 0.5, 1e-6)
    if it >= max_iter:
        stopped = "max_iter"
    bound = max(0.0, best)
    wall = time.perf_counter() - t0
    stats = {"instance": inst.name, "alpha": alpha, "evaluations": it, "stopped_by": stopped, "build_s": build_s, "cuts": len(cuts_g),
             "memory_estimate_mb": need, "predicted": float(pred) if np.isfinite(pred) else None,
             "own_overload_tables": int(len(dec.P[0])) if dec.P is not None else 0,
             "cell_levels": int(len(dec.c_r)), "log": log[-20:], "peak_rss_mb": peak_rss_mb()}
    stats.update(dec.extra_stats())
    res = SolveResult(status, name, objective=None, bound=bound, wall_time_s=wall, stats=stats)
    res.multipliers = best_v   # the best evaluated point, in process only (a heuristic may start from it)
    return res
