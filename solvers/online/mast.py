"""Where a workload may run: table locations from a Tetris solution (MAST §3, §4.3).

Terms
-----
data placement
    For every table of a Tetris instance, the regions holding it (its home and its
    replicas), as a bit mask over regions.
eligible regions (§4.3)
    A workload may run only in a region that holds all its tables and has its GPU type
    ("RMS consults a real-time component of Tetris ... if not, the RMS abandons the auction").

The data placement is data this policy receives (``data=``); how ``placement simulate``
builds one for a cluster from a generated Tetris instance is
:mod:`placement.app.policy_data`.
"""

from __future__ import annotations

import time
import zlib
from dataclasses import dataclass, field

import numpy as np

from placement.sim.policy import Policy, Preempt, Start, Timer
from solvers.online.gms import GmsParams, TenantUsage, credit, gms_scan
from solvers.online.rms import NegativeCache, RegionState, auction, plan_region

__all__ = ["DataPlacement", "MastPolicy"]


@dataclass
class DataPlacement:
    """Table locations and the mapping of trace jobs to tables (see the module docstring)."""

    regions: tuple[str, ...]
    gpu_types: tuple[str, ...]
    tables: tuple[str, ...]
    present: np.ndarray            # int64 bit mask of regions per table (mutable: replication)
    job_tables: list[np.ndarray]   # tables of each ML job of the Tetris instance
    jobs_of_type: dict[str, np.ndarray]
    all_jobs: np.ndarray
    variant: str
    seed: int = 0
    stats: dict = field(default_factory=dict)

    def tables_of(self, job_id: str, gpu_type: str | None, named: tuple[str, ...] = ()) -> np.ndarray:
        """Table indices a trace job reads (its own names when all are known, else the seeded map)."""
        if named:
            index = {t: i for i, t in enumerate(self.tables)}
            if all(t in index for t in named):
                return np.array(sorted({index[t] for t in named}), dtype=np.int64)
        pool = self.jobs_of_type.get(gpu_type) if gpu_type is not None else None
        if pool is None or len(pool) == 0:
            pool = self.all_jobs
        if len(pool) == 0:
            return np.zeros(0, dtype=np.int64)
        h = zlib.crc32(f"{self.seed}:{job_id}".encode())
        return self.job_tables[int(pool[h % len(pool)])]

    def regions_holding(self, tables: np.ndarray) -> int:
        """Bit mask of the regions holding every one of ``tables``."""
        m = (1 << len(self.regions)) - 1
        for t in tables.tolist():
            m &= int(self.present[t])
        return m

    def replicate(self, tables: np.ndarray, region: int) -> None:
        """Copy ``tables`` to ``region`` (MAST starts replication when no region qualifies)."""
        self.present[tables] |= np.int64(1 << region)


# ============================================================================ the policy

class MastPolicy(Policy):
    """MAST's fast path on the simulator: GMS queue, RMS per region, cross-region auction.

    Each batch of events (arrivals, completions, timers) is followed by one scheduling
    pass: the pending workloads in GMS order (:func:`solvers.online.gms.gms_scan`, recomputed by
    a GMS-scan every ``gms.scan_interval`` s; arrivals in between get their
    <priority, credit> at arrival and join the order), each tried in every eligible
    region (all regions holding its tables and GPU type) by RMS
    (:func:`solvers.online.rms.plan_region`), the highest P_score winning the auction
    (:func:`solvers.online.rms.auction`). A winning plan becomes ``Preempt`` decisions for its
    victims (they re-enter the queue) and a ``Start`` on concrete GPUs.

    Speed-ups that never change a decision: a vectorized pre-filter at the start of each
    pass (for every pending workload, whether any eligible dynamic cluster has enough GPUs
    free or held by lower priorities: usable GPUs only shrink within a pass that visits
    priorities in order), and §4.3's negative cache (``negative_cache=False`` turns it
    off; the log is the same, only the work changes).

    Parameters
    ----------
    gms : :class:`solvers.online.gms.GmsParams`.
    quota_share : the GPU quota of every (tenant, priority level) as a share of the
        cluster's GPUs (our default 0.25; §2: quotas per priority level), unless ``quotas``
        maps ``(tenant, level)`` or ``tenant`` to GPUs.
    preempt : allow preemption (MAST does).
    data : a :class:`DataPlacement`, or None (every region eligible: no data constraint).
        ``placement simulate`` builds one for the cluster when the option is not given or
        names a variant (:func:`placement.app.policy_data.tetris_placement`: ``"replicas"``
        by default, ``"v0"``, ``"hill_climb"``; with ``data_seed``, ``n_tables``, ``n_data_jobs``).
    prefilter, prefilter_min : run the pre-filter when more than ``prefilter_min`` workloads
        are pending (below that, trying them is cheaper).
    replication_delay : seconds to replicate a workload's tables when no region is
        eligible (§4.3: "MAST will start data replication, waiting for its completion"),
        to the region with the most GPUs of its type; None: such workloads wait forever.
    """

    name = "mast"
    needs = {"data": "data-placement"}

    def __init__(self, *, gms: GmsParams | None = None, quota_share: float = 0.25, quotas: dict | None = None,
                 preempt: bool = True, negative_cache: bool = True, prefilter: bool = True,
                 prefilter_min: int = 16, data: DataPlacement | None = None,
                 replication_delay: float | None = 1800.0):
        self.gms = gms or GmsParams()
        if not 0 < quota_share <= 1e6:
            raise ValueError("quota_share must be > 0")
        self.quota_share = float(quota_share)
        self.quotas_given = dict(quotas or {})
        self.preempt = bool(preempt)
        self.negative_cache = bool(negative_cache)
        self.prefilter = bool(prefilter)
        self.prefilter_min = int(prefilter_min)
        if not (data is None or isinstance(data, DataPlacement)):
            raise ValueError("data must be None or a DataPlacement (placement simulate builds one from a "
                             "variant name: placement.app.policy_data.tetris_placement)")
        self.data_arg = data
        if replication_delay is not None and not replication_delay >= 0:
            raise ValueError("replication_delay must be >= 0 or None")
        self.replication_delay = replication_delay
        self._ready = False
        self._st = dict.fromkeys(
            ("passes", "gms_scans", "arrivals", "starts", "preemptions", "rms_calls", "rms_time_s",
             "prefiltered", "cache_hits", "cache_misses", "cache_dropped", "auctions_multi_region",
             "no_eligible_region", "replications", "waiting_forever"), 0)
        self._st["rms_time_s"] = 0.0

    # ------------------------------------------------------------------ simulator seam
    def setup(self, view, seed: int) -> None:
        c = view.cluster
        types = list(c.types)
        self._setup(np.asarray(c.region), np.asarray(c.dcluster), np.asarray(c.rack), np.asarray(c.machine),
                    np.searchsorted(np.asarray(types), np.asarray(c.gpu_type)), list(c.region_names), types)

    def schedule(self, view, events) -> list:
        if not self._ready:
            self.setup(view, 0)
        now = view.now
        finished = [e.job_id for e in events if e.kind == "finish"]
        arrivals = [view.job(e.job_id) for e in events if e.kind == "submit"]
        timers = [e.key for e in events if e.kind == "timer"]
        out = []
        for d in self._step(now, arrivals, finished, timers, view.free.copy()):
            if d[0] == "start":
                out.append(Start(d[1], d[2]))
            elif d[0] == "preempt":
                out.append(Preempt(d[1]))
            else:
                out.append(Timer(d[1], d[2]))
        return out

    # ------------------------------------------------------------------ set-up
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
            gs = np.flatnonzero(self.gpu_region == r)
            self.region_gpus.append(gs)
            if len(gs) == 0:
                self.states.append(RegionState([], [], [], [], n_dclusters=0))
                self.unit_gpus.append([])
                continue
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
        self.quota = np.zeros(0, dtype=np.int64)         # per holder
        self.jobs: dict = {}          # id -> (n, type code, job priority, tenant index, tables)
        self.running: dict = {}       # id -> (region, eff priority, within, gpus array)
        self.elig: dict = {}          # id -> region mask (the federated baseline: one region)
        self._q = _Queue()
        self._arrivals: list = []
        self._scan_armed = False
        self.data_waits: dict = {}    # workload -> when its data replication completes
        self._usage_version, self._avg_key, self._avg = 0, None, None
        self._ready = True

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
            q = self.quotas_given.get((name, level), self.quotas_given.get(name))
            q = int(np.ceil(self.quota_share * self.total_gpus)) if q is None else int(q)
            self.quota = np.r_[self.quota, q]
        return k, h

    # ------------------------------------------------------------------ events
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

    def _dispatch(self, job_id: str, mask: int, now: float) -> int:
        """Regions a workload may use; MAST: all eligible ones (late binding)."""
        return mask

    def _on_arrival(self, job, now: float, out: list) -> None:
        self._st["arrivals"] += 1
        g = self._type_of(job.gpu_type)
        tables = (self.data.tables_of(job.id, job.gpu_type, tuple(job.tables))
                  if self.data is not None else np.zeros(0, dtype=np.int64))
        p = min(int(job.priority), self.gms.lowest)
        k, h = self._tenant(job.tenant, p)
        self.jobs[job.id] = (int(job.gpus), g, p, k, tables, h)
        mask = self._eligible(job.id, g, tables)
        if mask == 0:
            self._st["no_eligible_region"] += 1
            if g < 0 or self.replication_delay is None or self.data is None:
                self._st["waiting_forever"] += 1
                return
            r = int(np.argmax(self.supply[:, g]))
            self.data_waits[job.id] = now + self.replication_delay
            out.append(("timer", now + self.replication_delay, ("replicate", job.id, r)))
            return
        self._enqueue(job.id, mask, job.submit if job.submit <= now else now, now)

    def _enqueue(self, job_id, mask: int, since: float, now: float) -> None:
        self.elig[job_id] = self._dispatch(job_id, mask, now)
        self._arrivals.append((job_id, since))

    def _on_replicated(self, job_id, region: int, now: float) -> None:
        n, g, p, k, tables, h = self.jobs[job_id]
        self.data.replicate(tables, region)
        self._st["replications"] += 1
        self._enqueue(job_id, self._eligible(job_id, g, tables), now, now)

    def _stop(self, job_id, now: float) -> None:
        """A running workload finished or was preempted: release its bookkeeping."""
        region, eff, within, gpus = self.running.pop(job_id)
        n, g, p, k, _, h = self.jobs[job_id]
        self.states[region].remove_job(job_id)
        self.usage.change(now, k, -len(gpus))
        self._usage_version += 1
        if within:
            self.used_within[h] -= len(gpus)

    def _on_finish(self, job_id, now: float) -> None:
        if job_id in self.running:
            self._stop(job_id, now)
        self.jobs.pop(job_id, None)
        self.elig.pop(job_id, None)

    # ------------------------------------------------------------------ one batch of events
    def _step(self, now: float, arrivals, finished, timers, free: np.ndarray) -> list[tuple]:
        """Process one batch of simultaneous events, then run one scheduling pass.

        Returns plain decisions: ``("preempt", id)``, ``("start", id, gpus)`` and
        ``("timer", at, key)``; ``free`` (a copy of the engine's mask) is updated in place.
        """
        out: list[tuple] = []
        for job_id in finished:
            self._on_finish(job_id, now)
        scan = False
        for key in timers:
            if key[0] == "gms-scan":
                self._scan_armed = False
                scan = True
            elif key[0] == "replicate":
                self._on_replicated(key[1], key[2], now)
        for job in arrivals:
            self._on_arrival(job, now, out)
        if scan:
            self._gms_scan(now)
        self._pass(now, free, out)
        if not self._scan_armed and (self._q.size or self._arrivals):
            self._scan_armed = True
            out.append(("timer", now + self.gms.scan_interval, ("gms-scan",)))
        return out

    def stats(self) -> dict:
        """The policy's own counters (RMS calls and time, negative-cache hits, pre-filter
        rejections, GMS-scans, starts, preemptions, workloads without an eligible region,
        replications) and the data placement's collocation rate."""
        st = dict(self._st)
        lookups = st["cache_hits"] + st["cache_misses"]
        st["cache_hit_rate"] = st["cache_hits"] / lookups if lookups else 0.0
        if self._ready and self.data is not None:
            st["data_variant"] = self.data.variant
            st["data_collocation_jobs"] = self.data.stats.get("collocation_jobs")
        return st

    # ------------------------------------------------------------------ GMS queue
    def _merge_arrivals(self, now: float) -> None:
        """New and preempted workloads join the queue with <priority, credit> computed now."""
        if not self._arrivals:
            return
        q = self._q
        avg = self._window_avg(now)
        active = avg > 0
        all_avg = float(avg[active].mean()) if active.any() else 0.0
        queued_within = np.bincount(q.holder[q.within], weights=q.n[q.within], minlength=len(self.quota))
        rows = []
        for job_id, since in self._arrivals:
            n, g, p, k, _, h = self.jobs[job_id]
            within = self.used_within[h] + queued_within[h] + n <= self.quota[h]
            if within:
                queued_within[h] += n
            cr = float(credit(np.array([now - since]), np.array([avg[k]]), all_avg, self.gms)[0])
            rows.append((job_id, n, g, p if within else self.gms.lowest, p, k, h, since, cr,
                         self.elig[job_id], within))
        self._arrivals = []
        q.extend(rows)
        q.sort()

    def _window_avg(self, now: float) -> np.ndarray:
        """Tenants' window averages at ``now`` (cached until usage changes or time moves)."""
        key = (now, self._usage_version)
        if self._avg_key != key:
            self._avg, self._avg_key = self.usage.window_avg(now, self.gms.window), key
        return self._avg

    def _gms_scan(self, now: float) -> None:
        self._merge_arrivals(now)
        q = self._q
        self._st["gms_scans"] += 1
        if q.size == 0:
            return
        avg = self._window_avg(now)
        scan = gms_scan(now, q.since, q.prio, q.tenant, q.n, self.used_within, self.quota, avg, self.gms,
                        holder=q.holder)
        q.eff, q.credit, q.within = scan.priority, scan.credit, scan.within_quota
        q.take(scan.order)

    # ------------------------------------------------------------------ one pass
    def _usable_best(self) -> np.ndarray:
        """best[r, g, p]: the most GPUs of type g a level-p workload can use in one dynamic
        cluster of region r (free, plus held by levels > p when preemption is on)."""
        R, T, L = len(self.states), len(self.type_names), self.gms.lowest + 1
        best = np.full((R, T, L), -1, dtype=np.int64)
        for r, st in enumerate(self.states):
            D = st.n_dclusters
            if D == 0:
                continue
            free = np.bincount(st.dcluster * T + st.gpu_type, weights=st.free, minlength=D * T).reshape(D, T, 1)
            usable = np.broadcast_to(free, (D, T, L))
            if self.preempt and st._ids:
                jdc, jt, jp, _, js = st._job_arrays()
                held = np.bincount((jdc * T + jt) * (L + 1) + np.minimum(jp, L - 1), weights=js,
                                   minlength=D * T * (L + 1)).reshape(D, T, L + 1)
                above = np.cumsum(held[:, :, ::-1], axis=2)[:, :, ::-1]   # above[q] = held at levels >= q
                usable = usable + above[:, :, 1:]
            best[r] = usable.max(axis=0)
        return best

    def _pass(self, now: float, free: np.ndarray, out: list) -> None:
        self._merge_arrivals(now)
        q = self._q
        if q.size == 0:
            return
        self._st["passes"] += 1
        for r, st in enumerate(self.states):
            if len(st.free):
                gs = self.region_gpus[r]
                st.free[:] = np.bincount(self.gpu_unit[gs], weights=free[gs], minlength=len(st.free))
        if self.prefilter and q.size > self.prefilter_min:
            best = self._usable_best()
            vals = best[:, q.g, q.eff]
            bits = (q.elig[None, :] >> np.arange(len(self.states))[:, None]) & 1
            cand = np.flatnonzero(np.where(bits == 1, vals, -1).max(axis=0) >= q.n)
            self._st["prefiltered"] += q.size - len(cand)
        else:
            cand = np.arange(q.size)
        cache = NegativeCache(enabled=self.negative_cache)
        placed = np.zeros(q.size, dtype=bool)
        victims_all: list = []
        for i in cand.tolist():
            job_id, n, g, p, mask = q.ids[i], int(q.n[i]), int(q.g[i]), int(q.eff[i]), int(q.elig[i])
            key = (p, g, mask)
            if cache.failed(key, n):
                continue
            offers = {}
            t0 = time.perf_counter()
            m, r = mask, 0
            while m:
                if m & 1:
                    plan = plan_region(self.states[r], n, g, p, self.preempt)
                    self._st["rms_calls"] += 1
                    if plan is not None:
                        offers[r] = (plan.cost, plan)
                m >>= 1
                r += 1
            self._st["rms_time_s"] += time.perf_counter() - t0
            win = auction(offers, {r: -int(self.states[r].free[self.states[r].gpu_type == g].sum())
                                   for r in offers} if len(offers) > 1 else None)
            if win is None:
                cache.store(key, n)
                continue
            self._st["auctions_multi_region"] += len(offers) > 1
            r, _, plan = win
            levels = [self.running[v][1] for v in plan.victims]
            for v in plan.victims:
                free[self.running[v][3]] = True
                self._stop(v, now)
                out.append(("preempt", v))
                victims_all.append(v)
                self._st["preemptions"] += 1
            units = self.unit_gpus[r]
            chosen = []
            for u, c in zip(plan.machines.tolist(), plan.counts.tolist(), strict=True):
                ids = units[u]
                chosen.append(ids[free[ids]][:c])
            gpus = np.concatenate(chosen)
            free[gpus] = False
            self.states[r].add_job(job_id, p, now, plan.machines, plan.counts)
            within = bool(q.within[i])
            self.running[job_id] = (r, p, within, gpus)
            self.usage.change(now, int(q.tenant[i]), n)
            self._usage_version += 1
            if within:
                self.used_within[int(q.holder[i])] += n
            out.append(("start", job_id, tuple(int(x) for x in gpus)))
            self._st["starts"] += 1
            cache.placed(min(levels) if levels else None)
            placed[i] = True
        self._st["cache_hits"] += cache.hits
        self._st["cache_misses"] += cache.misses
        self._st["cache_dropped"] += cache.dropped
        q.take(np.flatnonzero(~placed))
        for v in victims_all:          # preempted workloads queue again (§5.5: a new event)
            self._arrivals.append((v, now))


class _Queue:
    """The GMS queue as parallel numpy arrays in scheduling order."""

    FIELDS = ("ids", "n", "g", "eff", "prio", "tenant", "holder", "since", "credit", "elig", "within")
    DTYPES = (object, np.int64, np.int64, np.int64, np.int64, np.int64, np.int64, float, float, np.int64, bool)

    def __init__(self):
        for f, d in zip(self.FIELDS, self.DTYPES, strict=True):
            setattr(self, f, np.zeros(0, dtype=d))
        self.seq = np.zeros(0, dtype=np.int64)
        self._next = 0

    @property
    def size(self) -> int:
        return len(self.n)

    def extend(self, rows: list[tuple]) -> None:
        cols = list(zip(*rows, strict=True))
        ids = np.empty(len(rows), dtype=object)
        ids[:] = list(cols[0])
        self.ids = np.concatenate([self.ids, ids])
        for f, d, c in zip(self.FIELDS[1:], self.DTYPES[1:], cols[1:], strict=True):
            setattr(self, f, np.concatenate([getattr(self, f), np.fromiter(c, dtype=d, count=len(c))]))
        self.seq = np.concatenate([self.seq, np.arange(self._next, self._next + len(rows))])
        self._next += len(rows)

    def take(self, idx: np.ndarray) -> None:
        for f in (*self.FIELDS, "seq"):
            setattr(self, f, getattr(self, f)[idx])

    def sort(self) -> None:
        self.take(np.lexsort((self.seq, self.since, -self.credit, self.eff)))
