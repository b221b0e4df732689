"""§5.1's other baselines: ``random`` (workers placed uniformly at random, seeded) and
``pollux+cassini`` (Pollux's rounds with CASSINI's ranking and shifts, Po+CASSINI)."""

from __future__ import annotations

import numpy as np
import pytest
from placement.instances.traces import pollux_dir

from placement.cassini.catalogue import GOODPUT_ANALOGUE
from placement.sim.cluster import Cluster
from placement.sim.engine import simulate
from placement.sim.goodput import GoodputPerf, goodput_check, load_applications
from placement.sim.link_check import link_factor_check
from placement.sim.links import LinkSharing
from placement.sim.perf import IdealPerf
from placement.sim.policies import make_policy
from placement.sim.replay import replay_check
from placement.sim.trace import Job, Trace

NET = {"racks": 3, "servers_per_rack": 2, "gpus_per_server": 1, "server_capacity": 50, "oversubscription": 2}


def _net(racks=3, per=2, gpus=1):
    net = {**NET, "racks": racks, "servers_per_rack": per, "gpus_per_server": gpus}
    return Cluster.uniform(racks=racks, machines=per, gpus_per_machine=gpus).with_network(net)


def _starts(log):
    return [(r.job, tuple(r.gpus)) for r in log if r.event == "start"]


def test_random_places_uniformly_seeded_and_in_fifo_order():
    cluster = _net(racks=4, per=4)
    jobs = tuple(Job(f"j{i}", float(i), 2, 50.0, model="VGG16") for i in range(6))
    trace = Trace("t", jobs)
    runs = {}
    for seed in (1, 1, 2):
        res = simulate(trace, cluster, make_policy("random"), perf=IdealPerf(), seed=seed)
        assert replay_check(trace, cluster, res.log, perf=IdealPerf(), checks=[link_factor_check(LinkSharing(cluster))]) == []
        runs.setdefault(seed, []).append(_starts(res.log))
    assert runs[1][0] == runs[1][1] and runs[1][0] != runs[2][0]          # same seed, same log
    assert [j for j, _ in runs[1][0]] == [j.id for j in jobs]             # submit order
    # uniform: over many draws each GPU is picked about equally often, and a 2-GPU job lands on
    # two racks with probability 1 - 3/15 = 0.8 (16 GPUs, 4 per rack) -- first-fit never does
    pol = make_policy("random")
    hits, cross = np.zeros(16), 0
    big = Trace("u", tuple(Job(f"u{i}", 0.0, 2, 1.0) for i in range(1)))
    for seed in range(400):
        res = simulate(big, Cluster.uniform(racks=4, machines=4, gpus_per_machine=1), pol, perf=IdealPerf(), seed=seed)
        g = _starts(res.log)[0][1]
        hits[list(g)] += 1
        cross += len({x // 4 for x in g}) == 2
    assert cross / 400 == pytest.approx(0.8, abs=0.06)
    assert hits.min() > 0.5 * hits.mean()


def test_random_waits_for_enough_free_gpus():
    cluster = Cluster.uniform(racks=1, machines=2, gpus_per_machine=2)
    trace = Trace("t", (Job("a", 0.0, 3, 10.0), Job("b", 0.0, 2, 10.0), Job("c", 0.0, 1, 10.0)))
    res = simulate(trace, cluster, make_policy("random"), perf=IdealPerf(), seed=0)
    start = {r.job: r.time for r in res.log if r.event == "start"}
    assert start["a"] == 0.0 and start["b"] == 10.0 and start["c"] == 10.0   # strict FIFO: b blocks c
    res = simulate(trace, cluster, make_policy("random", backfill=True), perf=IdealPerf(), seed=0)
    assert {r.job: r.time for r in res.log if r.event == "start"}["c"] == 0.0


def _analogue_perf():
    apps = load_applications(pollux_dir() / "traces")
    return apps, GoodputPerf({m: apps[a] for m, a in GOODPUT_ANALOGUE.items()})


def test_pollux_cassini_without_a_network_is_pollux():
    apps, _ = _analogue_perf()
    jobs = (Job("a", 0.0, 2, apps["bert"].total, model="RoBERTa"), Job("c", 30.0, 1, apps["ncf"].total, model="DLRM"))
    trace, cluster = Trace("t", jobs), Cluster.uniform(racks=1, machines=2, gpus_per_machine=4)
    logs = []
    for name in ("pollux", "pollux+cassini"):
        _, perf = _analogue_perf()
        res = simulate(trace, cluster, make_policy(name), perf=perf, seed=3)
        assert replay_check(trace, cluster, res.log, perf=perf, checks=[goodput_check(perf, cluster)]) == []
        logs.append(list(res.log))
    assert logs[0] == logs[1]


def test_pollux_cassini_keeps_pollux_counts_and_passes_both_checks():
    # catalogue models on the Pollux authors' analogue applications (catalogue GOODPUT_ANALOGUE)
    apps, _ = _analogue_perf()
    jobs = (Job("a", 0.0, 2, apps["bert"].total, model="RoBERTa"), Job("b", 0.0, 2, apps["bert"].total, model="BERT"),
            Job("c", 0.0, 1, apps["ncf"].total, model="DLRM"))
    trace = Trace("t", jobs)
    cluster = _net()
    logs = {}
    for name in ("pollux", "pollux+cassini"):
        _, perf = _analogue_perf()
        res = simulate(trace, cluster, make_policy(name), perf=perf, seed=3)
        assert not res.unfinished
        checks = [goodput_check(perf, cluster), link_factor_check(LinkSharing(cluster))]
        assert replay_check(trace, cluster, res.log, perf=perf, checks=checks) == []
        logs[name] = res
    first = min(r.time for r in logs["pollux"].log if r.event == "start")
    counts = {n: sorted((j, len(g)) for j, g in _starts(r.log) if next(x.time for x in r.log if x.job == j
                                                                      and x.event == "start") == first)
              for n, r in logs.items()}
    assert counts["pollux"] == counts["pollux+cassini"]          # CASSINI respects Pollux's worker counts
    assert logs["pollux+cassini"].policy_stats["cassini"]["rankings"] >= 1
