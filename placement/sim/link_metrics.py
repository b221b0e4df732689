"""Measures of a run on links shared over time, from its log alone: iteration times (CASSINI
§5's metric, over iterations), link utilisation over time (:mod:`placement.sim.links`), the
time-shift adjustments of §5.7 (Fig. 17) and the most any shift could gain on the run's
placements (:func:`shift_ceiling`)."""

from __future__ import annotations

import math

import numpy as np

from ..cassini.catalogue import PROFILES, profile_of
from .links import LinkSharing, instants
from .log import EventLog, extra_value
from .trace import Trace

__all__ = ["iteration_time_samples", "iteration_summary", "weighted_quantile", "running_intervals",
           "link_utilisation_series", "shift_adjustments", "placement_bound", "shift_ceiling"]


def iteration_time_samples(trace: Trace, log: EventLog) -> list[tuple[str, float, float]]:
    """``(job, iteration ms, iterations)`` per interval of constant factor, from the log alone:
    a job of catalogue model with ideal iteration ``I`` at factor ``f`` runs iterations of
    ``I / f`` ms, ``(interval s * 1000) / (I / f)`` of them (so a mean or quantile weighted by
    the iteration count is over iterations, as CASSINI's Fig. 11(b) plots every iteration)."""
    jobs = {j.id: j for j in trace.jobs}
    cur: dict[str, tuple[float, float]] = {}   # id -> (since, factor)
    out = []

    def close(jid: str, t: float) -> None:
        since, f = cur.pop(jid)
        model = jobs[jid].model
        if t > since and model in PROFILES:
            it = PROFILES[model][1] / f
            out.append((jid, it, (t - since) * 1000.0 / it))

    for r in log:
        if r.job not in jobs:
            continue
        if r.event == "start":
            cur[r.job] = (r.time, 1.0)
        elif r.event == "rate" and r.job in cur:
            close(r.job, r.time)
            cur[r.job] = (r.time, extra_value(r.extra, "factor") or 1.0)
        elif r.event in ("preempt", "finish") and r.job in cur:
            close(r.job, r.time)
    return out


def weighted_quantile(values, weights, q: float) -> float:
    """The ``q`` quantile of ``values`` each counted ``weights`` times (NaN when empty)."""
    v = np.asarray(values, dtype=float)
    w = np.asarray(weights, dtype=float)
    if len(v) == 0:
        return math.nan
    o = np.argsort(v)
    c = np.cumsum(w[o])
    return float(v[o][min(len(v) - 1, int(np.searchsorted(c, q * c[-1], side="left")))])


def iteration_summary(trace: Trace, log: EventLog) -> dict[str, float | None]:
    """Iteration time (ms) over all iterations of catalogue jobs: mean and p99, the same jobs'
    ideal (alone) mean, and the mean slowdown against each job's ideal iteration (None without
    such jobs)."""
    samples = iteration_time_samples(trace, log)
    if not samples:
        return {"iteration_ms_mean": None, "iteration_ms_p99": None, "iteration_ideal_ms_mean": None,
                "iteration_slowdown_mean": None}
    jobs = {j.id: j for j in trace.jobs}
    it = np.array([s[1] for s in samples])
    w = np.array([s[2] for s in samples])
    ideal = np.array([PROFILES[jobs[s[0]].model][1] for s in samples], dtype=float)
    return {"iteration_ms_mean": float(np.average(it, weights=w)),
            "iteration_ms_p99": weighted_quantile(it, w, 0.99),
            "iteration_ideal_ms_mean": float(np.average(ideal, weights=w)),
            "iteration_slowdown_mean": float(np.average(it / ideal, weights=w))}


def running_intervals(trace: Trace, log: EventLog):
    """``(t0, t1, {job: (job, gpus, phase)})`` for each interval between log instants with jobs
    running, from the log alone (phases by :func:`default_phase` and ``shift`` rows)."""
    return [(t, nxt, dict(run)) for t, nxt, run, _ in instants(trace, log) if nxt is not None and run]


def link_utilisation_series(trace: Trace, log: EventLog, links: LinkSharing) -> list[tuple[float, float, dict]]:
    """``(t0, t1, {link: utilisation})`` over the run: each interval's links as
    :meth:`LinkSharing.utilisation` gives them (links carrying nothing are left out)."""
    return [(t0, t1, links.utilisation(run)) for t0, t1, run in running_intervals(trace, log)]


def _clipped_intervals(trace: Trace, log: EventLog, start: float, end: float):
    for t0, t1, run, factor in instants(trace, log):
        if t1 is None or not run or t1 <= start or t0 >= end:
            continue
        yield max(t0, start), min(t1, end), run, factor


def ecn_marks(trace: Trace, log: EventLog, links: LinkSharing, start: float = -math.inf,
              end: float = math.inf) -> dict[str, float]:
    """Each job's marked-packet proxy per iteration over ``[start, end]`` (CASSINI §5.3's ECN
    marks, Fig. 13(b)-(d)): per interval of constant running set, the link model's marked volume
    per iteration (:meth:`LinkSharing.marks`; 0 for a job alone on its links), weighted by the
    iterations the job ran there (the interval over its logged iteration time); jobs that ran no
    iteration are left out."""
    jobs = {j.id: j for j in trace.jobs}
    tot: dict[str, float] = {}
    its: dict[str, float] = {}
    for t0, t1, run, factor in _clipped_intervals(trace, log, start, end):
        marks = links.marks(run)
        for jid in run:
            job = jobs[jid]
            if job.model not in PROFILES:
                continue
            f = factor.get(jid, 1.0)
            n = (t1 - t0) * 1000.0 * f / PROFILES[job.model][1] if f == f and f > 0 else 0.0
            tot[jid] = tot.get(jid, 0.0) + marks.get(jid, 0.0) * n
            its[jid] = its.get(jid, 0.0) + n
    return {j: tot[j] / its[j] for j in tot if its[j] > 0}


def shift_adjustments(trace: Trace, log: EventLog, links: LinkSharing, start: float = -math.inf,
                      end: float = math.inf) -> dict[str, float]:
    """CASSINI §5.7's time-shift adjustments over ``[start, end]`` of a run, from its log and the
    link model's drift counts (:meth:`LinkSharing.adjustment_rates`, per interval of constant
    running set): ``total`` (every job sharing links), ``per_minute`` (cluster-wide, over the
    window's minutes with jobs running) and ``per_job_minute`` (over the jobs CASSINI shifted,
    i.e. with a ``shift`` row in their current attempt, per minute each ran sharing links; NaN
    when none did), on the ideal iteration's grid, and ``per_job_minute_steady`` on each job's own
    mean iteration. Also the scheduler's re-alignments when the placement changes: ``realign_total``
    (``shift`` rows of a job already running, i.e. after the instant its attempt started, in the
    window), ``realign_per_minute`` (cluster-wide) and ``realign_per_job_minute`` (over the same
    shifted job-minutes as ``per_job_minute``); ``starts_per_minute`` (placements per minute)."""
    starts: dict[str, list[float]] = {}
    shifts: dict[str, list[float]] = {}
    realign = n_starts = 0
    for r in log:
        if r.event == "start":
            starts.setdefault(r.job, []).append(r.time)
            n_starts += start <= r.time <= end
        elif r.event == "shift":
            shifts.setdefault(r.job, []).append(r.time)
            realign += start <= r.time <= end and starts.get(r.job, [r.time])[-1] < r.time

    def shifted(jid: str, t: float) -> bool:
        s0 = max((x for x in starts.get(jid, ()) if x <= t), default=None)
        return s0 is not None and any(s0 <= x <= t for x in shifts.get(jid, ()))

    total = shifted_adj = shifted_steady = shifted_min = busy = jobs_time = 0.0
    for t0, t1, run, _ in _clipped_intervals(trace, log, start, end):
        rates = links.adjustment_rates(run)
        busy += t1 - t0
        jobs_time += len(run) * (t1 - t0)
        for jid, (r, r_steady) in rates.items():
            total += r * (t1 - t0)
            if shifted(jid, t0):
                shifted_adj += r * (t1 - t0)
                shifted_steady += r_steady * (t1 - t0)
                shifted_min += (t1 - t0) / 60.0
    def per_min(x: float) -> float:
        return x / (busy / 60.0) if busy else 0.0

    return {"total": total, "per_minute": per_min(total),
            "per_job_minute": shifted_adj / shifted_min if shifted_min else math.nan,
            "per_job_minute_steady": shifted_steady / shifted_min if shifted_min else math.nan,
            "realign_total": float(realign), "realign_per_minute": per_min(realign),
            "realign_per_job_minute": realign / shifted_min if shifted_min else math.nan,
            "starts_per_minute": per_min(n_starts),
            "jobs_running_mean": jobs_time / busy if busy else 0.0}


def placement_bound(trace: Trace, log: EventLog, links: LinkSharing, start: float = -math.inf,
                  end: float = math.inf, only=None) -> dict[str, float]:
    """The per-iteration bound on a run's own placements: how far the run is from the best any
    time shift could reach *on these placements* (for Themis, the most a shift could gain on
    Themis's placements, formerly read as CASSINI's "ceiling", which it is not: CASSINI changes
    placements; for Th+CASSINI, how far its shifts are from holding), from its log: each interval's job iteration cannot be shorter than its ideal one, nor shorter than
    ``ideal * L`` with ``L`` the largest offered mean load over capacity of its links (a link
    cannot carry more than its capacity on average; equal stretching assumed). Over the run's
    own iterations in ``[start, end]`` (weights: iterations run at the logged factor):
    ``iteration_ms_mean``, ``bound_ms_mean``, ``ideal_ms_mean``; ``ceiling`` = run / bound and
    ``over_ideal`` = run / ideal. ``only`` (job ids) restricts the iterations measured (every
    running job still loads the links)."""
    cap = links.topology.capacity
    sw = sit = sb = sid = 0.0
    mean_bw: dict[str, float] = {}   # a catalogue model's mean bandwidth (the job's name does not enter)
    for t0, t1, run, factor in _clipped_intervals(trace, log, start, end):
        load: dict[str, float] = {}
        on = {}
        for jid, (job, gpus, _) in run.items():
            if job.model in PROFILES:
                on[jid] = links.links(gpus)
                bw = mean_bw.get(job.model)
                if bw is None:
                    bw = mean_bw[job.model] = profile_of(job.model, jid).mean_bandwidth
                for lk in on[jid]:
                    load[lk] = load.get(lk, 0.0) + bw
        for jid, lks in on.items():
            if only is not None and jid not in only:
                continue
            ideal = PROFILES[run[jid][0].model][1]
            f = factor.get(jid, 1.0)
            it = ideal / f
            w = (t1 - t0) * 1000.0 / it
            bound = ideal * max([1.0] + [load[lk] / cap[lk] for lk in lks])
            sw += w
            sit += w * it
            sb += w * min(bound, it)
            sid += w * ideal
    if not sw:
        return {"iteration_ms_mean": math.nan, "bound_ms_mean": math.nan, "ideal_ms_mean": math.nan,
                "ceiling": math.nan, "over_ideal": math.nan}
    return {"iteration_ms_mean": sit / sw, "bound_ms_mean": sb / sw, "ideal_ms_mean": sid / sw,
            "ceiling": sit / sb, "over_ideal": sit / sid}


#: the earlier name of :func:`placement_bound`
shift_ceiling = placement_bound
