"""Equal-rate fluid processor sharing of a trace on ``G`` GPUs: the reference for time slicing.

Gandiva (Xiao et al., OSDI'18, §3.1) admits every job and time-slices GPUs round robin. Its
idealised limit, the one an outside review of our Dally reproduction used, is processor sharing
over the whole cluster: at every instant each present job progresses at the same rate
``r = min(1, G / sum of the present jobs' GPU counts)`` of its ideal speed. It is work
conserving (every GPU busy while the demand covers the cluster), ignores gangs (a job needs no
particular GPUs), machines, racks and network cost, and knows no job length.

It is a *reference*, not a bound on every policy: a placement that gives small jobs shallower
GPUs can finish them sooner. Our :mod:`placement.solvers.online.gandiva_fluid` falls short of it
(a gang progresses at the rate of its most-held GPU, and placements across racks pay Dally's
Table 1 slowdowns). The Dally reproduction uses it to ask whether a round-robin Gandiva could
give Table 2's Tiresias / Gandiva median ratio on a workload at all.

Cost: one step per completion or arrival, each O(jobs) in numpy; at most
:data:`MAX_JOBS` jobs.
"""

from __future__ import annotations

import numpy as np

from placement.errors import InstanceError

__all__ = ["processor_sharing", "MAX_JOBS"]

MAX_JOBS = 100_000


def processor_sharing(submit, gpus, duration, n_gpus: int) -> np.ndarray:
    """Completion times (s) of jobs under equal-rate fluid processor sharing on ``n_gpus`` GPUs.

    ``submit``, ``gpus`` and ``duration`` are per-job arrays (s, GPUs, ideal s). A job present
    at time t progresses at ``min(1, n_gpus / D(t))`` where ``D(t)`` is the GPU demand of the
    jobs present (submitted, unfinished). Returns finish times, in the order given.
    """
    s = np.asarray(submit, dtype=float)
    g = np.asarray(gpus, dtype=float)
    d = np.asarray(duration, dtype=float)
    if not (s.ndim == g.ndim == d.ndim == 1 and len(s) == len(g) == len(d)):
        raise InstanceError("jobs", "submit, gpus and duration must be 1-D arrays of one length")
    if len(s) > MAX_JOBS:
        raise InstanceError("jobs", f"at most {MAX_JOBS:,} jobs, got {len(s):,}")
    if isinstance(n_gpus, bool) or not isinstance(n_gpus, int | np.integer) or n_gpus < 1:
        raise InstanceError("n_gpus", f"must be a positive integer, got {n_gpus!r}")
    for name, a in (("submit", s), ("gpus", g), ("duration", d)):
        if not np.isfinite(a).all() or (a < 0).any():
            raise InstanceError(name, "must be finite and non-negative")
    if (g < 1).any():
        raise InstanceError("gpus", "every job needs at least one GPU")
    order = np.argsort(s, kind="stable")
    rem = d.copy()
    tol = 1e-9 * np.maximum(d, 1.0)
    done = np.full(len(s), np.nan)
    present = np.zeros(len(s), dtype=bool)
    t, nxt = 0.0, 0
    while nxt < len(s) or present.any():
        if not present.any():
            t = max(t, float(s[order[nxt]]))
        while nxt < len(s) and s[order[nxt]] <= t:
            present[order[nxt]] = True
            nxt += 1
        idx = np.flatnonzero(present)
        rate = min(1.0, n_gpus / float(g[idx].sum()))
        k = idx[np.argmin(rem[idx])]
        step = rem[k] / rate
        arrival = float(s[order[nxt]]) - t if nxt < len(s) else np.inf
        if arrival < step:
            t += arrival
            rem[idx] -= arrival * rate
        else:
            t += step
            rem[idx] -= step * rate
            rem[k] = 0.0
        fin = idx[rem[idx] <= tol[idx]]
        done[fin] = t
        present[fin] = False
    return done
