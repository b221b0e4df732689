"""HiveD §5.1's Figure 5 (the cluster runs with YARN-CS, Gandiva and Tiresias inside the VCs), as
measured on our set-up, shared by the reproduction (:mod:`.hived`) and its tests.

The paper runs each of three intra-VC schedulers (i) on each tenant's private cluster, (ii) on
the shared cluster under quotas and (iii) inside HiveD's VCs, and reports

- Figure 5(a): prod-a's queuing delay averaged in a 12-hour moving window over the submission
  time; without HiveD prod-a waits 1,000 minutes longer than in its private cluster (YARN-CS,
  days 8-10), up to 400 minutes (Gandiva), over 330 minutes (Tiresias); with HiveD it "never
  experiences an excessive queuing delay" under any of the three;
- Figure 5(b): the mean JCT over all tenants with HiveD against without: "at most 3% worse (for
  YARN-CS) and 12% better (for Gandiva)".

Ours (:func:`peak_excess`, :func:`jct_change`): prod-a's *excess* is, over its compared window
jobs that finish in both runs (sorted by submission), the largest 12-hour moving-window mean of
(shared delay - private delay), each window the jobs submitted in the 12 hours up to one job's
submission (the difference of the two curves of Figure 5(a) on the same jobs), in minutes. The
JCT change is HiveD's mean JCT over the compared jobs (every tenant with a quota) that finish in
both runs, over the quota scheme's, minus 1. YARN-CS is the seed's main runs (FIFO order inside
each VC); Tiresias the same three schemes with ``order="tiresias"`` (each VC's queue, high and
low priority alike, in least attained GPU-service first; the placement rule the scheme's own):
:data:`SCHEDULERS`. Gandiva is not run: no policy here runs Gandiva's greedy placement and
migration inside a tenant's quota or VC (its claims read "not comparable").
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .hived_setup import H, anomaly_tenant

__all__ = ["SCHEDULERS", "MOVING_WINDOW_S", "peak_excess", "jct_change", "fig5_values"]

MOVING_WINDOW_S = 12 * H     # Figure 5(a): "averaged in a 12-hour moving window"
# intra-VC scheduler -> the policy option it sets on private, yarn-cs and hived (YARN-CS: the main runs)
SCHEDULERS = {"yarn-cs": {}, "tiresias": {"order": "tiresias"}}


def peak_excess(jobs, shared: dict[str, float], private: dict[str, float], tenant: str | None,
                window_s: float = MOVING_WINDOW_S) -> float | None:
    """``tenant``'s largest moving-window mean of per-job delay, shared minus private, in minutes
    (module doc); ``jobs``: the compared window jobs, ``shared`` / ``private``: job id -> delay (s).
    ``None`` when no job of the tenant finished in both runs."""
    mine = sorted((j.submit, j.id) for j in jobs if j.tenant == tenant and j.id in shared and j.id in private)
    if not mine:
        return None
    t = np.array([s for s, _ in mine])
    d = np.array([shared[i] - private[i] for _, i in mine])
    c = np.concatenate([[0.0], np.cumsum(d)])
    lo = np.searchsorted(t, t - window_s, side="right")     # the jobs submitted in (t_k - 12 h, t_k]
    hi = np.searchsorted(t, t, side="right")
    return float(np.max((c[hi] - c[lo]) / (hi - lo))) / 60.0


def jct_change(jobs, hived: dict[str, float], quota: dict[str, float]) -> float | None:
    """HiveD's mean JCT over the quota scheme's - 1, over ``jobs`` that finish in both runs
    (JCT = the job's recorded duration + its delay; ``hived`` / ``quota``: job id -> delay, s)."""
    both = [j for j in jobs if j.id in hived and j.id in quota]
    if not both:
        return None
    q = sum(j.duration + quota[j.id] for j in both)
    return sum(j.duration + hived[j.id] for j in both) / q - 1 if q else None


def fig5_values(per_seed: list[dict[str, Any]]) -> dict[str, dict[str, list]]:
    """Per intra-VC scheduler, Figure 5's per-seed numbers (``None`` where a seed did not run it):
    prod-a's peak excess under the quota scheme (``quota``) and in HiveD (``hived``), in minutes,
    and HiveD's mean JCT change against the quota scheme (``jct``)."""
    pa = anomaly_tenant()
    out: dict[str, dict[str, list]] = {s: {"quota": [], "hived": [], "jct": []} for s in SCHEDULERS}
    for p in per_seed:
        for s in SCHEDULERS:
            runs = p.get("fig5", {}).get(s)
            if runs is None:
                for k in out[s]:
                    out[s][k].append(None)
                continue
            cmp_jobs = p["views"]["table1"]["cmp"]
            priv = runs["private"]["job_delays"]
            out[s]["quota"].append(peak_excess(cmp_jobs, runs["yarn-cs"]["job_delays"], priv, pa))
            out[s]["hived"].append(peak_excess(cmp_jobs, runs["hived"]["job_delays"], priv, pa))
            out[s]["jct"].append(jct_change(cmp_jobs, runs["hived"]["job_delays"], runs["yarn-cs"]["job_delays"]))
    return out
