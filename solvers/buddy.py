"""Buddy cell allocation (HiveD Algorithm 1) with low-priority and faulty cells.

Terms
-----
G view / LP view
    Two buddy systems over the same physical cells (§3.3, "Allocating
    low-priority cells"). The G view's free lists hold the maximal cells with no
    guaranteed binding (cells used by low-priority jobs count as free there: a
    guaranteed request preempts them). The LP view's free lists hold the
    maximal cells with neither guaranteed nor low-priority work.
free list
    ``free[k]``: maximal free cells of level ``k`` (Algorithm 1 keeps free cells
    at the highest possible level: all buddies free means only the parent is
    listed). Each list is an insertion-ordered dict (O(1) add/remove/pop);
    the G view splits each level into *clean* (healthy, no low-priority GPU)
    and *dirty* cells.
legality
    A guaranteed request of VC ``t`` for a level-``k`` cell is legal when
    ``a[t,k] < r[t,k]`` (allocated < reserved, pinned cells apart).
invariant (2)
    ``r_k - a_k <= f_k + F_k`` for every level, ``F_k`` from Eq. (1). It holds
    at time 0 exactly when the assignment is feasible, and Algorithm 1 keeps it
    (Theorem 1), so a legal request never fails.

Preferences (never at the price of safety)
    A guaranteed request takes a cell at the lowest level with a free cell
    (Algorithm 1; the reference's ``getLowestFreeCellLevel``), there the one with
    the fewest faulty, then low-priority GPUs (clean cells first), split down the
    same way; a faulty choice gives way to a healthy clean cell higher up when
    splitting it keeps invariant (2) (an O(levels) check). In the LP-view mode it
    preempts the low-priority jobs inside the cell. A faulty cell is bound when
    a VC has no other choice, so its own scheduler sees it (§4).
    With ``scavenging=True`` (HiveD's reference scheduler) low-priority work is not allocated
    here: the caller records the GPUs it runs on (:meth:`BuddyAllocator.occupy_low`), any GPU no
    job uses, bound cells included; the G view counts them and binding preempts nobody.
    Without it (the paper's §3.3 LP view):
    a low-priority request takes a healthy free LP-view cell whose parent holds
    no guaranteed GPU (not a buddy of a guaranteed cell), at the lowest such
    level; else the free cell whose ancestors hold the smallest shares of
    guaranteed GPUs (far from guaranteed cells).

Cost: a guaranteed allocation or release is O(levels) dict and counter
operations plus O(split) when a cell is split, buddies merge or a cell's
guaranteed count crosses zero; choosing among dirty cells, and placing
low-priority work when no cell is far from guaranteed work, scan the candidates.

Request size rule: a job of ``g`` GPUs asks for a cell at the smallest level
whose cells hold at least ``g`` GPUs (:meth:`placement.hived.cells.Chain.level_for_gpus`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Literal

from placement.hived.cells import HivedInstance
from placement.hived.evaluation import Binding, HivedSolution, evaluate
from placement.result import SolveResult, Status

__all__ = ["BuddyAllocator", "Allocation", "IllegalRequest", "solve"]


class IllegalRequest(ValueError):
    """A guaranteed request beyond the VC's reservation (a[t,k] = r[t,k]) or an unknown pinned id."""


@dataclass
class Allocation:
    cell: tuple[int, int, int]  # (chain, level, index)
    vc: int
    preempted: list = field(default_factory=list)  # low-priority job ids preempted
    bad_gpus: int = 0
    pinned: str | None = None


class _Chain:
    """State of one chain: both views, per-cell counters and owners."""

    def __init__(self, inst: HivedInstance, c: int):
        ch = inst.chains[c]
        self.K = K = ch.top
        self.split = ch.split
        self.gpus = ch.gpus
        self.count = ch.count
        self.bad = inst.bad_gpus(c) if any(b[0] == c for b in inst.bad) else None
        self.gcnt = [[0] * ch.count[k] for k in range(K + 1)]   # guaranteed GPUs in the subtree
        self.lcnt = [[0] * ch.count[k] for k in range(K + 1)]   # low-priority GPUs in the subtree
        self.gclean: list[dict[int, None]] = [{} for _ in range(K + 1)]
        self.gdirty: list[dict[int, None]] = [{} for _ in range(K + 1)]
        self.lfree: list[dict[int, None]] = [{} for _ in range(K + 1)]
        self.lfar: list[dict[int, None]] = [{} for _ in range(K + 1)]  # LP-free, healthy, parent G-free
        self.gkids = [[0] * ch.count[k] for k in range(K + 1)]  # children of a cell free in the G view
        self.lkids = [[0] * ch.count[k] for k in range(K + 1)]
        self.gowner: dict[tuple[int, int], int] = {}
        self.lowner: dict[tuple[int, int], object] = {}
        self.r = inst.reserved_total(c)
        self.a = [0] * (K + 1)
        for i in range(ch.n_top):
            self._gadd(K, i)
            self._ladd(K, i)

    # ------------------------------------------------------------------ free-list primitives
    def _dirty(self, k: int, i: int) -> bool:
        return self.lcnt[k][i] > 0 or (self.bad is not None and self.bad[k][i] > 0)

    def _gadd(self, k: int, i: int) -> None:
        (self.gdirty if self._dirty(k, i) else self.gclean)[k][i] = None
        if k < self.K:
            self.gkids[k + 1][i // self.split[k]] += 1

    def _gremove(self, k: int, i: int) -> None:
        if i in self.gclean[k]:
            del self.gclean[k][i]
        else:
            del self.gdirty[k][i]
        if k < self.K:
            self.gkids[k + 1][i // self.split[k]] -= 1

    def gfree(self, k: int, i: int) -> bool:
        return i in self.gclean[k] or i in self.gdirty[k]

    def _far(self, k: int, i: int) -> bool:
        """No guaranteed GPU under the parent (not a buddy of a guaranteed cell) and healthy."""
        if self.bad is not None and self.bad[k][i] > 0:
            return False
        return k == self.K or self.gcnt[k + 1][i // self.split[k]] == 0

    def _ladd(self, k: int, i: int) -> None:
        self.lfree[k][i] = None
        if self._far(k, i):
            self.lfar[k][i] = None
        if k < self.K:
            self.lkids[k + 1][i // self.split[k]] += 1

    def _lremove(self, k: int, i: int) -> None:
        del self.lfree[k][i]
        self.lfar[k].pop(i, None)
        if k < self.K:
            self.lkids[k + 1][i // self.split[k]] -= 1

    def gcount(self, k: int, i: int, delta: int) -> None:
        """Add ``delta`` guaranteed GPUs to (k, i) and its ancestors; re-file LP-free children of a
        cell whose count crosses zero (amortized: crossings are rare next to allocations)."""
        split, gcnt = self.split, self.gcnt
        for lv in range(k, self.K + 1):
            before = gcnt[lv][i]
            gcnt[lv][i] = before + delta
            if lv > 1 and (before == 0) != (before + delta == 0):
                h = split[lv - 1]
                lfree, lfar = self.lfree[lv - 1], self.lfar[lv - 1]
                for x in range(i * h, i * h + h):
                    if x in lfree:
                        if self._far(lv - 1, x):
                            lfar[x] = None
                        else:
                            lfar.pop(x, None)
            if lv < self.K:
                i //= split[lv]

    def _rebucket(self, k: int, i: int) -> None:
        """Move the G-free ancestor-or-self of (k, i), if any, to its right bucket."""
        split = self.split
        while True:
            if i in self.gclean[k] or i in self.gdirty[k]:
                dirty = self._dirty(k, i)
                if dirty and i in self.gclean[k]:
                    del self.gclean[k][i]
                    self.gdirty[k][i] = None
                elif not dirty and i in self.gdirty[k]:
                    del self.gdirty[k][i]
                    self.gclean[k][i] = None
                return
            if k == self.K:
                return
            i //= split[k]
            k += 1

    def _count(self, cnt: list[list[int]], k: int, i: int, delta: int) -> None:
        split = self.split
        for lv in range(k, self.K + 1):
            cnt[lv][i] += delta
            if lv < self.K:
                i //= split[lv]

    # ------------------------------------------------------------------ G view (Algorithm 1)
    def _key(self, k: int, i: int) -> tuple[int, int]:
        return (self.bad[k][i] if self.bad is not None else 0, self.lcnt[k][i])

    def _best_dirty(self, k: int) -> int:
        key = self._key
        return min(self.gdirty[k], key=lambda i: key(k, i))

    def _split_is_safe(self, src: int, k: int) -> bool:
        """Invariant (2) after splitting a level-``src`` cell down to an allocated level-``k`` cell."""
        f = [len(self.gclean[m]) + len(self.gdirty[m]) for m in range(self.K + 1)]
        a = list(self.a)
        f[src] -= 1
        for m in range(src - 1, k - 1, -1):
            f[m] += self.split[m] - 1  # h_{m+1} children, one of them split further or allocated
        a[k] += 1
        return self._invariant_ok(f, a)

    def _invariant_ok(self, f: list[int], a: list[int]) -> bool:
        F = 0
        for m in range(self.K, 0, -1):
            if self.r[m] - a[m] > f[m] + F:
                return False
            F = (f[m] + F - (self.r[m] - a[m])) * self.split[m - 1]
        return True

    def invariant(self) -> list[tuple[int, int, int]]:
        """``(k, r_k - a_k, f_k + F_k)`` for every level, top first (Eqs. 1-2)."""
        out = []
        F = 0
        for m in range(self.K, 0, -1):
            f = len(self.gclean[m]) + len(self.gdirty[m])
            out.append((m, self.r[m] - self.a[m], f + F))
            F = (f + F - (self.r[m] - self.a[m])) * self.split[m - 1]
        return out

    def g_take_level(self, k: int) -> int | None:
        """Choose a G-free level-``k`` cell and remove it from the G view (Algorithm 1).

        As the reference scheduler does it (``hivedscheduler``, ``cell_allocation.go``:
        ``getLowestFreeCellLevel``, ``buddyAlloc``, ``getUsablePhysicalCells``): the lowest
        level ``m >= k`` with a free cell, the free cell there with the fewest faulty, then
        low-priority GPUs, split down taking at each level the child with the fewest. When the
        best cell at that level holds a faulty GPU and a healthy clean cell higher up can be
        split without breaking invariant (2), that one is split instead (the reference's
        ``safeRelaxedBuddyAlloc``, which skips bad cells).
        """
        gclean, gdirty = self.gclean, self.gdirty
        m = next((m for m in range(k, self.K + 1) if gclean[m] or gdirty[m]), None)
        if m is None:
            return None
        if gclean[m]:
            j = next(reversed(gclean[m]))
        else:
            j = self._best_dirty(m)
            if self.bad is not None and self.bad[m][j] > 0:
                clean_src = next((s for s in range(m + 1, self.K + 1) if gclean[s]), None)
                if clean_src is not None and self._split_is_safe(clean_src, k):
                    m, j = clean_src, next(reversed(gclean[clean_src]))
        self._gremove(m, j)
        key = self._key
        for lv in range(m, k, -1):  # split: buddies go to level lv-1, one of them goes on down
            kids = range(j * self.split[lv - 1], (j + 1) * self.split[lv - 1])
            nxt = min(kids, key=lambda x, lv=lv: key(lv - 1, x))
            for x in kids:
                if x != nxt:
                    self._gadd(lv - 1, x)
            j = nxt
        return j

    def g_put(self, k: int, i: int) -> None:
        """ReleaseCell of Algorithm 1: merge buddies while all are free."""
        while k < self.K:
            h = self.split[k]
            p = i // h
            if self.gkids[k + 1][p] != h - 1:
                break
            for x in range(p * h, p * h + h):
                if x != i:
                    self._gremove(k, x)
            k, i = k + 1, p
        self._gadd(k, i)

    def g_carve(self, k: int, i: int) -> None:
        """Remove exactly cell (k, i) from the G view, splitting its free ancestor."""
        self._carve(k, i, self.gfree, self._gremove, self._gadd)

    # ------------------------------------------------------------------ LP view
    def l_put(self, k: int, i: int) -> None:
        while k < self.K:
            h = self.split[k]
            p = i // h
            if self.lkids[k + 1][p] != h - 1:
                break
            for x in range(p * h, p * h + h):
                if x != i:
                    self._lremove(k, x)
            k, i = k + 1, p
        self._ladd(k, i)

    def l_carve(self, k: int, i: int) -> None:
        self._carve(k, i, lambda m, x: x in self.lfree[m], self._lremove, self._ladd)

    def _carve(self, k, i, has, remove, add) -> None:
        split = self.split
        m, j = k, i
        while not has(m, j):
            if m == self.K:
                raise AssertionError(f"cell ({k}, {i}) is not inside a free cell")
            j //= split[m]
            m += 1
        remove(m, j)
        while m > k:
            h = split[m - 1]
            on_path = i // (self.gpus[m - 1] // self.gpus[k])
            for x in range(j * h, j * h + h):
                if x != on_path:
                    add(m - 1, x)
            m, j = m - 1, on_path

    def l_choose(self, k: int) -> tuple[int, int] | None:
        """The LP-free cell (level >= k) farthest from guaranteed work.

        A healthy free cell whose parent holds no guaranteed GPU (a non-buddy of
        every guaranteed cell, §3.3) at the lowest level >= k, in O(levels); else
        the free cell whose ancestors, from the top, hold the smallest shares of
        guaranteed GPUs (a scan of the free cells).
        """
        for m in range(k, self.K + 1):
            if self.lfar[m]:
                return m, next(reversed(self.lfar[m]))
        best, best_key = None, None
        for m in range(k, self.K + 1):
            for j in self.lfree[m]:
                anc, path, lv = j, [], m
                while lv < self.K:
                    anc //= self.split[lv]
                    lv += 1
                    path.append(self.gcnt[lv][anc] / self.gpus[lv])
                bad = self.bad[m][j] if self.bad is not None else 0
                key = (bad > 0, path[::-1], m)
                if best_key is None or key < best_key:
                    best, best_key = (m, j), key
        return best

    def lp_inside(self, k: int, i: int) -> list[tuple[int, int]]:
        """Low-priority cells overlapping (k, i): the one containing it, or those inside it."""
        out = []
        m, j = k, i
        while True:
            if (m, j) in self.lowner:
                return [(m, j)]
            if m == self.K:
                break
            j //= self.split[m]
            m += 1
        stack = [(k, i)] if self.lcnt[k][i] > 0 else []
        while stack:
            m, j = stack.pop()
            if (m, j) in self.lowner:
                out.append((m, j))
                continue
            h = self.split[m - 1]
            stack.extend((m - 1, x) for x in range(j * h, j * h + h) if self.lcnt[m - 1][x] > 0)
        return out


class BuddyAllocator:
    """Guaranteed and low-priority cell allocation over all chains of an instance.

    Parameters
    ----------
    inst : HivedInstance
        The cluster and VC assignment; owned pinned cells are taken out of the G
        view at start (they belong to their VC only).

    Notes
    -----
    Theorem 1: under a feasible assignment every legal :meth:`allocate` succeeds.
    Under an infeasible one :meth:`allocate` returns ``None`` when no free cell
    is left (the request cannot be served).
    """

    def __init__(self, inst: HivedInstance, scavenging: bool = False):
        self.inst = inst
        self.scavenging = scavenging
        self.chains = [_Chain(inst, c) for c in range(len(inst.chains))]
        self.r = [{key: n for key, n in v.reserved.items()} for v in inst.vcs]
        self.a: list[dict[tuple[int, int], int]] = [{} for _ in inst.vcs]
        self.pins_taken: dict[str, tuple[int, int, int]] = {}
        self.low: dict[object, tuple[int, int, int]] = {}
        self.scavengers: dict[object, tuple[int, tuple[int, ...]]] = {}  # job -> (chain, GPUs)
        for pid in inst.used_pins:
            p = inst.pinned[pid]
            self.chains[p.chain].g_carve(p.level, p.index)

    # ------------------------------------------------------------------ guaranteed
    def allocate(self, vc: int, chain: int, level: int) -> Allocation | None:
        """Bind one level-``level`` cell of ``chain`` to VC ``vc`` (a guaranteed request)."""
        a = self.a[vc]
        if a.get((chain, level), 0) >= self.r[vc].get((chain, level), 0):
            raise IllegalRequest(f"VC {self.inst.vcs[vc].name} has no unallocated level-{level} cell "
                                 f"of {self.inst.chains[chain].name} left")
        st = self.chains[chain]
        i = st.g_take_level(level)
        if i is None:
            return None
        a[(chain, level)] = a.get((chain, level), 0) + 1
        st.a[level] += 1
        return self._bind(vc, chain, level, i, None)

    def allocate_pinned(self, vc: int, pinned_id: str) -> Allocation:
        """Bind VC ``vc``'s pinned cell (always possible: it is reserved for the VC)."""
        if self.inst.used_pins.get(pinned_id) != self.inst.vcs[vc].name or pinned_id in self.pins_taken:
            raise IllegalRequest(f"pinned cell {pinned_id!r} is not an unallocated pinned cell of VC "
                                 f"{self.inst.vcs[vc].name}")
        p = self.inst.pinned[pinned_id]
        self.pins_taken[pinned_id] = (p.chain, p.level, p.index)
        return self._bind(vc, p.chain, p.level, p.index, pinned_id)

    def _bind(self, vc: int, c: int, k: int, i: int, pinned: str | None) -> Allocation:
        st = self.chains[c]
        preempted = []
        for m, j in ([] if self.scavenging else st.lp_inside(k, i)):
            job = st.lowner[(m, j)]
            preempted.append(job)
            self.release_low(job)
        st.l_carve(k, i)
        st.gowner[(k, i)] = vc
        st.gcount(k, i, st.gpus[k])
        bad = st.bad[k][i] if st.bad is not None else 0
        return Allocation((c, k, i), vc, preempted, bad, pinned)

    def release(self, cell: tuple[int, int, int]) -> None:
        """Release a guaranteed binding (ReleaseCell: buddies merge in both views)."""
        c, k, i = cell
        st = self.chains[c]
        vc = st.gowner.pop((k, i))
        st.gcount(k, i, -st.gpus[k])
        pinned = next((pid for pid, cl in self.pins_taken.items() if cl == cell), None)
        if pinned is not None:
            del self.pins_taken[pinned]
        else:
            self.a[vc][(c, k)] -= 1
            st.a[k] -= 1
            st.g_put(k, i)
        st.l_put(k, i)

    # ------------------------------------------------------------------ low priority
    def allocate_low(self, job: object, chain: int, level: int) -> tuple[int, int, int] | None:
        """Place a preemptible job on a fully idle level-``level`` cell, or ``None`` if none is idle
        (the paper's LP view, §3.3; not with ``scavenging=True``, see :meth:`occupy_low`)."""
        if self.scavenging:
            raise IllegalRequest("allocate_low is the LP view's; with scavenging=True use occupy_low")
        if job in self.low:
            raise IllegalRequest(f"low-priority job {job!r} is already placed")
        st = self.chains[chain]
        src = st.l_choose(level)
        if src is None:
            return None
        m, j = src
        i = j * (st.gpus[m] // st.gpus[level])  # the first level-`level` cell inside the chosen one
        st.l_carve(level, i)
        st.lowner[(level, i)] = job
        st._count(st.lcnt, level, i, st.gpus[level])
        st._rebucket(level, i)
        self.low[job] = (chain, level, i)
        return (chain, level, i)

    def release_low(self, job: object) -> None:
        if job in self.scavengers:
            c, gpus = self.scavengers.pop(job)
            st = self.chains[c]
            for g in gpus:
                st._count(st.lcnt, 1, g, -1)
                st._rebucket(1, g)
            return
        c, k, i = self.low.pop(job)
        st = self.chains[c]
        del st.lowner[(k, i)]
        st._count(st.lcnt, k, i, -st.gpus[k])
        st._rebucket(k, i)
        st.l_put(k, i)

    # ------------------------------------------------------------------ scavenging
    def occupy_low(self, job: object, chain: int, gpus) -> None:
        """Scavenging as the reference scheduler does it (``hivedscheduler``,
        ``topology_aware_scheduler.go``: an opportunistic pod may use any leaf cell no pod uses,
        bound or not): record that low-priority ``job`` runs on ``gpus`` of ``chain``, which the
        caller chose among the GPUs no job uses. Only the G view's counters change (cells with
        fewer low-priority GPUs are bound first); binding a cell preempts nobody here: the
        caller preempts the low-priority jobs on the GPUs a guaranteed job is given
        (``collectPreemptionVictims``). Needs ``scavenging=True``."""
        if not self.scavenging:
            raise IllegalRequest("occupy_low needs BuddyAllocator(scavenging=True)")
        if job in self.scavengers:
            raise IllegalRequest(f"low-priority job {job!r} is already placed")
        gpus = tuple(int(g) for g in gpus)
        st = self.chains[chain]
        for g in gpus:
            st._count(st.lcnt, 1, g, 1)
            st._rebucket(1, g)
        self.scavengers[job] = (chain, gpus)

    # ------------------------------------------------------------------ inspection
    def invariant(self, chain: int) -> list[tuple[int, int, int]]:
        return self.chains[chain].invariant()

    def free_cells(self, chain: int, view: str = "g") -> list[list[int]]:
        st = self.chains[chain]
        if view == "g":
            return [sorted(list(st.gclean[k]) + list(st.gdirty[k])) for k in range(st.K + 1)]
        return [sorted(st.lfree[k]) for k in range(st.K + 1)]

    def bindings(self) -> list[Binding]:
        out = []
        pin_of = {cl: pid for pid, cl in self.pins_taken.items()}
        for c, st in enumerate(self.chains):
            for (k, i), vc in st.gowner.items():
                out.append(Binding(vc, c, k, i, pin_of.get((c, k, i))))
        return out


def solve(inst: HivedInstance, order: Literal["bottom-up", "top-down", "random"] = "bottom-up",
          seed: int | None = None, time_limit: float | None = None) -> SolveResult:
    """Allocate every reserved cell of every VC with the buddy allocator.

    Requests go level by level from the bottom (``order="bottom-up"``, the
    default: under an infeasible assignment small cells first honour the most
    cells), or from the top (``"top-down"``), or shuffled with ``seed``
    (``"random"``); pinned cells first. By Theorem 1 every request succeeds iff
    the assignment is feasible, whatever the order; requests that find no free
    cell are skipped and counted.

    Returns ``optimal`` when every reservation is honoured (the objective equals
    its upper bound, the number of reserved cells), else ``feasible`` with the
    honoured cells as objective (a lower bound on the exact optimum), or
    ``time_limit`` when ``time_limit`` seconds ran out before every request was
    tried (the bindings made so far; checked every 1,024 requests).
    """
    t0 = time.perf_counter()
    alloc = BuddyAllocator(inst)
    for t, v in enumerate(inst.vcs):
        for pid in v.pinned:
            alloc.allocate_pinned(t, pid)
    # A VC cannot get more level-k cells than the chain has: those requests fail without being tried.
    reqs = [(t, c, k) for t, v in enumerate(inst.vcs) for (c, k), n in v.reserved.items()
            for _ in range(min(n, inst.chains[c].count[k]))]
    hopeless = sum(max(0, n - inst.chains[c].count[k]) for v in inst.vcs for (c, k), n in v.reserved.items())
    if order == "random":
        import random

        random.Random(seed).shuffle(reqs)
    else:
        reqs.sort(key=lambda q: (-q[2] if order == "top-down" else q[2], q[1], q[0]))
    failed = hopeless
    t_req = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    timed_out = False
    for i, (t, c, k) in enumerate(reqs):
        if deadline is not None and i % 1024 == 0 and time.perf_counter() > deadline:
            timed_out = True
            break
        if alloc.allocate(t, c, k) is None:
            failed += 1
    t_end = time.perf_counter()
    sol = HivedSolution(tuple(alloc.bindings()))
    ev = evaluate(inst, sol)
    status = Status.OPTIMAL if ev.honoured == inst.n_reserved else Status.FEASIBLE
    if timed_out and status is not Status.OPTIMAL:
        status = Status.TIME_LIMIT
    return SolveResult(status=status, solver="buddy", solution=sol, objective=ev.objective,
                       bound=float(inst.n_reserved), wall_time_s=time.perf_counter() - t0, sense="max",
                       stats={"requests": len(reqs), "failed_requests": failed, "order": order,
                              "mean_request_us": 1e6 * (t_end - t_req) / max(1, len(reqs)),
                              "all_honoured": ev.honoured == inst.n_reserved},
                       message="" if failed == 0 else f"{failed} request(s) found no free cell: "
                       "the assignment is infeasible")
