"""MAST's fast path and the federated baseline on the simulator (MAST §4, §5.6)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from placement.solvers.online.federated import FederatedPolicy
from placement.solvers.online.mast import MastPolicy

from placement.app.policy_data import build_policy
from placement.sim.cluster import Cluster, MachineSpec
from placement.sim.engine import simulate
from placement.sim.replay import replay_check
from placement.sim.trace import Job, Trace, synthetic_trace


def two_type_cluster(regions: int = 3) -> Cluster:
    """Regions with uneven GPU types (MAST Figure 2): A100 in r0, r1; V100 in r1, r2."""
    ms = []
    for r in range(regions):
        for c in range(2):
            for k in range(2):
                for m in range(2):
                    t = ("A100" if r == 0 else "V100" if r == regions - 1 else ("A100", "V100")[m % 2])
                    ms.append(MachineSpec(f"r{r}c{c}k{k}m{m}", f"r{r}c{c}k{k}", f"r{r}c{c}", f"r{r}", 8, t, 32))
    return Cluster.from_machines(ms, name="two-type")


def small_trace(seed: int, jobs: int = 120) -> Trace:
    return synthetic_trace("poisson", jobs=jobs, seed=seed, jobs_per_hour=90, max_gpus=16, tenants=3,
                           gpu_types=["A100", "V100"])


@settings(max_examples=8)
@given(seed=st.integers(0, 10**6), policy=st.sampled_from(["mast", "federated"]))
def test_logs_replay_clean_and_speedups_change_nothing(seed, policy):
    cl, tr = two_type_cluster(), small_trace(seed)
    base = simulate(tr, cl, build_policy(policy, cl, data_seed=seed, prefilter_min=0))
    assert replay_check(tr, cl, base.log) == []
    assert not base.unfinished
    # the negative cache and the pre-filter change the work done, never a decision
    for opts in ({"negative_cache": False}, {"prefilter": False}, {"negative_cache": False, "prefilter": False}):
        other = simulate(tr, cl, build_policy(policy, cl, data_seed=seed, prefilter_min=0, **opts))
        assert other.log.to_csv() == base.log.to_csv()
    assert base.policy_stats["rms_calls"] <= other.policy_stats["rms_calls"]


def test_same_seed_same_log():
    cl, tr = two_type_cluster(), small_trace(5, jobs=200)
    a = simulate(tr, cl, build_policy("mast", cl, data="v0", data_seed=2), seed=1)
    b = simulate(tr, cl, build_policy("mast", cl, data="v0", data_seed=2), seed=1)
    assert a.log.to_csv() == b.log.to_csv()
    timing = {"rms_time_s"}
    assert ({k: v for k, v in a.policy_stats.items() if k not in timing}
            == {k: v for k, v in b.policy_stats.items() if k not in timing})


def _job(i, t, gpus, prio, tenant="a", dur=1000.0, gt="A100"):
    return Job(id=f"w{i}", submit=float(t), gpus=gpus, duration=dur, tenant=tenant, priority=prio, gpu_type=gt)


def one_region(gpus_per_machine=8, machines=2) -> Cluster:
    return Cluster.uniform(regions=1, clusters=1, racks=1, machines=machines,
                           gpus_per_machine=gpus_per_machine, gpu_type="A100")


def test_preemption_picks_lowest_priority_longest_running():
    cl = one_region()
    jobs = [_job(0, 0, 8, 2, "a"), _job(1, 10, 8, 2, "b"), _job(2, 20, 8, 0, "c", dur=100)]
    res = simulate(Trace("t", tuple(jobs)), cl, MastPolicy(data=None, quota_share=1.0))
    rows = [(r.time, r.event, r.job) for r in res.log]
    assert (20.0, "preempt", "w0") in rows and not any(e == "preempt" and j == "w1" for _, e, j in rows)
    assert replay_check(Trace("t", tuple(jobs)), cl, res.log) == []


def test_quota_demotion_makes_a_workload_preemptible():
    # tenant a's quota at level 0 is 8 GPUs: its second level-0 workload runs over quota at
    # the lowest level, so tenant b's level-1 workload preempts it, not the within-quota one
    cl = one_region()
    jobs = [_job(0, 0, 8, 0, "a"), _job(1, 10, 8, 0, "a"), _job(2, 20, 8, 1, "b", dur=100)]
    pol = MastPolicy(data=None, quotas={"a": 8, "b": 8})
    res = simulate(Trace("t", tuple(jobs)), cl, pol)
    rows = [(r.time, r.event, r.job) for r in res.log]
    assert (20.0, "preempt", "w1") in rows
    assert not any(e == "preempt" and j == "w0" for _, e, j in rows)
    # without quotas level 0 cannot be preempted by level 1: w2 waits for a finish
    res2 = simulate(Trace("t", tuple(jobs)), cl, MastPolicy(data=None, quotas={"a": 100, "b": 100}))
    assert not any(r.event == "preempt" for r in res2.log)
    start2 = next(r.time for r in res2.log if r.event == "start" and r.job == "w2")
    assert start2 == 1000.0


def test_mast_finds_the_region_to_preempt_in_federated_does_not():
    # two regions of 16 GPUs. Federated dispatch (demand/supply, ties to r0): w0 (level 0) -> r0,
    # w1 (level 2) -> r1, w2 (level 0) -> r0, w3 (level 2) -> r1; the level-0 arrival w4 sees
    # equal ratios, is bound to r0 where nothing can be preempted, and waits for a finish.
    # MAST's auction searches both regions and preempts a level-2 job at once (§5.6).
    cl = Cluster.uniform(regions=2, clusters=1, racks=1, machines=2, gpus_per_machine=8, gpu_type="A100")
    jobs = [_job(0, 0, 8, 0, "a", dur=5000), _job(1, 1, 8, 2, "b", dur=5000),
            _job(2, 2, 8, 0, "a", dur=5000), _job(3, 3, 8, 2, "b", dur=5000), _job(4, 10, 8, 0, "c", dur=100)]
    tr = Trace("t", tuple(jobs))
    start = {}
    for pol in (MastPolicy(data=None, quota_share=1.0), FederatedPolicy(data=None, quota_share=1.0)):
        res = simulate(tr, cl, pol)
        assert replay_check(tr, cl, res.log) == []
        start[pol.name] = next(r.time for r in res.log if r.event == "start" and r.job == "w4")
    assert start["mast"] == 10.0
    assert start["federated"] == 5000.0


def test_workload_without_an_eligible_region_waits_and_is_counted():
    cl = two_type_cluster()
    tr = small_trace(3, jobs=80)
    # v0 homes leave some workloads without any region holding all their tables
    never = simulate(tr, cl, build_policy("mast", cl, data="v0", data_seed=1, replication_delay=None))
    st = never.policy_stats
    assert st["no_eligible_region"] > 0 and st["waiting_forever"] == st["no_eligible_region"]
    assert len(never.unfinished) == st["waiting_forever"]
    assert replay_check(tr, cl, never.log, require_complete=False) == []
    pol = build_policy("mast", cl, data="v0", data_seed=1, replication_delay=600.0)
    repl = simulate(tr, cl, pol)
    assert repl.policy_stats["replications"] == repl.policy_stats["no_eligible_region"] > 0
    assert not repl.unfinished and replay_check(tr, cl, repl.log) == []
    # a workload that waited for its data starts no earlier than the replication finished
    sub = {j.id: j.submit for j in tr.jobs}
    assert len(pol.data_waits) == repl.policy_stats["replications"]
    for r in repl.log:
        if r.event == "start" and r.job in pol.data_waits:
            assert r.time >= pol.data_waits[r.job] == sub[r.job] + 600.0


def test_federated_dispatch_lowest_demand_over_supply():
    cl = Cluster.uniform(regions=2, clusters=1, racks=1, machines=4, gpus_per_machine=8, gpu_type="A100")
    # r0 and r1 have 32 GPUs each: w0 (16) -> r0 (tie), w1 (8) -> r1 (0 < 0.5), w2 (8) -> r1 (0.25 < 0.5)
    jobs = [_job(0, 0, 16, 1), _job(1, 1, 8, 1), _job(2, 2, 8, 1)]
    res = simulate(Trace("t", tuple(jobs)), cl, FederatedPolicy(data=None))
    region = {r.job: int(np.unique(cl.region[list(r.gpus)])[0]) for r in res.log if r.event == "start"}
    assert region == {"w0": 0, "w1": 1, "w2": 1}


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="data"):
        MastPolicy(data="nowhere")
    with pytest.raises(ValueError, match="replication_delay"):
        MastPolicy(replication_delay=-1)


def test_slo_events_and_report_by_hand():
    from placement.app.bench.mast import scheduling_events, slo_report

    cl = one_region()
    jobs = [_job(0, 0, 8, 2, "a"), _job(1, 10, 8, 2, "b"), _job(2, 20, 8, 0, "c", dur=100)]
    tr = Trace("t", tuple(jobs))
    res = simulate(tr, cl, MastPolicy(data=None, quota_share=1.0))
    ev = sorted(scheduling_events(res.log, tr))
    # w0 queued at 0 and started at 0; preempted at 20 by w2, back at 120 when w2 ends
    assert ev == [(0, 20.0, 20.0), (2, 0.0, 0.0), (2, 10.0, 10.0), (2, 20.0, 120.0)]
    rep = slo_report([(0, 0.0, 100.0), (0, 0.0, 700.0), (0, 100.0, None), (0, 900.0, None), (5, 0.0, None)],
                     {0: 600.0}, end=1000.0)
    assert rep["per_priority"] == {0: {"judged": 3, "violated": 2, "rate": 2 / 3}}
    assert rep["series"] == [(0.0, 0, 3, 2)]


def test_mast_policy_public_face():
    """MastPolicy composes its parts (state, GMS admission, RMS placement) behind the same face:
    registered names, data it needs, keyword-only options with their defaults, summary line."""
    import inspect

    from placement.solvers.online.mast_admission import GmsAdmission
    from placement.solvers.online.mast_placement import RmsPlacement
    from placement.solvers.online.mast_state import MastState

    from placement.sim.policies import policy_class

    assert policy_class("mast") is MastPolicy and policy_class("federated") is FederatedPolicy
    assert issubclass(MastPolicy, (MastState, GmsAdmission, RmsPlacement))
    assert MastPolicy.needs == {"data": "data-placement"}
    assert MastPolicy.__doc__.splitlines()[0] == (
        "MAST's fast path on the simulator: GMS queue, RMS per region, cross-region auction.")
    params = inspect.signature(MastPolicy).parameters
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params.values())
    assert {k: p.default for k, p in params.items()} == {
        "gms": None, "quota_share": 0.25, "quotas": None, "preempt": True, "negative_cache": True,
        "prefilter": True, "prefilter_min": 16, "data": None, "replication_delay": 1800.0}
