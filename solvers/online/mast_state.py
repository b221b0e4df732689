"""MAST policy state: the cluster as RMS sees it, tenants and quotas, running workloads.

:class:`MastState` holds what the GMS queue (:mod:`placement.solvers.online.mast_admission`) and the RMS
placement (:mod:`placement.solvers.online.mast_placement`) share: per region a
:class:`placement.solvers.online.rms.RegionState` of (machine, GPU type) units and the GPU ids of each
unit; per tenant its fair-share usage (:class:`placement.solvers.online.gms.TenantUsage`); per quota
holder (tenant, priority level: MAST §2's quotas per level) its quota and the GPUs of its
within-quota running workloads; the workloads known and running, and the regions each may use.
"""

from __future__ import annotations

import numpy as np
from placement.solvers.online.gms import TenantUsage
from placement.solvers.online.mast_queue import RecordGmsQueue
from placement.solvers.online.rms import RegionState

__all__ = ["MastState"]


class MastState:
    """Cluster, tenant and workload bookkeeping of :class:`placement.solvers.online.mast.MastPolicy`."""

    def _setup(self, region_of_gpu, dcluster_of_gpu, rack_of_gpu, machine_of_gpu, type_of_gpu,
               region_names, type_names) -> None:
        """Per region a :class:`RegionState` of (machine, GPU type) units; GPU id maps."""
        self.region_names = list(region_names)
        self.type_names = list(type_names)
        self.type_code = {t: i for i, t in enumerate(self.type_names)}
        R, T = len(self.region_names), len(self.type_names)
        G = len(region_of_gpu)
        self.n_gpus = G
        self.gpu_unit = np.zeros(G, dtype=np.int64)      # region-local unit of each GPU
        self.gpu_region = np.asarray(region_of_gpu, dtype=np.int64)
        self.states: list[RegionState] = []
        self.unit_gpus: list[list[np.ndarray]] = []
        self.region_gpus: list[np.ndarray] = []
        self.supply = np.zeros((R, T), dtype=np.int64)
        for r in range(R):
            self._region_units(r, dcluster_of_gpu, rack_of_gpu, machine_of_gpu, type_of_gpu)
        self.type_regions = [sum(1 << r for r in range(R) if self.supply[r, g] > 0) for g in range(T)]
        self.total_gpus = G
        self.data = self.data_arg
        if self.data is not None and (self.data.regions != tuple(self.region_names)
                                      or not set(self.data.gpu_types) <= set(self.type_names)):
            raise ValueError("data: the DataPlacement was built for other regions or GPU types than the cluster's")
        self.tenants: dict[str, int] = {}
        self.holders: dict[tuple[str, int], int] = {}
        self.usage = TenantUsage()
        self.used_within = np.zeros(0, dtype=np.int64)   # per holder: GPUs of within-quota running workloads
        self.used_all = np.zeros(0, dtype=np.int64)      # per holder: GPUs of all its running workloads
        self.quota = np.zeros(0, dtype=np.int64)         # per holder
        self.jobs: dict = {}          # id -> (n, type code, job priority, tenant index, tables)
        self.running: dict = {}       # id -> (region, eff priority, within, gpus array)
        self.elig: dict = {}          # id -> region mask (the federated baseline: one region)
        self._q = RecordGmsQueue()
        self._size_set: set = set()                      # GPU counts of the rows ever queued
        self._sizes = np.zeros(0, dtype=np.int64)        # the same, sorted (_fast_pass's fits table)
        self._arrivals: list = []
        self._scan_armed = False
        self.data_waits: dict = {}    # workload -> when its data replication completes
        self._usage_version, self._avg_key, self._avg = 0, None, None
        self._ready = True

    def _region_units(self, r: int, dcluster_of_gpu, rack_of_gpu, machine_of_gpu, type_of_gpu) -> None:
        """Region ``r``'s :class:`RegionState`: one unit per (machine, GPU type), with its GPU ids."""
        T = len(self.type_names)
        gs = np.flatnonzero(self.gpu_region == r)
        self.region_gpus.append(gs)
        if len(gs) == 0:
            self.states.append(RegionState([], [], [], [], n_dclusters=0))
            self.unit_gpus.append([])
            return
        dcs, dc_local = np.unique(dcluster_of_gpu[gs], return_inverse=True)
        key = np.stack([machine_of_gpu[gs], type_of_gpu[gs]])
        units, unit_of = np.unique(key, axis=1, return_inverse=True)
        unit_of = unit_of.reshape(-1)
        first = np.zeros(units.shape[1], dtype=np.int64)
        first[unit_of[::-1]] = np.arange(len(gs))[::-1]
        cap = np.bincount(unit_of, minlength=units.shape[1])
        rack_key = rack_of_gpu[gs][first].astype(np.int64) * (len(dcs) + 1) + dc_local[first]
        st = RegionState(dc_local[first], rack_key, type_of_gpu[gs][first], cap, n_dclusters=len(dcs))
        self.states.append(st)
        self.gpu_unit[gs] = unit_of
        order = np.lexsort((gs, unit_of))
        bounds = np.r_[0, np.cumsum(cap)]
        sorted_gpus = gs[order]
        self.unit_gpus.append([sorted_gpus[bounds[u]:bounds[u + 1]] for u in range(len(cap))])
        self.supply[r] = np.bincount(type_of_gpu[gs], minlength=T)

    def _tenant(self, name: str, level: int) -> tuple[int, int]:
        """Tenant index (fair share) and quota-holder index (tenant, level): §2's quotas per level."""
        k = self.tenants.get(name)
        if k is None:
            k = self.tenants[name] = len(self.tenants)
            self.usage.grow(k + 1)
            self._usage_version += 1
        h = self.holders.get((name, level))
        if h is None:
            h = self.holders[(name, level)] = len(self.holders)
            self.used_within = np.r_[self.used_within, 0]
            self.used_all = np.r_[self.used_all, 0]
            q = self.quotas_given.get((name, level), self.quotas_given.get(name))
            q = int(np.ceil(self.quota_share * self.total_gpus)) if q is None else int(q)
            self.quota = np.r_[self.quota, q]
        return k, h

    def _type_of(self, gpu_type) -> int:
        if gpu_type is None:
            # a job without a GPU type runs on the cluster's most plentiful type (our choice)
            return int(np.argmax(self.supply.sum(axis=0)))
        return self.type_code.get(gpu_type, -1)

    def _eligible(self, job_id: str, g: int, tables) -> int:
        mask = self.type_regions[g] if g >= 0 else 0
        if self.data is not None and mask:
            mask &= self.data.regions_holding(tables)
        return mask

    def _stop(self, job_id, now: float) -> None:
        """A running workload finished or was preempted: release its bookkeeping."""
        region, eff, within, gpus = self.running.pop(job_id)
        n, g, p, k, _, h = self.jobs[job_id]
        self.states[region].remove_job(job_id)
        self.usage.change(now, k, -len(gpus))
        self._usage_version += 1
        self.used_all[h] -= len(gpus)
        if within:
            self.used_within[h] -= len(gpus)
