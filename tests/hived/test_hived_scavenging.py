"""Scavenging as HiveD's reference scheduler does it: opportunistic jobs on any GPU no job uses,
bound cells included, preempted when a guaranteed job needs their GPUs (``hivedscheduler``)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from placement.instances import generate_hived
from placement.models import hived_vc as hv
from placement.solvers.buddy import BuddyAllocator, IllegalRequest
from placement.solvers.online.hived import HiveD, HiveDStatic, scavenge_place, sharing_safety_check

from placement.sim import Cluster, replay_check, simulate
from placement.sim.perf import IdealPerf
from tests.hived.test_hived_buddy import _leaf_owners
from tests.support import sim_trace

PERF = IdealPerf()
# A and B own one node each; C has no VC (all its jobs are opportunistic).
ASSIGN = hv.VCAssignment(2, {"A": (0, 0, 0, 1), "B": (0, 0, 0, 1)})


def _run(policy, rows):
    trace, cluster = sim_trace(rows), Cluster.uniform(1, 1, 1, 2, 8)
    res = simulate(trace, cluster, policy, perf=PERF)
    assert replay_check(trace, cluster, res.log, perf=PERF, checks=[sharing_safety_check(ASSIGN)]) == []
    return [(r.time, r.event, r.job, tuple(r.gpus)) for r in res.log.rows if r.event != "submit"], policy


@pytest.mark.parametrize("policy", [HiveD, HiveDStatic])
def test_hand_scene_scavenger_in_a_bound_node_is_preempted_when_the_vc_needs_it(policy):
    # t=0: B's 8-GPU job fills its node, A's 4-GPU job binds the other; t=1: C's 4-GPU job finds
    # no GPU free outside A's bound node and starts at once on its 4 idle GPUs; t=5: A's next
    # 4-GPU job is within A's VC and takes those GPUs back.
    rows = [(0, 8, 100, "B"), (0, 4, 100, "A"), (1, 4, 50, "C"), (5, 4, 10, "A")]
    log, pol = _run(policy(assignment=ASSIGN), rows)
    start = {j: (t, g) for t, e, j, g in log if e == "start"}
    a_node = start["j001"][1][0] // 8
    assert start["j000"][1][0] // 8 == 1 - a_node
    t_c, g_c = next((t, g) for t, e, j, g in log if e == "start" and j == "j002")
    assert t_c == 1 and {g // 8 for g in g_c} == {a_node}  # inside A's bound node, at once
    assert not set(g_c) & set(start["j001"][1])
    assert ("preempt", "j002") in [(e, j) for t, e, j, _ in log if t == 5]
    assert start["j003"] == (5, g_c)  # A's job runs on the scavenger's GPUs at once
    assert pol.n["low_starts_in_bound_cells"] >= 1 and pol.n["preempted_jobs"] == 1


def test_bound_cell_gives_idle_gpus_before_scavenged_ones():
    # C scavenges half of node Y before A binds it; A's 4-GPU job goes to Y's idle socket (the
    # reference maps logical sub-cells to the physical ones with the fewest opportunistic GPUs),
    # A's second 4-GPU job then needs C's GPUs.
    rows = [(0, 8, 100, "B"), (1, 4, 50, "C"), (2, 4, 100, "A"), (3, 4, 10, "A")]
    log, pol = _run(HiveD(assignment=ASSIGN), rows)
    start = {j: (t, g) for t, e, j, g in log if e == "start"}
    assert start["j002"][0] == 2 and not set(start["j002"][1]) & set(start["j001"][1])
    assert [(t, j) for t, e, j, _ in log if e == "preempt"] == [(3, "j001")]
    assert start["j003"] == (3, start["j001"][1])


def test_scavenge_place_packs_low_priority_work_away_from_guaranteed_work():
    free = np.ones(32, dtype=bool)
    low = np.zeros(32, dtype=bool)
    g = np.zeros(32, dtype=bool)
    g[0:2] = True      # node 0: 2 guaranteed GPUs
    g[8:9] = True      # node 1: 1 guaranteed GPU
    free[g] = False
    assert scavenge_place(free, low, g, 2) == [16, 17]  # nodes 2, 3 untouched: the first
    low[26] = True     # node 3: one low-priority GPU -> packed there, best affinity (its free pair)
    free[26] = False
    assert scavenge_place(free, low, g, 2) == [24, 25]
    assert scavenge_place(free, low, g, 3) == [24, 25, 27]  # the lowest cell with 3 free: a socket
    # two pods (4, 8), smallest first: 4 on node 3 (its free socket), 8 on node 2
    assert scavenge_place(free, low, g, 12) == list(range(16, 24)) + [28, 29, 30, 31]
    assert scavenge_place(free, low, g, 16) is None  # 28 GPUs free, but one node has 8


class Scavenging(RuleBasedStateMachine):
    """Theorem 1 with opportunistic jobs on any GPU no guaranteed job uses, bound cells included:
    binding never preempts; a guaranteed job given GPUs of a scavenger preempts it."""

    @initialize(seed=st.integers(0, 10**6), chains=st.integers(1, 2), levels=st.integers(1, 4),
                top=st.integers(1, 3), pins=st.integers(0, 2), bad=st.integers(0, 2))
    def setup(self, seed, chains, levels, top, pins, bad):
        self.inst = generate_hived(chains, levels, top, 3, seed=seed, n_pinned=pins, n_bad=bad, load=0.9)
        self.alloc = BuddyAllocator(self.inst, scavenging=True)
        self.fresh = [self.alloc.free_cells(c) for c in range(len(self.inst.chains))]
        self.held: list[tuple[int, int, int]] = []
        self.used = [np.zeros(ch.total_gpus, dtype=bool) for ch in self.inst.chains]  # guaranteed GPUs
        self.low: dict[int, tuple[int, tuple[int, ...]]] = {}
        self.next_job = 0

    def _gpus(self, cell):
        c, k, i = cell
        lv = self.inst.chains[c].leaves(k, i)
        return c, range(lv.start, lv.stop)

    def _low_mask(self, c):
        m = np.zeros(self.inst.chains[c].total_gpus, dtype=bool)
        for cc, g in self.low.values():
            if cc == c:
                m[list(g)] = True
        return m

    @rule(data=st.data())
    def allocate(self, data):
        a = self.alloc
        legal = [(t, c, k) for t, v in enumerate(self.inst.vcs) for (c, k), n in v.reserved.items()
                 if a.a[t].get((c, k), 0) < n]
        if legal:
            t, c, k = data.draw(st.sampled_from(legal))
            res = a.allocate(t, c, k)
            assert res is not None and res.preempted == []  # binding preempts nobody
            self.held.append(res.cell)

    @rule(data=st.data())
    def allocate_pinned(self, data):
        free = [(self.inst.vc_index[v], p) for p, v in self.inst.used_pins.items() if p not in self.alloc.pins_taken]
        if free:
            t, p = data.draw(st.sampled_from(free))
            res = self.alloc.allocate_pinned(t, p)
            assert res.preempted == []
            self.held.append(res.cell)

    @rule(data=st.data())
    def guaranteed_job(self, data):
        """A guaranteed job takes some GPUs of a bound cell; scavengers on them are preempted."""
        if not self.held:
            return
        c, gpus = self._gpus(data.draw(st.sampled_from(self.held)))
        idle = [g for g in gpus if not self.used[c][g]]
        if not idle:
            return
        take = data.draw(st.lists(st.sampled_from(idle), min_size=1, unique=True))
        self.used[c][take] = True
        for job in sorted(j for j, (cc, g) in self.low.items() if cc == c and set(g) & set(take)):
            self.alloc.release_low(job)
            del self.low[job]

    @rule(data=st.data())
    def guaranteed_job_ends(self, data):
        c = data.draw(st.integers(0, len(self.inst.chains) - 1))
        busy = np.flatnonzero(self.used[c]).tolist()
        if busy:
            self.used[c][data.draw(st.lists(st.sampled_from(busy), min_size=1, unique=True))] = False

    @rule(data=st.data())
    def release(self, data):
        empty = [n for n, cell in enumerate(self.held) if not self.used[cell[0]][list(self._gpus(cell)[1])].any()]
        if empty:
            self.alloc.release(self.held.pop(data.draw(st.sampled_from(empty))))

    @rule(data=st.data())
    def scavenge(self, data):
        c = data.draw(st.integers(0, len(self.inst.chains) - 1))
        idle = np.flatnonzero(~self.used[c] & ~self._low_mask(c)).tolist()
        if idle:
            gpus = tuple(data.draw(st.lists(st.sampled_from(idle), min_size=1, max_size=8, unique=True)))
            self.alloc.occupy_low(self.next_job, c, gpus)
            self.low[self.next_job] = (c, gpus)
            self.next_job += 1

    @rule(data=st.data())
    def scavenger_ends(self, data):
        if self.low:
            job = data.draw(st.sampled_from(sorted(self.low)))
            self.alloc.release_low(job)
            del self.low[job]

    @invariant()
    def safe_and_counted(self):
        if not hasattr(self, "alloc"):
            return
        assert set(self.alloc.scavengers) == set(self.low)
        for c, ch in enumerate(self.inst.chains):
            for _k, lhs, rhs in self.alloc.invariant(c):
                assert lhs <= rhs  # invariant (2): every legal request can still be served
            g_cover, l_cover = _leaf_owners(self.alloc, c)
            assert (g_cover == 1).all() and (l_cover == 1).all()
            low = self._low_mask(c)
            assert not (low & self.used[c]).any()  # no GPU used by a guaranteed job and a scavenger
            bound = np.zeros(ch.total_gpus, dtype=bool)
            for cell in self.held:
                if cell[0] == c:
                    bound[list(self._gpus(cell)[1])] = True
            assert not (self.used[c] & ~bound).any()
            st_ = self.alloc.chains[c]
            for k in range(1, ch.top + 1):  # low-priority counters and the G view's buckets
                per = low.reshape(-1, ch.gpus[k]).sum(axis=1)
                assert list(per) == st_.lcnt[k]
                assert all(not st_._dirty(k, x) for x in st_.gclean[k])
                assert all(st_._dirty(k, x) for x in st_.gdirty[k])

    def teardown(self):
        if not hasattr(self, "alloc"):
            return
        for job in sorted(self.low):
            self.alloc.release_low(job)
        for cell in self.held:
            self.alloc.release(cell)
        for c in range(len(self.inst.chains)):
            assert self.alloc.free_cells(c) == self.fresh[c]
            assert not any(any(x) for x in self.alloc.chains[c].lcnt)


TestScavenging = Scavenging.TestCase
TestScavenging.settings = settings(settings.default, max_examples=150, stateful_step_count=30, deadline=None)


def test_views_are_not_mixed():
    inst = generate_hived(1, 3, 2, 2, seed=1, load=0.5)
    with pytest.raises(IllegalRequest, match="occupy_low"):
        BuddyAllocator(inst, scavenging=True).allocate_low("x", 0, 1)
    with pytest.raises(IllegalRequest, match="scavenging=True"):
        BuddyAllocator(inst).occupy_low("x", 0, [0])
