"""``placement reproduce hived`` on a tiny configuration of the same code: the window and its
warm-up, the size search and ``calibration.csv``, both quota views, per-tenant delays and
fragmentation recomputed from the logs it wrote, every log replay-checked (HiveD's with the
sharing-safety and guarantee checks: every start row names its class), the load both ways, and
the claims recomputed from the results."""

from __future__ import annotations

import csv
import functools
import json

import numpy as np
import pytest
from placement.solvers.online.tenants import oversize_jobs

from placement.app import reproduce as rp
from placement.app.bench.hived_trace import fragmentation
from placement.app.reproduce import hived
from placement.app.reproduce.hived_quotas import assignment as view_assignment
from placement.app.reproduce.hived_quotas import busy_share, comparable
from placement.sim.instance import load_instance, load_solution
from placement.sim.replay import guarantee_check, replay_check
from tests.support import run_reproduction_with

TINY = hived.Config(start_day=50.0, days=0.5, warmup_days=0.25, nodes=(16, 24), max_jobs=150, free_view=False,
                    regime_nodes=(16,), regime_spare=(0.0, 1.0), regime_checkpoint_h=(0.5, 1.0))


@functools.cache
def _trace(seed: int):
    """``hived._trace(TINY, seed)``, read once per seed by this module's checks (each read parses
    Philly's CSV, about 1.5 s); the window is a tuple so that no test can change another's."""
    trace, window, w0, w1 = hived._trace(TINY, seed)
    return trace, tuple(window), w0, w1


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("rep") / "hived"
    return run_reproduction_with(rp.configured(hived.REPRODUCTION, seeds=2, config=TINY), out), out


def test_window_and_warmup():
    trace, window, w0, w1 = _trace(0)
    assert (w0, w1) == (0.25 * 86400, 0.75 * 86400) and len(window) == 150
    assert all(w0 <= j.submit < w1 for j in window)
    assert any(j.submit < w0 for j in trace.jobs)          # the warm-up runs too
    assert hived.window_start_day(TINY, 1) == 47.0 and hived.window_start_day(TINY, 2) == 53.0


def test_logs_replay_and_rows_recompute(run):
    ctx, out = run
    assert ctx.broken == {}
    rows = list(csv.DictReader(open(out / "results.csv")))
    scheme_rows = [r for r in rows if r["scheme"] and not r["tenant"] and not r["variant"]]
    assert sorted({r["scheme"] for r in scheme_rows}) == sorted(hived.SCHEMES)
    assert len(scheme_rows) == 2 * sum(len(v) for v in hived.VIEW_SCHEMES.values())
    variants = {r["variant"] for r in rows if r["variant"]}
    assert {"size search", "lower load"} <= variants and "free preemption" not in variants
    for r in rows:   # the load both ways in every run
        if r["scheme"] and not r["tenant"] and r["variant"] != "examined anomaly":
            assert 0.0 <= float(r["high_share"]) <= float(r["busy_share"]) <= 1.0
    for r in scheme_rows:
        folder = out / "logs" / r["run"]
        inst = load_instance(json.loads((folder / "instance.json").read_text()))
        log = load_solution(inst, json.loads((folder / "log.json").read_text()))
        trace, window, w0, w1 = _trace(int(r["seed"]))
        a = view_assignment(r["view"], trace.jobs, int(r["nodes"]), "multi" if r["scheme"] == "hived-multi" else "node")
        checks = [guarantee_check(a.cells)] if r["scheme"].startswith("hived") else []
        assert replay_check(inst.trace, inst.cluster, log, perf=inst.perf_model(), checks=checks) == []
        if r["scheme"].startswith("hived"):
            assert all("class=" in x.extra for x in log.rows if x.event == "start")
        if r["scheme"] == "private":   # jobs above their tenant's quota never reach a private cluster
            assert {j.id for j in inst.trace.jobs} == {j.id for j in trace.jobs} - oversize_jobs(trace.jobs, a)
        assert float(r["busy_share"]) == pytest.approx(busy_share(log, inst.cluster.n_gpus, w0, w1), rel=1e-12)
        # per-tenant delays from the log equal the rows (on the jobs a private cluster can run)
        delays = hived._delays(comparable(window, a), log)
        tenant_rows = {t["tenant"]: float(t["delay_s"]) for t in rows if t["run"] == r["run"] and t["tenant"]}
        assert tenant_rows == pytest.approx(delays, rel=1e-12)
        assert float(r["mean_delay_s"]) == pytest.approx(float(np.mean(list(delays.values()))), rel=1e-12)
        # fragmentation is bounded and hourly inside the window
        if r["scheme"] != "private":
            assert 0.0 <= float(r["fragmentation"]) <= 1.0
        pre = sum(len(x.gpus) for x in log.rows if x.event == "preempt" and w0 <= x.time < w1)
        assert int(r["preempted_gpus"]) == pre


def test_fragmentation_is_the_paper_measure_on_the_log(run):
    ctx, out = run
    # recompute quota's fragmentation with the policy's high-priority set rebuilt from scratch
    from placement.solvers.online.tenants import table1_assignment

    from placement.app.policy_data import build_policy
    from placement.sim import simulate

    row = next(r for r in csv.DictReader(open(out / "results.csv"))
               if r["run"] == "s0-table1-yarn-cs" and not r["tenant"])
    trace, window, w0, w1 = _trace(0)
    n = int(row["nodes"])
    pol = build_policy("yarn-cs", hived._cluster(n), assignment=table1_assignment(trace.jobs, n)[0])
    from placement.sim.perf import IdealPerf

    res = simulate(trace, hived._cluster(n), pol, perf=IdealPerf(), checkpoint_interval=TINY.checkpoint_s)
    _, ys = fragmentation(res.log, pol.high_runs, n, start=w0, end=w1)
    assert float(row["fragmentation"]) == pytest.approx(float(np.mean(ys)), rel=1e-12)
    # each run by its own priority: a job's low-priority runs never count
    runs = {(r.job, r.time) for r in res.log.rows if r.event == "start"}
    assert pol.high_runs <= runs
    assert len(ys) == int((w1 - w0) // 3600) + 1


def test_claims_recompute_from_results(run):
    ctx, out = run
    claims = {c["claim"]: c for c in json.loads((out / "claims.json").read_text())["claims"]}
    rows = [r for r in csv.DictReader(open(out / "results.csv")) if r["scheme"] and r["view"] == "table1"
            and r["variant"] in ("", "lower load")]
    per = {}
    for r in rows:
        key = r["scheme"] + ("-low" if r["variant"] else "")
        per.setdefault(int(r["seed"]), {}).setdefault(key, {"delays": {}})
        d = per[int(r["seed"])][key]
        if r["tenant"]:
            d["delays"][r["tenant"]] = float(r["delay_s"])
        else:
            d.update(fragmentation=float(r["fragmentation"]), preempted=int(r["preempted_gpus"]))
    pre = next(c for k, c in claims.items() if k.startswith("preempted GPUs"))
    assert "lower-load" in pre["claim"]
    want = [per[s]["hived-low"]["preempted"] / per[s]["hived-static-low"]["preempted"] - 1
            if per[s]["hived-static-low"]["preempted"] else None for s in (0, 1)]
    assert pre["ours"] == pytest.approx(want)
    worst = next(c for k, c in claims.items() if k.startswith("sharing anomaly under YARN-CS"))
    for s in (0, 1):
        cmp_ = hived.tenant_comparison(per[s])
        assert worst["ours"][s] == pytest.approx(cmp_["worst_quota_ratio"])
    assert len(ctx.figures) == 3 + 4 and (out / "report.md").read_text().count("| ") > 20  # 3 + one per knob
    # calibration.csv: both readings per view and seed, from the size-search rows
    cal = list(csv.DictReader(open(out / "calibration.csv")))
    assert list(cal[0]) == ["parameter", "value", "target", "paper", "ours", "error"]
    search = {(int(r["seed"]), r["view"], int(r["nodes"])): r for r in csv.DictReader(open(out / "results.csv"))
              if r["variant"] == "size search"}
    for c in cal:
        seed = int(c["parameter"].split("seed ")[1].split(",")[0])
        view = "table1" if "Table 1" in c["parameter"] else "fitted"
        key = "busy_share" if "busy" in c["parameter"] else "high_share"
        assert float(c["ours"]) == pytest.approx(float(search[(seed, view, int(c["value"]))][key]))
        assert float(c["error"]) == pytest.approx(float(c["ours"]) - 0.9)
    for seed in (0, 1):
        for view in ("table1", "fitted"):
            got = {n: float(r["high_share"]) for (s, v, n), r in search.items() if (s, v) == (seed, view)}
            chosen = next(int(c["value"]) for c in cal if f"seed {seed}," in c["parameter"] and hived.VIEW_TEXT[view]
                          in c["parameter"] and "high-priority" in c["parameter"])
            assert chosen == min(got, key=lambda n: (abs(got[n] - 0.9), n))
    report = (out / "report.md").read_text()
    assert "## Table 1 quota view" in report and "## Examined anomalies" in report and "## Calibration" in report


def test_offered_load_and_paper_sizes_hand_values():
    from placement.sim.trace import Job

    # two jobs over a 100 s window: 8 GPUs x 50 s + 4 GPUs x 100 s = 800 GPU-s -> 8 GPUs offered
    window = [Job("a", 0.0, 8, 50.0), Job("b", 10.0, 4, 100.0)]
    assert hived.offered_gpus(window, 0.0, 100.0) == pytest.approx(8.0)
    # 8 GPUs offered: 279 nodes (2,232 GPUs) at most 0%, 200 nodes (1,600 GPUs) at most 1% busy
    big = [Job("c", 0.0, 8, 100.0 * 800)]      # 6,400 GPUs offered: both saturated
    assert "279 nodes: at most 100%" in hived._paper_sizes_note(big, 0.0, 100.0)
    assert "200 nodes: at most 100%" in hived._paper_sizes_note(big, 0.0, 100.0)
    assert "offer 8 GPUs" in hived._paper_sizes_note(window, 0.0, 100.0)


def test_paper_sizes_note_in_report(run):
    ctx, out = run
    assert "The paper's sizes under this window (seed 0)" in (out / "report.md").read_text()


def test_regime_map_and_binding_claims(run):
    ctx, out = run
    rows = list(csv.DictReader(open(out / "regimes.csv")))
    knobs = {}
    for r in rows:
        v = r["value"]
        knobs.setdefault((r["claim"], r["knob"]), set()).add(v if r["knob"] == hived.VIEW_KNOB else float(v))
    assert {k for _c, k in knobs} == {hived.SIZE_KNOB, hived.CK_KNOB, hived.SPARE_KNOB, hived.VIEW_KNOB}
    assert knobs[(hived.ANOMALY, hived.VIEW_KNOB)] == {"Table 1 quotas", "fitted quotas"}
    assert knobs[(hived.FIG10, hived.SIZE_KNOB)] == {16.0, 22.0}   # the map's size and the lower-load size
    assert all(len(v) == 2 for (c, k), v in knobs.items() if k in (hived.CK_KNOB, hived.SPARE_KNOB))
    # the base value of each knob is the seed's main run: its anomaly ratio equals the claim's
    claims = {c["claim"]: c for c in json.loads((out / "claims.json").read_text())["claims"]}
    worst = next(c for k, c in claims.items() if k.startswith("sharing anomaly under YARN-CS"))
    base = [float(r["ours"]) if r["ours"] else None for r in rows
            if r["knob"] == hived.CK_KNOB and float(r["value"]) == 1.0 and r["claim"] == hived.ANOMALY]
    assert [b is None for b in base] == [w is None for w in worst["ours"]]
    assert [b for b in base if b is not None] == pytest.approx([w for w in worst["ours"] if w is not None])
    # dynamic vs static: the verdict is the majority of seeds from the result rows
    res = [r for r in csv.DictReader(open(out / "results.csv")) if not r["tenant"] and r["variant"] == "lower load"]
    d = {(int(r["seed"]), r["scheme"]): float(r["mean_delay_s"]) for r in res}
    ok = [d[(s, "hived")] <= d[(s, "hived-static")] for s in (0, 1)]
    c = claims["mean delay over tenants, dynamic vs static binding (lower-load size x279/200)"]
    assert c["holds"] == (sum(ok) > 1)


def test_spare_quota_and_heavy_tenant_hand_values():
    from placement.models import hived_vc as hv

    from placement.sim.trace import Job

    jobs = [Job("a", 0.0, 8, 100.0, tenant="A"), Job("b", 0.0, 1, 5000.0, tenant="B"),
            Job("c", 0.0, 16, 10.0, tenant="B")]
    assert hived.heavy_tenant(jobs) == "A"   # 800 GPU-s of node work against B's 320
    a = hv.VCAssignment(4, {"A": (0, 0, 0, 2), "B": (1, 0, 1, 1)})
    grown, extra = hived.with_spare(a, "A", 1.0)
    assert extra == 2 and grown.n_nodes == 6 and grown.cells["A"] == (0, 0, 0, 4) and grown.cells["B"] == (1, 0, 1, 1)
    assert hived.with_spare(a, "A", 0.0)[1] == 0


def test_load_share_counts_each_run_by_its_own_priority():
    from types import SimpleNamespace as R

    # job a runs low-priority on node 0 over [0, 10), is preempted, then runs within quota on
    # node 1 over [10, 20); b runs low-priority on node 2 over [5, 20); c starts low-priority at 12
    # on node 0 (no high-priority run there), e at 13 on node 1 beside a's high-priority run.
    rows = [R(time=0.0, event="start", job="a", gpus=(0, 1, 2, 3)),
            R(time=5.0, event="start", job="b", gpus=(16, 17, 18, 19)),
            R(time=10.0, event="preempt", job="a", gpus=(0, 1, 2, 3)),
            R(time=10.0, event="start", job="a", gpus=(8, 9, 10, 11)),
            R(time=12.0, event="start", job="c", gpus=(7,)),
            R(time=13.0, event="start", job="e", gpus=(12,)),
            R(time=20.0, event="finish", job="a", gpus=(8, 9, 10, 11)),
            R(time=20.0, event="finish", job="b", gpus=(16, 17, 18, 19)),
            R(time=20.0, event="finish", job="c", gpus=(7,)),
            R(time=20.0, event="finish", job="e", gpus=(12,))]
    log = R(rows=rows)
    # 4 GPUs of 24 for half of [0, 20]: 1/12; counting job a's first run too would give 1/6
    assert hived._high_share(log, {("a", 10.0)}, 24, 0.0, 20.0) == pytest.approx(1 / 12)
    assert hived._high_share(log, {"a"}, 24, 0.0, 20.0) == pytest.approx(1 / 6)
    assert hived._low_beside_high(log, {("a", 10.0)}) == 1          # e only
    # a's first run (node 0) had ended before c started, high or not; with no high run, none
    assert hived._low_beside_high(log, {("a", 0.0), ("a", 10.0)}) == 1
    assert hived._low_beside_high(log, {("b", 5.0)}) == 0  # b is on node 2, alone


def test_by_size_splits_a_tenants_delays_by_job_size():
    from placement.sim.trace import Job

    jobs = [Job("a", 0.0, 1, 10.0, tenant="A"), Job("b", 0.0, 1, 10.0, tenant="A"), Job("c", 0.0, 8, 10.0, tenant="A"),
            Job("d", 0.0, 1, 10.0, tenant="B"), Job("e", 0.0, 4, 10.0, tenant="A")]
    shared = {"a": 100.0, "b": 300.0, "c": 50.0, "d": 9.0, "e": 7.0}
    private = {"a": 10.0, "b": 30.0, "c": 500.0, "d": 1.0}      # e did not finish in the private run
    assert hived.by_size(jobs, "A", shared, private) == [(1, 2, 200.0, 20.0), (8, 1, 50.0, 500.0)]
