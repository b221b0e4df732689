"""Links shared over time in the simulator (CASSINI §2, §4): each running job's progress factor.

When the cluster has a ``network`` section (:mod:`.network`), the engine multiplies a running
job's rate (its :mod:`.perf` rate at the placement's tier) by a *link factor*
``ideal iteration / iteration on shared links`` (at most 1), recomputed whenever the set of
running jobs or a job's phase changes. Semantics (our construction):

profile
    A job communicates only if its trace ``model`` names a synthetic profile of
    :mod:`placement.cassini.catalogue` (:data:`~placement.cassini.catalogue.PROFILES`); any other job is compute-only (factor 1, counted in
    ``stats["no_profile"]``). A job's servers are the machines of its GPUs (server ``s{i}`` is
    machine ``i``); its ring all-reduce crosses :meth:`~placement.cassini.topology.Topology.job_links`.
phase
    Where in its iteration a job is, as the time (ms, modulo its iteration time) at which its
    iterations begin on the simulator's clock. By default a job's iterations begin when its
    attempt starts (``phase = start * 1000 mod iteration``): network-agnostic schedulers leave
    phases wherever start times put them. A policy's :class:`~placement.sim.policy.Shift`
    decision sets the phase (a CASSINI time shift, §4.1); the delay of at most one iteration
    that the agent takes to apply it is not charged. Network-agnostic policies may place the
    jobs they start at :func:`spread_phase` (Themis's and Random's ``phase_spread`` option,
    :func:`phase_shifts`), recorded as ``shift`` rows.
sharing
    Jobs that cross a common link form a component (connected through shared links); a job
    alone on its links has factor 1. A component's iteration times come from the event-driven
    fluid model (:func:`placement.sim.network.iteration_times`: max-min sharing per link, a
    stretched phase delays later iterations) run from the jobs' phases for ``window_iterations``
    of the slowest iteration (plus the largest phase; phases to 1e-6 ms), skipping ``warmup``
    iterations: the factor is ideal iteration over the mean of the remaining complete
    iterations. :mod:`.link_check` recomputes exactly this window with its own event loop,
    to 1e-6 relative (a fixed-step integration cannot: on contended components the trajectory
    is ill-conditioned, see its docstring). The engine takes it as the job's steady state (on
    a contended component the mean can still move by a few percent at 32 or 64 iterations):
    the engine does not follow phases drifting within one interval (it counts the re-alignments
    they would trigger, below), and a factor holds until
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
goodput factor
    The network section's ``goodput`` (:mod:`.network`; the topology's ``shared_goodput``):
    while a link carries more than one flow and their demand exceeds its capacity it delivers
    that share of its capacity (overlaps that fit run free, as the compatibility score reads them)
    (:mod:`placement.cassini.fluid`; 0.88 reproduces CASSINI §2.2's 22 + 22 of 50 Gbps). 1 (the
    default) is plain max-min sharing.
agent (CASSINI §4.2 step 3; ``agent=True`` or ``"all"``, off by default)
    The jobs of a fluid-run component keep their phases as planned time shifts: when an
    iteration boundary drifts more than 5% of its ideal iteration off that plan, the job waits
    for the next planned start (:mod:`placement.cassini.fluid`, "agent"); the wait is part of
    its iteration time. The plan's period is the rhythm the set runs at without the agent (its
    mean iteration over the same window, as Table 2's snapshots plan: a partially compatible set
    stretched by its overlap is on plan, only drift against it triggers). ``agent=True`` is the paper's premise: the agent keeps the shifts of
    sets CASSINI found compatible (§4.2 step 3 re-aligns to shifts computed for a compatible
    set; Fig. 17 measures snapshots scoring 1.0 / 1.0 / 0.9), so it acts only on a component
    whose **set score** (:func:`set_score`: Table 1's compatibility score at the jobs' phases,
    the mean over the component's shared links, as the placement ranks candidates) is at least
    ``agent_min_score`` (default :data:`AGENT_MIN_SCORE` = 0.99: score 1 within less than one
    5-degree slot of overlap between two 45 Gbps Up phases on a 50 Gbps link, 40 x 2.29 /
    (165 x 50) = 0.011, so a set whose Algorithm 1 shifts interleave fully is kept and a set
    with any real contention is not); below it the component runs without the agent.
    ``agent="all"`` puts the agent on every fluid-run component whatever its score (the second
    view: most shared links then carry sets no shift makes compatible, and the agent's waits
    stretch them). Meant for runs of a CASSINI policy (every job sharing links holds a shift);
    the adjustment rates below are then the agent's own count over the window (0 on a
    component it does not act on); ``stats["agent_on"]`` / ``stats["agent_off"]`` count the
    distinct components it acted on / left. The link check recomputes the rule, score gate
    included (:mod:`.link_check`). The engine builds ``LinkSharing(cluster)`` (agent off)
    unless given one.
time-shift adjustments (CASSINI §4.2 step 3, §5.7)
    A component's fluid run also counts, per job, how often an agent would re-align it: an
    adjustment each time an iteration boundary deviates by more than 5% of the ideal iteration
    from where the last adjustment put it (the paper's trigger), over the iterations after the
    warm-up, in two readings of "where it should be": on the ideal iteration's grid, and on the
    job's own mean iteration in the window (phase drift only); :meth:`LinkSharing.adjustment_rates` gives them per second of run time and
    :func:`placement.sim.link_metrics.shift_adjustments` sums them over a log. A job alone on
    its links never drifts (0). The large-component approximation counts none.

The independent recomputation of every logged factor is :mod:`placement.sim.link_check`;
iteration-time and link-utilisation measures from a log are :mod:`placement.sim.link_metrics`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import networkx as nx
import numpy as np

from ..cassini.catalogue import PROFILES, profile_of
from .log import EventLog, extra_value
from .network import fluid_window, mean_iterations
from .trace import Job, Trace

__all__ = ["LinkSharing", "MAX_FLUID_JOBS", "average_load", "default_phase", "spread_phase", "phase_shifts",
           "instants", "drift_adjustments", "agent_window", "set_score", "AGENT_MIN_SCORE"]

WINDOW_ITERATIONS = 16
WARMUP = 3
CACHE_LIMIT = 100_000
# Components of more jobs than this use the average-load approximation (module docstring): a
# fluid run of 64 jobs takes ~1.7 s and would be repeated at every event of a large cluster.
MAX_FLUID_JOBS = 32
#: the agent's gate (module docstring, "agent"): Table 1's score 1 within less than one 5-degree
#: slot of overlap between two 45 Gbps Up phases on a 50 Gbps link (0.011)
AGENT_MIN_SCORE = 0.99
#: components solved by any :class:`LinkSharing` of this process, per signature (its capacities,
#: goodput and rule, :meth:`LinkSharing._signature`): a component's result is a function of its
#: cache key and the signature alone, so a model that meets a component another one solved (a
#: measure's fresh model on a run's log, a run repeated under another name) takes it, with the same
#: statistics as solving it; cleared when it holds :data:`SHARED_LIMIT` components
_SHARED: dict[tuple, dict[tuple, tuple]] = {}
SHARED_LIMIT = 50_000


def default_phase(job: Job, start: float) -> float:
    """The phase (ms) of a job whose iterations begin when its attempt starts at ``start`` (s)."""
    period = PROFILES[job.model][1] if job.model in PROFILES else 1
    return float((start * 1000.0) % period)


def spread_phase(job: Job, start: float, spread: float) -> float:
    """The phase (ms) a network-agnostic job's iterations settle at when its attempt starts at
    ``start`` (s), under the *phase spread* ``spread`` in [0, 1]: ``spread`` times
    :func:`default_phase`. ``1`` leaves phases where start times put them (uniform over the
    iteration: partial interleaving for free); ``0`` puts every job in phase with every other,
    as CASSINI §2.2's Fig. 2(b) shows two jobs sharing a link staying overlapped; between, phases
    spread over that fraction of the iteration. The spread is the link model's phase dynamics of
    contending jobs, fitted to a baseline number (the reproduction's "phase spread" knob)."""
    if not 0.0 <= float(spread) <= 1.0:
        raise ValueError(f"phase spread: must be in [0, 1], got {spread}")
    return float(default_phase(job, start) * float(spread))


def phase_shifts(view, decisions, spread: float) -> list:
    """:class:`~placement.sim.policy.Shift` decisions placing every job started by ``decisions``
    (a policy's output, this call) at :func:`spread_phase` (none when ``spread`` is 1, the
    engine's default, or the cluster has no network, or the job has no profile): how a
    network-agnostic policy's jobs settle on shared links, recorded in the log so the link check
    rebuilds it."""
    from .policy import Shift, Start

    if float(spread) >= 1.0 or getattr(view, "links", None) is None:
        return []
    out = []
    for d in decisions:
        if isinstance(d, Start):
            job = view.job(d.job_id)
            if job.model in PROFILES:
                out.append(Shift(d.job_id, spread_phase(job, view.now, spread)))
    return out


class LinkSharing:
    """Link factors of running jobs on ``cluster``'s network (module docstring)."""

    def __init__(self, cluster, *, loss: float = 0.0, window_iterations: int = WINDOW_ITERATIONS,
                 warmup: int = WARMUP, agent: bool | str = False, agent_min_score: float = AGENT_MIN_SCORE):
        topo = cluster.topology()
        if topo is None:
            raise ValueError("network: the cluster has no network section")
        if not 0.0 <= loss < 1.0:
            raise ValueError(f"loss: must be in [0, 1), got {loss}")
        if agent not in (False, True, "all"):
            raise ValueError(f"agent: must be False, True or 'all', got {agent!r}")
        if not 0.0 <= float(agent_min_score) <= 1.0:
            raise ValueError(f"agent_min_score: must be in [0, 1], got {agent_min_score}")
        self.topology, self.loss, self.agent = topo, float(loss), bool(agent)
        #: the agent's score gate: None when it acts on every component (``agent="all"``) or is off
        self.agent_min_score = float(agent_min_score) if agent is True else None
        self.window_iterations, self.warmup = int(window_iterations), int(warmup)
        self._machine = cluster.machine
        self._links: dict[tuple[int, ...], tuple[str, ...]] = {}
        self._cache: dict[tuple, tuple[float, ...]] = {}
        self._sig: tuple | None = None
        self.stats = {"components": 0, "fluid_runs": 0, "cache_hits": 0, "no_profile": 0, "approximated": 0,
                      "agent_on": 0, "agent_off": 0}
        self._seen_no_profile: set[str] = set()
        #: when a dict (a caller sets it): every fluid-run component solved with the agent rule,
        #: from the cache or not, maps to whether the agent acted on it, so a measure counts the
        #: distinct components it touched as a fresh model's ``stats`` would
        self.seen: dict[tuple, bool] | None = None

    @property
    def n_gpus(self) -> int:
        """The cluster's GPU count."""
        return len(self._machine)

    def servers(self, gpus) -> tuple[str, ...]:
        """The servers (machines) of a placement, in machine order."""
        return tuple(f"s{m}" for m in sorted({int(x) for x in self._machine[np.asarray(gpus, dtype=np.int64)]}))

    def links(self, gpus) -> tuple[str, ...]:
        servers = self.servers(gpus)
        key = tuple(int(s[1:]) for s in servers)
        if key not in self._links:
            if len(self._links) >= CACHE_LIMIT:
                self._links.clear()
            self._links[key] = self.topology.job_links(servers)
        return self._links[key]

    def factors(self, running: Mapping[str, tuple[Job, tuple[int, ...], float]]) -> dict[str, float]:
        """``running`` maps a job id to ``(job, gpus, phase_ms)``; returns each job's factor."""
        return self._solve(running)[0]

    def utilisation(self, running: Mapping[str, tuple[Job, tuple[int, ...], float]]) -> dict[str, float]:
        """Each link's utilisation (carried over capacity) with ``running`` as in :meth:`factors`:
        a component's from its fluid run, a job alone's its profile's mean bandwidth."""
        return self._solve(running)[1]

    def adjustment_rates(self, running: Mapping[str, tuple[Job, tuple[int, ...], float]]
                         ) -> dict[str, tuple[float, float]]:
        """Time-shift adjustments per second of each job in a component of ``running`` (module
        docstring), on the ideal grid and on the job's own mean iteration
        (:func:`drift_adjustments`); jobs alone on their links are left out (0)."""
        return self._solve(running)[2]

    def marks(self, running: Mapping[str, tuple[Job, tuple[int, ...], float]]) -> dict[str, float]:
        """The marked-packet proxy of each job in a fluid-run component of ``running``: Gbit sent
        per iteration while a link it crosses is offered more than its capacity (a queue builds:
        CASSINI §5.3's ECN marks), over the component's window; jobs alone on their links are
        left out (0), an approximated component's jobs are NaN."""
        return self._solve(running)[3]

    def _solve(self, running) -> tuple[dict[str, float], dict[str, float], dict[str, tuple], dict[str, float]]:
        out = {jid: 1.0 for jid in running}
        util: dict[str, float] = {}
        adjust: dict[str, float] = {}
        marks: dict[str, float] = {}
        g = nx.Graph()
        for jid, (job, gpus, _) in running.items():
            if job.model not in PROFILES:
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
            factors, u, adj, _, mk = self._component(members, running)
            out.update(zip(members, factors, strict=True))
            adjust.update(zip(members, adj, strict=True))
            marks.update(zip(members, mk, strict=True))
            util.update(u)
        return out, util, adjust, marks

    def _component(self, members: list[str], running) -> tuple[tuple[float, ...], dict[str, float], tuple,
                                                             bool | None, tuple[float, ...]]:
        """A component's (factors, link utilisation, adjustment rates, agent acted: None when
        the agent is off or the component approximated, marked-packet proxy per job), cached by
        its content."""
        specs = []
        for jid in members:
            job, gpus, phase = running[jid]
            period = PROFILES[job.model][1]
            specs.append((job.model, self.links(gpus), round(float(phase) % period, 6), jid, gpus))
        key = tuple(s[:3] for s in specs)
        res = self._cache.get(key)
        if res is not None:
            self.stats["cache_hits"] += 1
            if self.seen is not None and res[3] is not None:
                self.seen[key] = res[3]
            return res
        shared = _SHARED.setdefault(self._signature(), {})
        res = shared.get(key)
        if res is not None:   # solved by another model of the same rule: counted as solved here
            if len(members) > MAX_FLUID_JOBS:
                self.stats["approximated"] += 1
            else:
                self.stats["fluid_runs"] += 1
                if self.agent:
                    self.stats["agent_on" if res[3] else "agent_off"] += 1
                    if self.seen is not None:
                        self.seen[key] = res[3]
            if len(self._cache) >= CACHE_LIMIT:
                self._cache.clear()
            self._cache[key] = res
            return res
        if len(members) > MAX_FLUID_JOBS:
            self.stats["approximated"] += 1
            factors, util = average_load([(model, links) for model, links, _, _, _ in specs], self.topology.capacity,
                                         self.topology.shared_goodput)
            res = (tuple(factors), util, ((0.0, 0.0),) * len(specs), None, (math.nan,) * len(specs))
        else:
            self.stats["fluid_runs"] += 1
            jobs = {jid: (profile_of(model, jid), self.servers(gpus), ph) for model, _, ph, jid, gpus in specs}
            on = self.agent and (self.agent_min_score is None or set_score(
                [(jobs[jid][0], links, ph) for _, links, ph, jid, _ in specs],
                self.topology.capacity) >= self.agent_min_score)
            if self.agent:
                self.stats["agent_on" if on else "agent_off"] += 1
            names, r = fluid_window(self.topology, jobs, window_iterations=self.window_iterations, loss=self.loss)
            times = mean_iterations(names, r, jobs, self.warmup)
            if on:     # the agent plans on the rhythm the set runs without it (its stretched rhythm)
                names, r = agent_window(self.topology, jobs, self.window_iterations, self.loss, plans=times)
                times = mean_iterations(names, r, jobs, self.warmup)
            if on:     # the agent's own adjustments per second of the window
                adj = {n: (a / r.horizon * 1000.0,) * 2 for n, a in zip(names, r.adjustments, strict=True)}
            elif self.agent:   # a component the agent leaves alone: it makes no adjustment
                adj = {n: (0.0, 0.0) for n in names}
            else:
                adj = {n: (drift_adjustments(b, e, jobs[n][0].iteration_time, self.warmup),
                           drift_adjustments(b, e, jobs[n][0].iteration_time, self.warmup, grid=times[n]))
                       for n, b, e in zip(names, r.begin, r.ends, strict=True)}
            marked = {nm: v / max(1, len(e)) for nm, v, e in zip(names, r.marked, r.ends, strict=True)}
            res = (tuple(min(1.0, PROFILES[m][1] / times[jid]) for m, _, _, jid, _ in specs),
                   r.link_utilisation(self.topology.capacity), tuple(adj[jid] for _, _, _, jid, _ in specs),
                   bool(on) if self.agent else None, tuple(marked[jid] for _, _, _, jid, _ in specs))
            if self.seen is not None and self.agent:
                self.seen[key] = bool(on)
        if len(self._cache) >= CACHE_LIMIT:
            self._cache.clear()
        self._cache[key] = res
        if sum(len(c) for c in _SHARED.values()) >= SHARED_LIMIT:
            _SHARED.clear()
            shared = _SHARED.setdefault(self._signature(), {})
        shared[key] = res
        return res

    def _signature(self) -> tuple:
        """What a component's result depends on besides its cache key: the links' capacities, the
        transport's goodput, the rule (loss, window, warm-up, agent and its gate) and the catalogue
        the key's model names refer to."""
        if self._sig is None:
            self._sig = (tuple(sorted((k, float(v)) for k, v in self.topology.capacity.items())),
                         float(self.topology.shared_goodput), self.loss, self.window_iterations, self.warmup,
                         self.agent, self.agent_min_score, repr(sorted(PROFILES.items())))
        return self._sig


def set_score(jobs, capacity: Mapping[str, float]) -> float:
    """Table 1's compatibility score of a set of jobs at their phases (the agent's gate, module
    docstring): ``jobs`` are ``(profile, link ids, phase_ms)``; on each link two or more of them
    cross, ``1 - (excess of their summed demand over the link's capacity, integrated over the
    perimeter) / (perimeter x capacity)`` with job j's demand at time ``x`` its profile's at
    ``(x - phase_j) mod iteration_j`` (:func:`placement.cassini.evaluation.link_score`, in continuous
    time: the phases need not be whole ms); the mean over those links, as the placement's
    candidate score (:class:`placement.cassini.evaluation.CassiniEvaluation`); 1 with no shared link."""
    on: dict[str, list] = {}
    for prof, links, phase in jobs:
        for lk in links:
            on.setdefault(lk, []).append((prof, float(phase)))
    scores = []
    for lk, members in sorted(on.items()):
        if len(members) < 2:
            continue
        per = math.lcm(*(int(p.iteration_time) for p, _ in members))
        pts = [np.array([0.0, float(per)])]
        for p, ph in members:
            starts = np.asarray(p.boundaries[:-1], dtype=float)
            reps = np.arange(per // p.iteration_time, dtype=float) * p.iteration_time
            pts.append(((ph + reps[:, None] + starts[None, :]) % per).ravel())
        x = np.unique(np.concatenate(pts))
        mid, width = (x[:-1] + x[1:]) / 2.0, np.diff(x)
        d = np.zeros_like(mid)
        for p, ph in members:
            bws = np.array([b for _, b in p.phases], dtype=float)
            idx = np.searchsorted(np.asarray(p.boundaries, dtype=float), (mid - ph) % p.iteration_time,
                                  side="right") - 1
            d += bws[np.clip(idx, 0, len(bws) - 1)]
        cap = float(capacity[lk])
        scores.append(1.0 - float((np.maximum(d - cap, 0.0) * width).sum()) / (per * cap))
    return float(np.mean(scores)) if scores else 1.0


def agent_window(topo, jobs: dict, window_iterations: int, loss: float = 0.0, plans: Mapping[str, float] | None = None):
    """:func:`placement.sim.network.fluid_window` with §4.2 step 3's agent on every job
    (:class:`placement.cassini.fluid.FluidJob` ``agent``): the same window and transport.
    ``plans`` (ms per job name): each job's planned period, default its ideal iteration."""
    from ..cassini.fluid import FluidJob, simulate

    names = sorted(jobs)
    window = window_iterations * max(jobs[n][0].iteration_time for n in names)
    shifts = [float(jobs[n][2]) for n in names]
    fl = [FluidJob(jobs[n][0], topo.job_links(tuple(jobs[n][1])), shift=s, iterations=10**9, agent=True,
                   plan=None if plans is None else float(plans[n]))
          for n, s in zip(names, shifts, strict=True)]
    return names, simulate(fl, topo.capacity, loss=loss, horizon=window + max(shifts),
                           shared_goodput=topo.shared_goodput)


def drift_adjustments(begin: float, ends, ideal: float, warmup: int = 0, grid: float | None = None) -> float:
    """Adjustments per second (CASSINI §5.7's trigger): over the iterations after ``warmup``, one
    each time an iteration boundary deviates by more than 5% of the ``ideal`` iteration (ms) from
    where the last adjustment (or the first counted boundary) put it on a grid of ``grid`` ms
    (default ``ideal``: the schedule of a job running alone; the job's own mean iteration reads
    the schedule as the stretched rhythm the jobs of a component share, so only phase drift
    against it counts)."""
    ends = np.asarray(ends, dtype=float)
    if len(ends) <= warmup + 1:
        return 0.0
    step = float(ideal if grid is None else grid)
    ref = float(ends[warmup - 1]) if warmup else float(begin)
    k0, n = 0, 0
    for k, e in enumerate(ends[warmup:], start=1):
        if abs(e - (ref + (k - k0) * step)) > 0.05 * ideal:
            n += 1
            ref, k0 = float(e), k
    span = float(ends[-1]) - (float(ends[warmup - 1]) if warmup else float(begin))
    return n / span * 1000.0 if span > 0 else 0.0


def average_load(jobs: list[tuple[str, tuple[str, ...]]], capacity: Mapping[str, float], goodput: float = 1.0):
    """The average-load approximation of a large component (module docstring): ``jobs`` are
    ``(catalogue model, link ids)``; returns (factor per job, utilisation per link). A link that
    more than one job crosses, their mean load over its capacity, offers ``goodput`` of it (the
    one capacity of :mod:`placement.cassini.fluid`)."""
    profs = [profile_of(m, f"j{i}") for i, (m, _) in enumerate(jobs)]
    offered: dict[str, float] = {}
    count: dict[str, int] = {}
    for p, (_, links) in zip(profs, jobs, strict=True):
        for lk in links:
            offered[lk] = offered.get(lk, 0.0) + p.mean_bandwidth
            count[lk] = count.get(lk, 0) + 1
    capacity = {lk: capacity[lk] * (goodput if count[lk] > 1 and offered[lk] > capacity[lk] else 1.0)
                for lk in offered}
    factors = []
    for p, (_, links) in zip(profs, jobs, strict=True):
        c = sum(d for d, b in p.phases if b > 0) / p.iteration_time
        over = max((offered[lk] / capacity[lk] for lk in links), default=0.0)
        factors.append(1.0 / ((1.0 - c) + c * max(1.0, over)))
    return factors, {lk: min(1.0, v / capacity[lk]) for lk, v in offered.items()}


def instants(trace: Trace, log: EventLog):
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
