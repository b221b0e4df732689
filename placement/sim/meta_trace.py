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

:func:`peak_trace` is the same workload at its high-priority peak: each job has a home region,
the worst region's high-priority demand/supply (Tetris's measure, :func:`high_priority_ratio`)
is set, preemptible capacity is spread unevenly over the other regions, durations follow §5.1's
percentiles (:data:`PAPER_LOG_DURATION`) and unprioritised tenants are kept apart from level 6;
:func:`peak_quotas` gives its quotas. :func:`busy_trace` is §5.6's busy hours as ``placement
reproduce mast`` runs them (the worst region's demand/supply taken from a Tetris run);
:func:`imbalance_trace` is the two-region situation §5.6 blames for federation's violations.
"""

from __future__ import annotations

import math

import numpy as np

from .trace import PHILLY_LOG_DURATION, Job, Trace

__all__ = ["meta_trace", "imbalance_trace", "peak_trace", "peak_quotas", "high_priority_ratio", "busy_trace",
           "busy_quotas", "fit_floor", "others_ratios", "HIGH_REGION_PROBS", "PRIORITY_MIX",
           "GANG_SIZES", "GANG_PROBS", "REGION_COUNT_PROBS", "WARMUP_PREFIX", "PAPER_LOG_DURATION", "HIGH_LEVELS",
           "LOWEST_LEVEL", "UNPRIORITISED"]

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


# §5.1: "For GPU workloads, the 50th, 90th, and 99th percentiles of the duration are 20 minutes,
# 6.7 hours, and 66 hours": a log-normal through P50 and P90 (its P99 is then 76 h).
PAPER_LOG_DURATION = (math.log(1200.0), math.log(6.7 * 3600.0 / 1200.0) / 1.2815515655446004)
HIGH_LEVELS = (0, 1)          # Tetris's high priorities (§5.6's worst-region demand/supply measure)
LOWEST_LEVEL = len(PRIORITY_MIX) - 1
UNPRIORITISED = "unprio"      # tenant-name prefix of the 6% that "do not specify a priority"
_LEVEL_SHARES = (0.03, 0.20, 0.16, 0.54, 0.002, 0.005, 0.0002, 0.06)   # §2; the last: unprioritised


def _lognormal_clipped_mean(mu: float, sd: float, c: float) -> float:
    """E[min(D, c)] for D log-normal(mu, sd)."""
    if c <= 0:
        return 0.0
    phi = 0.5 * (1 + math.erf((math.log(c) - mu - sd * sd) / (sd * math.sqrt(2))))
    tail = 0.5 * (1 - math.erf((math.log(c) - mu) / (sd * math.sqrt(2))))
    return math.exp(mu + sd * sd / 2) * phi + c * tail


def peak_trace(region_gpus: tuple[int, ...], *, worst: float = 0.98, low_share: float = 0.5,
               worst_region: int = -2, peak: float = 1.5, hours: float = 8.0, warm_fill: float = 0.98,
               tenants: int = 40, seed: int = 0) -> tuple[Trace, dict[str, int], dict[str, int]]:
    """The Meta-like workload at its high-priority peak (MAST §2, §5.1, §5.6, Fig. 7):
    (trace, job table -> region bit mask, job -> home region).

    Demand is counted as Tetris counts it (§3.2, the 2.63 -> 0.98 measure): each job has a
    home region (where its table lives; its other candidate regions hold replicas, drawn per
    :data:`REGION_COUNT_PROBS` among the regions that fit the gang), and a region's
    high-priority (levels 0-1) demand/supply is the GPU-hours of the high-priority jobs homed
    there inside the window over its GPU-hours (:func:`high_priority_ratio`). Targets:

    - region ``worst_region`` (an index into ``region_gpus``): ``worst`` (0.98: after
      Tetris; 2.63: before);
    - every other region r: ``1 - l_r`` but at most 0.9 x ``worst``, where l_r, the region's
      share of low-priority (preemptible) capacity, is ``low_share`` x k_r with k_r evenly
      spaced from 1.8 to 0.2 over those regions in a seeded order, clipped to [0.02, 0.95]:
      preemptible capacity spread unevenly ("clusters are always fully utilized due to
      low-priority workloads", §2);
    - all priorities together: ``peak`` x supply in every region (Tetris balances all-priority
      demand, (8)), the low-priority part (levels 2-6 and unprioritised) being the rest, at
      least what fills the region beside its high-priority work.

    Each (region, class) demand is met by a warm-up at time 0 (``WARMUP_PREFIX``; together
    ``warm_fill`` of the region, the high-priority part ``min(target, 1)`` of it, durations
    uniform in 0.25-2 x the window) and arrivals over ``hours`` that make up the rest: a
    Poisson pool offering 3 x the missing GPU-hours (in expectation), visited in a seeded
    order, each job kept while the GPU-hours it adds inside the window still fit (so the
    target is met to within a job; the jobs that fit last are small ones: a mild bias
    against the largest gangs and longest jobs, ours). Gang sizes :data:`GANG_SIZES` up to the home
    region's size; durations log-normal through §5.1's P50 20 min and P90 6.7 h
    (:data:`PAPER_LOG_DURATION`), at least 60 s. Levels within a class follow §2's shares
    (3 / 20 for levels 0 / 1; 16 / 54 / 0.2 / 0.5 / 0.02 / 6 for levels 2-6 and unprioritised);
    ``tenants`` tenants, at least one per level, each with one level, unprioritised tenants
    named ``unprio*`` at level 6. Same seed, same trace; every field synthetic."""
    region_gpus = tuple(int(g) for g in region_gpus)
    R = len(region_gpus)
    if R < 2 or min(region_gpus) < 8:
        raise ValueError("region_gpus: at least 2 regions of at least 8 GPUs")
    if not (worst > 0 and 0 <= low_share <= 1 and peak > 0 and hours > 0 and 0 < warm_fill <= 1
            and tenants >= len(_LEVEL_SHARES) and -R <= worst_region < R):
        raise ValueError("worst > 0, low_share in [0, 1], peak and hours > 0, warm_fill in (0, 1], "
                         f"tenants >= {len(_LEVEL_SHARES)}, worst_region an index into region_gpus")
    rng = np.random.default_rng(seed)
    w = worst_region % R
    others = [r for r in range(R) if r != w]
    k = np.linspace(1.8, 0.2, len(others)) if len(others) > 1 else np.ones(1)
    k = k[rng.permutation(len(others))]
    high = np.zeros(R)
    high[w] = worst
    for r, kr in zip(others, k, strict=True):
        high[r] = min(1.0 - float(np.clip(low_share * kr, 0.02, 0.95)), 0.9 * worst)
    S = np.array(region_gpus, dtype=float)
    low = np.maximum(peak - high, 1.0 - np.minimum(high, 1.0))
    # tenants: at least one per level (and one unprioritised), the rest by the shares
    n_cls = len(_LEVEL_SHARES)
    extra = rng.multinomial(tenants - n_cls, np.array(_LEVEL_SHARES) / sum(_LEVEL_SHARES))
    names: list[list[str]] = []
    for c in range(n_cls):
        pre = UNPRIORITISED if c == n_cls - 1 else "team"
        base = sum(len(x) for x in names)
        names.append([f"{pre}{base + i:02d}" for i in range(1 + int(extra[c]))])
    mu, sd = PAPER_LOG_DURATION
    H = hours * 3600.0
    grid = (np.arange(200) + 0.5) / 200 * H        # E over the submit time, uniform in the window
    clipped = float(np.mean([_lognormal_clipped_mean(mu, sd, H - t) for t in grid]))
    counts = np.array(sorted(REGION_COUNT_PROBS))
    cprob = np.array([REGION_COUNT_PROBS[c] for c in counts], dtype=float)
    cprob, counts = cprob[counts <= R] / cprob[counts <= R].sum(), counts[counts <= R]
    synthetic = frozenset({"submit", "gpus", "duration", "tenant", "priority", "tables"})
    jobs: list[Job] = []
    masks: dict[str, int] = {}
    homes: dict[str, int] = {}
    big = np.array(region_gpus)

    def add(jid: str, submit: float, gpus: int, duration: float, home: int, cls: tuple[int, ...]) -> None:
        shares = np.array([_LEVEL_SHARES[c] for c in cls])
        c = int(rng.choice(cls, p=shares / shares.sum()))
        tenant = names[c][int(rng.integers(len(names[c])))]
        n = int(rng.choice(counts, p=cprob))
        fit = [r for r in np.flatnonzero(big >= gpus).tolist() if r != home]
        regs = [home, *rng.choice(fit, size=min(n - 1, len(fit)), replace=False).tolist()] if fit else [home]
        table = f"t-{jid}"
        masks[table] = int(sum(1 << int(r) for r in regs))
        homes[jid] = home
        jobs.append(Job(jid, float(submit), int(gpus), float(duration), tenant=tenant,
                        priority=min(c, LOWEST_LEVEL), tables=(table,), synthetic=synthetic))

    for r in range(R):
        sizes = np.array([g for g in GANG_SIZES if g <= region_gpus[r]])
        probs = np.array([p for g, p in zip(GANG_SIZES, GANG_PROBS, strict=True) if g <= region_gpus[r]])
        probs = probs / probs.sum()
        mean_g = float((sizes * probs).sum())
        warm_high = min(high[r], 1.0) * warm_fill * S[r]
        for cls, target, warm_gpus, tag in (((0, 1), high[r], warm_high, "hp"),
                                             ((2, 3, 4, 5, 6, 7), low[r], warm_fill * S[r] - warm_high, "lp")):
            filled, inside, i = 0, 0.0, 0
            while True:
                g = int(rng.choice(sizes, p=probs))
                if filled + g > warm_gpus:
                    fits = sizes[sizes <= warm_gpus - filled]
                    if not len(fits):
                        break
                    g = int(fits.max())
                u = float(rng.uniform(0.25, 2.0))
                add(f"{WARMUP_PREFIX}r{r}-{tag}-{i:04d}", 0.0, g, u * H, r, cls)
                filled += g
                inside += g * min(u, 1.0) * H
                i += 1
            left = target * S[r] * H - inside
            rate = 3.0 * max(0.0, left) / (mean_g * clipped * H)       # a pool 3x the expected count
            pool, t = [], 0.0
            while rate > 0:
                t += float(rng.exponential(1.0 / rate))
                if t >= H:
                    break
                pool.append((round(t, 3), int(rng.choice(sizes, p=probs)), max(60.0, float(rng.lognormal(mu, sd)))))
            got = 0.0
            for idx in rng.permutation(len(pool)).tolist():      # fill the demand in a seeded order
                sub, g, dur = pool[idx]
                x = g * min(dur, H - sub)
                if got + x <= left:
                    got += x
                    add(f"job-r{r}-{tag}-{idx:05d}", sub, g, dur, r, cls)
    jobs.sort(key=lambda j: (j.submit, j.id))
    prov = (f"Meta-like workload at its high-priority peak (MAST §2, §5.1, §5.6, Fig. 7; seed {seed}): "
            f"{R} regions of {', '.join(map(str, region_gpus))} GPUs, region {w}'s high-priority demand/supply "
            f"{worst:g}, low-priority capacity share {low_share:g} spread unevenly, all priorities {peak:g}x "
            f"supply, {hours:g} h, {tenants} tenants")
    return Trace(f"peak-w{worst:g}-l{low_share:g}-s{seed}", tuple(jobs), prov), masks, homes


def high_priority_ratio(trace: Trace, homes: dict[str, int], region_gpus: tuple[int, ...], hours: float,
                        levels: tuple[int, ...] = HIGH_LEVELS) -> np.ndarray:
    """Per region, the high-priority demand/supply of the window (Tetris's measure, §3.2,
    §5.6): GPU-hours of the jobs at ``levels`` homed in the region, counted inside [0, hours)
    from their submission (a job that would run past the end counts up to it), over the
    region's GPUs x ``hours``."""
    H = hours * 3600.0
    d = np.zeros(len(region_gpus))
    for j in trace.jobs:
        if j.priority in levels and j.submit < H:
            d[homes[j.id]] += j.gpus * min(j.duration, H - j.submit)
    return d / (np.array(region_gpus, dtype=float) * H)


def peak_quotas(trace: Trace, n_gpus: int, hours: float) -> dict[tuple[str, int], int]:
    """(tenant, level) -> GPUs for :func:`peak_trace` (ours; §2: quotas per priority level, the
    maximum GPUs a tenant uses at once). A holder's mean concurrent demand is its jobs'
    GPU-hours inside the window over its hours. High-priority holders (levels 0-1) get their
    mean demand rounded up (capacity planned for high priority, scaled down if it exceeded the
    cluster); levels 2 to the lowest share the remaining GPUs in proportion to their demand,
    rounded down; unprioritised tenants get none (they run over quota, at the lowest level)."""
    H = hours * 3600.0
    d: dict[tuple[str, int], float] = {}
    for j in trace.jobs:
        if j.submit < H:
            d[(j.tenant, j.priority)] = d.get((j.tenant, j.priority), 0.0) + j.gpus * min(j.duration, H - j.submit) / H
    return _split_quotas({h: math.ceil(v) for h, v in d.items() if h[1] in HIGH_LEVELS}, d, n_gpus)


def _split_quotas(hi: dict, mean: dict, n_gpus: int) -> dict:
    """Quotas from the high-priority levels' GPU needs ``hi`` (scaled down to ``n_gpus`` when they
    exceed it) and the rest of the GPUs shared by the other prioritised levels in proportion to
    their ``mean`` demand; unprioritised tenants get none."""
    tot_hi = sum(hi.values())
    if tot_hi > n_gpus:
        hi = {h: int(v * n_gpus / tot_hi) for h, v in hi.items()}
        tot_hi = sum(hi.values())
    rest = {h: v for h, v in mean.items() if h[1] not in HIGH_LEVELS and not h[0].startswith(UNPRIORITISED)}
    tot = sum(rest.values())
    q = dict(hi)
    q.update({h: int((n_gpus - tot_hi) * v / tot) if tot else 0 for h, v in rest.items()})
    q.update({h: 0 for h in mean if h[0].startswith(UNPRIORITISED)})
    return q


# ---------------------------------------------------------------------------------------------
# §5.6's busy hours: daily peaks, uneven low-priority backlogs, data in one or two regions
# ---------------------------------------------------------------------------------------------

HIGH_REGION_PROBS = {1: 0.25, 2: 0.75}     # Fig. 7's counts (REGION_COUNT_PROBS) cut at two regions
DAY_S = 86400.0


def others_ratios(n_others: int, worst: float, floor: float) -> np.ndarray:
    """The other regions' high-priority demand/supply of :func:`busy_trace`: evenly spaced from
    ``floor`` to 0.9 x ``worst`` (capped at 0.9), before the seeded order."""
    hi = min(0.9 * worst, 0.9)
    return np.linspace(min(floor, hi), hi, n_others) if n_others > 1 else np.array([hi])


def fit_floor(n_regions: int, worst: float, std: float) -> float:
    """The floor of :func:`others_ratios` whose regions' standard deviation (the worst included)
    is ``std`` (a Tetris run's spread of high-priority demand/supply over regions), by bisection
    on [0, 0.9 x worst]; the floor closest to it when none reaches it."""
    def sd(f):
        return float(np.std(np.r_[worst, others_ratios(n_regions - 1, worst, f)]))
    lo, hi = 0.0, min(0.9 * worst, 0.9)
    if sd(lo) <= std:
        return lo
    for _ in range(60):             # the spread falls as the floor rises
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if sd(mid) > std else (lo, mid)
    return (lo + hi) / 2


def busy_trace(region_gpus: tuple[int, ...], *, worst: float = 1.0, floor: float | None = None,
               spread: float = 0.3, tetris: bool = True, after: float | None = None, worst_region: int = -2,
               high_scale: float = 1.0, imbalance: float = 1.0, load: float = 1.5, amplitude: float = 0.5,
               peak_hour: float = 4.0, hours: float = 8.0, warm_fill: float = 1.0, tenants: int = 40, seed: int = 0
               ) -> tuple[Trace, dict[str, int], dict[str, int]]:
    """MAST §5.6's busy hours: (trace, table -> region bit mask, job -> home region).

    §5.6 blames federation's violations on busy hours in which "high-priority workloads often
    need to preempt low-priority ones" and a dispatch by demand/supply does not send them "to the
    right region where it can preempt others". Built here (ours, after that text):

    - **high-priority demand per region** (levels 0-1, Tetris's measure, :func:`high_priority_ratio`):
      region ``worst_region`` at ``worst`` (a Tetris run's most overloaded region after placement);
      the others evenly spaced from ``floor`` to 0.9 x ``worst`` in a seeded order
      (:func:`others_ratios`), the floor fitted so the regions' standard deviation is ``spread``
      (:func:`fit_floor`) when not given; all times ``high_scale`` (the regime map's high-priority
      share). ``tetris=False`` is "before Tetris" (V0: "tables could not migrate across regions"):
      the high-priority GPU-hours of the layout whose worst region is ``after`` (default
      ``worst``), with the worst region at ``worst`` and the others scaled to keep the total,
      every table in its home region only;
    - **daily peaks**: arrivals are Poisson with rate proportional to ``1 + amplitude x
      cos(2 pi (t - peak_hour) / 24 h)`` (thinning), so the busy hours sit around ``peak_hour``;
    - **running work at time 0** (``WARMUP_PREFIX``): ``warm_fill`` of every region (default
      full: with demand above supply, §3.2, a region holds all the work it fits), the high-priority part ``min(ratio, 1) x (1 - amplitude)`` of it (the
      window opens off-peak; ours), durations length-biased residuals of the arrivals' (what
      runs at a random instant); tables in the home region;
    - **low-priority backlogs** (``WARMUP_PREFIX`` + ``backlog-``, submitted at 0, levels 2-6
      and unprioritised, tables in the home region): the demand above supply, ``load - 1`` x the
      cluster's GPUs (at least 0), waiting at the window's start ("demand consistently above
      supply", §3.2),
      split over regions in proportion to ``(1 - imbalance) x S_r + imbalance x (S_r's
      low-priority running GPUs)``: low-priority tenants queue where their data and work are, so
      at ``imbalance`` 1 the regions with the most preemptible work also hold the longest
      low-priority queues and the highest all-priority demand/supply;
    - **arrivals** over ``hours``: per region, high-priority GPU-hours making up its target
      inside the window and low-priority ones making up ``load`` x supply in all (at least
      zero); high-priority tables in one or two regions (home plus, with
      :data:`HIGH_REGION_PROBS`, a replica in one more region that fits the gang, drawn in
      proportion to its spare high-priority capacity ``max(0, 1 - ratio) x S_r``: Tetris places
      replicas to balance high-priority demand/supply, §3; home only before Tetris), low-priority
      ones per Fig. 7 (:data:`REGION_COUNT_PROBS`, drawn uniformly).

    Gang sizes :data:`GANG_SIZES` up to the home region's size; durations log-normal through
    §5.1's P50 and P90 (:data:`PAPER_LOG_DURATION`), at least 60 s, cut so a job run from its
    submission ends by 2 x ``hours`` (no job that would run past the window's end can finish
    inside it, even after a preemption: the window's log is unchanged, the drain short); levels within a class by §2's
    shares; ``tenants`` tenants, at least one per level, unprioritised ones (``unprio*``) at the
    lowest level. Same seed, same trace; every field synthetic."""
    region_gpus = tuple(int(g) for g in region_gpus)
    R = len(region_gpus)
    if R < 2 or min(region_gpus) < 8:
        raise ValueError("region_gpus: at least 2 regions of at least 8 GPUs")
    if not (worst > 0 and high_scale > 0 and 0 <= imbalance <= 1 and load > 0
            and 0 <= amplitude < 1 and hours > 0 and 0 < warm_fill <= 1 and tenants >= len(_LEVEL_SHARES)
            and -R <= worst_region < R and (floor is None or floor >= 0) and spread >= 0
            and (after is None or after > 0)):
        raise ValueError("busy_trace: worst, after, high_scale, load, hours > 0; floor, spread >= 0; imbalance in "
                         f"[0, 1]; amplitude in [0, 1); warm_fill in (0, 1]; tenants >= {len(_LEVEL_SHARES)}; "
                         "worst_region an index into region_gpus")
    rng = np.random.default_rng(seed)
    S = np.array(region_gpus, dtype=float)
    w = worst_region % R
    others = [r for r in range(R) if r != w]
    after_worst = worst if tetris or after is None else after
    f = fit_floor(R, after_worst, spread) if floor is None else floor
    order = rng.permutation(len(others))
    high = np.zeros(R)
    high[w] = after_worst
    high[others] = others_ratios(len(others), after_worst, f)[order]
    if not tetris:                  # the same high-priority GPU-hours, concentrated on the worst region
        total = float((high * S).sum())
        rest = total - worst * S[w]
        scale = max(0.0, rest / float((high[others] * S[others]).sum()))
        high[others] *= scale
        high[w] = worst
    high = high * high_scale
    names = _tenant_names(rng, tenants)
    mu, sd = PAPER_LOG_DURATION
    H = hours * 3600.0
    rate_shape = lambda t: 1.0 + amplitude * np.cos(2 * math.pi * (t - peak_hour * 3600.0) / DAY_S)  # noqa: E731
    grid = (np.arange(400) + 0.5) / 400 * H
    shape = rate_shape(grid)
    clipped = float(np.sum(shape * np.array([_lognormal_clipped_mean(mu, sd, H - t) for t in grid])) / shape.sum())
    synthetic = frozenset({"submit", "gpus", "duration", "tenant", "priority", "tables"})
    jobs: list[Job] = []
    masks: dict[str, int] = {}
    homes: dict[str, int] = {}
    big = np.array(region_gpus)

    def add(jid, submit, gpus, duration, home, cls, probs_regions) -> None:
        shares = np.array([_LEVEL_SHARES[c] for c in cls])
        c = int(rng.choice(cls, p=shares / shares.sum()))
        tenant = names[c][int(rng.integers(len(names[c])))]
        regs = [home]
        if probs_regions is not None:
            counts = np.array(sorted(probs_regions))
            cp = np.array([probs_regions[k] for k in counts], dtype=float)
            cp, counts = cp[counts <= R] / cp[counts <= R].sum(), counts[counts <= R]
            n = int(rng.choice(counts, p=cp))
            fit = [r for r in np.flatnonzero(big >= gpus).tolist() if r != home]
            if fit and n > 1:
                p = spare[fit] if cls == HIGH and spare[fit].sum() > 0 else np.ones(len(fit))
                regs += rng.choice(fit, size=min(n - 1, len(fit)), replace=False, p=p / p.sum()).tolist()
        table = f"t-{jid}"
        masks[table] = int(sum(1 << int(r) for r in regs))
        homes[jid] = home
        duration = min(duration, 2 * H - submit)       # ends by 2 H: the window's log is unchanged
        jobs.append(Job(jid, float(submit), int(gpus), float(duration), tenant=tenant,
                        priority=min(c, LOWEST_LEVEL), tables=(table,), synthetic=synthetic))

    HIGH, LOW = (0, 1), (2, 3, 4, 5, 6, 7)
    spare = (np.maximum(0.0, 1.0 - high) * S) ** 3     # Tetris replicates high-priority tables where they fit
    plan = []
    for r in range(R):
        sizes = np.array([g for g in GANG_SIZES if g <= region_gpus[r]])
        probs = np.array([p for g, p in zip(GANG_SIZES, GANG_PROBS, strict=True) if g <= region_gpus[r]])
        plan.append((sizes, probs / probs.sum()))
    low_running = np.zeros(R)
    inside = np.zeros((R, 2))       # GPU-seconds inside the window of the running work, per class
    for r in range(R):              # running work at time 0: length-biased residual durations
        sizes, probs = plan[r]
        hp_gpus = min(high[r], 1.0) * (1 - amplitude) * warm_fill * S[r]      # off-peak at time 0
        for k, (cls, total, tag) in enumerate(((HIGH, hp_gpus, "hp"), (LOW, warm_fill * S[r] - hp_gpus, "lp"))):
            pool = np.maximum(60.0, rng.lognormal(mu, sd, 4096))
            filled, i = 0, 0
            while True:
                g = int(rng.choice(sizes, p=probs))
                if filled + g > total:
                    fits = sizes[sizes <= total - filled]
                    if not len(fits):
                        break
                    g = int(fits.max())
                d = float(pool[rng.choice(len(pool), p=pool / pool.sum())] * rng.uniform())
                add(f"{WARMUP_PREFIX}r{r}-{tag}-{i:04d}", 0.0, g, max(60.0, d), r, cls, None)
                filled += g
                inside[r, k] += g * min(max(60.0, d), H)
                i += 1
            if k == 1:
                low_running[r] = filled
    weight = (1 - imbalance) * S + imbalance * low_running
    queued = max(0.0, load - 1) * S.sum() * weight / weight.sum() if weight.sum() > 0 else np.zeros(R)
    for r in range(R):              # low-priority backlogs, waiting at time 0 in their home region
        sizes, probs = plan[r]
        left, i = queued[r], 0
        while left >= sizes.min():
            g = int(rng.choice(sizes, p=probs))
            if g > left:
                g = int(sizes[sizes <= left].max())
            d = max(60.0, float(rng.lognormal(mu, sd)))
            add(f"{WARMUP_PREFIX}backlog-r{r}-{i:04d}", 0.0, g, d, r, LOW, None)
            inside[r, 1] += g * min(d, H)
            left -= g
            i += 1
    for r in range(R):              # arrivals making up the targets inside the window
        sizes, probs = plan[r]
        mean_g = float((sizes * probs).sum())
        targets = (high[r] * S[r] * H - inside[r, 0], max(0.0, load - high[r]) * S[r] * H - inside[r, 1])
        for k, (cls, tag) in enumerate(((HIGH, "hp"), (LOW, "lp"))):
            lam = max(0.0, targets[k]) / (mean_g * clipped * H)           # mean arrivals per second
            peak_rate = lam * (1 + amplitude) / float(shape.mean())
            t, i = 0.0, 0
            while peak_rate > 0:
                t += float(rng.exponential(1.0 / peak_rate))
                if t >= H:
                    break
                if rng.uniform() * (1 + amplitude) > rate_shape(t):
                    continue
                g = int(rng.choice(sizes, p=probs))
                d = max(60.0, float(rng.lognormal(mu, sd)))
                regions = None if not tetris else (HIGH_REGION_PROBS if k == 0 else REGION_COUNT_PROBS)
                add(f"job-r{r}-{tag}-{i:05d}", round(t, 3), g, d, r, cls, regions)
                i += 1
    jobs.sort(key=lambda j: (j.submit, j.id))
    prov = (f"MAST §5.6's busy hours (ours after §5.6; §2, §5.1, §3.2, Fig. 7; seed {seed}): {R} regions of "
            f"{', '.join(map(str, region_gpus))} GPUs, high-priority demand/supply "
            f"{' / '.join(f'{x:.2f}' for x in high)} ({'after' if tetris else 'before'} Tetris, floor {f:.3f}), "
            f"low-priority backlog {max(0.0, load - 1):g}x the cluster (imbalance {imbalance:g}), all priorities {load:g}x "
            f"supply, daily peak at hour {peak_hour:g} (amplitude {amplitude:g}), {hours:g} h, {tenants} tenants")
    return Trace(f"busy-w{worst:g}-s{seed}", tuple(jobs), prov), masks, homes


def _tenant_names(rng, tenants: int) -> list[list[str]]:
    """Tenant names per class (levels 0-6, then unprioritised): at least one each, the rest by §2's shares."""
    n_cls = len(_LEVEL_SHARES)
    extra = rng.multinomial(tenants - n_cls, np.array(_LEVEL_SHARES) / sum(_LEVEL_SHARES))
    names: list[list[str]] = []
    for c in range(n_cls):
        pre = UNPRIORITISED if c == n_cls - 1 else "team"
        base = sum(len(x) for x in names)
        names.append([f"{pre}{base + i:02d}" for i in range(1 + int(extra[c]))])
    return names


def busy_quotas(trace: Trace, n_gpus: int, hours: float) -> dict[tuple[str, int], int]:
    """(tenant, level) -> GPUs for :func:`busy_trace`, planned as MAST plans capacity (§2: quotas
    per priority level guarantee the high-priority work; ours in the numbers): a high-priority
    holder (levels 0-1) gets the most GPUs it demands at once in any hour of the window (its jobs'
    GPU-seconds in the hour over the hour, each job counted from its submission), rounded up and
    scaled down together if they exceed the cluster; levels 2 to the lowest share the rest in
    proportion to their mean demand, rounded down; unprioritised tenants get none."""
    H = hours * 3600.0
    nb = max(1, int(math.ceil(hours)))
    per_hour: dict[tuple[str, int], np.ndarray] = {}
    mean: dict[tuple[str, int], float] = {}
    for j in trace.jobs:
        if j.submit >= H:
            continue
        h = (j.tenant, j.priority)
        a, b = j.submit, min(j.submit + j.duration, H)
        arr = per_hour.setdefault(h, np.zeros(nb))
        for k in range(int(a // 3600.0), min(nb, int(math.ceil(b / 3600.0)))):
            arr[k] += j.gpus * max(0.0, min(b, (k + 1) * 3600.0) - max(a, k * 3600.0)) / 3600.0
        mean[h] = mean.get(h, 0.0) + j.gpus * (b - a) / H
    return _split_quotas({h: math.ceil(float(v.max())) for h, v in per_hour.items() if h[1] in HIGH_LEVELS},
                         mean, n_gpus)
