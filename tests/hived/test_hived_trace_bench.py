"""Measures of the HiveD trace bench (delays, fragmentation) on the hand-made anomaly scene."""

import pytest
from placement.solvers.online.hived import HiveD
from placement.solvers.online.quota import QuotaSharing

from placement.app.bench.hived_trace import delay_over_time, fragmentation, tenant_delays
from placement.sim import Cluster, simulate
from placement.sim.perf import IdealPerf
from tests.support import SCENE
from tests.support import SCENE_ASSIGNMENT as ASSIGN
from tests.support import sim_trace as _trace


@pytest.mark.parametrize("cls,big_wait,frag_mid,partial_mid", [(QuotaSharing, 98.0, 1.0, 1.0), (HiveD, 0.0, 0.5, 0.0)])
def test_delays_and_fragmentation_by_hand(cls, big_wait, frag_mid, partial_mid):
    trace, cluster = _trace(SCENE), Cluster.uniform(1, 1, 1, 2, 8)
    pol = cls(assignment=ASSIGN)
    res = simulate(trace, cluster, pol, perf=IdealPerf())
    d = tenant_delays(trace, res.log)
    assert d["A"]["jobs"] == 5 and d["A"]["mean_delay_s"] == pytest.approx(big_wait / 5)
    assert d["B"]["mean_delay_s"] == pytest.approx(0.0)
    xs, ys = fragmentation(res.log, pol.guaranteed_ever, 2, step_s=1.0)
    # at t=50: quota has B's eight jobs split 4/4 over both nodes, so neither node can give a
    # high-priority job 8-GPU affinity (HiveD's measure: 1.0); HiveD keeps them in one node cell
    # and leaves the other node whole (0.5). The 1-7 GPU reading: 1.0 and 0.0.
    assert ys[xs.index(50.0)] == frag_mid
    xs2, ys2 = fragmentation(res.log, pol.guaranteed_ever, 2, step_s=1.0, measure="partial")
    assert xs2 == xs and ys2[xs.index(50.0)] == partial_mid
    # sampled only inside the window asked for
    xw, _ = fragmentation(res.log, pol.guaranteed_ever, 2, step_s=1.0, start=10.0, end=20.0)
    assert xw == [float(t) for t in range(10, 21)]
    xs, ys = delay_over_time(trace, res.log, "A", window_s=10.0, step_s=1.0)
    assert xs == [10.0] and ys == [pytest.approx(big_wait / 5)]  # one window holding all five jobs
