"""Placement helpers shared by policies: where a job's GPUs go, given what is free.

Pure functions of (cluster or :class:`Shape`, free mask, job): no state, vectorized with numpy.

Terms
-----
tier
    Where a placement lies (Dally §3): ``"machine"`` (one machine), ``"rack"`` (one rack,
    several machines), ``"network"`` (several racks).

Contents
--------
:func:`usable_mask`             free GPUs of a job's type.
:func:`first_fit_consolidated`  Tiresias-style consolidated first fit (FIFO, HiveD's low priority).
:class:`Shape`                  machine / rack numbering per GPU, tiers of a GPU set.
:func:`choose_gpus`             best fit at a given tier (Dally, Tiresias, Gandiva).
:func:`affinity_place`          HiveD §5.1's GPU affinity: one machine up to 8 GPUs, else whole
                                machines (quota sharing, private clusters).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .cluster import Cluster

__all__ = ["usable_mask", "first_fit_consolidated", "Shape", "choose_gpus", "affinity_place", "MACHINE", "RACK",
           "NETWORK"]

MACHINE, RACK, NETWORK = "machine", "rack", "network"
NODE_GPUS = 8  # HiveD's node cell (§5.1: GPU affinity means one 8-GPU node, or whole nodes)


def usable_mask(cluster: Cluster, free: np.ndarray, gpu_type: str | None) -> np.ndarray:
    """Free GPUs of the job's type (any type when None)."""
    return free if gpu_type is None else free & (cluster.gpu_type == gpu_type)


def _take(cluster: Cluster, mask: np.ndarray, machines: np.ndarray, k: int) -> tuple[int, ...]:
    """k GPUs from ``machines`` (in the given order) taking each machine's free GPUs lowest first."""
    out: list[int] = []
    for m in machines:
        f = int(cluster.machine_first[m])
        ids = np.flatnonzero(mask[f:f + int(cluster.machine_gpus[m])]) + f
        out.extend(ids[: k - len(out)].tolist())
        if len(out) == k:
            break
    return tuple(out)


def first_fit_consolidated(cluster: Cluster, free: np.ndarray, gpus: int,
                           gpu_type: str | None = None) -> tuple[int, ...] | None:
    """GPUs for a job of ``gpus`` GPUs, consolidated first (Tiresias-style, Dally §3.2):
    the first machine (lowest index) with enough free GPUs; else the first rack, then the first
    dynamic cluster, then the whole cluster that has enough, taking machines with the most free
    GPUs first inside it (fewest machines; ties by index). None when fewer are free."""
    mask = usable_mask(cluster, free, gpu_type)
    per_machine = np.add.reduceat(mask.astype(np.int64), cluster.machine_first)
    if per_machine.sum() < gpus:
        return None
    ok = np.flatnonzero(per_machine >= gpus)
    if ok.size:
        return _take(cluster, mask, ok[:1], gpus)
    first = cluster.machine_first
    levels = (cluster.machine_rack, cluster.dcluster[first], np.zeros(len(first), dtype=np.int64))
    for groups in levels:
        per_group = np.bincount(groups, weights=per_machine)
        ok = np.flatnonzero(per_group >= gpus)
        if ok.size:
            members = np.flatnonzero(groups == ok[0])
            order = members[np.argsort(-per_machine[members], kind="stable")]
            return _take(cluster, mask, order, gpus)
    return None


def choose_gpus(free: np.ndarray, machine: np.ndarray, rack: np.ndarray, gpus: int, tier: str) -> np.ndarray | None:
    """GPU ids for a placement of ``gpus`` GPUs at ``tier`` (our rule; the paper does not say).

    Best fit, to keep large holes for later jobs: at ``"machine"`` the machine
    with the fewest free GPUs that still holds the job; at ``"rack"`` the rack
    with the fewest free GPUs that holds it, filled from its fullest-free
    machines (fewest machines spanned); at ``"network"`` racks with the most
    free GPUs first, each filled the same way. Ties go to the lower index.
    Returns ``None`` when the tier cannot hold the job.
    """
    idx = np.flatnonzero(free)
    if gpus > idx.size:
        return None
    m_of, r_of = machine[idx], rack[idx]
    if tier == MACHINE:
        ids, counts = np.unique(m_of, return_counts=True)
        ok = counts >= gpus
        if not ok.any():
            return None
        best = ids[ok][np.argmin(counts[ok])]
        return np.sort(idx[m_of == best][:gpus])
    if tier == RACK:
        ids, counts = np.unique(r_of, return_counts=True)
        ok = counts >= gpus
        if not ok.any():
            return None
        best = ids[ok][np.argmin(counts[ok])]
        return _fill(idx[r_of == best], machine, gpus)
    ids, counts = np.unique(r_of, return_counts=True)
    order = ids[np.lexsort((ids, -counts))]
    taken: list[int] = []
    for r in order:
        need = gpus - len(taken)
        if need <= 0:
            break
        pool = idx[r_of == r]
        taken.extend(_fill(pool, machine, min(need, pool.size)).tolist())
    return np.sort(np.array(taken[:gpus]))


def _fill(pool: np.ndarray, machine: np.ndarray, gpus: int) -> np.ndarray:
    """``gpus`` GPUs of ``pool`` from the machines with the most free GPUs first."""
    m = machine[pool]
    ids, counts = np.unique(m, return_counts=True)
    order = ids[np.lexsort((ids, -counts))]
    out: list[int] = []
    for mm in order:
        out.extend(pool[m == mm].tolist())
        if len(out) >= gpus:
            break
    return np.sort(np.array(out[:gpus]))


@dataclass(frozen=True)
class Shape:
    """The machine / rack structure the policies need, from a cluster's per-GPU arrays.

    ``machine[g]`` and ``rack[g]`` number GPU g's machine and rack (0-based,
    dense). Tiers follow Dally §3: one machine, one rack, else the network.
    """

    machine: np.ndarray
    rack: np.ndarray
    gpus_per_machine: int
    gpus_per_rack: int
    machines_per_rack: int
    racks: int
    total: int

    @classmethod
    def from_arrays(cls, machine, rack) -> Shape:
        machine = np.asarray(machine, dtype=np.int64)
        rack = np.asarray(rack, dtype=np.int64)
        _, machine = np.unique(machine, return_inverse=True)
        _, rack = np.unique(rack, return_inverse=True)
        per_m = np.bincount(machine)
        per_r = np.bincount(rack)
        mpr = max(len(np.unique(machine[rack == r])) for r in range(len(per_r)))
        return cls(machine, rack, int(per_m.max()), int(per_r.max()), int(mpr), len(per_r), len(machine))

    def free_counts(self, free: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Free GPUs per machine and per rack."""
        f = free.astype(np.int64)
        return (np.bincount(self.machine, weights=f, minlength=self.machine.max() + 1).astype(np.int64),
                np.bincount(self.rack, weights=f, minlength=self.racks).astype(np.int64))

    def tier_of(self, gpus) -> str:
        """The widest level GPU ids ``gpus`` span."""
        g = np.asarray(gpus, dtype=np.int64)
        if np.all(self.machine[g] == self.machine[g[0]]):
            return MACHINE
        return RACK if np.all(self.rack[g] == self.rack[g[0]]) else NETWORK

    def best_tier(self, gpus: int) -> str:
        """The most consolidated tier a job of ``gpus`` GPUs can have on an empty cluster."""
        if gpus <= self.gpus_per_machine:
            return MACHINE
        return RACK if gpus <= self.gpus_per_rack else NETWORK


def affinity_place(cluster, usable: np.ndarray, gpus: int, cost: np.ndarray | None = None
                   ) -> tuple[int, ...] | None:
    """GPUs with affinity from the ``usable`` mask: <= 8 GPUs on one machine (best fit; with a
    per-GPU ``cost`` mask, fewest costly GPUs first, then best fit), more on whole machines
    (fully usable ones, fewest costly first). Idle (cost 0) GPUs are taken before costly ones."""
    first = np.asarray(cluster.machine_first)
    per = np.add.reduceat(usable.astype(np.int64), first)
    c = np.zeros_like(per) if cost is None else np.add.reduceat((usable & cost).astype(np.int64), first)
    if gpus <= NODE_GPUS:
        ok = np.flatnonzero(per >= gpus)
        if not ok.size:
            return None
        m = ok[np.lexsort((ok, per[ok], c[ok]))[0]]
        ids = np.flatnonzero(usable[first[m]:first[m] + NODE_GPUS]) + first[m]
        if cost is not None:
            ids = ids[np.argsort(cost[ids], kind="stable")]
        return tuple(sorted(int(x) for x in ids[:gpus]))
    need = -(-gpus // NODE_GPUS)
    ok = np.flatnonzero(per == NODE_GPUS)
    if ok.size < need:
        return None
    ok = ok[np.lexsort((ok, c[ok]))][:need]
    out = np.concatenate([np.arange(first[m], first[m] + NODE_GPUS) for m in sorted(ok)])
    return tuple(int(x) for x in out[:gpus])
