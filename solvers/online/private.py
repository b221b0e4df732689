"""Private clusters (HiveD §5.1's baseline): each tenant alone on GPUs of its own.

Each tenant's VC cells (``placement.models.hived_vc.VCAssignment``; given as data; ``placement simulate`` fits node-level
cells to the Philly trace when none is given) are bound once to physical cells by :class:`placement.solvers.buddy.BuddyAllocator` and the
tenant runs only there, with no sharing and no preemption. Jobs per tenant in order (FIFO, or
``order="tiresias"``), every job that fits starts; placement with GPU affinity, best fit
(:func:`placement.sim.placement.affinity_place`). This is the yardstick of Figure 7. A job whose
affinity is soft (option ``soft``: job ids; HiveD §5.2, Figure 9) takes any of its tenant's free
GPUs when no placement with affinity exists (:func:`~placement.solvers.online.tenants.spread_place`),
at the same speed.
"""

from __future__ import annotations

import numpy as np
from placement.models import hived_vc as hv
from placement.solvers.buddy import BuddyAllocator
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
from placement.sim.policy import Policy, Start

__all__ = ["Private"]


class Private(Policy):
    """Private clusters: each tenant alone on its own bound cells (HiveD §5.1's yardstick).

    Options: ``assignment`` (node-level cells fitted by ``placement simulate`` when not given), ``order``,
    ``soft`` (ids of the jobs whose affinity is soft)."""

    name = "private"

    needs = {"assignment": "vc-assignment"}
    fit_levels = "node"

    def __init__(self, assignment: AssignmentOption = None, order: Order = "fifo", soft: SoftOption = ()):
        self.assignment_arg, self.order = assignment, check_order(order)
        self.soft = check_soft(soft)
        self.n = {"starts": 0, "calls": 0}
        self.guaranteed_ever: set[str] = set()  # every job (all are high priority here)
        self.queues = Queues()

    def setup(self, view, seed):
        self.assign, _ = quotas(self.assignment_arg, view.cluster)
        inst = hv.to_instance(self.assign)
        alloc = BuddyAllocator(inst)
        self.mine: dict[str, np.ndarray] = {}
        for vi, v in enumerate(inst.vcs):
            mask = np.zeros(view.cluster.n_gpus, dtype=bool)
            for k in range(hv.K, 0, -1):
                for _ in range(self.assign.cells[v.name][k - 1]):
                    i = alloc.allocate(vi, 0, k).cell[2]
                    mask[i * hv.LEVEL_GPUS[k]:(i + 1) * hv.LEVEL_GPUS[k]] = True
            self.mine[v.name] = mask

    def schedule(self, view, events):
        self.n["calls"] += 1
        self.queues.events(view, events)
        free = view.free.copy()
        out = []
        for t in self.queues.tenants():
            mine = self.mine.get(t)
            if mine is None:
                continue
            usable = free & mine
            n_usable = int(usable.sum())
            fail = 1 << 30  # smallest GPU number that failed: larger jobs fail too
            started = []
            for job in self.queues.ordered(view, t, self.order):
                if n_usable == 0 or fail == 1:
                    break
                soft = job.id in self.soft
                if (job.gpus >= fail and not soft) or job.gpus > n_usable:
                    continue
                gpus = affinity_place(view.cluster, usable, job.gpus) if job.gpus < fail else None
                if gpus is None and soft:
                    gpus = spread_place(usable, job.gpus)
                if gpus is None:
                    fail = job.gpus
                    continue
                usable[list(gpus)] = False
                n_usable -= job.gpus
                free[list(gpus)] = False
                out.append(Start(job.id, gpus))
                started.append(job)
                self.n["starts"] += 1
                self.guaranteed_ever.add(job.id)
            for job in started:
                self.queues.remove(job)
        return out

    def stats(self):
        return {**self.n, "order": self.order,
                "gpus": {t: int(m.sum()) for t, m in getattr(self, "mine", {}).items()}}
