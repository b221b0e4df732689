"""The set-up of ``placement reproduce hived`` (:mod:`.hived`) shared with its report (:mod:`.hived_report`):
the schemes and views, the window offsets, the configuration (full and ``--quick``), Figure 7's tenant
and the per-seed tenant comparison."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .hived_quotas import anomalies, philly_mapping
from .hived_spec import PAPER_LOAD

_anomalies = anomalies

H = 3600.0
DAY = 86400.0
SCHEMES = {
    "private": ("private", "node"),
    "yarn-cs": ("yarn-cs", "node"),
    "quota": ("quota", "node"),
    "hived": ("hived", "node"),
    "hived-multi": ("hived", "multi"),
    "hived-static": ("hived-static", "node"),
    "hived-static-fixed": ("hived-static", "node"),
}
SCHEME_OPTIONS = {"hived-static-fixed": {"pick": "lowest"}}   # static binding in a fixed order
VIEW_SCHEMES = {"table1": ("private", "yarn-cs", "quota", "hived", "hived-static"),
                "fitted": ("private", "yarn-cs", "quota", "hived", "hived-multi", "hived-static")}
LOW_SCHEMES = ("private", "yarn-cs", "hived", "hived-static-fixed", "hived-static")   # Figure 10's size
STATIC_READINGS = {"hived-static-fixed": "static binding in a fixed order (the lowest free bound cell)",
                   "hived-static": "static binding by §3.3's rule (the bound cell with the fewest low-priority GPUs)"}
FREE_VIEW = ("yarn-cs", "hived", "hived-static")   # schemes rerun with free preemption (Table 1 view)
OFFSETS = (0, -3, 3, -6, 6)   # days the window moves per seed
LOW_LOAD = 279 / 200          # the paper's original cluster over its higher-load one
ANOMALY = "sharing anomaly: prod-a's delay under YARN-CS over its private cluster's"
GAIN = "HiveD's mean delay change against YARN-CS over tenants"
FIG10 = "preempted GPUs, dynamic vs static binding by §3.3's rule (Figure 10)"
ANOMALY_ROW = "prod-a"        # Figure 7's tenant


@dataclass(frozen=True)
class Config:
    start_day: float = 35.0
    days: float = 20.0
    warmup_days: float = 2.0
    nodes: int = 32                    # the busy size (the load is fitted by the arrival rate)
    scales: tuple[float, ...] = (1.0, 2.0, 3.0, 4.0)   # the arrival-rate grid (ascending)
    refine: int = 3                    # bisections of the bracket around the target
    views: tuple[str, ...] = ("table1", "fitted")   # the first is the main reading
    target_high_share: float = PAPER_LOAD
    max_jobs: int | None = None        # keep the first N window jobs (tests)
    checkpoint_s: float = 3600.0       # the engine's checkpoint interval for every scheme
    regime_nodes: tuple[int, ...] = (24, 28, 40, 48)
    regime_spare: tuple[float, ...] = (0.0, 1.0, 2.0, 3.0)
    regime_checkpoint_h: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0)
    regime_days: tuple[float, ...] = (5.0, 10.0, 15.0, 20.0)   # window lengths (the main one stands for itself)
    regime_seeds: int | None = None    # map the regimes on the first N seeds (None: all)
    free_view: bool = True             # rerun the preempting schemes with free preemption (main reading)
    fig89_seeds: int | None = None     # Figures 8 and 9 on the first N seeds (None: all)
    fig5_seeds: int | None = None      # Figure 5's Tiresias runs on the first N seeds (None: all)


FULL = Config(regime_seeds=1)   # 20-day windows: the regime map on seed 0 only, for time

# --quick maps four knobs on four values or more (size, arrival rate, spare quota, window length; the
# checkpoint interval on two more), on seed 0
QUICK = Config(start_day=50.0, days=4.0, warmup_days=1.0, regime_nodes=(24, 40), regime_spare=(0.0, 1.0, 2.0, 3.0),
               regime_checkpoint_h=(0.5, 1.0), regime_days=(1.0, 2.0, 4.0, 8.0), regime_seeds=1, free_view=False,
               fig89_seeds=1, fig5_seeds=1)


def anomaly_tenant(row: str = ANOMALY_ROW) -> str | None:
    """The trace tenant identified as Table 1's ``row`` (Figure 7's prod-a unless told;
    :func:`.hived_quotas.philly_mapping`)."""
    return next((t for t, r in philly_mapping()[0].items() if r == row), None)


def tenant_comparison(runs: dict[str, Any], quota: str = "yarn-cs", hived: str = "hived") -> dict[str, Any]:
    """Per-seed numbers of the Figure 7 claims from the per-tenant delays of one seed's runs
    (``quota``: the quota baseline's scheme; ``hived``: HiveD's). Tenants are compared where
    their private cluster ran their jobs (a tenant without quota has none); a delay ratio needs a
    private delay of more than a minute."""
    priv, q = runs["private"]["delays"], runs[quota]["delays"]
    h = runs[hived]["delays"] if hived in runs else {}
    ratios = {t: q[t] / priv[t] for t in q if priv.get(t, 0) > 60.0}
    both = [t for t in h if t in q and q[t] > 60.0]
    red = {t: h[t] / q[t] - 1 for t in both}
    pa = anomaly_tenant()
    return {"anomaly_ratio": ratios.get(pa), "ratios": ratios, "anomaly_private_s": priv.get(pa), "anomaly_shared_s": q.get(pa),
            "worst_quota_ratio": max(ratios.values()) if ratios else None,
            "worst_quota_tenant": max(ratios, key=ratios.get) if ratios else None,
            "median_quota_ratio": float(np.median(list(ratios.values()))) if ratios else None,
            "quota_anomalies": len(_anomalies(q, priv)), "hived_anomalies": len(_anomalies(h, priv)),
            "compared": len([t for t in h if t in priv]),
            "hived_below_quota_share": (sum(v < 0 for v in red.values()) / len(red)) if red else None,
            "max_reduction": min(red.values()) if red else None,
            "mean_reduction": float(np.mean(list(red.values()))) if red else None}


def _h(x: float | None) -> str:
    return "-" if x is None else f"{x / H:.2f} h"


def _row_of(p: dict[str, Any], tenant: str | None) -> str:
    """The Table 1 row a tenant is mapped to in seed ``p``'s Table 1 view (or '-')."""
    rows = p["views"].get("table1", {}).get("t1rows", [])
    return next((r["row"] for r in rows if r["tenant"] == tenant), "-")
