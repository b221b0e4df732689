"""HiveD, HiveD-static, quota sharing and private clusters on the simulator (HiveD §2.2, §3)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from placement.models import hived_vc as hv
from placement.solvers.online.hived import HiveD, HiveDStatic, VCLogical, sharing_safety_check
from placement.solvers.online.private import Private
from placement.solvers.online.quota import QuotaSharing

from placement.errors import InstanceError
from placement.sim import Cluster, replay_check, simulate
from placement.sim.perf import IdealPerf
from placement.sim.policies import make_policy
from tests.support import SCENE
from tests.support import SCENE_ASSIGNMENT as ASSIGN
from tests.support import sim_trace as _trace

PERF = IdealPerf()


def _run(policy, trace, cluster, assign):
    res = simulate(trace, cluster, policy, perf=PERF)
    bad = replay_check(trace, cluster, res.log, perf=PERF, checks=[sharing_safety_check(assign)])
    return res, bad


def _waits(res, trace):
    start = {}
    for r in res.log.rows:
        if r.event == "start":
            start.setdefault(r.job, r.time)
    return {j.id: start[j.id] - j.submit for j in trace.jobs}




def test_quota_sharing_shows_the_anomaly_hived_does_not():
    trace, cluster = _trace(SCENE), Cluster.uniform(1, 1, 1, 2, 8)
    big = trace.jobs[-1].id
    q, bad_q = _run(QuotaSharing(assignment=ASSIGN), trace, cluster, ASSIGN)
    assert [m for m in bad_q if not m.startswith("sharing-safety")] == []
    assert any(big in m for m in bad_q)  # the check finds the anomaly in the log
    p, bad_p = _run(Private(assignment=ASSIGN), trace, cluster, ASSIGN)
    assert bad_p == []
    h, bad_h = _run(HiveD(assignment=ASSIGN), trace, cluster, ASSIGN)
    assert bad_h == []
    wq, wp, wh = _waits(q, trace)[big], _waits(p, trace)[big], _waits(h, trace)[big]
    assert wp == 0 and wh == 0 and wq >= 90  # waits for B's long jobs under quota sharing


def test_vc_logical_buddy_blocks():
    v = VCLogical((0, 1, 0, 1))  # one 2-GPU cell, one node cell
    assert v.place("a", 1)[0][0][0] == 2  # a 1-GPU job opens the smallest cell
    assert v.place("b", 1)[0][0][0] == 2  # and fills it
    assert v.place("c", 2)[0][0][0] == 4
    assert not v.fits(8) and v.fits(4)
    assert v.remove("a") == [] and v.remove("b") == [(2, 0)]
    with pytest.raises(InstanceError, match="order"):
        HiveD(order="lifo")


@st.composite
def scenes(draw):
    n_nodes = draw(st.integers(1, 3))
    tenants = ["A", "B", "C"][: draw(st.integers(1, 3))]
    left, cells = 8 * n_nodes, {}
    for t in tenants:
        c = []
        for k in (4, 3, 2, 1):
            n = draw(st.integers(0, left // hv.LEVEL_GPUS[k]))
            left -= n * hv.LEVEL_GPUS[k]
            c.append(n)
        cells[t] = tuple(reversed(c))
    rows = draw(st.lists(st.tuples(st.integers(0, 30), st.sampled_from([1, 1, 2, 3, 4, 8, 16]),
                                   st.integers(1, 20), st.sampled_from(tenants)), min_size=1, max_size=25))
    rows = [r for r in rows if r[1] <= 8 * n_nodes]
    return n_nodes, hv.VCAssignment(n_nodes, cells), rows


@settings(max_examples=40)
@given(scenes(), st.sampled_from([HiveD, HiveDStatic]), st.sampled_from(["fifo", "tiresias"]))
def test_hived_is_sharing_safe_on_generated_traces(scene, cls, order):
    n_nodes, assign, rows = scene
    if not rows:
        return
    trace, cluster = _trace(rows), Cluster.uniform(1, 1, 1, n_nodes, 8)
    res, bad = _run(cls(assignment=assign, order=order), trace, cluster, assign)
    assert bad == []
    # every job that fits no VC still ran, as low priority
    assert res.policy_stats["guaranteed_starts"] + res.policy_stats["low_starts"] >= len(trace.jobs)


@settings(max_examples=20)
@given(scenes())
def test_quota_and_private_logs_pass_replay_check(scene):
    n_nodes, assign, rows = scene
    trace, cluster = _trace(rows), Cluster.uniform(1, 1, 1, n_nodes, 8)
    res = simulate(trace, cluster, QuotaSharing(assignment=assign), perf=PERF)
    assert replay_check(trace, cluster, res.log, perf=PERF) == []
    fits = [r for r in rows if r[3] in assign.cells and any(
        hv.LEVEL_GPUS[k + 1] >= r[1] and n for k, n in enumerate(assign.cells[r[3]])) and r[1] <= 8]
    trace2 = _trace(fits)
    if fits:
        res = simulate(trace2, cluster, Private(assignment=assign), perf=PERF)
        assert replay_check(trace2, cluster, res.log, perf=PERF) == []


def test_registered():
    assert make_policy("hived").binding == "dynamic" and make_policy("hived-static").binding == "static"
    assert isinstance(make_policy("quota"), QuotaSharing) and isinstance(make_policy("private"), Private)


@settings(max_examples=15)
@given(scenes(), st.sampled_from(["quota", "yarn-cs", "hived", "private"]))
def test_the_lazy_tiresias_order_is_the_whole_queue_sorted(scene, name):
    """Queues.ordered under Tiresias (jobs never started in queue order, then the requeued ones by
    attained service) gives every call the order of sorting the whole queue (tenants.order_jobs),
    preemptions (requeued jobs with service) included."""
    from placement.solvers.online import tenants

    n_nodes, assign, rows = scene
    if not rows:
        return
    trace, cluster = _trace(rows), Cluster.uniform(1, 1, 1, n_nodes, 8)
    lazy, calls = tenants.Queues.ordered, []

    def both(self, view, t, order):
        got = list(lazy(self, view, t, order))
        calls.append(([j.id for j in got], [j.id for j in tenants.order_jobs(view, [self.jobs[j] for _, j in
                                                                                   self.q[t]], order)]))
        return iter(got)

    tenants.Queues.ordered = both
    try:
        simulate(trace, cluster, make_policy(name, assignment=assign, order="tiresias"), perf=PERF,
                 checkpoint_interval=5.0)
    finally:
        tenants.Queues.ordered = lazy
    assert calls and all(a == b for a, b in calls)
