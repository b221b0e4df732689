"""Dally's regime: workloads whose jobs run as long as the Dally paper's (Dally §5.1.1, Tables 2-3).

What is public and what we draw
    The paper samples 500 (batch) and about 400 (Poisson) DL/DDL jobs from SenseTime's Helios
    trace as Lucid's pipeline processes it (§5.1.1, refs [14, 15]), with the models of Table 1
    (EfficientNet replaced by AlexNet). That job-level selection is not public. What the paper
    publishes of it is the JCTs its four policies reach on 8 racks (the reproduction's contract,
    :data:`placement.app.reproduce.dally_spec.TABLES`):
    Dally's mean JCT is 2.83M s (786 h) in both batch and Poisson, Tiresias's Poisson median
    1,170 h, Dally's Poisson ">P95" / median ratio 6.3. It publishes no job duration, GPU count
    or arrival rate.

    - :func:`fitted_trace` (the reproduction's workload): GPU counts 1 to 64
      (:func:`gpu_mix`: a share at 16/32/64, a share at 1, the rest at 2/4/8), log-normal
      ideal durations, models uniform over Table 1, Poisson arrivals at an offered load. The
      shares, the duration median and sigma and the load (:data:`FIT`) are fitted to the
      paper's *baseline* JCTs, Tiresias's and Gandiva's medians and means of Tables 2-3, never
      to Dally's (``placement.app.reproduce.dally_calibrate`` holds the fit and its grid).
    - :func:`paper_trace`: the same fitted workload under the name the command line uses
      (``placement generate trace --kind dally-paper-batch|poisson``). An earlier form drew
      its log-sd from Dally's own Table 3 ratio and its median from Dally's mean JCT, both
      claim numbers; it is gone.
    - :func:`philly_scaled`: the Philly rows of the Dally bench
      (:func:`placement.app.bench.dally.dally_trace`) with every duration multiplied by
      ``scale`` (default 1: Philly's own lengths), optionally only rows of at least
      ``min_hours`` before scaling. Poisson arrivals at the offered ``load`` as above, so the
      scale changes job length, not load.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..errors import InstanceError
from .table1 import DALLY_MODELS
from .trace import Job, Trace

__all__ = ["FIT", "SMALL_SIZES", "LARGE_SIZES", "fitted_trace", "gpu_mix", "PHILLY_MULTI_GPU_MEDIAN_H",
           "paper_trace", "philly_scaled", "offered_load", "rate_for_load"]

H = 3600.0
PHILLY_MULTI_GPU_MEDIAN_H = 1.2729       # philly.csv rows with 2+ GPUs (5,620), measured
RACK_GPUS = 512                          # the paper's detail case: 8 racks x 8 machines x 8 GPUs


# The fitted workload (:func:`fitted_trace`). GPU counts: a share ``share_large`` of the jobs at
# 16, 32 or 64 GPUs, ``share_single`` at 1 GPU, the rest at 2, 4 or 8, uniform within each group
# (the paper names no mix; uniform within a group is ours). Job lengths log-normal (median, sigma). The three numbers and the Poisson load
# are fitted jointly to the baselines' JCTs of Tables 2-3 (Tiresias's and Gandiva's batch and
# Poisson median and mean on 8 racks), never to Dally's: see placement.app.reproduce.dally_calibrate,
# which records the grid, the targets and the errors (calibration.csv of every run).
SMALL_SIZES = (1, 2, 4, 8)
LARGE_SIZES = (16, 32, 64)
FIT = {"median_h": 132.0, "sigma": 0.6, "share_large": 0.3, "share_single": 0.4, "load": 32.0}


def gpu_mix(share_large: float, share_single: float | None = None) -> dict[int, float]:
    """Probability of each GPU count: ``share_large`` spread evenly over 16/32/64, ``share_single``
    at 1 GPU, the rest evenly over 2/4/8 (``share_single=None``: the rest evenly over 1/2/4/8)."""
    if not (isinstance(share_large, int | float) and 0 <= share_large <= 1):
        raise InstanceError("share_large", f"must be in [0, 1], got {share_large!r}")
    if share_single is None:
        share_single = (1 - share_large) / len(SMALL_SIZES)
    if not (isinstance(share_single, int | float) and 0 <= share_single <= 1 - share_large):
        raise InstanceError("share_single", f"must be in [0, 1 - share_large], got {share_single!r}")
    out = {1: share_single}
    out.update({g: (1 - share_large - share_single) / (len(SMALL_SIZES) - 1) for g in SMALL_SIZES[1:]})
    out.update({g: share_large / len(LARGE_SIZES) for g in LARGE_SIZES})
    return out


def fitted_trace(kind: str = "batch", *, jobs: int | None = None, seed: int = 0, load: float | None = None,
                 median_h: float | None = None, sigma: float | None = None, share_large: float | None = None,
                 share_single: float | None = None, gpus: int = RACK_GPUS, short_share: float = 0.0,
                 short_median_h: float = 1.0, short_sigma: float = 1.0, size_exponent: float = 0.0) -> Trace:
    """Jobs of the workload fitted to the paper's baseline JCTs (:data:`FIT`, module notes); seeded.

    GPU counts from :func:`gpu_mix` (1 to 64 GPUs), ideal durations log-normal (``median_h``,
    ``sigma``), models uniform over Table 1; 500 jobs at 0 (batch) or 400 Poisson arrivals at the
    offered ``load`` on ``gpus`` GPUs. Any parameter left None takes its fitted value.

    Other shapes (tried while fitting, none closer to the baselines; off by default, and then
    the draws are the fitted workload's): a share
    ``short_share`` of jobs from a second log-normal (``short_median_h``, ``short_sigma``),
    and every median times ``(gpus / 8) ** size_exponent`` (lengths growing, or shrinking, with
    GPU count). Both use one standard normal per job from a second seeded stream."""
    median_h = FIT["median_h"] if median_h is None else median_h
    sigma = FIT["sigma"] if sigma is None else sigma
    share_large = FIT["share_large"] if share_large is None else share_large
    if share_single is None:   # the fitted share of 1-GPU jobs, capped by what the large share leaves
        share_single = min(FIT["share_single"], 1 - share_large)
    load = FIT["load"] if load is None else load
    n = jobs if jobs is not None else (500 if kind == "batch" else 400)
    _check(kind, n, load)
    if not (isinstance(median_h, int | float) and median_h > 0):
        raise InstanceError("median_h", f"must be positive, got {median_h!r}")
    if not (isinstance(sigma, int | float) and sigma >= 0):
        raise InstanceError("sigma", f"must be non-negative, got {sigma!r}")
    if not (isinstance(short_share, int | float) and 0 <= short_share <= 1):
        raise InstanceError("short_share", f"must be in [0, 1], got {short_share!r}")
    if not (isinstance(short_median_h, int | float) and short_median_h > 0):
        raise InstanceError("short_median_h", f"must be positive, got {short_median_h!r}")
    if not (isinstance(short_sigma, int | float) and short_sigma >= 0):
        raise InstanceError("short_sigma", f"must be non-negative, got {short_sigma!r}")
    if not (isinstance(size_exponent, int | float) and abs(size_exponent) <= 4):
        raise InstanceError("size_exponent", f"must be in [-4, 4], got {size_exponent!r}")
    mix = gpu_mix(share_large, share_single)
    rng = np.random.default_rng([seed, 48])
    out = _draw_jobs(rng, n, np.array(list(mix)), np.array(list(mix.values())), median_h, sigma, "fit")
    shape = ""
    if short_share > 0 or size_exponent != 0:
        extra = np.random.default_rng([seed, 4848])
        z = extra.standard_normal(n)
        short = extra.random(n) < short_share
        g = np.array([j.gpus for j in out], dtype=float)
        dur = (np.where(short, short_median_h, median_h) * (g / 8.0) ** size_exponent
               * np.exp(np.where(short, short_sigma, sigma) * z) * H)
        out = [dataclasses.replace(j, duration=float(max(round(d, 3), 60.0))) for j, d in zip(out, dur, strict=True)]
        shape = (f"; {short_share:.0%} of jobs short (median {short_median_h:g} h sigma {short_sigma:g})"
                 if short_share > 0 else "") + (f"; medians x (gpus/8)^{size_exponent:g}" if size_exponent else "")
    out, rate = _arrive(out, kind, load, gpus, rng)
    prov = (f"Dally workload fitted to its baselines' JCTs (placement.sim.dally_workload.fitted_trace): {n} jobs, "
            f"{share_large:.0%} at 16-64 GPUs, {share_single:.0%} at 1, the rest at 2-8, ideal durations log-normal median {median_h:g} h "
            f"sigma {sigma:g}{shape}, models uniform over Table 1, seed {seed}; "
            + ("all submitted at 0" if rate is None else
               f"Poisson arrivals at {rate:.4g}/h (offered load {load:g} on {gpus} GPUs)"))
    return Trace(name=f"dally-fit-{kind}-{n}-s{seed}", jobs=tuple(out), provenance=prov)


def offered_load(jobs, gpus: int, window_s: float) -> float:
    """Ideal GPU-seconds submitted over ``window_s`` per GPU-second of ``gpus`` GPUs."""
    return sum(j.gpus * j.duration for j in jobs) / (gpus * window_s)


def rate_for_load(jobs, load: float, gpus: int = RACK_GPUS) -> float:
    """Poisson jobs per hour at which these jobs offer ``load`` to ``gpus`` GPUs (their mean work)."""
    work = float(np.mean([j.gpus * j.duration for j in jobs]))
    return load * gpus * H / work


def _check(kind: str, n: int, load: float) -> None:
    if kind not in ("batch", "poisson"):
        raise InstanceError("kind", "must be 'batch' or 'poisson'")
    if not isinstance(n, int) or n < 1:
        raise InstanceError("jobs", f"must be a positive integer, got {n!r}")
    if not (isinstance(load, int | float) and 0 < load <= 100):
        raise InstanceError("load", f"must be in (0, 100], got {load!r}")


def _draw_jobs(rng, n: int, sizes, p, median_h: float, sigma: float, prefix: str) -> list[Job]:
    """``n`` jobs submitted at 0: GPU counts drawn from ``sizes`` with probabilities ``p``, ideal
    durations log-normal (median ``median_h`` hours, ``sigma``; at least 60 s), models uniform
    over Dally Table 1; ids ``<prefix>-<i>`` (in this draw order: the seeded traces depend on it)."""
    g = rng.choice(sizes, size=n, p=p)
    dur = np.maximum(np.round(median_h * H * np.exp(sigma * rng.standard_normal(n)), 3), 60.0)
    models = rng.choice(len(DALLY_MODELS), size=n)
    syn = frozenset({"gpus", "duration", "model"})
    return [Job(id=f"{prefix}-{i}", submit=0.0, gpus=int(g[i]), duration=float(dur[i]),
                model=DALLY_MODELS[int(models[i])], synthetic=syn) for i in range(n)]


def _arrive(jobs: list[Job], kind: str, load: float, gpus: int, rng) -> tuple[list[Job], float | None]:
    if kind == "batch":
        return [dataclasses.replace(j, submit=0.0, synthetic=j.synthetic | {"submit"}) for j in jobs], None
    rate = rate_for_load(jobs, load, gpus)
    submit = np.round(np.cumsum(rng.exponential(H / rate, size=len(jobs))), 3)
    return [dataclasses.replace(j, submit=float(submit[k]), synthetic=j.synthetic | {"submit"})
            for k, j in enumerate(jobs)], rate


def paper_trace(kind: str = "batch", *, jobs: int | None = None, seed: int = 0, load: float = 1.0,
                gpus: int = RACK_GPUS) -> Trace:
    """The fitted workload (:func:`fitted_trace` with :data:`FIT`'s shapes) at the offered ``load``
    on ``gpus`` GPUs (Poisson; ignored for batch); seeded. ``jobs`` defaults to 500 / 400."""
    tr = fitted_trace(kind, jobs=jobs, seed=seed, load=load, gpus=gpus)
    return Trace(name=tr.name.replace("dally-fit-", "dally-paper-"), jobs=tr.jobs, provenance=tr.provenance)


def philly_scaled(rows: Trace, kind: str = "batch", *, jobs: int | None = None, seed: int = 0,
                  scale: float = 1.0, min_hours: float = 0.0, load: float = 1.0,
                  gpus: int = RACK_GPUS) -> Trace:
    """The Dally bench's Philly rows (2+ GPUs) of ``rows`` (the whole Philly trace, loaded by the
    caller: :func:`placement.app.shipped.philly_rows`; the core reads no shipped file),
    durations x ``scale``, only rows of at least ``min_hours`` (before scaling); batch, or
    Poisson at offered ``load`` on ``gpus`` GPUs."""
    n = jobs if jobs is not None else (500 if kind == "batch" else 400)
    _check(kind, n, load)
    if not (isinstance(scale, int | float) and scale > 0):
        raise InstanceError("scale", f"must be positive, got {scale!r}")
    pool = [j for j in rows.jobs if j.gpus >= 2 and j.duration >= min_hours * H]
    if n > len(pool):
        raise InstanceError("jobs", f"must be at most {len(pool)} (Philly rows with 2+ GPUs and >= {min_hours:g} h)")
    rng = np.random.default_rng([seed, 34])
    pick = np.sort(rng.choice(len(pool), size=n, replace=False))
    out = [dataclasses.replace(pool[i], duration=round(pool[i].duration * scale, 3)) for i in pick]
    out, rate = _arrive(out, kind, load, gpus, rng)
    prov = ("Philly rows with 2+ GPUs" + (f" and >= {min_hours:g} h" if min_hours else "")
            + f", {n} sampled (seed {seed}), durations x {scale:g}; models synthetic; "
            + ("all submitted at 0" if rate is None else
               f"Poisson arrivals at {rate:.4g}/h (offered load {load:g} on {gpus} GPUs)"))
    return Trace(name=f"dally-philly-x{scale:g}-{kind}-{n}-s{seed}", jobs=tuple(out), provenance=prov)
