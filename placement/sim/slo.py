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
Latency with preemption and set-up (§5.5, metric level)
    §5.5's latency includes "preemption time" (A waits for the preemption of B to finish) and,
    to start, "acquire containers ... and set up all containers" (P50 150 s, P90 278 s, P99
    449 s). The simulator starts a job at once, so its logs carry neither; an :class:`Overhead`
    adds them to each started event's latency: a set-up time drawn per event from a
    log-normal fitted to §5.5's P50 and P90 (its P99 is then 460 s against the paper's 449 s;
    drawn by a seeded hash of the job and the event's begin, so the same for every policy), plus
    ``preempt_s`` when the start preempted work (its GPUs were released by a preemption at the
    same instant; the paper gives no figure, ours 60 s). Logs stay as they are.
Guaranteed levels and windows (§2, §4.2, §5.6)
    The guarantee covers within-quota work at the levels that carry one: the lowest level
    (which can preempt nothing and is where over-quota work runs) and unprioritised work
    ("treated as the lowest") do not; :func:`slo_windows` judges "at all times" on windows of
    the measured period widened from ``bin_s`` until each holds at least ``min_events`` events
    (100 resolves 1.3%: one violation is 1%).
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from .log import EventLog, LogRow
from .metrics import slo_limit
from .trace import Trace

__all__ = ["SloEvent", "Overhead", "NO_OVERHEAD", "scheduling_events", "slo_table", "slo_windows", "with_setup",
           "allocation_with_overhead", "RMS_S"]

SETUP_P50_S, SETUP_P90_S, SETUP_P99_S = 150.0, 278.0, 449.0     # §5.5: container set-up
_NORMAL = NormalDist()   # the standard normal's quantiles (stdlib, exact to double precision)
Z90 = _NORMAL.inv_cdf(0.9)


@dataclass(frozen=True)
class Overhead:
    """Preemption and container set-up time added to a started event's latency (module doc).
    ``setup_p50_s`` / ``setup_p90_s`` fix the log-normal set-up time (§5.5's figures by
    default; equal values give a constant); ``preempt_s`` is added when the start preempted
    work (ours; §5.5 gives no figure)."""

    setup_p50_s: float = SETUP_P50_S
    setup_p90_s: float = SETUP_P90_S
    preempt_s: float = 60.0
    seed: int = 0

    def __post_init__(self):
        if not (0 <= self.setup_p50_s <= self.setup_p90_s and self.preempt_s >= 0):
            raise ValueError("Overhead: need 0 <= setup_p50_s <= setup_p90_s and preempt_s >= 0")

    @property
    def sigma(self) -> float:
        return (math.log(self.setup_p90_s / self.setup_p50_s) / Z90) if self.setup_p50_s > 0 else 0.0

    def setup(self, job: str, begin: float) -> float:
        """The set-up time of the event of ``job`` that began at ``begin`` (seeded, order-free)."""
        if self.setup_p50_s == 0:
            return 0.0
        h = zlib.crc32(f"{self.seed}:{job}:{begin!r}".encode())
        u = (h + 0.5) / 2.0 ** 32
        return self.setup_p50_s * math.exp(self.sigma * _NORMAL.inv_cdf(u))

    def describe(self) -> str:
        if self.setup_p50_s == 0 and self.preempt_s == 0:
            return "none (the simulator's start times)"
        q99 = self.setup_p50_s * math.exp(self.sigma * _NORMAL.inv_cdf(0.99))
        return (f"container set-up log-normal with P50 {self.setup_p50_s:g} s, P90 {self.setup_p90_s:g} s "
                f"(P99 {q99:.0f} s; §5.5: 150 / 278 / 449 s) on every start, plus {self.preempt_s:g} s when the "
                "start preempted work (ours: §5.5 counts preemption time but gives no figure)")


NO_OVERHEAD = Overhead(0.0, 0.0, 0.0)


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
                      slo: Mapping[int, float] | None = None,
                      overhead: Overhead | None = None) -> list[SloEvent]:
    """Every scheduling event of the log with its within-quota label and verdict (module doc).
    ``quotas`` maps (tenant, priority) to GPUs; a missing holder has quota 0; ``None`` means
    every event is within quota. ``overhead`` (default none) adds preemption and set-up time to
    the latency of every started event (:class:`Overhead`)."""
    jobs = {j.id: j for j in trace.jobs}
    rows = list(log)
    end = max((r.time for r in rows), default=0.0)
    raw: list[list] = []        # [job, begin, start, preempted work to start]
    open_: dict[str, list] = {}
    freed: dict[float, set[int]] = {}     # GPUs released by preemptions, per instant
    for r in rows:
        if r.event == "preempt":
            freed.setdefault(r.time, set()).update(r.gpus)
    for r in rows:
        if r.event == "submit" or r.event == "preempt":
            e = [r.job, r.time, None, False]
            raw.append(e)
            open_[r.job] = e
        elif r.event == "start":
            e = open_.pop(r.job, None)
            if e is not None:
                e[2] = r.time
                e[3] = bool(freed.get(r.time)) and not freed[r.time].isdisjoint(r.gpus)
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
    for jid, begin, start, waited_preempt in raw:
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
        if start is not None and overhead is not None:
            lat += overhead.setup(jid, begin) + (overhead.preempt_s if waited_preempt else 0.0)
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


def slo_windows(events: list[SloEvent], start: float, end: float, keep: Callable[[SloEvent], bool],
                min_events: int = 100, bin_s: float = 3600.0) -> list[dict]:
    """"At all times", judged on windows that resolve the rate (module doc): the events kept by
    ``keep`` whose begin lies in [start, end), in bins of ``bin_s`` merged from the start until
    each window holds at least ``min_events`` (a short remainder joins the window before it).
    One row per window: ``window``, ``lo``, ``hi`` (s), ``events``, ``violations``, ``rate``,
    ``p95_latency_s`` and ``resolved`` (False when the whole period holds fewer than
    ``min_events``)."""
    if min_events < 1 or bin_s <= 0 or end <= start:
        raise ValueError("min_events >= 1, bin_s > 0 and end > start")
    sel = sorted((e for e in events if start <= e.begin < end and keep(e)), key=lambda e: e.begin)
    nb = max(1, int(np.ceil((end - start) / bin_s)))
    bins: list[list[SloEvent]] = [[] for _ in range(nb)]
    for e in sel:
        bins[min(nb - 1, int((e.begin - start) // bin_s))].append(e)
    spans: list[list[int]] = []          # [first bin, last bin, events]
    cur: list[int] | None = None
    for b, es in enumerate(bins):
        if cur is None:
            cur = [b, b, 0]
        cur[1], cur[2] = b, cur[2] + len(es)
        if cur[2] >= min_events:
            spans.append(cur)
            cur = None
    if cur is not None:
        if spans:
            spans[-1][1], spans[-1][2] = cur[1], spans[-1][2] + cur[2]
        else:
            spans.append(cur)
    out = []
    for w, (b0, b1, _) in enumerate(spans):
        es = [e for b in range(b0, b1 + 1) for e in bins[b]]
        v = sum(e.violated for e in es)
        out.append({"window": w, "lo": start + b0 * bin_s, "hi": min(end, start + (b1 + 1) * bin_s),
                    "events": len(es), "violations": v, "rate": v / len(es) if es else None,
                    "p95_latency_s": float(np.percentile([e.latency for e in es], 95)) if es else None,
                    "resolved": len(es) >= min_events})
    return out


# ---------------------------------------------------------------------------------------------
# The allocation rate with set-up, preemption and scheduling time allocated but idle (§5.2)
# ---------------------------------------------------------------------------------------------

RMS_S = (0.0013, 0.0055)     # §5.4, Fig. 10: the slowest RMS's time per workload, without / with preemption


def with_setup(trace: Trace, overhead: Overhead, running_prefix: str = "") -> Trace:
    """The trace with each job's first container set-up (:meth:`Overhead.setup` of the event
    that begins at its submission) added to its duration, so the simulator holds its GPUs
    through the set-up; jobs whose id starts with ``running_prefix`` (work already running when
    the trace opens; "" for none) are left as they are."""
    import dataclasses

    jobs = tuple(j if (running_prefix and j.id.startswith(running_prefix))
                 else dataclasses.replace(j, duration=j.duration + overhead.setup(j.id, j.submit))
                 for j in trace.jobs)
    return Trace(trace.name, jobs, trace.provenance + f"; durations include the first container set-up "
                                                      f"({overhead.describe()})")


def allocation_with_overhead(trace: Trace, log: EventLog | Iterable[LogRow], n_gpus: int, t0: float, t1: float,
                             overhead: Overhead, running_prefix: str = "") -> dict[str, float] | None:
    """MAST's allocation rate (§5.2: "the total hardware hours allocated to workloads by the
    total available hardware hours"; "the 2% loss is due to factors such as the overhead of
    preemption, inherent latency of scheduling ...") over [t0, t1], with that loss counted.

    Each attempt (a ``start`` to its job's next ``preempt`` or ``finish``, or to ``t1``) holds
    its GPUs; its first seconds are allocated but idle: the container set-up of the event it
    ends (:meth:`Overhead.setup`), plus ``overhead.preempt_s`` when its start preempted work (the victims'
    GPUs are released by then) and the RMS's scheduling time (:data:`RMS_S`), at most the
    attempt's length; none for the first attempt of a job whose id starts with
    ``running_prefix`` (already running when the window opens). A run of :func:`with_setup`'s trace holds the GPUs of a first attempt
    through its set-up; a restarted attempt's set-up is taken out of its own length (the engine
    keeps all progress, so it does not hold its GPUs longer: the idle share of restarted work
    is a lower bound). Returns ``rate`` (allocated and working), ``idle`` and ``held`` (their
    sum), each over ``n_gpus * (t1 - t0)``; None for an empty window."""
    if not (t1 > t0) or n_gpus <= 0:
        return None
    jobs = {j.id: j for j in trace.jobs}
    rows = list(log)
    freed: dict[float, set[int]] = {}
    for r in rows:
        if r.event == "preempt":
            freed.setdefault(r.time, set()).update(r.gpus)
    begin: dict[str, float] = {}
    first: dict[str, bool] = {}
    open_: dict[str, tuple[float, int, float]] = {}     # job -> (start, GPUs, idle seconds)
    work = idle = 0.0

    def close(jid: str, end: float) -> None:
        nonlocal work, idle
        s, g, lost = open_.pop(jid)
        cut = min(end, s + lost)
        idle += g * max(0.0, min(cut, t1) - max(s, t0))
        work += g * max(0.0, min(end, t1) - max(cut, t0))

    for r in rows:
        if r.event == "submit":
            begin[r.job], first[r.job] = r.time, True
        elif r.event == "start":
            j = jobs[r.job]
            pre = bool(freed.get(r.time)) and not freed[r.time].isdisjoint(r.gpus)
            running = first.get(r.job, True) and bool(running_prefix) and r.job.startswith(running_prefix)
            lost = 0.0 if running else (overhead.setup(r.job, begin.get(r.job, j.submit))
                                        + (overhead.preempt_s if pre else 0.0) + RMS_S[1 if pre else 0])
            open_[r.job] = (r.time, j.gpus, lost)
            first[r.job] = False
        elif r.event in ("preempt", "finish") and r.job in open_:
            close(r.job, r.time)
            if r.event == "preempt":
                begin[r.job] = r.time
    for jid in list(open_):
        close(jid, t1)
    total = n_gpus * (t1 - t0)
    return {"rate": work / total, "idle": idle / total, "held": (work + idle) / total}
