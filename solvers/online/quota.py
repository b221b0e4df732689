"""Quota sharing with HiveD's rule: a within-quota job goes to the node with the fewest low-priority GPUs.

Each tenant has a quota in GPUs (``placement.models.hived_vc.VCAssignment.gpus``; default the node-level
fit to the Philly trace, the same GPUs per tenant as HiveD's VCs). Per tenant the jobs are taken
in order (FIFO, or ``order="tiresias"``: least attained GPU-service first).

- A job within its tenant's quota (guaranteed GPUs in use + its GPUs <= quota) is high
  priority and needs GPU affinity: a job of at most 8 GPUs on one machine, a larger one on
  ``ceil(g/8)`` whole machines. ``rule="fewest-low"`` (this class, ``quota``; the rule HiveD
  §3.3 gives its own high-priority cells): the machine with the fewest GPUs of low-priority jobs
  among those whose idle plus low-priority GPUs suffice, then best fit (fewest such GPUs);
  the low-priority jobs on the GPUs taken are preempted. ``rule="idle-first"``
  (:class:`placement.solvers.online.yarn_cs.YarnCS`, ``yarn-cs``, §5.1's baseline): idle GPUs first, best
  fit (the machine with the fewest idle GPUs that suffice); only when no machine has enough
  idle GPUs for the affinity does it preempt low-priority jobs: up to a node, the whole jobs
  of the fewest GPUs (then fewest jobs) that free enough GPUs on one machine; above a node, the
  fully usable machines with the fewest low-priority GPUs. Without affinity the job waits: this is where the sharing anomaly comes from (quota
  left, but the free GPUs are fragmented).
- A job beyond its quota runs as a preemptible low-priority job on idle GPUs (same affinity
  rule, best fit), after all high-priority starts; per tenant the first that fails blocks the
  rest.
- Soft affinity (option ``soft``: job ids; HiveD §5.2, Figure 9): such a job relaxes its affinity
  when it cannot be satisfied, at the same speed. A within-quota one that finds no placement
  with affinity (preemption included) takes any GPUs (:func:`~placement.solvers.online.tenants.spread_place`:
  idle ones first, then low-priority ones, whose jobs are preempted); a low-priority one takes
  any idle GPUs. A hard job's failure then no longer stops the tenant's larger soft jobs.
"""

from __future__ import annotations

import numpy as np
from placement.models import hived_vc as hv
from placement.solvers.online.tenants import (
    AssignmentOption,
    Order,
    Queues,
    SoftOption,
    check_order,
    check_soft,
    quotas,
    spread_place,
)

from placement.sim.placement import affinity_place
from placement.sim.policy import Policy, Preempt, Start, Timer

__all__ = ["QuotaSharing"]

NODE = hv.LEVEL_GPUS[hv.K]


_TABLES: dict[int, np.ndarray] = {}   # k -> every non-empty subset of k items (rows of 0/1)
_SIZES: dict[int, np.ndarray] = {}    # k -> each subset's size


def _subsets(k: int) -> np.ndarray:
    """Every non-empty subset of ``k`` items as 0/1 rows, in the order of
    ``itertools.combinations(range(k), n)`` for n = 1 .. k (sizes in ``_SIZES[k]``)."""
    if k not in _SIZES:
        from itertools import combinations

        rows = [c for n in range(1, k + 1) for c in combinations(range(k), n)]
        table = np.zeros((len(rows), k), dtype=np.int64)
        for i, c in enumerate(rows):
            table[i, list(c)] = 1
        _SIZES[k] = table.sum(axis=1)
        _TABLES[k] = table
    return _TABLES[k]


class QuotaSharing(Policy):
    """Quota sharing, within-quota jobs on the node with the fewest low-priority GPUs (HiveD §3.3's rule).

    Module doc. Options: ``assignment`` (``placement simulate``
    fits one with node-level cells when it is not given), ``order`` ("fifo" | "tiresias"),
    ``soft`` (ids of the jobs whose affinity is soft)."""

    name = "quota"
    rule = "fewest-low"

    needs = {"assignment": "vc-assignment"}
    fit_levels = "node"

    def __init__(self, assignment: AssignmentOption = None, order: Order = "fifo", soft: SoftOption = ()):
        self.assignment_arg, self.order = assignment, check_order(order)
        self.soft = check_soft(soft)
        self.used: dict[str, int] = {}
        self.high: dict[str, str] = {}
        self.low: dict[str, tuple[int, ...]] = {}
        self.guaranteed_ever: set[str] = set()  # jobs started within quota (fragmentation measures)
        self.high_runs: set[tuple[str, float]] = set()  # (job, start time) of each within-quota run
        self.queues = Queues()
        self.n = {"high_starts": 0, "low_starts": 0, "preempted_jobs": 0, "preempted_gpus": 0,
                  "affinity_waits": 0, "relaxed_starts": 0, "calls": 0}

    def setup(self, view, seed):
        self.assign, self.quota = quotas(self.assignment_arg, view.cluster)
        self.low_mask = np.zeros(view.cluster.n_gpus, dtype=bool)
        self.owner = np.full(view.cluster.n_gpus, "", dtype=object)

    def _place_high(self, cluster, free, gpus):
        """GPUs with affinity for a within-quota job under ``self.rule`` (module doc)."""
        if self.rule == "idle-first":
            got = affinity_place(cluster, free, gpus)
            if got is not None or gpus > NODE:
                return got if got is not None else affinity_place(cluster, free | self.low_mask, gpus,
                                                                  self.low_mask)
            return self._fewest_preempted(cluster, free, gpus)
        return affinity_place(cluster, free | self.low_mask, gpus, self.low_mask)

    def _fewest_preempted(self, cluster, free, gpus):
        """One machine's GPUs for a job of at most a node, preempting the low-priority jobs
        (whole jobs) of the fewest GPUs, then the fewest jobs, then the machine with the fewest
        idle GPUs, then the lowest index (YARN-CS: preempt for the affinity the job needs).
        Among the sets of one machine with the same GPUs and jobs, the first in the order of
        ``itertools.combinations`` over the sorted job ids, by size (:func:`_subsets`)."""
        first = np.asarray(cluster.machine_first)
        # idle and low-priority GPUs per machine at once; only machines with enough of both are read
        room = np.add.reduceat((free | self.low_mask)[:int(first[-1]) + NODE].astype(np.int64), first)
        best = None
        for m in np.flatnonzero(room >= gpus).tolist():
            lo, hi = int(first[m]), int(first[m]) + NODE
            idle = np.flatnonzero(free[lo:hi]) + lo
            low = np.flatnonzero(self.low_mask[lo:hi]) + lo
            here: dict[str, list[int]] = {}
            for g in low.tolist():
                here.setdefault(self.owner[g], []).append(g)
            names = sorted(here)
            sets = _subsets(len(names))
            local = sets @ np.array([len(here[v]) for v in names])
            cost = sets @ np.array([len(self.low[v]) for v in names])
            ok = np.flatnonzero(idle.size + local >= gpus)
            if not ok.size:
                continue
            # the cheapest set (GPUs, then jobs; ties: the first in the enumeration order)
            i = int(ok[np.argmin(cost[ok] * (NODE + 1) + _SIZES[len(names)][ok])])
            key = (int(cost[i]), int(_SIZES[len(names)][i]), int(idle.size), m)
            if best is None or key < best[0]:
                taken = sorted(g for j, v in enumerate(names) if sets[i, j] for g in here[v])
                # idle GPUs first; every victim of a cheapest set gives at least one GPU
                best = (key, tuple(sorted(idle.tolist() + taken[:gpus - idle.size])))
        return None if best is None else best[1]

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
            fail_soft = 1 << 30  # smallest GPU number without any GPUs now (soft affinity)
            started = []
            smallest = self.queues.min_gpus(t)   # no pending job of the tenant is smaller
            for job in self.queues.ordered(view, t, self.order):
                left = self.quota.get(t, 0) - self.used.get(t, 0)
                if left < smallest or (fail <= smallest and not self.soft) or fail_soft <= smallest:
                    break
                soft = job.id in self.soft
                if job.gpus > left or job.gpus >= (fail_soft if soft else fail):
                    continue  # beyond quota (low priority, below) or no affinity for its size
                gpus = self._place_high(view.cluster, free, job.gpus) if job.gpus < fail else None
                if gpus is None and soft:
                    gpus = spread_place(free | self.low_mask, job.gpus, self.low_mask)
                    if gpus is not None:
                        self.n["relaxed_starts"] += 1
                if gpus is None:
                    self.n["affinity_waits"] += 1
                    fail = min(fail, job.gpus)
                    if soft:
                        fail_soft = job.gpus
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
                self.high_runs.add((job.id, view.now))
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
                if gpus is None and job.id in self.soft and job.gpus <= n_free:
                    gpus = spread_place(free, job.gpus)
                    self.n["relaxed_starts"] += 1
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
        return {**self.n, "order": self.order, "rule": self.rule, "quota": dict(getattr(self, "quota", {}))}
