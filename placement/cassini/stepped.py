"""An independent time-stepped integration of the link model of :mod:`.fluid`, for checks.

It shares no code with :func:`.fluid.simulate` except the max-min allocation of one instant
(:func:`.fluid.max_min_rates`, tested on its own): time advances in fixed steps ``dt`` and
each job's phase work is drained at the rate of the step, so its error is O(dt) per phase
boundary. Runs of steps in which nothing changes (no job begins, no phase ends) are taken
together, which gives the same result as taking them one by one, faster.
:func:`exact_step_iteration_times` is the same integration with each step ending exactly at the
next change instead of on the grid; the replay check of the simulator's link model
(:mod:`placement.sim.link_check`) recomputes iteration times with it, because a contended
component's trajectory can be too ill-conditioned for any grid (its docstring has the numbers).
"""

from __future__ import annotations

import math

import numpy as np

from .fluid import max_min_rates
from .profiles import JobProfile

__all__ = ["exact_step_iteration_times", "stepped_iteration_times", "stepped_mean_iteration_times"]


def _incidence(jobs, capacity: dict[str, float]) -> tuple[np.ndarray, np.ndarray]:
    """The links x jobs incidence matrix (links sorted by name) and the links' capacities."""
    links = sorted({lk for _, ls, _ in jobs for lk in ls})
    li = {k: i for i, k in enumerate(links)}
    inc = np.zeros((len(links), len(jobs)))
    for f, (_, ls, _) in enumerate(jobs):
        for lk in ls:
            inc[li[lk], f] = 1
    return inc, np.array([capacity[k] for k in links])


def _rates(jobs, phase: list[int], comm: tuple[int, ...], inc: np.ndarray, caps: np.ndarray,
           loss: float, shared_goodput: float) -> dict[int, float]:
    """Max-min rates of the communicating jobs ``comm`` in their current phases: a link over
    its capacity loses ``loss``, one carrying two or more flows whose demand exceeds its capacity
    delivers ``shared_goodput`` (the one capacity of :mod:`.fluid`: overlaps that fit run free)."""
    dem = np.array([jobs[f][0].phases[phase[f]][1] for f in comm])
    sub = inc[:, list(comm)]
    over = sub @ dem > caps + 1e-9
    eff = caps * np.where(over, 1 - loss, 1.0)
    eff = eff * np.where(over & (np.count_nonzero(sub, axis=1) >= 2), shared_goodput, 1.0)
    return dict(zip(comm, max_min_rates(sub, eff, dem).tolist(), strict=True))


def _step_rates(jobs, phase: list[int], begun: list[bool], alloc: dict, inc: np.ndarray, caps: np.ndarray,
                loss: float, shared_goodput: float) -> dict[int, float]:
    """The rates of the jobs communicating in this step (begun, in a phase with bytes, on links):
    :func:`_rates`, computed once per set of flows and phases (``alloc`` keeps them)."""
    comm = tuple(f for f, (p, ls, _) in enumerate(jobs) if begun[f] and p.phases[phase[f]][1] > 0 and ls)
    if not comm:
        return {}
    key = tuple(phase[f] for f in comm) + comm
    rate = alloc.get(key)
    if rate is None:
        rate = alloc[key] = _rates(jobs, phase, comm, inc, caps, loss, shared_goodput)
    return rate


def stepped_iteration_times(jobs: list[tuple[JobProfile, tuple[str, ...], float]], capacity: dict[str, float],
                            horizon: float, loss: float = 0.0, dt: float = 0.05,
                            shared_goodput: float = 1.0) -> list[np.ndarray]:
    """An independent time-stepped integration of the same link model (max-min fair per step),
    for the replay check: iteration end times per job up to ``horizon``. ``loss`` and
    ``shared_goodput`` as in :mod:`.fluid` (a link carrying more than one flow in a step, their
    demand over its capacity, delivers ``shared_goodput`` of its capacity), recomputed here by its own arithmetic."""
    inc, caps = _incidence(jobs, capacity)
    phase = [0] * len(jobs)
    left = [0.0] * len(jobs)
    begun = [False] * len(jobs)
    ends: list[list[float]] = [[] for _ in jobs]
    alloc: dict[tuple, dict[int, float]] = {}
    steps = int(round(horizon / dt))
    i = 0
    while i < steps:
        t = i * dt
        for f, (p, ls, s) in enumerate(jobs):
            if not begun[f] and t >= s - 1e-12:
                begun[f] = True
                d, b = p.phases[0]
                left[f] = d * b if (b > 0 and ls) else d
        rate = _step_rates(jobs, phase, begun, alloc, inc, caps, loss, shared_goodput)
        # Steps until the next step in which something changes (a job begins, a phase ends):
        # the steps in between drain every phase at the same rate, so they are taken at once.
        k = steps - i
        for f, (_, _, s) in enumerate(jobs):
            if begun[f]:
                speed = rate[f] if f in rate else 1.0
                k = min(k, max(1, math.ceil((left[f] - 1e-9) / (speed * dt))))
            else:
                k = min(k, max(1, math.ceil((s - 1e-12) / dt) - i))
        for f, (p, ls, _) in enumerate(jobs):
            if not begun[f]:
                continue
            speed = rate[f] if f in rate else 1.0
            left[f] -= speed * dt * k
            while left[f] <= 1e-9:
                over = -left[f] / speed  # time overshot past the phase end
                phase[f] += 1
                if phase[f] == len(p.phases):
                    phase[f] = 0
                    ends[f].append((i + k) * dt)
                d, b = p.phases[phase[f]]
                speed = b if (b > 0 and ls) else 1.0
                left[f] = (d * b if (b > 0 and ls) else d) - over * speed
        i += k
    return [np.array(e) for e in ends]


def stepped_mean_iteration_times(jobs: list[tuple[JobProfile, tuple[str, ...], float]],
                                 capacity: dict[str, float], horizon: float, warmup: int,
                                 loss: float = 0.0, dt: float = 0.5, shared_goodput: float = 1.0) -> list[float]:
    """Each job's mean iteration time over ``horizon`` after ``warmup`` iterations (its profile's
    iteration time when it completes none)."""
    out = []
    for (p, _, s), en in zip(jobs, stepped_iteration_times(jobs, capacity, horizon, loss, dt, shared_goodput), strict=True):
        it = np.diff(np.concatenate([[s], en]))
        use = it[warmup:] if len(it) > warmup else it
        out.append(float(use.mean()) if len(use) else float(p.iteration_time))
    return out


def exact_step_iteration_times(jobs: list[tuple[JobProfile, tuple[str, ...], float]], capacity: dict[str, float],
                               horizon: float, loss: float = 0.0, shared_goodput: float = 1.0,
                               agents=None, plans=None) -> list[np.ndarray]:
    """The same integration as :func:`stepped_iteration_times` with each step ending exactly
    where the next thing changes (a job begins, a phase ends) instead of on a grid of ``dt``:
    iteration end times per job before ``horizon`` (an iteration ending within 1e-9 ms of it is
    not counted). Its own arithmetic (time to each phase's end from the work left and the
    rate), sharing only :func:`.fluid.max_min_rates` with :func:`.fluid.simulate`.

    Why the check needs it: on a contended component the trajectory can be ill-conditioned
    (measured: three jobs on one Clos link that the exact model locks into a common 270.9 ms
    rhythm; a grid of 0.05 ms, whose error is O(dt) per phase boundary, knocks them out of it
    and its 16-iteration mean differs by 4-10%, its 600-iteration one by 17% and depends on
    ``dt``), so no grid step confirms the engine's factor there; exact steps do, to ~1e-12.

    ``agents`` (one bool per job, default none): §4.2 step 3's agent as :mod:`.fluid` states it,
    recomputed here: a job whose iteration ends more than 5% of its ideal iteration away from
    ``anchor + m * ideal`` (``anchor`` its first iteration's end, then its last re-alignment; ``m`` iterations
    since) waits without traffic until the first grid point ``anchor + j * ideal`` not before
    that end, which becomes the anchor. ``plans`` (one period in ms per job, default the ideal
    iterations): the grid's step, as :class:`.fluid.FluidJob` ``plan`` (the trigger stays 5% of
    the ideal iteration)."""
    inc, caps = _incidence(jobs, capacity)
    n = len(jobs)
    phase = [0] * n
    left = [0.0] * n
    begun = [False] * n
    agents = [bool(a) for a in agents] if agents is not None else [False] * n
    steps = ([float(x) for x in plans] if plans is not None else [float(p.iteration_time) for p, _, _ in jobs])
    anchor = [float(s) for _, _, s in jobs]     # where each job's iterations should begin
    count = [0] * n                             # iterations since the anchor
    resume = [float(s) for _, _, s in jobs]     # a job not begun (or waiting) begins here
    ends: list[list[float]] = [[] for _ in jobs]
    alloc: dict[tuple, dict[int, float]] = {}
    eps = 1e-9

    def work(f: int) -> float:
        p, ls, _ = jobs[f]
        d, b = p.phases[phase[f]]
        return d * b if (b > 0 and ls) else d

    t = 0.0
    while t < horizon - eps:
        for f in range(n):
            if not begun[f] and t >= resume[f] - eps:
                begun[f], phase[f] = True, 0
                left[f] = work(f)
        rate = _step_rates(jobs, phase, begun, alloc, inc, caps, loss, shared_goodput)
        speed = [rate.get(f, 1.0) for f in range(n)]
        h = horizon - t
        for f in range(n):
            h = min(h, left[f] / speed[f] if begun[f] else resume[f] - t)
        h = max(h, 0.0)
        t += h
        if t >= horizon - eps:
            break
        for f in range(n):
            if not begun[f]:
                continue
            left[f] -= speed[f] * h
            if left[f] <= eps * max(1.0, work(f)):
                phase[f] += 1
                if phase[f] == len(jobs[f][0].phases):
                    phase[f] = 0
                    ends[f].append(t)
                    count[f] += 1
                    ideal, step = float(jobs[f][0].iteration_time), steps[f]
                    if len(ends[f]) == 1:
                        anchor[f], count[f] = t, 0
                    elif agents[f] and abs(t - anchor[f] - count[f] * step) > 0.05 * ideal:
                        j = math.ceil((t - anchor[f]) / step - 1e-12)
                        anchor[f] += j * step
                        count[f] = 0
                        if anchor[f] > t + eps:
                            begun[f], resume[f] = False, anchor[f]
                            continue
                left[f] = work(f)
    return [np.array(e) for e in ends]
