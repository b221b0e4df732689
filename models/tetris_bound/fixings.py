"""Homes that expression (5) forbids outright: the fixings every Tetris bound may assume.

MAST Figure 4, hard constraint (5): the CPU-hours of an app's jobs with ``R(job) = r`` stay within
the app's capacity in ``r`` where one is listed. Some jobs' region is decided by one table alone: a
single-table job is where its table is (an ML job is whole; an analytics job's majority is its
only table when that table has a size, else region 0 whatever the homes), and an analytics job one
of whose tables is larger than all its others together has its majority at that table's home (no
tie is possible). So in **every** placement that meets (5):

* table ``t`` is not homed in ``r`` if the CPU-hours of one app's jobs decided by ``t``
  exceed that app's capacity in ``r`` less what is there whatever the homes (analytics jobs
  without bytes, in region 0) -- those jobs would all be in ``r``;
* a multi-table ML job is not in ``r`` if its own CPU-hours exceed its app's capacity there, or if
  one of its tables may not be homed in ``r`` (it is in ``r`` only when all its tables are);
* a multi-table analytics job is not in ``r`` if its own CPU-hours exceed its app's capacity there,
  nor where the table deciding it may not be homed.

Tables whose homes are thereby reduced to one region are *fixed*: their single-table jobs' CPU is
then in that region whatever else happens, so it is taken off the capacity and the rule is
applied again, to a fixed point (each round fixes at least one more table or stops).

Why it matters (measured, Tetris page): these are the reductions HiGHS's MIP presolve finds from
the integrality of the homes; the LP relaxation spreads a hot table over regions whose capacity
the jobs it decides would break if the table were there whole. At 100 x 200 x 5 (seed 7) the LP
rises from 16,915 to 26,404 with them (HiGHS's presolved LP: 28,708), at 200 x 400 x 8 from 9,656
to 22,861 (26,385). Every bound method of :mod:`placement.models.tetris_bound` applies them:
the LP as zero upper bounds on the forbidden columns, the Lagrangian decompositions as homes and
job regions their blocks may not choose. Being true of every feasible placement, they keep every
bound at most the optimum (tests: brute force on hypothesis instances, zero sizes included).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from placement.tetris import TetrisInstance

__all__ = ["Fixings", "cpu_fixings"]

MAX_ROUNDS = 50   # fixed-point rounds; each fixes at least one more table, and few do at all


@dataclass
class Fixings:
    """``table [T, R]``: table t may not be homed in r; ``job [J, R]``: job j may not be in r
    (multi-table jobs only; a single-table job follows its table); ``rounds``: fixed-point rounds."""

    table: np.ndarray
    job: np.ndarray
    rounds: int

    @property
    def n_table(self) -> int:
        return int(self.table.sum())

    @property
    def fixed_tables(self) -> int:
        R = self.table.shape[1] if self.table.ndim == 2 else 0
        return int((self.table.sum(axis=1) == R - 1).sum()) if R else 0


def cpu_fixings(inst: TetrisInstance) -> Fixings:
    """The homes and job regions (5) forbids in every feasible placement (module docstring)."""
    A = inst.arrays
    R, T = inst.n_regions, inst.n_tables
    lens = np.diff(A.job_ptr)
    J = len(lens)
    table = np.zeros((T, R), dtype=bool)
    job = np.zeros((J, R), dtype=bool)
    cap = A.cpu_cap
    if not J or not cap.size or not np.isfinite(cap).any():
        return Fixings(table, job, 0)
    app = A.job_app
    cpu = A.job_cpu.astype(float)
    capped = (app >= 0) & (cpu > 0)
    ml = A.job_ml.astype(bool)
    no_bytes = ~ml & (A.job_size == 0)                       # analytics without bytes: region 0
    # the table that decides a job's region alone: its only table, or (analytics) a table larger than
    # all the job's others together (the majority region is then its home, no tie possible)
    lead = np.full(J, -1, dtype=np.int64)
    ent_job = np.repeat(np.arange(J), lens)                  # the job of each (job, table) entry
    if len(A.job_tab):
        tsz = A.size[A.job_tab].astype(float)
        order = np.lexsort((-tsz, ent_job))                  # per job, its largest table first
        top = np.full(J, -1, dtype=np.int64)
        top_sz = np.zeros(J)
        firsts = order[np.concatenate([[0], np.cumsum(lens)[:-1]])[lens > 0]]
        top[lens > 0] = A.job_tab[firsts]
        top_sz[lens > 0] = tsz[firsts]
        lead[lens == 1] = top[lens == 1]
        dom = ~ml & (lens > 1) & (2 * top_sz > A.job_size)
        lead[dom] = top[dom]
    decided = capped & ~no_bytes & (lead >= 0)
    multi = (lens > 1) & capped & ~no_bytes & ~decided
    nA = cap.shape[0]
    base = np.where(np.isfinite(cap), cap, np.inf)           # [apps, R]
    const = np.zeros((nA, R))
    z = np.flatnonzero(no_bytes & capped)
    np.add.at(const[:, 0], app[z], cpu[z])
    # each multi-table job's own CPU against its app's capacity (nothing else is certain)
    jm = np.flatnonzero(multi)
    job[jm] = cpu[jm, None] > base[app[jm]] - const[app[jm]] + 1e-9
    # jobs decided by one table: the CPU per (table, app) that goes wherever the table is homed
    js = np.flatnonzero(decided)
    key, inv = np.unique(lead[js] * nA + app[js], return_inverse=True)
    forced = np.bincount(inv.ravel(), weights=cpu[js], minlength=len(key))
    k_tab, k_app = key // nA, key % nA
    fixed = np.full(T, -1, dtype=np.int64)
    rounds = 0
    while rounds < MAX_ROUNDS:
        rounds += 1
        used = const.copy()                                   # CPU certain per (app, region)
        f = fixed[k_tab] >= 0
        np.add.at(used, (k_app[f], fixed[k_tab[f]]), forced[f])
        # a table's own forced CPU is not counted against itself
        own = np.zeros((len(key), R))
        own[np.flatnonzero(f), fixed[k_tab[f]]] = forced[f]
        room = base[k_app] - used[k_app] + own                # [keys, R]
        bad = forced[:, None] > room + 1e-9
        new = np.zeros((T, R), dtype=bool)
        np.logical_or.at(new, k_tab, bad)
        new &= ~(new.all(axis=1)[:, None])                    # no home left: (5) cannot hold; not ours to prove
        grew = new & ~table
        table |= new
        R_left = R - table.sum(axis=1)
        now = np.flatnonzero((R_left == 1) & (fixed < 0))
        if len(now):
            fixed[now] = np.argmax(~table[now], axis=1)
        if not grew.any() and not len(now):
            break
    # a multi-table ML job is in r only if every table is; an analytics job decided by one table is
    # where that table is
    mlm = np.flatnonzero(ml & (lens > 1))
    if len(mlm) and table.any():
        hit = np.zeros((J, R), dtype=bool)
        np.logical_or.at(hit, ent_job, table[A.job_tab])
        job[mlm] |= hit[mlm]
    dm = np.flatnonzero(~ml & (lens > 1) & (lead >= 0) & (A.job_size > 0))
    job[dm] |= table[lead[dm]]
    return Fixings(table, job, rounds)
