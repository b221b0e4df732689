"""Per-tenant building blocks shared by the VC policies (HiveD, quota sharing, private clusters).

Terms
-----
VC assignment
    :class:`placement.models.hived_vc.VCAssignment`: per tenant, reserved cells per level (HiveD §3.2).
    A policy receives it as data (``assignment=``); ``placement simulate`` fits one to the
    shipped Philly trace when none is given (:mod:`placement.app.policy_data`).
quota
    A tenant's GPUs under its assignment (:meth:`VCAssignment.gpus`).

Contents: :func:`table1_assignment` (HiveD Table 1's production quotas mapped onto a trace's
tenants), :func:`fit_assignment` (the exact VC fit of :mod:`placement.models.hived_vc` to a list of
jobs), :func:`check_cluster`, :func:`as_assignment`, :func:`quotas`, :func:`check_order`,
:class:`Queues` (per-tenant pending jobs), :func:`order_jobs`, :func:`spread_place` (GPUs without
affinity, for a job whose affinity is soft: HiveD §5.2, Figure 9).
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from typing import Literal

import numpy as np
from placement.models import hived_vc as hv

from placement.errors import InstanceError
from placement.options import NonNegInt

__all__ = ["AssignmentOption", "Order", "fit_assignment", "table1_assignment", "oversize_jobs", "check_cluster", "check_job_type", "as_assignment", "check_assignment", "quotas", "check_order", "Queues", "order_jobs",
           "ORDERS", "spread_place", "SoftOption", "check_soft"]

G = hv.LEVEL_GPUS
ORDERS = ("fifo", "tiresias")
# The options the tenant schemes take: a VC assignment as tenant -> cells per level (GPU, PCIe
# switch, socket, node: HiveD §5.1's levels) or built, and the order of each tenant's queue.
Cells = tuple[NonNegInt, NonNegInt, NonNegInt, NonNegInt]
AssignmentOption = Mapping[str, Cells] | hv.VCAssignment | None
Order = Literal["fifo", "tiresias"]
# Ids of the jobs whose GPU affinity is soft (HiveD §5.2, Figure 9): relaxed when it cannot be
# satisfied, at the same training speed (the paper's most optimistic assumption).
SoftOption = tuple[str, ...]


def check_soft(soft) -> frozenset[str]:
    """The ``soft`` option as a set of job ids: a list, tuple or set of strings (one string alone is
    refused: it is not a list of ids), else one :class:`InstanceError` naming ``soft``."""
    if isinstance(soft, (str, bytes)) or not isinstance(soft, (list, tuple, set, frozenset)) \
            or not all(isinstance(j, str) for j in soft):
        raise InstanceError("soft", f"must be a list of job ids, got {soft!r}")
    return frozenset(soft)


def spread_place(usable: np.ndarray, gpus: int, cost: np.ndarray | None = None) -> tuple[int, ...] | None:
    """Any ``gpus`` GPUs of the ``usable`` mask, without affinity (a job whose affinity is soft,
    relaxed because it cannot be satisfied: HiveD §5.2, Figure 9): idle GPUs (not in ``cost``)
    before costly ones, and within each, the 8-GPU nodes with the most such GPUs first (the
    fewest nodes), then node index, lowest GPUs first. ``None`` when fewer are usable."""
    if int(usable.sum()) < gpus:
        return None
    out: list[int] = []
    masks = [usable] if cost is None else [usable & ~cost, usable & cost]
    for m in masks:
        per = m.reshape(-1, G[hv.K]).sum(axis=1)
        for node in np.lexsort((np.arange(per.size), -per)):
            if len(out) == gpus or per[node] == 0:
                break
            ids = np.flatnonzero(m[node * G[hv.K]:(node + 1) * G[hv.K]])[:gpus - len(out)] + node * G[hv.K]
            out.extend(int(x) for x in ids)
    return tuple(sorted(out))


def fit_assignment(jobs, n_nodes: int, levels: str = "multi", name: str = "the trace") -> hv.VCAssignment:
    """The VC assignment fitted to ``jobs`` on ``n_nodes`` 8-GPU nodes (:mod:`placement.models.hived_vc`):
    multi-level cells with the node-level fit's GPUs per tenant (``levels="multi"``), or
    node-level cells only (``levels="node"``). :class:`InstanceError` when none fits."""
    if levels not in ("multi", "node"):
        raise InstanceError("levels", f"must be 'multi' or 'node', not {levels!r}")
    largest: dict[str, int] = {}
    for j in jobs:
        largest[j.tenant] = max(largest.get(j.tenant, 0), j.gpus)
    demand = hv.demand_from_jobs(jobs)
    if levels == "node":
        res = hv.solve(demand, n_nodes, levels=(hv.K,), largest=largest)
    else:
        res = hv.node_level_then_multi(demand, n_nodes, largest=largest)[1]
    if res.solution is None:
        raise InstanceError("assignment", f"no VC assignment of {name} fits {n_nodes} nodes ({res.status})")
    return res.solution


def table1_assignment(jobs, n_nodes: int, mapping: Mapping[str, str] | None = None
                      ) -> tuple[hv.VCAssignment, list[dict]]:
    """HiveD Table 1's quotas on ``n_nodes`` 8-GPU nodes, node-level cells only (§5.2: "We assign
    each tenant a set of node-level cells"), and one row per tenant saying how.

    ``mapping`` (trace tenant -> Table 1 row) is the identification made once over the whole trace
    (:func:`placement.hived.table1.identify_tenants`): every mapped tenant holds its row's share,
    present in ``jobs`` or not, so every window of the trace gets the same quotas, and a tenant of
    ``jobs`` without a row holds none. Without ``mapping``, the tenants of ``jobs`` are mapped by
    job-size mix (:func:`placement.hived.table1.map_tenants`) and the rows without a tenant give up
    their share. Each row gets its share of the nodes (largest remainder, the rows' nodes sum to
    ``n_nodes``; ties to the earlier row); a row holding several trace tenants splits its nodes in
    proportion to their GPU-time (largest remainder again). The fitted view's largest-job rule
    (every tenant holds its largest job) is capped at the share: a tenant's quota is never raised
    above its Table 1 nodes, so a job larger than the quota can only run as a low-priority
    (opportunistic) job in the shared schemes and cannot run at all in its private cluster
    (:func:`oversize_jobs`; the reproduction leaves those jobs out of the private cluster and of
    every tenant comparison). Rows: tenant, row (``-`` without one), share, nodes, gpus, largest
    (GPUs of its largest job), oversize (its jobs above the quota), demand_gpus (GPU-time over
    the jobs' span)."""
    from placement.hived.table1 import map_tenants, row_shares

    if n_nodes < 1:
        raise InstanceError("nodes", f"must be at least 1, not {n_nodes}")
    jobs = list(jobs)
    if mapping is None:
        mapping = map_tenants(jobs)
    elif not mapping:
        raise InstanceError("mapping", "must map at least one tenant onto a Table 1 row")
    shares = row_shares(mapping)
    row_nodes = _largest_remainder({r: s * n_nodes for r, s in shares.items()}, n_nodes)
    gpu_time: dict[str, float] = dict.fromkeys(mapping, 0.0)
    largest: dict[str, int] = dict.fromkeys(mapping, 0)
    for j in jobs:
        gpu_time[j.tenant] = gpu_time.get(j.tenant, 0.0) + j.gpus * float(j.duration)
        largest[j.tenant] = max(largest.get(j.tenant, 0), j.gpus)
    nodes: dict[str, int] = dict.fromkeys(gpu_time, 0)
    for r, n in row_nodes.items():
        ts = sorted(t for t in mapping if mapping[t] == r)
        tot = sum(gpu_time[t] for t in ts)
        want = {t: (n * gpu_time[t] / tot if tot > 0 else n / len(ts)) for t in ts}
        nodes.update(_largest_remainder(want, n))
    cells = {t: (0, 0, 0, nodes[t]) for t in sorted(nodes)}
    a = hv.VCAssignment(n_nodes, cells)
    span = ((max(j.submit for j in jobs) - min(j.submit for j in jobs)) if jobs else 0.0) or 1.0
    rows = [{"tenant": t, "row": mapping.get(t, "-"), "share": shares.get(mapping.get(t, ""), 0.0),
             "nodes": nodes[t], "gpus": a.gpus(t), "largest": largest[t],
             "oversize": sum(1 for j in jobs if j.tenant == t and j.gpus > a.gpus(t)),
             "demand_gpus": gpu_time[t] / span} for t in sorted(nodes)]
    return a, rows


def _largest_remainder(want: Mapping[str, float], total: int) -> dict[str, int]:
    """Integers summing to ``total`` near ``want`` (Hamilton: floors, then the largest remainders;
    ties to the earlier key)."""
    base = {k: int(np.floor(v)) for k, v in want.items()}
    left = total - sum(base.values())
    order = sorted(want, key=lambda k: (-(want[k] - base[k]), list(want).index(k)))
    for k in order[:max(0, left)]:
        base[k] += 1
    return base


def oversize_jobs(jobs, assignment: hv.VCAssignment) -> set[str]:
    """Ids of the jobs larger than their tenant's quota (or of a tenant without a VC): they never
    fit the tenant's cells, so they never run guaranteed, nor in a private cluster."""
    return {j.id for j in jobs if j.gpus > (assignment.gpus(j.tenant) if j.tenant in assignment.cells else 0)}


def check_cluster(cluster) -> int:
    """The number of nodes; :class:`InstanceError` unless the machines are 8-GPU nodes numbered
    contiguously (HiveD's cells)."""
    mg = np.asarray(cluster.machine_gpus)
    first = np.asarray(cluster.machine_first)
    if not (mg == G[hv.K]).all() or not (first == np.arange(len(mg)) * G[hv.K]).all():
        raise InstanceError("cluster", "HiveD needs 8-GPU machines numbered contiguously")
    return len(mg)


def check_job_type(cluster, job) -> None:
    """The tenant schemes' cells form one chain of one GPU type (HiveD §3): a job asking for a GPU
    type on a cluster of several types is refused in one line, not placed on the wrong type.
    (On a one-type cluster a typed job either matches it or the engine logs it unschedulable.)"""
    if job.gpu_type is not None and len(cluster.types) > 1:
        raise InstanceError(f"job {job.id}: gpu_type",
                            f"the tenant schemes (private, yarn-cs, quota, hived, hived-static) model one GPU type; "
                            f"this cluster has {len(cluster.types)} ({', '.join(map(str, cluster.types))}): "
                            "run typed jobs with fifo, dally, tiresias, gandiva, mast or federated")


def as_assignment(assignment, n_nodes: int) -> hv.VCAssignment:
    """``assignment`` as a :class:`VCAssignment` (from itself or a mapping tenant -> cells per level)."""
    if assignment is None:
        raise InstanceError("assignment", "is required: a VC assignment (tenant -> cells per level); "
                            "placement simulate fits one to the Philly trace when none is given")
    if isinstance(assignment, hv.VCAssignment):
        a = assignment
    elif isinstance(assignment, Mapping):
        a = hv.VCAssignment(n_nodes, {str(t): tuple(int(x) for x in c) for t, c in assignment.items()})
    else:
        raise InstanceError("assignment", "must be a VCAssignment or a mapping tenant -> 4 cell counts")
    return check_assignment(a, n_nodes)


def check_assignment(a: hv.VCAssignment, n_nodes: int) -> hv.VCAssignment:
    """The assignment must name a tenant, be for this cluster's nodes, and fit them (HiveD §3.2's
    feasibility: every VC's cells can be carved from the physical cells at once)."""
    from placement.hived.feasibility import is_feasible

    if not a.cells:
        raise InstanceError("assignment", "must name at least one tenant (tenant -> cells per level)")
    if a.n_nodes != n_nodes:
        raise InstanceError("assignment", f"is for {a.n_nodes} nodes, the cluster has {n_nodes}")
    if a.total_gpus > n_nodes * G[hv.K] or not is_feasible(hv.to_instance(a)):
        raise InstanceError("assignment", f"does not fit the cluster's {n_nodes} nodes of {G[hv.K]} GPUs "
                            f"({a.total_gpus} GPUs of cells asked for)")
    return a


def quotas(assignment, cluster) -> tuple[hv.VCAssignment, dict[str, int]]:
    """The assignment checked against ``cluster`` and each tenant's quota in GPUs."""
    a = as_assignment(assignment, check_cluster(cluster))
    return a, {t: a.gpus(t) for t in a.cells}


def check_order(order: str) -> str:
    """A per-tenant queue order: ``"fifo"`` or ``"tiresias"``."""
    if order not in ORDERS:
        raise InstanceError("order", f"must be 'fifo' or 'tiresias', not {order!r}")
    return order


class Queues:
    """Per-tenant pending jobs kept incrementally in (submit, id) order (no scan of the whole
    pending list per call): ``add`` on submit (``fresh``: from :meth:`events`) and on preemption,
    ``remove`` on start. Requeued jobs are kept apart per tenant, so that the Tiresias order reads
    the attained service of those only (a job never started has none)."""

    def __init__(self):
        self.q: dict[str, list[tuple[float, str]]] = {}
        self.jobs: dict[str, object] = {}
        self.sizes: dict[str, dict[int, int]] = {}   # tenant -> GPUs -> pending jobs of that size
        self.requeued: dict[str, set[str]] = {}      # tenant -> pending jobs added back after a preemption

    def add(self, job, fresh: bool = False) -> None:
        bisect.insort(self.q.setdefault(job.tenant, []), (job.submit, job.id))
        self.jobs[job.id] = job
        sz = self.sizes.setdefault(job.tenant, {})
        sz[job.gpus] = sz.get(job.gpus, 0) + 1
        if not fresh:
            self.requeued.setdefault(job.tenant, set()).add(job.id)

    def remove(self, job) -> None:
        q = self.q[job.tenant]
        i = bisect.bisect_left(q, (job.submit, job.id))
        del q[i]
        del self.jobs[job.id]
        sz = self.sizes[job.tenant]
        sz[job.gpus] -= 1
        if not sz[job.gpus]:
            del sz[job.gpus]
        self.requeued.get(job.tenant, set()).discard(job.id)

    def min_gpus(self, tenant: str) -> int | None:
        """The fewest GPUs a pending job of ``tenant`` asks for (``None``: none pending)."""
        sz = self.sizes.get(tenant)
        return min(sz) if sz else None

    def events(self, view, events) -> None:
        for ev in events:
            if ev.kind == "submit" and ev.job_id is not None:
                job = view.job(ev.job_id)
                check_job_type(view.cluster, job)
                self.add(job, fresh=True)

    def tenants(self):
        return [t for t, q in self.q.items() if q]

    def ordered(self, view, tenant: str, order: str):
        """``tenant``'s pending jobs in ``order`` (:func:`order_jobs`), lazily: under Tiresias the jobs
        without attained service (every job never started) come first in (submit, id) order, then
        the others by attained GPU-service, the same order as sorting the whole queue."""
        if order == "fifo":
            return (self.jobs[j] for _, j in self.q[tenant])
        return self._least_attained(view, tenant)

    def _least_attained(self, view, tenant: str):
        key = {}
        for j in self.requeued.get(tenant, ()):
            k = view.history(j).work_done * self.jobs[j].gpus
            if k > 0:
                key[j] = k
        for _, j in self.q[tenant]:
            if j not in key:
                yield self.jobs[j]
        for j in sorted(key, key=lambda j: (key[j], self.jobs[j].submit, j)):
            yield self.jobs[j]


def order_jobs(view, jobs, order: str):
    if order == "fifo":
        return jobs
    return sorted(jobs, key=lambda j: (view.history(j.id).work_done * j.gpus, j.submit, j.id))


