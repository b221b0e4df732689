"""Measures of a run on links shared over time, from its log alone: iteration times (CASSINI
§5's metric, over iterations) and link utilisation over time (:mod:`placement.sim.links`)."""

from __future__ import annotations

import math

import numpy as np

from ..cassini.catalogue import CATALOGUE
from .links import LinkSharing, instants
from .log import EventLog, extra_value
from .trace import Trace

__all__ = ["iteration_time_samples", "iteration_summary", "weighted_quantile", "running_intervals",
           "link_utilisation_series"]


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
        if t > since and model in CATALOGUE:
            it = CATALOGUE[model][1] / f
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
    ideal = np.array([CATALOGUE[jobs[s[0]].model][1] for s in samples], dtype=float)
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
