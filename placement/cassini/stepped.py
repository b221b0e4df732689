"""An independent time-stepped integration of the link model of :mod:`.fluid`, for checks.

It shares no code with :func:`.fluid.simulate` except the max-min allocation of one instant
(:func:`.fluid.max_min_rates`, tested on its own): time advances in fixed steps ``dt`` and
each job's phase work is drained at the rate of the step, so its error is O(dt) per phase
boundary. Runs of steps in which nothing changes (no job begins, no phase ends) are taken
together, which gives the same result as taking them one by one, faster. The replay checks of the testbed simulation and of the simulator's link model
recompute iteration times with it.
"""

from __future__ import annotations

import math

import numpy as np

from .fluid import max_min_rates
from .profiles import JobProfile

__all__ = ["stepped_iteration_times", "stepped_mean_iteration_times"]


def stepped_iteration_times(jobs: list[tuple[JobProfile, tuple[str, ...], float]], capacity: dict[str, float],
                            horizon: float, loss: float = 0.0, dt: float = 0.05,
                            shared_goodput: float = 1.0) -> list[np.ndarray]:
    """An independent time-stepped integration of the same link model (max-min fair per step),
    for the replay check: iteration end times per job up to ``horizon``. ``loss`` and
    ``shared_goodput`` as in :mod:`.fluid` (a link carrying more than one flow in a step
    delivers ``shared_goodput`` of its capacity), recomputed here by its own arithmetic."""
    links = sorted({lk for _, ls, _ in jobs for lk in ls})
    li = {k: i for i, k in enumerate(links)}
    inc = np.zeros((len(links), len(jobs)))
    for f, (_, ls, _) in enumerate(jobs):
        for lk in ls:
            inc[li[lk], f] = 1
    caps = np.array([capacity[k] for k in links])
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
        comm = tuple(f for f, (p, ls, _) in enumerate(jobs) if begun[f] and p.phases[phase[f]][1] > 0 and ls)
        rate = {}
        if comm:
            key = tuple(phase[f] for f in comm) + comm
            rate = alloc.get(key)
            if rate is None:   # the allocation of this set of flows and phases, once
                dem = np.array([jobs[f][0].phases[phase[f]][1] for f in comm])
                sub = inc[:, list(comm)]
                eff = caps * np.where(sub @ dem > caps + 1e-9, 1 - loss, 1.0)
                eff = eff * np.where(np.count_nonzero(sub, axis=1) >= 2, shared_goodput, 1.0)
                rate = alloc[key] = dict(zip(comm, max_min_rates(sub, eff, dem).tolist(), strict=True))
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
