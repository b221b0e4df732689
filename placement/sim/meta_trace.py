"""A Meta-like training workload for MAST's §5.6 experiment, drawn from what the paper publishes.

MAST's trace is not public; every field here is drawn by a seeded rule from the paper's
published distributions and labelled synthetic (``Job.synthetic``), with its source:

- tenants (§2): ``tenants`` teams, each with one fixed priority level drawn from the share of
  workloads per level, highest first, 3 / 20 / 16 / 54 / 0.2 / 0.5 / 0.02%, and the remaining 6%
  "do not specify a priority and are consequently treated as the lowest" (level 6 here);
  a job's tenant is drawn uniformly, so the levels' workload shares follow the mix in
  expectation;
- gang size (§5.4 / Fig. 7's text: median 16, p90 64, p99 128 GPUs): :data:`GANG_SIZES` with
  :data:`GANG_PROBS`, whose quantiles are exactly those;
- duration: log-normal with the Philly trace's log mean and deviation (the paper gives none);
- candidate regions (Fig. 7: most workloads can run in >= 2 regions, about 40% in >= 4): each
  job reads its own table, held by :data:`REGION_COUNT_PROBS`-distributed many regions drawn
  uniformly (so "candidate regions" = the regions holding the table);
- arrivals: a warm-up batch at time 0 whose GPUs fill ``warm_fill`` of the cluster (98%: the
  paper's clusters "are always fully utilized") with jobs long enough to outlast the window,
  then Poisson arrivals for ``hours`` whose offered GPU-hours are ``peak`` x the cluster's
  (1.5: "demand consistently above supply" at peak, §5.6).

:func:`meta_trace` returns the trace and each job's table -> regions bit mask, from which the
app builds the data placement MAST and the federated baseline receive.
"""

from __future__ import annotations

import math

import numpy as np

from .trace import PHILLY_LOG_DURATION, Job, Trace

__all__ = ["meta_trace", "imbalance_trace", "PRIORITY_MIX", "GANG_SIZES", "GANG_PROBS", "REGION_COUNT_PROBS", "WARMUP_PREFIX"]

PRIORITY_MIX = (0.03, 0.20, 0.16, 0.54, 0.002, 0.005, 0.0002 + 0.06)   # the 6% unspecified -> lowest
GANG_SIZES = (1, 2, 4, 8, 16, 32, 64, 128, 256)
GANG_PROBS = (0.10, 0.05, 0.10, 0.20, 0.15, 0.20, 0.12, 0.075, 0.005)  # median 16, p90 64, p99 128
REGION_COUNT_PROBS = {1: 0.10, 2: 0.30, 3: 0.20, 4: 0.25, 5: 0.15}       # >= 2: 90%, >= 4: 40%
WARMUP_PREFIX = "warm-"


def _quantile(q: float) -> int:
    c = np.cumsum(GANG_PROBS)
    return GANG_SIZES[int(np.searchsorted(c, q - 1e-12))]


assert (_quantile(0.5), _quantile(0.9), _quantile(0.99)) == (16, 64, 128)


def meta_trace(region_gpus: tuple[int, ...], *, hours: float = 8.0, peak: float = 1.5, warm_fill: float = 0.98,
               tenants: int = 40, seed: int = 0) -> tuple[Trace, dict[str, int]]:
    """(trace, job table -> region bit mask) for a cluster whose regions hold ``region_gpus``
    GPUs (module docstring). A gang runs in one region: sizes above the largest region are
    left out, and a job's candidate regions are drawn among the regions large enough for it
    (all of them when fewer than its drawn count). Same seed, same trace."""
    region_gpus = tuple(int(g) for g in region_gpus)
    n_regions, n_gpus = len(region_gpus), sum(region_gpus)
    if n_regions < 1 or min(region_gpus) < 1 or hours <= 0 or peak <= 0 or not 0 <= warm_fill <= 1 or tenants < 1:
        raise ValueError("region_gpus, hours, peak and tenants must be positive, warm_fill in [0, 1]")
    rng = np.random.default_rng(seed)
    cap = max(region_gpus)
    big = np.array(region_gpus)
    sizes = np.array([g for g in GANG_SIZES if g <= cap])
    probs = np.array([p for g, p in zip(GANG_SIZES, GANG_PROBS, strict=True) if g <= cap])
    probs = probs / probs.sum()
    levels = np.arange(len(PRIORITY_MIX))
    mix = np.array(PRIORITY_MIX) / sum(PRIORITY_MIX)
    tenant_level = rng.choice(levels, size=tenants, p=mix)
    counts = np.array(sorted(REGION_COUNT_PROBS))
    cprob = np.array([REGION_COUNT_PROBS[c] for c in counts])
    cprob = cprob[counts <= n_regions] / cprob[counts <= n_regions].sum()
    counts = counts[counts <= n_regions]
    mu, sd = PHILLY_LOG_DURATION
    synthetic = frozenset({"submit", "gpus", "duration", "tenant", "priority", "tables"})
    jobs: list[Job] = []
    masks: dict[str, int] = {}

    def job(jid: str, submit: float, gpus: int, duration: float) -> None:
        t = int(rng.integers(tenants))
        k = int(rng.choice(counts, p=cprob))
        fit = np.flatnonzero(big >= gpus)
        regs = rng.choice(fit, size=min(k, len(fit)), replace=False)
        table = f"t-{jid}"
        masks[table] = int(sum(1 << int(r) for r in regs))
        jobs.append(Job(jid, float(submit), int(gpus), float(duration), tenant=f"team{t:02d}",
                        priority=int(tenant_level[t]), tables=(table,), synthetic=synthetic))

    # warm-up: fill the cluster at time 0 with jobs that outlast the window
    filled, i = 0, 0
    while filled < warm_fill * n_gpus:
        g = int(rng.choice(sizes, p=probs))
        if filled + g > warm_fill * n_gpus:
            g = int(sizes[sizes <= warm_fill * n_gpus - filled].max(initial=0)) if (sizes <= warm_fill * n_gpus - filled).any() else 0
            if g == 0:
                break
        job(f"{WARMUP_PREFIX}{i:05d}", 0.0, g, hours * 3600.0 * float(rng.uniform(1.5, 3.0)))
        filled += g
        i += 1
    # the window: Poisson arrivals offering peak x the cluster's GPU-hours
    mean_gpu_s = float((sizes * probs).sum()) * math.exp(mu + sd * sd / 2)
    rate = peak * n_gpus * hours * 3600.0 / mean_gpu_s / (hours * 3600.0)   # jobs per second
    t, i = 0.0, 0
    while True:
        t += float(rng.exponential(1.0 / rate))
        if t >= hours * 3600.0:
            break
        g = int(rng.choice(sizes, p=probs))
        d = max(60.0, float(rng.lognormal(mu, sd)))
        job(f"job-{i:06d}", round(t, 3), g, d)
        i += 1
    prov = (f"Meta-like synthetic workload (MAST §2, §5.4, §5.6, Fig. 7 distributions; seed {seed}): "
            f"{tenants} tenants, warm-up filling {warm_fill:.0%} of {n_gpus} GPUs, {hours:g} h of arrivals at "
            f"{peak:g}x supply")
    return Trace(f"meta-s{seed}", tuple(jobs), prov), masks


def imbalance_trace(region_gpus: int, *, backlog: float, protected: float = 1.0, hours: float = 4.0,
                    load: float = 0.5, seed: int = 0) -> tuple[Trace, dict[str, int], dict[tuple[str, int], int]]:
    """The situation §5.6 blames for federation's violations, in two regions A (index 0) and B
    of ``region_gpus`` GPUs each: (trace, table -> region mask, quotas per (tenant, level)).

    At time 0 (warm-up, ``WARMUP_PREFIX``): A is filled with preemptible low-priority work
    (tenant ``lp``, level 3, tables in A only) and ``backlog`` x A's GPUs more of it wait for
    A, inflating A's demand/supply ratio to 1 + backlog; B is filled, ``protected`` of it with
    high-priority work of tenant ``hpB`` (level 0, within its quota, not preemptible by level
    0) and the rest with ``lp`` work. All warm-up jobs outlast the window. Then for ``hours``
    tenant ``hp`` (level 0, quota one region) submits jobs whose tables are in both regions,
    Poisson, offering ``load`` x one region's GPUs on average; gang sizes from
    :data:`GANG_SIZES` / :data:`GANG_PROBS` up to an eighth of a region, durations uniform in
    0.5-2 h (ours). A binding at arrival by demand/supply sends the first ~backlog x region
    GPUs of ``hp`` work to B, where only ``1 - protected`` of it is preemptible; a global
    scheduler can preempt A's low-priority work. Quotas: ``hpB`` protected x S, ``hp`` S,
    ``lp`` the rest of the 2 S GPUs. Same seed, same trace; every field synthetic (ours, after
    §5.6's explanation)."""
    S = int(region_gpus)
    if S < 8 or backlog < 0 or not 0 <= protected <= 1 or hours <= 0 or load <= 0:
        raise ValueError("region_gpus >= 8, backlog >= 0, protected in [0, 1], hours and load > 0")
    rng = np.random.default_rng(seed)
    sizes = np.array([g for g in GANG_SIZES if g <= S // 8])
    probs = np.array([p for g, p in zip(GANG_SIZES, GANG_PROBS, strict=True) if g <= S // 8])
    probs = probs / probs.sum()
    synthetic = frozenset({"submit", "gpus", "duration", "tenant", "priority", "tables"})
    masks = {"A": 1, "B": 2, "AB": 3}
    jobs: list[Job] = []
    long = hours * 3600.0 * 3

    def fill(prefix: str, total: int, tenant: str, level: int, table: str) -> None:
        left, i = int(total), 0
        while left > 0:
            g = int(min(left, rng.choice(sizes, p=probs)))
            jobs.append(Job(f"{WARMUP_PREFIX}{prefix}{i:04d}", 0.0, g, long * float(rng.uniform(1.0, 1.5)),
                            tenant=tenant, priority=level, tables=(table,), synthetic=synthetic))
            left -= g
            i += 1

    prot = int(round(protected * S))
    fill("b-hp-", prot, "hpB", 0, "B")
    fill("b-lp-", S - prot, "lp", 3, "B")
    fill("a-lp-", S, "lp", 3, "A")
    fill("a-backlog-", int(round(backlog * S)), "lp", 3, "A")
    mean_gpu_s = float((sizes * probs).sum()) * 1.25 * 3600.0
    rate = load * S / mean_gpu_s
    t, i = 0.0, 0
    while True:
        t += float(rng.exponential(1.0 / rate))
        if t >= hours * 3600.0:
            break
        jobs.append(Job(f"job-{i:05d}", round(t, 3), int(rng.choice(sizes, p=probs)),
                        float(rng.uniform(0.5, 2.0)) * 3600.0, tenant="hp", priority=0, tables=("AB",),
                        synthetic=synthetic))
        i += 1
    quotas = {("hpB", 0): prot, ("hp", 0): S, ("lp", 3): 2 * S - prot - S}
    prov = (f"region-imbalance workload (after MAST §5.6; seed {seed}): 2 regions of {S} GPUs, low-priority "
            f"backlog {backlog:g}x a region in A, {protected:.0%} of B high-priority, {hours:g} h of level-0 arrivals")
    return Trace(f"imbalance-b{backlog:g}-p{protected:g}-s{seed}", tuple(jobs), prov), masks, quotas
