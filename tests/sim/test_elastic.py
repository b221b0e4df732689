"""Elastic starts (a job on w of its g GPUs at w/g of its rate) and Themis's elastic leases
(CASSINI §5.1): a hand scene where a lease expiry moves a job and re-tunes its workers, every
number worked out by hand below, and the replay check judging the scaled rates."""

from __future__ import annotations

import pytest
from placement.solvers.online.themis import Themis, _elastic_split

from placement.sim import Cluster, Job, Trace, replay_check, simulate
from placement.sim.log import EventLog
from placement.sim.perf import IdealPerf
from placement.sim.policy import Policy, PolicyError, Start


def _scene():
    # 4 single-GPU machines, 2 racks of 2. A asks 4 GPUs (400 s of work), B 2 (100 s), both at 0;
    # C asks 1 (50 s) at 500, after both.
    cluster = Cluster.uniform(1, 1, 2, 2, 1)
    trace = Trace("scene", (Job("A", 0.0, 4, 400.0), Job("B", 0.0, 2, 100.0), Job("C", 500.0, 1, 50.0)))
    return trace, cluster


def test_a_job_runs_on_fewer_workers_at_a_scaled_rate_then_grows():
    trace, cluster = _scene()
    pol = Themis(lease=1000.0, elastic=True)
    res = simulate(trace, cluster, pol, perf=IdealPerf())
    rows = [(r.time, r.event, r.job, r.gpus, r.work_done, r.extra) for r in res.log if r.event != "submit"]
    # t=0: rho(B) = 100/100 = 1 > rho(A) = (400 * 1.25 rack penalty) / (400 * max(1, 2 * 4 / 4)) =
    # 0.625; the 4 GPUs are offered to the top ceil(0.2 * 2) = 1 bidder, B, which takes its 2; A gets
    # the 2 left (of the 4 it asks for), placed after B (rack 1), and runs at 2/4 of its rate.
    assert rows[0] == (0.0, "start", "B", (0, 1), 0.0, "tier=rack rate=1.0")
    assert rows[1] == (0.0, "start", "A", (2, 3), 0.0, "tier=rack rate=0.5 workers=2")
    # t=100: B's GPUs come free; A, below its ask, bids for 2 more and wins them: it restarts on
    # all 4 with the 100 * 0.5 = 50 s of work it did and finishes the 350 s left at rate 1.
    assert rows[2] == (100.0, "finish", "B", (0, 1), 100.0, "")
    assert rows[3] == (100.0, "preempt", "A", (2, 3), 50.0, "")
    assert rows[4] == (100.0, "start", "A", (0, 1, 2, 3), 50.0, "tier=cluster rate=1.0")
    assert rows[5] == (450.0, "finish", "A", (0, 1, 2, 3), 400.0, "")
    assert rows[6][:4] == (500.0, "start", "C", (0,)) and rows[7][:2] == (550.0, "finish") and len(rows) == 8
    st = pol.stats()
    assert (st["grown"], st["partial_starts"], st["moves"]) == (1, 1, 0)
    assert replay_check(trace, cluster, res.log, perf=IdealPerf()) == []
    # the replay scales the rate by the workers: A's 2-worker attempt as if at its full rate
    # (100 s by 100, done at 400) is caught
    fast = [r._replace(work_done=100.0) if (r.job, r.time) == ("A", 100.0) else
            r._replace(time=400.0) if (r.job, r.event) == ("A", "finish") else r for r in res.log]
    bad = replay_check(trace, cluster, EventLog(fast), perf=IdealPerf())
    assert any(m.startswith("work:") and "keeps work 100.0" in m for m in bad)
    # a start on fewer GPUs than the job asks for without its workers= tag, or with a wrong one
    for extra in ("tier=rack rate=0.5", "tier=rack rate=0.5 workers=3"):
        tampered = [r._replace(extra=extra) if (r.job, r.event, r.time) == ("A", "start", 0.0) else r
                    for r in res.log]
        bad = replay_check(trace, cluster, EventLog(tampered), perf=IdealPerf())
        assert any(m.startswith("gpu-count:") for m in bad), extra


def test_a_lease_expiry_moves_a_job_when_a_fairer_one_takes_its_servers():
    # X and Z ask 2 GPUs for 1000 s at 0, Y 2 GPUs for 20 s at 50; leases of 100 s
    cluster = Cluster.uniform(1, 1, 2, 2, 1)
    trace = Trace("expiry", (Job("X", 0.0, 2, 1000.0), Job("Z", 0.0, 2, 1000.0), Job("Y", 50.0, 2, 20.0)))
    pol = Themis(lease=100.0, elastic=True)
    res = simulate(trace, cluster, pol, perf=IdealPerf())
    starts = [(r.time, r.job, r.gpus, r.work_done) for r in res.log if r.event == "start"]
    # t=0: rho 1 each, tie by id: X on rack 0, Z on rack 1. t=50: Y waits (no GPU free).
    assert starts[:2] == [(0.0, "X", (0, 1), 0.0), (0.0, "Z", (2, 3), 0.0)]
    # t=100: both leases expire and the 4 servers are auctioned with Y. N = 3 jobs:
    # rho(Y) = (50 + 20) / (20 * 1.5) = 2.33 > rho(X) = rho(Z) = (100 + 900) / (1000 * 1.5) = 0.67.
    # The top ceil(0.2 * 3) = 1 bidder, Y, takes its 2 GPUs first, rack 0 (X's servers); X comes
    # next and moves to rack 1 (keeping its 100 s of work); nothing is left for Z (preempted).
    assert starts[2:4] == [(100.0, "Y", (0, 1), 0.0), (100.0, "X", (2, 3), 100.0)]
    pre = [(r.time, r.job, r.gpus, r.work_done) for r in res.log if r.event == "preempt"]
    assert pre == [(100.0, "Z", (2, 3), 100.0), (100.0, "X", (0, 1), 100.0)]
    # t=120: Y finishes, Z comes back on rack 0; X's later leases renew in place
    assert starts[4] == (120.0, "Z", (0, 1), 100.0) and len(starts) == 5
    fin = {r.job: r.time for r in res.log if r.event == "finish"}
    assert fin == {"Y": 120.0, "X": 1000.0, "Z": 1020.0}
    assert pol.stats()["moves"] == 1 and pol.stats()["renewals"] > 0
    assert replay_check(trace, cluster, res.log, perf=IdealPerf()) == []


def test_only_an_elastic_policy_may_start_a_job_on_fewer_gpus():
    trace, cluster = _scene()

    class Half(Policy):
        elastic = False

        def schedule(self, view, events):
            return [Start(j.id, tuple(range(j.gpus // 2 or 1))) for j in list(view.pending)[:1]
                    if view.n_free == 4]

    with pytest.raises(PolicyError, match="needs 4 distinct GPUs"):
        simulate(trace, cluster, Half(), perf=IdealPerf())
    # a fixed-gang Themis on the scene never starts a partial gang (and the replay agrees)
    res = simulate(trace, cluster, Themis(lease=150.0), perf=IdealPerf())
    assert all(len(r.gpus) == {"A": 4, "B": 2, "C": 1}[r.job] for r in res.log if r.event == "start")
    assert replay_check(trace, cluster, res.log, perf=IdealPerf()) == []


def test_elastic_split_offers_the_fairest_fifth_an_equal_share_then_serves_the_rest():
    # 10 bidders (in decreasing rho) for 12 GPUs: the top ceil(0.2 * 10) = 2 share them equally up
    # to their asks (3 and 12: 3 and 9), nothing is left for the other 8
    assert _elastic_split([3, 12] + [4] * 8, 12, 0.8) == [3, 9] + [0] * 8
    # 5 GPUs, top 1 of 3 (asks 2): it takes 2, the rest go in order, each up to its ask
    assert _elastic_split([2, 2, 4], 5, 0.8) == [2, 2, 1]
    # f = 0: every bidder in the offered set, equal counts, one GPU at a time in order
    assert _elastic_split([4, 4, 4], 7, 0.0) == [3, 2, 2]
