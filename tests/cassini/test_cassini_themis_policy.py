"""The simulator's Themis policy (finish-time fairness auctions over 10-minute leases): hand schedules."""

import pytest
from placement.solvers.online.themis import Themis

from placement.sim import Cluster, IdealPerf, Job, Trace, replay_check, simulate


def _events(res):
    return [(r.time, r.event, r.job, tuple(r.gpus)) for r in res.log if r.event in ("start", "preempt", "finish")]


def test_lease_expiry_auction_hands_gpus_to_the_least_fair_job():
    # a (3000 s, 4 GPUs) holds the cluster; b (100 s) arrives at 10. At a's lease end (600 s):
    # rho(a) = (600 + 2400) / (3000 * 2) = 0.5, rho(b) = (590 + 100) / (100 * 2) = 3.45 -> b wins,
    # a is preempted, b runs 600-700, a resumes at 700 with 2400 s left -> 3100.
    cluster = Cluster.uniform(racks=1, machines=1, gpus_per_machine=4)
    trace = Trace("t", (Job("a", 0.0, 4, 3000.0), Job("b", 10.0, 4, 100.0)))
    res = simulate(trace, cluster, Themis(lease=600.0), perf=IdealPerf())
    ev = [(t, e, j) for t, e, j, _ in _events(res)]
    assert ev == [(0.0, "start", "a"), (600.0, "preempt", "a"), (600.0, "start", "b"), (700.0, "finish", "b"),
                  (700.0, "start", "a"), (3100.0, "finish", "a")]
    assert replay_check(trace, cluster, res.log, perf=IdealPerf()) == []


def test_a_lease_expiry_moves_a_fragmented_job_onto_a_freed_rack():
    # 2 racks of 2 single-GPU machines. At 0: x, y, z (1 GPU each) take GPUs 0, 1, 2 (first fit).
    # x ends at 20; a (2 GPUs) arrives at 30 and only GPUs 0 and 3 are free: it starts across the
    # two racks. y ends at 500. At 600 z's lease expires: it wins again and keeps GPU 2 (no
    # placement spans fewer racks). At 630 a's lease expires: its GPUs go back to the auction,
    # rack 0 (GPUs 0, 1) is free, so a is moved there (preempted and restarted at once, keeping
    # its 600 s of work): it ends at 630 + 2400.
    cluster = Cluster.uniform(racks=2, machines=2, gpus_per_machine=1)
    trace = Trace("t", (Job("x", 0.0, 1, 20.0), Job("y", 0.0, 1, 500.0), Job("z", 0.0, 1, 5000.0),
                        Job("a", 30.0, 2, 3000.0)))
    pol = Themis(lease=600.0)
    res = simulate(trace, cluster, pol, perf=IdealPerf())
    assert _events(res) == [
        (0.0, "start", "x", (0,)), (0.0, "start", "y", (1,)), (0.0, "start", "z", (2,)), (20.0, "finish", "x", (0,)),
        (30.0, "start", "a", (0, 3)), (500.0, "finish", "y", (1,)),
        (630.0, "preempt", "a", (0, 3)), (630.0, "start", "a", (0, 1)), (3030.0, "finish", "a", (0, 1)),
        (5000.0, "finish", "z", (2,))]
    assert pol.moves == 1 and pol.renewals >= 8
    assert replay_check(trace, cluster, res.log, perf=IdealPerf()) == []


def test_lease_and_rack_penalty_must_be_valid():
    with pytest.raises(ValueError, match="lease"):
        Themis(lease=0)
    with pytest.raises(ValueError, match="rack_penalty"):
        Themis(rack_penalty=0.5)


def test_phase_spread_places_started_jobs_and_the_link_check_rebuilds_it():
    # 2 racks of 2 single-GPU servers on the Clos-like tree with a network: VGG19 jobs that cross
    # racks share the uplinks; spread 0 puts every started job in phase (phase 0 ms), spread 0.5
    # at half its start-time phase; the link-factor check recomputes every logged factor
    from placement.app.reproduce.cassini_sim import testbed
    from placement.cassini.catalogue import CATALOGUE
    from placement.sim.link_check import link_factor_check
    from placement.sim.links import LinkSharing, default_phase, spread_phase

    cluster = testbed()
    period = CATALOGUE["VGG19"][1]
    trace = Trace("t", tuple(Job(f"j{k}", 0.037 * k, 6, 30.0, model="VGG19") for k in range(4)))
    for spread in (0.0, 0.5):
        res = simulate(trace, cluster, Themis(phase_spread=spread), perf=IdealPerf())
        shifts = {r.job: float(r.extra.split("phase=")[1]) for r in res.log if r.event == "shift"}
        starts = {r.job: r.time for r in res.log if r.event == "start"}
        for j in trace.jobs:
            want = spread * ((starts[j.id] * 1000.0) % period)
            assert spread_phase(j, starts[j.id], spread) == pytest.approx(want)
            assert shifts.get(j.id, default_phase(j, starts[j.id])) == pytest.approx(want)
        assert replay_check(trace, cluster, res.log, perf=IdealPerf(),
                            checks=[link_factor_check(LinkSharing(cluster))]) == []
    with pytest.raises(ValueError, match="phase_spread"):
        Themis(phase_spread=1.5)


def test_random_placement_keeps_the_auction_and_draws_gpus_by_seed():
    cluster = Cluster.uniform(racks=2, machines=4, gpus_per_machine=1)
    trace = Trace("t", tuple(Job(f"j{k}", 10.0 * k, 1 + k % 3, 200.0 + 50 * k) for k in range(6)))
    runs = [simulate(trace, cluster, Themis(placement="random", elastic=True), perf=IdealPerf(), seed=s)
            for s in (1, 1, 2)]
    assert _events(runs[0]) == _events(runs[1])                 # same seed, same log
    for res in runs:
        assert replay_check(trace, cluster, res.log, perf=IdealPerf()) == []
    # the same jobs start, in the same order, with the same worker counts as each other seed's
    first = [(t, e, j, len(g)) for t, e, j, g in _events(runs[0]) if e == "start"]
    assert first == [(t, e, j, len(g)) for t, e, j, g in _events(runs[2]) if e == "start"]
    with pytest.raises(ValueError, match="placement"):
        Themis(placement="anywhere")
