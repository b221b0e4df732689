"""``placement reproduce dally`` on a tiny configuration of the same code: every number in the
results equals what the reference evaluation recomputes from the log it wrote, every claim's
per-seed value equals its recomputation from the results, and the report shows them."""

from __future__ import annotations

import csv
import json

import pytest

from placement.app import reproduce as rp
from placement.app.reproduce import dally
from placement.sim.instance import evaluate_report, load_instance, load_solution
from tests.support import run_reproduction_with

TINY = dally.Config(racks=(1, 2), kinds=("batch", "poisson"), jobs={"batch": 40, "poisson": 30},
                    jobs_per_hour=20.0, detail_racks=2, bound=True, load_rates=(5.0, 20.0))
METRICS = ("mean_jct_s", "median_jct_s", "makespan_s", "p95_waiting_s", "p99_waiting_s", "mean_waiting_s",
           "mean_comm_overhead_s", "time_to_99pct_finished_s")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("rep") / "dally"
    return run_reproduction_with(rp.configured(dally.REPRODUCTION, seeds=2, config=TINY), out), out


def test_every_row_equals_the_evaluation_of_its_log(run):
    ctx, out = run
    assert ctx.broken == {} and ctx.logs == 2 * 2 * 2 * len(dally.POLICIES) + 2 * len(dally.VARIANTS) + 2 * 2
    rows = [r for r in csv.DictReader(open(out / "results.csv")) if not r["policy"].startswith("bound:")]
    assert len(rows) == ctx.logs
    for r in rows:
        folder = out / "logs" / r["run"]
        inst = load_instance(json.loads((folder / "instance.json").read_text()))
        assert inst.perf == "dally"
        terms, broken = evaluate_report(inst, load_solution(inst, json.loads((folder / "log.json").read_text())))
        assert broken == []
        for m in METRICS:
            want = terms[m]
            got = float(r[m]) if r[m] != "" else None
            assert got == pytest.approx(want, rel=1e-12, abs=1e-9), (r["run"], m)


def test_claims_are_recomputed_from_the_results(run):
    ctx, out = run
    rows = {(int(r["racks"]), r["kind"], int(r["seed"]), r["policy"]): r
            for r in csv.DictReader(open(out / "results.csv")) if not r["variant"]}
    claims = json.loads((out / "claims.json").read_text())["claims"]
    assert len(claims) == len(dally.CLAIMS)
    report = (out / "report.md").read_text()
    for c, (claim, _src, _paper, base, metric, mag, kind, _why) in zip(claims, dally.CLAIMS, strict=True):
        assert c["claim"] == claim
        want = [float(rows[(2, kind, s, "dally")][metric]) / float(rows[(2, kind, s, base)][metric]) - 1
                for s in (0, 1)]
        assert c["ours"] == pytest.approx(want, rel=1e-12)
        assert c["holds"] == dally._holds(want, mag)
        assert c["ours_text"] in report


def test_bound_rows_are_below_every_policy(run):
    _ctx, out = run
    rows = list(csv.DictReader(open(out / "results.csv")))
    bounds = [r for r in rows if r["policy"].startswith("bound:")]
    assert len(bounds) == 2 * 2 * 2   # kinds x objectives x seeds on the detail case
    for b in bounds:
        metric = "makespan_s" if b["policy"] == "bound:makespan" else "mean_jct_s"
        for r in rows:
            if (r["kind"], r["seed"], r["racks"]) == (b["kind"], b["seed"], b["racks"]) and r["policy"] in dally.POLICIES \
                    and not r["variant"]:
                for term in ("bound_s", "single_job_term_s", "capacity_term_s"):
                    assert float(b[term]) <= float(r[metric]) * (1 + 1e-9), (term, r["run"])


def test_figures_and_sections_are_written(run):
    ctx, out = run
    assert {rel for rel, _ in ctx.figures} == {"figures/fig6_batch.png", "figures/fig11_jct.png",
                                              "figures/claims_per_seed.png"}
    assert all((out / rel).stat().st_size > 1000 for rel, _ in ctx.figures)
    report = (out / "report.md").read_text()
    assert "## By cluster size" in report and "## Gap to the proven bound" in report
    assert "## Sensitivity to the baselines' parameters" in report
    assert "## Load: where delay scheduling pays" in report and "| 5 |" in report and "| 20 |" in report
