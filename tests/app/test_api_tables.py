"""What the face gives back: tidy tables, listings that match the registries, readable summaries,
progress where a person is watching.

``placement.compare`` is checked against the runs it was given (each row equals that run's own
metrics; the figure draws one CDF per run, reaching the share of jobs that finished); the listings
against the entry points and the option checker; ``Run.jobs`` of two runs concatenates into one
table whose rows say which run they belong to.
"""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

import placement
from placement.app import api
from placement.app import reproduce as rp
from placement.errors import InstanceError
from placement.sim.metrics import METRICS, glossary
from placement.sim.policies import policy_names
from placement.sim.trace import synthetic_trace

CLUSTER = "1x1x1x2x4"


@pytest.fixture(scope="module")
def runs():
    trace = synthetic_trace("poisson", jobs=30, seed=4, max_gpus=4, jobs_per_hour=40)
    return {p: placement.simulate(trace, CLUSTER, p, perf="dally", seed=1, progress=False)
            for p in ("fifo", "tiresias")}


def test_compare_is_one_row_per_run_equal_to_each_runs_metrics(runs):
    import matplotlib

    matplotlib.use("Agg")
    table, fig = placement.compare(runs)
    assert table["run"].tolist() == ["fifo", "tiresias"] and table["seed"].tolist() == [1, 1]
    for _, row in table.iterrows():
        m = runs[row["run"]].metrics
        assert row["policy"] == row["run"] and row["perf"] == "dally" and row["jobs"] == 30
        assert row["mean_jct_s"] == m["mean_jct_s"] and row["mean_waiting_s"] == m["mean_waiting_s"]
        assert row["allocation_rate"] == m["allocation_rate"]
    lines = fig.axes[0].get_lines()
    assert [ln.get_label() for ln in lines] == ["fifo", "tiresias"]
    for ln, r in zip(lines, runs.values(), strict=True):
        assert ln.get_ydata()[-1] == pytest.approx(r.metrics["finished"] / r.metrics["jobs"])
    # a list of runs is labelled policy/seed; runs of different traces are not compared
    assert placement.compare(list(runs.values()))[0]["run"].tolist() == ["fifo/seed1", "tiresias/seed1"]
    other = placement.simulate(synthetic_trace("poisson", jobs=10, seed=5, max_gpus=4), CLUSTER, progress=False)
    with pytest.raises(InstanceError, match="^runs: must share one trace window"):
        placement.compare([runs["fifo"], other])


def test_jobs_of_several_runs_form_one_tidy_table(runs):
    jobs = pd.concat([r.jobs for r in runs.values()], ignore_index=True)
    assert list(jobs.columns[:3]) == ["run", "policy", "seed"]
    assert jobs.groupby("policy").size().to_dict() == {"fifo": 30, "tiresias": 30}
    started = jobs[jobs["first_start"].notna()]
    assert all(isinstance(t, list) and t and set(t) <= {"machine", "rack", "cluster", "region"}
               for t in started["tiers"])
    assert jobs.groupby("policy")["jct"].mean().to_dict() == pytest.approx(
        {k: r.metrics["mean_jct_s"] for k, r in runs.items()}, rel=1e-12)


def test_a_run_prints_units_not_raw_numbers(runs):
    text = repr(runs["fifo"])
    h = runs["fifo"].metrics["mean_jct_s"] / 3600
    assert f"mean JCT {h:,.2f} h" in text and "perf 'dally'" in text and "replay_check passed" in text


def test_listings_match_the_registries():
    pol = placement.list_policies()
    assert pol["policy"].tolist() == policy_names() and pol["description"].str.len().gt(0).all()
    assert set(pol.loc[pol["network_aware"], "policy"]) >= {"dally", "tiresias+cassini"}
    sol = placement.list_solvers("tetris")
    assert sol.loc[sol["exact"], "solver"].tolist() == ["exact"] and "hill-climb" in sol["solver"].tolist()
    opts = placement.list_options("gandiva").set_index("option")
    assert opts.loc["migration_cost", "default"] == 60.0 and opts.loc["migration_cost", "type"] == "float >= 0"
    lns = placement.list_options("lns", "tetris")
    assert len(lns) > 10 and lns["option"].is_unique
    glossary_table = placement.list_metrics()
    # every headline number of a run is defined in the glossary
    r = placement.simulate(synthetic_trace("poisson", jobs=5, seed=1, max_gpus=2), CLUSTER, progress=False)
    assert all(glossary(k) is not None for k in r.metrics), [k for k in r.metrics if glossary(k) is None]
    assert len(glossary_table) == len(METRICS)


def test_a_network_aware_policy_under_ideal_perf_warns():
    trace = synthetic_trace("poisson", jobs=6, seed=2, max_gpus=4)
    with pytest.warns(UserWarning, match="perf 'dally'"):
        placement.simulate(trace, CLUSTER, "dally", perf="ideal", progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        placement.simulate(trace, CLUSTER, "dally", perf="dally", progress=False)


def _tiny(ctx: rp.Context) -> None:
    from placement.app.shipped import cluster_arg
    from placement.sim.instance import SimInstance

    for seed in ctx.seeds:
        inst = SimInstance(synthetic_trace("poisson", jobs=8, seed=seed, max_gpus=4), cluster_arg(CLUSTER), "ideal")
        _res, _rows, summ = ctx.simulate(inst, "fifo", seed, f"f-s{seed}")
        ctx.regime(claim="c", knob="load", value=1, seed=seed, ours=summ["mean_jct_s"], paper=1.0,
                   holds=seed == 0)
    ctx.claim(claim="c", source="t", paper=1.0, ours=[1.0] * len(ctx.seeds), holds=True, rule="r", difference="d")


def test_reproduce_shows_progress_where_a_person_watches(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(rp, "reproductions", lambda: {"tiny": rp.Reproduction("tiny", "Tiny", "t", _tiny, 2, 2)})
    lines: list[str] = []
    rep = placement.reproduce("tiny", out=tmp_path / "a", echo=lines.append)
    assert any("f-s0" in s for s in lines) and any("f-s1" in s for s in lines)
    # holds is one type in both tables
    assert rep.claims["holds"].tolist() == [True] and rep.regimes["holds"].tolist() == [True, False]
    monkeypatch.setattr(api, "_interactive", lambda: True)   # as in Jupyter: printed by default
    placement.reproduce("tiny", out=tmp_path / "b")
    shown = capsys.readouterr().out
    assert "f-s0" in shown and "f-s1" in shown
    placement.reproduce("tiny", out=tmp_path / "c", echo=False)
    assert "f-s0" not in capsys.readouterr().out


def test_the_simulator_page_carries_the_glossary():
    from pathlib import Path

    page = (Path(placement.__file__).parent / "sim" / "README.md").read_text()
    for key, (unit, definition) in METRICS.items():
        assert f"| `{key}` | {unit} | {definition} |" in page, key


def test_a_solve_result_prints_one_line_and_what_its_bound_proves():
    from placement.result import SolveResult

    r = SolveResult("feasible", "lns", objective=662.44, bound=662.44, wall_time_s=0.5,
                    stats={"rounds": list(range(1000)), "tried": 3})
    text = repr(r)
    assert "\n" not in text and "status='feasible' (its bound proves it optimal)" in text
    assert "999" not in text and "stats: rounds, tried" in text and "wall_time=0.50 s" in text
    assert "proves" not in repr(SolveResult("feasible", "hill-climb", objective=2.0, bound=1.0))
