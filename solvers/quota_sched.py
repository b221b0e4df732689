"""Quota sharing (YARN-CS-like, HiveD §5.1's "Quota" baseline) on the simulator.

Each tenant has a quota in GPUs (``models.hived_vc.VCAssignment.gpus``; default the node-level
fit to the Philly trace, the same GPUs per tenant as HiveD's VCs). Per tenant the jobs are taken
in order (FIFO, or ``order="tiresias"``: least attained GPU-service first).

- A job within its tenant's quota (guaranteed GPUs in use + its GPUs <= quota) is high
  priority and needs GPU affinity: a job of at most 8 GPUs on one machine, a larger one on
  ``ceil(g/8)`` whole machines. Jobs are packed as close as possible (best fit: the machine with
  the fewest usable GPUs that suffice). If no machine has enough idle GPUs it may take GPUs of
  low-priority jobs and preempt them (YARN-CS refined as in §5.1: preempt low-priority jobs for
  the desired affinity; the machine with the fewest such GPUs). Without affinity it waits: this
  is where the sharing anomaly comes from (quota left, but the free GPUs are fragmented).
- A job beyond its quota runs as a preemptible low-priority job on idle GPUs (same affinity
  rule), after all high-priority starts; per tenant the first that fails blocks the rest.
"""

from __future__ import annotations

import numpy as np

from models import hived_vc as hv
from placement.errors import InstanceError
from placement.sim.policy import Policy, Preempt, Start, Timer
from solvers.hived_sched import Queues

__all__ = ["QuotaSharing", "affinity_place"]

NODE = hv.LEVEL_GPUS[hv.K]


def affinity_place(cluster, usable: np.ndarray, gpus: int, cost: np.ndarray | None = None
                   ) -> tuple[int, ...] | None:
    """GPUs with affinity from the ``usable`` mask: <= 8 GPUs on one machine (best fit; with a
    per-GPU ``cost`` mask, fewest costly GPUs first, then best fit), more on whole machines
    (fully usable ones, fewest costly first). Idle (cost 0) GPUs are taken before costly ones."""
    first = np.asarray(cluster.machine_first)
    per = np.add.reduceat(usable.astype(np.int64), first)
    c = np.zeros_like(per) if cost is None else np.add.reduceat((usable & cost).astype(np.int64), first)
    if gpus <= NODE:
        ok = np.flatnonzero(per >= gpus)
        if not ok.size:
            return None
        m = ok[np.lexsort((ok, per[ok], c[ok]))[0]]
        ids = np.flatnonzero(usable[first[m]:first[m] + NODE]) + first[m]
        if cost is not None:
            ids = ids[np.argsort(cost[ids], kind="stable")]
        return tuple(sorted(int(x) for x in ids[:gpus]))
    need = -(-gpus // NODE)
    ok = np.flatnonzero(per == NODE)
    if ok.size < need:
        return None
    ok = ok[np.lexsort((ok, c[ok]))][:need]
    out = np.concatenate([np.arange(first[m], first[m] + NODE) for m in sorted(ok)])
    return tuple(int(x) for x in out[:gpus])


def _quotas(assignment, levels, cluster):
    from solvers.hived_sched import _as_assignment, _check_cluster, fit_assignment

    n = _check_cluster(cluster)
    a = fit_assignment(n, levels) if assignment is None else _as_assignment(assignment, n)
    return a, {t: a.gpus(t) for t in a.cells}


class QuotaSharing(Policy):
    """Quota sharing (module doc). Options: ``assignment``, ``levels`` (for the fitted
    assignment, default "node"), ``order`` ("fifo" | "tiresias")."""

    name = "quota"

    def __init__(self, assignment=None, levels: str = "node", order: str = "fifo"):
        if order not in ("fifo", "tiresias"):
            raise InstanceError("order", f"must be 'fifo' or 'tiresias', not {order!r}")
        self.assignment_arg, self.levels, self.order = assignment, levels, order
        self.used: dict[str, int] = {}
        self.high: dict[str, str] = {}
        self.low: dict[str, tuple[int, ...]] = {}
        self.guaranteed_ever: set[str] = set()  # jobs started within quota (fragmentation measures)
        self.queues = Queues()
        self.n = {"high_starts": 0, "low_starts": 0, "preempted_jobs": 0, "preempted_gpus": 0,
                  "affinity_waits": 0, "calls": 0}

    def setup(self, view, seed):
        self.assign, self.quota = _quotas(self.assignment_arg, self.levels, view.cluster)
        self.low_mask = np.zeros(view.cluster.n_gpus, dtype=bool)
        self.owner = np.full(view.cluster.n_gpus, "", dtype=object)

    def _end(self, jid):
        t = self.high.pop(jid, None)
        if t is not None:
            self.used[t] -= self._g.pop(jid)
        elif jid in self.low:
            g = list(self.low.pop(jid))
            self.low_mask[g] = False

    def schedule(self, view, events):
        if not hasattr(self, "_g"):
            self._g: dict[str, int] = {}
        self.n["calls"] += 1
        for ev in events:
            if ev.kind == "finish" and ev.job_id is not None:
                self._end(ev.job_id)
        self.queues.events(view, events)
        free = view.free.copy()
        out: list = []
        preempted: list[str] = []
        tenants = self.queues.tenants()
        for t in tenants:
            fail = 1 << 30  # smallest GPU number without affinity now: larger jobs fail too
            started = []
            for job in self.queues.ordered(view, t, self.order):
                left = self.quota.get(t, 0) - self.used.get(t, 0)
                if left <= 0 or fail == 1:
                    break
                if job.gpus > left or job.gpus >= fail:
                    continue  # beyond quota (low priority, below) or no affinity for its size
                gpus = affinity_place(view.cluster, free | self.low_mask, job.gpus, self.low_mask)
                if gpus is None:
                    self.n["affinity_waits"] += 1
                    fail = job.gpus
                    continue  # within quota, no affinity: waits (the anomaly)
                victims = sorted({self.owner[g] for g in gpus if self.low_mask[g]})
                for v in victims:
                    g = self.low[v]
                    self._end(v)
                    free[list(g)] = True
                    out.append(Preempt(v))
                    self.n["preempted_jobs"] += 1
                    self.n["preempted_gpus"] += len(g)
                    preempted.append(v)
                free[list(gpus)] = False
                out.append(Start(job.id, gpus))
                self.high[job.id] = t
                self.guaranteed_ever.add(job.id)
                self._g[job.id] = job.gpus
                self.used[t] = self.used.get(t, 0) + job.gpus
                self.n["high_starts"] += 1
                started.append(job)
            for job in started:
                self.queues.remove(job)
        # low priority: per tenant in order, jobs beyond the quota; the first that fails blocks
        heads = []
        for t in tenants:
            first = next(iter(self.queues.ordered(view, t, self.order)), None)
            if first is not None:
                heads.append((first.submit, t))
        n_free = int(free.sum())
        for _, t in sorted(heads):
            started = []
            for job in self.queues.ordered(view, t, self.order):
                if n_free == 0:
                    break
                if self.used.get(t, 0) + job.gpus <= self.quota.get(t, 0):
                    continue  # within quota: waits for affinity as high priority
                gpus = affinity_place(view.cluster, free, job.gpus) if job.gpus <= n_free else None
                if gpus is None:
                    break
                n_free -= job.gpus
                started.append(job)
                free[list(gpus)] = False
                self.low[job.id] = gpus
                self.low_mask[list(gpus)] = True
                self.owner[list(gpus)] = job.id
                out.append(Start(job.id, gpus))
                self.n["low_starts"] += 1
            for job in started:
                self.queues.remove(job)
        for jid in preempted:
            self.queues.add(view.job(jid))
        if preempted:
            out.append(Timer(view.now, "requeue"))
        return out

    def stats(self):
        return {**self.n, "order": self.order, "quota": dict(getattr(self, "quota", {}))}
