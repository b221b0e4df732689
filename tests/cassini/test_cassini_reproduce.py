"""``placement reproduce cassini`` on a tiny configuration of the same code: every log passes the
replay and link-factor checks, a row's iteration mean is recomputed from its log's rate rows,
the claims come from the rows, Themis/Ideal and the shift ceiling stand beside the gains, and
the regime map has its three knobs."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from placement.app import reproduce as rp
from placement.app.reproduce import cassini
from placement.cassini.catalogue import CATALOGUE
from placement.sim.cassini_workload import poisson_trace
from tests.support import run_reproduction_with

TINY = cassini.Config(hours=0.08, regime_hours=0.05, snapshots=False, stress_iterations=100)


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
            ms = CATALOGUE[model[job]][1] / f
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
    for exp in ("poisson", "model-parallel", "stress"):
        c = next(c for c in ctx.claims if c.claim.startswith("Th+CASSINI improves the average") and f"({exp} trace)"
                 in c.claim)
        a, b = (float(rows[f"main-{exp}-{p}-s0"]["iter_mean"]) for p in ("themis", "themis+cassini"))
        assert c.ours == pytest.approx([a / b])
        assert "Themis/Ideal" in c.difference and "bound on Themis's placements" in c.difference
        assert "bound on its own" in c.difference
    report = (out / "report.md").read_text()
    assert "Gains beside the room they had" in report and "regime map" in report
    assert (out / "figures" / "cdf-iterations.png").exists()


def test_baselines_calibration_and_the_shifts_bound(run):
    ctx, out = run
    rows = _rows(out)
    by = {c.claim: c for c in ctx.claims}
    rnd = rows["main-poisson-random-s0"]                        # Random ran, its log passed the checks
    th = rows["main-poisson-themis-s0"]
    c = next(c for k, c in by.items() if k.startswith("Random placement"))
    assert c.ours == pytest.approx([float(rnd["over_ideal"]) / float(th["over_ideal"])])
    assert next(c for k, c in by.items() if "Tiresias + CASSINI" in k).holds is None
    po = [c for k, c in by.items() if k.startswith("Po+CASSINI")]
    assert len(po) == 3 and po[0].holds is None                 # Pollux and Po+CASSINI ran, their logs passed
    for c, exp, key in zip(po, ("poisson", "stress", "stress"), ("iter_mean", "iter_mean", "iter_p99"), strict=True):
        a, b = (float(rows[f"main-{exp}-{p}-s0"][key]) for p in ("pollux", "pollux+cassini"))
        assert c.ours == pytest.approx([a / b])
    assert float(rows["main-poisson-pollux+cassini-s0"]["agent_adjust_per_job_min"]) >= 0.0   # the agent's count
    for pol in ("pollux", "pollux+cassini"):                    # written like every other run
        assert (out / "logs" / f"main-poisson-{pol}-s0").is_dir()
    # the agent's three views on the same Poisson trace: compatible sets (main), every link, off
    assert rows["main-poisson-themis+cassini-s0"]["agent"] == "compatible"
    assert rows["agent_all-poisson-themis+cassini-s0"]["agent"] == "all"
    assert float(rows["agent_all-poisson-themis+cassini-s0"]["agent_share"]) == 1.0
    assert rows["agent_off-poisson-themis+cassini-s0"]["agent"] == "off"
    assert "The agent's rule: three views" in (out / "report.md").read_text()
    own = next(c for k, c in by.items() if k.startswith("The shifts hold"))
    assert own.ours == pytest.approx([float(rows["main-poisson-themis+cassini-s0"]["ceiling"])])
    cal = list(csv.DictReader(open(out / "calibration.csv")))
    goodput = next(r for r in cal if r["parameter"] == "goodput factor")
    assert float(goodput["ours"]) == pytest.approx(22.0) and float(goodput["paper"]) == 22.0
    themis = next(r for r in cal if "Poisson" in r["target"])
    assert float(themis["ours"]) == pytest.approx(float(th["over_ideal"]))


def test_regime_map_has_four_knobs_of_four_values(run):
    _, out = run
    reg = list(csv.DictReader(open(out / "regimes.csv")))
    values = {}
    for r in reg:
        values.setdefault(r["knob"], set()).add(r["value"])
    assert set(values) == set(cassini.KNOBS) and all(len(v) >= 4 for v in values.values())
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
