"""Simulator core: FIFO and a random preempting policy judged by replay_check on generated
traces; determinism; invalid decisions are errors; unschedulable jobs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from placement.solvers.online.fifo import FIFO

from placement.sim import (
    Cluster,
    DallyPerf,
    IdealPerf,
    Job,
    Policy,
    PolicyError,
    Preempt,
    Start,
    Timer,
    Trace,
    replay_check,
    simulate,
    synthetic_trace,
)
from placement.sim.placement import first_fit_consolidated


class RandomPolicy(Policy):
    """Seeded chaos: starts random pending jobs on random free GPUs of their type, preempts
    random running jobs, sets timers; every decision valid by construction."""

    name = "random"

    def __init__(self, seed=0, p_preempt=0.2):
        self.rng = np.random.default_rng(seed)
        self.p_preempt = p_preempt

    def schedule(self, view, events):
        out = []
        free = view.free.copy()
        running = sorted(view.running)
        if running and self.rng.random() < self.p_preempt:
            jid = running[int(self.rng.integers(len(running)))]
            out.append(Preempt(jid))
            free[list(view.running[jid].gpus)] = True
        for job in list(view.pending):
            if self.rng.random() < 0.3:
                continue
            ok = free if job.gpu_type is None else free & (view.cluster.gpu_type == job.gpu_type)
            ids = np.flatnonzero(ok)
            if len(ids) >= job.gpus:
                pick = tuple(int(x) for x in self.rng.choice(ids, size=job.gpus, replace=False))
                free[list(pick)] = False
                out.append(Start(job.id, pick))
        if view.pending:
            out.append(Timer(view.now + float(self.rng.integers(1, 500)), "wake"))
        return out


def _mixed_cluster():
    from placement.sim.cluster import MachineSpec

    ms = [MachineSpec(f"m{i}", f"k{i // 2}", "c0", "r0", 4, "A" if i < 3 else "B", 32)
          for i in range(6)]
    return Cluster.from_machines(ms)


clusters = st.sampled_from(["u1", "u2", "mixed"]).map(
    lambda k: {"u1": Cluster.uniform(racks=2, machines=2, gpus_per_machine=4),
               "u2": Cluster.uniform(regions=2, clusters=2, racks=2, machines=2, gpus_per_machine=2),
               "mixed": _mixed_cluster()}[k])


@given(cluster=clusters, seed=st.integers(0, 10_000), kind=st.sampled_from(["batch", "poisson"]),
       n=st.integers(0, 40), backfill=st.booleans(), ideal=st.booleans())
def test_fifo_log_passes_replay(cluster, seed, kind, n, backfill, ideal):
    types = list(cluster.types) if len(cluster.types) > 1 else None
    trace = synthetic_trace(kind, jobs=n, seed=seed, jobs_per_hour=30, max_gpus=16,
                            gpu_types=types, mean_log_duration=6.0, sd_log_duration=1.0)
    perf = IdealPerf() if ideal else DallyPerf()
    res = simulate(trace, cluster, FIFO(backfill=backfill), perf=perf)
    assert replay_check(trace, cluster, res.log, perf=perf) == []
    assert res.unfinished == ()
    finished = {r.job for r in res.log if r.event == "finish"}
    unsched = {r.job for r in res.log if r.event == "unschedulable"}
    assert finished | unsched == {j.id for j in trace.jobs} and not finished & unsched
    assert unsched == {j.id for j in trace.jobs if j.gpus > cluster.capacity(j.gpu_type)}


@given(cluster=clusters, seed=st.integers(0, 10_000), ckpt=st.sampled_from([None, 60.0, 600.0]))
def test_random_preempting_policy_passes_replay(cluster, seed, ckpt):
    types = list(cluster.types) if len(cluster.types) > 1 else None
    trace = synthetic_trace("poisson", jobs=25, seed=seed, jobs_per_hour=60, max_gpus=8,
                            gpu_types=types, mean_log_duration=6.0, sd_log_duration=1.0)
    res = simulate(trace, cluster, RandomPolicy(seed), checkpoint_interval=ckpt,
                   scan_interval=300.0)
    assert replay_check(trace, cluster, res.log) == []
    assert res.unfinished == ()
    # work kept at each preemption is a multiple of the checkpoint's progress (no more than done)
    assert res.stats["starts"] == res.stats["preemptions"] + len(
        [r for r in res.log if r.event == "finish"])


def test_same_seed_same_log_bytes(tmp_path):
    cluster = Cluster.uniform(racks=2, machines=3, gpus_per_machine=4)
    trace = synthetic_trace("poisson", jobs=200, seed=7, max_gpus=16)
    a = simulate(trace, cluster, RandomPolicy(3), seed=3).log
    assert any(r.event == "preempt" for r in a)  # the log exercises preemption
    b = simulate(trace, cluster, RandomPolicy(3), seed=3).log
    a.write_csv(tmp_path / "a.csv")
    b.write_csv(tmp_path / "b.csv")
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    c = simulate(trace, cluster, RandomPolicy(4), seed=4).log
    assert c.to_csv() != a.to_csv()  # the seed matters: not a constant log
    from placement.sim import read_log

    assert read_log(tmp_path / "a.csv").to_csv() == a.to_csv()


def test_unschedulable_jobs_are_logged_at_arrival():
    cluster = _mixed_cluster()  # 12 GPUs of A, 12 of B
    jobs = (Job("big", 5.0, 13, 10.0, gpu_type="A"), Job("ok", 5.0, 12, 10.0, gpu_type="A"),
            Job("none", 6.0, 1, 10.0, gpu_type="H100"), Job("any", 7.0, 25, 1.0))
    trace = Trace("t", jobs)
    res = simulate(trace, cluster, FIFO(), perf=IdealPerf())
    rows = [(r.time, r.event, r.job) for r in res.log if r.event == "unschedulable"]
    assert rows == [(5.0, "unschedulable", "big"), (6.0, "unschedulable", "none"),
                    (7.0, "unschedulable", "any")]
    assert [(r.time, r.job) for r in res.log if r.event == "finish"] == [(15.0, "ok")]
    assert replay_check(trace, cluster, res.log, perf=IdealPerf()) == []


def test_fifo_hand_schedule_and_dally_rates():
    # 2 racks x 2 machines x 2 GPUs; ResNet18: rack overhead 116%, network 2749% (Dally Table 1)
    cluster = Cluster.uniform(racks=2, machines=2, gpus_per_machine=2)
    jobs = (Job("a", 0.0, 2, 100.0, model="ResNet18"), Job("b", 0.0, 4, 100.0, model="ResNet18"),
            Job("c", 1.0, 3, 50.0, model="ResNet18"), Job("d", 2.0, 1, 10.0, model="ResNet18"))
    res = simulate(Trace("t", jobs), cluster, FIFO())
    starts = {r.job: (r.time, r.gpus) for r in res.log if r.event == "start"}
    finish = {r.job: r.time for r in res.log if r.event == "finish"}
    assert starts["a"] == (0.0, (0, 1)) and starts["b"] == (0.0, (4, 5, 6, 7))
    assert finish["a"] == pytest.approx(100.0 * 1.07)
    assert finish["b"] == pytest.approx(100.0 * 2.16)
    # c (3 GPUs) waits for b? no: at t=1 GPUs 2,3 free only -> waits for a; d waits behind c
    assert starts["c"][0] == pytest.approx(107.0)
    assert cluster.tier(starts["c"][1]) == "rack"
    assert starts["d"][0] == pytest.approx(107.0)  # 1 GPU left in rack 0 after c


def test_first_fit_consolidated_prefers_fewest_machines():
    cluster = Cluster.uniform(racks=2, machines=2, gpus_per_machine=4)
    free = np.ones(16, dtype=bool)
    free[[0, 1, 2, 4, 8, 9]] = False  # machine 0: 1 free, 1: 3 free, 2: 2 free, 3: 4 free
    assert first_fit_consolidated(cluster, free, 3) == (5, 6, 7)
    assert first_fit_consolidated(cluster, free, 4) == (12, 13, 14, 15)
    assert first_fit_consolidated(cluster, free, 5) == (12, 13, 14, 15, 10)
    assert first_fit_consolidated(cluster, free, 10) == (12, 13, 14, 15, 5, 6, 7, 10, 11, 3)
    assert first_fit_consolidated(cluster, free, 11) is None


class _Scripted(Policy):
    def __init__(self, script):
        self.script = script

    def schedule(self, view, events):
        return self.script(view, events)


def _run(script, jobs=None, cluster=None):
    cluster = cluster or _mixed_cluster()
    jobs = jobs or (Job("a", 0.0, 2, 10.0, gpu_type="A"), Job("b", 0.0, 2, 10.0),
                    Job("c", 5.0, 1, 10.0))
    return simulate(Trace("t", jobs), cluster, _Scripted(script), perf=IdealPerf())


@pytest.mark.parametrize("script, match", [
    (lambda v, e: [Start("zz", (0, 1))], "unknown job"),
    (lambda v, e: [Start("a", (0, 1)), Start("b", (1, 2))], "busy"),
    (lambda v, e: [Start("a", (0, 1)), Start("a", (2, 3))] if v.now == 0 else [], "running"),
    (lambda v, e: [Start("a", (20, 21))], "type"),
    (lambda v, e: [Start("a", (0,))], "distinct"),
    (lambda v, e: [Start("a", (0, 0))], "distinct"),
    (lambda v, e: [Start("a", (0, 99))], "out of range"),
    (lambda v, e: [Start("c", (0,))], "not yet submitted"),
    (lambda v, e: [Preempt("a")], "not running"),
    (lambda v, e: [Timer(v.now - 1.0)], "Timer"),
    (lambda v, e: ["start a"], "unknown decision"),
])
def test_invalid_decision_is_policy_error(script, match):
    with pytest.raises(PolicyError, match=match):
        _run(script)


def test_start_after_finish_is_policy_error():
    def script(v, e):
        if v.now == 0:
            return [Start("a", (0, 1))]
        if any(x.kind == "finish" for x in e):
            return [Start("a", (0, 1))]
        return []

    with pytest.raises(PolicyError, match="finished"):
        _run(script)


def test_livelock_timer_is_policy_error():
    with pytest.raises(PolicyError, match="no progress"):
        _run(lambda v, e: [Timer(v.now)])


def test_view_running_remaining_and_history_checkpoints():
    cluster = Cluster.uniform(racks=1, machines=1, gpus_per_machine=2)
    seen = {}

    def script(v, e):
        if v.now == 0:
            return [Start("a", (0,)), Timer(250.0)]
        if v.now == 250.0 and "a" in v.running:
            seen["remaining"] = v.running["a"].remaining
            return [Preempt("a"), Timer(300.0)]
        if v.now == 300.0:
            seen["history"] = v.history("a")
            return [Start("a", (1,))]
        return []

    trace = Trace("t", (Job("a", 0.0, 1, 1000.0),))
    res = simulate(trace, cluster, _Scripted(script), perf=IdealPerf(), checkpoint_interval=100.0)
    assert seen["remaining"] == 750.0
    assert seen["history"].work_done == 200.0 and seen["history"].preemptions == 1
    assert seen["history"].run_time == 250.0 and seen["history"].last_stop == 250.0
    assert [r.time for r in res.log if r.event == "finish"] == [1100.0]
    assert replay_check(trace, cluster, res.log, perf=IdealPerf()) == []


def test_a_policy_that_waits_forever_ends_as_stalled_not_a_hang():
    """A policy keeps setting a timer for a job it never starts: once nothing runs, nothing is
    left to arrive and no Start or Preempt came for IDLE_LIMIT batches, the run stops, the job is
    unfinished and the stall time is reported; a job the same policy does start finishes."""
    from placement.sim.engine import IDLE_LIMIT
    from placement.sim.policy import Timer

    def script(view, events):
        out = [Start(j.id, tuple(range(j.gpus))) for j in view.pending if j.id == "ok" and not view.running]
        return out + [Timer(view.now + 60.0, "again")]

    cluster = Cluster.uniform(racks=1, machines=1, gpus_per_machine=4)
    jobs = (Job("ok", 0.0, 2, 100.0), Job("never", 1.0, 2, 10.0))
    res = simulate(Trace("t", jobs), cluster, _Scripted(script), perf=IdealPerf())
    assert res.unfinished == ("never",)
    assert [r.job for r in res.log if r.event == "finish"] == ["ok"]
    # three timer chains (set at 0, 1 and 100 s) fire every 60 s once "ok" is done
    assert res.stats["stalled_at"] == pytest.approx(100.0 + 60.0 * (IDLE_LIMIT + 1) / 3, abs=60.0)
    assert res.stats["batches"] > IDLE_LIMIT
