"""Dally, Dally-manual, Tiresias, Gandiva (and FIFO) in the simulator: every log passes
replay_check, runs are deterministic, the schedule bound never exceeds any policy's makespan or
mean JCT, and hand-built scenes exercise each policy's distinctive rule."""

from __future__ import annotations

import statistics

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from placement.models.schedule_bound import instance_from_trace, solve
from placement.solvers.online.delay import Timers

from placement.errors import InstanceError
from placement.sim import Cluster, Job, Trace, replay_check, simulate, synthetic_trace
from placement.sim.policies import make_policy

POLICIES = ("fifo", "dally", "dally-manual", "tiresias", "gandiva")
H = 3600.0


def _finish(log):
    return {r.job: r.time for r in log if r.event == "finish"}


def _makespan_jct(trace, log):
    fin = _finish(log)
    jct = [fin[j.id] - j.submit for j in trace.jobs if j.id in fin]
    return max(fin.values()) - min(j.submit for j in trace.jobs), float(np.mean(jct))


def _trace(jobs):
    return Trace(name="hand", jobs=tuple(sorted(jobs, key=lambda j: (j.submit, j.id))))


@st.composite
def scenes(draw):
    kind = draw(st.sampled_from(["batch", "poisson"]))
    n = draw(st.integers(4, 40))
    seed = draw(st.integers(0, 10_000))
    racks, machines, gpm = draw(st.sampled_from([(2, 2, 4), (2, 2, 8), (3, 2, 4), (1, 4, 4)]))
    trace = synthetic_trace(kind, jobs=n, seed=seed, jobs_per_hour=draw(st.sampled_from([2.0, 20.0])),
                            max_gpus=racks * machines * gpm)
    return trace, Cluster.uniform(racks=racks, machines=machines, gpus_per_machine=gpm)


@pytest.mark.slow
@settings(max_examples=25)
@given(scenes())
def test_every_policy_passes_replay_and_stays_above_the_bound(scene):
    trace, cluster = scene
    ms_lb = solve(instance_from_trace(trace, cluster), "makespan")
    jct_lb = solve(instance_from_trace(trace, cluster), "mean_jct")
    assert ms_lb.status == "optimal" and jct_lb.status == "optimal"
    for name in POLICIES:
        res = simulate(trace, cluster, make_policy(name))
        assert replay_check(trace, cluster, res.log) == [], name
        assert res.unfinished == (), name
        ms, jct = _makespan_jct(trace, res.log)
        assert ms_lb.bound <= ms * (1 + 1e-9), (name, ms_lb.bound, ms)
        assert jct_lb.bound <= jct * (1 + 1e-9), (name, jct_lb.bound, jct)


@pytest.mark.parametrize("name", POLICIES)
def test_same_seed_same_log(name):
    trace = synthetic_trace("poisson", jobs=40, seed=3, jobs_per_hour=30.0, max_gpus=16)
    cluster = Cluster.uniform(racks=2, machines=2, gpus_per_machine=8)
    a = simulate(trace, cluster, make_policy(name), seed=1)
    b = simulate(trace, cluster, make_policy(name), seed=1)
    assert a.log.to_csv() == b.log.to_csv()
    assert replay_check(trace, cluster, a.log) == []


# ----------------------------------------------------------------------------- hand scenes

def _two_machines():
    return Cluster.uniform(racks=1, machines=2, gpus_per_machine=4)


def test_dally_manual_waits_for_the_machine_timer_then_takes_the_rack():
    # two 3-GPU blockers leave 1 + 1 GPUs on the machines: a 2-GPU ResNet18 job fits the rack only.
    # Dally-manual rejects the rack offer for T_Mc = 12 h of starvation, then accepts it.
    jobs = [Job("a", 0.0, 3, 100 * H, model="VGG11"), Job("b", 0.0, 3, 100 * H, model="VGG11"),
            Job("c", 1.0, 2, 1 * H, model="ResNet18")]
    trace, cluster = _trace(jobs), _two_machines()
    res = simulate(trace, cluster, make_policy("dally-manual"))
    start = next(r for r in res.log if r.event == "start" and r.job == "c")
    assert start.time == pytest.approx(1.0 + 12 * H)
    assert "tier=rack" in start.extra
    assert replay_check(trace, cluster, res.log) == []


def test_dally_auto_tuner_learns_short_waits_and_stops_delaying():
    # six 2-GPU ResNet50 jobs (10 s ideal, 11.2 s on one machine), one a second, on 2 machines of 4:
    # w0-w3 start at once (wait 0), w4 and w5 wait for w0 and w1 (7.2 s each). Later two 3-GPU jobs
    # leave one GPU per machine, and a 2-GPU job c only gets rack offers: the tuned machine timer for
    # demand 2 is mean + 2 sample sd of [0, 0, 0, 0, 7.2, 7.2], so c waits that long, not 12 h.
    jobs = [Job(f"w{i}", float(i), 2, 10.0, model="ResNet50") for i in range(6)]
    jobs += [Job("a", 100.0, 3, 100 * H, model="VGG11"), Job("b", 100.0, 3, 100 * H, model="VGG11"),
             Job("c", 101.0, 2, 1 * H, model="ResNet18")]
    trace, cluster = _trace(jobs), _two_machines()
    res = simulate(trace, cluster, make_policy("dally"))
    start = next(r for r in res.log if r.event == "start" and r.job == "c")
    waits = [0.0, 0.0, 0.0, 0.0, 11.2 - 4.0, 12.2 - 5.0]
    tuned = statistics.fmean(waits) + 2 * statistics.stdev(waits)
    assert start.time == pytest.approx(101.0 + tuned)
    assert "tier=rack" in start.extra
    manual = simulate(trace, cluster, make_policy("dally-manual"))
    assert next(r for r in manual.log if r.event == "start" and r.job == "c").time == pytest.approx(101.0 + 12 * H)


def test_dally_replaces_a_slowed_job_when_its_machine_frees():
    # c (MobileNetV3, 2 GPUs) can only get a network placement at first (timers 0), then a machine frees:
    # Dally preempts it and restarts it on one machine.
    cluster = Cluster.uniform(racks=2, machines=1, gpus_per_machine=4)
    jobs = [Job("a", 0.0, 3, 2 * H, model="VGG11"), Job("b", 0.0, 3, 50 * H, model="VGG11"),
            Job("c", 1.0, 2, 10 * H, model="MobileNetV3")]
    trace = _trace(jobs)
    pol = make_policy("dally", initial=Timers(0.0, 0.0))
    res = simulate(trace, cluster, pol)
    starts = [r for r in res.log if r.event == "start" and r.job == "c"]
    assert "tier=cluster" in starts[0].extra or "tier=network" in starts[0].extra
    assert len(starts) == 2 and "tier=machine" in starts[1].extra
    assert starts[1].time == pytest.approx(2 * H * 1.01)  # when a (VGG11, 1% machine overhead) ends
    assert pol.stats()["replacements"] == 1
    assert replay_check(trace, cluster, res.log) == []


def test_tiresias_holds_high_skew_jobs_for_one_machine_but_not_low_skew():
    jobs = [Job("a", 0.0, 3, 10 * H, model="ResNet50"), Job("b", 0.0, 3, 10 * H, model="ResNet50"),
            Job("hi", 1.0, 2, 1 * H, model="AlexNet"), Job("lo", 2.0, 2, 1 * H, model="ResNet18")]
    # a and b leave one GPU per machine: AlexNet (high skew) waits, ResNet18 (low skew)... also needs 2
    trace, cluster = _trace(jobs), _two_machines()
    res = simulate(trace, cluster, make_policy("tiresias", queue_limits=(1e9,)))
    st_ = {r.job: r for r in res.log if r.event == "start"}
    assert st_["hi"].time >= 10 * H and "tier=machine" in st_["hi"].extra
    assert st_["lo"].time == pytest.approx(2.0) and "tier=rack" in st_["lo"].extra
    assert replay_check(trace, cluster, res.log) == []


def test_tiresias_preempts_by_attained_service():
    # one 8-GPU cluster; a long job runs alone, demotes after 3600 GPU-s (450 s at 8 GPUs);
    # a new job (Q0) then preempts it.
    cluster = Cluster.uniform(racks=1, machines=1, gpus_per_machine=8)
    jobs = [Job("long", 0.0, 8, 10 * H, model="ResNet50"), Job("new", 1000.0, 8, 100.0, model="ResNet50")]
    trace = _trace(jobs)
    res = simulate(trace, cluster, make_policy("tiresias"))
    pre = [r for r in res.log if r.event == "preempt"]
    assert [(r.job, r.time) for r in pre] == [("long", 1000.0)]
    assert replay_check(trace, cluster, res.log) == []


def test_gandiva_places_agnostically_then_migrates_with_its_cost():
    # 3 machines of 4 GPUs; a takes GPUs 0-2; c (4 GPUs) gets the lowest free ids 3-6 (two machines,
    # although machine 2 is wholly free: network-agnostic). When a ends (1 h at VGG11's 1% machine
    # overhead), GPUs were released: c is stopped and restarted on machine 2 after the 60 s cost.
    cluster = Cluster.uniform(racks=1, machines=3, gpus_per_machine=4)
    jobs = [Job("a", 0.0, 3, 1 * H, model="VGG11"), Job("c", 1.0, 4, 10 * H, model="ResNet18")]
    trace = _trace(jobs)
    res = simulate(trace, cluster, make_policy("gandiva", migration="eager", migration_cost=60.0))
    starts = [r for r in res.log if r.event == "start" and r.job == "c"]
    assert starts[0].gpus == (3, 4, 5, 6) and "tier=rack" in starts[0].extra
    pre = [r for r in res.log if r.event == "preempt"]
    assert [(r.job, r.time) for r in pre] == [("c", pytest.approx(H * 1.01))]
    assert len(starts) == 2 and starts[1].gpus == (8, 9, 10, 11)
    assert starts[1].time == pytest.approx(H * 1.01 + 60.0)
    assert replay_check(trace, cluster, res.log) == []
    still = simulate(trace, cluster, make_policy("gandiva", migrate=False))
    assert [r.event for r in still.log].count("preempt") == 0


@pytest.mark.parametrize("name, options, field", [
    ("dally", {"preempt_below": "x"}, "preempt_below"), ("dally", {"timers": [1]}, "timers"),
    ("dally", {"window": "w"}, "window"), ("dally", {"history": 0}, "history"),
    ("dally-manual", {"timers": [3600, -1]}, "timers[1]"), ("dally", {"auto_tune": 1}, "auto_tune"),
    ("tiresias", {"queue_limits": -1}, "queue_limits"), ("tiresias", {"queue_limits": [3600, 100]}, "queue_limits"),
    ("tiresias", {"high_skew": "vgg11"}, "high_skew"), ("tiresias", {"promote_knob": -2}, "promote_knob"),
    ("gandiva", {"migration_cost": float("inf")}, "migration_cost"), ("gandiva", {"migrate": 1}, "migrate"),
])
def test_bad_policy_options_name_the_field(name, options, field):
    with pytest.raises(InstanceError) as err:
        make_policy(name, **options)
    assert err.value.field == field


def test_dally_replaced_job_is_not_moved_again():
    # after rule 4a moves c to a machine, it is at its best tier: no further preemption of c, although
    # its Nw_sens stays below 0.5 for hours (the slow start) and two GPUs of its machine stay free
    cluster = Cluster.uniform(racks=2, machines=1, gpus_per_machine=4)
    jobs = [Job("a", 0.0, 3, 2 * H, model="VGG11"), Job("b", 0.0, 3, 50 * H, model="VGG11"),
            Job("c", 1.0, 2, 40 * H, model="MobileNetV3"), Job("d", 4 * H, 1, 1 * H, model="VGG11")]
    trace = _trace(jobs)  # d's arrival at 4 h is a scheduling round while c (Nw_sens ~0.35) runs on a machine
    res = simulate(trace, cluster, make_policy("dally", initial=Timers(0.0, 0.0)))
    assert [r.job for r in res.log if r.event == "preempt"] == ["c"]
    assert replay_check(trace, cluster, res.log) == []
