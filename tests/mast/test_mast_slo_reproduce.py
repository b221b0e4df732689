"""MAST's SLO measure (placement/sim/slo.py) by hand, the Meta-like workload's distributions, and
``placement reproduce mast`` on a tiny configuration against recomputation from its logs."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from placement.app import reproduce as rp
from placement.app.reproduce import mast
from placement.sim import Cluster, Job, Trace, simulate
from placement.sim.instance import load_instance, load_solution
from placement.sim.meta_trace import GANG_PROBS, GANG_SIZES, PRIORITY_MIX, WARMUP_PREFIX, meta_trace
from placement.sim.perf import IdealPerf
from placement.sim.slo import scheduling_events, slo_table
from solvers.online.fifo import FIFO
from tests.support import run_reproduction_with


def test_events_quota_labels_and_violations_by_hand():
    """One 8-GPU machine, FIFO, tenant t at priority 0 with quota 8 GPUs.
    a (8 GPUs, 0-1000 s); b (8 GPUs, submitted at 10): a holds 8, so b is over quota;
    c (4 GPUs, submitted at 20): 8 running + 4 > 8, over quota too. b starts at 1000, c at 2000.
    With a quota of 16: b is within (8 + 8), c over (8 + 8 waiting + 4). The 10-minute limit of
    priority 0: b waited 990 s (violated), c 1980 s."""
    cluster = Cluster.uniform(racks=1, machines=1, gpus_per_machine=8)
    jobs = (Job("a", 0.0, 8, 1000.0, tenant="t"), Job("b", 10.0, 8, 1000.0, tenant="t"),
            Job("c", 20.0, 4, 10.0, tenant="t"))
    trace = Trace("t", jobs)
    res = simulate(trace, cluster, FIFO(), perf=IdealPerf())
    ev = {e.job: e for e in scheduling_events(trace, res.log, {("t", 0): 8})}
    assert [ev[j].within_quota for j in "abc"] == [True, False, False]
    assert (ev["b"].latency, ev["b"].violated) == (990.0, True) and ev["a"].latency == 0.0
    ev16 = {e.job: e for e in scheduling_events(trace, res.log, {("t", 0): 16})}
    assert [ev16[j].within_quota for j in "abc"] == [True, True, False]
    tab = slo_table(list(ev16.values()), 0.0, 3600.0)
    assert {(r["priority"], r["events"], r["violations"]) for r in tab} == {(0, 2, 1), ("all", 2, 1)}
    assert all(e.within_quota for e in scheduling_events(trace, res.log, None))


def test_a_preemption_is_a_new_event_and_waiting_at_the_end_is_censored():
    from placement.sim.log import EventLog, LogRow

    trace = Trace("t", (Job("x", 0.0, 1, 100.0, priority=1),))
    log = EventLog([LogRow(0.0, "submit", "x", (), 0.0), LogRow(5.0, "start", "x", (0,), 0.0),
                    LogRow(50.0, "preempt", "x", (0,), 45.0), LogRow(4000.0, "start", "x", (0,), 45.0),
                    LogRow(4055.0, "finish", "x", (0,), 100.0)])
    ev = scheduling_events(trace, log, None)
    assert [(e.begin, e.start, e.latency, e.violated) for e in ev] == [(0.0, 5.0, 5.0, False),
                                                                      (50.0, 4000.0, 3950.0, True)]
    cut = EventLog(list(log)[:3])
    (first, second) = scheduling_events(trace, cut, None)
    assert second.start is None and second.latency == 0.0   # censored at the log's end (50 s)


def test_meta_workload_follows_the_published_distributions():
    sizes = (3072, 2048, 1536, 1024, 512)
    tr, masks = meta_trace(sizes, hours=200.0, seed=3)
    win = [j for j in tr.jobs if not j.id.startswith(WARMUP_PREFIX)]
    g = np.array([j.gpus for j in win])
    assert len(win) > 5000
    assert np.percentile(g, 50) == 16 and np.percentile(g, 90) == 64 and np.percentile(g, 99) == 128
    freq = np.array([np.mean(g == s) for s in GANG_SIZES])
    assert np.abs(freq - np.array(GANG_PROBS)).max() < 0.02
    n_regions = np.array([bin(masks[j.tables[0]]).count("1") for j in win])
    assert 0.85 < np.mean(n_regions >= 2) < 0.95 and 0.35 < np.mean(n_regions >= 4) < 0.45
    for j in win:   # every candidate region is large enough for the gang
        assert all(sizes[r] >= j.gpus for r in range(5) if masks[j.tables[0]] >> r & 1)
    warm = sum(j.gpus for j in tr.jobs if j.id.startswith(WARMUP_PREFIX))
    assert 0.9 * sum(sizes) <= warm <= 0.98 * sum(sizes)
    levels = {j.tenant: j.priority for j in tr.jobs}
    assert set(levels.values()) <= set(range(len(PRIORITY_MIX)))
    again, _ = meta_trace(sizes, hours=200.0, seed=3)
    assert again == tr


TINY = mast.Config(region_machines=(8, 6, 4, 2, 2), hours=3.0, tenants=10, sweep_region_gpus=64,
                   sweep_backlog=(1.0,), sweep_protected=(1.0,), sweep_hours=2.0)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("rep") / "mast"
    return run_reproduction_with(rp.configured(mast.REPRODUCTION, seeds=2, config=TINY), out), out


def test_reproduction_rows_recompute_from_the_logs(run):
    ctx, out = run
    assert ctx.broken == {} and ctx.logs == 2 * len(mast.RUNS) + 2 * len(mast.POLICIES)
    rows = list(csv.DictReader(open(out / "results.csv")))
    for seed in (0, 1):
        trace, _ = meta_trace(tuple(8 * m for m in TINY.region_machines), hours=TINY.hours, peak=TINY.peak,
                              warm_fill=TINY.warm_fill, tenants=TINY.tenants, seed=seed)
        quotas = mast.quotas_of(trace, 8 * sum(TINY.region_machines))
        assert sum(quotas.values()) <= 8 * sum(TINY.region_machines)
        for pol in mast.RUNS:
            folder = out / "logs" / f"s{seed}-{pol}"
            inst = load_instance(json.loads((folder / "instance.json").read_text()))
            log = load_solution(inst, json.loads((folder / "log.json").read_text()))
            events = [e for e in scheduling_events(inst.trace, log, quotas)
                      if not e.job.startswith(WARMUP_PREFIX) or e.begin > 0]
            want = {(r["hour"], str(r["priority"])): r for r in slo_table(events, 0.0, TINY.hours * 3600)}
            got = {(int(r["hour"]), r["priority"]): r for r in rows
                   if r["run"] == f"s{seed}-{pol}" and r["view"] == "within quota"}
            assert set(got) == set(want)
            for k, r in want.items():
                assert (int(got[k]["events"]), int(got[k]["violations"])) == (r["events"], r["violations"])
                assert float(got[k]["p95_latency_s"]) == pytest.approx(r["p95_latency_s"])


def test_claims_are_the_worst_hours_of_the_rows(run):
    ctx, out = run
    rows = [r for r in csv.DictReader(open(out / "results.csv")) if r["view"] == "within quota"]
    claims = json.loads((out / "claims.json").read_text())["claims"]
    first = claims[0]
    assert first["claim"].startswith("MAST: within-quota SLO violations")
    for s, v in zip((0, 1), first["ours"], strict=True):
        rates = [float(r["rate"]) for r in rows if r["run"] == f"s{s}-mast" and r["priority"] == "all"]
        assert v == pytest.approx(max(rates))
    assert (out / "figures" / "fig_slo_per_hour.png").stat().st_size > 1000


def test_sweep_rows_recompute_from_the_logs(run):
    from placement.sim.meta_trace import imbalance_trace

    ctx, out = run
    rows = [r for r in csv.DictReader(open(out / "results.csv")) if r["view"] == "imbalance sweep"]
    assert len(rows) == 2 * len(mast.POLICIES)
    for r in rows:
        seed = int(r["seed"])
        trace, _, quotas = imbalance_trace(64, backlog=1.0, protected=1.0, hours=2.0, load=TINY.sweep_load, seed=seed)
        assert sum(quotas.values()) <= 128
        folder = out / "logs" / r["run"]
        inst = load_instance(json.loads((folder / "instance.json").read_text()))
        assert inst.trace == trace
        log = load_solution(inst, json.loads((folder / "log.json").read_text()))
        ev = [e for e in scheduling_events(trace, log, quotas)
              if 0 < e.begin < 2 * 3600 and e.within_quota and e.priority == 0]
        assert (int(r["events"]), int(r["violations"])) == (len(ev), sum(e.violated for e in ev))
    claims = {c["claim"]: c for c in json.loads((out / "claims.json").read_text())["claims"]}
    fed = next(c for k, c in claims.items() if k.startswith("federated: within-quota high-priority violations where"))
    for s, v in zip((0, 1), fed["ours"], strict=True):
        want = [float(r["rate"]) for r in rows if r["seed"] == str(s) and r["policy"] == "federated"]
        assert v == pytest.approx(max(want))


def test_imbalance_trace_is_seeded_and_fills_as_described():
    from placement.sim.meta_trace import imbalance_trace

    a, masks, q = imbalance_trace(256, backlog=0.5, protected=0.75, seed=4)
    b, _, _ = imbalance_trace(256, backlog=0.5, protected=0.75, seed=4)
    assert a == b and masks == {"A": 1, "B": 2, "AB": 3}
    warm = [j for j in a.jobs if j.id.startswith(WARMUP_PREFIX)]
    assert sum(j.gpus for j in warm if j.tenant == "hpB") == 192 == q[("hpB", 0)]
    assert sum(j.gpus for j in warm if j.tables == ("A",)) == 256 + 128     # A filled plus the backlog
    assert sum(j.gpus for j in warm if j.tables == ("B",)) == 256
    assert sum(q.values()) == 512
    assert all(j.priority == 0 and j.tables == ("AB",) for j in a.jobs if j not in warm)
