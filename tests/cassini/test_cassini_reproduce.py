"""``placement reproduce cassini`` on a tiny configuration of the same code: every log passes the
replay and link-factor checks, a row's iteration mean is recomputed from its log's rate rows,
the claims come from the rows and are judged by the contract (verdicts recomputed where the run's
records decide them, the phase spread's fit recomputed from its rows, choices.csv), Themis/Ideal
and the shift ceiling stand beside the gains, and the regime map has its knobs."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from placement.app import reproduce as rp
from placement.app.reproduce import cassini
from placement.app.reproduce.claims import VERDICTS
from placement.cassini.catalogue import PROFILES
from placement.sim.cassini_workload import poisson_trace
from tests.support import run_reproduction_with

TINY = cassini.Config(hours=0.08, regime_hours=0.035, snapshots=False, stress_iterations=100)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("rep") / "cassini"
    return run_reproduction_with(rp.configured(cassini.REPRODUCTION, seeds=1, config=TINY), out), out


def _rows(out):
    return {r["run"]: r for r in csv.DictReader(open(out / "results.csv"))}


def test_logs_pass_the_checks_and_a_row_is_recomputed_from_its_log(run):
    ctx, out = run
    assert ctx.broken == {}
    rows = _rows(out)
    r = rows["main-poisson-themis-s0"]
    trace = poisson_trace(0, hours=TINY.hours)
    end = max(j.submit for j in trace.jobs)
    model = {j.id: j.model for j in trace.jobs}
    # independent: per job, factor intervals from the log's start / rate / finish rows, cut at the
    # last submission; iterations in an interval = its length / (ideal / factor)
    since: dict[str, tuple[float, float]] = {}
    it, w = [], []

    def close(job, t):
        t0, f = since.pop(job)
        t = min(t, end)
        if t > t0:
            ms = PROFILES[model[job]][1] / f
            it.append(ms)
            w.append((t - t0) * 1000 / ms)

    for row in csv.DictReader(open(out / "logs" / r["run"] / "log.csv")):
        t, ev, job = float(row["time"]), row["event"], row["job"]
        if ev == "start" and t <= end:
            since[job] = (t, 1.0)
        elif ev == "rate" and job in since:
            close(job, t)
            if t <= end:
                since[job] = (t, float(row["extra"].split("factor=")[1].split()[0]))
        elif ev in ("finish", "preempt") and job in since:
            close(job, t)
    for job in list(since):
        close(job, end)
    assert float(r["iter_mean"]) == pytest.approx(np.average(it, weights=w), rel=1e-9)
    assert float(r["over_ideal"]) >= 1 - 1e-9 and float(r["ceiling"]) >= 1 - 1e-9
    assert float(r["ceiling"]) <= float(r["over_ideal"]) + 1e-9     # the load bound is at least the ideal


def test_claims_from_rows_with_the_room_beside_each_gain(run):
    ctx, out = run
    rows = _rows(out)
    by = {c.key: c for c in ctx.claims}
    for exp, key in (("poisson", "poisson_mean"), ("model-parallel", "mp_mean"), ("stress", "stress_mean"),
                     ("mp-dynamic", "mpdyn_mean"), ("multi-gpu", "multi_mean")):
        c = by[key]
        a, b = (float(rows[f"main-{exp}-{p}-s0"]["iter_mean"]) for p in ("themis", "themis+cassini"))
        assert c.ours == pytest.approx([a / b])
        assert "Themis/Ideal" in c.difference and "bound on Themis's placements" in c.difference
        assert "bound on its own" in c.difference
    report = (out / "report.md").read_text()
    assert "Gains beside the room they had" in report and "regime map" in report
    assert (out / "figures" / "cdf-iterations.png").exists()


def _expected(claim, statuses) -> str | None:
    """The verdict category the contract gives, where it follows from the run's own records: a
    failed precondition (majority of seeds) is off-regime, no measured seed not comparable, then a
    knob that did not converge makes it uncalibrated; None when the verdict rests on the values."""
    for p in claim["preconditions"]:
        rule = p["rule"].split()
        ok = [(v >= float(rule[1])) if rule[0] == ">=" else (v <= float(rule[1])) for v in p["measured"]]
        if 2 * sum(ok) <= len(ok):
            return "off-regime"
    if all(v is None for v in claim["ours"]):
        return "not comparable"                                 # no seed measured it (a ratio over 0)
    knobs = [d["name"] for d in claim["depends_on"] if d["kind"] == "knob"]
    return "uncalibrated" if any(statuses[k] != "converged" for k in knobs) else None


def test_the_contract_one_row_per_claim_calibration_and_choices(run):
    from placement.app.reproduce.cassini_sim import PHASE_GRID
    from placement.app.reproduce.cassini_spec import SPEC

    ctx, out = run
    doc = json.loads((out / "claims.json").read_text())
    keys = [c["key"] for c in doc["claims"]]
    assert sorted(set(keys)) == sorted(c.key for c in SPEC.claims if not c.key.startswith(("table2", "fig17")))
    assert len(keys) == len(set(keys))                          # each claim judged once (snapshots off here)
    cal = list(csv.DictReader(open(out / "calibration.csv")))
    rows = list(csv.DictReader(open(out / "results.csv")))
    # the phase spread: the grid value whose Themis / Ideal (median over seeds) is nearest 1.6
    fit = {}
    for r in rows:
        if r["run"].startswith("fit-spread-"):
            fit.setdefault(float(r["spread"]), []).append(float(r["over_ideal"]))
    assert sorted(fit) == sorted(PHASE_GRID)
    med = {k: float(np.median(v)) for k, v in fit.items()}
    best = min(PHASE_GRID, key=lambda k: (abs(med[k] - 1.6), -k))
    (phase,) = [r for r in cal if r["parameter"].startswith("phase spread")]
    main = float(np.median([float(r["over_ideal"]) for r in rows if r["run"].startswith("main-poisson-themis-")]))
    assert float(phase["value"]) == best and float(phase["ours"]) == pytest.approx(main)
    converged = abs(main / 1.6 - 1) <= 0.15
    assert phase["status"] == ("converged" if converged else "at the grid's edge" if best in (1.0, 0.0)
                               else "not converged")
    assert doc["knobs"]["phase spread"] == phase["status"]
    goodput = next(r for r in cal if r["parameter"] == "goodput factor")
    assert float(goodput["ours"]) == pytest.approx(22.0) and goodput["status"] == "converged"
    # the main runs use the fitted spread
    assert {float(r["spread"]) for r in rows if r["run"].startswith("main-poisson-themis")} == {best}
    for c in doc["claims"]:
        want = _expected(c, doc["knobs"])
        if want is not None:
            assert c["verdict"] == want, c["key"]
        assert c["verdict"] in VERDICTS and c["range"] and c["source"] and c["role"] == "claim"
    choices = list(csv.DictReader(open(out / "choices.csv")))
    assert [c["choice"] for c in choices] == [c.name for c in SPEC.choices]
    assert all(not c["derived_from"] or all(SPEC.by_key[k].role != "claim" for k in c["derived_from"].split())
               for c in choices)


def test_baselines_and_measures(run):
    ctx, out = run
    rows = _rows(out)
    by = {c.key: c for c in ctx.claims}
    measures = {m.key: m for m in ctx.measures}
    rnd = rows["main-poisson-random-s0"]                        # Random ran, its log passed the checks
    th = rows["main-poisson-themis-s0"]
    assert by["random_worst"].ours == pytest.approx([float(rnd["over_ideal"]) / float(th["over_ideal"])])
    summary = json.loads((out / "logs" / "main-poisson-random-s0" / "summary.json").read_text())
    assert summary["run"]["policy"] == "themis" and summary["run"]["options"]["placement"] == "random"
    assert measures["tiresias_gain"].ours == pytest.approx(
        [float(rows["main-poisson-tiresias-s0"]["iter_mean"]) / float(rows["main-poisson-tiresias+cassini-s0"]["iter_mean"])])
    for key, exp, metric in (("poisson_pollux", "poisson", "iter_mean"), ("stress_po_mean", "stress", "iter_mean"),
                             ("stress_po_p99", "stress", "iter_p99"), ("mpdyn_pollux", "mp-dynamic", "iter_mean")):
        a, b = (float(rows[f"main-{exp}-{p}-s0"][metric]) for p in ("pollux", "pollux+cassini"))
        assert by[key].ours == pytest.approx([a / b])
    # the agent's count per shifted job-minute (NaN when no job ran shifted inside the tiny window)
    adj = float(rows["main-poisson-pollux+cassini-s0"]["agent_adjust_per_job_min"])
    assert adj >= 0.0 or (np.isnan(adj) and np.isnan(float(rows["main-poisson-pollux+cassini-s0"]["realign_per_job_min"])))
    for pol in ("pollux", "pollux+cassini"):                    # written like every other run
        assert (out / "logs" / f"main-poisson-{pol}-s0").is_dir()
    # the agent's three views on the same Poisson trace: compatible sets (main), every link, off
    assert rows["main-poisson-themis+cassini-s0"]["agent"] == "compatible"
    assert rows["agent_all-poisson-themis+cassini-s0"]["agent"] == "all"
    assert float(rows["agent_all-poisson-themis+cassini-s0"]["agent_share"]) == 1.0
    assert rows["agent_off-poisson-themis+cassini-s0"]["agent"] == "off"
    assert "The agent's rule: three views" in (out / "report.md").read_text()
    assert measures["shifts_hold"].ours == pytest.approx([float(rows["main-poisson-themis+cassini-s0"]["ceiling"])])
    assert measures["gpu_load"].ours == pytest.approx([float(th["gpu_load"])])
    assert 0 < float(th["gpu_load"]) <= 1
    assert by["poisson_mean"].preconditions[0]["measured"] == pytest.approx([float(th["gpu_load"])])
    sets = float(rows["main-poisson-themis+cassini-s0"]["link_sets"])
    cands = float(rows["main-poisson-themis+cassini-s0"]["candidates"])
    assert 1 <= sets <= cands <= 10 and measures["candidate_sets"].ours == pytest.approx([sets])
    # the earlier candidate rule beside the reassignment's, same trace and seed: its gain and its choice
    old = rows["main-poisson-themis+cassini-starting-s0"]
    assert 1 <= float(old["link_sets"]) <= float(old["candidates"]) <= 10
    assert measures["gain_starting"].ours == pytest.approx(
        [float(rows["main-poisson-themis-s0"]["iter_mean"]) / float(old["iter_mean"])])
    one = float(rows["main-poisson-themis+cassini-s0"]["one_link_set"])
    assert 0 <= one <= 1 and measures["candidate_one_set"].ours == pytest.approx([one])
    th_m, cas_m = (float(rows[f"main-stress-{p}-s0"]["marks_dlrm"]) for p in ("themis", "themis+cassini"))
    top = max(th_m, cas_m)
    assert by["ecn_stress"].ours == ([pytest.approx((th_m - cas_m) / top)] if top > 0 else [None])
    assert th_m >= 0 and cas_m >= 0
    report = (out / "report.md").read_text()
    assert "## Time per part" in report and "## Wall time per phase of the paper's code" in report
    assert "| regime map |" in report and report.count("## Time per part") == 1


def test_mp_dynamic_trace_brings_dlrm_and_a_gpt_into_model_parallel_jobs():
    from placement.app.reproduce.cassini_sim import experiment_trace
    from placement.sim.cassini_workload import MODEL_PARALLEL

    trace = experiment_trace("mp-dynamic", 4, 1.0, stress_iterations=100)
    assert all(j.model in MODEL_PARALLEL for j in trace.jobs)
    assert [(j.submit, j.gpus) for j in trace.jobs] == [(0.0, 6)] * 3 + [(60.0, 3)] * 2
    assert trace.jobs[3].model == "DLRM" and trace.jobs[4].model.startswith("GPT")


def test_multigpu_runs_on_six_two_gpu_servers(run):
    from placement.app.reproduce.cassini_sim import experiment_trace

    _, out = run
    inst = json.loads((out / "logs" / "main-multi-gpu-themis-s0" / "instance.json").read_text())
    assert "multigpu" in json.dumps(inst["cluster"]).replace("-", "")
    trace = experiment_trace("multi-gpu", 0, 1.0, stress_iterations=TINY.stress_iterations)
    assert [j.gpus for j in trace.jobs] == [3, 3, 3, 3] and trace.jobs[2].model == "DLRM"
    assert trace == experiment_trace("multi-gpu", 0, 1.0, stress_iterations=TINY.stress_iterations)
    log = [r for r in csv.DictReader(open(out / "logs" / "main-multi-gpu-themis+cassini-s0" / "log.csv"))]
    assert {r["job"] for r in log if r["event"] == "finish"} == {j.id for j in trace.jobs}


def test_regime_map_has_its_knobs_of_four_values(run):
    _, out = run
    reg = list(csv.DictReader(open(out / "regimes.csv")))
    values = {}
    for r in reg:
        values.setdefault(r["knob"], set()).add(r["value"])
    assert set(values) == set(cassini.KNOBS) | {"phase spread (fit, Themis only)"}
    assert all(len(v) >= 4 for v in values.values())
    rows = _rows(out)
    r = next(r for r in reg if r["knob"] == "oversubscription" and float(r["value"]) == 8 and r["claim"].startswith("Th+"))
    a, b = (float(rows[f"regime-oversubscription-8-{p}-s0"]["iter_mean"]) for p in ("themis", "themis+cassini"))
    assert float(r["ours"]) == pytest.approx(a / b)


def test_agent_logs_recheck_from_their_files(run):
    """A +cassini log written with §4.2 step 3's agent records the rule in ``summary.json``'s
    ``run`` and passes ``placement evaluate`` from its files alone (the link check rebuilt with
    the same agent); the other runs record none; ``--rerun`` of an agent run is one line."""
    import json

    from placement.app.cli import main

    _ctx, out = run
    for name, want in (("main-poisson-themis+cassini-s0", True), ("agent_all-poisson-themis+cassini-s0", "all"),
                       ("main-poisson-themis-s0", None)):
        d = out / "logs" / name
        assert json.loads((d / "summary.json").read_text())["run"].get("agent") == want
        assert main(["evaluate", str(d / "instance.json"), str(d / "log.json")]) == 0
    assert main(["simulate", "--rerun", str(out / "logs" / "main-poisson-themis+cassini-s0"),
                 "-o", str(out / "rerun")]) == 2
