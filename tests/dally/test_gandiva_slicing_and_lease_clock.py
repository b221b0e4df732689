"""On hand schedules: Gandiva's time slicing by suspend-resume (OSDI'18 §3.1),
Dally's lease clock for T_last_assignment (the only reading under which a late first offer meets a
timer), and the workload fitted to the paper's baseline JCTs (seeded, its GPU mix as asked)."""

from __future__ import annotations

import numpy as np
import pytest

from placement.errors import InstanceError
from placement.sim import Cluster, Job, Trace, replay_check, simulate
from placement.sim.dally_workload import LARGE_SIZES, fitted_trace, gpu_mix
from placement.sim.perf import IdealPerf
from placement.sim.policies import make_policy

H = 3600.0


def _trace(jobs):
    return Trace(name="hand", jobs=tuple(sorted(jobs, key=lambda j: (j.submit, j.id))))


def _rows(log, kind):
    return [(r.job, r.time) for r in log if r.event == kind]


def _run(jobs, cluster, policy, **opts):
    trace = _trace(jobs)
    res = simulate(trace, cluster, make_policy(policy, **opts), perf=IdealPerf())
    assert replay_check(trace, cluster, res.log, perf=IdealPerf()) == []
    return res


@pytest.mark.parametrize("share, want", [
    # a (3 h) runs 0-1 h; b joins a's GPU set and takes it at the 1 h tick, ends at 2 h; a resumes
    # at once on the same GPUs with 2 h left and ends at 4 h
    (2, {"a": 4 * H, "b": 2 * H}),
    # no sharing: b waits for a
    (1, {"a": 3 * H, "b": 4 * H}),
])
def test_time_slicing_rotates_same_size_jobs_on_one_gpu_set(share, want):
    cluster = Cluster.uniform(racks=1, machines=1, gpus_per_machine=2)
    res = _run([Job("a", 0.0, 2, 3 * H), Job("b", 0.0, 2, H)], cluster, "gandiva", migration="none",
               time_slicing=True, time_slice=H, max_share=share)
    assert dict(_rows(res.log, "finish")) == pytest.approx(want)
    starts = {r.job: set(r.gpus) for r in res.log if r.event == "start"}
    assert starts["a"] == starts["b"] == {0, 1}
    assert res.policy_stats["slice_switches"] == (1 if share == 2 else 0)


def test_time_slicing_only_groups_jobs_of_the_same_size():
    """c (1 GPU) cannot share a's 2-GPU set: it waits for a's end although b shares it."""
    cluster = Cluster.uniform(racks=1, machines=1, gpus_per_machine=2)
    res = _run([Job("a", 0.0, 2, 3 * H), Job("b", 0.0, 2, H), Job("c", 0.0, 1, H)], cluster, "gandiva",
               migration="none", time_slicing=True, time_slice=H, max_share=4)
    fin = dict(_rows(res.log, "finish"))
    assert fin["b"] == pytest.approx(2 * H) and fin["a"] == pytest.approx(4 * H)
    assert fin["c"] == pytest.approx(5 * H)


def test_suspended_member_takes_free_gpus_when_they_appear():
    """Two machines of 2 GPUs: a (3 h) takes machine 0 and d (1 h) machine 1 at 0; b (3 h, at 1 s)
    joins a's GPU set. When d ends at 1 h, b leaves the set for machine 1 instead of waiting for
    its turn (the 10 h quantum never ticks): a ends at 3 h, b at 4 h."""
    cluster = Cluster.uniform(racks=1, machines=2, gpus_per_machine=2)
    res = _run([Job("a", 0.0, 2, 3 * H), Job("b", 1.0, 2, 3 * H), Job("d", 0.0, 2, H)], cluster, "gandiva",
               migration="none", time_slicing=True, time_slice=10 * H, max_share=2)
    fin = dict(_rows(res.log, "finish"))
    assert fin["a"] == pytest.approx(3 * H) and fin["b"] == pytest.approx(4 * H)
    assert res.policy_stats["slice_joins"] == 1 and res.policy_stats["slice_switches"] == 0


def test_time_slicing_options_name_the_field():
    with pytest.raises(InstanceError, match="max_share"):
        make_policy("gandiva", max_share=0)
    with pytest.raises(InstanceError, match="time_slice"):
        make_policy("gandiva", time_slice=0.0)


def _late_offer_scene():
    """One rack, two machines of 4 GPUs. a1, a2 fill machine 0 (a1 ends at 30 h), b1, b2 fill
    machine 1 (b1 ends at 30 h). z (4 GPUs, sorts last) gets its first usable offer at 30 h: 2 + 2
    free GPUs, no machine."""
    jobs = [Job("a1", 0.0, 2, 30 * H, model="ResNet50"), Job("a2", 0.0, 2, 100 * H, model="ResNet50"),
            Job("b1", 0.0, 2, 30 * H, model="ResNet50"), Job("b2", 0.0, 2, 100 * H, model="ResNet50"),
            Job("z", 0.0, 4, 10 * H, model="ResNet50")]
    return jobs, Cluster.uniform(racks=1, machines=2, gpus_per_machine=4)


@pytest.mark.parametrize("clock, start, machine_rejects", [
    # starvation from submission: 30 h > 12 h at the first offer, the rack is taken at once
    ("submit", 30 * H, 0),
    # the lease clock starts at the first usable offer (30 h): the machine timer rejects until 42 h
    ("lease", 42 * H, 1),
])
def test_lease_clock_lets_the_machine_timer_bind_on_a_late_first_offer(clock, start, machine_rejects):
    jobs, cluster = _late_offer_scene()
    res = _run(jobs, cluster, "dally-manual", clock=clock, preempt=False)
    assert dict(_rows(res.log, "start"))["z"] == pytest.approx(start)
    st = res.policy_stats
    assert (st["reject_timer_machine"] >= 1) == bool(machine_rejects)
    assert st["reject_timer"] == st["reject_timer_machine"] + st["reject_timer_rack"]
    if clock == "submit":
        assert st["reject_timer"] == 0


def test_dally_clock_option_names_the_field():
    with pytest.raises(InstanceError, match="clock"):
        make_policy("dally", clock="arrival")


def test_fitted_trace_is_seeded_and_draws_the_mix_asked():
    a, b = fitted_trace("batch", jobs=400, seed=3), fitted_trace("batch", jobs=400, seed=3)
    assert a.jobs == b.jobs and fitted_trace("batch", jobs=400, seed=4).jobs != a.jobs
    for share in (0.0, 0.4, 1.0):
        t = fitted_trace("batch", jobs=2000, seed=0, share_large=share, median_h=5.0, sigma=1.0)
        g = np.array([j.gpus for j in t.jobs])
        assert set(np.unique(g)) <= set(gpu_mix(share)) and abs(np.mean(g >= 16) - share) < 0.04
        assert np.median([j.duration for j in t.jobs]) / H == pytest.approx(5.0, rel=0.1)
    assert sum(gpu_mix(0.3)[s] for s in LARGE_SIZES) == pytest.approx(0.3)


def test_fitted_trace_shapes_of_the_second_pass():
    """Off, the draws are the fitted workload's; a length mixture draws its share of short jobs at
    its median; a size exponent scales each job's median by (gpus / 8) ** exponent (same z)."""
    base = fitted_trace("batch", jobs=2000, seed=1, median_h=100.0, sigma=0.5)
    assert fitted_trace("batch", jobs=2000, seed=1, median_h=100.0, sigma=0.5, short_median_h=3.0).jobs == base.jobs
    mix = fitted_trace("batch", jobs=2000, seed=1, median_h=100.0, sigma=0.5, short_share=0.6, short_median_h=2.0,
                       short_sigma=0.5)
    d = np.array([j.duration for j in mix.jobs]) / H
    assert [j.gpus for j in mix.jobs] == [j.gpus for j in base.jobs]
    assert np.mean(d < 15) == pytest.approx(0.6, abs=0.04) and np.median(d[d < 15]) == pytest.approx(2.0, rel=0.1)
    a = fitted_trace("batch", jobs=200, seed=2, sigma=1.0)
    b = fitted_trace("batch", jobs=200, seed=2, sigma=1.0, size_exponent=1.0)
    c = fitted_trace("batch", jobs=200, seed=2, sigma=1.0, size_exponent=-1.0)
    for x, y, z in zip(a.jobs, b.jobs, c.jobs, strict=True):
        if min(y.duration, z.duration) > 60.0:
            assert y.duration / z.duration == pytest.approx((x.gpus / 8) ** 2, rel=1e-6)


@pytest.mark.parametrize("kw, field", [({"share_large": 1.5}, "share_large"), ({"median_h": 0.0}, "median_h"),
                                       ({"sigma": -1.0}, "sigma"), ({"load": 0.0}, "load"),
                                       ({"short_share": 2.0}, "short_share"), ({"size_exponent": 9.0}, "size_exponent")])
def test_fitted_trace_bad_input_names_the_field(kw, field):
    with pytest.raises(InstanceError, match=field):
        fitted_trace("poisson", **kw)


def test_random_placement_is_seeded_and_takes_free_gpus_only():
    """``placement="random"``: the same seed draws the same GPUs, another seed other GPUs; every
    log passes replay_check (no GPU used twice); lowest-id placement takes GPUs 0-3 first."""
    cluster = Cluster.uniform(racks=2, machines=2, gpus_per_machine=8)
    jobs = [Job(f"j{i}", 0.0, 4, (i + 1) * H) for i in range(6)]
    trace = _trace(jobs)

    def starts(seed, placement):
        res = simulate(trace, cluster, make_policy("gandiva", migration="none", placement=placement),
                       perf=IdealPerf(), seed=seed)
        assert replay_check(trace, cluster, res.log, perf=IdealPerf()) == []
        return [(r.job, tuple(r.gpus)) for r in res.log if r.event == "start"]

    assert starts(1, "random") == starts(1, "random") != starts(2, "random")
    assert dict(starts(0, "lowest"))["j0"] == (0, 1, 2, 3)
    with pytest.raises(InstanceError, match="placement"):
        make_policy("gandiva", placement="scattered")
