"""MAST's RMS placement and cross-region auction (§4.3-§4.4) for one scheduling pass.

Each pending workload, in GMS order, is tried by RMS (:func:`placement.solvers.online.rms.plan_region`)
in every eligible region; the highest P_score wins the auction
(:func:`placement.solvers.online.rms.auction`); a winning plan becomes ``Preempt`` decisions for its
victims and a ``Start`` on concrete GPUs. Speed-ups: §4.3's negative cache
(:class:`placement.solvers.online.rms.NegativeCache`, which never changes a decision) and a vectorized
pre-filter (:meth:`RmsPlacement._usable_best`), which assumes usable GPUs only shrink within a
pass that visits priorities in order. A plan that preempts a victim larger than it needs breaks
that assumption (the surplus GPUs come free mid-pass), so a workload the pre-filter dropped is
then placed one pass later than the loop of ``prefilter=False`` would place it
(:class:`placement.solvers.online.mast.MastPolicy` says when).

How the pass finds work fast (the default, ``prefilter=True``; :meth:`RmsPlacement._fast_pass`)
--------------------------------------------------------------------------------------------
RMS in region r finds a plan for n GPUs of type g at level p iff some dynamic cluster of r has
``usable[r, g, p] >= n`` GPUs free or held by levels below p (:func:`placement.solvers.online.rms.plan_region`
tries exactly those clusters). That table, per region, changes only when a job starts or stops
there (:attr:`placement.solvers.online.rms.RegionState.version`), so it is kept per region across batches
and recomputed for the one region a placement touches. The pass then takes, among the workloads
the pre-filter kept at its start (all of them when ``prefilter_min`` or fewer are pending), the
first in GMS order whose eligible regions have a table entry >= its size: exactly the workload the
one-at-a-time loop (cache, auction, next) would have placed next, since an auction fails iff no
region has such an entry and a negative-cache hit is always such a failure. RMS is called only in
the regions where a plan exists, so the log is the same as with the loop (``prefilter=False``:
that loop, with the negative cache, as §4.3 describes it) except for the surplus case above; ``rms_calls`` and the cache counters
count only the work done. The pre-filter itself is incremental: a pending workload judged
unplaceable at the start of an earlier pass (the queue's ``feas`` row,
:class:`placement.solvers.online.mast_queue.RecordGmsQueue`) is judged again only when a table cell it could
use, (one of its regions, its type, its level), has grown since (a job stopped there), when it is
new or when a GMS-scan changed its level; feasibility only grows with the table.
"""

from __future__ import annotations

import time

import numpy as np
from placement.solvers.online.rms import NegativeCache, auction, plan_region

__all__ = ["RmsPlacement"]

SNAP_CELLS = 16    # more grown cells of the usable table than this: judge every pending workload again


class RmsPlacement:
    """The pass of :class:`placement.solvers.online.mast.MastPolicy` (uses its :class:`MastState`)."""

    def _usable_best(self) -> np.ndarray:
        """best[r, g, p]: the most GPUs of type g a level-p workload can use in one dynamic
        cluster of region r (free, plus held by levels > p when preemption is on)."""
        R, T, L = len(self.states), len(self.type_names), self.gms.lowest + 1
        best = np.full((R, T, L), -1, dtype=np.int64)
        for r, st in enumerate(self.states):
            if st.n_dclusters:
                best[r] = self._region_usable(st)
        return best

    def _region_usable(self, st) -> np.ndarray:
        """One region's row of :meth:`_usable_best` (T x L), from the totals the region keeps
        (:attr:`placement.solvers.online.rms.RegionState.dt_free`, ``dt_held``): at level p, the free GPUs
        of a (dynamic cluster, type) plus those held at levels p+1..L-1 and below (levels past
        the lowest count as the lowest). Equal to :meth:`_region_usable_scratch`."""
        if not st._held_ok:
            return self._region_usable_scratch(st)
        T, L = len(self.type_names), self.gms.lowest + 1
        D, Tr = st.dt_free.shape
        usable = np.zeros((D, T, L), dtype=np.int64)
        usable[:, :Tr, :] = st.dt_free[:, :, None]
        if self.preempt and st._ids:
            h = st.dt_held
            k = min(L - 1, h.shape[2] - 1)
            if k > 0:
                rc = np.cumsum(h[:, :, ::-1], axis=2)[:, :, ::-1]      # rc[p] = held at levels >= p
                usable[:, :Tr, :k] += rc[:, :, 1:k + 1]
        return usable.max(axis=0)

    def _region_usable_scratch(self, st) -> np.ndarray:
        """:meth:`_region_usable` recomputed from the machines' free GPUs and the running jobs."""
        T, L, D = len(self.type_names), self.gms.lowest + 1, st.n_dclusters
        free = np.bincount(st.dcluster * T + st.gpu_type, weights=st.free, minlength=D * T).reshape(D, T, 1)
        usable = np.broadcast_to(free, (D, T, L))
        if self.preempt and st._ids:
            jdc, jt, jp, _, js = st._job_arrays()
            held = np.bincount((jdc * T + jt) * (L + 1) + np.minimum(jp, L - 1), weights=js,
                               minlength=D * T * (L + 1)).reshape(D, T, L + 1)
            above = np.cumsum(held[:, :, ::-1], axis=2)[:, :, ::-1]   # above[q] = held at levels >= q
            usable = usable + above[:, :, 1:]
        return usable.max(axis=0).astype(np.int64)

    def _usable_table(self) -> np.ndarray:
        """:meth:`_usable_best` kept across batches: a region's row is recomputed only when a job
        started or stopped there since (its :attr:`RegionState.version`)."""
        R, T, L = len(self.states), len(self.type_names), self.gms.lowest + 1
        cache = getattr(self, "_usable_cache", None)
        if cache is None or cache[0].shape != (R, T, L):
            cache = self._usable_cache = (np.full((R, T, L), -1, dtype=np.int64), [-1] * R)
        best, seen = cache
        for r, st in enumerate(self.states):
            if st.n_dclusters and seen[r] != st.version:
                best[r] = self._region_usable(st)
                seen[r] = st.version
        return best

    def _pass(self, now: float, free: np.ndarray, out: list) -> None:
        """One scheduling pass: every pending workload in GMS order, tried by RMS in each
        eligible region; the auction's winner starts (after preempting its victims)."""
        self._merge_arrivals(now)
        q = self._q
        if q.size == 0:
            return
        self._st["passes"] += 1
        if self.prefilter:
            self._fast_pass(now, free, out)
        else:
            self._loop_pass(now, free, out)

    def _loop_pass(self, now: float, free: np.ndarray, out: list) -> None:
        """§4.3's pass one workload at a time: the negative cache, then the auction, in GMS order
        over :meth:`_candidates` (the pre-filter's survivors at the start of the pass when it is
        on). ``prefilter=False`` runs it over every pending workload; with the pre-filter on it is
        the reference :meth:`_fast_pass` is tested against (tests/mast/test_mast_week.py)."""
        q = self._q
        self._sync_free(free)
        cache = NegativeCache(enabled=self.negative_cache)
        placed = np.zeros(q.size, dtype=bool)
        victims_all: list = []
        for i in self._candidates().tolist():
            n, g, p, mask = int(q.n[i]), int(q.g[i]), int(q.eff[i]), int(q.elig[i])
            key = (p, g, mask)
            if cache.failed(key, n):
                continue
            win = self._auction(n, g, p, mask)
            if win is None:
                cache.store(key, n)
                continue
            levels = self._apply(win, i, now, free, out, victims_all)
            cache.placed(min(levels) if levels else None)
            placed[i] = True
        self._st["cache_hits"] += cache.hits
        self._st["cache_misses"] += cache.misses
        self._st["cache_dropped"] += cache.dropped
        q.take(np.flatnonzero(~placed))
        for v in victims_all:          # preempted workloads queue again (§5.5: a new event)
            self._arrivals.append((v, now))

    def _fits_table(self, best: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        """fits[g, p, s]: the bit mask of the regions r whose usable cell ``best[r, g, p]`` holds
        ``sizes[s]`` GPUs. A pending row (n, g, p, eligible regions) can be placed iff
        ``fits[g, p, index of n] & eligible`` is not 0: one gather for the whole queue instead of
        a regions x rows comparison."""
        return _region_bits(best[:, :, :, None] >= sizes)

    @staticmethod
    def _fits_update(fits: np.ndarray, best: np.ndarray, sizes: np.ndarray, r: int) -> np.ndarray:
        """:meth:`_fits_table` after region ``r``'s row of ``best`` changed: its bit only."""
        bit = np.int64(1) << np.int64(r)
        fits &= ~bit
        fits |= (best[r][:, :, None] >= sizes).astype(np.int64) * bit
        return fits

    def _fast_pass(self, now: float, free: np.ndarray, out: list) -> None:
        """The pass of :meth:`_pass` driven by the usable table (module docstring): the same
        placements in the same order, RMS called only where it finds a plan. Each region's
        free GPUs are the ones its :class:`RegionState` tracks (every start and stop goes
        through it), so the engine's mask is not re-read. Whether a row can be placed is read
        from :meth:`_fits_table` (sizes indexed in the sorted sizes ever queued)."""
        q = self._q
        best = self._usable_table()
        qn, qg, qeff, qelig = q.n, q.g, q.eff, q.elig
        sizes = self._sizes
        fits = cs = None
        if q.size > self.prefilter_min:
            feas, snap = getattr(q, "feas", None), getattr(self, "_usable_snap", None)
            if feas is None or snap is None or snap.shape != best.shape:
                judge = np.arange(q.size)
            else:      # rows judged unplaceable stay so unless a cell they could use grew since
                grew = best > snap
                n_grew = np.count_nonzero(grew)
                if n_grew > SNAP_CELLS:
                    judge = np.arange(q.size)
                elif n_grew == 0:
                    judge = np.flatnonzero(feas != 0)
                else:  # grown[g, p]: bit mask of the regions whose cell (r, g, p) grew
                    grown = _region_bits(grew)
                    judge = np.flatnonzero((feas != 0) | ((grown[qg, qeff] & qelig) != 0))
            if len(judge):
                fits = self._fits_table(best, sizes)
                sj = np.searchsorted(sizes, qn[judge])
                keep = (fits[qg[judge], qeff[judge], sj] & qelig[judge]) != 0
                cand, cs = judge[keep], sj[keep]
            else:
                cand = judge
            if feas is not None:
                feas[judge] = 0
                feas[cand] = 1
                self._usable_snap = best.copy()
            self._st["prefiltered"] += q.size - len(cand)
        else:
            cand = np.arange(q.size)
        if len(cand) == 0:
            return
        if fits is None:
            fits = self._fits_table(best, sizes)
        placed: list[int] = []
        victims_all: list = []
        cg, cp, ce = qg[cand], qeff[cand], qelig[cand]
        if cs is None:
            cs = np.searchsorted(sizes, qn[cand])
        at = 0
        while at < len(cand):
            ok = (fits[cg[at:], cp[at:], cs[at:]] & ce[at:]) != 0    # an eligible region can host it
            hit = int(ok.argmax())
            if not ok[hit]:
                break
            hit += at
            i = int(cand[hit])
            n_i, g_i, p_i, mask = int(qn[i]), int(qg[i]), int(qeff[i]), int(qelig[i])
            win = self._auction(n_i, g_i, p_i, mask, best)
            self._apply(win, i, now, free, out, victims_all)
            r = win[0]
            best[r] = self._region_usable(self.states[r])
            self._usable_cache[1][r] = self.states[r].version
            fits = self._fits_update(fits, best, sizes, r)
            placed.append(i)
            at = hit + 1
        if placed and hasattr(q, "drop"):
            q.drop(placed)
        elif placed:
            keep = np.ones(q.size, dtype=bool)
            keep[placed] = False
            q.take(np.flatnonzero(keep))
        for v in victims_all:          # preempted workloads queue again (§5.5: a new event)
            self._arrivals.append((v, now))

    def _sync_free(self, free: np.ndarray) -> None:
        """Each region's free GPUs per unit, from the engine's mask."""
        for r, st in enumerate(self.states):
            if len(st.free):
                gs = self.region_gpus[r]
                st.free[:] = np.bincount(self.gpu_unit[gs], weights=free[gs], minlength=len(st.free))
                st.refresh_totals(held=False)

    def _candidates(self) -> np.ndarray:
        """Queue positions worth trying: all, or those the pre-filter (:meth:`_usable_best`) keeps."""
        q = self._q
        if not (self.prefilter and q.size > self.prefilter_min):
            return np.arange(q.size)
        best = self._usable_best()
        vals = best[:, q.g, q.eff]
        bits = (q.elig[None, :] >> np.arange(len(self.states))[:, None]) & 1
        cand = np.flatnonzero(np.where(bits == 1, vals, -1).max(axis=0) >= q.n)
        self._st["prefiltered"] += q.size - len(cand)
        return cand

    def _type_free(self, r: int, g: int) -> int:
        """Free GPUs of type ``g`` in region ``r`` (the region's kept totals, ``RegionState.dt_free``)."""
        dt = self.states[r].dt_free
        return int(dt[:, g].sum()) if g < dt.shape[1] else 0

    def _auction(self, n: int, g: int, p: int, mask: int, best: np.ndarray | None = None):
        """RMS plans in every region of ``mask`` (:func:`placement.solvers.online.rms.plan_region`) and the
        auction's winner ``(region, cost, plan)`` (:func:`placement.solvers.online.rms.auction`), or None.
        With ``best`` (the usable table) RMS runs only in the regions where it finds a plan."""
        offers = {}
        t0 = time.perf_counter()
        m, r, regions = mask, 0, []
        while m:
            if m & 1 and (best is None or best[r, g, p] >= n):
                regions.append(r)
            m >>= 1
            r += 1
        if best is not None and len(regions) > 1:
            # a region with n free GPUs of the type in one dynamic cluster offers a plan without
            # preemption (cost[0] == 0), which beats every preempting plan: the others need no RMS
            calm = [r for r in regions if g < self.states[r].dt_free.shape[1]
                    and int(self.states[r].dt_free[:, g].max()) >= n]
            if calm:
                regions = calm
            if len(calm) > 1:
                # a machine with n free GPUs of the type gives the least cost of all, (0, 0, 0, 0, 1, 1):
                # among such regions the auction's tie-break alone decides (most free GPUs of the
                # type, then the lowest index), so RMS runs in the winner only
                free_of = {r: self.states[r].free[self.states[r].gpu_type == g] for r in regions}
                single = [r for r in regions if (free_of[r] >= n).any()]
                if single:
                    regions = [min(single, key=lambda r: (-self._type_free(r, g), r))]
        for r in regions:
            plan = plan_region(self.states[r], n, g, p, self.preempt)
            self._st["rms_calls"] += 1
            if plan is not None:
                offers[r] = (plan.cost, plan)
        self._st["rms_time_s"] += time.perf_counter() - t0
        win = auction(offers, {r: -self._type_free(r, g) for r in offers} if len(offers) > 1 else None)
        if win is not None:
            self._st["auctions_multi_region"] += len(offers) > 1
        return win

    def _apply(self, win, i: int, now: float, free: np.ndarray, out: list, victims_all: list) -> list[int]:
        """Carry out queue entry ``i``'s winning plan: preempt its victims, start it on concrete
        GPUs, update the bookkeeping; returns the victims' levels (for the negative cache)."""
        q = self._q
        job_id, n, p = q.ids[i], int(q.n[i]), int(q.eff[i])
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
        self.used_all[int(q.holder[i])] += n
        if within:
            self.used_within[int(q.holder[i])] += n
        out.append(("start", job_id, tuple(gpus.tolist())))
        self._st["starts"] += 1
        return levels


def _region_bits(x: np.ndarray) -> np.ndarray:
    """The bit mask over regions (axis 0) of a boolean array: bit r set where ``x[r, ...]``."""
    bits = np.int64(1) << np.arange(x.shape[0], dtype=np.int64)
    return (x.astype(np.int64) * bits.reshape(-1, *[1] * (x.ndim - 1))).sum(axis=0)
