"""MAST's Regional ML Scheduler (RMS): placement plans, P_score, preemption, negative cache,
and the cross-region auction (OSDI'24 §4.3).

Terms
-----
region state
    One region's ML hardware and running jobs (:class:`RegionState`): machines with a
    dynamic cluster, a rack and one GPU type each, their free GPUs, and per running job
    its dynamic cluster, effective priority, start time and GPUs per machine.
plan
    Where one job would run in one dynamic cluster (a job never spans dynamic clusters,
    §4.6): the running jobs to preempt (victims) and GPUs taken per machine.
cost vector (lower is better; P_score is its negation, compared lexicographically)
    ``(preempts, -min victim priority, victims, sum of victims' start times, racks,
    machines)``: first no preemption, then victims of lower priority (the most important
    victim as unimportant as possible), then fewer victims, then longer-running victims
    (earlier starts), then fewest racks and fewest machines (§4.3). With no victims the
    first four entries are 0. :func:`placement.models.mast_rms.evaluate_plan` is the reference
    evaluation of the same vector.
workload score
    The sum of its jobs' cost vectors (§4.3: the workload's P_score sums its jobs').
negative cache
    Per GMS-scan pass, the smallest size that failed per scheduling-properties key
    (GPU type, effective priority, eligible regions); a later request with the same key
    and the same or a larger size fails without a search (§4.3).

The RMS heuristic (one job, one dynamic cluster)
-----------------------------------------------
1. Without preemption when the free GPUs of the job's type suffice: machines are
   chosen by :func:`choose_machines` (one machine if any fits, best fit; else the rack
   needing the fewest machines; else racks by decreasing free GPUs, machines by
   decreasing free GPUs — "fewest machines first, same or nearby racks").
2. Otherwise scan the running jobs of strictly lower priority (higher level number) from
   the lowest priority and longest running (earliest start), accumulating their GPUs
   until free + released suffice; re-sort the scanned jobs by size (largest first,
   ties in scan order) and preempt the shortest prefix that suffices. The paper's
   example: 10 GPUs needed, scanned options 4, 5, 12: only the 12 is preempted.
   Machines are then chosen among free and released GPUs as in step 1.
The region's plan is the best plan over its dynamic clusters (ties: lowest cluster index).
Choices the paper leaves open: best fit for a single machine, and racks by decreasing
free GPUs when the job spans racks; one GPU type per machine.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Plan", "RegionState", "choose_machines", "plan_dcluster", "plan_region",
           "plan_workload", "workload_cost", "NegativeCache", "auction", "NO_PREEMPTION"]

NO_PREEMPTION = (0, 0, 0, 0.0)


@dataclass(frozen=True)
class Plan:
    """A placement plan of one job in one dynamic cluster of a region.

    ``machines`` are region-local machine indices and ``counts`` the GPUs taken on each;
    ``victims`` the ids of the running jobs to preempt; ``cost`` the cost vector.
    """

    dcluster: int
    machines: np.ndarray
    counts: np.ndarray
    victims: tuple = ()
    cost: tuple = ()


def _racks_machines(rack: np.ndarray, machines: np.ndarray) -> tuple[int, int]:
    if len(machines) == 1:
        return 1, 1
    return len(set(rack[machines].tolist())), int(len(machines))


def choose_machines(avail: np.ndarray, rack: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Machines (local indices) and GPU counts for ``n`` GPUs out of ``avail`` per machine.

    Requires ``avail.sum() >= n >= 1``. One machine if any has ``n`` available (the one
    with the fewest, then the lowest index); else the single rack that needs the fewest
    machines when taking its machines by decreasing availability (then the rack with
    the least available, then the lowest rack); else racks by decreasing availability
    until they suffice and, inside them, machines by decreasing availability.

    Machines with nothing available are never chosen and change no choice (they come last in
    their rack, add nothing to a rack's total, and an empty rack never precedes one that helps),
    so the choice is made among the others (a busy region has few).
    """
    some = np.flatnonzero(avail > 0)
    if len(some) < len(avail):
        sel, counts = _choose(avail[some], rack[some], n)
        return some[sel], counts
    return _choose(avail, rack, n)


SMALL = 48   # at most this many machines with free GPUs: choose in plain Python (the same choice)


def _choose(avail: np.ndarray, rack: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`choose_machines` on machines that all have some GPU available."""
    if len(avail) <= SMALL:
        sel, counts = _choose_small(avail.tolist(), rack.tolist(), n)
        return np.array(sel, dtype=np.int64), np.array(counts, dtype=avail.dtype)
    return _choose_arrays(avail, rack, n)


def _choose_small(avail: list, rack: list, n: int) -> tuple[list, list]:
    """:func:`_choose_arrays` on lists, step for step (a busy region has few machines with free GPUs)."""
    fit = [(a, i) for i, a in enumerate(avail) if a >= n]
    if fit:
        return [min(fit)[1]], [n]
    order = sorted(range(len(avail)), key=lambda i: (rack[i], -avail[i], i))
    racks: list[list[int]] = []                       # positions of each rack, in order
    for i in order:
        if racks and rack[racks[-1][0]] == rack[i]:
            racks[-1].append(i)
        else:
            racks.append([i])
    tot = [sum(avail[i] for i in ms) for ms in racks]
    best = None
    for g, ms in enumerate(racks):
        if tot[g] < n:
            continue
        run, k = 0, 0
        for i in ms:                                    # machines needed: running sum < n, plus 1
            if run + avail[i] >= n:
                break
            run += avail[i]
            k += 1
        key = (k + 1, tot[g], rack[ms[0]])
        if best is None or key < best[0]:
            best = (key, g)
    if best is not None:
        sel = racks[best[1]][: best[0][0]]
    else:
        rack_order = sorted(range(len(racks)), key=lambda g: (-tot[g], rack[racks[g][0]]))
        run, k = 0, 0
        while run < n:
            run += tot[rack_order[k]]
            k += 1
        cidx = sorted((i for g in rack_order[:k] for i in racks[g]), key=lambda i: (-avail[i], i))
        run, k2 = 0, 0
        while run < n:
            run += avail[cidx[k2]]
            k2 += 1
        sel = cidx[:k2]
    counts = [avail[i] for i in sel]
    counts[-1] -= sum(counts) - n
    return sel, counts


def _choose_arrays(avail: np.ndarray, rack: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`choose_machines` on machines that all have some GPU available, by array operations."""
    fits = avail >= n
    if fits.any():
        cand = np.flatnonzero(fits)
        m = cand[int(np.argmin(avail[cand]))]          # the fewest available, then the lowest index
        return np.array([m]), np.array([n])
    idx = np.arange(len(avail))
    # machines grouped by rack, inside a rack by decreasing availability
    order = np.lexsort((idx, -avail, rack))
    a, r = avail[order], rack[order]
    first = np.empty(len(r), dtype=bool)                  # a position that starts a rack
    first[0] = True
    np.not_equal(r[1:], r[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    group = np.cumsum(first) - 1                          # each position's rack (in order)
    tot = np.add.reduceat(a, starts)
    cs = np.cumsum(a)
    ok = np.flatnonzero(tot >= n)
    if len(ok):
        within = cs - (cs[starts] - a[starts])[group]     # running sum inside each rack
        # machines needed per fitting rack: positions in the rack with running sum < n, plus 1
        short = np.bincount(group[within < n], minlength=len(starts))
        best = ok[np.lexsort((r[starts[ok]], tot[ok], short[ok] + 1))[0]]
        k = int(short[best]) + 1
        sel = order[starts[best]: starts[best] + k]
    else:
        rack_order = np.lexsort((r[starts], -tot))
        k = int(np.searchsorted(np.cumsum(tot[rack_order]), n)) + 1
        chosen = np.zeros(len(starts), dtype=bool)
        chosen[rack_order[:k]] = True
        cidx = order[chosen[group]]                       # the chosen racks' machines (all have some)
        cidx = cidx[np.lexsort((cidx, -avail[cidx]))]
        k2 = int(np.searchsorted(np.cumsum(avail[cidx]), n)) + 1
        sel = cidx[:k2]
    counts = avail[sel].copy()
    counts[-1] -= int(counts.sum()) - n
    return sel, counts


class RegionState:
    """One region's machines and running jobs, updated in place as plans are applied.

    Parameters
    ----------
    dcluster, rack, gpu_type, capacity : arrays over the region's machines (dynamic
        cluster index 0..D-1, a rack key, a GPU type code, GPUs on the machine).
    free : free GPUs per machine (defaults to ``capacity``).
    """

    def __init__(self, dcluster, rack, gpu_type, capacity, free=None, n_dclusters: int | None = None):
        self.dcluster = np.asarray(dcluster, dtype=np.int64)
        self.rack = np.asarray(rack, dtype=np.int64)
        self.gpu_type = np.asarray(gpu_type, dtype=np.int64)
        self.capacity = np.asarray(capacity, dtype=np.int64)
        self.free = (self.capacity.copy() if free is None else np.array(free, dtype=np.int64))
        n = len(self.dcluster)
        if not all(len(x) == n for x in (self.rack, self.gpu_type, self.capacity, self.free)):
            raise ValueError("machine arrays must have equal lengths")
        if ((self.free < 0) | (self.free > self.capacity)).any():
            raise ValueError("free GPUs must be within 0..capacity per machine")
        self.n_dclusters = int(n_dclusters if n_dclusters is not None else (self.dcluster.max() + 1 if n else 0))
        # machines of each (dynamic cluster, type), and each machine's position there
        self._groups: dict[tuple[int, int], np.ndarray] = {}
        self.local = np.zeros(n, dtype=np.int64)
        key = self.dcluster * (int(self.gpu_type.max()) + 1 if n else 1) + self.gpu_type
        for k in np.unique(key):
            ms = np.flatnonzero(key == k)
            self._groups[(int(self.dcluster[ms[0]]), int(self.gpu_type[ms[0]]))] = ms
            self.local[ms] = np.arange(len(ms))
        # running jobs: one row each, ids and allocations in lists, the numeric fields in arrays
        # grown by doubling (a stopped job's row is filled by the last row, as a list would be)
        self._row: dict = {}
        self._ids: list = []
        self._alloc: list[tuple[np.ndarray, np.ndarray]] = []
        self._dc = np.zeros(8, dtype=np.int64)
        self._type = np.zeros(8, dtype=np.int64)
        self._prio = np.zeros(8, dtype=np.int64)
        self._start = np.zeros(8, dtype=float)
        self._size = np.zeros(8, dtype=np.int64)
        self.version = 0      # bumped by add_job / remove_job (callers cache per-region summaries by it)
        self.refresh_totals()

    def refresh_totals(self, held: bool = True) -> None:
        """Recompute :attr:`dt_free` (free GPUs per (dynamic cluster, type)) and, with ``held``,
        :attr:`dt_held` (GPUs held per (dynamic cluster, type, priority level)) from scratch;
        ``add_job`` and ``remove_job`` keep both up to date, a caller that writes ``free``
        directly calls this (``held=False``: the running jobs did not change)."""
        D = max(self.n_dclusters, int(self.dcluster.max()) + 1 if len(self.dcluster) else 0)
        T = int(self.gpu_type.max()) + 1 if len(self.gpu_type) else 0
        self.dt_free = np.zeros((D, T), dtype=np.int64)
        np.add.at(self.dt_free, (self.dcluster, self.gpu_type), self.free)
        if not held:
            return
        m = len(self._ids)
        P = int(self._prio[:m].max()) + 1 if m else 1
        self._held_ok = not m or int(self._prio[:m].min()) >= 0
        self.dt_held = np.zeros((D, T, max(P, 1)), dtype=np.int64)
        if self._held_ok and m:
            np.add.at(self.dt_held, (self._dc[:m], self._type[:m], self._prio[:m]), self._size[:m])

    def _hold(self, dc: int, t: int, prio: int, n: int) -> None:
        if prio < 0:
            self._held_ok = False
            return
        if prio >= self.dt_held.shape[2]:
            self.dt_held = np.concatenate(
                [self.dt_held, np.zeros((*self.dt_held.shape[:2], prio + 1 - self.dt_held.shape[2]), np.int64)], axis=2)
        self.dt_held[dc, t, prio] += n

    # ------------------------------------------------------------------ running jobs
    def add_job(self, job_id, priority: int, start: float, machines, counts, take_free: bool = True) -> None:
        """Record a running job on ``machines`` (one dynamic cluster, one GPU type)."""
        machines = np.asarray(machines, dtype=np.int64)
        counts = np.asarray(counts, dtype=np.int64)
        if job_id in self._row:
            raise ValueError(f"job {job_id!r} is already running")
        dcs, types = self.dcluster[machines], self.gpu_type[machines]
        if len(machines) == 0 or (len(machines) > 1 and ((dcs != dcs[0]).any() or (types != types[0]).any())):
            raise ValueError(f"job {job_id!r} must use one dynamic cluster and one GPU type")
        if take_free:
            if (self.free[machines] < counts).any():
                raise ValueError(f"job {job_id!r} takes GPUs that are not free")
            self.free[machines] -= counts
        r = len(self._ids)
        if r == len(self._dc):
            for name in ("_dc", "_type", "_prio", "_start", "_size"):
                a = getattr(self, name)
                setattr(self, name, np.concatenate([a, np.zeros_like(a)]))
        dc, t, n = int(dcs[0]), int(types[0]), int(counts.sum())
        self._row[job_id] = r
        self._ids.append(job_id)
        self._dc[r], self._type[r], self._prio[r], self._start[r], self._size[r] = dc, t, int(priority), float(start), n
        self._alloc.append((machines, counts))
        if take_free:
            self.dt_free[dc, t] -= n
        self._hold(dc, t, int(priority), n)
        self.version += 1

    def remove_job(self, job_id) -> None:
        """The job stops (finish or preemption): its GPUs become free."""
        r = self._row.pop(job_id)
        m, c = self._alloc[r]
        self.free[m] += c
        dc, t, p, n = int(self._dc[r]), int(self._type[r]), int(self._prio[r]), int(self._size[r])
        self.dt_free[dc, t] += n
        if p >= 0:
            self.dt_held[dc, t, p] -= n
        last = len(self._ids) - 1
        if r != last:  # move the last row into the hole
            self._ids[r], self._alloc[r] = self._ids[last], self._alloc[last]
            for a in (self._dc, self._type, self._prio, self._start, self._size):
                a[r] = a[last]
            self._row[self._ids[r]] = r
        self._ids.pop()
        self._alloc.pop()
        self.version += 1

    def jobs(self) -> dict:
        return {j: (int(self._prio[r]), float(self._start[r]), self._alloc[r]) for j, r in self._row.items()}

    def _job_arrays(self):
        """Views of the running jobs' (dynamic cluster, type, priority, start, size) arrays: valid
        until the next ``add_job`` / ``remove_job``."""
        m = len(self._ids)
        return self._dc[:m], self._type[:m], self._prio[:m], self._start[:m], self._size[:m]

    def machines_of(self, dc: int, gtype: int) -> np.ndarray:
        return self._groups.get((int(dc), int(gtype)), np.zeros(0, dtype=np.int64))

    def dcluster_view(self, dc: int, gtype: int) -> dict:
        """Plain arrays of one dynamic cluster for one GPU type (the MIP's input).

        ``free``, ``rack`` over the cluster's machines of the type; ``job_ids``,
        ``job_priority``, ``job_start`` and ``alloc`` (jobs x machines GPU counts) over
        the jobs running there.
        """
        ms = self.machines_of(dc, gtype)
        rows = [r for r in range(len(self._ids)) if self._dc[r] == dc and self._type[r] == gtype]
        alloc = np.zeros((len(rows), len(ms)), dtype=np.int64)
        for i, r in enumerate(rows):
            m, c = self._alloc[r]
            alloc[i, self.local[m]] = c
        return {"free": self.free[ms].copy(), "rack": self.rack[ms].copy(), "machines": ms,
                "job_ids": [self._ids[r] for r in rows],
                "job_priority": np.array([int(self._prio[r]) for r in rows], dtype=np.int64),
                "job_start": np.array([float(self._start[r]) for r in rows], dtype=float), "alloc": alloc}

    def apply(self, plan: Plan, job_id, priority: int, start: float) -> None:
        """Preempt the plan's victims and start ``job_id`` as planned."""
        for v in plan.victims:
            self.remove_job(v)
        self.add_job(job_id, priority, start, plan.machines, plan.counts)

    def copy(self) -> RegionState:
        return copy.deepcopy(self)


# ---------------------------------------------------------------------- planning
def _cost(state: RegionState, victims_rows: np.ndarray, machines: np.ndarray) -> tuple:
    racks, nm = _racks_machines(state.rack, machines)
    if len(victims_rows) == 0:
        return (*NO_PREEMPTION, racks, nm)
    _, _, prio, start, _ = state._job_arrays()
    return (1, -int(prio[victims_rows].min()), int(len(victims_rows)),
            float(start[victims_rows].sum()), racks, nm)


def _victims(state: RegionState, cand: np.ndarray, free_total: int, n: int) -> np.ndarray | None:
    """§4.3's preemption scan over candidate rows; None when even all of them do not suffice."""
    _, _, prio, start, size = state._job_arrays()
    scan = cand[np.lexsort((cand, start[cand], -prio[cand]))]   # lowest priority, longest running
    cum = free_total + np.cumsum(size[scan])
    stop = int(np.searchsorted(cum, n))                         # first position where cum >= n
    if stop >= len(scan):
        return None
    scanned = scan[: stop + 1]
    by_size = scanned[np.argsort(-size[scanned], kind="stable")]  # largest first, ties in scan order
    k = int(np.searchsorted(free_total + np.cumsum(size[by_size]), n)) + 1
    return by_size[:k]


def _plan_in(state: RegionState, dc: int, gtype: int, n: int, victims_rows: np.ndarray) -> Plan:
    ms = state.machines_of(dc, gtype)
    avail = state.free[ms]
    for r in victims_rows.tolist():
        m, c = state._alloc[r]
        avail[state.local[m]] += c
    sel, counts = choose_machines(avail, state.rack[ms], n)
    machines = ms[sel]
    return Plan(dcluster=int(dc), machines=machines, counts=counts,
                victims=tuple(state._ids[r] for r in victims_rows.tolist()),
                cost=_cost(state, victims_rows, machines))


def _candidates(state: RegionState, gtype: int, priority: int) -> np.ndarray:
    dc, typ, prio, _, _ = state._job_arrays()
    return np.flatnonzero((typ == gtype) & (prio > priority))


def plan_dcluster(state: RegionState, dc: int, n: int, gtype: int, priority: int,
                  preempt: bool = True) -> Plan | None:
    """RMS's plan for one job (``n`` GPUs of ``gtype`` at ``priority``) in one dynamic cluster.

    Returns ``None`` when the cluster cannot host the job even with preemption.
    """
    if n < 1:
        raise ValueError("a job needs at least one GPU")
    ms = state.machines_of(dc, gtype)
    free_total = int(state.free[ms].sum())
    if free_total >= n:
        return _plan_in(state, dc, gtype, n, np.zeros(0, dtype=np.int64))
    if not preempt:
        return None
    jdc = state._job_arrays()[0]
    cand = _candidates(state, gtype, priority)
    cand = cand[jdc[cand] == dc]
    v = _victims(state, cand, free_total, n)
    return None if v is None else _plan_in(state, dc, gtype, n, v)


def plan_region(state: RegionState, n: int, gtype: int, priority: int, preempt: bool = True,
                stats: dict | None = None) -> Plan | None:
    """The best plan over the region's dynamic clusters (lowest cost, then lowest index).

    Equal to ``min(plan_dcluster(...) for every cluster)`` but vectorized: free GPUs
    and preemptable GPUs per cluster come from one ``bincount`` each, and only clusters
    that can host the job are planned; a single-machine fit (cost (0,0,0,0,1,1), the
    least possible) ends the search at once.
    """
    if n < 1:
        raise ValueError("a job needs at least one GPU")
    D = state.n_dclusters
    of_type = state.gpu_type == gtype
    if 0 <= gtype < state.dt_free.shape[1] and state.dt_free.shape[0] == D:
        free_dc = state.dt_free[:, gtype]
    else:
        free_dc = np.bincount(state.dcluster[of_type], weights=state.free[of_type], minlength=D).astype(np.int64)
    feasible = np.flatnonzero(free_dc >= n)
    if len(feasible):
        one = of_type & (state.free >= n)
        if one.any():      # choose_machines' single machine: the fewest free, then the lowest index
            dc = int(state.dcluster[one].min())
            ms = state.machines_of(dc, gtype)
            f = state.free[ms]
            c = np.flatnonzero(f >= n)
            return Plan(dcluster=dc, machines=np.array([ms[c[int(np.argmin(f[c]))]]]), counts=np.array([n]),
                        victims=(), cost=(*NO_PREEMPTION, 1, 1))
        plans = [_plan_in(state, int(dc), gtype, n, np.zeros(0, dtype=np.int64)) for dc in feasible]
        return min(plans, key=lambda p: (p.cost, p.dcluster))
    if not preempt:
        return None
    if stats is not None:
        stats["preemption_searches"] = stats.get("preemption_searches", 0) + 1
    jdc, _, prio, start, size = state._job_arrays()
    cand = _candidates(state, gtype, priority)
    if D == 1:         # one dynamic cluster: its victims, if free and preemptable GPUs suffice
        if int(free_dc[0]) + int(size[cand].sum()) < n:
            return None
        return _plan_in(state, 0, gtype, n, _victims(state, cand, int(free_dc[0]), n))
    pre_dc = np.bincount(jdc[cand], weights=size[cand], minlength=D).astype(np.int64)
    victims = {}
    for dc in np.flatnonzero(free_dc + pre_dc >= n).tolist():
        v = _victims(state, cand[jdc[cand] == dc], int(free_dc[dc]), n)
        victims[dc] = ((1, -int(prio[v].min()), len(v), float(start[v].sum())), v)
    if not victims:
        return None
    # machines are chosen only where the victims' part of the cost vector is the least
    head = min(c for c, _ in victims.values())
    plans = [_plan_in(state, dc, gtype, n, v) for dc, (c, v) in victims.items() if c == head]
    return min(plans, key=lambda p: (p.cost, p.dcluster))


def workload_cost(costs: list[tuple]) -> tuple:
    """A workload's cost vector: the element-wise sum of its jobs' (§4.3)."""
    return tuple(sum(c[i] for c in costs) for i in range(len(costs[0])))


def plan_workload(state: RegionState, jobs: list[tuple[int, int, int]], preempt: bool = True):
    """Plans for a workload's jobs ``(n, gtype, priority)`` in one region, one job at a time.

    Each job gets the best cluster given the plans of the jobs before it (applied to a
    scratch copy of the state); returns ``(plans, cost)`` or ``None`` when a job cannot
    be placed (the workload is gang-scheduled: all or nothing).
    """
    scratch = state.copy() if len(jobs) > 1 else state
    plans = []
    for i, (n, g, p) in enumerate(jobs):
        plan = plan_region(scratch, n, g, p, preempt)
        if plan is None:
            return None
        plans.append(plan)
        if i + 1 < len(jobs):
            scratch.apply(plan, ("__workload_job__", i), p, 0.0)
    return plans, workload_cost([pl.cost for pl in plans])


def auction(offers: dict, tiebreak: dict | None = None) -> tuple | None:
    """The cross-region auction (§4.3): the region whose offer has the highest P_score.

    ``offers`` maps region index -> ``(cost, payload)`` for every eligible region that
    produced a plan (exhaustive search); the lowest cost vector (highest P_score) wins.
    Ties (the paper leaves them open) go to the lowest ``tiebreak[region]`` when given
    (the policy passes minus the region's free GPUs of the type: spread the load), then
    to the lowest region index. Returns ``(region, cost, payload)`` or ``None``.
    """
    if not offers:
        return None
    tb = tiebreak or {}
    r = min(offers, key=lambda k: (offers[k][0], tb.get(k, 0), k))
    return r, offers[r][0], offers[r][1]


@dataclass
class NegativeCache:
    """Failed scheduling attempts within one GMS-scan pass (§4.3).

    ``key`` is the scheduling properties except the size, its first element the
    request's effective priority; ``failed(key, n)`` is True when a size ``<= n``
    already failed under ``key`` in this pass.

    Why a hit never changes a decision: a request at level p can use the free GPUs and
    those held by jobs of a lower priority (level > p), and it fails at size m iff every
    dynamic cluster has fewer than m such GPUs (so it also fails at any size >= m).
    Within one pass nothing finishes; a placement takes free GPUs (never more usable
    GPUs for p) and may release a victim's GPUs beyond its need. Those leftovers add to
    p's usable GPUs only when the victim's level q <= p; :meth:`placed` therefore drops
    the entries with level >= q. When a pass visits requests in priority order (GMS),
    victims are always below every level seen so far and nothing is ever dropped.
    ``enabled=False`` keeps the counters but never answers from the cache.
    """

    enabled: bool = True
    hits: int = 0
    misses: int = 0
    dropped: int = 0
    _min_failed: dict = field(default_factory=dict)

    def failed(self, key, n: int) -> bool:
        m = self._min_failed.get(key)
        if self.enabled and m is not None and n >= m:
            self.hits += 1
            return True
        self.misses += 1
        return False

    def store(self, key, n: int) -> None:
        m = self._min_failed.get(key)
        if m is None or n < m:
            self._min_failed[key] = n

    def placed(self, min_victim_level: int | None) -> None:
        """A plan was applied; ``min_victim_level`` is its most important victim's level."""
        if min_victim_level is None:
            return
        for k in [k for k in self._min_failed if k[0] >= min_victim_level]:
            del self._min_failed[k]
            self.dropped += 1

    def clear(self) -> None:
        self._min_failed.clear()

    @property
    def hit_rate(self) -> float:
        total = self.hits + self.misses
        return self.hits / total if total else 0.0
