"""Fluid time sharing (the engine's ``time_sharing``) and Gandiva in its OSDI'18 form.

A hand scene with every number worked out below; the replay check catching a wrong share, a
missing re-share and an unshared start on held GPUs; the metrics counting a shared second as
1/h of a second run; a hypothesis property that every log of the OSDI'18 Gandiva on generated
traces passes the replay check and that a GPU never gives out more than its time.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from placement.solvers.online.gandiva_fluid import GandivaFluid

from placement.errors import InstanceError
from placement.sim import Cluster, Job, Trace, replay_check, simulate
from placement.sim.log import EventLog
from placement.sim.metrics import per_job, summary, utilization_between
from placement.sim.perf import IdealPerf
from placement.sim.policy import Policy, PolicyError, Start

PERF = IdealPerf()


def _scene():
    # one machine of 2 GPUs; A asks 2 GPUs for 100 s at 0, B 1 GPU for 30 s at 10, C 1 GPU for 40 s at 20
    cluster = Cluster.uniform(1, 1, 1, 1, 2)
    trace = Trace("share", (Job("A", 0.0, 2, 100.0), Job("B", 10.0, 1, 30.0), Job("C", 20.0, 1, 40.0)))
    return trace, cluster


def test_jobs_on_held_gpus_progress_at_one_over_the_most_holders():
    trace, cluster = _scene()
    res = simulate(trace, cluster, GandivaFluid(), perf=PERF)
    rows = [(r.time, r.event, r.job, r.gpus, round(r.work_done, 9), r.extra) for r in res.log if r.event != "submit"]
    # 0: A alone on both GPUs. 10: B finds no free GPU and slices on GPU 0 (the least held, lowest
    # id): A's GPUs' most holders is 2, so A runs at 1/2 from 10 (10 s done), B at 1/2.
    assert rows[0] == (0.0, "start", "A", (0, 1), 0.0, "tier=machine rate=1.0 share=1")
    assert rows[1] == (10.0, "start", "B", (0,), 0.0, "tier=machine rate=0.5 share=2")
    assert rows[2] == (10.0, "rate", "A", (0, 1), 10.0, "factor=0.5 share=2 rate=0.5")
    # 20: C slices on GPU 1 (held once, GPU 0 twice): C at 1/2; A's most holders stays 2, B's too.
    assert rows[3] == (20.0, "start", "C", (1,), 0.0, "tier=machine rate=0.5 share=2")
    # B: 30 s at 1/2 from 10, done at 70; A has 10 + 0.5 * 60 = 40 done. C has 25 done and stays
    # at 1/2 (GPU 1 is still A's and C's); A still shares GPU 1 with C, so A stays at 1/2.
    assert rows[4] == (70.0, "finish", "B", (0,), 30.0, "")
    # C: 40 s at 1/2 from 20, done at 100; A: 40 + 0.5 * 30 = 55 done, then alone at rate 1: 45 s more.
    assert rows[5] == (100.0, "finish", "C", (1,), 40.0, "")
    assert rows[6] == (100.0, "rate", "A", (0, 1), 55.0, "factor=1.0 share=1 rate=1.0")
    assert rows[7] == (145.0, "finish", "A", (0, 1), 100.0, "") and len(rows) == 8
    assert replay_check(trace, cluster, res.log, perf=PERF) == []
    # run time counts 1/h of each held second; the rest is waiting (suspended)
    jobs = {r["job"]: r for r in per_job(res.log, trace)}
    assert jobs["B"]["run_time"] == pytest.approx(30.0) and jobs["B"]["jct"] == pytest.approx(60.0)
    assert jobs["A"]["run_time"] == pytest.approx(10.0 + 90.0 / 2 + 45.0)
    assert jobs["C"]["run_time"] == pytest.approx(40.0)
    # utilization: 2 GPUs over [0, 145): A holds 2 GPUs alone for 10 + 45 s; while shared, each
    # GPU is held at most once in full (1/2 + 1/2 on GPU 0 from 10 to 70 and on GPU 1 from 20 to
    # 100, A's halves where its co-holder has gone count 1/2): computed independently here.
    # [10, 20): A holds 2 x 1/2, B 1 x 1/2 -> 1.5; [20, 70): A 1, B 0.5, C 0.5 -> 2; [70, 100): A 1, C 0.5 -> 1.5
    held = 2 * 10 + 1.5 * 10 + 2.0 * 50 + 1.5 * 30 + 2 * 45
    assert utilization_between(res.log, 2, 0.0, 145.0) == pytest.approx(held / (2 * 145.0))
    assert summary(per_job(res.log, trace), res.log, 2)["mean_comm_overhead_s"] == pytest.approx(0.0)


def test_the_replay_catches_a_wrong_share_a_missing_reshare_and_an_unshared_start():
    trace, cluster = _scene()
    log = simulate(trace, cluster, GandivaFluid(), perf=PERF).log
    rows = list(log)

    def tampered(fn):
        return replay_check(trace, cluster, EventLog([fn(r) for r in rows if fn(r) is not None]), perf=PERF)

    # B claims the whole GPU 0 (share=1) while A holds it: its rate is wrong, and so is its finish
    bad = tampered(lambda r: r._replace(extra="tier=machine rate=1.0 share=1") if (r.job, r.event) == ("B", "start")
                   else r)
    assert any(m.startswith("share: job B") for m in bad)
    # A's slow-down at 10 never logged: A runs at 1 on GPUs held twice
    bad = tampered(lambda r: None if (r.job, r.event, r.time) == ("A", "rate", 10.0) else r)
    assert any(m.startswith("share: job A") for m in bad)
    # a start without share= on a held GPU is a GPU used twice
    bad = tampered(lambda r: r._replace(extra="tier=machine rate=0.5") if (r.job, r.event) == ("B", "start") else r)
    assert any(m.startswith("gpu-twice:") for m in bad)
    # the untouched log passes
    assert tampered(lambda r: r) == []


def test_the_sharing_limit_makes_a_job_wait_and_the_engine_refuses_a_start_past_it():
    cluster = Cluster.uniform(1, 1, 1, 1, 1)
    trace = Trace("cap", (Job("A", 0.0, 1, 10.0), Job("B", 0.0, 1, 10.0), Job("C", 0.0, 1, 10.0)))
    res = simulate(trace, cluster, GandivaFluid(max_share=2), perf=PERF)
    starts = [(r.time, r.job) for r in res.log if r.event == "start"]
    # A and B share the GPU (both done at 20), C waits for a free slot and runs alone from 20 to 30
    assert starts == [(0.0, "A"), (0.0, "B"), (20.0, "C")]
    assert max(r.time for r in res.log) == 30.0
    assert replay_check(trace, cluster, res.log, perf=PERF) == []

    class Greedy(Policy):
        time_sharing = 2

        def schedule(self, view, events):
            return [Start(j.id, (0,)) for j in view.pending]

    with pytest.raises(PolicyError, match="sharing limit"):
        simulate(trace, cluster, Greedy(), perf=PERF)


def test_time_sharing_is_refused_where_it_is_not_modelled_and_bad_options_name_their_field():
    class Odd(Policy):
        time_sharing = 1.5

        def schedule(self, view, events):
            return []

    trace = Trace("t", (Job("A", 0.0, 1, 10.0),))
    with pytest.raises(PolicyError, match="time_sharing"):
        simulate(trace, Cluster.uniform(1, 1, 1, 1, 1), Odd(), perf=PERF)
    net = {"racks": 1, "servers_per_rack": 2, "server_capacity": 50, "oversubscription": 1}
    cluster = Cluster.uniform(racks=1, machines=2, gpus_per_machine=1).with_network(net)
    with pytest.raises(PolicyError, match="network"):
        simulate(trace, cluster, GandivaFluid(), perf=PERF)
    with pytest.raises(InstanceError, match="max_share"):
        GandivaFluid(max_share=1)
    with pytest.raises(InstanceError, match="placement"):
        GandivaFluid(placement="best")


@st.composite
def _traces(draw):
    n = draw(st.integers(1, 12))
    jobs = [Job(f"j{i:02d}", float(draw(st.integers(0, 50))), draw(st.sampled_from([1, 2, 4, 8])),
                float(draw(st.integers(1, 80)))) for i in range(n)]
    jobs.sort(key=lambda j: (j.submit, j.id))
    return Trace("gen", tuple(jobs))


@given(trace=_traces(), machines=st.integers(1, 3), cap=st.sampled_from([None, 2, 3]),
       placement=st.sampled_from(["lowest", "random"]), seed=st.integers(0, 5))
def test_every_osdi18_gandiva_log_replays_and_no_gpu_gives_more_than_its_time(trace, machines, cap, placement, seed):
    cluster = Cluster.uniform(1, 1, 1, machines, 4)
    res = simulate(trace, cluster, GandivaFluid(placement=placement, max_share=cap), perf=PERF, seed=seed)
    fits = {j.id for j in trace.jobs if j.gpus <= cluster.n_gpus}
    assert replay_check(trace, cluster, res.log, perf=PERF) == []
    assert {r.job for r in res.log if r.event == "finish"} == fits and res.unfinished == ()
    end = max(r.time for r in res.log)
    if end > 0:
        util = utilization_between(res.log, cluster.n_gpus, 0.0, end)
        assert util <= 1.0 + 1e-9
    # the work done equals the run time each job was given (ideal perf: rate 1 per unit of share)
    for r in per_job(res.log, trace):
        if r["state"] == "finished":
            assert r["run_time"] == pytest.approx(r["duration"], rel=1e-9, abs=1e-6)
    # same seed, same log
    again = simulate(trace, cluster, GandivaFluid(placement=placement, max_share=cap), perf=PERF, seed=seed)
    assert list(again.log) == list(res.log)
