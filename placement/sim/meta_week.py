"""Days of a Meta-like training workload at MAST's published rate and distributions (§4.2, §5.1-5.3).

:func:`meta_trace` (:mod:`placement.sim.meta_trace`) draws §5.6's 8-hour peak; :func:`meta_week` draws
``days`` days at the daily rate of §5.1 on a fleet kept near full, as Fig. 5 shows. MAST's trace is
not public: every field is drawn by a seeded rule from what the paper publishes and labelled
synthetic (``Job.synthetic``). Per GPU workload:

- **rate** (§5.1: "tens of thousands of ML training workloads daily ... About 70% of the workloads
  use GPUs", on O(100,000) GPUs): :data:`DAILY_GPU_WORKLOADS` GPU workloads a day per
  :data:`PAPER_FLEET_GPUS` GPUs, scaled to the cluster's GPUs (30,000 a day on 100,000 GPUs:
  about 70% of 43,000); Poisson arrivals (``per_day`` overrides the rate);
- **gang size** (§5.1: P50 / P90 / P99 = 16 / 64 / 128 GPUs): :data:`~placement.sim.meta_trace.GANG_SIZES`
  with :data:`~placement.sim.meta_trace.GANG_PROBS`, whose quantiles are exactly those; sizes above
  the largest region are left out (a gang runs in one region);
- **duration** (§5.1: P50 / P90 / P99 = 20 min / 6.7 h / 66 h): :func:`duration_quantile`, log-duration
  piecewise linear in the normal score through those three points (log-normal between them), the
  end slopes extended beyond, clipped to 1 min .. 30 days; the quantiles hold exactly;
- **priority** (§4.2: 3 / 20 / 16 / 54 / 0.2 / 0.5 / 0.02%, the 6% without a priority treated as
  the lowest): drawn per workload from :data:`~placement.sim.meta_trace.PRIORITY_MIX`, so the mix
  holds whatever the number of tenants; the tenant is drawn uniformly (quotas are per tenant and
  level, §2);
- **candidate regions** (Fig. 7: most workloads have >= 2, about 40% >= 4): each workload reads its
  own table held by :data:`~placement.sim.meta_trace.REGION_COUNT_PROBS`-many regions, drawn
  uniformly among the regions large enough for it;
- **load** (Fig. 5: GPUs 98% allocated; §3.2: demand consistently above supply): the offered
  GPU-seconds per second are ``load`` x the cluster's GPUs (default 1.05), and at time 0 a warm-up
  (ids ``warm-``) fills ``warm_fill`` of the GPUs with the workloads an M/G/infinity system at
  this workload would be running: drawn with probability proportional to their duration, each with
  a uniformly drawn share of its duration left. The default 98% is Fig. 5's allocation rate, a
  claim of the paper: ``placement reproduce mast`` passes 1 instead (at a load of at least 1 an
  M/G/infinity system holds every GPU) and leaves its first day unmeasured.

**Rate, load and the distributions together** (our construction). Drawn independently, the gang
and duration distributions above average E[g] E[d] = about 122 GPU-hours per workload; at 30,000
workloads a day that offers 1.5x the GPU-hours of 100,000 GPUs, a backlog that would grow by
tens of thousands of workloads a day, where the paper's GMS ranks 6,000-10,000 (§5.4). So the
paper's rate, fleet, allocation rate and distributions are consistent only if large gangs run
shorter: for a share ``coupling`` of the workloads the duration's normal score is minus the
gang's (large gangs get short durations), for the rest it is independent. Both marginals, hence
every quantile above, stay exact; ``coupling`` is solved so the mean GPU-seconds per workload
give exactly ``load`` (:func:`coupling_for`). The value is reported in the provenance.

Memory is linear in the number of workloads (about 2.5 KB each with their table mask); the CLI
checks it before drawing (:func:`placement.validate.generated_size`).
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

from .meta_trace import GANG_PROBS, GANG_SIZES, PRIORITY_MIX, REGION_COUNT_PROBS, WARMUP_PREFIX
from .trace import Job, Trace

__all__ = ["meta_week", "duration_quantile", "coupling_for", "gang_and_duration", "DAILY_GPU_WORKLOADS",
           "PAPER_FLEET_GPUS", "DURATION_QUANTILES", "DEFAULT_LOAD", "MAX_DAYS"]

DAILY_GPU_WORKLOADS = 30_000
PAPER_FLEET_GPUS = 100_000
DURATION_QUANTILES = ((0.50, 20 * 60.0), (0.90, 6.7 * 3600.0), (0.99, 66 * 3600.0))
DURATION_RANGE = (60.0, 30 * 86400.0)
DEFAULT_LOAD = 1.05
MAX_DAYS = 60.0
DAY = 86400.0

_Z = tuple(NormalDist().inv_cdf(q) for q, _ in DURATION_QUANTILES)
_LOGD = tuple(math.log(d) for _, d in DURATION_QUANTILES)


def duration_quantile(z: np.ndarray) -> np.ndarray:
    """Duration (s) at normal score ``z``: log-duration linear in ``z`` between the P50, P90 and
    P99 of §5.1 (:data:`DURATION_QUANTILES`), the first and last slopes extended below P50 and
    above P99, clipped to :data:`DURATION_RANGE`. ``duration_quantile(Phi^-1(q))`` is the
    q-quantile; at q = 0.5, 0.9, 0.99 it is 20 min, 6.7 h, 66 h exactly."""
    z = np.asarray(z, dtype=float)
    lo = _LOGD[0] + (z - _Z[0]) * (_LOGD[1] - _LOGD[0]) / (_Z[1] - _Z[0])
    hi = _LOGD[2] + (z - _Z[2]) * (_LOGD[2] - _LOGD[1]) / (_Z[2] - _Z[1])
    mid = np.interp(z, _Z, _LOGD)
    logd = np.where(z < _Z[0], lo, np.where(z > _Z[2], hi, mid))
    return np.clip(np.exp(logd), *DURATION_RANGE)


def _gang_table(cap: int) -> tuple[np.ndarray, np.ndarray]:
    """Gang sizes up to ``cap`` and the normal-score thresholds of their cumulative probabilities."""
    sizes = np.array([g for g in GANG_SIZES if g <= cap], dtype=np.int64)
    probs = np.array([p for g, p in zip(GANG_SIZES, GANG_PROBS, strict=True) if g <= cap])
    cum = np.cumsum(probs / probs.sum())[:-1]
    return sizes, np.array([NormalDist().inv_cdf(float(c)) for c in cum])


def gang_and_duration(z_gang: np.ndarray, z_dur: np.ndarray, cap: int) -> tuple[np.ndarray, np.ndarray]:
    """Gang sizes (GPUs) and durations (s) at normal scores: the gang by its distribution's
    inverse CDF (thresholds in normal-score space), the duration by :func:`duration_quantile`."""
    sizes, thr = _gang_table(cap)
    return sizes[np.searchsorted(thr, z_gang, side="right")], duration_quantile(z_dur)


def _means(cap: int) -> tuple[float, float]:
    """(E[g] E[d], E[g(z) d(-z)]): mean GPU-seconds per workload drawn independently and fully
    counter-coupled, by the trapezoid rule on a fine normal-score grid (deterministic)."""
    z = np.linspace(-9.0, 9.0, 360_001)
    w = np.exp(-z * z / 2) / math.sqrt(2 * math.pi)
    g, d = gang_and_duration(z, z, cap)
    _, d_neg = gang_and_duration(z, -z, cap)
    eg, ed = np.trapezoid(g * w, z), np.trapezoid(d * w, z)
    return float(eg * ed), float(np.trapezoid(g * d_neg * w, z))


def coupling_for(gpu_s_per_workload: float, cap: int = max(GANG_SIZES)) -> float:
    """The share of counter-coupled workloads whose mean GPU-seconds equal the target (the mean is
    linear in the share); ValueError when no share in [0, 1] reaches it."""
    indep, coupled = _means(cap)
    lam = (indep - gpu_s_per_workload) / (indep - coupled)
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"the load cannot be reached at this rate: mean GPU-hours per workload must lie in "
                         f"{coupled / 3600:.1f}..{indep / 3600:.1f}, got {gpu_s_per_workload / 3600:.1f}")
    return float(lam)


def meta_week(region_gpus: tuple[int, ...], *, days: float = 7.0, load: float = DEFAULT_LOAD,
              warm_fill: float = 0.98, tenants: int = 40, per_day: float | None = None,
              seed: int = 0) -> tuple[Trace, dict[str, int]]:
    """(trace, table -> region bit mask): ``days`` days of the workload in the module docstring on a
    cluster whose regions hold ``region_gpus`` GPUs. Same seed, same trace."""
    region_gpus = tuple(int(g) for g in region_gpus)
    n_regions, n_gpus = len(region_gpus), sum(region_gpus)
    if n_regions < 1 or min(region_gpus) < 1:
        raise ValueError("region_gpus must be positive")
    if not (math.isfinite(days) and 0 < days <= MAX_DAYS):
        raise ValueError(f"days must be in (0, {MAX_DAYS:g}]")
    if not (math.isfinite(load) and load > 0) or not 0 <= warm_fill <= 1 or tenants < 1:
        raise ValueError("load must be > 0, warm_fill in [0, 1], tenants >= 1")
    rate_day = DAILY_GPU_WORKLOADS * n_gpus / PAPER_FLEET_GPUS if per_day is None else float(per_day)
    if not (math.isfinite(rate_day) and rate_day > 0):
        raise ValueError("per_day must be > 0")
    cap = max(region_gpus)
    lam = coupling_for(load * n_gpus * DAY / rate_day, cap)
    rng = np.random.default_rng(seed)
    big = np.array(region_gpus)
    counts = np.array(sorted(REGION_COUNT_PROBS))
    cprob = np.array([REGION_COUNT_PROBS[c] for c in counts])
    cprob = cprob[counts <= n_regions] / cprob[counts <= n_regions].sum()
    counts = counts[counts <= n_regions]
    mix = np.array(PRIORITY_MIX) / sum(PRIORITY_MIX)
    synthetic = frozenset({"submit", "gpus", "duration", "tenant", "priority", "tables"})

    def draw(n: int) -> tuple[np.ndarray, np.ndarray]:
        zg = rng.standard_normal(n)
        zd = np.where(rng.random(n) < lam, -zg, rng.standard_normal(n))
        return gang_and_duration(zg, zd, cap)

    # warm-up: what an M/G/inf system at this workload runs at a random instant (length-biased)
    pool_g, pool_d = draw(max(1000, int(4 * warm_fill * n_gpus / 8)))
    pick = rng.choice(len(pool_g), size=len(pool_g), p=pool_d / pool_d.sum())
    keep = np.cumsum(pool_g[pick]) <= warm_fill * n_gpus
    warm_g, warm_d = pool_g[pick][keep], pool_d[pick][keep] * rng.random(int(keep.sum()))
    warm_d = np.maximum(warm_d, DURATION_RANGE[0])
    # the window: Poisson arrivals
    n_arr = int(rng.poisson(rate_day * days))
    submit = np.sort(rng.random(n_arr)) * days * DAY
    arr_g, arr_d = draw(n_arr)
    g_all = np.r_[warm_g, arr_g]
    d_all = np.r_[warm_d, arr_d]
    t_all = np.r_[np.zeros(len(warm_g)), np.round(submit, 3)]
    n = len(g_all)
    level = rng.choice(len(mix), size=n, p=mix)
    tenant = rng.integers(tenants, size=n)
    k_regions = rng.choice(counts, size=n, p=cprob)
    keys = rng.random((n, n_regions))           # candidate regions: the k smallest keys among those that fit
    keys[big[None, :] < g_all[:, None]] = np.inf
    order = np.argsort(keys, axis=1, kind="stable")
    jobs: list[Job] = []
    masks: dict[str, int] = {}
    width = max(5, len(str(n_arr)))
    n_warm = len(warm_g)
    for i in range(n):
        jid = f"{WARMUP_PREFIX}{i:05d}" if i < n_warm else f"job-{i - n_warm:0{width}d}"
        fit = int(np.isfinite(keys[i]).sum())
        regs = order[i, :min(int(k_regions[i]), fit)]
        table = f"t-{jid}"
        masks[table] = int(sum(1 << int(r) for r in regs))
        jobs.append(Job(jid, float(t_all[i]), int(g_all[i]), float(d_all[i]), tenant=f"team{int(tenant[i]):02d}",
                        priority=int(level[i]), tables=(table,), synthetic=synthetic))
    prov = (f"Meta-like synthetic workload, {days:g} days (MAST §4.2, §5.1 rate and distributions, Fig. 5 load, "
            f"Fig. 7 regions; seed {seed}): {rate_day:,.0f} GPU workloads a day, offered load {load:g}x of "
            f"{n_gpus} GPUs, counter-coupled share {lam:.3f}, {tenants} tenants, warm-up filling {warm_fill:.0%}")
    return Trace(f"meta-week-d{days:g}-s{seed}", tuple(jobs), prov), masks
