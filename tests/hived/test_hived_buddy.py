"""Buddy cell allocation: Theorem 1 as a state machine, low-priority and faulty cells, the sharing anomaly."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from placement.instances import generate_hived
from placement.solvers.buddy import BuddyAllocator, IllegalRequest
from placement.solvers.quota import OverQuota, QuotaAllocator

from placement.hived import load_instance
from placement.hived.feasibility import is_feasible


def _leaf_owners(alloc: BuddyAllocator, c: int) -> tuple[np.ndarray, np.ndarray]:
    """How many times each GPU is covered in the G view and in the LP view (must be exactly once)."""
    st_ = alloc.chains[c]
    ch = alloc.inst.chains[c]
    g_cover = np.zeros(ch.total_gpus, dtype=int)
    l_cover = np.zeros(ch.total_gpus, dtype=int)
    for k in range(1, ch.top + 1):
        for i in list(st_.gclean[k]) + list(st_.gdirty[k]):
            g_cover[ch.leaves(k, i).start:ch.leaves(k, i).stop] += 1
        for i in st_.lfree[k]:
            l_cover[ch.leaves(k, i).start:ch.leaves(k, i).stop] += 1
    for (k, i) in st_.gowner:
        lv = ch.leaves(k, i)
        l_cover[lv.start:lv.stop] += 1
    for (k, i) in st_.lowner:
        lv = ch.leaves(k, i)
        l_cover[lv.start:lv.stop] += 1
    pinned_bound = set(alloc.pins_taken)
    for p in alloc.inst.pinned.values():
        if p.chain == c and p.id in alloc.inst.used_pins:
            lv = ch.leaves(p.level, p.index)
            g_cover[lv.start:lv.stop] += 1  # reserved for its VC, bound or not
    for (k, i), _vc in st_.gowner.items():
        if not any(alloc.pins_taken[p] == (c, k, i) for p in pinned_bound):
            lv = ch.leaves(k, i)
            g_cover[lv.start:lv.stop] += 1
    return g_cover, l_cover


class Theorem1(RuleBasedStateMachine):
    """Legal guaranteed allocations and releases, low-priority work interleaved, feasible assignment."""

    @initialize(seed=st.integers(0, 10**6), chains=st.integers(1, 2), levels=st.integers(1, 4),
                top=st.integers(1, 3), pins=st.integers(0, 2), bad=st.integers(0, 2))
    def setup(self, seed, chains, levels, top, pins, bad):
        self.inst = generate_hived(chains, levels, top, 3, seed=seed, n_pinned=pins, n_bad=bad, load=0.9)
        assert is_feasible(self.inst)
        self.alloc = BuddyAllocator(self.inst)
        self.fresh = [self.alloc.free_cells(c) for c in range(len(self.inst.chains))]
        self.held: list[tuple[int, int, int]] = []
        self.low_jobs: set[int] = set()
        self.next_job = 0

    def _legal(self):
        a = self.alloc
        return [(t, c, k) for t, v in enumerate(self.inst.vcs) for (c, k), n in v.reserved.items()
                if a.a[t].get((c, k), 0) < n]

    @rule(data=st.data())
    def allocate(self, data):
        legal = self._legal()
        if not legal:
            return
        t, c, k = data.draw(st.sampled_from(legal))
        res = self.alloc.allocate(t, c, k)
        assert res is not None, "a legal request failed under a feasible assignment (Theorem 1)"
        assert res.cell[:2] == (c, k)
        for job in res.preempted:
            self.low_jobs.discard(job)
        self.held.append(res.cell)

    @rule(data=st.data())
    def allocate_pinned(self, data):
        free = [(self.inst.vc_index[v], p) for p, v in self.inst.used_pins.items() if p not in self.alloc.pins_taken]
        if not free:
            return
        t, p = data.draw(st.sampled_from(free))
        res = self.alloc.allocate_pinned(t, p)
        for job in res.preempted:
            self.low_jobs.discard(job)
        self.held.append(res.cell)

    @rule(data=st.data())
    def release(self, data):
        if self.held:
            cell = self.held.pop(data.draw(st.integers(0, len(self.held) - 1)))
            self.alloc.release(cell)

    @rule(data=st.data())
    def allocate_low(self, data):
        c = data.draw(st.integers(0, len(self.inst.chains) - 1))
        k = data.draw(st.integers(1, self.inst.chains[c].top))
        job = self.next_job
        self.next_job += 1
        if self.alloc.allocate_low(job, c, k) is not None:
            self.low_jobs.add(job)

    @rule(data=st.data())
    def release_low(self, data):
        if self.low_jobs:
            job = data.draw(st.sampled_from(sorted(self.low_jobs)))
            self.alloc.release_low(job)
            self.low_jobs.discard(job)

    @rule()
    def illegal_is_refused(self):
        full = [(t, c, k) for t, v in enumerate(self.inst.vcs) for (c, k), n in v.reserved.items()
                if self.alloc.a[t].get((c, k), 0) >= n]
        if full:
            with pytest.raises(IllegalRequest):
                self.alloc.allocate(*full[0])

    @invariant()
    def safety_invariant_2(self):
        if not hasattr(self, "alloc"):
            return
        for c in range(len(self.inst.chains)):
            for _k, lhs, rhs in self.alloc.invariant(c):
                assert lhs <= rhs

    @invariant()
    def no_gpu_held_twice(self):
        if not hasattr(self, "alloc"):
            return
        assert set(self.alloc.low) == self.low_jobs
        for c in range(len(self.inst.chains)):
            g_cover, l_cover = _leaf_owners(self.alloc, c)
            assert (g_cover == 1).all() and (l_cover == 1).all()
            st_ = self.alloc.chains[c]
            for k in range(1, st_.K + 1):  # the O(levels) low-priority buckets match their definition
                assert set(st_.lfar[k]) == {x for x in st_.lfree[k] if st_._far(k, x)}
                assert set(st_.gclean[k]) == {x for x in st_.gclean[k] if not st_._dirty(k, x)}
                assert all(st_._dirty(k, x) for x in st_.gdirty[k])

    def teardown(self):
        if not hasattr(self, "alloc"):
            return
        for job in sorted(self.low_jobs):
            self.alloc.release_low(job)
        for cell in self.held:
            self.alloc.release(cell)
        # everything released: the free lists merge back to the top cells (pinned cells carved out)
        for c in range(len(self.inst.chains)):
            assert self.alloc.free_cells(c) == self.fresh[c]
            lfree = self.alloc.free_cells(c, view="lp")
            ch = self.inst.chains[c]
            assert lfree[ch.top] == list(range(ch.n_top)) and not any(lfree[:ch.top])


TestTheorem1 = Theorem1.TestCase
# more and longer runs than the profile default: the machine is cheap (a few ms per run)
TestTheorem1.settings = settings(settings.default, max_examples=max(200, settings.default.max_examples),
                                 stateful_step_count=40)


def test_preference_never_breaks_safety():
    """A healthy cell higher up is split only when invariant (2) survives (found by the state machine)."""
    inst = generate_hived(2, 2, 2, 3, seed=1, n_pinned=2, n_bad=2, load=0.9)
    alloc = BuddyAllocator(inst)
    assert alloc.allocate(0, 1, 1) is not None
    for c in range(len(inst.chains)):
        assert all(lhs <= rhs for _k, lhs, rhs in alloc.invariant(c))
    # and every remaining legal request is still served
    for t, v in enumerate(inst.vcs):
        for (c, k), n in v.reserved.items():
            for _ in range(n - alloc.a[t].get((c, k), 0)):
                assert alloc.allocate(t, c, k) is not None


def _two_nodes(reservations: dict, bad: list | None = None):
    doc = {"problem": "hived", "version": 1,
           "chains": [{"types": ["GPU", "PAIR", "QUAD", "NODE", "RACK"], "split": [1, 2, 2, 2, 2],
                       "nodeLevel": 4, "topCells": 1}],
           "badCells": bad or [],
           "virtualClusters": {v: {"cells": [{"chain": "RACK", "cellType": t, "cellNumber": n}
                                             for t, n in cells.items()]} for v, cells in reservations.items()}}
    return load_instance(doc)


def test_sharing_anomaly_quota_vs_buddy():
    """Tenant A (one 8-GPU node) is within quota; B runs 8 guaranteed and 8 opportunistic 1-GPU jobs."""
    inst = _two_nodes({"A": {"NODE": 1}, "B": {"GPU": 8}})
    A, B = 0, 1
    quota = QuotaAllocator(inst)
    buddy = BuddyAllocator(inst)
    for j in range(8):
        quota.allocate(B, 1, ("g", j))
        quota.allocate(B, 1, ("l", j), low=True)
        got = buddy.allocate(B, 0, 1)
        assert got.preempted == []
        assert buddy.allocate_low(("l", j), 0, 1) is not None
    # quota: B's guaranteed GPUs are spread over both nodes, so A cannot get a whole node even by preemption
    assert quota.used[A] + 8 <= quota.quota[A]
    assert set(quota.busy_per_node()) == {8}
    assert quota.allocate(A, 8, "a") is None
    # cells: B's guaranteed cells were packed into one node, its low-priority jobs into the other
    got = buddy.allocate(A, 0, 4)
    assert got is not None and sorted(got.preempted) == sorted(("l", j) for j in range(8))
    b_nodes = {i // 8 for (k, i) in buddy.chains[0].gowner if k == 1}
    assert b_nodes == {1 - got.cell[2]}
    with pytest.raises(OverQuota):
        quota.allocate(B, 1, "over")


def test_faulty_cells_avoided_then_bound():
    inst = _two_nodes({"A": {"NODE": 1}, "B": {"NODE": 1}}, bad=[["RACK", "GPU", 3]])
    alloc = BuddyAllocator(inst)
    first = alloc.allocate(0, 0, 4)
    assert first.cell == (0, 4, 1) and first.bad_gpus == 0  # the healthy node while it exists
    second = alloc.allocate(1, 0, 4)
    assert second.cell == (0, 4, 0) and second.bad_gpus == 1  # no other choice: bound, visible to B
    inst = _two_nodes({"A": {"GPU": 4}}, bad=[["RACK", "GPU", 0], ["RACK", "GPU", 1]])
    alloc = BuddyAllocator(inst)
    cells = [alloc.allocate(0, 0, 1) for _ in range(4)]
    assert all(c.bad_gpus == 0 for c in cells)


def test_guaranteed_prefers_cells_without_low_priority_work():
    inst = _two_nodes({"A": {"QUAD": 2}})
    alloc = BuddyAllocator(inst)
    assert alloc.allocate_low("lp", 0, 1) is not None
    node_of_lp = alloc.low["lp"][2] // 8
    a = alloc.allocate(0, 0, 3)
    b = alloc.allocate(0, 0, 3)
    assert a.preempted == [] and b.preempted == []
    assert {a.cell[2] // 2, b.cell[2] // 2} == {1 - node_of_lp}


def test_paper_cluster_requests_at_random_levels():
    from placement.instances import paper_cluster

    rng = np.random.default_rng(0)
    levels = rng.integers(1, 5, size=200)
    res = {f"vc{t}": {} for t in range(4)}
    for n, k in enumerate(levels):
        res[f"vc{n % 4}"][int(k)] = res[f"vc{n % 4}"].get(int(k), 0) + 1
    inst = paper_cluster(racks=2, nodes_per_rack=64, reservations=res)
    assert is_feasible(inst)
    alloc = BuddyAllocator(inst)
    cells = [alloc.allocate(n % 4, 0, int(k)) for n, k in enumerate(levels)]
    assert all(c is not None for c in cells)
    for c in rng.permutation(len(cells)):
        alloc.release(cells[c].cell)
    assert alloc.free_cells(0)[5] == [0, 1] and not any(alloc.free_cells(0)[:5])
