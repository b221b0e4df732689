"""CASSINI as a plug-in of simulator policies: shifts and ranking inside the engine's link model."""

import numpy as np
import pytest

from placement.cassini.catalogue import CATALOGUE, profile_of
from placement.sim.cassini_workload import poisson_trace
from placement.sim.cluster import Cluster
from placement.sim.engine import simulate
from placement.sim.link_check import link_factor_check
from placement.sim.link_metrics import iteration_summary
from placement.sim.links import LinkSharing
from placement.sim.perf import IdealPerf
from placement.sim.policies import make_policy
from placement.sim.replay import replay_check
from placement.sim.trace import Job, Trace

NET = {"racks": 3, "servers_per_rack": 2, "gpus_per_server": 1, "server_capacity": 50, "oversubscription": 2}
# VGG16: a Down phase, then an Up phase of UP ms at BW Gbps (catalogue); two in phase on a
# 50 Gbps uplink share it 25/25 (tests/sim/test_links.py)
IDEAL = CATALOGUE["VGG16"][1]
UP, BW = (lambda p: (p.phases[1][0], p.phases[1][1]))(profile_of("VGG16", "x"))
SHARED = IDEAL - UP + UP * BW / 25


def _cluster(net=NET):
    return Cluster.uniform(racks=net["racks"], machines=net["servers_per_rack"], gpus_per_machine=1).with_network(net)


def _run(policy, trace, cluster, **opts):
    res = simulate(trace, cluster, make_policy(policy, **opts), perf=IdealPerf(), seed=3)
    checks = [link_factor_check(LinkSharing(cluster))] if cluster.network else []
    msgs = replay_check(trace, cluster, res.log, perf=IdealPerf(), checks=checks)
    assert msgs == []
    return res


def _finish(res):
    return {r.job: r.time for r in res.log if r.event == "finish"}


@pytest.mark.parametrize("base", ["themis", "tiresias", "dally"])
def test_shifts_remove_the_slowdown_of_two_jobs_that_must_share_an_uplink(base):
    # two 3-GPU jobs on 3 racks of 2: whatever the placement, both cross one rack's uplink;
    # started together (same phase) they stretch; CASSINI's shifts put them out of phase
    trace = Trace("t", (Job("a", 0.0, 3, 100.0, model="VGG16"), Job("b", 0.0, 3, 100.0, model="VGG16")))
    cluster = _cluster()
    plain = _finish(_run(base, trace, cluster))
    plugged = _finish(_run(f"{base}+cassini", trace, cluster))
    assert plain["a"] == pytest.approx(100.0 * SHARED / CATALOGUE["VGG16"][1], rel=0.01)
    assert plugged == pytest.approx({"a": 100.0, "b": 100.0})


def test_without_a_network_the_plugin_passes_the_base_through():
    trace = poisson_trace(1, hours=0.15)
    cluster = Cluster.uniform(racks=12, machines=2, gpus_per_machine=1)
    one, two = _run("themis", trace, cluster), _run("themis+cassini", trace, cluster)
    assert [r for r in one.log] == [r for r in two.log]


@pytest.mark.parametrize("base", ["themis", "tiresias", "dally"])
def test_plugin_on_the_poisson_trace_is_valid_and_not_slower(base):
    cluster = Cluster.uniform(racks=12, machines=2, gpus_per_machine=1).with_network(
        {"racks": 12, "servers_per_rack": 2, "server_capacity": 50, "oversubscription": 2})
    trace = poisson_trace(2, hours=0.15)
    th, cas = _run(base, trace, cluster), _run(f"{base}+cassini", trace, cluster)
    a, b = iteration_summary(trace, th.log), iteration_summary(trace, cas.log)
    assert b["iteration_ms_mean"] <= a["iteration_ms_mean"] * 1.001
    st = cas.policy_stats["cassini"]
    assert st["rankings"] > 0 and st["candidates"] >= st["rankings"]
    again = _run(f"{base}+cassini", trace, cluster)
    assert list(again.log) == list(cas.log)


def test_base_options_stay_settable():
    from placement.app.policy_data import check_policy_options
    from placement.errors import InstanceError

    assert check_policy_options("themis+cassini", {"lease": 60, "candidates": 4}) == {"lease": 60.0, "candidates": 4}
    with pytest.raises(InstanceError, match="candidates"):
        check_policy_options("themis+cassini", {"candidates": 0})
    from placement.app.policy_data import build_policy

    with pytest.raises(InstanceError, match="precision"):
        build_policy("themis+cassini", None, precision=7)


def test_cli_generates_the_testbed_trace_and_simulates_themis_cassini(tmp_path, capsys):
    import json

    from placement.app.cli import main
    from placement.sim.instance import load_instance

    path = tmp_path / "c.json"
    assert main(["generate", "trace", "--kind", "cassini", "--seed", "5", "-o", str(path)]) == 0
    inst = load_instance(json.loads(path.read_text()))
    assert [(j.id, j.gpus, j.duration, j.model) for j in inst.trace.jobs] == \
        [(j.id, j.gpus, j.duration, j.model) for j in poisson_trace(5).jobs]
    assert inst.cluster.network is not None and inst.cluster.n_gpus == 24
    out = tmp_path / "run"
    assert main(["simulate", str(path), "--policy", "themis+cassini", "--hours", "0.5", "-o", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["replay_ok"] and summary["metrics"]["iteration_ms_mean"] > 0
    assert summary["policy_stats"]["cassini"]["rankings"] > 0
    capsys.readouterr()


def test_goodput_factor_is_logged_and_recomputed_by_the_link_check():
    # the same in-phase pair on a cluster whose network delivers 0.88 of a shared link: slower
    # than max-min; the check recomputes the factor (and a max-min check rejects the log)
    from placement.cassini.fluid import SECTION_2_2_GOODPUT

    trace = Trace("t", (Job("a", 0.0, 3, 100.0, model="VGG16"), Job("b", 0.0, 3, 100.0, model="VGG16")))
    lossy = _cluster({**NET, "goodput": SECTION_2_2_GOODPUT})
    res = _run("themis", trace, lossy)
    # VGG16's Up phase at BW Gbps: together 2 BW > 50, both get 0.88 * 25 = 22 Gbps
    assert _finish(res)["a"] == pytest.approx(100.0 * (IDEAL - UP + UP * BW / 22) / IDEAL, rel=0.01)
    plain = replay_check(trace, lossy, res.log, perf=IdealPerf(), checks=[link_factor_check(LinkSharing(_cluster()))])
    assert plain and all(m.startswith("link: job") for m in plain)


def test_time_shift_adjustments_follow_the_trigger_and_vanish_once_shifted():
    from placement.sim.link_metrics import shift_adjustments
    from placement.sim.links import drift_adjustments

    ends = 106.0 * np.arange(1, 31)                  # every iteration 6% over a 100 ms ideal
    assert drift_adjustments(0.0, ends, 100.0) == pytest.approx(30 / ends[-1] * 1000)
    ends2 = 102.0 * np.arange(1, 31)                 # 2% over: the deviation passes 5% every third
    assert drift_adjustments(0.0, ends2, 100.0) == pytest.approx(10 / ends2[-1] * 1000)
    assert drift_adjustments(0.0, ends, 100.0, grid=106.0) == 0.0   # on its own rhythm: no drift
    trace = Trace("t", (Job("a", 0.0, 3, 100.0, model="VGG16"), Job("b", 0.0, 3, 100.0, model="VGG16")))
    cluster = _cluster()
    links = LinkSharing(cluster)
    th = shift_adjustments(trace, _run("themis", trace, cluster).log, links)
    cas = shift_adjustments(trace, _run("themis+cassini", trace, cluster).log, links)
    # in phase, every iteration of both is BW/25 x longer in its Up phase: one adjustment each
    assert th["per_minute"] == pytest.approx(2 * 60_000 / SHARED, rel=0.02) and np.isnan(th["per_job_minute"])
    assert cas["total"] == 0.0 and cas["per_job_minute"] == 0.0


def test_fig17_snapshot_count_and_realignments_of_running_jobs():
    from dataclasses import replace

    from placement.app.reproduce.cassini_snapshots import adjustments
    from placement.cassini.catalogue import profile_of
    from placement.cassini.topology import tree_topology
    from placement.sim.link_metrics import shift_adjustments
    from placement.sim.log import EventLog, LogRow

    topo = replace(tree_topology(pods=1, tors_per_pod=2, servers_per_tor=2, server_capacity=50.0,
                                 oversubscription=2.0), shared_goodput=1.0)
    p = profile_of("VGG16", "x")
    servers = {"a": ("s0", "s2"), "b": ("s1", "s3")}
    # in phase: every iteration's Up phase shares the 50 Gbps uplink (BW -> 25 Gbps), each iteration
    # drifts UP * (BW/25 - 1) ms > 5% of IDEAL off the agent's plan: it waits for the next planned
    # start, so each iteration takes two ideal ones and counts one adjustment
    assert SHARED - IDEAL > 0.05 * IDEAL and SHARED < 2 * IDEAL
    inphase = adjustments(topo, {j: (p, servers[j], 0.0) for j in servers}, seconds=20.0)
    assert inphase == pytest.approx({"a": 60_000 / (2 * IDEAL), "b": 60_000 / (2 * IDEAL)}, rel=0.02)
    # a Down phase apart the Up phases interleave: no drift, no adjustment
    assert adjustments(topo, {"a": (p, servers["a"], 0.0), "b": (p, servers["b"], IDEAL - UP)}, 20.0) == \
        {"a": 0.0, "b": 0.0}
    # re-alignments: a shift of a job already running counts, a shift at its start does not
    trace = Trace("t", (Job("a", 0.0, 1, 100.0, model="VGG16"), Job("b", 0.0, 1, 100.0, model="VGG16")))
    log = EventLog([LogRow(0.0, "submit", "a"), LogRow(0.0, "submit", "b"), LogRow(0.0, "start", "a", (0,)),
                    LogRow(0.0, "shift", "a", (0,), 0.0, "phase=0.0"), LogRow(10.0, "start", "b", (1,), 0.0),
                    LogRow(10.0, "shift", "b", (1,), 0.0, "phase=3.0"),
                    LogRow(10.0, "shift", "a", (0,), 10.0, "phase=7.0"),
                    LogRow(100.0, "finish", "a", (0,), 100.0), LogRow(110.0, "finish", "b", (1,), 100.0)])
    adj = shift_adjustments(trace, log, LinkSharing(_cluster()))
    assert adj["realign_total"] == 1.0 and adj["starts_per_minute"] == pytest.approx(2 / (110 / 60))
