"""Every registered policy places a typed job on GPUs of its type, or refuses in one line.

Generated traces whose jobs ask for a GPU type (or none) run on generated clusters whose
machines carry several types; every log must pass the independent replay check (which refuses
a GPU of the wrong type) and every job must finish or be logged unschedulable. The tenant
schemes (private, quota, hived, hived-static) model one GPU type: on a cluster of several types
a typed job is one :class:`InstanceError` naming its ``gpu_type``.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from placement.errors import InstanceError
from placement.sim import replay_check, simulate
from placement.sim.cluster_io import cluster_from_doc
from placement.sim.perf import IdealPerf
from placement.sim.policies import make_policy, policy_names
from placement.sim.trace import Job, Trace

TYPES = ("V100", "T4", "A100")
TENANT_SCHEMES = {"private", "quota", "yarn-cs", "hived", "hived-static"}
PERF = IdealPerf()


@st.composite
def typed_cluster(draw):
    """One region, two racks, 2-4 machines of 8 GPUs each of a drawn type (two types at least),
    dealt to the racks in turn."""
    kinds = draw(st.lists(st.sampled_from(TYPES), min_size=2, max_size=4).filter(lambda k: len(set(k)) >= 2))
    racks = [{"name": f"k{r}", "machines": [{"name": f"m{i}", "gpus": 8, "gpu_type": t, "count": 1}
                                            for i, t in enumerate(kinds) if i % 2 == r]} for r in range(2)]
    doc = {"name": "typed", "regions": [{"name": "r", "clusters": [{"name": "c", "racks": racks}]}]}
    return cluster_from_doc(doc)


@st.composite
def typed_trace(draw):
    n = draw(st.integers(1, 14))
    jobs = []
    for i in range(n):
        jobs.append(Job(id=f"j{i:02d}", submit=float(draw(st.integers(0, 40))), gpus=draw(st.sampled_from([1, 2, 4, 8])),
                        duration=float(draw(st.integers(1, 60))), tenant=draw(st.sampled_from(["a", "b"])),
                        priority=draw(st.integers(0, 2)), gpu_type=draw(st.sampled_from((None, *TYPES)))))
    jobs.sort(key=lambda j: (j.submit, j.id))
    return Trace(name="typed", jobs=tuple(jobs), provenance="test")


# needs the goodput model of measured applications, untyped (tests/sim/test_pollux.py)
GOODPUT_ONLY = {"pollux", "pollux+cassini"}
OTHERS = [p for p in policy_names() if p not in TENANT_SCHEMES | GOODPUT_ONLY]


def test_the_split_covers_every_registered_policy():
    assert set(OTHERS) | TENANT_SCHEMES | GOODPUT_ONLY == set(policy_names())
    assert {"fifo", "dally", "dally-manual", "tiresias", "gandiva", "mast", "federated"} <= set(OTHERS)


@pytest.mark.parametrize("name", OTHERS)
@given(cluster=typed_cluster(), trace=typed_trace())
def test_typed_jobs_run_on_their_type(name, cluster, trace):
    res = simulate(trace, cluster, make_policy(name), perf=PERF, scan_interval=30.0)
    assert replay_check(trace, cluster, res.log, perf=PERF) == []
    ended = {r.job for r in res.log if r.event in ("finish", "unschedulable")}
    assert ended == {j.id for j in trace.jobs} and res.unfinished == ()
    want = {j.id: j.gpu_type for j in trace.jobs}
    for r in res.log:
        if r.event == "start" and want[r.job] is not None:
            assert {str(cluster.gpu_type[g]) for g in r.gpus} == {want[r.job]}


@pytest.mark.parametrize("name", sorted(TENANT_SCHEMES))
def test_tenant_schemes_refuse_a_typed_job_on_a_cluster_of_several_types_in_one_line(name):
    doc = {"name": "two", "regions": [{"name": "r", "clusters": [{"name": "c", "racks": [{"name": "k", "machines": [
        {"name": "v", "gpus": 8, "gpu_type": "V100", "count": 2}, {"name": "t", "gpus": 8, "gpu_type": "T4", "count": 2}]}]}]}]}
    cluster = cluster_from_doc(doc)
    trace = Trace(name="t", jobs=(Job(id="a", submit=0.0, gpus=1, duration=10.0, gpu_type="T4"),), provenance="test")
    pol = make_policy(name, assignment={"default": [0, 0, 0, 4]})
    with pytest.raises(InstanceError) as e:
        simulate(trace, cluster, pol, perf=PERF)
    assert e.value.field == "job a: gpu_type" and "one GPU type" in str(e.value) and "\n" not in str(e.value)
    untyped = Trace(name="t", jobs=(Job(id="a", submit=0.0, gpus=8, duration=10.0),), provenance="test")
    res = simulate(untyped, cluster, make_policy(name, assignment={"default": [0, 0, 0, 4]}), perf=PERF)
    assert replay_check(untyped, cluster, res.log, perf=PERF) == [] and res.unfinished == ()


def test_cli_typed_trace_on_a_typed_cluster(tmp_path, capsys):
    from placement.app.cli import main

    (tmp_path / "typed.csv").write_text("# placement-trace v1\nid,submit,gpus,duration,gpu_type\n"
                                        "a,0,1,10,T4\nb,0,2,20,V100\nc,5,8,30,T4\nd,5,4,30,\n")
    (tmp_path / "two.json").write_text(
        '{"name":"two","regions":[{"name":"r","clusters":[{"name":"c","racks":[{"name":"k","machines":['
        '{"name":"v","gpus":8,"gpu_type":"V100","count":2},{"name":"t","gpus":8,"gpu_type":"T4","count":2}]}]}]}]}')
    args = [str(tmp_path / "typed.csv"), "--cluster", str(tmp_path / "two.json")]
    assert main(["simulate", *args, "--policy", "dally", "-o", str(tmp_path / "d")]) == 0
    capsys.readouterr()
    assert main(["simulate", *args, "--policy", "hived", "--option", 'assignment={"default": [0, 0, 0, 4]}',
                 "-o", str(tmp_path / "h")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: job a: gpu_type:") and not (tmp_path / "h").exists()
