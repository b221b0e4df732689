"""MAST's fast path as a simulator policy (MAST, OSDI'24, §4): GMS queue, RMS, auction.

:class:`MastPolicy` composes three parts, one module each:

- :mod:`placement.solvers.online.mast_state`: the cluster as RMS sees it, tenants, quotas, running work;
- :mod:`placement.solvers.online.mast_admission`: GMS admission, expressions (10)-(11), the queue;
- :mod:`placement.solvers.online.mast_placement`: RMS plans per region and the cross-region auction;

and handles the events here (arrivals, completions, data replication, the GMS-scan timer).
Where a workload may run comes from the data placement it receives
(:class:`placement.solvers.online.mast_data.DataPlacement`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated

import numpy as np
from placement.solvers.online.gms import GmsParams
from placement.solvers.online.mast_admission import GmsAdmission
from placement.solvers.online.mast_data import DataPlacement
from placement.solvers.online.mast_placement import RmsPlacement
from placement.solvers.online.mast_state import MastState

from placement.options import NonNegFloat, NonNegInt, Range
from placement.sim.policy import Policy, Preempt, Start, Timer

__all__ = ["DataPlacement", "MastPolicy"]

QuotaShare = Annotated[float, Range(0, 1e6, lo_open=True)]


class MastPolicy(MastState, GmsAdmission, RmsPlacement, Policy):
    """MAST's fast path on the simulator: GMS queue, RMS per region, cross-region auction.

    Each batch of events (arrivals, completions, timers) is followed by one scheduling
    pass: the pending workloads in GMS order (:func:`placement.solvers.online.gms.gms_scan`, recomputed by
    a GMS-scan every ``gms.scan_interval`` s; arrivals in between get their
    <priority, credit> at arrival and join the order), each tried in every eligible
    region (all regions holding its tables and GPU type) by RMS
    (:func:`placement.solvers.online.rms.plan_region`), the highest P_score winning the auction
    (:func:`placement.solvers.online.rms.auction`). A winning plan becomes ``Preempt`` decisions for its
    victims (they re-enter the queue) and a ``Start`` on concrete GPUs.

    Speed-ups: §4.3's negative cache (``negative_cache=False`` turns it off; the log is the
    same, only the work changes) and a vectorized pre-filter at the start of each pass (for
    every pending workload, whether any eligible dynamic cluster has enough GPUs free or held
    by lower priorities). The pre-filter assumes usable GPUs only shrink within a pass that
    visits priorities in order. That fails in one case: a plan that preempts a victim larger
    than it needs leaves the victim's surplus GPUs free, and a later, lower-priority workload
    that the pre-filter already dropped could have used them in the same pass; it is then
    tried at the next pass instead. So ``prefilter=False`` (the one-at-a-time loop of §4.3)
    can write a different log; it was measured to on a half-day week trace. The default keeps
    the pre-filter (this behaviour predates the week-scale work and its logs are pinned).

    Parameters
    ----------
    gms : :class:`placement.solvers.online.gms.GmsParams`.
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

    def __init__(self, *, gms: GmsParams | None = None, quota_share: QuotaShare = 0.25,
                 quotas: Mapping[str | tuple[str, int], NonNegInt] | None = None,
                 preempt: bool = True, negative_cache: bool = True, prefilter: bool = True,
                 prefilter_min: NonNegInt = 16, data: DataPlacement | None = None,
                 replication_delay: NonNegFloat | None = 1800.0):
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

    # ------------------------------------------------------------------ events
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
