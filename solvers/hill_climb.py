"""Hill climbing for Tetris home regions (MAST OSDI'24 §3.4) with incremental evaluation.

Terms
-----
move
    Changing the home region of one table ``t`` from its current region ``o`` to
    a region ``c != o``. Everything else stays put.
gain
    The objective (1)-(3) of Figure 4 before the move minus the objective after it
    (positive = better). The objective is the reference one of
    :func:`placement.tetris.evaluation.evaluate`.
best region
    For a table, the region with the highest gain among the regions whose move
    keeps every hard constraint (4), (5), (6) and the move quota satisfied.
move queue
    A max-heap of tables keyed by the gain of moving them to their best region.
move quota
    The *net* bytes moved: total size of the tables whose home differs from the
    instance's starting home (moving a table back home frees its bytes), exactly
    as :func:`placement.tetris.evaluation.violations` counts it.

Algorithm (§3.4)
----------------
One *pass*: compute every table's best region against the current placement
(vectorized over batches of tables, all evaluated against the same state), push
the tables whose best region strictly improves into the queue; then pop the
table with the highest gain, **recompute** its best region against the current
placement (earlier moves may have changed it) and move it only when that move
still strictly improves the objective and keeps every constraint. The pass ends
when the queue is empty; the quota is a constraint of every move, so once it is
exhausted only moves that keep it (e.g. moving a table back home) remain.
MAST runs one pass per day (``max_passes=1``); by default further passes follow
until a pass accepts no move (a local optimum for single-table moves) or the time
limit is hit.

Incremental (delta) evaluation
------------------------------
:class:`HillClimbState` maintains, for the current placement: per job the number
of its tables and bytes in every region (``cnt``, ``load``, J x R), R(job), the
bytes read cross-region (1), the GPU demand tensor D[r, g, k], the per-region
values of (2) (rows of (7)x(8)) and of (3)/(9), storage per region, CPU per
(app, region), the GPU-hours of (6), the net bytes moved and the excess of every
hard constraint. A move of table ``t`` only touches the jobs reading ``t``, and
only the GPU rows of ``o`` and ``c`` (an ML job's region is ``o`` or NULL before and
``c`` or NULL after). All R candidate regions of a batch of tables are evaluated
at once with numpy in O(entries x R) work (an analytics job's new majority region
from its top-two loads excluding ``o``), without any full re-evaluation.

Extensions beyond §3.4 (off by default)
---------------------------------------
``order="gain_per_byte"`` (queue by gain per byte, for a binding quota);
``job_moves=True`` (compound moves: all tables of one multi-table job to one
region, since an ML job only gains once all its tables share a region);
``kicks=N`` / :func:`solve_ils` (iterated local search: perturb the best placement
with random feasible moves, climb again, keep it if strictly better). Measured gaps
to the exact optimum are in ``placement bench`` ("hill-climbing variants").

Infeasible starts
-----------------
When the start violates a hard constraint, passes first *repair*: the key is the
reduction of a normalized total violation (excess storage / total size, excess CPU
/ total CPU-hours, missing (6) GPU-hours / threshold, excess quota / total size),
ties by gain. If no repair move remains and the placement still violates, the
status is ``infeasible`` -- **not a proof** that no feasible placement exists.

Statuses: ``feasible`` (a placement that :func:`violations` accepts),
``infeasible`` (none found, not a proof), ``time_limit`` (the incumbent if it is
feasible, else no solution). ``objective`` is always ``evaluate(...).objective``.
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass
from typing import Literal

import numpy as np

from placement.result import SolveResult, Status
from placement.tetris.evaluation import evaluate, sigmoid, violations
from placement.tetris.instance import TetrisInstance, TetrisSolution

__all__ = ["solve", "solve_ils", "HillClimbState", "MoveEvaluation", "full_move_delta"]

_REL_EPS = 1e-11  # a gain must exceed this share of |objective| to count as strict improvement
_MAX_BATCH_ENTRIES = 40_000  # (table, job) pairs per vectorized batch
_MAX_BATCH_CELLS = 2_000_000  # B * R * G * K floats per batch


@dataclass
class MoveEvaluation:
    """Every candidate move of a batch of tables, against the current state.

    ``delta[b, c]`` is the change of the objective when table ``tables[b]`` moves to
    region ``c`` (0 for its current region); ``violation[b, c]`` the normalized total
    violation after that move; ``feasible[b, c]`` whether every hard constraint
    holds after it.
    """

    tables: np.ndarray
    delta: np.ndarray
    violation: np.ndarray
    feasible: np.ndarray


class HillClimbState:
    """A placement with everything needed to evaluate and apply moves incrementally.

    Parameters
    ----------
    inst : TetrisInstance
    home : array of int, optional
        The placement to start from (default: the instance's current homes).
    """

    def __init__(self, inst: TetrisInstance, home: np.ndarray | None = None) -> None:
        a = inst.arrays
        self.inst, self.a = inst, a
        R = self.R = inst.n_regions
        J = inst.n_jobs
        G, K = a.total_demand.shape
        self.G, self.K = G, K
        self.A = len(inst.apps)
        self.home = np.array(a.home0 if home is None else home, dtype=np.int64)
        if self.home.shape != (inst.n_tables,) or (self.home < 0).any() or (self.home >= R).any():
            raise ValueError("home must hold one region index per table")
        self.ntab = np.diff(a.job_ptr)
        self.cols = np.arange(R, dtype=np.int64)
        self.suppos = a.supply > 0
        self.capped = np.isfinite(a.cpu_cap).ravel()
        self.cap_cpu = np.where(np.isfinite(a.cpu_cap), a.cpu_cap, 0).astype(np.int64).ravel()
        TD = a.total_demand.astype(float)
        TS = a.total_supply.astype(float)
        self.td_pos = TD > 0
        self.td_safe = np.where(self.td_pos, TD, 1.0)
        self.sshare = np.where(TS > 0, a.supply / np.where(TS > 0, TS, 1.0), 0.0)
        self.cap_share = a.storage_cap / a.total_capacity
        self.threshold = inst.home_threshold
        self.quota = inst.move_quota
        self.scale = np.array([max(1, a.total_size), max(1, int(a.job_cpu.sum())),
                               max(1, inst.home_threshold), max(1, a.total_size)], dtype=float)

        # Per-job region counts and bytes.
        reg = self.home[a.job_tab]
        self.cnt = np.zeros((J, R), dtype=np.int32)
        np.add.at(self.cnt, (a.entry_job, reg), 1)
        self.load = np.zeros((J, R), dtype=np.int64)
        np.add.at(self.load, (a.entry_job, reg), a.size[a.job_tab])
        jr = np.argmax(self.load, axis=1) if J else np.zeros(0, dtype=np.int64)
        all_in = self.cnt == self.ntab[:, None]
        ml_reg = np.where(all_in.any(axis=1), np.argmax(all_in, axis=1), -1) if J else jr
        self.jr = np.where(a.job_ml, ml_reg, jr).astype(np.int64)
        self.cross = int(self._job_cross(np.arange(J)).sum())
        self.D = np.zeros((R, G, K), dtype=np.int64)
        sel = np.flatnonzero(a.job_ml & (self.jr >= 0))
        np.add.at(self.D, (self.jr[sel], a.job_gpu[sel], a.job_prio[sel]), a.job_gh[sel])
        self.cpu = np.zeros(self.A * R, dtype=np.int64)
        sel = np.flatnonzero((self.jr >= 0) & (a.job_app >= 0))
        np.add.at(self.cpu, a.job_app[sel] * R + self.jr[sel], a.job_cpu[sel])
        self.home_gh = int(a.job_gh[self._at_home(np.arange(J), self.jr) & a.job_high].sum())
        self.SD = np.bincount(self.home, weights=a.size, minlength=R).astype(np.int64)
        self.moved = int(a.size[self.home != a.home0].sum())
        self.gpu_rows = self._gpu_rows(self.D, self.sshare, a.supply)
        self.st_rows = self._st(self.SD, self.cols)
        self.exc_storage = int(np.maximum(0, self.SD - a.storage_cap).sum())
        self.exc_cpu = int(self._cpu_excess(np.flatnonzero(self.capped)).sum())

    def copy(self) -> HillClimbState:
        """An independent copy (the instance and constants are shared)."""
        new = object.__new__(HillClimbState)
        new.__dict__.update(self.__dict__)
        for key in ("home", "cnt", "load", "jr", "D", "cpu", "SD", "gpu_rows", "st_rows"):
            setattr(new, key, getattr(self, key).copy())
        return new

    # ---- pieces of the objective and constraints --------------------------------------
    def _job_cross(self, jobs: np.ndarray) -> np.ndarray:
        """Bytes of (1) per job: all bytes for a NULL job, else those outside R(job)."""
        jr = self.jr[jobs]
        local = self.load[jobs, np.maximum(jr, 0)]
        return self.a.job_size[jobs] - np.where(jr >= 0, local, 0)

    def _at_home(self, jobs: np.ndarray, region: np.ndarray) -> np.ndarray:
        """I(GPU-Type, R(job)) of (6) for ML jobs (False for NULL and analytics jobs)."""
        ok = self.a.job_ml[jobs] & (region >= 0)
        return ok & self.suppos[np.maximum(region, 0), np.maximum(self.a.job_gpu[jobs], 0)]

    def _gpu_rows(self, Dx: np.ndarray, sshare: np.ndarray, supply: np.ndarray) -> np.ndarray:
        """Sum over (g, k) of w_k * (7) * (8) for rows of demand ``Dx[..., G, K]``."""
        dshare = np.where(self.td_pos, Dx / self.td_safe, 0.0)
        dev2 = (dshare - sshare[..., None]) ** 2
        over = sigmoid(np.maximum(0, Dx.sum(axis=-1) - supply))
        return np.where(self.td_pos, self.a.prio_w * dev2 * over[..., None], 0.0).sum(axis=(-2, -1))

    def _st(self, SD: np.ndarray, regions: np.ndarray) -> np.ndarray:
        """(9) for storage demand ``SD`` in ``regions`` (broadcast)."""
        if self.a.total_size == 0:
            return np.zeros(np.shape(SD))
        return (SD / self.a.total_size - self.cap_share[regions]) ** 2

    def _cpu_excess(self, cells: np.ndarray) -> np.ndarray:
        return np.maximum(0, self.cpu[cells] - self.cap_cpu[cells]) * self.capped[cells]

    @property
    def objective(self) -> float:
        """w1*(1) + w2*(2) + w3*(3) of the current placement, from the maintained state."""
        return (self.inst.w1 * self.cross + self.inst.w2 * float(self.gpu_rows.sum())
                + self.inst.w3 * float(self.st_rows.sum()))

    def excess(self) -> np.ndarray:
        """Excess of (4), (5), (6), quota (storage bytes, CPU-hours, GPU-hours, bytes)."""
        exc_q = 0 if self.quota is None else max(0, self.moved - self.quota)
        return np.array([self.exc_storage, self.exc_cpu, max(0, self.threshold - self.home_gh), exc_q])

    @property
    def violation(self) -> float:
        """Normalized total violation (0 exactly when the placement is feasible)."""
        return float((self.excess() / self.scale).sum())

    # ---- evaluating moves ------------------------------------------------------------
    def evaluate_tables(self, tables) -> MoveEvaluation:
        """Objective change and feasibility of moving each of ``tables`` to every region.

        Incremental: touches only the jobs that read the tables and the GPU rows of
        the old and new region (see the module docstring).
        """
        a, R, G, K = self.a, self.R, self.G, self.K
        tabs = np.asarray(tables, dtype=np.int64)
        B = len(tabs)
        cols = self.cols
        o = self.home[tabs]
        s = a.size[tabs]
        lens = a.tab_ptr[tabs + 1] - a.tab_ptr[tabs]
        n_e = int(lens.sum())
        eb = np.repeat(np.arange(B, dtype=np.int64), lens)
        idx = np.repeat(a.tab_ptr[tabs] - (np.cumsum(lens) - lens), lens) + np.arange(n_e)
        ej = a.tab_job[idx]
        oe, se = o[eb], s[eb]
        jo = self.jr[ej]
        ml = a.job_ml[ej]
        rows_e = np.arange(n_e)
        js = a.job_size[ej]

        new = np.empty((n_e, R), dtype=np.int64)
        dcross = np.empty((n_e, R), dtype=np.int64)
        m = np.flatnonzero(ml)
        if len(m):
            jm = ej[m]
            # All the job's other tables already in c <=> the job runs in c after the move.
            new[m] = np.where(self.cnt[jm] == (self.ntab[jm] - 1)[:, None], cols, -1)
            old_c = np.where(jo[m] >= 0, 0, js[m])
            dcross[m] = np.where(new[m] >= 0, 0, js[m][:, None]) - old_c[:, None]
        n = np.flatnonzero(~ml)
        if len(n):
            jn = ej[n]
            on, sn = oe[n], se[n]
            L = self.load[jn]
            rn = np.arange(len(n))
            # key = load*R + (R-1-region): the largest key is the majority region with
            # ties to the lowest index, as in the reference evaluation.
            keyx = L * R + (R - 1 - cols)
            keyx[rn, on] = -1
            a1 = keyx.argmax(axis=1)
            k1 = keyx[rn, a1]
            keyx[rn, a1] = -1
            k2 = keyx.max(axis=1)
            ko = (L[rn, on] - sn) * R + (R - 1 - on)
            kc = (L + sn[:, None]) * R + (R - 1 - cols)
            other = np.where(cols == a1[:, None], k2[:, None], k1[:, None])
            best = np.maximum(np.maximum(kc, other), ko[:, None])
            new[n] = R - 1 - best % R
            dcross[n] = L[rn, jo[n]][:, None] - best // R
        new[rows_e, oe] = jo
        dcross[rows_e, oe] = 0
        chg = new != jo[:, None]

        flat_bc = (eb[:, None] * R + cols).ravel()
        delta_cross = np.bincount(flat_bc, weights=dcross.ravel(), minlength=B * R).reshape(B, R)

        # GPU demand: only rows o (jobs leaving) and c (jobs arriving) change, and only
        # for the (table, candidate) pairs where some ML job changes region.
        e_i, c_i = np.nonzero(chg & ml[:, None])
        jj = ej[e_i]
        gh = a.job_gh[jj]
        pair = eb[e_i] * R + c_i
        delta_gpu = np.zeros(B * R)
        if len(pair):
            up, pinv = np.unique(pair, return_inverse=True)
            P = len(up)
            cell = pinv * (G * K) + a.job_gpu[jj] * K + a.job_prio[jj]
            left = jo[e_i] >= 0
            newr = new[e_i, c_i]
            came = newr >= 0
            dDo = np.bincount(cell[left], weights=-gh[left], minlength=P * G * K).reshape(P, G, K)
            dDc = np.bincount(cell[came], weights=gh[came], minlength=P * G * K).reshape(P, G, K)
            pb, pc = up // R, up % R
            po = o[pb]
            delta_gpu[up] = (self._gpu_rows(self.D[po] + dDo, self.sshare[po], a.supply[po])
                             - self.gpu_rows[po]
                             + self._gpu_rows(self.D[pc] + dDc, self.sshare[pc], a.supply[pc])
                             - self.gpu_rows[pc])
        else:
            newr = np.zeros(0, dtype=np.int64)
        delta_gpu = delta_gpu.reshape(B, R)

        # Storage (3)/(9) and (4).
        SDo, SDc = self.SD[o] - s, self.SD[None] + s[:, None]
        delta_st = (self._st(SDo, o) - self.st_rows[o])[:, None] + self._st(SDc, cols) - self.st_rows[None]
        cap = a.storage_cap
        exc_s = (self.exc_storage + (np.maximum(0, SDo - cap[o]) - np.maximum(0, self.SD[o] - cap[o]))[:, None]
                 + np.maximum(0, SDc - cap) - np.maximum(0, self.SD - cap))

        # (6): high-priority GPU-hours whose region has their GPU type.
        hi = a.job_high[jj]
        dh = gh * (self._at_home(jj, newr).astype(np.int64) - self._at_home(jj, jo[e_i]))
        delta_home = np.bincount(pair[hi], weights=dh[hi], minlength=B * R).reshape(B, R)

        # (5): net CPU change per (table, candidate, app, region) on capped cells.
        exc_c = np.full((B, R), float(self.exc_cpu))
        e_i, c_i = np.nonzero(chg & (a.job_app[ej] >= 0)[:, None])
        if len(e_i):
            jj = ej[e_i]
            app, cpu = a.job_app[jj], a.job_cpu[jj]
            bc = eb[e_i] * R + c_i
            r_old, r_new = jo[e_i], new[e_i, c_i]
            cell_old, cell_new = app * R + r_old, app * R + r_new
            k_old = (r_old >= 0) & self.capped[np.where(r_old >= 0, cell_old, 0)]
            k_new = (r_new >= 0) & self.capped[np.where(r_new >= 0, cell_new, 0)]
            AR = self.A * R
            keys = np.concatenate([bc[k_old] * AR + cell_old[k_old], bc[k_new] * AR + cell_new[k_new]])
            if len(keys):
                vals = np.concatenate([-cpu[k_old], cpu[k_new]])
                uk, inv = np.unique(keys, return_inverse=True)
                net = np.bincount(inv, weights=vals).astype(np.int64)
                cell = uk % AR
                used, capc = self.cpu[cell], self.cap_cpu[cell]
                dexc = np.maximum(0, used + net - capc) - np.maximum(0, used - capc)
                exc_c += np.bincount(uk // AR, weights=dexc, minlength=B * R).reshape(B, R)

        h0 = a.home0[tabs]
        dmoved = s[:, None] * ((cols != h0[:, None]).astype(np.int64) - (o != h0)[:, None])
        exc_q = (np.zeros((B, R)) if self.quota is None
                 else np.maximum(0, self.moved + dmoved - self.quota))
        exc_h = np.maximum(0, self.threshold - (self.home_gh + delta_home))

        delta = self.inst.w1 * delta_cross + self.inst.w2 * delta_gpu + self.inst.w3 * delta_st
        delta[np.arange(B), o] = 0.0
        viol = (exc_s / self.scale[0] + exc_c / self.scale[1] + exc_h / self.scale[2]
                + exc_q / self.scale[3])
        feasible = (exc_s == 0) & (exc_c == 0) & (exc_h == 0) & (exc_q == 0)
        v_now = self.violation
        viol[np.arange(B), o] = v_now
        feasible[np.arange(B), o] = v_now == 0
        return MoveEvaluation(tables=tabs, delta=delta, violation=viol, feasible=feasible)

    def best_moves(self, ev: MoveEvaluation, eps: float) -> tuple[np.ndarray, np.ndarray]:
        """Best region and its key (> 0 means a strictly improving, admissible move).

        Feasible state: the key is the gain among feasible regions (ties to the lowest
        region index). Infeasible state (repair): the key is the violation reduction,
        ties broken by the objective change.
        """
        B = len(ev.tables)
        rows = np.arange(B)
        cur = self.home[ev.tables]
        v_now = self.violation
        if v_now == 0:
            d = np.where(ev.feasible, ev.delta, np.inf)
            d[rows, cur] = np.inf
            best = np.argmin(d, axis=1)
            key = -d[rows, best]
            return best, np.where(key > eps, key, 0.0)
        v = ev.violation.copy()
        v[rows, cur] = np.inf
        vmin = v.min(axis=1)
        d = np.where(v <= vmin[:, None] * (1 + 1e-12), ev.delta, np.inf)
        best = np.argmin(d, axis=1)
        key = v_now - vmin
        return best, np.where(key > 1e-12 * max(1.0, v_now), key, 0.0)

    # ---- applying a move ------------------------------------------------------------
    def apply(self, t: int, c: int) -> None:
        """Move table ``t`` to region ``c`` and update the maintained state."""
        a, R, K = self.a, self.R, self.K
        t, c = int(t), int(c)
        o = int(self.home[t])
        if c == o:
            return
        s = int(a.size[t])
        ej = a.tab_job[a.tab_ptr[t]:a.tab_ptr[t + 1]]  # a job lists a table once: no duplicates
        old_jr = self.jr[ej].copy()
        old_cross = self._job_cross(ej)
        self.cnt[ej, o] -= 1
        self.cnt[ej, c] += 1
        self.load[ej, o] -= s
        self.load[ej, c] += s
        ml = a.job_ml[ej]
        ml_new = np.where(self.cnt[ej, c] == self.ntab[ej], c, -1)
        an_new = np.argmax(self.load[ej], axis=1) if len(ej) else ml_new
        new_jr = np.where(ml, ml_new, an_new)
        self.jr[ej] = new_jr
        self.cross += int((self._job_cross(ej) - old_cross).sum())

        ch = np.flatnonzero(new_jr != old_jr)
        jj, ro, rn = ej[ch], old_jr[ch], new_jr[ch]
        m = a.job_ml[jj]
        touched = {o, c}
        if m.any():
            jm, rom, rnm = jj[m], ro[m], rn[m]
            g, k, gh = a.job_gpu[jm], a.job_prio[jm], a.job_gh[jm]
            Df = self.D.reshape(-1)
            sel = rom >= 0
            np.subtract.at(Df, (rom[sel] * self.G + g[sel]) * K + k[sel], gh[sel])
            sel = rnm >= 0
            np.add.at(Df, (rnm[sel] * self.G + g[sel]) * K + k[sel], gh[sel])
            touched.update(rom[rom >= 0].tolist())
            touched.update(rnm[rnm >= 0].tolist())
            hi = a.job_high[jm]
            dh = gh * (self._at_home(jm, rnm).astype(np.int64) - self._at_home(jm, rom))
            self.home_gh += int(dh[hi].sum())
        ap = a.job_app[jj] >= 0
        if ap.any():
            app, cpu = a.job_app[jj][ap], a.job_cpu[jj][ap]
            ro_a, rn_a = ro[ap], rn[ap]
            cells = np.unique(np.concatenate([app[ro_a >= 0] * R + ro_a[ro_a >= 0],
                                              app[rn_a >= 0] * R + rn_a[rn_a >= 0]]))
            before = int(self._cpu_excess(cells).sum())
            np.subtract.at(self.cpu, app[ro_a >= 0] * R + ro_a[ro_a >= 0], cpu[ro_a >= 0])
            np.add.at(self.cpu, app[rn_a >= 0] * R + rn_a[rn_a >= 0], cpu[rn_a >= 0])
            self.exc_cpu += int(self._cpu_excess(cells).sum()) - before

        self.SD[o] -= s
        self.SD[c] += s
        h0 = int(a.home0[t])
        self.moved += s * (int(c != h0) - int(o != h0))
        self.home[t] = c
        tr = np.fromiter(sorted(touched), dtype=np.int64)
        self.gpu_rows[tr] = self._gpu_rows(self.D[tr], self.sshare[tr], a.supply[tr])
        oc = np.array([o, c])
        self.st_rows[oc] = self._st(self.SD[oc], oc)
        self.exc_storage = int(np.maximum(0, self.SD - a.storage_cap).sum())


def full_move_delta(inst: TetrisInstance, home: np.ndarray, t: int, r: int,
                    base: float | None = None) -> float:
    """Objective change of moving table ``t`` to region ``r`` by full re-evaluation.

    The non-incremental baseline of the benchmark: one reference :func:`evaluate`
    of the moved placement (plus one of ``home`` unless ``base`` is given).
    """
    moved = np.array(home, dtype=np.int64)
    moved[t] = r
    if base is None:
        base = evaluate(inst, home).objective
    return evaluate(inst, moved).objective - base


def _job_sweep(state: HillClimbState, jobs: np.ndarray, moves: list | None, gains: list,
               out_of_time) -> int:
    """One sweep of compound moves: every table of job j to region c (see ``job_moves``).

    Each candidate is applied to the state, judged by the maintained objective and
    violation, and reverted; the best strictly improving feasible one is kept.
    Returns the number of accepted compound moves.
    """
    a, R = state.a, state.R
    accepted = 0
    for j in jobs:
        if out_of_time():
            break
        tabs = a.job_tab[a.job_ptr[j]:a.job_ptr[j + 1]]
        orig = state.home[tabs].copy()
        base = state.objective
        eps = _REL_EPS * max(1.0, abs(base))
        best_gain, best_c = eps, -1
        h0, size = a.home0[tabs], a.size[tabs]
        for c in range(R):
            todo = np.flatnonzero(orig != c)
            if len(todo) <= 1:  # single-table moves are the passes' job
                continue
            if state.quota is not None and state.violation == 0:
                dmoved = int((size * ((c != h0).astype(np.int64) - (orig != h0))).sum())
                if state.moved + dmoved > state.quota:
                    continue  # would break the quota: no need to try it
            for i in todo:
                state.apply(tabs[i], c)
            if state.violation == 0 and base - state.objective > best_gain:
                best_gain, best_c = base - state.objective, c
            for i in todo:
                state.apply(tabs[i], orig[i])
        if best_c < 0:
            continue
        todo = np.flatnonzero(orig != best_c)
        for i in todo:
            state.apply(tabs[i], best_c)
        gain = base - state.objective
        gains.append(gain)
        accepted += 1
        if moves is not None:
            moves.append((tuple(int(x) for x in tabs[todo]), tuple(int(x) for x in orig[todo]),
                          best_c, gain, "job"))
    return accepted


def _kick(state: HillClimbState, rng: np.random.Generator, m: int, moves: list | None) -> None:
    """Perturbation of iterated local search: ``m`` random tables to random regions,
    each move keeping every hard constraint (infeasible draws are skipped)."""
    R = state.R
    for t in rng.choice(state.inst.n_tables, size=min(m, state.inst.n_tables), replace=False):
        ev = state.evaluate_tables([t])
        ok = np.flatnonzero(ev.feasible[0] & (np.arange(R) != state.home[t]))
        if not len(ok):
            continue
        c = int(ok[rng.integers(len(ok))])
        frm, before = int(state.home[t]), state.objective
        state.apply(int(t), c)
        if moves is not None:
            moves.append(((int(t),), (frm,), c, before - state.objective, "kick"))


def _batches(T: int, tab_ptr: np.ndarray, R: int, GK: int):
    """Consecutive table ranges with bounded (table, job) entries and GPU cells."""
    max_tables = max(1, _MAX_BATCH_CELLS // max(1, R * GK))
    start = 0
    while start < T:
        stop = min(T, start + max_tables)
        over = np.searchsorted(tab_ptr, tab_ptr[start] + _MAX_BATCH_ENTRIES, side="right") - 1
        stop = max(start + 1, min(stop, int(over)))
        yield np.arange(start, stop, dtype=np.int64)
        start = stop


def solve(inst: TetrisInstance, *, time_limit: float | None = None, seed: int = 0,
          max_passes: int | None = None, reinsert: bool = False, home: np.ndarray | None = None,
          record_moves: bool = False, job_moves: bool = False,
          order: Literal["gain", "gain_per_byte"] = "gain", kicks: int = 0, kick_share: float = 0.3) -> SolveResult:
    """Hill climbing of MAST §3.4 on the objective (1)-(3) under (4)-(6) and the quota.

    Parameters
    ----------
    inst : TetrisInstance
    time_limit : float, optional
        Seconds; on expiry the current placement is returned with status ``time_limit``.
    seed : int
        Orders tables of equal gain in the queue (a seeded permutation); the result
        is deterministic for a seed.
    max_passes : int, optional
        Passes over all tables (MAST: 1 per day); default until a pass accepts no move.
    reinsert : bool
        If the recomputed gain of a popped table falls below the next queued gain,
        push it back instead of moving it (lazy greedy). Default False (the paper:
        recompute, then move).
    home : array of int, optional
        Start placement (default: the instance's current homes). Bytes moved and the
        quota are always counted against the instance's current homes.
    order : {"gain", "gain_per_byte"}
        Queue key: the gain (the paper) or the gain per byte of the table (a
        knapsack-style order for a binding byte quota).
    kicks, kick_share : int, float
        Extension beyond §3.4 (off by default): iterated local search. After the
        climb converges, up to ``kicks`` times: perturb the best placement found by
        moving m seeded-random tables to random regions, m uniform in
        ``[2, max(2, ceil(kick_share * T))]`` (each perturbation move keeps the
        constraints), climb again, keep the result if strictly better.
    record_moves : bool
        Put the move path of the returned placement into ``stats["moves"]``: tuples
        ``(tables, froms, to, gain, kind)``, kind ``"table"`` (a §3.4 move),
        ``"job"`` (a compound move) or ``"kick"`` (a perturbation; may worsen).
    job_moves : bool
        Extension beyond §3.4 (off by default): when a pass accepts no move, try
        *compound* moves -- all tables of one multi-table job to one region, heaviest
        ML jobs first (trial apply, exact objective, revert) -- and resume the passes
        if one strictly improves. Escapes local optima where an ML job only gains once
        all its tables share a region.

    Returns
    -------
    SolveResult
        ``feasible``, ``infeasible`` (none found; not a proof) or ``time_limit``.
        ``stats`` (totals over the whole search, kicks included): passes,
        tables_evaluated, moves_evaluated ((table, region) pairs), moves_per_s (pairs
        per second of search), moves_accepted (table moves), job_moves_accepted,
        kicks / kicks_improved, quota_skips (queued tables skipped because any move
        would break the quota), bytes_moved, initial/final objective, the maintained
        incremental objective and its relative error, accepted_gain_min/sum,
        time_init_s / time_search_s, the paper's measures.
    """
    if order not in ("gain", "gain_per_byte"):
        raise ValueError(f"order must be 'gain' or 'gain_per_byte', got {order!r}")
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    state = HillClimbState(inst, home)
    a = inst.arrays
    T, R = inst.n_tables, inst.n_regions
    tie = np.random.default_rng(seed).permutation(T)
    init_obj = state.objective
    init_viol = state.violation
    t_init = time.perf_counter() - t0

    n_eval_tables = 0
    gains: list[float] = []
    moves: list[tuple] = []
    passes = 0
    timed_out = False
    reinserted = 0
    quota_skips = 0
    job_sweeps = job_accepted = 0
    ntab = np.diff(a.job_ptr)
    multi = np.flatnonzero(ntab > 1)
    # Compound moves for jobs reading several tables, heaviest ML work first.
    job_order = multi[np.lexsort((-a.job_size[multi], -a.job_gh[multi]))]
    t_search0 = time.perf_counter()

    def movable(tabs: np.ndarray) -> np.ndarray:
        """Tables with a move that can keep the quota (a table at home adds its size)."""
        if inst.move_quota is None or state.violation > 0:
            return tabs
        room = inst.move_quota - state.moved
        return tabs[(state.home[tabs] != a.home0[tabs]) | (a.size[tabs] <= room)]

    def scale_of(t: int) -> float:
        return 1.0 if order == "gain" else 1.0 / max(1, int(a.size[t]))

    def out_of_time() -> bool:
        return deadline is not None and time.perf_counter() > deadline

    def climb() -> bool:
        """Passes (and job sweeps) until no strictly improving move; True on time-out."""
        nonlocal n_eval_tables, passes, reinserted, quota_skips, job_sweeps, job_accepted
        timed_out = False
        passes_here = 0
        while R > 1 and (max_passes is None or passes_here < max_passes):
            if out_of_time():
                return True
            passes += 1
            passes_here += 1
            repairing = state.violation > 0
            heap: list[tuple[float, int, int]] = []
            for batch in _batches(T, a.tab_ptr, R, state.G * state.K):
                batch = movable(batch)
                if not len(batch):
                    continue
                ev = state.evaluate_tables(batch)
                n_eval_tables += len(batch)
                eps = _REL_EPS * max(1.0, abs(state.objective))
                _, key = state.best_moves(ev, eps)
                for b in np.flatnonzero(key > 0):
                    heap.append((-float(key[b]) * scale_of(batch[b]), int(tie[batch[b]]), int(batch[b])))
                if out_of_time():
                    return True
            heapq.heapify(heap)
            accepted = 0
            while heap and not timed_out:
                if out_of_time():
                    return True
                _, tk, t = heapq.heappop(heap)
                if not len(movable(np.array([t]))):
                    quota_skips += 1
                    continue
                ev = state.evaluate_tables([t])
                n_eval_tables += 1
                before = state.objective
                eps = _REL_EPS * max(1.0, abs(before))
                best_r, key = state.best_moves(ev, eps)
                if key[0] <= 0:
                    continue
                if reinsert and heap and key[0] * scale_of(t) < -heap[0][0]:
                    heapq.heappush(heap, (-float(key[0]) * scale_of(t), tk, t))
                    reinserted += 1
                    continue
                frm, to = int(state.home[t]), int(best_r[0])
                state.apply(t, to)
                accepted += 1
                gain = before - state.objective
                gains.append(gain)
                if record_moves:
                    moves.append(((t,), (frm,), to, gain, "table"))
                if repairing and state.violation == 0:
                    break  # feasible now: the next pass optimizes the objective
            if accepted == 0 and not timed_out:
                if not job_moves or state.violation > 0:
                    break
                found = _job_sweep(state, job_order, moves if record_moves else None, gains, out_of_time)
                job_sweeps += 1
                job_accepted += found
                if found == 0 or out_of_time():
                    timed_out = out_of_time()
                    break
        return timed_out

    timed_out = climb()
    best, best_moves = state, list(moves)
    kick_rng = np.random.default_rng([seed, 1])
    kicks_done = kicks_improved = 0
    for _ in range(kicks if R > 1 else 0):
        if timed_out or best.violation > 0:
            break
        state = best.copy()
        moves = list(best_moves)
        m = int(kick_rng.integers(2, max(2, int(np.ceil(kick_share * T))) + 1))
        _kick(state, kick_rng, m, moves if record_moves else None)
        kicks_done += 1
        timed_out = climb()
        eps = _REL_EPS * max(1.0, abs(best.objective))
        if state.violation == 0 and state.objective < best.objective - eps:
            best, best_moves = state, list(moves)
            kicks_improved += 1
    state, moves = best, best_moves
    t_search = time.perf_counter() - t_search0

    sol = TetrisSolution(home=state.home.copy())
    ev = evaluate(inst, sol)
    viol = violations(inst, sol, ev)
    wall = time.perf_counter() - t0
    n_pairs = n_eval_tables * max(0, R - 1)
    stats = {
        "passes": passes,
        "tables_evaluated": n_eval_tables,
        "moves_evaluated": n_pairs,
        "moves_per_s": n_pairs / t_search if t_search > 0 else None,
        "moves_accepted": len(gains) - job_accepted,
        "reinserted": reinserted,
        "quota_skips": quota_skips,
        "job_sweeps": job_sweeps,
        "job_moves_accepted": job_accepted,
        "kicks": kicks_done,
        "kicks_improved": kicks_improved,
        "bytes_moved": ev.bytes_moved,
        "move_quota": inst.move_quota,
        "initial_objective": init_obj,
        "final_objective": ev.objective,
        "incremental_objective": state.objective,
        "incremental_error": abs(state.objective - ev.objective) / max(1.0, abs(ev.objective)),
        "initial_violation": init_viol,
        "accepted_gain_min": min(gains) if gains else None,
        "accepted_gain_sum": float(sum(gains)),
        "time_init_s": t_init,
        "time_search_s": t_search,
        "measures": ev.measures,
    }
    if record_moves:
        stats["moves"] = moves
    if viol:
        stats["violations"] = viol
        status = Status.TIME_LIMIT if timed_out else Status.INFEASIBLE
        msg = ("time limit before a feasible placement was found" if timed_out else
               "no feasible placement found by repair moves (not a proof of infeasibility)")
        stats["proof"] = False
        return SolveResult(status=status, solver="hill-climb", solution=None, objective=None,
                           wall_time_s=wall, stats=stats, message=f"{msg}: {viol[0]}")
    status = Status.TIME_LIMIT if timed_out else Status.FEASIBLE
    msg = (f"{len(gains)} moves in {passes} pass(es), objective {init_obj:.6g} -> {ev.objective:.6g}"
           + (" (time limit)" if timed_out else ""))
    return SolveResult(status=status, solver="hill-climb", solution=sol, objective=ev.objective,
                       wall_time_s=wall, stats=stats, message=msg)


def solve_ils(inst: TetrisInstance, *, time_limit: float | None = None, seed: int = 0, kicks: int = 50,
              **options) -> SolveResult:
    """Hill climbing with iterated-local-search kicks (``solve(..., kicks=50)``).

    An extension beyond MAST §3.4 for small and medium instances: each kick
    re-climbs the whole placement, so its cost grows with the instance.
    """
    res = solve(inst, time_limit=time_limit, seed=seed, kicks=kicks, **options)
    res.solver = "hill-climb-ils"
    return res
