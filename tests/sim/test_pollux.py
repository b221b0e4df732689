"""Pollux (solvers/online/pollux.py) and goodput jobs (placement/sim/goodput.py): the hand scene
(optimizer's split = brute force), replay + goodput checks on a short run, same seed same log."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from placement.instances.traces import pollux_dir, pollux_workload_path
from placement.solvers.online.pollux import Pollux, best_counts, power_cost

from placement.errors import InstanceError
from placement.sim.cluster import Cluster
from placement.sim.engine import simulate
from placement.sim.goodput import (
    Agent,
    GoodputFunction,
    GoodputPerf,
    PerfParams,
    SpeedupTable,
    goodput_check,
    load_applications,
    true_rate,
)
from placement.sim.log import LogRow
from placement.sim.pollux_workload import load_pollux_workload, pollux_cluster
from placement.sim.replay import replay_check
from placement.sim.trace import Job, Trace

APPS = load_applications(pollux_dir() / "traces")


def _agent(var: float) -> Agent:
    """A cifar10 agent with a fixed fitted model and gradient statistics (sqr = 1, var)."""
    a = Agent(APPS["cifar10"], None)
    a.params = PerfParams(0.01, 0.0004, 0.01, 0.0005, 0.005, 0.0005, 1.5)
    a.grad = (1.0, var)
    a.profile[(2, 8, 128)] = (0.1, 0.05)     # max_profiled_replicas 8: up to 16 GPUs
    return a


def test_hand_scene_split_equals_brute_force():
    # Two jobs, 8 GPUs on 2 nodes of 4: job "wide" has a large gradient noise scale (var/sqr = 50,
    # large batches stay efficient), job "narrow" a small one (0.5). The power mean (p = -1) of
    # their speedups, each over a fair share of 4 GPUs on one node, decides the split.
    agents = {"wide": _agent(50.0), "narrow": _agent(0.5)}
    app = APPS["cifar10"]
    gpus, per_node = 8, 4
    costs = []
    for a in agents.values():
        r = np.arange(gpus + 1)
        tab = SpeedupTable(a, gpus).table(np.ceil(r / per_node).astype(int), (1, 4))
        costs.append(power_cost(tab * 2 / 8, -1.0))
    counts, _ = best_counts(costs, gpus)

    # brute force, computed independently: each split's goodputs from GoodputFunction scalars
    def speedup(a, k):
        if k == 0:
            return 0.0
        fn = GoodputFunction(a.params, a.grad, app.init_batch_size)
        rng = (app.min_local_bsz, app.max_local_bsz)
        g = fn.optimize(math.ceil(k / per_node), k, app.max_batch_size, rng)[0]
        return float(g) / float(fn.optimize(1, 4, app.max_batch_size, rng)[0])

    best, best_split = -math.inf, None
    for k1, k2 in itertools.product(range(gpus + 1), repeat=2):
        if k1 + k2 > gpus:
            continue
        xs = [speedup(agents["wide"], k1) * 2 / 8 + 1e-3, speedup(agents["narrow"], k2) * 2 / 8 + 1e-3]
        mean = 1.0 / (sum(1.0 / x for x in xs) / 2)
        if mean > best + 1e-12:
            best, best_split = mean, [k1, k2]
    assert counts == best_split
    assert counts[0] > counts[1]          # the large noise scale gets more GPUs
    assert sum(counts) == gpus


def test_best_counts_matches_enumeration_on_random_costs():
    rng = np.random.default_rng(7)
    for _ in range(20):
        costs = [np.sort(rng.random(rng.integers(2, 6)))[::-1] for _ in range(3)]
        counts, total = best_counts(costs, 6)
        brute = min(sum(c[k] for c, k in zip(costs, ks, strict=True))
                    for ks in itertools.product(*(range(len(c)) for c in costs)) if sum(ks) <= 6)
        assert total == pytest.approx(brute)
        assert sum(counts) <= 6


def _short_trace():
    # bert (2 epochs) and ncf (10 epochs): short jobs, a few minutes of simulated time each
    jobs = [Job("bert-0", 0.0, 2, APPS["bert"].total, model="bert"),
            Job("ncf-1", 30.0, 1, APPS["ncf"].total, model="ncf"),
            Job("bert-2", 200.0, 4, APPS["bert"].total, model="bert")]
    return Trace("pollux-short", tuple(jobs))


def test_pollux_run_passes_replay_and_goodput_check_and_is_deterministic():
    trace, cluster = _short_trace(), Cluster.uniform(racks=1, machines=2, gpus_per_machine=4)
    logs = []
    for _ in range(2):
        perf = GoodputPerf(APPS)
        res = simulate(trace, cluster, Pollux(), perf=perf, seed=3)
        assert not res.unfinished
        assert replay_check(trace, cluster, res.log, perf=perf, checks=[goodput_check(perf, cluster)]) == []
        logs.append(list(res.log))
    assert logs[0] == logs[1]
    rows = logs[0]
    assert any(r.event == "rate" for r in rows)           # epoch boundaries re-derive the rate
    starts = [r for r in rows if r.event == "start"]
    assert all("delay=30.0" in r.extra for r in starts)
    # every start and rate row re-derived by hand from the measurements
    r = next(r for r in rows if r.event == "rate")
    kv = dict(p.split("=", 1) for p in r.extra.split())
    place = tuple(int(x) for x in kv["placement"].split("-"))
    want = true_rate(APPS[trace.jobs[0].model if r.job.startswith("bert") else "ncf"], place,
                     int(kv["atomic"]), int(kv["accum"]), int(kv["epoch"]))
    assert float(kv["rate"]) == pytest.approx(want, rel=1e-12)


def test_replay_catches_tampered_rate_and_missing_delay():
    trace, cluster = _short_trace(), Cluster.uniform(racks=1, machines=2, gpus_per_machine=4)
    perf = GoodputPerf(APPS)
    rows = list(simulate(trace, cluster, Pollux(), perf=perf).log)
    i = next(i for i, r in enumerate(rows) if r.event == "rate")
    kv = dict(p.split("=", 1) for p in rows[i].extra.split())
    bad = rows[i].extra.replace(f"rate={kv['rate']}", f"rate={float(kv['rate']) * 1.5!r}")
    tampered = rows[:i] + [LogRow(*rows[i][:-1], bad)] + rows[i + 1:]
    msgs = replay_check(trace, cluster, tampered, perf=perf, checks=[goodput_check(perf, cluster)])
    assert any(m.startswith("goodput:") and "logs rate" in m for m in msgs)
    assert any(m.startswith(("early", "late", "work")) for m in msgs)   # the progress no longer adds up
    j = next(i for i, r in enumerate(rows) if r.event == "start")
    nodelay = rows[:j] + [LogRow(*rows[j][:-1], rows[j].extra.replace("delay=30.0", "delay=0.0"))] + rows[j + 1:]
    msgs = replay_check(trace, cluster, nodelay, perf=perf, checks=[goodput_check(perf, cluster)])
    assert any("restart delay" in m for m in msgs)


def test_fixed_batch_jobs_run_under_tiresias_and_pass_the_checks():
    from placement.solvers.online.tiresias import Tiresias

    trace, cluster = _short_trace(), Cluster.uniform(racks=1, machines=2, gpus_per_machine=4)
    perf = GoodputPerf(APPS, batch={"bert-0": 24, "ncf-1": 32768, "bert-2": 48})
    res = simulate(trace, cluster, Tiresias(), perf=perf)
    assert not res.unfinished
    assert replay_check(trace, cluster, res.log, perf=perf, checks=[goodput_check(perf, cluster)]) == []
    bszs = {r.job: int(dict(p.split("=", 1) for p in r.extra.split())["bsz"]) for r in res.log if r.event == "start"}
    assert bszs["bert-2"] == 48 and bszs["bert-0"] == 24


def test_workload_loader_and_bad_rows(tmp_path):
    trace, batch = load_pollux_workload(pollux_workload_path("pollux-workload-6"), APPS)
    assert len(trace.jobs) == 160 and batch["cifar10-0"] == 2048
    assert pollux_cluster().n_gpus == 64
    assert pollux_workload_path("pollux-workload-9") is None
    assert pollux_workload_path("pollux-workload-3-x2.0").name == "workload-3.csv"
    p = tmp_path / "w.csv"
    p.write_text("name,time,application,num_replicas,batch_size\nx,0,resnet,1,128\n")
    with pytest.raises(InstanceError, match="application"):
        load_pollux_workload(p, APPS)


def test_pollux_needs_goodput_perf():
    trace = Trace("t", (Job("a", 0.0, 1, 10.0),))
    with pytest.raises(InstanceError, match="goodput"):
        simulate(trace, Cluster.uniform(racks=1, machines=1, gpus_per_machine=4), Pollux())


def test_cassini_catalogue_goodput_inputs_are_drawn_and_usable():
    from placement.cassini.catalogue import CATALOGUE, GOODPUT

    assert set(GOODPUT) == set(CATALOGUE) and len(GOODPUT) == 13
    for name, g in GOODPUT.items():
        assert g["source"] == "drawn" and g["analogue"] in APPS
        sqr = 1.0
        var = g["noise_scale"][0] * sqr / g["init_batch_size"]
        fn = GoodputFunction(g["perf_params"], (sqr, var), g["init_batch_size"])
        good, atomic, _ = fn.optimize(1, 4, g["max_batch_size"], g["local_bsz"])
        assert good > 0 and g["local_bsz"][0] <= atomic <= g["local_bsz"][1], name


def test_bench_section_rows_and_quick_skip(tmp_path):
    from placement.app.bench.pollux import _row, bench_sections

    assert bench_sections(tmp_path, quick=True, scale=False, seed=0, progress=None) == []
    run = {"workload": 6, "policy": "pollux", "ours": {"a": 110.0, "b": 330.0}, "theirs": {"a": 100.0, "b": 300.0},
           "wall_s": 1.0, "violations": [], "unfinished": 0, "restarts": 3}
    row = _row(run)
    assert row["mean_jct_ours_s"] == 220 and row["mean_jct_theirs_s"] == 200 and row["error_%"] == 10.0


def test_pollux_workload_by_name_runs_on_goodput_with_the_goodput_check():
    # `placement simulate pollux-workload-6 --policy pollux`: the name loads the authors' workload on
    # their 16 x 4 cluster with perf "goodput"; the run's replay includes goodput_check
    from placement.app.run import Run, policy_checks, sim_instance
    from placement.app.run import simulate as run_sim
    from placement.sim.instance import SimInstance

    inst, fmt = sim_instance("pollux-workload-6")
    assert (fmt, inst.perf, inst.cluster.n_gpus, inst.cluster.n_machines, len(inst.trace.jobs)) == (
        "pollux", "goodput", 64, 16, 160)
    assert {j.model for j in inst.trace.jobs} <= set(APPS)
    short = SimInstance(_short_trace(), Cluster.uniform(racks=1, machines=2, gpus_per_machine=4), "goodput")
    run = run_sim(short, policy="pollux", seed=1)
    assert isinstance(run, Run) and run.violations == [] and run.metrics["finished"] == 3
    rows = list(run.result.log)
    i = next(i for i, r in enumerate(rows) if r.event == "rate")
    kv = dict(p.split("=", 1) for p in rows[i].extra.split())
    bad = rows[i].extra.replace(f"rate={kv['rate']}", f"rate={float(kv['rate']) * 0.5!r}")
    tampered = rows[:i] + [LogRow(*rows[i][:-1], bad)] + rows[i + 1:]
    checks = policy_checks("pollux", None, short.cluster, perf=short.perf_model())   # the run's own checks
    assert any(m.startswith("goodput:") for c in checks for m in c(short.trace, short.cluster, tampered))


def test_fixed_models_run_on_exactly_their_trace_count_or_wait():
    """``fixed_models`` (CASSINI's model-parallel DLRM, §5.2): the NCF job, which Pollux's own rule
    holds at one GPU, starts only on its trace's 3 GPUs (three single-GPU servers, so across
    links); the log passes the replay and goodput checks; without the option it runs on one."""
    jobs = (Job("ncf-0", 0.0, 3, APPS["ncf"].total, model="ncf"),
            Job("bert-1", 0.0, 2, APPS["bert"].total, model="bert"))
    trace, cluster = Trace("fixed", jobs), Cluster.uniform(racks=1, machines=4, gpus_per_machine=1)
    sizes = {}
    for fixed in ((), ("ncf",)):
        perf = GoodputPerf(APPS)
        res = simulate(trace, cluster, Pollux(fixed_models=fixed), perf=perf, seed=0)
        assert not res.unfinished
        assert replay_check(trace, cluster, res.log, perf=perf, checks=[goodput_check(perf, cluster)]) == []
        sizes[fixed] = {len(r.gpus) for r in res.log if r.event == "start" and r.job == "ncf-0"}
    assert sizes[()] == {1} and sizes[("ncf",)] == {3}
