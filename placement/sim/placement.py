"""Placement helpers shared by policies: consolidated first-fit choices on a free mask.

Pure functions of (cluster, free mask, job): no state, vectorized with numpy.
"""

from __future__ import annotations

import numpy as np

from .cluster import Cluster

__all__ = ["usable_mask", "first_fit_consolidated"]


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
