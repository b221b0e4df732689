"""MAST's allocation rate (§5.2) in the simulate summary: a hand computation, and on a simulation
the step-function integral it is computed by against an independent per-attempt sum."""

from __future__ import annotations

import pytest

from placement.sim.cluster import Cluster
from placement.sim.engine import simulate
from placement.sim.log import EventLog, LogRow
from placement.sim.metrics import allocation_rate, per_job, summary, utilization_between
from placement.sim.policies import policy_class
from placement.sim.trace import Job, Trace, synthetic_trace
from tests.support import held_gpu_seconds


def test_allocation_rate_by_hand():
    # 8 GPUs; submissions at 0, 2 and 10 (window [0, 10]); C never starts
    trace = Trace("hand", (Job("A", 0.0, 4, 9.0), Job("B", 2.0, 4, 100.0), Job("C", 10.0, 8, 1.0)), "")
    log = EventLog([
        LogRow(0.0, "submit", "A"), LogRow(0.0, "start", "A", (0, 1, 2, 3)),
        LogRow(2.0, "submit", "B"), LogRow(3.0, "start", "B", (4, 5, 6, 7)),
        LogRow(5.0, "preempt", "A", (0, 1, 2, 3), 5.0),
        LogRow(7.0, "start", "A", (0, 1), 5.0), LogRow(10.0, "submit", "C"),
        LogRow(12.0, "finish", "A", (0, 1), 9.0)])
    # A: 4 GPUs x 5 s + 2 GPUs x (10 - 7) s; B: 4 GPUs x (10 - 3) s, still running at the end
    hand = (4 * 5 + 2 * 3 + 4 * 7) / (8 * 10)
    assert allocation_rate(log, 8, 0.0, 10.0) == pytest.approx(hand)
    s = summary(per_job(log, trace), log, 8)
    assert s["allocation_rate"] == pytest.approx(hand) and s["allocation_window_h"] == pytest.approx(10 / 3600)
    # a window inside the run: [4, 8] holds A 4 x 1 + 2 x 1 and B 4 x 4
    assert allocation_rate(log, 8, 4.0, 8.0) == pytest.approx((4 + 2 + 16) / 32)
    assert allocation_rate(log, 8, 5.0, 5.0) is None
    batch = Trace("batch", (Job("A", 0.0, 4, 9.0),), "")
    one = EventLog([LogRow(0.0, "submit", "A"), LogRow(0.0, "start", "A", (0, 1, 2, 3)),
                    LogRow(9.0, "finish", "A", (0, 1, 2, 3), 9.0)])
    assert summary(per_job(one, batch), one, 8)["allocation_rate"] is None   # no window: no rate


def test_allocation_rate_equals_the_step_integral_on_a_simulation():
    cl = Cluster.uniform(regions=1, clusters=1, racks=2, machines=2, gpus_per_machine=8)
    tr = synthetic_trace("poisson", jobs=150, seed=3, jobs_per_hour=40, max_gpus=16, tenants=3)
    res = simulate(tr, cl, policy_class("fifo")())
    subs = [j.submit for j in tr.jobs]
    s = summary(per_job(res.log, tr), res.log, cl.n_gpus)
    assert s["allocation_rate"] == pytest.approx(utilization_between(res.log, cl.n_gpus, min(subs), max(subs)))
    # and an independent per-attempt sum: each start to its job's next preempt or finish, clipped
    t0, t1 = min(subs), max(subs)
    held = held_gpu_seconds(res.log, t0, t1)
    assert s["allocation_rate"] == pytest.approx(held / (cl.n_gpus * (t1 - t0)), rel=1e-9)
    assert 0 < s["allocation_rate"] <= 1
    # the drain after the last submission is not counted: mean_utilization is measured in the same window
    assert s["mean_utilization"] == s["allocation_rate"]
