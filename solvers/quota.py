"""Quota-only baseline (YARN-CS-like, HiveD §2.2 and §5): GPU counts per tenant, no cells.

Terms
-----
quota
    A tenant's number of GPUs (by default the GPUs of its VC's reserved and
    pinned cells in the chain). A guaranteed job is admitted while the tenant's
    guaranteed GPUs plus the job's stay within the quota; that is the only
    promise a quota system makes.
affinity
    A job of ``g`` GPUs needs ``g`` free GPUs inside one cell of the smallest
    level holding ``g`` GPUs (the same rule as the buddy allocator).
packing
    Like YARN-CS, a job goes to the fullest level-``L`` cell that still has room
    (best fit, ties to the lowest index), on its lowest-numbered free GPUs.
preemption
    A guaranteed job that finds no room may preempt low-priority jobs inside the
    one level-``L`` cell where the fewest low-priority GPUs must go (the refined
    YARN-CS policy of §5: preempt by the desired affinity).
sharing anomaly
    A tenant within its quota whose job still cannot get its affinity because
    other tenants' GPUs are spread over the cells (:meth:`QuotaAllocator.allocate`
    returns ``None``). With cells (the buddy allocator) a legal request never waits.
"""

from __future__ import annotations

import numpy as np

from placement.hived.cells import HivedInstance

__all__ = ["QuotaAllocator", "OverQuota"]


class OverQuota(ValueError):
    """A guaranteed job beyond the tenant's GPU quota."""


class QuotaAllocator:
    """GPU-count quotas and best-fit packing over one chain's GPUs."""

    def __init__(self, inst: HivedInstance, chain: int = 0, quotas: dict[int, int] | None = None):
        self.inst = inst
        self.ch = ch = inst.chains[chain]
        if quotas is None:
            quotas = {}
            for t, v in enumerate(inst.vcs):
                g = sum(n * ch.gpus[k] for (c, k), n in v.reserved.items() if c == chain)
                g += sum(ch.gpus[inst.pinned[p].level] for p in v.pinned if inst.pinned[p].chain == chain)
                quotas[t] = g
        self.quota = dict(quotas)
        self.used = dict.fromkeys(self.quota, 0)
        self.owner = np.full(ch.total_gpus, -1, dtype=np.int64)   # job slot per GPU, -1 free
        self.low = np.zeros(ch.total_gpus, dtype=bool)             # GPU held by a low-priority job
        self.jobs: dict[object, tuple[int, np.ndarray, bool]] = {}  # job -> (tenant, GPUs, low)
        self._slot: dict[object, int] = {}
        self._next = 0

    def _cells(self, level: int) -> tuple[np.ndarray, np.ndarray]:
        """Free and low-priority GPUs per level-``level`` cell."""
        g = self.ch.gpus[level]
        free = (self.owner < 0).reshape(-1, g).sum(axis=1)
        low = self.low.reshape(-1, g).sum(axis=1)
        return free, low

    def allocate(self, tenant: int, gpus: int, job: object, low: bool = False) -> tuple[np.ndarray, list] | None:
        """Place a job; returns (GPU indices, preempted low-priority jobs) or ``None`` (no affinity).

        A guaranteed job beyond the quota raises :class:`OverQuota`.
        """
        if job in self.jobs:
            raise ValueError(f"job {job!r} is already placed")
        if not low and self.used[tenant] + gpus > self.quota[tenant]:
            raise OverQuota(f"tenant {tenant} would use {self.used[tenant] + gpus} GPUs, quota {self.quota[tenant]}")
        level = self.ch.level_for_gpus(gpus)
        size = self.ch.gpus[level]
        free, lowc = self._cells(level)
        fits = np.flatnonzero(free >= gpus)
        preempted: list = []
        if len(fits):
            cell = int(fits[np.argmin(free[fits])])  # best fit: fullest cell with room (argmin: lowest index)
        else:
            if low:
                return None
            can = np.flatnonzero(free + lowc >= gpus)
            if not len(can):
                return None
            cell = int(can[np.argmin(lowc[can])])
            span = slice(cell * size, cell * size + size)
            victims = sorted({j for j, s in self._slot.items() if self.jobs[j][2]
                              and np.any(self.owner[span] == s)},
                             key=lambda j: -len(self.jobs[j][1]))
            for j in victims:
                if (self.owner[span] < 0).sum() >= gpus:
                    break
                self.release(j)
                preempted.append(j)
        span = np.arange(cell * size, cell * size + size)
        chosen = span[self.owner[span] < 0][:gpus]
        slot = self._next
        self._next += 1
        self._slot[job] = slot
        self.owner[chosen] = slot
        self.low[chosen] = low
        self.jobs[job] = (tenant, chosen, low)
        if not low:
            self.used[tenant] += gpus
        return chosen, preempted

    def release(self, job: object) -> None:
        tenant, gpus, low = self.jobs.pop(job)
        del self._slot[job]
        self.owner[gpus] = -1
        self.low[gpus] = False
        if not low:
            self.used[tenant] -= len(gpus)

    def busy_per_node(self) -> np.ndarray:
        """Busy GPUs per node-level cell."""
        return (self.owner >= 0).reshape(-1, self.ch.gpus[self.ch.node_level]).sum(axis=1)
