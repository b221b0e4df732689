"""MAST's scheduling-latency SLO, measured from a log as §5.5-5.6 define it.

Scheduling events (§5.5, Fig. 11)
    "the latency for pending workloads to enter the running state ... If workload A preempts
    B, rescheduling B counts as a new scheduling event ... from the time B is preempted to the
    time B runs again". So a job has one event from its submission to its first start and one
    from every preemption to the next start. An event still waiting when the log ends is
    censored at the end (its latency then is a lower bound, and counts as a violation once it
    exceeds the limit).
Within quota (§2, §4.2)
    The guarantee holds for workloads within their tenant's quota. Quotas are per (tenant,
    priority level) in GPUs in use at once. Judged from the log alone, the same way for every
    policy: events are visited in order of their begin time; an event is within quota when the
    GPUs its (tenant, level) holds running at that instant, plus the GPUs of its earlier
    within-quota events still waiting, plus the job's own GPUs, fit the quota. (A policy's own
    labels could differ: MAST's GMS re-scans its queue by credit.)
Violation
    An event whose latency exceeds the limit of its job's priority
    (:func:`placement.sim.metrics.slo_limit`; our limits, the paper gives none); the rate per
    priority level and per hour of the event's begin time, inside a measured window.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from .log import EventLog, LogRow
from .metrics import slo_limit
from .trace import Trace

__all__ = ["SloEvent", "scheduling_events", "slo_table"]


@dataclass(frozen=True)
class SloEvent:
    job: str
    tenant: str
    priority: int
    gpus: int
    begin: float
    start: float | None          # None: still waiting at the end of the log
    latency: float               # start - begin, or end - begin when censored
    within_quota: bool
    violated: bool


def scheduling_events(trace: Trace, log: EventLog | Iterable[LogRow],
                      quotas: Mapping[tuple[str, int], int] | None,
                      slo: Mapping[int, float] | None = None) -> list[SloEvent]:
    """Every scheduling event of the log with its within-quota label and verdict (module doc).
    ``quotas`` maps (tenant, priority) to GPUs; a missing holder has quota 0; ``None`` means
    every event is within quota."""
    jobs = {j.id: j for j in trace.jobs}
    rows = list(log)
    end = max((r.time for r in rows), default=0.0)
    raw: list[list] = []        # [job, begin, start]
    open_: dict[str, list] = {}
    for r in rows:
        if r.event == "submit" or r.event == "preempt":
            e = [r.job, r.time, None]
            raw.append(e)
            open_[r.job] = e
        elif r.event == "start":
            e = open_.pop(r.job, None)
            if e is not None:
                e[2] = r.time
    # the running GPUs of each holder over time, from starts and stops, to query at begins
    changes: list[tuple[float, int, tuple[str, int], int]] = []
    for r in rows:
        if r.event in ("start", "preempt", "finish") and r.job in jobs:
            j = jobs[r.job]
            # at equal times stops apply before starts (the engine frees GPUs first)
            changes.append((r.time, 1 if r.event == "start" else 0, (j.tenant, j.priority),
                            j.gpus if r.event == "start" else -j.gpus))
    changes.sort(key=lambda c: (c[0], c[1]))
    raw.sort(key=lambda e: (e[1], e[0]))
    running: dict[tuple[str, int], int] = {}
    waiting: dict[tuple[str, int], list[tuple[float | None, int]]] = {}
    out: list[SloEvent] = []
    ci = 0
    for jid, begin, start in raw:
        while ci < len(changes) and (changes[ci][0] < begin or (changes[ci][0] == begin and changes[ci][1] == 0)):
            _, _, h, d = changes[ci]
            running[h] = running.get(h, 0) + d
            ci += 1
        j = jobs[jid]
        h = (j.tenant, j.priority)
        wl = [w for w in waiting.get(h, []) if w[0] is None or w[0] > begin]
        waiting[h] = wl
        if quotas is None:
            within = True
        else:
            within = running.get(h, 0) + sum(g for _, g in wl) + j.gpus <= int(quotas.get(h, 0))
        if within:
            wl.append((start, j.gpus))
        lat = (start if start is not None else end) - begin
        out.append(SloEvent(jid, j.tenant, j.priority, j.gpus, begin, start, lat, within,
                            lat > slo_limit(j.priority, dict(slo) if slo is not None else None)))
    return out


def slo_table(events: list[SloEvent], start: float, end: float, bin_s: float = 3600.0,
              within_only: bool = True) -> list[dict]:
    """Per hour (by begin time) in [start, end) and priority: events, violations, rate, P95
    latency; plus an ``all`` row per hour over every priority."""
    out = []
    sel = [e for e in events if start <= e.begin < end and (e.within_quota or not within_only)]
    nb = max(1, int(np.ceil((end - start) / bin_s)))
    for b in range(nb):
        lo, hi = start + b * bin_s, min(end, start + (b + 1) * bin_s)
        here = [e for e in sel if lo <= e.begin < hi]
        groups = {p: [e for e in here if e.priority == p] for p in sorted({e.priority for e in here})}
        groups["all"] = here
        for p, es in groups.items():
            if not es:
                continue
            lat = np.array([e.latency for e in es])
            out.append({"hour": b, "priority": p, "events": len(es), "violations": sum(e.violated for e in es),
                        "rate": sum(e.violated for e in es) / len(es), "p95_latency_s": float(np.percentile(lat, 95))})
    return out
