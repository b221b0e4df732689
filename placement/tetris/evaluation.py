"""Reference evaluation of Tetris placements: expressions (1)-(9) of MAST Figure 4.

This module is the single source of truth: the exact model and every heuristic
are judged by :func:`evaluate` and :func:`violations`, never by their own numbers.

Semantics (shared by the reference evaluation, the exact model and the heuristics)
-------------------------------
R(job)
    ML job: the common home of all its tables, else NULL (-1).
    Analytics job: the region holding the largest total size of its tables,
    ties to the lowest region index.
(1) cross-region bytes
    Per job, the size of each of its tables whose home differs from R(job); a
    NULL job counts all its tables.
(2), (7), (8) GPU balance
    ``sum_{r,g,k} w_k * (D[r,g,k]/TD[g,k] - S[r,g]/TS[g])**2 * sigmoid(max(0, D[r,g] - S[r,g]))``
    where D[r,g,k] is the GPU-hours of ML jobs with R(job)=r, type g and priority k,
    TD and TS are instance constants (total demand of (g,k) over all jobs, total
    supply of g), and D[r,g] sums D over priorities. A (g,k) with TD = 0 adds nothing.
(3), (9) storage balance
    ``sum_r (SD[r]/sum(size) - cap[r]/sum(cap))**2``.
Objective
    ``w1*(1) + w2*(2) + w3*(3)``.
Hard constraints (the paper's strict ``<`` read as ``<=``)
    (4) SD[r] <= storage_capacity[r];
    (5) CPU-hours of an app's jobs with R(job)=r <= cpu_capacity[app][r] where listed;
    (6) GPU-hours of high-priority ML jobs whose R(job) has their GPU type >= home_threshold;
    move quota: total size of tables whose home differs from the instance's
    current home <= move_quota (when set). The quota is a property of the daily
    plan (§3.4), so the exact model and the heuristics share it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .instance import TetrisArrays, TetrisInstance, TetrisSolution

__all__ = ["TetrisEvaluation", "evaluate", "violations", "job_regions", "sigmoid",
           "gpu_balance_terms", "storage_balance_terms", "stored_bytes"]


def sigmoid(x: np.ndarray | float) -> np.ndarray:
    """Numerically stable logistic function 1/(1+e^-x) (the paper's Expression 8)."""
    x = np.asarray(x, dtype=float)
    return np.where(x >= 0, 1.0 / (1.0 + np.exp(-np.abs(x))), np.exp(-np.abs(x)) / (1.0 + np.exp(-np.abs(x))))


def job_regions(a: TetrisArrays, home: np.ndarray, n_regions: int) -> tuple[np.ndarray, np.ndarray]:
    """R(job) for every job, and the per-(job, region) bytes of its tables.

    Returns ``(region, load)`` where ``region[j]`` is R(job) (-1 for NULL) and
    ``load[j, r]`` the total size of job j's tables homed at r.
    """
    J = len(a.job_ptr) - 1
    reg = home[a.job_tab]
    load = np.zeros((J, n_regions), dtype=np.int64)
    np.add.at(load, (a.entry_job, reg), a.size[a.job_tab])
    if J == 0:
        return np.zeros(0, dtype=np.int64), load
    lo = np.minimum.reduceat(reg, a.job_ptr[:-1])
    hi = np.maximum.reduceat(reg, a.job_ptr[:-1])
    ml_region = np.where(lo == hi, lo, -1)
    # argmax returns the first maximum: ties go to the lowest region index.
    analytics_region = np.argmax(load, axis=1)
    return np.where(a.job_ml, ml_region, analytics_region), load


def demand_tensor(a: TetrisArrays, region: np.ndarray, n_regions: int) -> np.ndarray:
    """D[r, g, k]: GPU-hours of ML jobs with R(job)=r, GPU type g, priority k."""
    G, K = a.total_demand.shape
    D = np.zeros((n_regions, G, K), dtype=np.int64)
    sel = np.flatnonzero(a.job_ml & (region >= 0))
    np.add.at(D, (region[sel], a.job_gpu[sel], a.job_prio[sel]), a.job_gh[sel])
    return D


def gpu_balance_terms(a: TetrisArrays, D: np.ndarray) -> np.ndarray:
    """Per-(r, g, k) values of w_k * (7) * (8); zero where TD[g,k] = 0."""
    TD = a.total_demand.astype(float)
    TS = a.total_supply.astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        dshare = np.where(TD[None] > 0, D / np.where(TD > 0, TD, 1)[None], 0.0)
        sshare = np.where(TS > 0, a.supply / np.where(TS > 0, TS, 1), 0.0)
    dev2 = (dshare - sshare[:, :, None]) ** 2
    over = sigmoid(np.maximum(0, D.sum(axis=2) - a.supply))
    return np.where(TD[None] > 0, a.prio_w[None, None, :] * dev2 * over[:, :, None], 0.0)


def storage_balance_terms(a: TetrisArrays, SD: np.ndarray) -> np.ndarray:
    """Per-region values of (9)."""
    if a.total_size == 0:
        return np.zeros_like(SD, dtype=float)
    return (SD / a.total_size - a.storage_cap / a.total_capacity) ** 2


@dataclass
class TetrisEvaluation:
    """Objective terms, hard-constraint slacks and the paper's measures of one placement."""

    objective: float
    cross_region_bytes: int
    gpu_balance: float
    storage_balance: float
    job_region: np.ndarray
    demand: np.ndarray
    storage_used: np.ndarray
    cpu_used: np.ndarray
    home_gpu_hours: int
    bytes_moved: int
    measures: dict[str, float] = field(default_factory=dict)

    def terms(self, inst: TetrisInstance) -> dict[str, float]:
        return {
            "objective": self.objective,
            "(1) cross_region_bytes": self.cross_region_bytes,
            "(2) gpu_balance": self.gpu_balance,
            "(3) storage_balance": self.storage_balance,
            "w1*(1)": inst.w1 * self.cross_region_bytes,
            "w2*(2)": inst.w2 * self.gpu_balance,
            "w3*(3)": inst.w3 * self.storage_balance,
            "(6) home_gpu_hours": self.home_gpu_hours,
            "bytes_moved": self.bytes_moved,
        }


def evaluate(inst: TetrisInstance, sol: TetrisSolution | np.ndarray) -> TetrisEvaluation:
    """Evaluate a placement: objective (1)-(3) with every term, constraint usage, measures."""
    a = inst.arrays
    home = ev_home(sol)
    R = inst.n_regions
    region, load = job_regions(a, home, R)
    has_region = region >= 0
    bytes_local = np.where(has_region, load[np.arange(len(region)), np.where(has_region, region, 0)], 0)
    cross = int((a.job_size - bytes_local).sum())
    D = demand_tensor(a, region, R)
    gpu = float(gpu_balance_terms(a, D).sum())
    SD = np.bincount(home, weights=a.size, minlength=R).astype(np.int64)
    storage = float(storage_balance_terms(a, SD).sum())
    cpu = np.zeros((len(inst.apps), R), dtype=np.int64)
    sel = np.flatnonzero(has_region & (a.job_app >= 0))
    np.add.at(cpu, (a.job_app[sel], region[sel]), a.job_cpu[sel])
    at_home = runnable_at_home(a, region)
    home_gh = int(a.job_gh[at_home & a.job_high].sum())
    moved = int(a.size[home != a.home0].sum())
    ev = TetrisEvaluation(
        objective=inst.w1 * cross + inst.w2 * gpu + inst.w3 * storage,
        cross_region_bytes=cross, gpu_balance=gpu, storage_balance=storage,
        job_region=region, demand=D, storage_used=SD, cpu_used=cpu,
        home_gpu_hours=home_gh, bytes_moved=moved)
    ev.measures = paper_measures(inst, ev, at_home)
    return ev


def ev_home(sol: TetrisSolution | np.ndarray) -> np.ndarray:
    return sol.home if isinstance(sol, TetrisSolution) else np.asarray(sol, dtype=np.int64)


def runnable_at_home(a: TetrisArrays, region: np.ndarray) -> np.ndarray:
    """ML jobs whose R(job) is set and has their GPU type (I(GPU-Type, R(job)) in (6))."""
    ok = a.job_ml & (region >= 0)
    idx = np.flatnonzero(ok)
    ok[idx] = a.supply[region[idx], a.job_gpu[idx]] > 0
    return ok


def paper_measures(inst: TetrisInstance, ev: TetrisEvaluation, at_home: np.ndarray) -> dict[str, float]:
    """The paper's own measures (§5.7): high-priority demand/supply ratio and spread, home rate.

    ``hp_ratio_max`` is the highest ratio over regions with GPU supply of the
    high-priority GPU-hours demanded there (all GPU types) to the GPU-hours
    supplied there (MAST: 2.63 -> 0.98); ``hp_ratio_std`` the population standard
    deviation of that ratio across those regions (0.76 -> 0.30);
    ``home_rate`` the share of ML GPU-hours runnable in their own R(job)
    (training-at-home-region, 90.82% -> 93.02%), ``home_rate_high`` the same for
    high-priority work.
    """
    a = inst.arrays
    hp = ev.demand[:, :, list(inst.high_priorities)].sum(axis=(1, 2)) if inst.high_priorities else \
        np.zeros(inst.n_regions)
    sup = a.supply.sum(axis=1)
    has = sup > 0
    ratio = hp[has] / sup[has]
    ml_gh = a.job_gh[a.job_ml].sum()
    high_gh = a.job_gh[a.job_high].sum()
    return {
        "hp_ratio_max": float(ratio.max()) if len(ratio) else 0.0,
        "hp_ratio_std": float(ratio.std()) if len(ratio) else 0.0,
        "hp_demand_without_supply": float(hp[~has].sum()),
        "home_rate": float(a.job_gh[at_home].sum() / ml_gh) if ml_gh else 1.0,
        "home_rate_high": float(a.job_gh[at_home & a.job_high].sum() / high_gh) if high_gh else 1.0,
        "null_jobs": int((a.job_ml & (ev.job_region < 0)).sum()),
        "bytes_moved": float(ev.bytes_moved),
    }


def stored_bytes(inst: TetrisInstance, home: np.ndarray, replicas=None) -> np.ndarray:
    """Bytes stored per region: homes plus replicas (a replica in its own home region is ignored)."""
    a = inst.arrays
    used = np.bincount(home, weights=a.size, minlength=inst.n_regions).astype(np.int64)
    if replicas is not None:
        for t, regs in enumerate(replicas):
            for r in regs:
                if r != home[t]:
                    used[r] += a.size[t]
    return used


def violations(inst: TetrisInstance, sol: TetrisSolution | np.ndarray,
               ev: TetrisEvaluation | None = None) -> list[str]:
    """Every broken hard constraint (4), (5), (6) and the move quota, one line each.

    (4) counts the replicas of ``sol`` too when it has them (§3.5: a region must
    have room for every copy it stores).
    """
    ev = ev if ev is not None else evaluate(inst, sol)
    a = inst.arrays
    out = []
    replicas = sol.replicas if isinstance(sol, TetrisSolution) else None
    used = ev.storage_used if replicas is None else stored_bytes(inst, ev_home(sol), replicas)
    for r in np.flatnonzero(used > a.storage_cap):
        what = "storage" if replicas is None else "storage with replicas"
        out.append(f"(4) {what} in {inst.region_names[r]}: {used[r]} > {a.storage_cap[r]}")
    for ai, r in zip(*np.nonzero(ev.cpu_used > a.cpu_cap), strict=True):
        out.append(f"(5) CPU of app {inst.apps[ai].name} in {inst.region_names[r]}: "
                   f"{ev.cpu_used[ai, r]} > {int(a.cpu_cap[ai, r])}")
    if ev.home_gpu_hours < inst.home_threshold:
        out.append(f"(6) high-priority GPU-hours at home: {ev.home_gpu_hours} < {inst.home_threshold}")
    if inst.move_quota is not None and ev.bytes_moved > inst.move_quota:
        out.append(f"move quota: {ev.bytes_moved} bytes moved > {inst.move_quota}")
    return out
