"""HiveD §5.2's two workload transforms (Figures 8 and 9), shared by the reproduction and its tests.

Reshaping (Figure 8, "GPU affinity requirement vs. sharing safety")
    :func:`reshape`: the tenants are split into an 8-GPU group and a 1-GPU group; a tenant's jobs
    are replaced by ``N = round(G / size)`` jobs of ``size`` GPUs (8 or 1), ``G`` its jobs' total
    GPUs ("the reshaping does not change the total number of GPUs used in each tenant"), whose
    submit times are those of ``N`` jobs drawn from the tenant's own jobs ("the job submission
    time is set by randomly sampling N jobs from the original trace"). The draw, seeded per seed
    and tenant: without replacement when ``N`` does not exceed the tenant's jobs, else every job
    ``N // n`` times and ``N % n`` more drawn without replacement (so the submit times follow the
    tenant's own as closely as ``N`` allows). The paper does not say what a reshaped job's
    duration is: it keeps the drawn job's (ours). A tenant's reshaping depends on its group only,
    so a tenant that stays in a group is reshaped the same way at every step.
    :func:`workload_fragmentation`: jobs / GPUs (§5.2: "the ratio of the total number of jobs to
    the total number of GPUs"; 1 when every job uses 1 GPU).
Relaxing (Figure 9, "Soft affinity requirement")
    :func:`relax`: the ids of the multi-GPU jobs whose affinity becomes soft, ``fraction`` of them
    drawn at random: one uniform number per job in the trace's order, seeded per seed, a job soft
    when its number is below ``fraction`` (so the 25% set lies inside the 50% one, inside the 75%
    one). How each policy treats a soft job is in its docstring (option ``soft``).
"""

from __future__ import annotations

import zlib
from collections.abc import Collection, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from .hived_setup import anomaly_tenant
from .hived_spec import FIG8_STEPS, FIG9_FRACTIONS

__all__ = ["reshape", "workload_fragmentation", "relax", "BIG", "fig8_values", "fig9_values"]

BIG = 8   # the 8-GPU group's job size (1 x 8 affinity); the other group's jobs take 1 GPU


def _rng(seed: int, tag: str) -> np.random.Generator:
    return np.random.default_rng([int(seed), zlib.crc32(tag.encode())])


def reshape(jobs: Sequence, big: Collection[str], seed: int) -> tuple:
    """``jobs`` reshaped as Figure 8's experiment (module doc): the tenants in ``big`` get jobs of
    8 GPUs, every other tenant jobs of 1 GPU; per tenant the total GPUs kept (to the nearest
    job), the submit times and durations drawn from its own jobs, seeded by ``seed`` and the
    tenant. Ids ``<drawn job>~<size>g<k>`` (k: the k-th copy of that job)."""
    per: dict[str, list] = {}
    for j in jobs:
        per.setdefault(j.tenant, []).append(j)
    out = []
    for t in sorted(per):
        own = per[t]
        size = BIG if t in big else 1
        g = sum(j.gpus for j in own)
        n = max(1, int(round(g / size)))
        rng = _rng(seed, f"reshape/{t}/{size}")
        reps, rest = divmod(n, len(own))
        idx = [i for i in range(len(own)) for _ in range(reps)]
        idx += sorted(rng.choice(len(own), size=rest, replace=False).tolist())
        seen: dict[int, int] = {}
        for i in idx:
            k = seen[i] = seen.get(i, -1) + 1
            src = own[i]
            out.append(replace(src, id=f"{src.id}~{size}g{k}", gpus=size,
                               synthetic=frozenset(src.synthetic) | {"id", "gpus", "submit", "duration"}))
    return tuple(sorted(out, key=lambda j: (j.submit, j.id)))


def workload_fragmentation(jobs: Sequence) -> float | None:
    """§5.2's workload fragmentation: the number of jobs over their total GPUs (``None`` without jobs)."""
    g = sum(j.gpus for j in jobs)
    return len(jobs) / g if g else None


def relax(jobs: Sequence, fraction: float, seed: int) -> tuple[str, ...]:
    """Ids of the multi-GPU jobs of ``jobs`` whose affinity is soft: each job draws a uniform number
    (in ``jobs``' order, seeded by ``seed``), a multi-GPU job is soft when its number is below
    ``fraction`` (nested across fractions)."""
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"fraction must lie in [0, 1], got {fraction!r}")
    u = _rng(seed, "relax").random(len(jobs))
    return tuple(j.id for j, x in zip(jobs, u, strict=True) if j.gpus > 1 and x < fraction)


def fig8_values(per_seed: list[dict[str, Any]]) -> dict[str, list]:
    """Figure 8's per-seed numbers (``None`` where a seed did not run it): res-f's YARN-CS / private
    ratio per step (``ratios``: one list per step), the workload fragmentation per step
    (``frag``), HiveD's largest ratio over private (``hived_safe``) and its largest change against
    YARN-CS (``hived_shorter``) over the steps, and the baseline's largest ratio (``base``). A
    ratio needs a private delay above a minute."""
    rf = anomaly_tenant("res-f")

    def ratio(x, y):
        return None if x is None or y is None or y <= 60.0 else x / y

    out: dict[str, list] = {"ratios": [[] for _ in FIG8_STEPS], "frag": [[] for _ in FIG8_STEPS], "hived_safe": [],
                            "hived_shorter": [], "base": []}
    for p in per_seed:
        f8 = p.get("fig8")
        if f8 is None:
            for xs in out["ratios"] + out["frag"]:
                xs.append(None)
            for k in ("hived_safe", "hived_shorter", "base"):
                out[k].append(None)
            continue
        priv = f8["private"]["delays"].get(rf)
        hs, hq, base = [], [], []
        for i, st in enumerate(f8["steps"]):
            y, h = st["yarn-cs"]["delays"].get(rf), st["hived"]["delays"].get(rf)
            out["ratios"][i].append(ratio(y, priv))
            out["frag"][i].append(st["frag"])
            base.append(ratio(y, priv))
            hs.append(ratio(h, priv))
            hq.append(None if h is None or not y else h / y - 1)
        _worst(out, hs, hq, base)
    return out


def _worst(out: dict[str, Any], hs: list, hq: list, base: list) -> None:
    """Append a seed's largest HiveD ratio, HiveD change and baseline ratio over its steps (None: none)."""
    for k, xs in (("hived_safe", hs), ("hived_shorter", hq), ("base", base)):
        got = [x for x in xs if x is not None]
        out[k].append(max(got) if got else None)


def fig9_values(per_seed: list[dict[str, Any]]) -> dict[str, Any]:
    """Figure 9's per-seed numbers (``None`` where a seed did not run it): prod-a's YARN-CS / private
    ratio per fraction (``ratios``: fraction -> list), HiveD's largest ratio over private
    (``hived_safe``), its largest change against YARN-CS (``hived_shorter``) and the baseline's
    largest ratio (``base``) over the fractions."""
    pa = anomaly_tenant()

    def ratio(x, y):
        return None if x is None or y is None or y <= 60.0 else x / y

    out: dict[str, Any] = {"ratios": {f: [] for f in FIG9_FRACTIONS}, "hived": {f: [] for f in FIG9_FRACTIONS},
                           "hived_safe": [], "hived_shorter": [], "base": []}
    for p in per_seed:
        f9 = p.get("fig9")
        hs, hq, base = [], [], []
        for f in FIG9_FRACTIONS:
            r = None if f9 is None else f9[f]
            priv = None if r is None else r["private"]["delays"].get(pa)
            y = None if r is None else r["yarn-cs"]["delays"].get(pa)
            h = None if r is None else r["hived"]["delays"].get(pa)
            out["ratios"][f].append(ratio(y, priv))
            out["hived"][f].append(ratio(h, priv))
            base.append(ratio(y, priv))
            hs.append(ratio(h, priv))
            hq.append(None if h is None or not y else h / y - 1)
        _worst(out, hs, hq, base)
    return out
