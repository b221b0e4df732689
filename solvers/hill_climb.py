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
limit is hit. In the code, ``_Climb._queue`` builds a pass's queue, ``_Climb._drain``
pops it and ``_Climb.run`` repeats passes; ``_iterated_local_search`` runs the kicks.

Incremental (delta) evaluation
------------------------------
:class:`HillClimbState` maintains the current placement term by term, each term a
small class with the same three steps -- build from a placement, evaluate the
candidate moves of a batch of tables, apply one move:

``_JobRegions``
    Per job the number of its tables and bytes in every region (``cnt``, ``load``,
    J x R), R(job), and the bytes read cross-region (1).
``_GpuBalance``
    The GPU demand tensor D[r, g, k], the per-region values of (2) (rows of
    (7)x(8)) and the high-priority GPU-hours of (6).
``_Storage``
    Storage per region, the per-region values of (3)/(9), and the excess of (4).
``_CpuCaps``
    CPU-hours per (app, region) and the excess of (5).

The state itself keeps the homes and the net bytes moved (the quota). A move of
table ``t`` only touches the jobs reading ``t``, and only the GPU rows of ``o`` and
``c`` (an ML job's region is ``o`` or NULL before and ``c`` or NULL after). All R
candidate regions of a batch of tables are evaluated at once with numpy in
O(entries x R) work, where an *entry* is a (table, job reading it) pair (an
analytics job's new majority region comes from its top-two loads excluding
``o``), without any full re-evaluation.

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

import copy
import heapq
import time
from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np

from placement.result import SolveResult, Status
from placement.tetris.evaluation import evaluate, sigmoid, violations
from placement.tetris.instance import TetrisArrays, TetrisInstance, TetrisSolution

__all__ = ["solve", "solve_ils", "solve_seeded", "HillClimbState", "MoveEvaluation", "full_move_delta"]

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


class _Entries(NamedTuple):
    """The entries of a batch of B candidate tables: one per (table, job reading it).

    ``o``/``s``: current region and size per table; per entry: ``eb`` the table's row
    in the batch, ``ej`` the job, ``jo`` its R(job) now (-1 for NULL), ``ml`` whether
    it is an ML job.
    """

    tabs: np.ndarray
    o: np.ndarray
    s: np.ndarray
    eb: np.ndarray
    ej: np.ndarray
    jo: np.ndarray
    ml: np.ndarray


class _Term:
    """Incremental bookkeeping of one part of the objective and constraints.

    ``_ARRAYS`` names the arrays a move changes: :meth:`copy` duplicates them and
    shares everything else (the instance's constants).
    """

    _ARRAYS: tuple[str, ...] = ()

    def copy(self):
        new = copy.copy(self)
        for key in self._ARRAYS:
            setattr(new, key, getattr(self, key).copy())
        return new


class _JobRegions(_Term):
    """R(job) of every job and the bytes read cross-region (1).

    ``cnt[j, r]`` / ``load[j, r]``: tables / bytes of job j in region r; ``jr[j]``:
    R(job), -1 for NULL (an ML job: the region holding all its tables; an analytics
    job: its majority region by bytes, ties to the lowest index); ``cross``: (1).
    """

    _ARRAYS = ("cnt", "load", "jr")

    def __init__(self, a: TetrisArrays, home: np.ndarray, R: int) -> None:
        self.a, self.R = a, R
        self.ntab = np.diff(a.job_ptr)
        self.cols = np.arange(R, dtype=np.int64)
        J = len(self.ntab)
        reg = home[a.job_tab]
        self.cnt = np.zeros((J, R), dtype=np.int32)
        np.add.at(self.cnt, (a.entry_job, reg), 1)
        self.load = np.zeros((J, R), dtype=np.int64)
        np.add.at(self.load, (a.entry_job, reg), a.size[a.job_tab])
        jr = np.argmax(self.load, axis=1) if J else np.zeros(0, dtype=np.int64)
        all_in = self.cnt == self.ntab[:, None]
        ml_reg = np.where(all_in.any(axis=1), np.argmax(all_in, axis=1), -1) if J else jr
        self.jr = np.where(a.job_ml, ml_reg, jr).astype(np.int64)
        self.cross = int(self.job_cross(np.arange(J)).sum())

    def job_cross(self, jobs: np.ndarray) -> np.ndarray:
        """Bytes of (1) per job: all bytes for a NULL job, else those outside R(job)."""
        jr = self.jr[jobs]
        local = self.load[jobs, np.maximum(jr, 0)]
        return self.a.job_size[jobs] - np.where(jr >= 0, local, 0)

    def candidates(self, e: _Entries) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """R(job) of every entry's job after each candidate move, and the change of (1).

        Returns ``new`` (entries x R; column ``c``: R(job) once the entry's table is in
        ``c``), ``chg = new != R(job) now`` and ``delta_cross`` (B x R).
        """
        a, R, cols = self.a, self.R, self.cols
        B, n_e = len(e.tabs), len(e.ej)
        oe, se = e.o[e.eb], e.s[e.eb]
        js = a.job_size[e.ej]
        new = np.empty((n_e, R), dtype=np.int64)
        dcross = np.empty((n_e, R), dtype=np.int64)
        m = np.flatnonzero(e.ml)
        if len(m):
            jm = e.ej[m]
            # All the job's other tables already in c <=> the job runs in c after the move.
            new[m] = np.where(self.cnt[jm] == (self.ntab[jm] - 1)[:, None], cols, -1)
            old_c = np.where(e.jo[m] >= 0, 0, js[m])
            dcross[m] = np.where(new[m] >= 0, 0, js[m][:, None]) - old_c[:, None]
        n = np.flatnonzero(~e.ml)
        if len(n):
            jn = e.ej[n]
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
            dcross[n] = L[rn, e.jo[n]][:, None] - best // R
        rows_e = np.arange(n_e)
        new[rows_e, oe] = e.jo
        dcross[rows_e, oe] = 0
        chg = new != e.jo[:, None]
        flat_bc = (e.eb[:, None] * R + cols).ravel()
        delta_cross = np.bincount(flat_bc, weights=dcross.ravel(), minlength=B * R).reshape(B, R)
        return new, chg, delta_cross

    def move(self, ej: np.ndarray, o: int, c: int, s: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Move a table of size ``s`` read by jobs ``ej`` from ``o`` to ``c``.

        Returns the jobs whose R(job) changed, with their old and new R(job).
        """
        old_jr = self.jr[ej].copy()
        old_cross = self.job_cross(ej)
        self.cnt[ej, o] -= 1
        self.cnt[ej, c] += 1
        self.load[ej, o] -= s
        self.load[ej, c] += s
        ml = self.a.job_ml[ej]
        ml_new = np.where(self.cnt[ej, c] == self.ntab[ej], c, -1)
        an_new = np.argmax(self.load[ej], axis=1) if len(ej) else ml_new
        new_jr = np.where(ml, ml_new, an_new)
        self.jr[ej] = new_jr
        self.cross += int((self.job_cross(ej) - old_cross).sum())
        ch = np.flatnonzero(new_jr != old_jr)
        return ej[ch], old_jr[ch], new_jr[ch]


class _GpuBalance(_Term):
    """GPU demand D[r, g, k] of the ML jobs by R(job), the rows of (2), and (6).

    ``rows[r]`` is the sum over (g, k) of w_k * (7) * (8) in region r; ``home_gh``
    the high-priority GPU-hours whose R(job) has their GPU type (left side of (6)).
    """

    _ARRAYS = ("D", "rows")

    def __init__(self, a: TetrisArrays, jr: np.ndarray, R: int) -> None:
        self.a, self.R = a, R
        self.G, self.K = G, K = a.total_demand.shape
        self.suppos = a.supply > 0
        TD = a.total_demand.astype(float)
        TS = a.total_supply.astype(float)
        self.td_pos = TD > 0
        self.td_safe = np.where(self.td_pos, TD, 1.0)
        self.sshare = np.where(TS > 0, a.supply / np.where(TS > 0, TS, 1.0), 0.0)
        self.D = np.zeros((R, G, K), dtype=np.int64)
        sel = np.flatnonzero(a.job_ml & (jr >= 0))
        np.add.at(self.D, (jr[sel], a.job_gpu[sel], a.job_prio[sel]), a.job_gh[sel])
        self.home_gh = int(a.job_gh[self.at_home(np.arange(len(jr)), jr) & a.job_high].sum())
        self.rows = self.row_values(self.D, self.sshare, a.supply)

    def at_home(self, jobs: np.ndarray, region: np.ndarray) -> np.ndarray:
        """I(GPU-Type, R(job)) of (6) for ML jobs (False for NULL and analytics jobs)."""
        ok = self.a.job_ml[jobs] & (region >= 0)
        return ok & self.suppos[np.maximum(region, 0), np.maximum(self.a.job_gpu[jobs], 0)]

    def row_values(self, Dx: np.ndarray, sshare: np.ndarray, supply: np.ndarray) -> np.ndarray:
        """Sum over (g, k) of w_k * (7) * (8) for rows of demand ``Dx[..., G, K]``."""
        dshare = np.where(self.td_pos, Dx / self.td_safe, 0.0)
        dev2 = (dshare - sshare[..., None]) ** 2
        over = sigmoid(np.maximum(0, Dx.sum(axis=-1) - supply))
        return np.where(self.td_pos, self.a.prio_w * dev2 * over[..., None], 0.0).sum(axis=(-2, -1))

    def candidates(self, e: _Entries, new: np.ndarray, chg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Change of (2) and of the GPU-hours of (6) for each candidate move (both B x R).

        Only rows o (jobs leaving) and c (jobs arriving) change, and only for the
        (table, candidate) pairs where some ML job changes region.
        """
        a, R, G, K = self.a, self.R, self.G, self.K
        B = len(e.tabs)
        e_i, c_i = np.nonzero(chg & e.ml[:, None])
        jj = e.ej[e_i]
        gh = a.job_gh[jj]
        pair = e.eb[e_i] * R + c_i
        newr = new[e_i, c_i]
        delta_gpu = np.zeros(B * R)
        if len(pair):
            up, pinv = np.unique(pair, return_inverse=True)
            P = len(up)
            cell = pinv * (G * K) + a.job_gpu[jj] * K + a.job_prio[jj]
            left = e.jo[e_i] >= 0
            came = newr >= 0
            dDo = np.bincount(cell[left], weights=-gh[left], minlength=P * G * K).reshape(P, G, K)
            dDc = np.bincount(cell[came], weights=gh[came], minlength=P * G * K).reshape(P, G, K)
            pb, pc = up // R, up % R
            po = e.o[pb]
            delta_gpu[up] = (self.row_values(self.D[po] + dDo, self.sshare[po], a.supply[po])
                             - self.rows[po]
                             + self.row_values(self.D[pc] + dDc, self.sshare[pc], a.supply[pc])
                             - self.rows[pc])
        hi = a.job_high[jj]
        dh = gh * (self.at_home(jj, newr).astype(np.int64) - self.at_home(jj, e.jo[e_i]))
        delta_home = np.bincount(pair[hi], weights=dh[hi], minlength=B * R).reshape(B, R)
        return delta_gpu.reshape(B, R), delta_home

    def move(self, o: int, c: int, jj: np.ndarray, ro: np.ndarray, rn: np.ndarray) -> None:
        """Jobs ``jj`` changed R(job) from ``ro`` to ``rn`` when a table moved from ``o`` to ``c``."""
        a, K = self.a, self.K
        m = a.job_ml[jj]
        if m.any():
            jm, rom, rnm = jj[m], ro[m], rn[m]
            g, k, gh = a.job_gpu[jm], a.job_prio[jm], a.job_gh[jm]
            Df = self.D.reshape(-1)
            sel = rom >= 0
            np.subtract.at(Df, (rom[sel] * self.G + g[sel]) * K + k[sel], gh[sel])
            sel = rnm >= 0
            np.add.at(Df, (rnm[sel] * self.G + g[sel]) * K + k[sel], gh[sel])
            hi = a.job_high[jm]
            dh = gh * (self.at_home(jm, rnm).astype(np.int64) - self.at_home(jm, rom))
            self.home_gh += int(dh[hi].sum())
        # An ML job's region is o or NULL before the move and c or NULL after it.
        tr = np.array(sorted((o, c)), dtype=np.int64)
        self.rows[tr] = self.row_values(self.D[tr], self.sshare[tr], a.supply[tr])


class _Storage(_Term):
    """Storage per region ``SD``, its rows of (3)/(9), and the excess of (4) in bytes."""

    _ARRAYS = ("SD", "rows")

    def __init__(self, a: TetrisArrays, home: np.ndarray, R: int) -> None:
        self.a = a
        self.cols = np.arange(R, dtype=np.int64)
        self.cap_share = a.storage_cap / a.total_capacity
        self.SD = np.bincount(home, weights=a.size, minlength=R).astype(np.int64)
        self.rows = self.row_values(self.SD, self.cols)
        self.excess = int(np.maximum(0, self.SD - a.storage_cap).sum())

    def row_values(self, SD: np.ndarray, regions: np.ndarray) -> np.ndarray:
        """(9) for storage demand ``SD`` in ``regions`` (broadcast)."""
        if self.a.total_size == 0:
            return np.zeros(np.shape(SD))
        return (SD / self.a.total_size - self.cap_share[regions]) ** 2

    def candidates(self, e: _Entries) -> tuple[np.ndarray, np.ndarray]:
        """Change of (3) and the excess of (4) after each candidate move (both B x R)."""
        o, s, cols, cap = e.o, e.s, self.cols, self.a.storage_cap
        SDo, SDc = self.SD[o] - s, self.SD[None] + s[:, None]
        delta_st = ((self.row_values(SDo, o) - self.rows[o])[:, None] + self.row_values(SDc, cols)
                    - self.rows[None])
        exc_s = (self.excess + (np.maximum(0, SDo - cap[o]) - np.maximum(0, self.SD[o] - cap[o]))[:, None]
                 + np.maximum(0, SDc - cap) - np.maximum(0, self.SD - cap))
        return delta_st, exc_s

    def move(self, o: int, c: int, s: int) -> None:
        self.SD[o] -= s
        self.SD[c] += s
        oc = np.array([o, c])
        self.rows[oc] = self.row_values(self.SD[oc], oc)
        self.excess = int(np.maximum(0, self.SD - self.a.storage_cap).sum())


class _CpuCaps(_Term):
    """CPU-hours per (app, region) cell ``cpu[app * R + r]`` by R(job), and the excess of (5)."""

    _ARRAYS = ("cpu",)

    def __init__(self, a: TetrisArrays, jr: np.ndarray, R: int, n_apps: int) -> None:
        self.a, self.R, self.A = a, R, n_apps
        self.capped = np.isfinite(a.cpu_cap).ravel()
        self.cap_cpu = np.where(np.isfinite(a.cpu_cap), a.cpu_cap, 0).astype(np.int64).ravel()
        self.cpu = np.zeros(n_apps * R, dtype=np.int64)
        sel = np.flatnonzero((jr >= 0) & (a.job_app >= 0))
        np.add.at(self.cpu, a.job_app[sel] * R + jr[sel], a.job_cpu[sel])
        self.excess = int(self._cell_excess(np.flatnonzero(self.capped)).sum())

    def _cell_excess(self, cells: np.ndarray) -> np.ndarray:
        return np.maximum(0, self.cpu[cells] - self.cap_cpu[cells]) * self.capped[cells]

    def candidates(self, e: _Entries, new: np.ndarray, chg: np.ndarray) -> np.ndarray:
        """Excess of (5) after each candidate move (B x R): net CPU change per
        (table, candidate, app, region) on capped cells."""
        a, R = self.a, self.R
        B = len(e.tabs)
        exc_c = np.full((B, R), float(self.excess))
        e_i, c_i = np.nonzero(chg & (a.job_app[e.ej] >= 0)[:, None])
        if len(e_i):
            jj = e.ej[e_i]
            app, cpu = a.job_app[jj], a.job_cpu[jj]
            bc = e.eb[e_i] * R + c_i
            r_old, r_new = e.jo[e_i], new[e_i, c_i]
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
        return exc_c

    def move(self, jj: np.ndarray, ro: np.ndarray, rn: np.ndarray) -> None:
        """Jobs ``jj`` changed R(job) from ``ro`` to ``rn``."""
        a, R = self.a, self.R
        ap = a.job_app[jj] >= 0
        if not ap.any():
            return
        app, cpu = a.job_app[jj][ap], a.job_cpu[jj][ap]
        ro_a, rn_a = ro[ap], rn[ap]
        cells = np.unique(np.concatenate([app[ro_a >= 0] * R + ro_a[ro_a >= 0],
                                          app[rn_a >= 0] * R + rn_a[rn_a >= 0]]))
        before = int(self._cell_excess(cells).sum())
        np.subtract.at(self.cpu, app[ro_a >= 0] * R + ro_a[ro_a >= 0], cpu[ro_a >= 0])
        np.add.at(self.cpu, app[rn_a >= 0] * R + rn_a[rn_a >= 0], cpu[rn_a >= 0])
        self.excess += int(self._cell_excess(cells).sum()) - before


class HillClimbState:
    """A placement with everything needed to evaluate and apply moves incrementally.

    Holds the homes, the net bytes moved and one bookkeeping object per term (see
    the module docstring): ``jobs`` (R(job), (1)), ``gpu`` ((2), (6)), ``storage``
    ((3), (4)) and ``cpu`` ((5)).

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
        self.G, self.K = a.total_demand.shape
        self.home = np.array(a.home0 if home is None else home, dtype=np.int64)
        if self.home.shape != (inst.n_tables,) or (self.home < 0).any() or (self.home >= R).any():
            raise ValueError("home must hold one region index per table")
        self.cols = np.arange(R, dtype=np.int64)
        self.threshold = inst.home_threshold
        self.quota = inst.move_quota
        self.scale = np.array([max(1, a.total_size), max(1, int(a.job_cpu.sum())),
                               max(1, inst.home_threshold), max(1, a.total_size)], dtype=float)
        self.jobs = _JobRegions(a, self.home, R)
        self.gpu = _GpuBalance(a, self.jobs.jr, R)
        self.storage = _Storage(a, self.home, R)
        self.cpu = _CpuCaps(a, self.jobs.jr, R, len(inst.apps))
        self.moved = int(a.size[self.home != a.home0].sum())

    def copy(self) -> HillClimbState:
        """An independent copy (the instance and constants are shared)."""
        new = object.__new__(HillClimbState)
        new.__dict__.update(self.__dict__)
        new.home = self.home.copy()
        for key in ("jobs", "gpu", "storage", "cpu"):
            setattr(new, key, getattr(self, key).copy())
        return new

    # ---- the objective and the constraints --------------------------------------------
    @property
    def objective(self) -> float:
        """w1*(1) + w2*(2) + w3*(3) of the current placement, from the maintained state."""
        return (self.inst.w1 * self.jobs.cross + self.inst.w2 * float(self.gpu.rows.sum())
                + self.inst.w3 * float(self.storage.rows.sum()))

    def excess(self) -> np.ndarray:
        """Excess of (4), (5), (6), quota (storage bytes, CPU-hours, GPU-hours, bytes)."""
        exc_q = 0 if self.quota is None else max(0, self.moved - self.quota)
        return np.array([self.storage.excess, self.cpu.excess, max(0, self.threshold - self.gpu.home_gh),
                         exc_q])

    @property
    def violation(self) -> float:
        """Normalized total violation (0 exactly when the placement is feasible)."""
        return float((self.excess() / self.scale).sum())

    # ---- evaluating moves ------------------------------------------------------------
    def _entries(self, tabs: np.ndarray) -> _Entries:
        """The (table, job) entries of a batch, from the transposed incidence ``tab_ptr``."""
        a = self.a
        lens = a.tab_ptr[tabs + 1] - a.tab_ptr[tabs]
        n_e = int(lens.sum())
        eb = np.repeat(np.arange(len(tabs), dtype=np.int64), lens)
        idx = np.repeat(a.tab_ptr[tabs] - (np.cumsum(lens) - lens), lens) + np.arange(n_e)
        ej = a.tab_job[idx]
        return _Entries(tabs=tabs, o=self.home[tabs], s=a.size[tabs], eb=eb, ej=ej,
                        jo=self.jobs.jr[ej], ml=a.job_ml[ej])

    def _quota_excess(self, e: _Entries) -> np.ndarray:
        """Excess of the move quota after each candidate move (B x R), net bytes moved."""
        if self.quota is None:
            return np.zeros((len(e.tabs), self.R))
        h0 = self.a.home0[e.tabs]
        dmoved = e.s[:, None] * ((self.cols != h0[:, None]).astype(np.int64) - (e.o != h0)[:, None])
        return np.maximum(0, self.moved + dmoved - self.quota)

    def evaluate_tables(self, tables) -> MoveEvaluation:
        """Objective change and feasibility of moving each of ``tables`` to every region.

        Incremental: touches only the jobs that read the tables and the GPU rows of
        the old and new region (see the module docstring). The objective change is
        w1 * (1) + w2 * (2) + w3 * (3); feasibility is (4), (5), (6) and the quota.
        """
        tabs = np.asarray(tables, dtype=np.int64)
        e = self._entries(tabs)
        new, chg, delta_cross = self.jobs.candidates(e)
        delta_gpu, delta_home = self.gpu.candidates(e, new, chg)
        delta_st, exc_s = self.storage.candidates(e)
        exc_c = self.cpu.candidates(e, new, chg)
        exc_q = self._quota_excess(e)
        exc_h = np.maximum(0, self.threshold - (self.gpu.home_gh + delta_home))

        rows = np.arange(len(tabs))
        delta = self.inst.w1 * delta_cross + self.inst.w2 * delta_gpu + self.inst.w3 * delta_st
        delta[rows, e.o] = 0.0
        viol = (exc_s / self.scale[0] + exc_c / self.scale[1] + exc_h / self.scale[2]
                + exc_q / self.scale[3])
        feasible = (exc_s == 0) & (exc_c == 0) & (exc_h == 0) & (exc_q == 0)
        v_now = self.violation
        viol[rows, e.o] = v_now
        feasible[rows, e.o] = v_now == 0
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
        a = self.a
        t, c = int(t), int(c)
        o = int(self.home[t])
        if c == o:
            return
        s = int(a.size[t])
        ej = a.tab_job[a.tab_ptr[t]:a.tab_ptr[t + 1]]  # a job lists a table once: no duplicates
        jj, ro, rn = self.jobs.move(ej, o, c, s)
        self.gpu.move(o, c, jj, ro, rn)
        self.cpu.move(jj, ro, rn)
        self.storage.move(o, c, s)
        h0 = int(a.home0[t])
        self.moved += s * (int(c != h0) - int(o != h0))
        self.home[t] = c


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


class _Climb:
    """The search of :func:`solve`: a state, the passes of §3.4, and the counters of ``stats``.

    ``state`` and ``moves`` (the move path of ``state``) are replaced by the
    iterated local search; every counter is a total over the whole search.
    """

    def __init__(self, state: HillClimbState, *, seed: int, deadline: float | None,
                 max_passes: int | None, reinsert: bool, order: str, job_moves: bool,
                 record_moves: bool) -> None:
        inst = state.inst
        a = inst.arrays
        self.state, self.inst, self.a = state, inst, a
        self.T, self.R = inst.n_tables, inst.n_regions
        self.deadline, self.max_passes, self.reinsert = deadline, max_passes, reinsert
        self.by_byte, self.job_moves, self.record_moves = order != "gain", job_moves, record_moves
        self.tie = np.random.default_rng(seed).permutation(self.T)
        self.moves: list[tuple] = []
        self.gains: list[float] = []
        self.passes = self.tables_evaluated = self.reinserted = self.quota_skips = 0
        self.job_sweeps = self.job_accepted = 0
        self.kicks = self.kicks_improved = 0
        multi = np.flatnonzero(np.diff(a.job_ptr) > 1)
        # Compound moves for jobs reading several tables, heaviest ML work first.
        self.job_order = multi[np.lexsort((-a.job_size[multi], -a.job_gh[multi]))]

    def out_of_time(self) -> bool:
        return self.deadline is not None and time.perf_counter() > self.deadline

    def movable(self, tabs: np.ndarray) -> np.ndarray:
        """Tables with a move that can keep the quota (a table at home adds its size)."""
        state = self.state
        if state.quota is None or state.violation > 0:
            return tabs
        room = state.quota - state.moved
        return tabs[(state.home[tabs] != self.a.home0[tabs]) | (self.a.size[tabs] <= room)]

    def _scale(self, t: int) -> float:
        """Factor of a queue key: 1 (order by gain) or 1 / size (order by gain per byte)."""
        return 1.0 / max(1, int(self.a.size[t])) if self.by_byte else 1.0

    def run(self) -> bool:
        """Passes (and job sweeps) until no strictly improving move; True on time-out.

        A pass builds the move queue against the current placement, then drains it;
        a repair pass (infeasible start) ends as soon as the placement is feasible.
        """
        passes_here = 0
        while self.R > 1 and (self.max_passes is None or passes_here < self.max_passes):
            if self.out_of_time():
                return True
            self.passes += 1
            passes_here += 1
            repairing = self.state.violation > 0
            heap = self._queue()
            if heap is None:
                return True
            accepted, timed_out = self._drain(heap, repairing)
            if timed_out:
                return True
            if accepted:
                continue
            if not self.job_moves or self.state.violation > 0:
                return False
            found = _job_sweep(self.state, self.job_order, self.moves if self.record_moves else None,
                               self.gains, self.out_of_time)
            self.job_sweeps += 1
            self.job_accepted += found
            if found == 0 or self.out_of_time():
                return self.out_of_time()
        return False

    def _queue(self) -> list[tuple[float, int, int]] | None:
        """The move queue of §3.4: every movable table's best region against the current
        placement (vectorized in batches), the strictly improving ones keyed by gain
        (max-heap via negated keys; ties by the seeded permutation). None on time-out."""
        state = self.state
        heap: list[tuple[float, int, int]] = []
        for batch in _batches(self.T, self.a.tab_ptr, self.R, state.G * state.K):
            batch = self.movable(batch)
            if not len(batch):
                continue
            ev = state.evaluate_tables(batch)
            self.tables_evaluated += len(batch)
            eps = _REL_EPS * max(1.0, abs(state.objective))
            _, key = state.best_moves(ev, eps)
            for b in np.flatnonzero(key > 0):
                heap.append((-float(key[b]) * self._scale(batch[b]), int(self.tie[batch[b]]), int(batch[b])))
            if self.out_of_time():
                return None
        heapq.heapify(heap)
        return heap

    def _drain(self, heap: list, repairing: bool) -> tuple[int, bool]:
        """Pop tables by gain; recompute each one's best region against the current
        placement and move it only if that still strictly improves and keeps every
        constraint and the byte quota (§3.4). Returns (moves accepted, timed out)."""
        state = self.state
        accepted = 0
        while heap:
            if self.out_of_time():
                return accepted, True
            _, tk, t = heapq.heappop(heap)
            if not len(self.movable(np.array([t]))):
                self.quota_skips += 1
                continue
            ev = state.evaluate_tables([t])
            self.tables_evaluated += 1
            before = state.objective
            eps = _REL_EPS * max(1.0, abs(before))
            best_r, key = state.best_moves(ev, eps)
            if key[0] <= 0:
                continue
            if self.reinsert and heap and key[0] * self._scale(t) < -heap[0][0]:
                heapq.heappush(heap, (-float(key[0]) * self._scale(t), tk, t))
                self.reinserted += 1
                continue
            frm, to = int(state.home[t]), int(best_r[0])
            state.apply(t, to)
            accepted += 1
            gain = before - state.objective
            self.gains.append(gain)
            if self.record_moves:
                self.moves.append(((t,), (frm,), to, gain, "table"))
            if repairing and state.violation == 0:
                break  # feasible now: the next pass optimizes the objective
        return accepted, False


def _iterated_local_search(climb: _Climb, kicks: int, kick_share: float, seed: int,
                           timed_out: bool) -> bool:
    """Up to ``kicks`` perturbations of the best placement, each followed by a climb.

    A kick moves m seeded-random tables to random feasible regions, m uniform in
    ``[2, max(2, ceil(kick_share * T))]``; the climbed result replaces the best one
    when it is feasible and strictly better. Leaves the best placement and its move
    path in ``climb``; returns whether the time limit was hit.
    """
    best, best_moves = climb.state, list(climb.moves)
    rng = np.random.default_rng([seed, 1])
    for _ in range(kicks if climb.R > 1 else 0):
        if timed_out or best.violation > 0:
            break
        climb.state, climb.moves = best.copy(), list(best_moves)
        m = int(rng.integers(2, max(2, int(np.ceil(kick_share * climb.T))) + 1))
        _kick(climb.state, rng, m, climb.moves if climb.record_moves else None)
        climb.kicks += 1
        timed_out = climb.run()
        eps = _REL_EPS * max(1.0, abs(best.objective))
        if climb.state.violation == 0 and climb.state.objective < best.objective - eps:
            best, best_moves = climb.state, list(climb.moves)
            climb.kicks_improved += 1
    climb.state, climb.moves = best, best_moves
    return timed_out


def _result(climb: _Climb, *, timed_out: bool, t0: float, t_init: float, t_search: float,
            init_obj: float, init_viol: float) -> SolveResult:
    """The :class:`SolveResult` of a finished search, judged by the reference evaluation."""
    inst, state, gains = climb.inst, climb.state, climb.gains
    sol = TetrisSolution(home=state.home.copy())
    ev = evaluate(inst, sol)
    viol = violations(inst, sol, ev)
    wall = time.perf_counter() - t0
    n_pairs = climb.tables_evaluated * max(0, climb.R - 1)
    stats = {
        "passes": climb.passes,
        "tables_evaluated": climb.tables_evaluated,
        "moves_evaluated": n_pairs,
        "moves_per_s": n_pairs / t_search if t_search > 0 else None,
        "moves_accepted": len(gains) - climb.job_accepted,
        "reinserted": climb.reinserted,
        "quota_skips": climb.quota_skips,
        "job_sweeps": climb.job_sweeps,
        "job_moves_accepted": climb.job_accepted,
        "kicks": climb.kicks,
        "kicks_improved": climb.kicks_improved,
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
    if climb.record_moves:
        stats["moves"] = climb.moves
    if viol:
        stats["violations"] = viol
        status = Status.TIME_LIMIT if timed_out else Status.INFEASIBLE
        msg = ("time limit before a feasible placement was found" if timed_out else
               "no feasible placement found by repair moves (not a proof of infeasibility)")
        stats["proof"] = False
        return SolveResult(status=status, solver="hill-climb", solution=None, objective=None,
                           wall_time_s=wall, stats=stats, message=f"{msg}: {viol[0]}")
    status = Status.TIME_LIMIT if timed_out else Status.FEASIBLE
    msg = (f"{len(gains)} moves in {climb.passes} pass(es), objective {init_obj:.6g} -> {ev.objective:.6g}"
           + (" (time limit)" if timed_out else ""))
    return SolveResult(status=status, solver="hill-climb", solution=sol, objective=ev.objective,
                       wall_time_s=wall, stats=stats, message=msg)


def solve(inst: TetrisInstance, *, time_limit: float | None = None, seed: int = 0,
          max_passes: int | None = None, reinsert: bool = False, home: np.ndarray | None = None,
          record_moves: bool = False, job_moves: bool = False,
          order: Literal["gain", "gain_per_byte"] = "gain", kicks: int = 0, kick_share: float = 0.3,
          bound: float | str | None = None, bound_time_limit: float = 600.0) -> SolveResult:
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
    bound, bound_time_limit : number, file, "compute" or None; float
        Report the certified gap to a valid lower bound (:func:`certify`): a number,
        a file written by ``solve --solver bound -o``, or ``"compute"`` (the relaxation
        of :mod:`placement.models.tetris_bound` after the search with its default method
        ``auto``, the strongest certified method that fits the instance and ``bound_time_limit``
        seconds, which it may use whole; not counted in ``time_limit``). The search is the
        same either way.

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
    init_obj, init_viol = state.objective, state.violation
    t_init = time.perf_counter() - t0
    climb = _Climb(state, seed=seed, deadline=deadline, max_passes=max_passes, reinsert=reinsert,
                   order=order, job_moves=job_moves, record_moves=record_moves)
    t_search0 = time.perf_counter()
    timed_out = climb.run()
    timed_out = _iterated_local_search(climb, kicks, kick_share, seed, timed_out)
    t_search = time.perf_counter() - t_search0
    res = _result(climb, timed_out=timed_out, t0=t0, t_init=t_init, t_search=t_search,
                  init_obj=init_obj, init_viol=init_viol)
    return certify(res, inst, bound, bound_time_limit)


def certify(res: SolveResult, inst: TetrisInstance, bound, bound_time_limit: float = 600.0) -> SolveResult:
    """Attach a valid lower bound and the certified gap to a heuristic's result (decisions unchanged).

    ``bound``: None (nothing), a number or a file (:func:`placement.tetris.certify.given_bound`),
    or ``"compute"`` (:func:`placement.models.tetris_bound.solve`, method ``auto``, within ``bound_time_limit`` s; its
    status, seconds and peak memory go to ``stats["bound_run"]``).
    """
    from placement.tetris.certify import attach, given_bound

    if bound is None:
        return res
    if bound == "compute":
        from placement.models.tetris_bound import solve as relaxation

        b = relaxation(inst, time_limit=bound_time_limit)
        res.stats["bound_run"] = {"status": str(b.status), "wall_s": b.wall_time_s,
                                  "peak_rss_mb": b.stats.get("peak_rss_mb"), "solver": b.solver}
        return res if b.bound is None else attach(res, b.bound, b.solver)
    return attach(res, given_bound(bound, inst), "given")


def solve_ils(inst: TetrisInstance, *, time_limit: float | None = None, seed: int = 0, kicks: int = 50,
              **options) -> SolveResult:
    """Hill climbing with iterated-local-search kicks (``solve(..., kicks=50)``).

    An extension beyond MAST §3.4 for small and medium instances: each kick
    re-climbs the whole placement, so its cost grows with the instance.
    """
    res = solve(inst, time_limit=time_limit, seed=seed, kicks=kicks, **options)
    res.solver = "hill-climb-ils"
    return res


def solve_seeded(inst: TetrisInstance, bound: SolveResult, *, alpha: float = 0.5, **options) -> SolveResult:
    """Hill climbing (MAST §3.4, :func:`solve`, its repair phase first) started from the forest
    bound's subproblems: the homes its trees choose at the bound's best multipliers
    (``bound.multipliers``, set by :func:`placement.models.tetris_bound.forest.solve`); ``options``
    go to :func:`solve`. ``stats["seed_home"]`` says where it started. The start may break (4)-(6) and
    the quota far more than the current homes do; when the repair does not restore them the result has
    no objective (measured once at 1,000 tables, seed 52212, Tetris page), so a caller keeps the better
    of this and a climb from the current homes."""
    from placement.models.tetris_bound.forest import ForestDecomposition

    dec = ForestDecomposition(inst, alpha=alpha)
    home = dec.homes(np.asarray(bound.multipliers, dtype=float))
    res = solve(inst, home=home, **options)
    res.stats["seed_home"] = "forest subproblems at the bound's best multipliers"
    return res
