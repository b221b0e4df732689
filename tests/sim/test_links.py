"""Links shared over time in the engine: rates follow the fluid model, replay recomputes them."""

import pytest

from placement.cassini.catalogue import CATALOGUE, profile_of
from placement.sim.cluster_io import load_cluster_spec
from placement.sim.engine import simulate
from placement.sim.link_check import link_factor_check
from placement.sim.link_metrics import iteration_time_samples
from placement.sim.links import LinkSharing
from placement.sim.log import EventLog, LogRow
from placement.sim.perf import IdealPerf
from placement.sim.policy import Policy, PolicyError, Preempt, Shift, Start, Timer
from placement.sim.replay import replay_check
from placement.sim.trace import Job, Trace

TESTBED = "instances/clusters/cassini-testbed.json"
# VGG16: one Down phase, then one Up phase of UP ms at BW Gbps (catalogue). Two in phase on a
# 50 Gbps uplink share it 25/25: the Up phase stretches to UP * BW / 25 ms and they stay in phase.
IDEAL = CATALOGUE["VGG16"][1]
UP, BW = (lambda p: (p.phases[1][0], p.phases[1][1]))(profile_of("VGG16", "x"))
SHARED = IDEAL - UP + UP * BW / 25


class Scripted(Policy):
    """Starts the jobs on fixed GPUs as they arrive; optional phases and a timed preemption."""

    name = "scripted"

    def __init__(self, gpus, phases=None, preempt_at=None):
        self.gpus, self.phases, self.preempt_at = gpus, phases or {}, preempt_at

    def schedule(self, view, events):
        out = [Start(j.id, self.gpus[j.id]) for j in view.pending if j.id in self.gpus]
        out += [Shift(j, p) for j, p in self.phases.items() if j in {d.job_id for d in out}]
        for e in events:
            if e.kind == "timer" and e.key in view.running:
                out += [Preempt(e.key), Start(e.key, self.gpus[e.key])]   # back at once
        if self.preempt_at and view.now == 0.0:
            out.append(Timer(self.preempt_at[1], self.preempt_at[0]))
        return out


def _run(jobs, gpus, phases=None, cluster=None, **kw):
    cluster = cluster or load_cluster_spec(TESTBED)
    trace = Trace("t", tuple(jobs))
    res = simulate(trace, cluster, Scripted(gpus, phases, kw.pop("preempt_at", None)), perf=IdealPerf(), **kw)
    links = LinkSharing(cluster)
    assert replay_check(trace, cluster, res.log, perf=IdealPerf(), checks=[link_factor_check(links)]) == []
    return res, trace, cluster


def _finish(res, job):
    return next(r.time for r in res.log if r.event == "finish" and r.job == job)


# servers s0, s1 are rack tor0; s2, s3 rack tor1: jobs on (s0, s2) and (s1, s3) share both uplinks
CROSS = {"a": (0, 2), "b": (1, 3)}


def test_job_alone_runs_at_its_profile_rate():
    res, *_ = _run([Job("a", 0.0, 2, 100.0, model="VGG16")], {"a": (0, 2)})
    assert _finish(res, "a") == pytest.approx(100.0)
    assert not [r for r in res.log if r.event == "rate"]


def test_two_jobs_in_phase_stretch_by_the_analytic_factor():
    res, trace, _ = _run([Job("a", 0.0, 2, 100.0, model="VGG16"), Job("b", 0.0, 2, 100.0, model="VGG16")], CROSS)
    f = IDEAL / SHARED
    assert _finish(res, "a") == pytest.approx(100.0 / f, rel=0.01)
    rows = [r for r in res.log if r.event == "rate"]
    assert {r.job for r in rows} == {"a", "b"}
    samples = iteration_time_samples(trace, res.log)
    assert all(it == pytest.approx(SHARED, rel=0.01) for _, it, _ in samples)


def test_opposite_phases_remove_the_slowdown():
    res, *_ = _run([Job("a", 0.0, 2, 100.0, model="VGG16"), Job("b", 0.0, 2, 100.0, model="VGG16")], CROSS,
                   phases={"a": 0.0, "b": IDEAL / 2})
    assert _finish(res, "a") == pytest.approx(100.0, rel=1e-6)
    assert [r.extra for r in res.log if r.event == "shift" and r.job == "b"] == [f"phase={IDEAL / 2!r}"]


def test_rate_returns_when_the_other_job_finishes():
    # b is short: a runs shared until b finishes, then alone (piecewise progress)
    res, *_ = _run([Job("a", 0.0, 2, 100.0, model="VGG16"), Job("b", 0.0, 2, 10.0, model="VGG16")], CROSS)
    f = IDEAL / SHARED
    tb = _finish(res, "b")
    assert tb == pytest.approx(10.0 / f, rel=0.01)
    assert _finish(res, "a") == pytest.approx(tb + (100.0 - tb * f), rel=1e-6)
    assert [r.extra.split()[0] for r in res.log if r.event == "rate" and r.job == "a"][-1] == "factor=1.0"


def test_checkpointed_preemption_keeps_piecewise_work():
    jobs = [Job("a", 0.0, 2, 100.0, model="VGG16"), Job("b", 0.0, 2, 10.0, model="VGG16")]
    res, *_ = _run(jobs, CROSS, preempt_at=("a", 40.0), checkpoint_interval=30.0)
    f = IDEAL / SHARED
    tb = _finish(res, "b")
    kept = next(r.work_done for r in res.log if r.event == "preempt")
    assert kept == pytest.approx(tb * f + (30.0 - tb), rel=1e-6)   # checkpoint at 30 s, after b left


def test_jobs_without_a_profile_or_without_shared_links_keep_rate_one():
    res, *_ = _run([Job("a", 0.0, 2, 100.0, model="not-a-model"), Job("b", 0.0, 2, 100.0, model="VGG16")], CROSS)
    assert _finish(res, "a") == pytest.approx(100.0) and _finish(res, "b") == pytest.approx(100.0)
    res, *_ = _run([Job("a", 0.0, 2, 100.0, model="VGG16"), Job("b", 0.0, 2, 100.0, model="VGG16")],
                   {"a": (0, 1), "b": (2, 3)})   # each inside one rack: no shared link
    assert _finish(res, "b") == pytest.approx(100.0)


def test_replay_catches_a_wrong_factor_and_wrong_work():
    jobs = [Job("a", 0.0, 2, 100.0, model="VGG16"), Job("b", 0.0, 2, 100.0, model="VGG16")]
    res, trace, cluster = _run(jobs, CROSS)
    rows = list(res.log)
    i = next(k for k, r in enumerate(rows) if r.event == "rate")
    bad = rows[:i] + [rows[i]._replace(extra="factor=0.9 rate=0.9")] + rows[i + 1:]
    msgs = replay_check(trace, cluster, EventLog(bad), perf=IdealPerf(),
                        checks=[link_factor_check(LinkSharing(cluster))])
    assert any(m.startswith("link:") for m in msgs) and any(m.startswith("late:") or m.startswith("early:")
                                                           for m in msgs)
    bad = rows[:i] + [rows[i]._replace(work_done=5.0)] + rows[i + 1:]
    assert any(m.startswith("work:") for m in replay_check(trace, cluster, EventLog(bad), perf=IdealPerf()))


def test_shift_needs_a_network_and_a_running_job():
    from placement.sim.cluster import Cluster

    trace = Trace("t", (Job("a", 0.0, 1, 10.0, model="VGG16"),))
    with pytest.raises(PolicyError, match="no network"):
        simulate(trace, Cluster.uniform(), Scripted({"a": (0,)}, {"a": 5.0}), perf=IdealPerf())
    cluster = load_cluster_spec(TESTBED)
    with pytest.raises(PolicyError, match="finite"):
        simulate(trace, cluster, Scripted({"a": (0,)}, {"a": float("nan")}), perf=IdealPerf())
    rows = [LogRow(0.0, "submit", "a"), LogRow(0.0, "shift", "a", (0,), 0.0, "phase=1.0")]
    assert any(m.startswith("state:") for m in replay_check(trace, cluster, EventLog(rows), perf=IdealPerf()))


def test_same_seed_same_log():
    jobs = [Job("a", 0.0, 2, 100.0, model="VGG16"), Job("b", 3.0, 2, 50.0, model="VGG19")]
    one, *_ = _run(jobs, CROSS)
    two, *_ = _run(jobs, CROSS)
    assert list(one.log) == list(two.log)


def test_link_utilisation_over_time_hand_cases():
    from placement.sim.link_metrics import link_utilisation_series

    # b starts at a whole number of VGG16 iterations: in phase with a unless shifted
    start = 300 * IDEAL / 1000.0
    jobs = [Job("a", 0.0, 2, 100.0, model="VGG16"), Job("b", start, 2, 100.0, model="VGG16")]
    # shifted by the Down phase: the fluid run's horizon is 16 iterations + the shift, in which
    # each job's 16 Up phases of UP ms at BW Gbps fit exactly
    down = IDEAL - UP
    shifted = 2 * 16 * UP * BW / (50 * (16 * IDEAL + down))
    for phases, shared in ((None, 2 * 25 * (SHARED - down) / SHARED / 50), ({"a": 0.0, "b": down}, shifted)):
        res, trace, cluster = _run(jobs, CROSS, phases=phases)
        series = link_utilisation_series(trace, res.log, LinkSharing(cluster))
        uplink = "tor0-core"
        alone = [u[uplink] for t0, t1, u in series if t1 <= start]
        both = [u[uplink] for t0, t1, u in series if t0 >= start]
        assert alone and alone[0] == pytest.approx(UP * BW / IDEAL / 50)   # VGG16 alone: its mean bandwidth
        assert both and both[0] == pytest.approx(shared, rel=0.02)  # in phase: 25 each while stretched


def test_on_the_clos_reading_jobs_share_only_the_uplinks_their_flows_hash_to():
    cluster = load_cluster_spec("instances/clusters/cassini-testbed-clos.json")
    links = LinkSharing(cluster)
    job = Job("x", 0.0, 2, 100.0, model="VGG16")
    # 2-server jobs across racks 0 and 1 (one pod): machines (a, 4 + b)
    pairs = [(a, 4 + b) for a in range(4) for b in range(4)]
    by = {p: set(links.links(p)) for p in pairs}
    clash = next((p, q) for p in pairs for q in pairs if not set(p) & set(q) and by[p] & by[q])
    apart = next((p, q) for p in pairs for q in pairs if not set(p) & set(q) and not by[p] & by[q])
    for (p, q), want in ((clash, IDEAL / SHARED), (apart, 1.0)):
        f = links.factors({"a": (job, p, 0.0), "b": (job, q, 0.0)})
        assert f["a"] == pytest.approx(want, rel=0.01) and f["b"] == pytest.approx(want, rel=0.01)


def test_large_components_use_the_average_load_approximation_and_replay_agrees():
    from placement.sim.cluster import Cluster
    from placement.sim.links import MAX_FLUID_JOBS

    n = MAX_FLUID_JOBS + 8
    net = {"racks": 2, "servers_per_rack": n, "server_capacity": 50, "oversubscription": n}   # 50 Gbps uplinks
    cluster = Cluster.uniform(racks=2, machines=n, gpus_per_machine=1).with_network(net)
    jobs = [Job(f"j{i}", 0.0, 2, 100.0, model="VGG16") for i in range(n)]
    gpus = {f"j{i}": (i, n + i) for i in range(n)}          # every job crosses both rack uplinks
    res, trace, _ = _run(jobs, gpus, cluster=cluster)
    # VGG16 sends BW Gbps a fraction c of the time: offered c BW n on a 50 Gbps uplink; c stretched
    c = UP / IDEAL
    want = 1.0 / ((1 - c) + c * (c * BW * n / 50))
    assert _finish(res, "j0") == pytest.approx(100.0 / want, rel=1e-9)
    assert res.stats["links"]["approximated"] >= 1 and res.stats["links"]["fluid_runs"] == 0



# A contended 4-job component on the Clos with the goodput factor: three jobs of the full CASSINI
# run's instant that failed the earlier grid check (main-poisson-tiresias+cassini-s1 at 8873.86 s)
# and a fourth on two of their servers. Its trajectory is ill-conditioned (the jobs lock into a
# common rhythm that a grid's O(dt) error breaks).
CONTENDED = {"a": ("VGG16", (1, 2, 3, 10, 15, 22, 23), 12.639467723667622),
             "b": ("RoBERTa", (4, 5, 12, 13, 17, 18, 19, 21), 37.63946772366762),
             "c": ("RoBERTa", (0, 7, 8, 11, 14, 16, 20), 102.63946772366762),
             "d": ("VGG16", (6, 9), 33.23)}


def test_a_contended_component_is_confirmed_exactly_where_a_grid_cannot():
    import numpy as np

    from placement.cassini.catalogue import profile_of
    from placement.cassini.stepped import exact_step_iteration_times, stepped_mean_iteration_times
    from placement.sim.network import fluid_window

    clos = load_cluster_spec("instances/clusters/cassini-testbed-clos.json")
    cluster = clos.with_network({**clos.network, "goodput": 0.88})
    jobs = [Job(k, 0.0, len(g), 3.0, model=m) for k, (m, g, _) in CONTENDED.items()]
    gpus = {k: g for k, (_, g, _) in CONTENDED.items()}
    phases = {k: p for k, (_, _, p) in CONTENDED.items()}
    res, trace, _ = _run(jobs, gpus, phases, cluster=cluster)   # the engine's log passes the link check
    links = LinkSharing(cluster)
    running = {j.id: (j, gpus[j.id], phases[j.id]) for j in jobs}
    got = links.factors(running)
    assert all(f < 0.9 for f in got.values())          # one component, all four slowed
    topo = links.topology
    spec = {k: (profile_of(m, k), links.servers(g), p) for k, (m, g, p) in CONTENDED.items()}
    names, r = fluid_window(topo, spec, window_iterations=links.window_iterations)
    jobs3 = [(spec[n][0], topo.job_links(spec[n][1]), spec[n][2]) for n in names]
    exact = exact_step_iteration_times(jobs3, topo.capacity, r.horizon, shared_goodput=0.88)
    assert all(np.array_equal(a, b) for a, b in zip(r.ends, exact, strict=True))
    # a fine grid (0.0113 ms) over the same window comes close but is not exact (with the
    # catalogue of issue 47 this component is well-conditioned: within 2%; with the earlier
    # 180/240 ms profiles it was off by more than 2%, which is why the check steps exactly)
    grid = stepped_mean_iteration_times(jobs3, topo.capacity, r.horizon, links.warmup, dt=0.01125,
                                        shared_goodput=0.88)
    off = [abs(p.iteration_time / m - got[n]) / got[n] for n, (p, _, _), m in zip(names, jobs3, grid, strict=True)]
    assert max(off) < 0.02
    # and the check still fails a logged factor off by 1e-4
    rows = list(res.log)
    i = next(k for k, r in enumerate(rows) if r.event == "rate" and r.job == "d")
    f = float(rows[i].extra.split("factor=")[1].split()[0])
    bad = rows[:i] + [rows[i]._replace(extra=f"factor={f * 1.0001!r}")] + rows[i + 1:]
    msgs = link_factor_check(links)(trace, cluster, EventLog(bad))
    assert len(msgs) == 1 and msgs[0].startswith("link: job d at 0.0")
