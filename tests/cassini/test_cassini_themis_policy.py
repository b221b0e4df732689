"""The simulator's Themis policy (finish-time fairness auctions over 10-minute leases): a hand schedule."""

import pytest

from placement.sim import Cluster, IdealPerf, Job, Trace, replay_check, simulate
from solvers.online.themis import Themis


def test_lease_expiry_auction_hands_gpus_to_the_least_fair_job():
    # a (3000 s, 4 GPUs) holds the cluster; b (100 s) arrives at 10. At a's lease end (600 s):
    # rho(a) = (600 + 2400) / (3000 * 2) = 0.5, rho(b) = (590 + 100) / (100 * 2) = 3.45 -> b wins,
    # a is preempted, b runs 600-700, a resumes at 700 with 2400 s left -> 3100.
    cluster = Cluster.uniform(racks=1, machines=1, gpus_per_machine=4)
    trace = Trace("t", (Job("a", 0.0, 4, 3000.0), Job("b", 10.0, 4, 100.0)))
    res = simulate(trace, cluster, Themis(lease=600.0), perf=IdealPerf())
    ev = [(r.time, r.event, r.job) for r in res.log if r.event in ("start", "preempt", "finish")]
    assert ev == [(0.0, "start", "a"), (600.0, "preempt", "a"), (600.0, "start", "b"), (700.0, "finish", "b"),
                  (700.0, "start", "a"), (3100.0, "finish", "a")]
    assert replay_check(trace, cluster, res.log, perf=IdealPerf()) == []


def test_lease_must_be_positive():
    with pytest.raises(ValueError, match="lease"):
        Themis(lease=0)
