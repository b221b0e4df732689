"""HiveD on the simulator (OSDI'20 §3.3, §5.2-5.3): VCs of cells, buddy binding, scavenging.

Each tenant owns a VC (``placement.models.hived_vc.VCAssignment``: cells per level). A job asks for
``request_cells(g)`` cells of ``request_level(g)`` (one cell; ``ceil(g/8)`` node cells above a
node). Per VC the jobs are taken in order (FIFO by submit time, or ``order="tiresias"``: least
attained GPU-service first, our Tiresias-like option); the first job of a VC that cannot start
blocks the rest of that VC's queue.

Guaranteed jobs
    A job is guaranteed when its VC has a free logical cell for it (:class:`VCLogical`: the
    VC's reserved cells as buddy systems; the job goes into the open logical cell of the
    smallest level that has a free aligned block, else opens a new reserved cell of the
    smallest level >= its own that the VC has spare, else, for multi-node jobs, ``m`` whole node
    cells). Opening a logical cell binds it to a physical cell by :class:`placement.solvers.buddy.BuddyAllocator`
    (HiveD Algorithm 1; dynamic binding: an emptied logical cell is released). Static binding
    (``binding="static"``, §5.3's baseline): every reserved cell is bound once at the start and
    never released; a job's new logical cell takes the VC's free bound cell with the fewest
    low-priority GPUs, then the lowest index (§3.3's rule for high-priority cells, applied
    inside the VC's own cells).
Log
    Every start row names its class (the engine appends :attr:`Start.note`):
    ``class=guaranteed vc=T cells=S:I,...`` (the physical cells, of S GPUs at index I, bound to
    the job's logical cells) or ``class=opportunistic vc=T``; :func:`placement.sim.replay.guarantee_check`
    verifies them from the log alone.
Low-priority jobs (§3.3 "Allocating low-priority cells"; as the reference scheduler runs them)
    A job its VC cannot host runs as a preemptible low-priority (opportunistic) job (§5.1:
    "otherwise the job will be scheduled as a low-priority one"). As in HiveD's own scheduler
    (``hivedscheduler``, ``topology_aware_scheduler.go``), it may use any GPU no job uses, in a
    cell bound to a VC or not (:func:`scavenge_place`: nodes with the most low-priority GPUs
    first, then the fewest guaranteed GPUs; best affinity inside the node), under dynamic and
    static binding alike, so that §5.3's comparison differs in the binding only. Binding a cell
    preempts nobody; a guaranteed job preempts the low-priority jobs on the GPUs it is given
    (``collectPreemptionVictims``). Inside a bound cell a VC's logical sub-cells are bound to the
    physical sub-cells with the fewest low-priority GPUs (:meth:`HiveD._map`), and new cells are
    bound to the free cells with the fewest (:class:`placement.solvers.buddy.BuddyAllocator`,
    ``scavenging=True``). Difference: the paper's §3.3 describes a second buddy view of idle
    cells for low-priority work (kept in :class:`~placement.solvers.buddy.BuddyAllocator` without
    ``scavenging``); the reference code, which we follow, places opportunistic pods on the
    physical cluster's free GPUs instead. The reference's weighted max-min fairness across
    tenants' low-priority jobs is not modelled: the VCs' queues are visited by their oldest
    waiting job.
Soft affinity (option ``soft``: job ids; §5.2, Figure 9)
    HiveD reserves cells, so a guaranteed job always gets its affinity from its VC's cells and is
    placed as any other ("HiveD reserves cells to achieve sharing safety and avoids the complex
    tradeoff altogether"); a soft job relaxes only when it runs as a low-priority job and
    :func:`scavenge_place` finds no node with room for its pods: it then takes any idle GPUs
    (:func:`~placement.solvers.online.tenants.spread_place`), at the same speed.
Sharing safety
    :func:`sharing_safety_check` (a ``replay_check`` hook) rebuilds every VC's logical state
    from the log alone and reports each time a waiting job of a VC could have had a free
    logical cell of its VC, and every preemption of a job that held VC cells. (Pass 1 starts
    every job its VC can hold, in the VC's order, so the check holds for either order.)
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from placement.models import hived_vc as hv
from placement.solvers.buddy import BuddyAllocator
from placement.solvers.online.tenants import (
    AssignmentOption,
    Order,
    Queues,
    SoftOption,
    as_assignment,
    check_cluster,
    check_order,
    check_soft,
    spread_place,
)

from placement.errors import InstanceError
from placement.sim.policy import Policy, Preempt, Start, Timer

__all__ = ["VCLogical", "HiveD", "HiveDStatic", "sharing_safety_check"]

G = hv.LEVEL_GPUS


class VCLogical:
    """One VC's logical cells: ``r[k]`` reserved level-``k`` cells; open cells hold jobs.

    ``place(job, gpus)`` -> list of (cell key, offset, n GPUs) or None; ``remove(job)`` ->
    the cell keys emptied (closed). Cell keys are ``(level, serial)``; deterministic.
    """

    def __init__(self, reserved: tuple[int, ...]):
        self.r = list(reserved)
        self.open: dict[tuple[int, int], int] = {}  # key -> used GPUs as a bit mask
        self.n_open = [0] * hv.K
        self.serial = 0
        self.jobs: dict[str, list[tuple[tuple[int, int], int, int]]] = {}
        self.total = sum(n * G[k + 1] for k, n in enumerate(self.r))   # reserved GPUs
        self.used = 0                                                   # GPUs of the jobs placed

    @staticmethod
    def _block(mask: int, n: int, size: int) -> int | None:
        ones = (1 << size) - 1
        for off in range(0, n, size):
            if not (mask >> off) & ones:
                return off
        return None

    def fits(self, gpus: int) -> bool:
        return self._plan(gpus) is not None

    def has_room(self) -> bool:
        """Whether a 1-GPU job fits (``fits(1)``, cheaper): a reserved cell not open yet, or a
        free GPU in an open one, i.e. fewer GPUs used than reserved. Fitting is monotone in the GPU
        number, so without room nothing fits."""
        return self.used < self.total

    def _plan(self, gpus: int):
        k, m = hv.request_level(gpus), hv.request_cells(gpus)
        if m == 1:
            size = G[k]
            best = None
            for key, mask in self.open.items():
                if key[0] >= k and (best is None or key[0] < best[0][0]):
                    off = self._block(mask, G[key[0]], size)
                    if off is not None:
                        best = (key, off)
            if best is not None:
                return [("old", best[0], best[1], gpus)]
            for lv in range(k, hv.K + 1):
                if self.n_open[lv - 1] < self.r[lv - 1]:
                    return [("new", lv, 0, gpus)]
            return None
        if self.r[hv.K - 1] - self.n_open[hv.K - 1] >= m:
            left, out = gpus, []
            for _ in range(m):
                out.append(("new", hv.K, 0, min(left, G[hv.K])))
                left -= G[hv.K]
            return out
        return None

    def place(self, job: str, gpus: int):
        plan = self._plan(gpus)
        if plan is None:
            return None
        out = []
        for kind, a, off, n in plan:
            if kind == "new":
                key = (a, self.serial)
                self.serial += 1
                self.open[key] = 0
                self.n_open[a - 1] += 1
            else:
                key = a
            self.open[key] |= ((1 << n) - 1) << off
            out.append((key, off, n))
        self.jobs[job] = out
        self.used += gpus
        return out

    def remove(self, job: str) -> list[tuple[int, int]]:
        closed = []
        for key, off, n in self.jobs.pop(job):
            self.used -= n
            self.open[key] &= ~(((1 << n) - 1) << off)
            if not self.open[key]:
                del self.open[key]
                self.n_open[key[0] - 1] -= 1
                closed.append(key)
        return closed


def scavenge_place(free: np.ndarray, low: np.ndarray, guaranteed: np.ndarray, gpus: int
                   ) -> list[int] | None:
    """GPUs for an opportunistic (low-priority) job as HiveD's reference scheduler places it
    (``hivedscheduler``, ``topology_aware_scheduler.go``, ``Schedule`` at opportunistic priority
    with ``crossPriorityPack=false``), on 8-GPU nodes of GPU / PCIe switch / socket cells.

    Any GPU no job uses counts as free, bound to a VC or not. The job is split into pods of at
    most a node (``ceil(g/8)`` pods, smallest first); nodes are taken in the order: most GPUs
    used by low-priority jobs first (pack the opportunistic work), then fewest GPUs used by
    guaranteed jobs (stay away from them), then node index (``findNodesForPods``: the first
    node in that order with room for the pod; a node may take several pods). Inside a node the
    pod takes the lowest cell (PCIe switch, socket, node) with enough free GPUs, the first one
    in index order, its lowest free GPUs (``findLeafCellsInNode``: best affinity). ``None``
    when the pods do not fit.
    """
    n_nodes = free.size // G[hv.K]
    fr = free.reshape(n_nodes, G[hv.K])
    n_free = fr.sum(axis=1)
    if int(n_free.sum()) < gpus:
        return None
    same = low.reshape(n_nodes, G[hv.K]).sum(axis=1)
    higher = guaranteed.reshape(n_nodes, G[hv.K]).sum(axis=1)
    order = np.lexsort((np.arange(n_nodes), higher, -same))
    m = hv.request_cells(gpus)
    pods = sorted(min(G[hv.K], gpus - G[hv.K] * p) for p in range(m))
    picked: list[int] = []
    taken = np.zeros(n_nodes, dtype=np.int64)
    pos = 0
    for need in pods:
        while pos < n_nodes and n_free[order[pos]] - taken[order[pos]] < need:
            pos += 1
            if pos < n_nodes:
                taken[order[pos]] = 0
        if pos == n_nodes:
            return None
        node = int(order[pos])
        avail = fr[node].copy()
        for g in picked:
            if g // G[hv.K] == node:
                avail[g % G[hv.K]] = False
        for k in range(hv.request_level(need), hv.K + 1):
            sizes = avail.reshape(-1, G[k]).sum(axis=1)
            ok = np.flatnonzero(sizes >= need)
            if ok.size:
                cell = int(ok[0])
                ids = np.flatnonzero(avail[cell * G[k]:(cell + 1) * G[k]])[:need] + cell * G[k]
                picked.extend(int(node * G[hv.K] + x) for x in ids)
                break
        taken[node] += need
    return sorted(picked)


class HiveD(Policy):
    """HiveD: virtual clusters of multi-level cells, buddy allocation with dynamic binding.

    Module doc. Options: ``assignment`` (VCAssignment or
    mapping tenant -> cells per level; ``placement simulate`` fits one to the Philly trace
    for the cluster when it is not given, multi-level cells unless ``levels="node"``),
    ``order`` ("fifo" | "tiresias"), ``soft`` (ids of the jobs whose affinity is soft)."""

    name = "hived"
    binding = "dynamic"
    needs = {"assignment": "vc-assignment"}
    fit_levels = "multi"

    pick = "fewest-low"   # which free physical cell a binding takes (static binding: an option)

    def __init__(self, assignment: AssignmentOption = None, order: Order = "fifo", soft: SoftOption = ()):
        self.assignment_arg, self.order = assignment, check_order(order)
        self.soft = check_soft(soft)
        self.n = {"guaranteed_starts": 0, "low_starts": 0, "preempted_jobs": 0, "preempted_gpus": 0,
                  "binds": 0, "releases": 0, "calls": 0, "low_starts_in_bound_cells": 0, "relaxed_starts": 0}
        self.guaranteed: dict[str, str] = {}  # running guaranteed job -> tenant
        self.guaranteed_ever: set[str] = set()  # jobs started guaranteed (for fragmentation measures)
        self.high_runs: set[tuple[str, float]] = set()  # (job, start time) of each guaranteed run
        self.queues = Queues()

    # ----------------------------------------------------------------- set-up
    def setup(self, view, seed):
        n_nodes = check_cluster(view.cluster)
        a = as_assignment(self.assignment_arg, n_nodes)
        self.assign = a
        self.inst = hv.to_instance(a)
        self.vc_of = {v.name: i for i, v in enumerate(self.inst.vcs)}
        self.alloc = BuddyAllocator(self.inst, scavenging=True)
        self.logical = {t: VCLogical(c) for t, c in a.cells.items()}
        self.phys: dict[tuple[str, tuple[int, int]], int] = {}  # (tenant, logical key) -> physical index
        self.pool: dict[str, list[list[int]]] = {}  # static: tenant -> free bound cells per level
        self.low: dict[str, tuple[int, ...]] = {}  # low job -> GPUs
        self.low_owner = np.full(view.cluster.n_gpus, -1, dtype=np.int64)
        self.g_mask = np.zeros(view.cluster.n_gpus, dtype=bool)  # GPUs of running guaranteed jobs
        self.g_gpus: dict[str, list[int]] = {}
        self.sub: dict = {}        # (tenant, logical key) -> {(level, logical sub-cell): [physical, uses]}
        self.sub_taken: dict = {}  # (tenant, logical key) -> {(level, physical sub-cell)} mapped
        self.low_ids: list[str] = []
        self.low_index: dict[str, int] = {}
        if self.binding == "static":
            for t, c in a.cells.items():
                self.pool[t] = [[] for _ in range(hv.K)]
                for k in range(hv.K, 0, -1):
                    for _ in range(c[k - 1]):
                        al = self.alloc.allocate(self.vc_of[t], 0, k)
                        self.pool[t][k - 1].append(al.cell[2])
                        self.n["binds"] += 1

    # ----------------------------------------------------------------- helpers
    def _bind(self, tenant: str, key: tuple[int, int], preempt: set[str]) -> int:
        k = key[0]
        if self.binding == "static":
            # pick="fewest-low": §3.3's rule inside the VC, the free bound cell with the fewest
            # low-priority GPUs; pick="lowest": a fixed order, the free bound cell of lowest index
            pool = self.pool[tenant][k - 1]
            busy = self.low_owner >= 0
            j = min(range(len(pool)), key=lambda x: pool[x]) if self.pick == "lowest" else min(
                range(len(pool)), key=lambda x: (int(busy[pool[x] * G[k]:(pool[x] + 1) * G[k]].sum()), pool[x]))
            i = pool.pop(j)
        else:
            al = self.alloc.allocate(self.vc_of[tenant], 0, k)
            if al is None:  # cannot happen under a feasible assignment (Theorem 1)
                raise RuntimeError("buddy allocation failed under a feasible assignment")
            i = al.cell[2]
            self.n["binds"] += 1
        self.phys[(tenant, key)] = i
        return i

    def _map(self, tenant: str, key: tuple[int, int], i: int, off: int, n: int) -> list[int]:
        """Physical GPUs for logical GPUs ``off..off+n-1`` of the VC's open cell ``key`` (bound to
        physical cell ``i``). As the reference maps a VC's cells below a bound cell
        (``mapVirtualCellsToPhysical``): a logical sub-cell is bound, when it gets its first job,
        to a physical child of its parent's physical cell that no other logical sub-cell holds,
        the one with the fewest GPUs of low-priority jobs (then the lowest index), and released
        when its last job ends. The binding keeps the logical topology, so a job that fits the
        logical cell fits the physical one; it avoids preempting scavengers where idle GPUs of
        the bound cell suffice."""
        sub = self.sub.setdefault((tenant, key), {})
        taken = self.sub_taken.setdefault((tenant, key), set())
        top = key[0]
        out = []
        busy_low = self.low_owner >= 0
        for x in range(off, off + n):
            parent = i  # physical index of the level-(m+1) cell on the path
            for m in range(top - 1, 0, -1):
                lid = x // G[m]
                got = sub.get((m, lid))
                if got is None:
                    h = G[m + 1] // G[m]
                    kids = [c for c in range(parent * h, parent * h + h) if (m, c) not in taken]
                    c = kids[0] if self.pick == "lowest" else min(
                        kids, key=lambda c, m=m: (int(busy_low[c * G[m]:(c + 1) * G[m]].sum()), c))
                    got = sub[(m, lid)] = [c, 0]
                    taken.add((m, c))
                got[1] += 1
                parent = got[0]
            out.append(parent if top > 1 else i)
        return out

    def _unmap(self, tenant: str, key: tuple[int, int], off: int, n: int) -> None:
        sub, taken = self.sub[(tenant, key)], self.sub_taken[(tenant, key)]
        for x in range(off, off + n):
            for m in range(key[0] - 1, 0, -1):
                got = sub[(m, x // G[m])]
                got[1] -= 1
                if got[1] == 0:
                    del sub[(m, x // G[m])]
                    taken.discard((m, got[0]))

    def _release_cells(self, tenant: str, closed):
        for key in closed:
            if self.sub.pop((tenant, key), None) or self.sub_taken.pop((tenant, key), None):
                raise RuntimeError("a closed logical cell still maps GPUs")
            i = self.phys.pop((tenant, key))
            if self.binding == "static":
                self.pool[tenant][key[0] - 1].append(i)
                self.pool[tenant][key[0] - 1].sort()
            else:
                self.alloc.release((0, key[0], i))
                self.n["releases"] += 1

    def _drop_low(self, jid: str):
        gpus = self.low.pop(jid)
        self.low_owner[list(gpus)] = -1
        self.alloc.release_low(jid)

    def _start_low(self, view, job, free) -> tuple[int, ...] | None:
        """The reference scheduler's opportunistic placement (:func:`scavenge_place`), the same
        rule for dynamic and static binding; recorded in the allocator (its G view binds cells
        with fewer low-priority GPUs first)."""
        gpus = scavenge_place(free, self.low_owner >= 0, self.g_mask, job.gpus)
        if gpus is None and job.id in self.soft:
            gpus = spread_place(free, job.gpus)
            if gpus is not None:
                self.n["relaxed_starts"] += 1
        if gpus is None:
            return None
        if self._in_bound_cell(gpus):
            self.n["low_starts_in_bound_cells"] += 1
        self.alloc.occupy_low(job.id, 0, gpus)
        self.low[job.id] = tuple(gpus)
        self.low_owner[list(gpus)] = self._low_idx(job.id)
        return tuple(gpus)

    def _in_bound_cell(self, gpus) -> bool:
        """Whether any of ``gpus`` lies in a physical cell bound to a VC now."""
        st = self.alloc.chains[0]
        for g in gpus:
            for k in range(1, hv.K + 1):
                if (k, g // G[k]) in st.gowner:
                    return True
        return False

    def _low_idx(self, jid: str) -> int:
        if jid not in self.low_index:
            self.low_index[jid] = len(self.low_ids)
            self.low_ids.append(jid)
        return self.low_index[jid]

    # ----------------------------------------------------------------- schedule
    def schedule(self, view, events):
        self.n["calls"] += 1
        for ev in events:
            if ev.kind == "finish" and ev.job_id is not None:
                self._finished(ev.job_id, view)
        self.queues.events(view, events)
        free = view.free.copy()
        out: list = []
        started: list = []
        preempt_all: set[str] = set()
        tenants = self.queues.tenants()
        # pass 1: guaranteed starts, per VC in order; every job its VC can hold starts
        for t in tenants:
            lg = self.logical.get(t)
            if lg is None or not lg.has_room():
                continue  # a VC without room for 1 GPU holds nothing
            fail = 1 << 30  # fitting is monotone in the GPU number
            smallest = self.queues.min_gpus(t)
            if not lg.fits(smallest):
                continue  # not even the smallest pending job fits: none does (the walk would start nothing)
            for job in self.queues.ordered(view, t, self.order):
                if fail <= smallest:
                    break  # every pending job of the VC is at least as large as one that failed
                placed = None if job.gpus >= fail else lg.place(job.id, job.gpus)
                if placed is None:
                    fail = min(fail, job.gpus)
                    if not lg.has_room():
                        break
                    continue
                preempt: set[str] = set()
                gpus: list[int] = []
                cells: list[str] = []
                for key, off, n in placed:
                    i = self.phys.get((t, key))
                    if i is None:
                        i = self._bind(t, key, preempt)
                    gpus.extend(self._map(t, key, i, off, n))
                    cells.append(f"{G[key[0]]}:{i}")
                owners = {int(o) for o in self.low_owner[gpus] if o >= 0}
                preempt |= {self.low_ids[o] for o in owners}
                for jid in sorted(preempt):
                    if jid in self.low:
                        g = self.low[jid]
                        self._drop_low(jid)
                        free[list(g)] = True
                        out.append(Preempt(jid))
                        preempt_all.add(jid)
                        self.n["preempted_jobs"] += 1
                        self.n["preempted_gpus"] += len(g)
                if not free[gpus].all():
                    raise RuntimeError("guaranteed cell overlaps busy GPUs")
                free[gpus] = False
                self.g_mask[gpus] = True
                self.g_gpus[job.id] = gpus
                out.append(Start(job.id, tuple(gpus), f"class=guaranteed vc={t} cells={','.join(cells)}"))
                started.append(job)
                self.n["guaranteed_starts"] += 1
                self.guaranteed[job.id] = t
                self.guaranteed_ever.add(job.id)
                self.high_runs.add((job.id, view.now))
        # pass 2: low-priority starts, per VC in order (the first that fails blocks its VC),
        # VCs by the submit time of their first waiting job
        done = {j.id for j in started}
        for j in started:
            self.queues.remove(j)
        heads = []
        for t in tenants:
            first = next((j for j in self.queues.ordered(view, t, self.order) if j.id not in done), None)
            if first is not None:
                heads.append((first.submit, t))
        n_free = int(free.sum())
        node_free = int(free.reshape(-1, G[hv.K]).sum(axis=1).max()) if n_free else 0
        for _, t in sorted(heads):
            if n_free == 0:
                break
            low_started = []
            for job in self.queues.ordered(view, t, self.order):
                if job.gpus > n_free or (min(job.gpus, G[hv.K]) > node_free and job.id not in self.soft):
                    break  # its largest pod fits no node: scavenge_place would fail
                gpus = self._start_low(view, job, free)
                if gpus is None:
                    break
                free[list(gpus)] = False
                n_free -= job.gpus
                node_free = int(free.reshape(-1, G[hv.K]).sum(axis=1).max()) if n_free else 0
                out.append(Start(job.id, gpus, f"class=opportunistic vc={t}"))
                low_started.append(job)
                self.n["low_starts"] += 1
            for job in low_started:
                self.queues.remove(job)
        for jid in sorted(preempt_all):
            self.queues.add(view.job(jid))
        if preempt_all:  # preempted jobs are pending again only after these decisions apply
            out.append(Timer(view.now, "requeue"))
        return out

    def _finished(self, jid: str, view):
        t = self.guaranteed.pop(jid, None)
        if t is not None:
            self.g_mask[self.g_gpus.pop(jid)] = False
            for key, off, n in self.logical[t].jobs[jid]:
                self._unmap(t, key, off, n)
            self._release_cells(t, self.logical[t].remove(jid))
        elif jid in self.low:
            self._drop_low(jid)

    def stats(self):
        return {**self.n, "binding": self.binding, "order": self.order,
                "vc_gpus": {t: self.assign.gpus(t) for t in self.assign.cells} if hasattr(self, "assign") else {}}


class HiveDStatic(HiveD):
    """HiveD with static binding: every reserved cell bound at the start (§5.3's baseline).

    ``pick``: which of its VC's free bound cells a new logical cell takes (the paper does not
    say): ``"fewest-low"`` (§3.3's rule inside the VC: the fewest GPUs of low-priority jobs, then
    the lowest index; the sub-cells below it alike) or ``"lowest"`` (a fixed order: the lowest
    index, unaware of low-priority jobs)."""

    name = "hived-static"
    binding = "static"

    def __init__(self, assignment: AssignmentOption = None, order: Order = "fifo",
                 pick: Literal["fewest-low", "lowest"] = "fewest-low", soft: SoftOption = ()):
        super().__init__(assignment, order, soft)
        if pick not in ("fewest-low", "lowest"):
            raise InstanceError("pick", f"must be 'fewest-low' or 'lowest', not {pick!r}")
        self.pick = pick

    def stats(self):
        return {**super().stats(), "pick": self.pick}


def sharing_safety_check(assignment: hv.VCAssignment):
    """A ``replay_check`` hook: from the log alone, each VC's logical cells (:class:`VCLogical`,
    jobs enter in the log's start order when their VC can hold them) and, at the end of every
    instant, no waiting job of a VC may fit a free logical cell of it (it suffices to test the
    smallest: fitting is monotone in the GPU number); a job holding VC cells must never be
    preempted."""
    def check(trace, cluster, log) -> list[str]:
        jobs = {j.id: j for j in trace.jobs}
        lg = {t: VCLogical(c) for t, c in assignment.cells.items()}
        inside: set[str] = set()
        pending: dict[str, dict[str, float]] = {}
        sizes: dict[str, dict[int, int]] = {}   # tenant -> GPUs -> pending jobs of that size
        out: list[str] = []
        rows = list(log.rows)

        def wait(t: str, jid: str, submit: float) -> None:
            p = pending.setdefault(t, {})
            if jid not in p:
                sz = sizes.setdefault(t, {})
                sz[jobs[jid].gpus] = sz.get(jobs[jid].gpus, 0) + 1
            p[jid] = submit

        def started(t: str, jid: str) -> None:
            if pending.get(t, {}).pop(jid, None) is not None:
                sz = sizes[t]
                sz[jobs[jid].gpus] -= 1
                if not sz[jobs[jid].gpus]:
                    del sz[jobs[jid].gpus]

        def at_end_of_instant(t_now):
            for t, sz in sizes.items():
                if not sz or t not in lg or not lg[t].has_room():
                    continue
                if lg[t].fits(min(sz)):   # the smallest pending job fits: name the first of them
                    p = pending[t]
                    head = min(p, key=lambda j: (jobs[j].gpus, p[j], j))
                    out.append(f"sharing-safety: at {t_now!r} job {head} of VC {t} waits while its VC "
                               f"has a free cell for {jobs[head].gpus} GPUs")
        for n, r in enumerate(rows):
            job = jobs.get(r.job)
            if job is None:
                continue
            if r.event == "submit":
                wait(job.tenant, r.job, job.submit)
            elif r.event == "start":
                started(job.tenant, r.job)
                v = lg.get(job.tenant)
                if v is not None and v.place(r.job, job.gpus) is not None:
                    inside.add(r.job)
            elif r.event in ("finish", "preempt"):
                if r.job in inside:
                    inside.discard(r.job)
                    lg[job.tenant].remove(r.job)
                    if r.event == "preempt":
                        out.append(f"sharing-safety: guaranteed job {r.job} is preempted at {r.time!r}")
                if r.event == "preempt":
                    wait(job.tenant, r.job, job.submit)
            if n + 1 == len(rows) or rows[n + 1].time != r.time:
                at_end_of_instant(r.time)
        return out
    return check
