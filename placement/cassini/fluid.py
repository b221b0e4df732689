"""Links shared over time: an event-driven fluid model of training jobs (CASSINI §2, §3, §5).

The static link-sharing model of :mod:`.evaluation` charges each overlapping time unit once
and never moves later iterations. Here time runs: every job repeats its profile's phases
(:mod:`.profiles`), and a stretched communication phase pushes all of the job's later
iterations back, as on the paper's testbed (§2.1: an iteration cannot start before the
previous AllReduce ends).

Semantics
---------
job
    A :class:`.profiles.JobProfile`, the names of the links its ring all-reduce traverses
    (:meth:`.topology.Topology.job_links`), a start time and a time shift. The job's first
    iteration begins at ``start + shift`` (a CASSINI time shift delays the job's start, §4.1),
    and it runs ``iterations`` iterations back to back.
compute phase (bandwidth 0, or a job crossing no link)
    Lasts exactly its profile duration.
communication phase ``(duration, b)``
    Must move the volume ``duration * b`` (Gbit when time is in ms and b in Gbps, up to the
    constant factor 1e-3, which cancels). It sends at rate ``r <= b``, the same rate on every
    link it crosses (one flow per direction; directions are symmetric on a tree, so one
    direction is modelled). Alone on uncongested links ``r = b`` and the phase lasts exactly
    ``duration``.
link sharing
    At every instant the rates are the max-min fair allocation (progressive filling) of the
    links' capacities among the active flows, each capped at its own demand ``b``. Rates change
    only at events (a phase ends, a job starts), so between events every phase progresses
    linearly and the next event time is exact: the simulation is event-driven, not time-stepped.
goodput factor ``shared_goodput`` (one capacity for score and transport)
    While a link carries more than one flow **and their offered demand exceeds its capacity**,
    it delivers ``shared_goodput * C`` (0.88 reproduces §2.2's 22 + 22 of 50 Gbps for two VGG19
    that contend). Overlaps whose summed demand fits in ``C`` run at full rate: exactly the
    overlaps that Table 1's compatibility score (excess over ``C``, :mod:`.evaluation`) calls
    free, so a score-1 set runs at its ideal iterations here. The independent integration
    :mod:`.stepped` applies the same reading.
congestion-loss factor (labelled, default off)
    ``loss`` in [0, 1): while a link's demand exceeds its capacity, it delivers only
    ``(1 - loss) * C`` of goodput (retransmissions and ECN back-off, §5.3 reports 27-33x more
    ECN marks without CASSINI). ``loss = 0`` is the pure fluid model; any other value is an
    assumption of ours, not a measured number, and is reported beside the results.

agent (CASSINI §4.2 step 3, §5.7; per job, ``FluidJob.agent``, off by default)
    A shifted job's workers keep its planned time shift: its iterations should begin on the
    grid ``ref + k * plan`` (``ref`` first the end of the job's first iteration, the shift
    being applied "at the next immediate training iteration", §4.2; ``plan`` the
    profile's iteration time unless ``FluidJob.plan`` gives the rhythm a partially compatible
    set runs at). When
    an iteration ends (the next one's communication start follows it by the fixed Down phase,
    so this is the paper's trigger on the communication start) more than 5% of the ideal
    iteration off the grid, the agent re-aligns: the job waits (no traffic) until the next grid
    point ``ref + ceil((t - ref) / plan) * plan``, which becomes the new ``ref``; one
    adjustment counted (``FluidResult.adjustments``). The wait belongs to the next iteration.
timing noise (``noise``, seeded by ``seed``; default 0, off)
    Each compute (Down) phase lasts ``max(0, 1 + noise * z)`` times its profile duration, ``z``
    standard normal, drawn per phase in event order: the clock and straggler jitter that
    makes the paper's agents adjust ("our servers are not running perfectly in sync", §5.7).

Hand cases (proved in the tests): a job alone runs exactly its profile; two identical jobs with
an Up fraction <= 1/2 at line rate, shifted by half an iteration, never overlap (no slowdown);
started together, each Up phase of duration ``u`` stretches to ``2u`` (both get ``C/2``), so the
iteration becomes ``iter + u``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from .profiles import JobProfile

__all__ = ["FluidJob", "FluidResult", "max_min_rates", "simulate", "iteration_times_from_ends",
           "SECTION_2_2_GOODPUT", "effective_capacity"]

_EPS = 1e-9
# §2.2, Fig. 2(b): two jobs sharing a 50 Gbps link each get ~22 Gbps: 44 / 50
SECTION_2_2_GOODPUT = 0.88


@dataclass(frozen=True)
class FluidJob:
    """One job in the fluid model (see the module docstring)."""

    profile: JobProfile
    links: tuple[str, ...] = ()
    start: float = 0.0
    shift: float = 0.0
    iterations: int = 10
    #: §4.2 step 3's agent keeps this job on its planned time shift (module docstring)
    agent: bool = False
    #: the agent's planned period (ms): None is the profile's iteration time; a job locked into
    #: a common stretched rhythm with partially compatible jobs plans on that rhythm
    plan: float | None = None

    def __post_init__(self) -> None:
        if self.iterations < 1:
            raise ValueError(f"iterations: must be >= 1, got {self.iterations}")
        if self.shift < 0 or self.start < 0:
            raise ValueError(f"shift/start: must be >= 0, got {self.shift}/{self.start}")
        if self.plan is not None and not (np.isfinite(self.plan) and self.plan > 0):
            raise ValueError(f"plan: must be a positive number of ms, got {self.plan}")


@dataclass
class FluidResult:
    """Iteration end times per job (absolute), and each link's carried volume and busy time."""

    ends: list[np.ndarray]
    begin: np.ndarray
    horizon: float
    link_volume: dict[str, float] = field(default_factory=dict)
    link_overloaded_time: dict[str, float] = field(default_factory=dict)
    events: int = 0
    #: per job, the agent's time-shift adjustments (§4.2 step 3, §5.7); 0 for jobs without one
    adjustments: list[int] = field(default_factory=list)
    #: per job, the volume (Gbit) it sent while a link it crosses was offered more than its
    #: capacity: a queue builds there, the marked-packet (ECN) proxy of CASSINI §5.3
    marked: list[float] = field(default_factory=list)

    def iteration_times(self) -> list[np.ndarray]:
        """Per job, the duration of each completed iteration."""
        return [iteration_times_from_ends(b, e) for b, e in zip(self.begin, self.ends, strict=True)]

    def mean_iteration_times(self) -> np.ndarray:
        return np.array([float(np.mean(x)) if len(x) else np.nan for x in self.iteration_times()])

    def link_utilisation(self, capacity: Mapping[str, float]) -> dict[str, float]:
        """Carried volume over ``capacity * horizon`` for each link."""
        return {k: v / (capacity[k] * self.horizon) if self.horizon > 0 else 0.0
                for k, v in self.link_volume.items()}


def iteration_times_from_ends(begin: float, ends: np.ndarray) -> np.ndarray:
    """Durations of consecutive iterations given the first iteration's begin time."""
    ends = np.asarray(ends, dtype=float)
    return np.diff(np.concatenate([[begin], ends]))


def effective_capacity(sub: np.ndarray, caps: np.ndarray, demand: np.ndarray, loss: float,
                       shared_goodput: float) -> np.ndarray:
    """Each link's deliverable capacity at one instant (``sub[l, f]``: active flow f crosses link l):
    ``(1 - loss) * C`` while its offered demand exceeds ``C`` (the congestion-loss factor), times
    ``shared_goodput`` while it carries more than one flow **and** their demand exceeds ``C``
    (module docstring: one capacity for the score and the transport)."""
    eff = caps
    if loss > 0:
        eff = np.where(sub @ demand > caps + _EPS, eff * (1.0 - loss), eff)
    if shared_goodput != 1.0:
        eff = np.where((sub.sum(axis=1) > 1.5) & (sub @ demand > caps + _EPS), eff * shared_goodput, eff)
    return eff


def max_min_rates(incidence: np.ndarray, caps: np.ndarray, demand: np.ndarray) -> np.ndarray:
    """Max-min fair rates by progressive filling.

    ``incidence[l, f]`` is 1 when flow f crosses link l, ``caps[l]`` the link capacities and
    ``demand[f]`` each flow's cap. All unfrozen flows grow at the same level; a flow freezes
    at its demand or when a link it crosses saturates.
    """
    a = np.asarray(incidence, dtype=float)
    n_links, n_flows = a.shape
    rate = np.zeros(n_flows)
    frozen = np.zeros(n_flows, dtype=bool)
    while not frozen.all():
        free = ~frozen
        used = a[:, frozen] @ rate[frozen] if frozen.any() else np.zeros(n_links)
        n_free = a[:, free].sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(n_free > 0, (caps - used) / np.where(n_free > 0, n_free, 1), np.inf)
        level_link = float(share.min()) if n_links else np.inf
        level_dem = float(demand[free].min())
        level = max(0.0, min(level_link, level_dem))
        newly = free & (demand <= level + _EPS)
        if level_link <= level_dem + _EPS and n_links:
            tight = share <= level + _EPS
            newly |= free & (a[tight].sum(axis=0) > 0)
        rate[newly] = np.minimum(level, demand[newly])
        frozen |= newly
    return rate


def simulate(jobs: Sequence[FluidJob], capacity: Mapping[str, float], *, loss: float = 0.0,
             horizon: float | None = None, max_events: int = 10_000_000,
             shared_goodput: float = 1.0, noise: float = 0.0, seed: int = 0) -> FluidResult:
    """Run the fluid model until every job has run its iterations (or ``horizon``).

    Returns each job's iteration end times; a job's iteration k spans ``ends[k-1]`` (or its
    begin ``start + shift``) to ``ends[k]``.
    """
    if not 0.0 <= loss < 1.0:
        raise ValueError(f"loss: must be in [0, 1), got {loss}")
    if not 0.0 < shared_goodput <= 1.0:
        raise ValueError(f"shared_goodput: must be in (0, 1], got {shared_goodput}")
    if not (np.isfinite(noise) and 0.0 <= noise < 1.0):
        raise ValueError(f"noise: must be in [0, 1), got {noise}")
    rng = np.random.default_rng(seed) if noise > 0 else None
    for j in jobs:
        for lk in j.links:
            if lk not in capacity:
                raise ValueError(f"links: unknown link {lk!r} of job {j.profile.name!r}")
    n = len(jobs)
    link_names = sorted({lk for j in jobs for lk in j.links})
    lidx = {k: i for i, k in enumerate(link_names)}
    caps = np.array([float(capacity[k]) for k in link_names])
    inc = np.zeros((len(link_names), n))
    for f, j in enumerate(jobs):
        for lk in j.links:
            inc[lidx[lk], f] = 1.0
    crosses = inc.sum(axis=0) > 0
    durs = [np.array([t for t, _ in j.profile.phases], dtype=float) for j in jobs]
    bws = [np.array([b for _, b in j.profile.phases], dtype=float) for j in jobs]
    begin = np.array([j.start + j.shift for j in jobs], dtype=float)
    # The event loop runs on Python floats and lists, one job at a time: every value is computed
    # by the same IEEE operations, in the same order, as the earlier array form of this loop (an
    # array's elementwise operations round as the scalar ones do), so the results are the same
    # floats; only the per-event cost of small arrays goes.
    dur = [d.tolist() for d in durs]
    bw = [b.tolist() for b in bws]
    # whether a phase communicates (bytes to move over at least one link), and its work as the
    # finish test reads it: the volume of a communication phase, else its duration
    talks = [[bool(b > 0 and crosses[f]) for b in bw[f]] for f in range(n)]
    works = [[d * b if c else d * 1.0 for d, b, c in zip(dur[f], bw[f], talks[f], strict=True)] for f in range(n)]
    wake = begin.tolist()        # when a job (re)starts its iterations: its begin, or an agent's wait
    ends: list[list[float]] = [[] for _ in jobs]
    phase = [0] * n
    # remaining work of the current phase: time for compute phases, volume for communication
    remaining = [0.0] * n
    comm = [False] * n
    started = [False] * n
    done = [False] * n
    n_done = 0
    volume = np.zeros(len(link_names))
    over_time = np.zeros(len(link_names))
    marked = [0.0] * n
    t = 0.0
    events = 0
    # the agent (module docstring): the grid's reference, iterations since it, adjustments
    ref = begin.tolist()
    since = [0] * n
    adjust = [0] * n
    ideal = [float(j.profile.iteration_time) for j in jobs]
    plan = [float(j.plan) if j.plan is not None else float(j.profile.iteration_time) for j in jobs]
    iterations = [j.iterations for j in jobs]
    agent = [bool(j.agent) for j in jobs]
    jobs_range = range(n)
    # the sharing of one instant is a function of which jobs communicate and in which phase: the
    # rates, the links' carried load and the congested links and flows, computed once per such
    # configuration by the array operations (the same operands, so the same floats)
    shared: dict[tuple, tuple] = {}

    def sharing(flows: list[int]) -> tuple:
        fl = np.array(flows, dtype=np.int64)
        demand = np.array([bws[f][phase[f]] for f in flows])
        sub = inc[:, fl]
        eff = effective_capacity(sub, caps, demand, loss, shared_goodput)
        rate = np.zeros(n)
        rate[fl] = max_min_rates(sub, eff, demand)
        load = inc[:, fl] @ rate[fl]
        hot = offered_hot = (inc[:, fl] @ demand) > caps + _EPS
        cong = fl[inc[hot][:, fl].sum(axis=0) > 0] if offered_hot.any() else None
        return (rate[fl].tolist(), load, hot,
                None if cong is None else list(zip(cong.tolist(), rate[cong].tolist(), strict=True)))

    def enter(f: int) -> None:
        k = phase[f]
        c = comm[f] = talks[f][k]
        d = dur[f][k]
        if rng is not None and not c:
            d = d * max(0.0, 1.0 + noise * float(rng.standard_normal()))
        remaining[f] = d * bw[f][k] if c else d

    while n_done < n:
        events += 1
        if events > max_events:
            raise RuntimeError(f"max_events: more than {max_events} events")
        thr = t + _EPS
        for f in jobs_range:
            if not started[f] and wake[f] <= thr:
                started[f] = True
                phase[f] = 0
                enter(f)
        active = [f for f in jobs_range if started[f] and not done[f]]
        flows = [f for f in active if comm[f]]
        rate = {}
        if flows:
            key = (tuple(flows), tuple([phase[f] for f in flows]))
            got = shared.get(key)
            if got is None:
                got = shared[key] = sharing(flows)
            rate = dict(zip(flows, got[0], strict=True))
        # time to the next event
        nxt = np.inf
        for f in active:
            d = remaining[f] / max(rate[f], 1e-300) if comm[f] else remaining[f]
            if d < nxt:
                nxt = d
        nxt = float(nxt)
        w = [wake[f] for f in jobs_range if not started[f] and not done[f]]
        if w:
            nxt = min(nxt, float(min(w) - t))
        if horizon is not None and t + nxt >= horizon:
            nxt = horizon - t
        nxt = max(nxt, 0.0)
        if flows:
            _, load, hot, cong = got
            volume += load * nxt
            over_time += hot * nxt
            if cong is not None:
                for f, r in cong:
                    marked[f] += r * nxt
        t += nxt
        for f in active:
            if comm[f]:
                remaining[f] -= rate[f] * nxt
            else:
                remaining[f] -= nxt
        if horizon is not None and t >= horizon - _EPS:
            break
        finished = [f for f in active if remaining[f] <= _EPS * max(works[f][phase[f]], 1.0)]
        for f in finished:
            phase[f] += 1
            if phase[f] == len(dur[f]):
                ends[f].append(t)
                phase[f] = 0
                if len(ends[f]) >= iterations[f]:
                    done[f] = True
                    n_done += 1
                    continue
                since[f] += 1
                if len(ends[f]) == 1:              # the agent plans from the first iteration's end
                    ref[f], since[f] = t, 0
                elif agent[f] and abs(t - (ref[f] + since[f] * plan[f])) > 0.05 * ideal[f]:
                    ref[f] += math.ceil((t - ref[f]) / plan[f] - 1e-12) * plan[f]
                    since[f] = 0
                    adjust[f] += 1
                    if ref[f] > t + _EPS:          # wait (no traffic) for the next grid point
                        wake[f] = ref[f]
                        started[f] = False
                        continue
            enter(f)
    return FluidResult([np.array(e) for e in ends], begin, t,
                       {k: float(volume[i]) for k, i in lidx.items()},
                       {k: float(over_time[i]) for k, i in lidx.items()}, events, adjust, marked)
