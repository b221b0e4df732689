"""The independent recomputation of a run's link factors, for :func:`placement.sim.replay.replay_check`.

It shares no code with the engine's :class:`placement.sim.links.LinkSharing` beyond the log
walk (:func:`placement.sim.links.instants`) and the topology's routes: components of jobs
sharing links by its own union-find, iteration times by the time-stepped integration of
:mod:`placement.cassini.stepped`, large components' approximation from demand vectors.
"""

from __future__ import annotations

import numpy as np

from ..cassini.catalogue import CATALOGUE, profile_of
from ..cassini.stepped import stepped_mean_iteration_times
from .links import MAX_FLUID_JOBS, LinkSharing, instants
from .log import EventLog
from .trace import Trace

__all__ = ["link_factor_check"]


def link_factor_check(links: LinkSharing, tol: float = 0.02, dt: float = 0.5, limit_checks: int = 2000):
    """A replay check (``(trace, cluster, log) -> messages``) that recomputes every link factor.

    From the log alone: the running set (start rows open an attempt, preempt / finish close it),
    each job's phase (its start time by :func:`default_phase`, or the last ``shift`` row's
    ``phase=``), each job's logged factor (the last ``rate`` row's ``factor=``, 1 after a start).
    After every instant's rows, each component of jobs sharing links (its own union-find) is
    recomputed with :func:`placement.cassini.stepped.stepped_mean_iteration_times`; a factor off
    by more than ``tol`` (relative) is a ``link`` violation. The step is ``dt`` ms, smaller where the
    component's jobs have many phases (every rate change may be off by one step: the step keeps
    their sum under half a percent of the shortest iteration). Distinct components are checked
    up to ``limit_checks``. A factor off at that step is recomputed with a step ten times finer,
    over the window and over the window 0.1% of the shortest iteration shorter and longer (an
    iteration ending at the window's end may be counted on either side), before it is reported.
    """
    topo = links.topology

    def check(trace: Trace, cluster, log: EventLog) -> list[str]:
        jobs = {j.id: j for j in trace.jobs}
        first = np.cumsum([0] + [n for _, n in topo.servers])[:-1]   # first GPU id of each server
        routes: dict[tuple[int, ...], tuple[str, ...]] = {}
        done: dict[tuple, tuple[float, ...]] = {}
        out: list[str] = []
        for t, _, run, factor in instants(trace, log):
            on = {}   # this instant's catalogue jobs: (links, phase)
            for jid, (job, gpus, phase) in run.items():
                if job.model in CATALOGUE:
                    key = tuple(sorted({int(m) for m in np.searchsorted(first, gpus, side="right") - 1}))
                    if key not in routes:
                        routes[key] = topo.job_links(tuple(f"s{m}" for m in key))
                    on[jid] = (routes[key], phase)
            out += _check_instant(t, on, set(run), factor, jobs, topo, links.loss, links.window_iterations,
                                  links.warmup, tol, dt, done, limit_checks)
        return out

    return check


def _components(on: dict[str, tuple]) -> list[list[str]]:
    """Jobs grouped by shared links (``on``: job -> (links, phase)): a plain union-find."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    owner: dict[str, str] = {}
    for jid in sorted(on):
        for lk in on[jid][0]:
            find(jid)
            if lk in owner:
                parent[find(jid)] = find(owner[lk])
            else:
                owner[lk] = jid
    groups: dict[str, list[str]] = {}
    for jid in parent:
        groups.setdefault(find(jid), []).append(jid)
    return [sorted(g) for g in groups.values()]


def _check_instant(t, on, running, factor, jobs, topo, loss, window_iterations, warmup, tol, dt, done, limit):
    out = []
    comps = _components(on)
    in_comp = {j for c in comps if len(c) > 1 for j in c}
    for jid in sorted(running):
        if jid not in in_comp and not (abs(factor.get(jid, 1.0) - 1.0) <= 1e-9):
            out.append(f"link: job {jid} at {t!r} shares no link but runs at factor {factor.get(jid)!r}")
    for comp in comps:
        if len(comp) < 2:
            continue
        specs = [(jobs[jid].model, on[jid][0], on[jid][1] % CATALOGUE[jobs[jid].model][1]) for jid in comp]
        key = tuple((m, ls, round(p, 6)) for m, ls, p in specs)
        if key not in done and len(comp) > MAX_FLUID_JOBS:
            done[key] = _average_load_again(specs, topo.capacity, topo.shared_goodput)
        if key not in done:
            if len(done) >= limit:
                continue
            profs = [profile_of(m, jid) for (m, _, _), jid in zip(specs, comp, strict=True)]
            horizon = window_iterations * max(p.iteration_time for p in profs) + max(p for _, _, p in specs)
            # every rate change (a phase boundary of any job of the component) may be off by one
            # step: keep their sum under half a percent of the shortest iteration
            step = min(dt, 0.005 * min(p.iteration_time for p in profs) / sum(len(p.phases) for p in profs))
            jobs3 = [(p, ls, ph) for p, (_, ls, ph) in zip(profs, specs, strict=True)]

            def recompute(dt: float, end: float, jobs3=jobs3, profs=profs) -> tuple[float, ...]:
                means = stepped_mean_iteration_times(jobs3, topo.capacity, end, warmup, loss=loss, dt=dt,
                                                     shared_goodput=topo.shared_goodput)
                return tuple(min(1.0, p.iteration_time / m) for p, m in zip(profs, means, strict=True))

            def off(got: tuple[float, ...], comp=comp) -> bool:
                return any(not abs(factor.get(j, 1.0) - w) <= tol * w for j, w in zip(comp, got, strict=True))

            done[key] = recompute(step, horizon)
            if off(done[key]):
                # a step error can move a phase boundary and, on a contended component, the
                # window's later alignment: a mismatch is recomputed with a 10x finer step; and
                # an iteration ending within 0.1% of an iteration of the window's end may fall
                # on either side of it (measured: 0.06 ms on a 4-job component, where the two
                # integrations' boundaries differ by up to 0.07 ms after 12 iterations)
                fine, edge = step / 10, 0.001 * min(p.iteration_time for p in profs)
                for end in (horizon, horizon - edge, horizon + edge):
                    done[key] = recompute(fine, end)
                    if not off(done[key]):
                        break
        for jid, want in zip(comp, done[key], strict=True):
            got = factor.get(jid, 1.0)
            if not (abs(got - want) <= tol * want):
                out.append(f"link: job {jid} at {t!r} runs at factor {got!r}; the link model gives {want:.4f}")
    return out


def _average_load_again(specs, capacity, goodput: float = 1.0) -> tuple[float, ...]:
    """The average-load approximation recomputed from the catalogue's shapes, demand vectors
    summed per link (the check's own arithmetic); a link of several jobs offers ``goodput`` of
    its capacity."""
    dem, users = {}, {}
    for m, ls, _ in specs:
        p = profile_of(m, "x")
        for lk in ls:
            dem[lk] = dem.get(lk, 0.0) + float(np.mean(p.demand))
            users[lk] = users.get(lk, 0) + 1
    capacity = {lk: capacity[lk] * (goodput if users[lk] >= 2 else 1.0) for lk in dem}
    out = []
    for m, ls, _ in specs:
        p = profile_of(m, "x")
        busy = float(np.count_nonzero(p.demand > 0)) / len(p.demand)
        worst = max([dem[lk] / capacity[lk] for lk in ls] + [1.0])
        out.append(1.0 / (1.0 - busy + busy * worst))
    return tuple(out)
