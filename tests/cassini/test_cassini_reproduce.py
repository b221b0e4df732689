"""``placement reproduce cassini`` on a tiny configuration of the same code: every log passes the
replay check, the rows' iteration-time statistics are recomputed from the logs' epochs, and the
claims from the rows."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from placement.app import reproduce as rp
from placement.app.reproduce import cassini
from tests.support import run_reproduction_with

TINY = cassini.Config(hours=0.4, mean_minutes=5.0, stress_minutes=2.0, window_iterations=6, check_every=10)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("rep") / "cassini"
    return run_reproduction_with(rp.configured(cassini.REPRODUCTION, seeds=2, config=TINY), out), out


def test_logs_replay_and_rows_recompute(run):
    ctx, out = run
    assert ctx.broken == {}
    everything = list(csv.DictReader(open(out / "results.csv")))
    rows = [r for r in everything if r["packing"] in cassini.PACKINGS]
    assert len(rows) == 2 * 2 * 2 * 3  # seeds x packings x policies x (poisson, stress, poisson+loss)
    sim = [r for r in everything if r["packing"].startswith("simulator:")]
    assert len(sim) == 3 * 2 * 2 * 4   # clusters x seeds x (poisson, model-parallel) x 2 bases with and without CASSINI
    assert all((out / "logs" / r["run"] / "log.csv").exists() for r in sim)
    assert len([r for r in everything if r["policy"] == "table2"]) == 5 * 2   # snapshots x readings
    for r in rows:
        log = json.loads((out / "logs" / r["run"] / "log.json").read_text())
        # independent: per epoch and job, iterations run = epoch length / iteration time
        v, w, ideal = [], [], []
        for e in log["epochs"]:
            for n, it in e["iteration"].items():
                model = next(j["model"] for j in log["jobs"] if j["name"] == n)
                v.append(it)
                w.append((e["end"] - e["t"]) / it)
                ideal.append(cassini.tb.CATALOGUE[model][1])
        assert float(r["iter_mean"]) == pytest.approx(np.average(v, weights=w), rel=1e-9)
        assert float(r["ideal_mean"]) == pytest.approx(np.average(ideal, weights=w), rel=1e-9)
        assert float(r["iter_mean"]) >= float(r["ideal_mean"]) - 1e-9


def test_claims_from_rows(run):
    ctx, out = run
    rows = list(csv.DictReader(open(out / "results.csv")))

    def val(exp, packing, pol, key, seed):
        (r,) = [r for r in rows if r["run"] == f"{exp}-{packing}-{pol}-s{seed}"]
        return float(r[key])

    c = next(c for c in ctx.claims if "average" in c.claim and "Poisson" in c.claim and "fewest" in c.claim)
    assert c.ours == pytest.approx([val("poisson", "racks", "themis", "iter_mean", s)
                                    / val("poisson", "racks", "themis+cassini", "iter_mean", s) for s in (0, 1)])
    c = next(c for c in ctx.claims if "99th" in c.claim and "stress" in c.claim and "any free" in c.claim)
    assert c.ours == pytest.approx([val("stress", "anywhere", "themis", "iter_p99", s)
                                    / val("stress", "anywhere", "themis+cassini", "iter_p99", s) for s in (0, 1)])
    report = (out / "report.md").read_text()
    assert "1.6x" in report and "2.2x" in report and (out / "figures" / "cdf-poisson.png").exists()


def test_simulator_claims_from_rows(run):
    ctx, out = run
    rows = {r["run"]: r for r in csv.DictReader(open(out / "results.csv")) if r["packing"].startswith("simulator:")}
    for exp in ("poisson", "model-parallel"):
        for cl, reading in (("cassini-testbed", "12 racks of 2"), ("cassini-testbed-6x4", "6 racks of 4"),
                            ("cassini-testbed-clos", "Clos of 48 links")):
            c = next(c for c in ctx.claims if "average" in c.claim
                     and f"({exp} trace, in placement simulate, {reading})" in c.claim)
            assert c.ours == pytest.approx([float(rows[f"sim-{cl}-{exp}-themis-s{s}"]["iter_mean"])
                                            / float(rows[f"sim-{cl}-{exp}-themis+cassini-s{s}"]["iter_mean"])
                                            for s in (0, 1)])
    for r in rows.values():
        summary = json.loads((out / "logs" / r["run"] / "summary.json").read_text())
        assert summary["replay_ok"]
