"""Links shared over time in the simulator (CASSINI §2, §4): each running job's progress factor.

When the cluster has a ``network`` section (:mod:`.network`), the engine multiplies a running
job's rate (its :mod:`.perf` rate at the placement's tier) by a *link factor*
``ideal iteration / iteration on shared links`` (at most 1), recomputed whenever the set of
running jobs or a job's phase changes. Semantics (our construction):

profile
    A job communicates only if its trace ``model`` is one of the 13 synthetic profiles of
    :mod:`placement.cassini.catalogue`; any other job is compute-only (factor 1, counted in
    ``stats["no_profile"]``). A job's servers are the machines of its GPUs (server ``s{i}`` is
    machine ``i``); its ring all-reduce crosses :meth:`~placement.cassini.topology.Topology.job_links`.
phase
    Where in its iteration a job is, as the time (ms, modulo its iteration time) at which its
    iterations begin on the simulator's clock. By default a job's iterations begin when its
    attempt starts (``phase = start * 1000 mod iteration``): network-agnostic schedulers leave
    phases wherever start times put them. A policy's :class:`~placement.sim.policy.Shift`
    decision sets the phase (a CASSINI time shift, §4.1); the delay of at most one iteration
    that the agent takes to apply it is not charged.
sharing
    Jobs that cross a common link form a component (connected through shared links); a job
    alone on its links has factor 1. A component's iteration times come from the event-driven
    fluid model (:func:`placement.sim.network.iteration_times`: max-min sharing per link, a
    stretched phase delays later iterations) run from the jobs' phases for ``window_iterations``
    of the slowest iteration, skipping ``warmup`` iterations. That is the job's steady state:
    the engine does not follow phases drifting within one interval (the testbed simulation of
    :mod:`solvers.cassini_testbed` counts CASSINI's drift adjustments), and a factor holds until
    the next change of the running set or of a phase. Components are cached by their content.
large components
    A component of more than :data:`MAX_FLUID_JOBS` jobs is not run in the fluid model (its
    cost grows with the jobs and would be paid at every event of a large cluster); it gets the
    *average-load approximation* instead: with ``c`` the job's communicating fraction of an
    iteration and ``L`` the largest ratio of offered mean load to capacity over its links, its
    iteration becomes ``(1 - c) + c * max(1, L)`` times the ideal one (communication slowed by
    the links' average overload; an approximation of ours, counted in
    ``stats["approximated"]``).
``loss``
    The fluid model's labelled congestion-loss factor (default 0, off).

:func:`link_factor_check` is the independent recomputation for
:func:`placement.sim.replay.replay_check`: it rebuilds running sets and phases from the log
alone and recomputes every logged factor with the time-stepped integration of
:mod:`placement.cassini.stepped`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import networkx as nx
import numpy as np

from ..cassini.catalogue import CATALOGUE, profile_of
from ..cassini.stepped import stepped_mean_iteration_times
from .log import EventLog, extra_value
from .network import shared_links
from .trace import Job, Trace

__all__ = ["LinkSharing", "MAX_FLUID_JOBS", "average_load", "default_phase", "link_factor_check", "iteration_time_samples", "iteration_summary",
           "weighted_quantile", "running_intervals", "link_utilisation_series"]

WINDOW_ITERATIONS = 16
WARMUP = 3
CACHE_LIMIT = 100_000
# Components of more jobs than this use the average-load approximation (module docstring): a
# fluid run of 64 jobs takes ~1.7 s and would be repeated at every event of a large cluster.
MAX_FLUID_JOBS = 32


def default_phase(job: Job, start: float) -> float:
    """The phase (ms) of a job whose iterations begin when its attempt starts at ``start`` (s)."""
    period = CATALOGUE[job.model][1] if job.model in CATALOGUE else 1
    return float((start * 1000.0) % period)


class LinkSharing:
    """Link factors of running jobs on ``cluster``'s network (module docstring)."""

    def __init__(self, cluster, *, loss: float = 0.0, window_iterations: int = WINDOW_ITERATIONS,
                 warmup: int = WARMUP):
        topo = cluster.topology()
        if topo is None:
            raise ValueError("network: the cluster has no network section")
        if not 0.0 <= loss < 1.0:
            raise ValueError(f"loss: must be in [0, 1), got {loss}")
        self.topology, self.loss = topo, float(loss)
        self.window_iterations, self.warmup = int(window_iterations), int(warmup)
        self._machine = cluster.machine
        self._links: dict[tuple[int, ...], tuple[str, ...]] = {}
        self._cache: dict[tuple, tuple[float, ...]] = {}
        self.stats = {"components": 0, "fluid_runs": 0, "cache_hits": 0, "no_profile": 0, "approximated": 0}
        self._seen_no_profile: set[str] = set()

    def servers(self, gpus) -> tuple[str, ...]:
        """The servers (machines) of a placement, in machine order."""
        return tuple(f"s{m}" for m in sorted({int(x) for x in self._machine[np.asarray(gpus, dtype=np.int64)]}))

    def links(self, gpus) -> tuple[str, ...]:
        servers = self.servers(gpus)
        key = tuple(int(s[1:]) for s in servers)
        if key not in self._links:
            self._links[key] = self.topology.job_links(servers)
        return self._links[key]

    def factors(self, running: Mapping[str, tuple[Job, tuple[int, ...], float]]) -> dict[str, float]:
        """``running`` maps a job id to ``(job, gpus, phase_ms)``; returns each job's factor."""
        return self._solve(running)[0]

    def utilisation(self, running: Mapping[str, tuple[Job, tuple[int, ...], float]]) -> dict[str, float]:
        """Each link's utilisation (carried over capacity) with ``running`` as in :meth:`factors`:
        a component's from its fluid run, a job alone's its profile's mean bandwidth."""
        return self._solve(running)[1]

    def _solve(self, running) -> tuple[dict[str, float], dict[str, float]]:
        out = {jid: 1.0 for jid in running}
        util: dict[str, float] = {}
        g = nx.Graph()
        for jid, (job, gpus, _) in running.items():
            if job.model not in CATALOGUE:
                if jid not in self._seen_no_profile:
                    self._seen_no_profile.add(jid)
                    self.stats["no_profile"] += 1
                continue
            links = self.links(gpus)
            if links:
                g.add_edges_from((("job", jid), ("link", lk)) for lk in links)
        cap = self.topology.capacity
        for comp in nx.connected_components(g):
            members = sorted(n[1] for n in comp if n[0] == "job")
            if len(members) < 2:
                job, gpus, _ = running[members[0]]
                bw = profile_of(job.model, members[0]).mean_bandwidth
                util.update({lk: bw / cap[lk] for lk in self.links(gpus)})
                continue
            self.stats["components"] += 1
            factors, u = self._component(members, running)
            out.update(zip(members, factors, strict=True))
            util.update(u)
        return out, util

    def _component(self, members: list[str], running) -> tuple[tuple[float, ...], dict[str, float]]:
        specs = []
        for jid in members:
            job, gpus, phase = running[jid]
            period = CATALOGUE[job.model][1]
            specs.append((job.model, self.links(gpus), round(float(phase) % period, 6), jid, gpus))
        key = tuple(s[:3] for s in specs)
        hit = self._cache.get(key)
        if hit is not None:
            self.stats["cache_hits"] += 1
            return hit
        if len(members) > MAX_FLUID_JOBS:
            self.stats["approximated"] += 1
            factors, util = average_load([(model, links) for model, links, _, _, _ in specs], self.topology.capacity)
            res = (tuple(factors), util)
            self._cache[key] = res
            return res
        self.stats["fluid_runs"] += 1
        jobs = {jid: (profile_of(model, jid), self.servers(gpus), ph) for model, _, ph, jid, gpus in specs}
        times, util = shared_links(self.topology, jobs, window_iterations=self.window_iterations,
                                   warmup=self.warmup, loss=self.loss)
        res = (tuple(min(1.0, CATALOGUE[m][1] / times[jid]) for m, _, _, jid, _ in specs), util)
        if len(self._cache) >= CACHE_LIMIT:
            self._cache.clear()
        self._cache[key] = res
        return res


def average_load(jobs: list[tuple[str, tuple[str, ...]]], capacity: Mapping[str, float]):
    """The average-load approximation of a large component (module docstring): ``jobs`` are
    ``(catalogue model, link ids)``; returns (factor per job, utilisation per link)."""
    profs = [profile_of(m, f"j{i}") for i, (m, _) in enumerate(jobs)]
    offered: dict[str, float] = {}
    for p, (_, links) in zip(profs, jobs, strict=True):
        for lk in links:
            offered[lk] = offered.get(lk, 0.0) + p.mean_bandwidth
    factors = []
    for p, (_, links) in zip(profs, jobs, strict=True):
        c = sum(d for d, b in p.phases if b > 0) / p.iteration_time
        over = max((offered[lk] / capacity[lk] for lk in links), default=0.0)
        factors.append(1.0 / ((1.0 - c) + c * max(1.0, over)))
    return factors, {lk: min(1.0, v / capacity[lk]) for lk, v in offered.items()}


def _instants(trace: Trace, log: EventLog):
    """After each instant of the log: ``(t, next instant or None, running, factors)``, rebuilt
    from the log alone: ``running`` maps a job id to ``(job, gpus, phase)`` (phase by
    :func:`default_phase`, or the last ``shift`` row's), ``factors`` to its last ``rate`` row's
    ``factor`` (1 after a start; NaN when unreadable)."""
    jobs = {j.id: j for j in trace.jobs}
    run: dict[str, tuple] = {}
    factor: dict[str, float] = {}
    rows = list(log)
    i = 0
    while i < len(rows):
        t = rows[i].time
        while i < len(rows) and rows[i].time == t:
            r = rows[i]
            i += 1
            if r.job not in jobs:
                continue
            if r.event == "start":
                run[r.job] = (jobs[r.job], tuple(r.gpus), default_phase(jobs[r.job], t))
                factor[r.job] = 1.0
            elif r.event in ("preempt", "finish"):
                run.pop(r.job, None)
                factor.pop(r.job, None)
            elif r.event == "shift" and r.job in run:
                ph = extra_value(r.extra, "phase")
                run[r.job] = run[r.job][:2] + (math.nan if ph is None else ph,)
            elif r.event == "rate" and r.job in run:
                f = extra_value(r.extra, "factor")
                factor[r.job] = math.nan if f is None else f
        yield t, (rows[i].time if i < len(rows) else None), run, factor


def link_factor_check(links: LinkSharing, tol: float = 0.02, dt: float = 0.5, limit_checks: int = 2000):
    """A replay check (``(trace, cluster, log) -> messages``) that recomputes every link factor.

    From the log alone: the running set (start rows open an attempt, preempt / finish close it),
    each job's phase (its start time by :func:`default_phase`, or the last ``shift`` row's
    ``phase=``), each job's logged factor (the last ``rate`` row's ``factor=``, 1 after a start).
    After every instant's rows, each component of jobs sharing links (its own union-find) is
    recomputed with :func:`placement.cassini.stepped.stepped_mean_iteration_times`; a factor off
    by more than ``tol`` (relative) is a ``link`` violation. The step is ``dt`` ms, smaller where a
    profile has many short phases (each phase boundary may be off by one step: the step keeps
    that under 1% of an iteration). Distinct components are checked up to ``limit_checks`` (each
    a few hundred ms at ``dt`` = 0.5 ms).
    """
    topo = links.topology

    def check(trace: Trace, cluster, log: EventLog) -> list[str]:
        jobs = {j.id: j for j in trace.jobs}
        done: dict[tuple, tuple[float, ...]] = {}
        out: list[str] = []
        for t, _, run, factor in _instants(trace, log):
            out += _check_instant(t, {k: v[1:] for k, v in run.items()}, factor, jobs, topo, links.loss,
                                  links.window_iterations, links.warmup, tol, dt, done, limit_checks)
        return out

    return check


def _components(run, jobs, topo) -> list[list[str]]:
    """Jobs (with a profile and links) grouped by shared links: a plain union-find."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    owner: dict[str, str] = {}
    for jid in sorted(run):
        if jobs[jid].model not in CATALOGUE:
            continue
        servers = tuple(f"s{m}" for m in sorted({int(m) for m in topo_machines(run[jid][0], topo)}))
        for lk in topo.job_links(servers):
            find(jid)
            if lk in owner:
                parent[find(jid)] = find(owner[lk])
            else:
                owner[lk] = jid
    groups: dict[str, list[str]] = {}
    for jid in parent:
        groups.setdefault(find(jid), []).append(jid)
    return [sorted(g) for g in groups.values()]


def topo_machines(gpus, topo) -> list[int]:
    """Machine index of each GPU, from the topology's servers (``s{i}`` has its GPUs in order)."""
    first, out = [], []
    acc = 0
    for _s, n in topo.servers:
        first.append(acc)
        acc += n
    for x in gpus:
        out.append(int(np.searchsorted(first, int(x), side="right") - 1))
    return out


def _check_instant(t, run, factor, jobs, topo, loss, window_iterations, warmup, tol, dt, done, limit):
    out = []
    comps = _components(run, jobs, topo)
    in_comp = {j for c in comps if len(c) > 1 for j in c}
    for jid in run:
        if jid not in in_comp and not (abs(factor.get(jid, 1.0) - 1.0) <= 1e-9):
            out.append(f"link: job {jid} at {t!r} shares no link but runs at factor {factor.get(jid)!r}")
    for comp in comps:
        if len(comp) < 2:
            continue
        specs = []
        for jid in comp:
            gpus, phase = run[jid]
            servers = tuple(f"s{m}" for m in sorted(set(topo_machines(gpus, topo))))
            specs.append((jobs[jid].model, topo.job_links(servers), phase % CATALOGUE[jobs[jid].model][1]))
        key = tuple((m, ls, round(p, 6)) for m, ls, p in specs)
        if key not in done and len(comp) > MAX_FLUID_JOBS:
            done[key] = _average_load_again(specs, topo.capacity)
        if key not in done:
            if len(done) >= limit:
                continue
            profs = [profile_of(m, jid) for (m, _, _), jid in zip(specs, comp, strict=True)]
            horizon = window_iterations * max(p.iteration_time for p in profs) + max(p for _, _, p in specs)
            # every rate change (a phase boundary of any job of the component) may be off by one
            # step: keep their sum under half a percent of the shortest iteration
            step = min(dt, 0.005 * min(p.iteration_time for p in profs) / sum(len(p.phases) for p in profs))
            means = stepped_mean_iteration_times([(p, ls, ph) for p, (_, ls, ph) in zip(profs, specs, strict=True)],
                                                 topo.capacity, horizon, warmup, loss=loss, dt=step)
            done[key] = tuple(min(1.0, p.iteration_time / m) for p, m in zip(profs, means, strict=True))
        for jid, want in zip(comp, done[key], strict=True):
            got = factor.get(jid, 1.0)
            if not (abs(got - want) <= tol * want):
                out.append(f"link: job {jid} at {t!r} runs at factor {got!r}; the link model gives {want:.4f}")
    return out


def _average_load_again(specs, capacity) -> tuple[float, ...]:
    """The average-load approximation recomputed from the catalogue's shapes, demand vectors
    summed per link (the check's own arithmetic)."""
    dem = {}
    for m, ls, _ in specs:
        p = profile_of(m, "x")
        for lk in ls:
            dem[lk] = dem.get(lk, 0.0) + float(np.mean(p.demand))
    out = []
    for m, ls, _ in specs:
        p = profile_of(m, "x")
        busy = float(np.count_nonzero(p.demand > 0)) / len(p.demand)
        worst = max([dem[lk] / capacity[lk] for lk in ls] + [1.0])
        out.append(1.0 / (1.0 - busy + busy * worst))
    return tuple(out)


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
    """Iteration time (ms) over all iterations of catalogue jobs: mean and p99, and the mean
    slowdown against each job's ideal iteration (None without such jobs)."""
    samples = iteration_time_samples(trace, log)
    if not samples:
        return {"iteration_ms_mean": None, "iteration_ms_p99": None, "iteration_slowdown_mean": None}
    jobs = {j.id: j for j in trace.jobs}
    it = np.array([s[1] for s in samples])
    w = np.array([s[2] for s in samples])
    ideal = np.array([CATALOGUE[jobs[s[0]].model][1] for s in samples], dtype=float)
    return {"iteration_ms_mean": float(np.average(it, weights=w)),
            "iteration_ms_p99": weighted_quantile(it, w, 0.99),
            "iteration_slowdown_mean": float(np.average(it / ideal, weights=w))}


def running_intervals(trace: Trace, log: EventLog):
    """``(t0, t1, {job: (job, gpus, phase)})`` for each interval between log instants with jobs
    running, from the log alone (phases by :func:`default_phase` and ``shift`` rows)."""
    return [(t, nxt, dict(run)) for t, nxt, run, _ in _instants(trace, log) if nxt is not None and run]


def link_utilisation_series(trace: Trace, log: EventLog, links: LinkSharing) -> list[tuple[float, float, dict]]:
    """``(t0, t1, {link: utilisation})`` over the run: each interval's links as
    :meth:`LinkSharing.utilisation` gives them (links carrying nothing are left out)."""
    return [(t0, t1, links.utilisation(run)) for t0, t1, run in running_intervals(trace, log)]
