"""The two readings of MAST §4.2 the paper leaves open, on hand cases: the quota scan's
``resource_used`` (all the holder's running workloads, as written, or its within-quota ones)
and the denominator of expression (11) (see also tests/mast/test_mast_gms.py), plus
``placement generate trace --kind mast``."""

from __future__ import annotations

import json

import pytest
from placement.solvers.online.gms import GmsParams
from placement.solvers.online.mast import MastPolicy

from placement.app.cli import main
from placement.sim import Cluster, Job, Trace, simulate
from placement.sim.instance import load_instance
from placement.sim.meta_trace import meta_trace
from placement.sim.perf import IdealPerf


def _starts(quota_used: str) -> list[tuple[float, str, str]]:
    """16 GPUs; tenant t (quota 8 at level 0): a (8 GPUs, 0-100 s) within quota, b (8, from 1 s)
    over quota, c (8, from 200 s). Tenant u (quota 16): d (16 GPUs) at 300 s.
    As written (``all``), t's running b counts, so c starts over quota and d preempts b and c.
    Within-only, t uses 0 within-quota GPUs at 200 s, so c is within quota (level 0, not
    preemptible by level 0): d waits until c finishes at 10,200 s."""
    cluster = Cluster.uniform(racks=1, machines=2, gpus_per_machine=8)
    jobs = (Job("a", 0.0, 8, 100.0, tenant="t"), Job("b", 1.0, 8, 10000.0, tenant="t"),
            Job("c", 200.0, 8, 10000.0, tenant="t"), Job("d", 300.0, 16, 100.0, tenant="u"))
    pol = MastPolicy(gms=GmsParams(quota_used=quota_used), quotas={("t", 0): 8, ("u", 0): 16})
    res = simulate(Trace("q", jobs), cluster, pol, perf=IdealPerf())
    return [(r.time, r.event, r.job) for r in res.log if r.event in ("start", "preempt")]


def test_quota_scan_starts_from_all_running_workloads_as_written():
    assert GmsParams().quota_used == "all"
    assert _starts("all") == [(0.0, "start", "a"), (1.0, "start", "b"), (200.0, "start", "c"),
                              (300.0, "preempt", "b"), (300.0, "preempt", "c"), (300.0, "start", "d"),
                              (400.0, "start", "b"), (400.0, "start", "c")]


def test_quota_scan_within_only_reading():
    assert _starts("within") == [(0.0, "start", "a"), (1.0, "start", "b"), (200.0, "start", "c"),
                                 (10200.0, "start", "d")]


def test_generate_trace_kind_mast_is_the_meta_workload(tmp_path):
    path = tmp_path / "m.json"
    assert main(["generate", "trace", "--kind", "mast", "--cluster", "2x1x4x8x8", "--tenants", "6",
                 "--seed", "2", "-o", str(path)]) == 0
    inst = load_instance(json.loads(path.read_text()))
    want, _ = meta_trace((256, 256), tenants=6, seed=2)
    assert inst.trace.jobs == want.jobs
    assert all({"gpus", "priority", "tenant"} <= set(j.synthetic) for j in inst.trace.jobs)


@pytest.mark.parametrize("field", ["fair_share", "quota_used"])
def test_bad_reading_is_one_line_error(field):
    with pytest.raises(ValueError, match=field):
        GmsParams(**{field: "nope"})


def test_the_long_tail_is_the_dally_slowdown_of_one_synthetic_model_label():
    """A whole-Philly run under the Dally perf model ends thousands of days after the last
    arrival (day 109): philly-65656 runs 19.3 observed days on 4 GPUs, its model label
    (MobileNetV3, drawn per job, synthetic) has a Table 1 overhead of 195.92 across dynamic
    clusters, so spread over two of them it runs 196.92x longer. Observed durations (the
    default of ``placement simulate`` on a trace file) have no such tail."""
    from placement.instances.traces import trace_path

    from placement.sim.perf import DallyPerf
    from placement.sim.trace import load_philly

    tr = load_philly(trace_path("philly.csv"))
    j = next(j for j in tr.jobs if j.id == "philly-65656")
    assert (j.gpus, j.model, "model" in j.synthetic) == (4, "MobileNetV3", True)
    assert 19 < j.duration / 86400 < 20
    assert 1 / DallyPerf().rate(j, "cluster") == pytest.approx(196.92)
    assert (j.submit + j.duration / DallyPerf().rate(j, "cluster")) / 86400 > 3800
    assert max(x.submit + x.duration for x in tr.jobs) / 86400 < 110
