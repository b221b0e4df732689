"""Seeded generator of Tetris instances with MAST-like shapes.

Shapes (MAST §2-3, Figure 3): a few *hot* tables read by many jobs (Zipf
popularity), GPU types spread unevenly over regions, GPUs scarcer than demand,
and a skewed starting placement like MAST's manual V0 (most tables in a few
regions, drawn from a Dirichlet(0.5) region mix).

Feasibility by construction: capacities (4)-(5) and the threshold of (6) are
set from the starting placement with slack, so the starting placement is always
feasible and hill climbing starts from a feasible point. Everything is integer
and deterministic for a seed.
"""

from __future__ import annotations

import math

import numpy as np

from placement.errors import InstanceError
from placement.tetris.instance import TetrisInstance, load_instance
from placement.validate import integer, number
from placement.validate import seed as seed_of

__all__ = ["generate_tetris", "tetris_document"]

GPU_TYPES = ["A100", "H100", "V100", "MI300", "L40", "T4", "P100", "TPUv4"]


def _sample_tables(rng: np.random.Generator, popularity: np.ndarray, k: np.ndarray) -> list[np.ndarray]:
    """Per job, ``k[j]`` distinct tables drawn by popularity without replacement.

    Small instances use Gumbel-top-k on log-popularity; large ones draw with
    replacement from the CDF and keep the first ``k`` distinct tables, which is the
    same successive-sampling distribution at O(J) vectorized cost.
    """
    J, T = len(k), len(popularity)
    if J * T <= 5_000_000:
        keys = np.log(popularity)[None, :] + rng.gumbel(size=(J, T))
        return [np.sort(np.argpartition(-keys[j], k[j] - 1)[: k[j]]) for j in range(J)]
    cdf = np.cumsum(popularity)
    cdf[-1] = 1.0
    draws = np.minimum(np.searchsorted(cdf, rng.random((J, 8 * int(k.max()))), side="right"), T - 1)
    out = []
    for j in range(J):
        distinct = list(dict.fromkeys(draws[j].tolist()))[: k[j]]
        if len(distinct) < k[j]:  # rare: very hot tables; finish the draw exactly
            rest = np.setdiff1d(np.arange(T), distinct)
            p = popularity[rest] / popularity[rest].sum()
            distinct += rng.choice(rest, size=k[j] - len(distinct), replace=False, p=p).tolist()
        out.append(np.sort(np.asarray(distinct, dtype=np.int64)))
    return out


def tetris_document(n_tables: int = 10, n_jobs: int = 15, n_regions: int = 3, *, seed: int = 0,
                    n_gpu_types: int = 2, n_priorities: int = 3, n_apps: int | None = None,
                    zipf: float = 1.1, ml_share: float = 0.6, max_tables_per_job: int = 3,
                    quota_share: float = 0.3, storage_room: float = 2.2, name: str = "") -> dict:
    """A Tetris instance document (file format version 1); see :func:`generate_tetris`."""
    n_tables, n_jobs, n_regions = (integer(n_tables, "n_tables", 1), integer(n_jobs, "n_jobs", 0),
                                   integer(n_regions, "n_regions", 1))
    integer(n_gpu_types, "n_gpu_types", 1, len(GPU_TYPES))
    integer(n_priorities, "n_priorities", 1)
    if n_apps is not None:
        integer(n_apps, "n_apps", 1)
    integer(max_tables_per_job, "max_tables_per_job", 1)
    for what, v in (("zipf", zipf), ("ml_share", ml_share), ("quota_share", quota_share),
                    ("storage_room", storage_room)):
        number(v, what)
    if ml_share > 1:
        raise InstanceError("ml_share", f"must be a share in 0..1, got {ml_share!r}")
    rng = np.random.default_rng(seed_of(seed))
    R, T, J, G, K = n_regions, n_tables, n_jobs, n_gpu_types, n_priorities
    A = n_apps if n_apps is not None else max(1, J // 10)
    regions = [f"r{i}" for i in range(R)]
    gpus = GPU_TYPES[:G]

    size = np.maximum(1, np.round(rng.lognormal(3.0, 1.2, T))).astype(np.int64)
    v0_mix = rng.dirichlet(np.full(R, 0.5))
    home = rng.choice(R, size=T, p=v0_mix)

    popularity = 1.0 / np.arange(1, T + 1) ** zipf
    popularity = popularity[rng.permutation(T)]
    popularity /= popularity.sum()
    is_ml = rng.random(J) < ml_share
    k_tables = rng.integers(1, min(max_tables_per_job, T) + 1, size=J)
    job_tables = _sample_tables(rng, popularity, k_tables)
    gpu_mix = rng.dirichlet(np.full(G, 1.0))
    job_gpu = rng.choice(G, size=J, p=gpu_mix)
    prio_p = np.arange(1, K + 1, dtype=float)
    prio_p /= prio_p.sum()  # lower priorities (larger k) are more common
    job_prio = rng.choice(K, size=J, p=prio_p)
    job_gh = np.maximum(1, np.round(rng.lognormal(3.5, 1.0, J))).astype(np.int64)
    job_cpu = np.maximum(1, np.round(rng.lognormal(2.0, 0.8, J))).astype(np.int64)
    job_app = rng.integers(0, A, size=J)

    # Uneven GPU types over regions: each type in a random subset of regions, every
    # region with at least one type; supply scarcer than demand (60-100%).
    has = rng.random((R, G)) < 0.6
    has[rng.integers(0, R, size=G), np.arange(G)] = True
    for r in np.flatnonzero(~has.any(axis=1)):
        has[r, rng.integers(0, G)] = True
    demand_g = np.bincount(job_gpu[is_ml], weights=job_gh[is_ml], minlength=G)
    share = rng.dirichlet(np.full(R, 3.0), size=G).T * has
    share /= share.sum(axis=0, keepdims=True)
    scarcity = rng.uniform(0.6, 1.0, size=G)
    supply = np.floor(share * np.maximum(demand_g, 10) * scarcity).astype(np.int64)
    supply[has & (supply == 0)] = 1

    # Starting placement: storage and CPU from V0 (R(job) as the evaluation defines it).
    used = np.bincount(home, weights=size, minlength=R)
    # Room for homes and for §3.5's DR and extra replicas (MAST: +75-125% storage).
    cap = np.maximum(used, math.ceil(size.sum() / R * storage_room)).astype(np.int64)
    cap = (cap * rng.uniform(1.0, 1.25, R)).astype(np.int64) + 1
    job_region = np.empty(J, dtype=np.int64)
    for j in range(J):
        regs = home[job_tables[j]]
        if is_ml[j]:
            job_region[j] = regs[0] if (regs == regs[0]).all() else -1
        else:
            job_region[j] = int(np.argmax(np.bincount(regs, weights=size[job_tables[j]], minlength=R)))
    cpu_used = np.zeros((A, R), dtype=np.int64)
    sel = job_region >= 0
    np.add.at(cpu_used, (job_app[sel], job_region[sel]), job_cpu[sel])
    apps = []
    for a in range(A):
        caps = {}
        for r in range(R):
            if rng.random() < 0.5:  # (5) applies in about half of the (app, region) pairs
                caps[regions[r]] = int(cpu_used[a, r] * rng.uniform(1.1, 1.6)) + int(rng.integers(5, 40))
        apps.append({"name": f"app{a}", "cpu_capacity": caps})
    high = list(range(min(2, K)))
    at_home = is_ml & sel & (job_prio < len(high))
    at_home[at_home] = supply[job_region[at_home], job_gpu[at_home]] > 0
    threshold = int(0.8 * job_gh[at_home].sum())

    jobs = []
    for j in range(J):
        d = {"name": f"j{j}", "kind": "ml" if is_ml[j] else "analytics",
             "tables": [f"t{t}" for t in job_tables[j]]}
        if is_ml[j]:
            d.update(gpu_type=gpus[job_gpu[j]], gpu_hours=int(job_gh[j]), cpu_hours=int(job_cpu[j]),
                     priority=int(job_prio[j]))
        else:
            d["cpu_hours"] = int(job_cpu[j])
        d["app"] = f"app{job_app[j]}"
        jobs.append(d)
    total_size = int(size.sum())
    weights = {"w1": 1.0, "w2": float(round(0.5 * max(1, total_size * 2))),
               "w3": float(round(0.2 * max(1, total_size)))}
    return {
        "problem": "tetris", "version": 1,
        "name": name or f"tetris-t{T}-j{J}-r{R}-s{seed}",
        "regions": [{"name": regions[r], "storage_capacity": int(cap[r]),
                     "gpu_supply": {gpus[g]: int(supply[r, g]) for g in range(G)}} for r in range(R)],
        "apps": apps,
        "tables": [{"name": f"t{t}", "size": int(size[t]), "home": regions[home[t]]} for t in range(T)],
        "jobs": jobs,
        "priority_weights": [float(2 ** max(0, 3 - k)) for k in range(K)],
        "high_priorities": high,
        "weights": weights,
        "home_threshold": threshold,
        "move_quota": int(quota_share * total_size),
    }


def generate_tetris(n_tables: int = 10, n_jobs: int = 15, n_regions: int = 3, *, seed: int = 0,
                    **kwargs) -> TetrisInstance:
    """Generate a validated Tetris instance; same arguments and seed, same instance.

    Parameters
    ----------
    n_tables, n_jobs, n_regions : int
        Sizes. Keyword options: ``n_gpu_types`` (2), ``n_priorities`` (3),
        ``n_apps`` (jobs/10), ``zipf`` popularity exponent (1.1), ``ml_share`` (0.6),
        ``max_tables_per_job`` (3), ``quota_share`` (daily move quota as a share of
        all bytes, 0.3), ``storage_room`` (storage capacity per region as a multiple of
        an even share of all bytes, at least the start's usage; 2.2 leaves room for
        DR and extra replicas).
    """
    return load_instance(tetris_document(n_tables, n_jobs, n_regions, seed=seed, **kwargs))
