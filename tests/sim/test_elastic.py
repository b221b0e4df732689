"""Elastic starts (a job on w of its g GPUs at w/g of its rate) and Themis's elastic leases
(CASSINI §5.1): a hand scene where a lease expiry moves a job and re-tunes its workers, every
number worked out by hand below, and the replay check judging the scaled rates."""

from __future__ import annotations

import pytest

from placement.sim import Cluster, Job, Trace, replay_check, simulate
from placement.sim.log import EventLog
from placement.sim.perf import IdealPerf
from placement.sim.policy import Policy, PolicyError, Start
from solvers.online.themis import Themis


def _scene():
    # 4 single-GPU machines, 2 racks of 2. A asks 4 GPUs (400 s of work), B 2 (100 s), both at 0;
    # C asks 1 (50 s) at 120. Leases of 150 s.
    cluster = Cluster.uniform(1, 1, 2, 2, 1)
    trace = Trace("scene", (Job("A", 0.0, 4, 400.0), Job("B", 0.0, 2, 100.0), Job("C", 120.0, 1, 50.0)))
    return trace, cluster


def test_lease_expiry_moves_and_retunes_a_job_at_a_scaled_rate():
    trace, cluster = _scene()
    pol = Themis(lease=150.0, elastic=True)
    res = simulate(trace, cluster, pol, perf=IdealPerf())
    rows = [(r.time, r.event, r.job, r.gpus, r.work_done, r.extra) for r in res.log if r.event != "submit"]
    # t=0: N=2 jobs, fair share 4 // 2 = 2 GPUs each. rho(B) = 100/100 = 1 > rho(A) = (400 * 1.25
    # rack penalty) / (400 * max(1, 2 * 4 / 4)) = 0.625: B is placed first (rack 0), A gets 2 of
    # its 4 GPUs (rack 1) and runs at 2/4 of its rate.
    assert rows[0] == (0.0, "start", "B", (0, 1), 0.0, "tier=rack rate=1.0")
    assert rows[1] == (0.0, "start", "A", (2, 3), 0.0, "tier=rack rate=0.5 workers=2")
    assert rows[2] == (100.0, "finish", "B", (0, 1), 100.0, "")
    # t=120: C alone bids for the 2 idle GPUs; it asks 1 and gets machine 0.
    assert rows[3][:4] == (120.0, "start", "C", (0,))
    # t=150: A's lease expires and it gives its servers back; 3 GPUs are auctioned (1, 2, 3), N=2:
    # A gets its share 2, then the last one: it restarts on 3 GPUs with the 150 * 0.5 = 75 s of
    # work it did, at 3/4 of its rate.
    assert rows[4] == (150.0, "preempt", "A", (2, 3), 75.0, "")
    assert rows[5] == (150.0, "start", "A", (1, 2, 3), 75.0, "tier=cluster rate=0.75 workers=3")
    assert rows[6][:3] == (170.0, "finish", "C")
    # t=300: the next expiry; A alone gets all 4 GPUs (75 + 150 * 0.75 = 187.5 s done) and
    # finishes its 400 - 187.5 = 212.5 s left at rate 1, at 512.5.
    assert rows[7] == (300.0, "preempt", "A", (1, 2, 3), 187.5, "")
    assert rows[8] == (300.0, "start", "A", (0, 1, 2, 3), 187.5, "tier=cluster rate=1.0")
    assert rows[9] == (512.5, "finish", "A", (0, 1, 2, 3), 400.0, "")
    assert len(rows) == 10
    st = pol.stats()
    assert (st["moves"], st["resized"], st["partial_starts"]) == (2, 3, 2)
    assert replay_check(trace, cluster, res.log, perf=IdealPerf()) == []


def test_replay_judges_elastic_rates_and_worker_counts():
    trace, cluster = _scene()
    log = simulate(trace, cluster, Themis(lease=150.0, elastic=True), perf=IdealPerf()).log.rows
    # A's 3-worker attempt as if it ran at its full rate: 75 + 150 = 225 s by 300, done at 475
    fast = []
    for r in log:
        if r.job == "A" and r.time >= 300.0 and r.event in ("preempt", "start"):
            r = r._replace(work_done=225.0)
        elif r.job == "A" and r.event == "finish":
            r = r._replace(time=475.0)
        fast.append(r)
    fast.sort(key=lambda r: r.time)
    bad = replay_check(trace, cluster, EventLog(fast), perf=IdealPerf())
    assert any(m.startswith("work:") and "keeps work 225.0" in m for m in bad)
    # a start on fewer GPUs than the job asks for without its workers= tag, or with a wrong one
    for extra in ("tier=cluster rate=0.75", "tier=cluster rate=0.75 workers=2"):
        tampered = [r._replace(extra=extra) if (r.job, r.event, r.time) == ("A", "start", 150.0) else r for r in log]
        bad = replay_check(trace, cluster, EventLog(tampered), perf=IdealPerf())
        assert any(m.startswith("gpu-count:") and "row" in m for m in bad), extra


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
