"""Extra table replicas after home placement (MAST OSDI'24 §3.5).

Terms
-----
replica
    A copy of a table in a region other than its home. ``solution.replicas[t]`` lists
    the replica regions of table ``t`` (sorted region indices).
present(t, r)
    Table ``t`` is in region ``r``: its home or one of its replicas.
runnable ML job (data-GPU collocation, §3.1)
    Some region ``r`` holds all of the job's tables (``present``) and has its GPU
    type (supply > 0). Before replicas that region can only be R(job).
collocation rate
    The share of ML jobs that are runnable; also weighted by GPU-hours and, as in
    MAST's V2 definition, by GPU-hours of high-priority jobs.
storage overhead
    Replica bytes / total table bytes.
hot table
    One of the ``hot_share`` most-read tables by number of ML jobs (at least two).

Semantics
---------
Replicas **count against storage capacity (4)**: in every region, home bytes plus
replica bytes never exceed ``storage_capacity`` (a replica that does not fit is not
made and is reported). Replicas do not change the objective (1)-(3), which is
defined on homes; ``objective`` is the reference evaluation of the homes.

Phases
------
Storage is the binding resource (replicas count against (4)), so the phases run in
the order of their purpose: collocation, then hot tables within their quota, then DR
copies for whatever has no copy outside its home yet. Any replica is outside the
home, so it also serves as the table's DR copy.

1. **Collocation replicas**: for every ML job that is not runnable (by priority,
   then GPU-hours, heaviest first, then index), the regions with its GPU type in
   decreasing supply of that type (the paper: "the region with the highest
   supply"); the first one with room for the job's missing tables receives them.
   Jobs for which no such region has room stay unrunnable (``jobs_without_room``).
2. **Hot tables per GPU type**: a storage quota ``storage_quota_share`` x total
   table bytes is split over (region, GPU type) in proportion to GPU supply; each
   hot table is replicated to every region with a GPU type its readers use, in
   decreasing supply, while that (region, type) quota and the region's storage allow.
3. **DR replica** for every table without a copy outside its home. DR policy: among
   regions other than the home with room for the table, the one whose GPU types
   cover the most GPU-hours of the ML jobs reading the table ("hardware to handle
   the load after a disaster"), then the most free storage, then the lowest index;
   tables by decreasing reader GPU-hours, then size, then index. Tables for which no
   region has room get none (``dr_missing``; ``dr_coverage`` is the share with a copy).

Everything is deterministic (ties by lowest index). Statuses: ``feasible`` (the
homes pass :func:`violations` and replicas respect storage); ``infeasible`` when a
given ``home`` violates a hard constraint; otherwise the status of the
hill-climbing run that produced the homes when it found no feasible placement, and
``time_limit`` (with replicas on its incumbent) when it stopped at its time limit.
"""

from __future__ import annotations

import time

import numpy as np

from placement.result import SolveResult, Status
from placement.tetris.evaluation import evaluate, stored_bytes, violations
from placement.tetris.instance import TetrisInstance, TetrisSolution

__all__ = ["solve", "collocation", "stored_bytes"]


def _present_masks(inst: TetrisInstance, home: np.ndarray, replicas) -> list[int]:
    """Per table, a bit mask of the regions holding it (home and replicas)."""
    masks = [1 << int(h) for h in home]
    if replicas is not None:
        for t, regs in enumerate(replicas):
            for r in regs:
                masks[t] |= 1 << int(r)
    return masks


def collocation(inst: TetrisInstance, home: np.ndarray, replicas=None) -> dict[str, float]:
    """Collocation rates of ML jobs given homes and replicas (§3.1, §3.5).

    A job is runnable when some region holds all its tables and has its GPU type.
    Returns the share of ML jobs, of ML GPU-hours and of high-priority GPU-hours
    that are runnable, and a boolean array ``runnable`` over jobs.
    """
    a = inst.arrays
    masks = _present_masks(inst, home, replicas)
    type_mask = [sum(1 << r for r in np.flatnonzero(a.supply[:, g] > 0)) for g in range(a.supply.shape[1])]
    runnable = np.zeros(inst.n_jobs, dtype=bool)
    for j in np.flatnonzero(a.job_ml):
        m = type_mask[a.job_gpu[j]]
        for t in a.job_tab[a.job_ptr[j]:a.job_ptr[j + 1]]:
            m &= masks[t]
            if not m:
                break
        runnable[j] = m != 0
    ml, high = a.job_ml, a.job_high
    gh = a.job_gh
    return {
        "jobs": float(runnable[ml].mean()) if ml.any() else 1.0,
        "gpu_hours": float(gh[runnable & ml].sum() / gh[ml].sum()) if gh[ml].sum() else 1.0,
        "high_gpu_hours": float(gh[runnable & high].sum() / gh[high].sum()) if gh[high].sum() else 1.0,
        "runnable": runnable,
    }


class _Copies:
    """Where every table is held and what room is left, as replicas are added.

    ``masks[t]``: bit mask of the regions holding table t (``present``); ``free[r]``:
    storage capacity of region r minus its home and replica bytes; ``reps[t]``: the
    replica regions of t in the order made; ``made``: replicas per phase.
    """

    def __init__(self, inst: TetrisInstance, home: np.ndarray, budget: float = float("inf")) -> None:
        a = inst.arrays
        self.size = a.size
        self.budget = budget  # replica bytes still allowed (``replica_budget``)
        self.free = (a.storage_cap - np.bincount(home, weights=a.size, minlength=inst.n_regions)).astype(np.int64)
        self.masks = _present_masks(inst, home, None)
        self.reps: list[list[int]] = [[] for _ in range(inst.n_tables)]
        self.made = {"dr": 0, "collocation": 0, "hot": 0}

    def fits(self, r: int, nbytes: int) -> bool:
        """Region r has room for ``nbytes`` more and the replica budget allows them."""
        return nbytes <= self.free[r] and nbytes <= self.budget

    def add(self, t: int, r: int, phase: str) -> None:
        self.masks[t] |= 1 << r
        self.free[r] -= self.size[t]
        self.budget -= int(self.size[t])
        self.reps[t].append(r)
        self.made[phase] += 1


def _reader_gpu_hours(inst: TetrisInstance) -> np.ndarray:
    """W[t, g]: GPU-hours of the ML jobs reading table t, by GPU type."""
    a = inst.arrays
    T = inst.n_tables
    ml_e = a.job_ml[a.tab_job]
    W = np.zeros((T, a.supply.shape[1]))
    ent_t = np.repeat(np.arange(T), np.diff(a.tab_ptr))
    np.add.at(W, (ent_t[ml_e], a.job_gpu[a.tab_job[ml_e]]), a.job_gh[a.tab_job[ml_e]])
    return W


def _regions_by_supply(inst: TetrisInstance) -> list[np.ndarray]:
    """Per GPU type, the regions with that type in decreasing supply of it (ties to the lowest index)."""
    a = inst.arrays
    suppos = a.supply > 0
    return [np.flatnonzero(suppos[:, g])[np.argsort(-a.supply[suppos[:, g], g], kind="stable")]
            for g in range(a.supply.shape[1])]


def _collocation_replicas(inst: TetrisInstance, copies: _Copies, by_supply: list[np.ndarray]) -> int:
    """Phase 1: make every ML job runnable where room allows (data-GPU collocation, §3.1).

    Jobs by priority, then GPU-hours (heaviest first), then index; the missing tables
    go to the first region with the job's GPU type, by decreasing supply, that has
    room for all of them. Returns the number of jobs left without room.
    """
    a, size, masks = inst.arrays, copies.size, copies.masks
    type_mask = [sum(1 << int(r) for r in regs) for regs in by_supply]
    ml_jobs = np.flatnonzero(a.job_ml)
    ml_jobs = ml_jobs[np.lexsort((ml_jobs, -a.job_gh[ml_jobs], a.job_prio[ml_jobs]))]
    not_placed = 0
    for j in ml_jobs:
        tabs = a.job_tab[a.job_ptr[j]:a.job_ptr[j + 1]]
        g = a.job_gpu[j]
        m = type_mask[g]
        for t in tabs:
            m &= masks[t]
        if m:
            continue  # already runnable
        for r in by_supply[g]:
            missing = [int(t) for t in tabs if not masks[t] >> int(r) & 1]
            if copies.fits(int(r), sum(int(size[t]) for t in missing)):
                for t in missing:
                    copies.add(t, int(r), "collocation")
                break
        else:
            not_placed += 1
    return not_placed


def _hot_tables(inst: TetrisInstance, hot_share: float) -> np.ndarray:
    """The ``hot_share`` most-read tables by number of ML readers (ties to the lowest
    index), those with at least two readers."""
    a = inst.arrays
    T = inst.n_tables
    ml_e = a.job_ml[a.tab_job]
    ent_t = np.repeat(np.arange(T), np.diff(a.tab_ptr))
    n_readers = np.bincount(ent_t[ml_e], minlength=T)
    n_hot = int(np.ceil(hot_share * T)) if T else 0
    hot = np.lexsort((np.arange(T), -n_readers))[:n_hot]
    return hot[n_readers[hot] >= 2]


def _hot_replicas(inst: TetrisInstance, copies: _Copies, by_supply: list[np.ndarray], W: np.ndarray,
                  hot: np.ndarray, storage_quota_share: float) -> None:
    """Phase 2: hot tables per GPU type within a storage quota proportional to supply.

    The quota ``storage_quota_share`` x total bytes is split over (region, GPU type)
    by supply; per type, hot tables by their readers' GPU-hours of that type go to
    every region with the type, by decreasing supply, while quota and storage allow.
    """
    a, size, masks = inst.arrays, copies.size, copies.masks
    R, G = a.supply.shape
    tot_sup = a.supply.sum()
    budget = (storage_quota_share * a.total_size * a.supply / tot_sup) if tot_sup else np.zeros((R, G))
    for g in range(G):
        for t in hot[np.argsort(-W[hot, g], kind="stable")]:
            if W[t, g] <= 0:
                continue
            for r in by_supply[g]:
                r = int(r)
                if masks[t] >> r & 1 or not copies.fits(r, int(size[t])) or size[t] > budget[r, g]:
                    continue
                budget[r, g] -= size[t]
                copies.add(int(t), r, "hot")


def _dr_replicas(inst: TetrisInstance, home: np.ndarray, copies: _Copies, W: np.ndarray) -> int:
    """Phase 3: a DR replica outside the home for every table that has no copy yet.

    Tables by decreasing reader GPU-hours, then size, then index; the region (not the
    home, with room) whose GPU types cover the most reader GPU-hours, then the most
    free storage, then the lowest index. Returns the number of tables left without one.
    """
    a, size, free = inst.arrays, copies.size, copies.free
    T = inst.n_tables
    cover = W @ (a.supply > 0).T.astype(float)  # [t, r]: reader GPU-hours region r can run
    order = np.lexsort((np.arange(T), -size, -W.sum(axis=1)))
    dr_missing = 0
    for t in order:
        if copies.reps[t]:
            continue  # a collocation or hot replica is already outside the home
        ok = (free >= size[t]) & (size[t] <= copies.budget)
        ok[home[t]] = False
        if not ok.any():
            dr_missing += 1
            continue
        cand = np.flatnonzero(ok)
        best = cand[np.lexsort((cand, -free[cand], -cover[t, cand]))[0]]
        copies.add(int(t), int(best), "dr")
    return dr_missing


def solve(inst: TetrisInstance, *, seed: int = 0, home: np.ndarray | None = None,
          storage_quota_share: float = 0.1, hot_share: float = 0.01, dr: bool = True,
          time_limit: float | None = None, replica_budget: float | None = None) -> SolveResult:
    """Add DR, collocation and hot-table replicas to a home placement (MAST §3.5).

    Parameters
    ----------
    inst : TetrisInstance
    seed : int
        Seed of the hill-climbing run when ``home`` is not given.
    home : array of int, optional
        Home region per table; default: run :func:`placement.solvers.hill_climb.solve` first.
    storage_quota_share : float
        Hot-table replica budget as a share of the total table bytes, split over
        (region, GPU type) in proportion to supply.
    hot_share : float
        Share of tables (most ML readers first, at least two readers) that are hot.
    dr : bool
        Create the DR replicas of phase 3.
    time_limit : float, optional
        Passed to hill climbing when it runs.
    replica_budget : float, optional
        Cap on the total replica bytes (all phases together, in their order); default no cap
        beyond storage (4). The joint home-and-replica model (:mod:`placement.models.tetris_joint`) takes
        the same budget, so the two pipelines can be compared at equal storage.

    Returns
    -------
    SolveResult
        ``solution.replicas`` filled; stats: collocation before/after (jobs, GPU-hours,
        high-priority GPU-hours), storage overhead, replicas per table, DR coverage,
        replicas per phase, jobs left not runnable.
    """
    t0 = time.perf_counter()
    if replica_budget is not None and not (isinstance(replica_budget, (int, float)) and replica_budget >= 0
                                           and not isinstance(replica_budget, bool)):
        raise ValueError(f"replica_budget: must be a number >= 0, got {replica_budget!r}")
    budget = float("inf") if replica_budget is None else float(replica_budget)
    hc_stats = None
    status = Status.FEASIBLE
    if home is None:
        from placement.solvers.hill_climb import solve as hill_climb

        hc = hill_climb(inst, seed=seed, time_limit=time_limit)
        if hc.solution is None:
            return SolveResult(status=hc.status, solver="replicas", wall_time_s=time.perf_counter() - t0,
                               stats={"hill_climb": hc.stats, "proof": False},
                               message=f"hill climbing: {hc.message}")
        home, hc_stats = hc.solution.home, hc.stats
        if hc.status == Status.TIME_LIMIT:
            status = Status.TIME_LIMIT  # homes are hill climbing's incumbent at its time limit
    home = np.asarray(home, dtype=np.int64)
    copies = _Copies(inst, home, budget)
    W = _reader_gpu_hours(inst)
    before = collocation(inst, home)
    by_supply = _regions_by_supply(inst)
    not_placed = _collocation_replicas(inst, copies, by_supply)
    hot = _hot_tables(inst, hot_share)
    _hot_replicas(inst, copies, by_supply, W, hot, storage_quota_share)
    dr_missing = _dr_replicas(inst, home, copies, W) if dr and inst.n_regions > 1 else 0
    replicas = tuple(tuple(sorted(x)) for x in copies.reps)
    res = _result(inst, TetrisSolution(home=home.copy(), replicas=replicas), status, t0, before=before,
                  made=copies.made, not_placed=not_placed, dr_missing=dr_missing, n_hot=len(hot),
                  hc_stats=hc_stats)
    res.stats["replica_budget"] = replica_budget
    return res


def _result(inst: TetrisInstance, sol: TetrisSolution, status: Status, t0: float, *, before: dict,
            made: dict, not_placed: int, dr_missing: int, n_hot: int, hc_stats: dict | None) -> SolveResult:
    """The :class:`SolveResult`: collocation before/after, storage, replicas per phase;
    ``infeasible`` when the homes violate a hard constraint."""
    a = inst.arrays
    T = inst.n_tables
    home, replicas = sol.home, sol.replicas
    after = collocation(inst, home, replicas)
    stored = stored_bytes(inst, home, replicas)
    ev = evaluate(inst, sol)
    viol = violations(inst, sol, ev)
    storage_ok = bool((stored <= a.storage_cap).all())
    rep_bytes = int(sum(a.size[t] * len(r) for t, r in enumerate(replicas)))
    n_rep = np.array([len(r) for r in replicas])
    stats = {
        "collocation_jobs_before": before["jobs"], "collocation_jobs_after": after["jobs"],
        "collocation_gpu_hours_before": before["gpu_hours"], "collocation_gpu_hours_after": after["gpu_hours"],
        "collocation_high_gpu_hours_before": before["high_gpu_hours"],
        "collocation_high_gpu_hours_after": after["high_gpu_hours"],
        "ml_jobs_not_runnable": int((~after["runnable"] & a.job_ml).sum()),
        "jobs_without_room": not_placed,
        "storage_overhead": rep_bytes / a.total_size if a.total_size else 0.0,
        "replica_bytes": rep_bytes,
        "replicas_per_table_mean": float(n_rep.mean()) if T else 0.0,
        "replicas_per_table_max": int(n_rep.max()) if T else 0,
        "replicas_by_phase": dict(made),
        "dr_coverage": float((n_rep > 0).mean()) if T else 1.0,
        "dr_missing": dr_missing,
        "hot_tables": int(n_hot),
        "storage_used_share": float(stored.sum() / a.total_capacity),
        "replicas_within_storage": storage_ok,
    }
    if hc_stats is not None:
        stats["hill_climb"] = {k: v for k, v in hc_stats.items() if k != "moves"}
    wall = time.perf_counter() - t0
    if viol or not storage_ok:  # replicas never overfill a region, so only a given home can
        stats["violations"] = viol
        stats["proof"] = False  # the given home is infeasible; nothing is proven about the instance
        return SolveResult(status=Status.INFEASIBLE, solver="replicas", solution=None, wall_time_s=wall,
                           stats=stats, message=f"the given home placement is infeasible: {(viol or ['storage'])[0]}")
    msg = (f"collocation {100 * before['jobs']:.1f}% -> {100 * after['jobs']:.1f}% of ML jobs, "
           f"storage overhead {100 * stats['storage_overhead']:.1f}%")
    return SolveResult(status=status, solver="replicas", solution=sol, objective=ev.objective,
                       wall_time_s=wall, stats=stats, message=msg)
