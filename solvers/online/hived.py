"""HiveD on the simulator (OSDI'20 §3.3, §5.2-5.3): VCs of cells, buddy binding, scavenging.

Each tenant owns a VC (``models.hived_vc.VCAssignment``: cells per level). A job asks for
``request_cells(g)`` cells of ``request_level(g)`` (one cell; ``ceil(g/8)`` node cells above a
node). Per VC the jobs are taken in order (FIFO by submit time, or ``order="tiresias"``: least
attained GPU-service first, our Tiresias-like option); the first job of a VC that cannot start
blocks the rest of that VC's queue.

Guaranteed jobs
    A job is guaranteed when its VC has a free logical cell for it (:class:`VCLogical`: the
    VC's reserved cells as buddy systems; the job goes into the open logical cell of the
    smallest level that has a free aligned block, else opens a new reserved cell of the
    smallest level >= its own that the VC has spare, else, for multi-node jobs, ``m`` whole node
    cells). Opening a logical cell binds it to a physical cell by :class:`solvers.buddy.BuddyAllocator`
    (HiveD Algorithm 1; dynamic binding: an emptied logical cell is released). Static binding
    (``binding="static"``, §5.3's baseline): every reserved cell is bound once at the start and
    never released.
Low-priority jobs (§3.3 "Allocating low-priority cells")
    A job its VC cannot host runs as a preemptible low-priority job (§5.1: "otherwise the job
    will be scheduled as a low-priority one"). Dynamic binding: cells from the allocator's LP
    view (idle cells far from guaranteed ones); a guaranteed binding over them preempts them
    (the allocator names them). Static binding: any idle GPUs (all cells are bound; the GPUs a
    guaranteed job needs are taken back by preemption).
Sharing safety
    :func:`sharing_safety_check` (a ``replay_check`` hook) rebuilds every VC's logical state
    from the log alone and reports each time a waiting job of a VC could have had a free
    logical cell of its VC, and every preemption of a job that held VC cells. (Pass 1 starts
    every job its VC can hold, in the VC's order, so the check holds for either order.)
"""

from __future__ import annotations

import numpy as np

from models import hived_vc as hv
from placement.sim.placement import first_fit_consolidated
from placement.sim.policy import Policy, Preempt, Start, Timer
from solvers.buddy import BuddyAllocator
from solvers.online.tenants import (
    AssignmentOption,
    Order,
    Queues,
    as_assignment,
    check_cluster,
    check_order,
)

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

    @staticmethod
    def _block(mask: int, n: int, size: int) -> int | None:
        ones = (1 << size) - 1
        for off in range(0, n, size):
            if not (mask >> off) & ones:
                return off
        return None

    def fits(self, gpus: int) -> bool:
        return self._plan(gpus) is not None

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
        return out

    def remove(self, job: str) -> list[tuple[int, int]]:
        closed = []
        for key, off, n in self.jobs.pop(job):
            self.open[key] &= ~(((1 << n) - 1) << off)
            if not self.open[key]:
                del self.open[key]
                self.n_open[key[0] - 1] -= 1
                closed.append(key)
        return closed


class HiveD(Policy):
    """HiveD: virtual clusters of multi-level cells, buddy allocation with dynamic binding.

    Module doc. Options: ``assignment`` (VCAssignment or
    mapping tenant -> cells per level; ``placement simulate`` fits one to the Philly trace
    for the cluster when it is not given, multi-level cells unless ``levels="node"``),
    ``order`` ("fifo" | "tiresias")."""

    name = "hived"
    binding = "dynamic"
    needs = {"assignment": "vc-assignment"}
    fit_levels = "multi"

    def __init__(self, assignment: AssignmentOption = None, order: Order = "fifo"):
        self.assignment_arg, self.order = assignment, check_order(order)
        self.n = {"guaranteed_starts": 0, "low_starts": 0, "preempted_jobs": 0, "preempted_gpus": 0,
                  "binds": 0, "releases": 0, "calls": 0}
        self.guaranteed: dict[str, str] = {}  # running guaranteed job -> tenant
        self.guaranteed_ever: set[str] = set()  # jobs started guaranteed (for fragmentation measures)
        self.queues = Queues()

    # ----------------------------------------------------------------- set-up
    def setup(self, view, seed):
        n_nodes = check_cluster(view.cluster)
        a = as_assignment(self.assignment_arg, n_nodes)
        self.assign = a
        self.inst = hv.to_instance(a)
        self.vc_of = {v.name: i for i, v in enumerate(self.inst.vcs)}
        self.alloc = BuddyAllocator(self.inst)
        self.logical = {t: VCLogical(c) for t, c in a.cells.items()}
        self.phys: dict[tuple[str, tuple[int, int]], int] = {}  # (tenant, logical key) -> physical index
        self.pool: dict[str, list[list[int]]] = {}  # static: tenant -> free bound cells per level
        self.low: dict[str, tuple[int, ...]] = {}  # low job -> GPUs
        self.low_owner = np.full(view.cluster.n_gpus, -1, dtype=np.int64)
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
            i = self.pool[tenant][k - 1].pop(0)
        else:
            al = self.alloc.allocate(self.vc_of[tenant], 0, k)
            if al is None:  # cannot happen under a feasible assignment (Theorem 1)
                raise RuntimeError("buddy allocation failed under a feasible assignment")
            i = al.cell[2]
            self.n["binds"] += 1
            for lowkey in al.preempted:
                preempt.add(lowkey[0])
        self.phys[(tenant, key)] = i
        return i

    def _release_cells(self, tenant: str, closed):
        for key in closed:
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
        if self.binding == "dynamic":
            for c in range(hv.request_cells(len(gpus))):
                if (jid, c) in self.alloc.low:  # the allocator already released preempted cells
                    self.alloc.release_low((jid, c))

    def _start_low(self, view, job, free) -> tuple[int, ...] | None:
        if self.binding == "dynamic":
            k, m = hv.request_level(job.gpus), hv.request_cells(job.gpus)
            cells = []
            for c in range(m):
                cell = self.alloc.allocate_low((job.id, c), 0, k)
                if cell is None:
                    for cc in range(c):
                        self.alloc.release_low((job.id, cc))
                    return None
                cells.append(cell)
            gpus: list[int] = []
            for _, lv, i in cells:
                gpus.extend(range(i * G[lv], i * G[lv] + G[lv]))
            gpus = gpus[:job.gpus]
            if not free[gpus].all():  # an idle LP cell is idle physically
                raise RuntimeError("low-priority cell overlaps busy GPUs")
        else:
            got = first_fit_consolidated(view.cluster, free, job.gpus, None)
            if got is None:
                return None
            gpus = list(got)
        self.low[job.id] = tuple(gpus)
        self.low_owner[gpus] = self._low_idx(job.id)
        return tuple(gpus)

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
            if lg is None:
                continue
            fail = 1 << 30  # fitting is monotone in the GPU number
            for job in self.queues.ordered(view, t, self.order):
                if fail == 1:
                    break  # nothing else fits this VC now
                if job.gpus >= fail or not lg.fits(job.gpus):
                    fail = min(fail, job.gpus)
                    continue
                placed = lg.place(job.id, job.gpus)
                preempt: set[str] = set()
                gpus: list[int] = []
                for key, off, n in placed:
                    i = self.phys.get((t, key))
                    if i is None:
                        i = self._bind(t, key, preempt)
                    base = i * G[key[0]]
                    gpus.extend(range(base + off, base + off + n))
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
                out.append(Start(job.id, tuple(gpus)))
                started.append(job)
                self.n["guaranteed_starts"] += 1
                self.guaranteed[job.id] = t
                self.guaranteed_ever.add(job.id)
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
        for _, t in sorted(heads):
            if n_free == 0:
                break
            low_started = []
            for job in self.queues.ordered(view, t, self.order):
                if job.gpus > n_free:
                    break
                gpus = self._start_low(view, job, free)
                if gpus is None:
                    break
                free[list(gpus)] = False
                n_free -= job.gpus
                out.append(Start(job.id, gpus))
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
            self._release_cells(t, self.logical[t].remove(jid))
        elif jid in self.low:
            self._drop_low(jid)

    def stats(self):
        return {**self.n, "binding": self.binding, "order": self.order,
                "vc_gpus": {t: self.assign.gpus(t) for t in self.assign.cells} if hasattr(self, "assign") else {}}


class HiveDStatic(HiveD):
    """HiveD with static binding: every reserved cell bound at the start (§5.3's baseline)."""

    name = "hived-static"
    binding = "static"


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
        out: list[str] = []
        rows = list(log.rows)

        def at_end_of_instant(t_now):
            for t, p in pending.items():
                if not p or t not in lg:
                    continue
                head = min(p, key=lambda j: (jobs[j].gpus, p[j], j))
                if lg[t].fits(jobs[head].gpus):
                    out.append(f"sharing-safety: at {t_now!r} job {head} of VC {t} waits while its VC "
                               f"has a free cell for {jobs[head].gpus} GPUs")
        for n, r in enumerate(rows):
            job = jobs.get(r.job)
            if job is None:
                continue
            p = pending.setdefault(job.tenant, {})
            if r.event == "submit":
                p[r.job] = job.submit
            elif r.event == "start":
                p.pop(r.job, None)
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
                    p[r.job] = job.submit
            if n + 1 == len(rows) or rows[n + 1].time != r.time:
                at_end_of_instant(r.time)
        return out
    return check
