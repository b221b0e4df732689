"""Tiresias as its authors' simulator runs it (SymbioticLab/Tiresias, ``dlas-gpu``): the queue
lists, service credited at the preemption, three queues by default, and consolidated jobs kept
under one rack switch (``ms_yarn_placement``) — hand-computed schedules and a log property; and
Gandiva's limit of one migration per job per interval."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from placement.solvers.online.tiresias import QUEUE_LIMITS, Tiresias

from placement.sim import Cluster, Job, Trace, replay_check, simulate, synthetic_trace
from placement.sim.perf import IdealPerf
from placement.sim.policies import make_policy
from tests.support import rack_spreads


def _trace(jobs):
    return Trace(name="hand", jobs=tuple(sorted(jobs, key=lambda j: (j.submit, j.id))))


def _events(log, kind):
    return [(r.job, r.time) for r in log if r.event == kind]


def test_defaults_are_the_authors_three_queues():
    assert QUEUE_LIMITS == (3250.0, 7200.0) and Tiresias().limits == QUEUE_LIMITS


def test_preempted_service_is_credited_at_the_preemption():
    """One GPU, queues [3250, 7200] GPU-s. j0 (20,000 s) runs from 0 and is demoted to Q1 at
    3,250; j1 (Q0) preempts it at 4,000 and ends at 4,100; j0 resumes; j2 (Q0) preempts it at
    4,200 (j0 has run 4,100 s, still Q1). j2 is demoted to Q1 at 7,450 and joins the end of Q1
    behind the waiting j0, which runs until its service reaches 7,200 (at 10,550, into Q2);
    then j2 runs its last 1,750 s and ends at 12,300. Crediting j0 up to the next policy call
    instead (7,450 s at 4,200 + ...) would put j0 in Q2 and end j2 at 9,200."""
    cluster = Cluster.uniform(racks=1, machines=1, gpus_per_machine=1)
    trace = _trace([Job("j0", 0.0, 1, 20_000.0, model="ResNet50"), Job("j1", 4000.0, 1, 100.0, model="ResNet50"),
                    Job("j2", 4200.0, 1, 5000.0, model="ResNet50")])
    res = simulate(trace, cluster, make_policy("tiresias", queue_limits=(3250, 7200)), perf=IdealPerf())
    assert replay_check(trace, cluster, res.log, perf=IdealPerf()) == []
    assert dict(_events(res.log, "finish")) == pytest.approx({"j1": 4100.0, "j2": 12_300.0, "j0": 25_100.0})
    assert _events(res.log, "preempt") == [("j0", 4000.0), ("j0", 4200.0), ("j2", 7450.0), ("j0", 10_550.0)]


def test_waiting_jobs_queue_behind_running_ones_and_the_preempted_lead():
    """Two GPUs, one queue limit of 1e9 (one effective queue for these jobs, FIFO by list).
    a and b run; c and d wait. The list rebuild keeps a, b ahead; when a ends, c (the older
    waiting job) starts, not d."""
    cluster = Cluster.uniform(racks=1, machines=1, gpus_per_machine=2)
    trace = _trace([Job("a", 0.0, 1, 100.0), Job("b", 0.0, 1, 1000.0), Job("c", 1.0, 1, 50.0),
                    Job("d", 2.0, 1, 50.0)])
    res = simulate(trace, cluster, make_policy("tiresias", queue_limits=(1e9,)), perf=IdealPerf())
    assert dict(_events(res.log, "start")) == {"a": 0.0, "b": 0.0, "c": 100.0, "d": 150.0}


def _rack_cluster():
    # 2 racks x 2 machines x 8 GPUs
    return Cluster.uniform(racks=2, machines=2, gpus_per_machine=8)


def test_consolidated_job_waits_for_one_rack_not_two():
    """r0, r1, r2 (8 GPUs each) take machines 0, 1 (rack 0) and 2 (rack 1). When r0 ends at 1 h,
    machines 0 (rack 0) and 3 (rack 1) are free: a 16-GPU MobileNetV3 (high skew) fits one rack
    but no rack has two free machines. "rack" waits until r1 ends at 2 h and takes rack 0;
    "anywhere" spreads it over both racks at 1 h."""
    jobs = [Job("r0", 0.0, 8, 3600.0, model="ResNet50"), Job("r1", 0.0, 8, 7200.0, model="ResNet50"),
            Job("r2", 0.0, 8, 7200.0, model="ResNet50"), Job("big", 1.0, 16, 3600.0, model="MobileNetV3")]
    cluster = _rack_cluster()
    for placement, start, racks in (("rack", 7200.0, 1), ("anywhere", 3600.0, 2)):
        res = simulate(_trace(jobs), cluster, make_policy("tiresias", queue_limits=(1e12,), placement=placement),
                       perf=IdealPerf())
        assert replay_check(_trace(jobs), cluster, res.log, perf=IdealPerf()) == []
        st_ = {r.job: r for r in res.log if r.event == "start"}
        assert [sorted({int(cluster.machine[g]) for g in st_[j].gpus}) for j in ("r0", "r1", "r2")] == [[0], [1], [2]]
        spans = {int(cluster.rack[g]) for g in st_["big"].gpus}
        assert (st_["big"].time, len(spans)) == (pytest.approx(start), racks), placement


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(["batch", "poisson"]))
def test_no_job_that_fits_a_rack_is_spread_over_racks_when_a_rack_had_room(seed, kind):
    """From the log alone: whenever Tiresias starts a job over two racks, no rack had as many free
    GPUs as the job at that moment (free GPUs recomputed from the log's starts and stops)."""
    cluster = Cluster.uniform(racks=3, machines=2, gpus_per_machine=4)
    trace = synthetic_trace(kind, jobs=30, seed=seed, jobs_per_hour=30.0, max_gpus=16)
    res = simulate(trace, cluster, make_policy("tiresias"), perf=IdealPerf())
    assert replay_check(trace, cluster, res.log, perf=IdealPerf()) == []
    for job, t, gpus, most_free in rack_spreads(res.log, cluster.rack):
        assert most_free < gpus, (job, t, most_free)


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([600.0, 7200.0]))
def test_gandiva_migrates_a_job_at_most_once_per_interval(seed, interval):
    """Gandiva's only preemptions are migrations: two of one job are at least the interval apart,
    and interval 0 is the unlimited rule (the same log as the default)."""
    cluster = Cluster.uniform(racks=2, machines=2, gpus_per_machine=4)
    trace = synthetic_trace("poisson", jobs=30, seed=seed, jobs_per_hour=30.0, max_gpus=8)
    res = simulate(trace, cluster, make_policy("gandiva", migration_interval=interval))
    assert replay_check(trace, cluster, res.log) == []
    last: dict[str, float] = {}
    for r in res.log:
        if r.event == "preempt":
            assert r.time - last.get(r.job, -1e18) >= interval
            last[r.job] = r.time
    default = simulate(trace, cluster, make_policy("gandiva"))
    zero = simulate(trace, cluster, make_policy("gandiva", migration_interval=0.0))
    assert list(default.log) == list(zero.log)


def test_the_spread_check_sees_a_spread_that_had_room():
    """The log walk the two spread tests use, on a hand log: 2 racks x 4 GPUs; job a takes GPUs
    0-1 (rack 0) until 10; b starts at 10 on GPUs 3-4 (two racks) while rack 0 has all 4 free
    again, so the check must report b with 4 free GPUs in one rack."""
    from placement.sim.log import LogRow

    rack = [0, 0, 0, 0, 1, 1, 1, 1]
    log = [LogRow(0.0, "start", "a", (0, 1)), LogRow(10.0, "finish", "a", (0, 1)),
           LogRow(10.0, "start", "b", (3, 4)), LogRow(20.0, "finish", "b", (3, 4))]
    assert rack_spreads(log, rack) == [("b", 10.0, 2, 4)]
    assert rack_spreads(log[:2], rack) == []
    # starts at one instant take their GPUs in the log's order: e and c take half of each rack, so d,
    # spread over both racks after them, had at most 2 free GPUs in one rack (4 in rack 0 before c)
    both = [LogRow(0.0, "start", "e", (5, 6)), LogRow(0.0, "start", "c", (0, 1)),
            LogRow(0.0, "start", "d", (2, 3, 4)), LogRow(5.0, "finish", "c", (0, 1))]
    assert rack_spreads(both, rack) == [("d", 0.0, 3, 2)]


def test_scheduling_rounds_start_jobs_and_demote_only_on_the_round_grid():
    # one machine of 2 GPUs, rounds every 60 s, one queue limit of 100 GPU-s: A (1 GPU, 100 s) at
    # 10 starts at the round at 60 and finishes at 160; B (2 GPUs, 30 s) at 30 waits for A's GPU
    # (the other is free but B needs both) and starts at the first round after 160, 180; C (1
    # GPU, 200 s) at 61 starts at 120 on the free GPU, and B, left waiting, moves behind it in
    # Q0 (the authors' rule); at 180 C has 60 GPU-s (Q0, ahead of B), so B waits; at 240 C has
    # 120 >= 100: demoted to Q1, behind B: C is preempted at 240 and B runs 240-270; C resumes at
    # the round at 300 and finishes its 80 s left at 380.
    cluster = Cluster.uniform(1, 1, 1, 1, 2)
    trace = Trace("rounds", (Job("A", 10.0, 1, 100.0), Job("B", 30.0, 2, 30.0), Job("C", 61.0, 1, 200.0)))
    pol = Tiresias(queue_limits=(100.0,), round_interval=60.0)
    res = simulate(trace, cluster, pol, perf=IdealPerf())
    rows = [(r.time, r.event, r.job) for r in res.log if r.event in ("start", "preempt", "finish")]
    assert rows == [(60.0, "start", "A"), (120.0, "start", "C"), (160.0, "finish", "A"),
                    (240.0, "preempt", "C"), (240.0, "start", "B"), (270.0, "finish", "B"),
                    (300.0, "start", "C"), (380.0, "finish", "C")]
    assert all(t % 60.0 == 0 for t, ev, _ in rows if ev in ("start", "preempt"))
    assert replay_check(trace, cluster, res.log, perf=IdealPerf()) == []
    assert pol.stats()["demotions"] == 1
    # without rounds A starts at its arrival
    first = next(r for r in simulate(trace, cluster, Tiresias(queue_limits=(100.0,)), perf=IdealPerf()).log
                 if r.event == "start")
    assert (first.time, first.job) == (10.0, "A")


def test_queue_lists_keep_a_waiting_jobs_place():
    # 2 GPUs, no demotion: X (1 GPU, 100 s) at 0, Y (2 GPUs, 50 s) at 1, Z (1 GPU, 200 s) at 2. Z
    # fits beside X and starts at 2 while Y waits. The Tiresias authors' rule moves Y behind the
    # running Z, so at 100 Z keeps running and Y starts when Z ends, at 202. With plain lists (the
    # Pollux authors') Y keeps its place ahead of Z: at 100 Z is preempted for Y (98 s done), Y runs
    # 100-150, Z resumes at 150 and ends at 252.
    cluster = Cluster.uniform(1, 1, 1, 1, 2)
    trace = Trace("lists", (Job("X", 0.0, 1, 100.0), Job("Y", 1.0, 2, 50.0), Job("Z", 2.0, 1, 200.0)))

    def ends(order):
        res = simulate(trace, cluster, Tiresias(queue_limits=(1e9,), queue_order=order), perf=IdealPerf())
        assert replay_check(trace, cluster, res.log, perf=IdealPerf()) == []
        return {r.job: r.time for r in res.log if r.event == "finish"}

    assert ends("tiresias") == {"X": 100.0, "Z": 202.0, "Y": 252.0}
    assert ends("lists") == {"X": 100.0, "Y": 150.0, "Z": 252.0}
