"""MAST's GMS admission (§4.1-§4.2, expressions (10)-(11)): the queue of pending workloads.

New and preempted workloads join the queue with their <priority, credit> computed at arrival
(:func:`placement.solvers.online.gms.credit`; a workload beyond its (tenant, level) quota drops to the
lowest level); every ``scan_interval`` seconds a GMS-scan (:func:`placement.solvers.online.gms.gms_scan`)
recomputes the whole order. The queue is parallel numpy arrays in scheduling order
(:class:`GmsQueue`).
"""

from __future__ import annotations

import numpy as np
from placement.solvers.online.gms import credit, fair_denominator, gms_scan

__all__ = ["GmsAdmission", "GmsQueue"]


class GmsAdmission:
    """The GMS queue of :class:`placement.solvers.online.mast.MastPolicy` (uses its :class:`MastState`)."""

    def _merge_arrivals(self, now: float) -> None:
        """New and preempted workloads join the queue with <priority, credit> computed now."""
        if not self._arrivals:
            return
        q = self._q
        avg = self._window_avg(now)
        all_avg = fair_denominator(avg, self.gms)
        used = self._quota_used()
        queued_within = np.bincount(q.holder[q.within], weights=q.n[q.within], minlength=len(self.quota))
        rows = []
        jobs = [self.jobs[job_id] for job_id, _ in self._arrivals]
        crs = credit(np.array([now - since for _, since in self._arrivals], dtype=float),
                     avg[np.array([j[3] for j in jobs], dtype=np.int64)], all_avg, self.gms).tolist()
        for (job_id, since), (n, g, p, k, _, h), cr in zip(self._arrivals, jobs, crs, strict=True):
            within = used[h] + queued_within[h] + n <= self.quota[h]
            if within:
                queued_within[h] += n
            if n not in self._size_set:
                self._size_set.add(n)
                self._sizes = np.array(sorted(self._size_set), dtype=np.int64)
            rows.append((job_id, n, g, p if within else self.gms.lowest, p, k, h, since, cr,
                         self.elig[job_id], within))
        self._arrivals = []
        q.extend(rows)
        q.sort()

    def _quota_used(self) -> np.ndarray:
        """Per holder, the GPUs the quota scan starts from (§4.2 ``resource_used``): all its
        running workloads (``gms.quota_used == "all"``) or its within-quota ones."""
        return self.used_all if self.gms.quota_used == "all" else self.used_within

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
        scan = gms_scan(now, q.since, q.prio, q.tenant, q.n, self._quota_used(), self.quota, avg, self.gms,
                        holder=q.holder)
        q.eff, q.credit, q.within = scan.priority, scan.credit, scan.within_quota
        q.take(scan.order)


class GmsQueue:
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
