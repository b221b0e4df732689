"""MAST's Global ML Scheduler (GMS): the global queue ordered by <priority, credit> (OSDI'24 §4.2).

Terms
-----
workload
    One pending unit of gang-scheduled work; in the simulator one trace job.
tenant priority
    The priority level a workload inherits while its tenant is within quota
    (0 is the highest level, ``lowest`` the lowest).
over-quota workload
    A workload that would push its tenant's GPUs in use beyond the tenant's quota;
    it runs at the lowest priority and may be preempted by any higher level (§2, §4.2).
credit (10)-(11)
    ``w_age * min(age, age_cap) + w_fair * (1 - avg_T / avg_all)`` where ``avg_T`` is
    the tenant's GPUs in use averaged over a sliding window and ``avg_all`` the same
    average over all tenants.
GMS-scan pass
    The periodic recomputation of every pending workload's <priority, credit>
    (§4.2, §5.4; every 5 simulated minutes by default).

Choices where the paper is open (documented, all parameters of :class:`GmsParams`)
------------------------------------------------------------------------------------
- ``age`` is the time since the workload last entered the queue (its submission, or
  its preemption: §5.5 counts a rescheduling after preemption as a new event), in hours.
- ``window_avg(all_tenants.resource_used)`` (``fair_share``): ``"total"`` (default, as (11)
  is written) is the window average of all tenants' usage summed, so the term lies in
  [0, 1] and a tenant's share of the cluster's recent use is what lowers its credit;
  ``"mean-active"`` (the earlier reading) is the *mean over tenants* that have used any
  GPU in the window, so a tenant at the average gets 0 and a heavy one a negative term.
  With no usage at all the term is ``w_fair`` for everyone.
- ``resource_used`` of the quota scan (``quota_used``): ``"all"`` (default, as §4.2 writes
  it) starts from the GPUs of all the holder's running workloads; ``"within"`` (the earlier
  reading) from its within-quota running workloads only, so running over-quota (preemptible)
  work does not count against the quota.
- Resources are GPUs (trace jobs request no CPUs); quotas are GPUs in use at once.
- The quota scan visits a tenant's workloads in decreasing credit (ties: earlier
  queue entry, then index), exactly as §4.2 describes; a workload that does not fit
  is demoted and later smaller ones may still fit.
- The final order is ascending effective priority, then descending credit, then
  earlier queue entry, then index (deterministic).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np

__all__ = ["GmsParams", "credit", "TenantUsage", "quota_scan", "gms_scan", "GmsScan", "fair_denominator",
           "FAIR_SHARE", "QUOTA_USED"]

FAIR_SHARE = ("total", "mean-active")
QUOTA_USED = ("all", "within")


@dataclass(frozen=True)
class GmsParams:
    """Tunable constants of GMS (defaults are our choice; the paper gives none).

    w_age : weight of the capped age term (10), per hour waited.
    age_cap : C_age_cap of (10), in seconds (default 24 h).
    w_fair : weight of the fair-share term (11).
    window : length of the sliding window of (11), in seconds (default 1 h).
    scan_interval : seconds between GMS-scan passes (§5.4: 5 minutes).
    lowest : the lowest priority level (MAST uses seven levels: 0..6).
    fair_share : the denominator of (11): ``"total"`` or ``"mean-active"`` (module docstring).
    quota_used : where the quota scan starts: ``"all"`` or ``"within"`` (module docstring).
    """

    w_age: float = 1.0
    age_cap: float = 24 * 3600.0
    w_fair: float = 4.0
    window: float = 3600.0
    scan_interval: float = 300.0
    lowest: int = 6
    fair_share: str = "total"
    quota_used: str = "all"

    def __post_init__(self) -> None:
        for name in ("w_age", "age_cap", "w_fair"):
            v = getattr(self, name)
            if not (np.isfinite(v) and v >= 0):
                raise ValueError(f"{name} must be a finite number >= 0")
        for name in ("window", "scan_interval"):
            v = getattr(self, name)
            if not (np.isfinite(v) and v > 0):
                raise ValueError(f"{name} must be a finite number > 0")
        if int(self.lowest) != self.lowest or self.lowest < 0:
            raise ValueError("lowest must be an integer >= 0")
        if self.fair_share not in FAIR_SHARE:
            raise ValueError(f"fair_share must be one of {', '.join(FAIR_SHARE)}, got {self.fair_share!r}")
        if self.quota_used not in QUOTA_USED:
            raise ValueError(f"quota_used must be one of {', '.join(QUOTA_USED)}, got {self.quota_used!r}")


def credit(age: np.ndarray, tenant_avg: np.ndarray, all_avg: float, params: GmsParams) -> np.ndarray:
    """Credit of workloads, expressions (10)-(11), vectorized.

    Parameters
    ----------
    age : seconds each workload has waited (see the module docstring).
    tenant_avg : window average of GPUs in use by each workload's tenant.
    all_avg : window average over all tenants (the denominator of (11)).
    """
    age_h = np.minimum(np.asarray(age, dtype=float), params.age_cap) / 3600.0
    if all_avg > 0:
        fair = 1.0 - np.asarray(tenant_avg, dtype=float) / all_avg
    else:
        fair = np.ones_like(age_h)
    return params.w_age * age_h + params.w_fair * fair


class TenantUsage:
    """GPUs in use per tenant as piecewise-constant functions of time, for window averages.

    ``change(t, tenant, delta)`` records a change at time ``t`` (non-decreasing);
    ``window_avg(now, window)`` returns, per tenant, the integral of its GPUs in use
    over ``[now - window, now]`` divided by ``window`` (time before the first record
    counts as zero use). Stored as per-tenant breakpoints with cumulative integrals.
    A query costs a binary search per tenant in general; when its two ends do not move
    back in time (a simulation's clock), it is a few array operations: the upper end is
    past every tenant's last breakpoint, and the lower end keeps a pointer per tenant into
    its breakpoints that only moves forward (:meth:`_lower`), so the same breakpoint and
    the same arithmetic give the same value as the search.
    """

    def __init__(self, n_tenants: int = 0):
        self._t: list[list[float]] = []
        self._level: list[list[float]] = []
        self._cum: list[list[float]] = []   # integral from -inf up to the breakpoint
        self.current = np.zeros(0, dtype=np.int64)
        # per tenant: first and last breakpoint (time, level, integral); the lower end's pointer
        # (index, time, level, integral, next breakpoint's time) and the last lower end queried
        self._first = np.zeros(0)
        self._last = np.zeros((3, 0))
        self._pi = np.zeros(0, dtype=np.int64)
        self._p = np.zeros((3, 0))
        self._next = np.zeros(0)
        self._pq = -np.inf
        self.grow(n_tenants)

    @property
    def n(self) -> int:
        return len(self._t)

    def grow(self, n_tenants: int) -> None:
        k = n_tenants - len(self._t)
        while len(self._t) < n_tenants:
            self._t.append([])
            self._level.append([])
            self._cum.append([])
        if len(self.current) < n_tenants:
            self.current = np.concatenate([self.current, np.zeros(n_tenants - len(self.current), np.int64)])
        if k > 0:
            self._first = np.r_[self._first, np.full(k, np.inf)]
            self._last = np.concatenate([self._last, np.zeros((3, k))], axis=1)
            self._pi = np.r_[self._pi, np.full(k, -1, dtype=np.int64)]
            self._p = np.concatenate([self._p, np.zeros((3, k))], axis=1)
            self._next = np.r_[self._next, np.full(k, np.inf)]

    def change(self, t: float, tenant: int, delta: int) -> None:
        self.grow(tenant + 1)
        ts, lv, cu = self._t[tenant], self._level[tenant], self._cum[tenant]
        if ts and t < ts[-1]:
            raise ValueError("usage changes must come in time order")
        cum = cu[-1] + lv[-1] * (t - ts[-1]) if ts else 0.0
        new = int(self.current[tenant]) + int(delta)
        if new < 0:
            raise ValueError(f"tenant {tenant} would use a negative number of GPUs")
        self.current[tenant] = new
        if ts and ts[-1] == t:
            lv[-1], cu[-1] = float(new), cum
            if self._pi[tenant] == len(ts) - 1:
                self._p[1, tenant], self._p[2, tenant] = float(new), cum
        else:
            ts.append(float(t))
            lv.append(float(new))
            cu.append(cum)
            if len(ts) == 1:
                self._first[tenant] = float(t)
            if self._pi[tenant] == len(ts) - 2:
                self._next[tenant] = float(t)
        self._last[0, tenant], self._last[1, tenant], self._last[2, tenant] = ts[-1], lv[-1], cu[-1]

    def _integral_until(self, tenant: int, t: float) -> float:
        ts = self._t[tenant]
        if not ts or t <= ts[0]:
            return 0.0
        i = bisect.bisect_right(ts, t) - 1
        return self._cum[tenant][i] + self._level[tenant][i] * (t - ts[i])

    def _point(self, k: int, t: float) -> None:
        """Set tenant k's pointer to its last breakpoint at or before ``t`` (index -1: none)."""
        ts = self._t[k]
        i = bisect.bisect_right(ts, t) - 1
        self._pi[k] = i
        if i >= 0:
            self._p[0, k], self._p[1, k], self._p[2, k] = ts[i], self._level[k][i], self._cum[k][i]
        else:
            self._p[:, k] = 0.0
        self._next[k] = ts[i + 1] if i + 1 < len(ts) else np.inf

    def _lower(self, t: float) -> np.ndarray:
        """Every tenant's integral until ``t`` by the forward-moving pointers."""
        if t < self._pq:
            for k in range(self.n):
                self._point(k, t)
        else:
            for k in np.flatnonzero(self._next <= t).tolist():
                self._point(k, t)
        self._pq = t
        pt, pl, pc = self._p
        return np.where(t > self._first, pc + pl * (t - pt), 0.0)

    def window_avg(self, now: float, window: float) -> np.ndarray:
        if self.n and now >= self._last[0].max():
            lt, ll, lc = self._last
            upper = np.where(now > self._first, lc + ll * (now - lt), 0.0)
            return (upper - self._lower(now - window)) / window
        out = np.zeros(self.n)
        for k in range(self.n):
            if self._t[k]:
                out[k] = (self._integral_until(k, now) - self._integral_until(k, now - window)) / window
        return out


def quota_scan(order: np.ndarray, tenant: np.ndarray, demand: np.ndarray, used: np.ndarray,
               quota: np.ndarray) -> np.ndarray:
    """Within-quota flags by §4.2's scan, visiting workloads in ``order``.

    ``used[k]`` starts at tenant k's GPUs held by running workloads; a workload whose
    demand would push its tenant beyond ``quota[k]`` is over quota (False), otherwise it
    is within quota (True) and its demand is added to ``used``. Tenants are independent,
    so each tenant's prefix that fits as a whole is settled by a cumulative sum and only
    the rest is scanned one by one.
    """
    order = np.asarray(order, dtype=np.int64)
    within = np.zeros(len(tenant), dtype=bool)
    if len(order) == 0:
        return within
    t_o, d_o = tenant[order], demand[order]
    by_tenant = np.argsort(t_o, kind="stable")         # keeps the scan order inside a tenant
    ts, ds = t_o[by_tenant], d_o[by_tenant]
    starts = np.flatnonzero(np.r_[True, ts[1:] != ts[:-1]])
    ends = np.r_[starts[1:], len(ts)]
    for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
        k = int(ts[s])
        room = int(quota[k]) - int(used[k])
        cs = np.cumsum(ds[s:e])
        fit = int(np.searchsorted(cs, room, side="right"))   # prefix that fits as a whole
        idx = order[by_tenant[s:e]]
        within[idx[:fit]] = True
        room -= int(cs[fit - 1]) if fit else 0
        for i in range(fit, e - s):
            d = int(ds[s + i])
            if d <= room:
                within[idx[i]] = True
                room -= d
    return within


def fair_denominator(tenant_avg: np.ndarray, params: GmsParams) -> float:
    """``window_avg(all_tenants.resource_used)`` of (11) under ``params.fair_share``: the
    window averages summed over all tenants (``"total"``), or their mean over the tenants
    with any usage in the window (``"mean-active"``)."""
    tenant_avg = np.asarray(tenant_avg, dtype=float)
    if params.fair_share == "total":
        return float(tenant_avg.sum())
    active = tenant_avg > 0
    return float(tenant_avg[active].mean()) if active.any() else 0.0


@dataclass(frozen=True)
class GmsScan:
    """Result of one GMS-scan pass over the pending workloads (arrays over them)."""

    order: np.ndarray          # indices into the pending arrays, scheduling order
    priority: np.ndarray       # effective priority (tenant priority or ``lowest``)
    credit: np.ndarray
    within_quota: np.ndarray   # bool


def gms_scan(now: float, queued_since: np.ndarray, priority: np.ndarray, tenant: np.ndarray,
             demand: np.ndarray, used: np.ndarray, quota: np.ndarray, tenant_avg: np.ndarray,
             params: GmsParams, holder: np.ndarray | None = None) -> GmsScan:
    """One GMS-scan pass (§4.2): credit (10)-(11), quota demotion, the <priority, credit> order.

    Parameters
    ----------
    now : current time (s).
    queued_since, priority, tenant, demand : per pending workload: when it entered the
        queue, its tenant's priority level, tenant index, GPUs requested.
    tenant_avg : per tenant, the window average of GPUs in use (:meth:`TenantUsage.window_avg`).
    used, quota : per quota holder: GPUs held by its running workloads (all of them, or the
        within-quota ones: ``params.quota_used``, chosen by the caller), and its GPU quota.
    holder : per pending workload, its quota holder (default: its tenant). MAST assigns
        quotas per priority level (§2), so a holder can be a (tenant, level) pair.

    Returns a :class:`GmsScan`; ``order`` is the scheduling order (highest priority
    first, then highest credit).
    """
    queued_since = np.asarray(queued_since, dtype=float)
    n = len(queued_since)
    tenant = np.asarray(tenant, dtype=np.int64)
    all_avg = fair_denominator(tenant_avg, params)
    cr = credit(now - queued_since, tenant_avg[tenant] if n else np.zeros(0), all_avg, params)
    idx = np.arange(n)
    by_credit = np.lexsort((idx, queued_since, -cr))
    holder = tenant if holder is None else np.asarray(holder, dtype=np.int64)
    within = quota_scan(by_credit, holder, np.asarray(demand, dtype=np.int64), used, quota)
    eff = np.where(within, np.minimum(np.asarray(priority, dtype=np.int64), params.lowest), params.lowest)
    order = np.lexsort((idx, queued_since, -cr, eff))
    return GmsScan(order=order, priority=eff, credit=cr, within_quota=within)
