"""§5.6's condition in MAST's busy hours, and the calibration file (``placement reproduce mast``).

§5.6 explains federation's violations: "high-priority workloads often need to preempt low-priority
ones to guarantee SLOs, but with a simple heuristic, the federated approach may not be able to
dispatch a high-priority workload to the right region where it can preempt others." Measured per
seed on the busy-hours workload (:func:`placement.sim.meta_trace.busy_trace`) by
:func:`condition`:

busiest hour
    The hour of the window in which high-priority (levels 0-1) workloads ask for the most GPUs
    (their submissions; the work running at time 0 excluded).
high-priority demand/supply of a region in that hour
    Demand counted as Tetris counts it (§3.2): the GPU-seconds inside the hour of the
    high-priority workloads homed in the region, each from its submission on, whether it runs or
    waits, over the region's GPU-seconds.
usable GPUs of a region in that hour
    The GPUs a waiting level-1 workload (87% of high-priority work, §2) could use there: free, or
    held by work of level 2 or lower, which it may preempt (§4.3); the time average over the hour,
    from a run's log (the federated run's: the state its bindings met).

The condition holds on a seed (``holds_all``, the reading ``placement reproduce mast`` judges by)
when the region with the lowest all-priority demand/supply in that hour (the backlog included:
where federation dispatches, "the region with the lowest demand over supply rate of the required
GPU type") is not the region with the most usable GPUs; ``holds`` is the second reading, with the
region of the lowest high-priority demand/supply (Tetris's measure).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["busiest_hour", "hour_demand", "usable_gpus", "condition"]

H = 3600.0


def hour_demand(trace, homes: dict[str, int], n_regions: int, hours: float,
                levels: tuple[int, ...] | None = (0, 1)) -> np.ndarray:
    """(hours x regions) GPU-seconds of demand per hour and home region: each job of ``levels``
    (None: all) from its submission for its duration, clipped to the window."""
    nb = max(1, int(np.ceil(hours)))
    out = np.zeros((nb, n_regions))
    for j in trace.jobs:
        if levels is not None and j.priority not in levels:
            continue
        a, b = j.submit, min(j.submit + j.duration, hours * H)
        for k in range(int(a // H), min(nb, int(np.ceil(b / H)))):
            out[k, homes[j.id]] += j.gpus * max(0.0, min(b, (k + 1) * H) - max(a, k * H))
    return out


def busiest_hour(trace, hours: float, levels: tuple[int, ...] = (0, 1)) -> int:
    """The hour with the most GPUs of high-priority (``levels``) workloads submitted in it
    (module docstring; the first on a tie; the time-0 work excluded)."""
    nb = max(1, int(np.ceil(hours)))
    got = np.zeros(nb)
    for j in trace.jobs:
        if j.priority in levels and 0 < j.submit < hours * H:
            got[min(nb - 1, int(j.submit // H))] += j.gpus
    return int(np.argmax(got))


def usable_gpus(trace, log, region: np.ndarray, n_regions: int, t0: float, t1: float,
                max_level: int = 1) -> np.ndarray:
    """Per region, the time-average over [t0, t1) of its GPUs not held by work at levels
    ``<= max_level`` (free, or held by work a level-``max_level`` workload may preempt), from
    the log's starts, preemptions and finishes (stops before starts at equal times)."""
    from placement.sim.metrics import step_average

    prio = {j.id: j.priority for j in trace.jobs}
    region = np.asarray(region)
    rows = [r for r in log if r.event in ("start", "preempt", "finish") and prio.get(r.job, 99) <= max_level]
    rows.sort(key=lambda r: (r.time, r.event == "start"))
    out = np.zeros(n_regions)
    for g in range(n_regions):
        times = np.array([r.time for r in rows], dtype=float)
        held = np.array([(1 if r.event == "start" else -1) * int(np.sum(region[list(r.gpus)] == g)) if r.gpus else 0
                         for r in rows], dtype=float)
        out[g] = float((region == g).sum()) - float(step_average(times, held, np.array([t0, t1]))[0]) \
            if len(times) else float((region == g).sum())
    return out


def condition(trace, homes: dict[str, int], log, region, region_gpus, hours: float) -> dict[str, Any]:
    """§5.6's condition on one seed (module docstring): the busiest hour, per region the
    high-priority and all-priority demand/supply in it and the usable GPUs, the regions with
    the lowest ratios and the most usable GPUs, and whether the condition holds."""
    S = np.array(region_gpus, dtype=float)
    R = len(S)
    hp = hour_demand(trace, homes, R, hours)
    k = busiest_hour(trace, hours)
    every = hour_demand(trace, homes, R, hours, levels=None)
    lo, hi = k * H, min((k + 1) * H, hours * H)
    hp_ratio = hp[k] / (S * (hi - lo))
    all_ratio = every[k] / (S * (hi - lo))
    use = usable_gpus(trace, log, region, R, lo, hi)
    low_hp, low_all, most = int(np.argmin(hp_ratio)), int(np.argmin(all_ratio)), int(np.argmax(use))
    return {"hour": k, "hp_ratio": [float(x) for x in hp_ratio], "all_ratio": [float(x) for x in all_ratio],
            "usable": [float(x) for x in use], "lowest_hp": low_hp, "lowest_all": low_all, "most_usable": most,
            "holds": low_hp != most, "holds_all": low_all != most}
