"""Dally in the paper's regime: the workload drawn from the paper's statistics and Philly's rows
scaled; Gandiva's introspective migration (hand schedule: tick, profiled gain, checkpoint cost);
Tiresias's strict consolidation (hand schedule: wait instead of preempting)."""

from __future__ import annotations

import numpy as np
import pytest
from placement.solvers.online.gandiva import checkpoint_gb

from placement.app.shipped import philly_rows
from placement.errors import InstanceError
from placement.sim import Cluster, Job, Trace, replay_check, simulate
from placement.sim.dally_workload import (
    FIT,
    fitted_trace,
    offered_load,
    paper_trace,
    philly_scaled,
)
from placement.sim.perf import IdealPerf
from placement.sim.policies import make_policy

H = 3600.0


def _trace(jobs):
    return Trace(name="hand", jobs=tuple(sorted(jobs, key=lambda j: (j.submit, j.id))))


def test_paper_trace_is_the_fitted_workload_and_is_seeded():
    """The command line's paper regime draws the workload fitted on the baselines (no number of
    Dally's own columns): the same jobs as fitted_trace, log-normal at FIT's median and sigma."""
    b = paper_trace("batch", jobs=400, seed=3)
    assert b == paper_trace("batch", jobs=400, seed=3) and b != paper_trace("batch", jobs=400, seed=4)
    assert b.jobs == fitted_trace("batch", jobs=400, seed=3).jobs and all(j.submit == 0 for j in b.jobs)
    d = np.array([j.duration for j in b.jobs])
    # the log-normal's median and sigma, within sampling error of 400 draws (60 s floor aside)
    assert np.median(d) / H == pytest.approx(FIT["median_h"], rel=0.3)
    assert np.std(np.log(d[d > 60.0])) == pytest.approx(FIT["sigma"], rel=0.15)
    assert {j.gpus for j in b.jobs} <= {1, 2, 4, 8, 16, 32, 64}


def test_poisson_arrivals_offer_the_load_asked():
    """The arrival rate is set from the drawn jobs' mean work: over the submission window the
    offered load is the load asked, up to the Poisson draw's spread."""
    for load in (0.5, 2.0):
        p = paper_trace("poisson", jobs=400, seed=1, load=load, gpus=512)
        subs = [j.submit for j in p.jobs]
        assert offered_load(p.jobs, 512, max(subs) - min(subs)) == pytest.approx(load, rel=0.15)


def test_philly_scaled_multiplies_durations_and_keeps_the_sample():
    one = philly_scaled(philly_rows(2), "batch", jobs=50, seed=2, scale=1.0)
    ten = philly_scaled(philly_rows(2), "batch", jobs=50, seed=2, scale=10.0)
    assert [j.id for j in one.jobs] == [j.id for j in ten.jobs]
    assert [10 * j.duration for j in one.jobs] == pytest.approx([j.duration for j in ten.jobs], rel=1e-9)
    long = philly_scaled(philly_rows(2), "batch", jobs=50, seed=2, scale=1.0, min_hours=10.0)
    assert min(j.duration for j in long.jobs) >= 10 * H


@pytest.mark.parametrize("call, field", [
    (lambda: paper_trace("weekly"), "kind"), (lambda: paper_trace("batch", jobs=0), "jobs"),
    (lambda: paper_trace("poisson", load=-1.0), "load"), (lambda: philly_scaled(philly_rows(2), "batch", scale=0), "scale"),
    (lambda: philly_scaled(philly_rows(2), "batch", jobs=10**6, seed=2), "jobs"),
])
def test_bad_workload_input_names_the_field(call, field):
    with pytest.raises(InstanceError) as err:
        call()
    assert err.value.field == field


def test_introspective_gandiva_migrates_at_the_tick_when_the_gain_exceeds_the_checkpoint_cost():
    """3 machines of 4 GPUs (one rack). a takes GPUs 0-2; c (4 GPUs, ResNet18) starts at 1 s on the
    lowest free ids 3-6 (two machines, machine 2 wholly free). The next introspection tick (60 s)
    profiles the gain: remaining x (2.16 - 1.07) s, far above the cost 60 s + 2 x 0.14 GB / 1 GB/s,
    so c stops at 60 s and restarts on machine 2 after exactly that cost. The eager rule moves c
    only when GPUs are released (a's end at 1.01 h); with a 1 h interval the tick is at 3,600 s."""
    cluster = Cluster.uniform(racks=1, machines=3, gpus_per_machine=4)
    trace = _trace([Job("a", 0.0, 3, 1 * H, model="VGG11"), Job("c", 1.0, 4, 10 * H, model="ResNet18")])
    cost = 60.0 + 2 * 11.7e6 * 12 / 1e9
    assert checkpoint_gb("ResNet18") == pytest.approx(11.7e6 * 12 / 1e9)
    for opts, stop in (({}, 60.0), ({"introspection_interval": H}, H), ({"migration": "eager"}, 1.01 * H)):
        pol = make_policy("gandiva", **opts)
        res = simulate(trace, cluster, pol)
        assert replay_check(trace, cluster, res.log) == []
        starts = [r for r in res.log if r.event == "start" and r.job == "c"]
        assert starts[0].gpus == (3, 4, 5, 6)
        assert [(r.job, r.time) for r in res.log if r.event == "preempt"] == [("c", pytest.approx(stop))]
        assert starts[1].gpus == (8, 9, 10, 11)
        want = stop + (60.0 if opts.get("migration") == "eager" else cost)
        assert starts[1].time == pytest.approx(want), opts


def test_introspective_gandiva_declines_a_migration_without_gain():
    """ResNet50's overhead is 12% on a machine and on a rack (Table 1): moving it gains nothing, so
    the introspective form never migrates it, where the eager rule does."""
    cluster = Cluster.uniform(racks=1, machines=3, gpus_per_machine=4)
    trace = _trace([Job("a", 0.0, 3, 1 * H, model="VGG11"), Job("c", 1.0, 4, 10 * H, model="ResNet50")])
    pol = make_policy("gandiva")
    res = simulate(trace, cluster, pol)
    assert [r for r in res.log if r.event == "preempt"] == []
    assert pol.stats()["migrations_declined_by_gain"] >= 1 and pol.stats()["migrations"] == 0
    eager = simulate(trace, cluster, make_policy("gandiva", migration="eager"))
    assert [r.job for r in eager.log if r.event == "preempt"] == ["c"]


def test_strict_consolidation_waits_instead_of_preempting():
    """One rack of 2 machines x 4 GPUs. low (ResNet18, 4 GPUs) and low2 (2 GPUs) run from 0 and use
    machine 0 and half of machine 1; hi (VGG11, high skew, 4 GPUs) arrives at 100 s with more
    attained-service priority (Q0 vs the demoted low jobs, limits 50 GPU-s; low, demoted first,
    leads Q1). By default Tiresias preempts low2 to give hi machine 1 at once; strict
    consolidation lets low2 run and hi waits for a free machine: it starts when low2 ends (1 h),
    on machine 1."""
    cluster = Cluster.uniform(racks=1, machines=2, gpus_per_machine=4)
    trace = _trace([Job("low", 0.0, 4, 10 * H, model="ResNet18"), Job("low2", 0.0, 2, 1 * H, model="ResNet18"),
                    Job("hi", 100.0, 4, 1 * H, model="VGG11")])
    for consolidation, start, preempted in (("preempt", 100.0, ["low2"]), ("wait", H, [])):
        res = simulate(trace, cluster, make_policy("tiresias", queue_limits=(50.0,), consolidation=consolidation),
                       perf=IdealPerf())
        assert replay_check(trace, cluster, res.log, perf=IdealPerf()) == []
        hi = [r for r in res.log if r.event == "start" and r.job == "hi"][0]
        assert hi.time == pytest.approx(start), consolidation
        assert len({int(cluster.machine[g]) for g in hi.gpus}) == 1
        assert [r.job for r in res.log if r.event == "preempt" and r.time <= start] == preempted, consolidation


def test_strict_consolidation_option_is_checked():
    with pytest.raises(InstanceError) as err:
        make_policy("tiresias", consolidation="sometimes")
    assert err.value.field == "consolidation"
    with pytest.raises(InstanceError) as err:
        make_policy("gandiva", migration="always")
    assert err.value.field == "migration"


def test_cli_generates_the_paper_regime(tmp_path, capsys):
    """`placement generate trace --kind dally-paper-poisson` writes paper_trace's jobs (the
    reproduction's construction) on the cluster's GPUs at --load; misplaced options are one line."""
    import json

    from placement.app.cli import main
    from placement.sim.instance import load_instance

    out = tmp_path / "p.json"
    assert main(["generate", "trace", "--kind", "dally-paper-poisson", "--jobs", "30", "--load", "1.5",
                 "--cluster", "1x1x2x8x8", "--seed", "5", "-o", str(out)]) == 0
    inst = load_instance(json.loads(out.read_text()))
    assert inst.trace.jobs == paper_trace("poisson", jobs=30, seed=5, load=1.5, gpus=128).jobs
    assert inst.cluster.n_gpus == 128 and inst.perf == "dally"
    capsys.readouterr()
    bad = [["--kind", "poisson", "--load", "2"], ["--kind", "dally-paper-batch", "--jobs-per-hour", "3"],
           ["--kind", "dally-paper-poisson", "--load", "0"], ["--kind", "dally-paper-batch", "--jobs", "0"]]
    for k, args in enumerate(bad):
        assert main(["generate", "trace", *args, "-o", str(tmp_path / f"b{k}.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert [e.split(":")[1].strip() for e in err] == ["--load", "--jobs-per-hour", "--load", "--jobs"]
    assert not any((tmp_path / f"b{k}.json").exists() for k in range(len(bad)))
