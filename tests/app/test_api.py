"""The Python face (``placement.simulate``, ``solve``, ``sweep``, ``reproduce``) against the command line.

Each function is what its command runs, so the two are compared for equality on the same
inputs: the files ``run.save`` writes and ``placement simulate -o`` writes, a solve's objective
and solution, a sweep's rows. A run's folder records what made it (``summary.json``'s ``run``)
and ``placement simulate --rerun DIR`` rebuilds the same log byte for byte; ``placement
evaluate`` judges a folder by the options it records.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pandas as pd
import pytest

import placement
from placement.app import reproduce as rp
from placement.app.cli import main
from placement.errors import InstanceError

SAME_BYTES = ("instance.json", "log.json", "log.csv", "jobs.csv", "timeseries.csv")
TIMING = ("replay_check_s", "wall_s", "elapsed_s", "wall_time_s")


@pytest.fixture(scope="module")
def trace_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("api") / "t.json"
    assert main(["generate", "trace", "--kind", "poisson", "--jobs", "60", "--jobs-per-hour", "30",
                 "--seed", "3", "--cluster", "1x1x2x2x4", "-o", str(path)]) == 0
    return path


def _untimed(doc):
    if isinstance(doc, dict):
        return {k: _untimed(v) for k, v in doc.items() if not any(t in k for t in TIMING)}
    return doc


def test_simulate_equals_the_command_line(trace_file, tmp_path, capsys):
    run = placement.simulate(str(trace_file), policy="gandiva", options={"migration_cost": 3600}, seed=2,
                             hours=1.5)
    run.save(tmp_path / "api")
    assert main(["simulate", str(trace_file), "--policy", "gandiva", "--option", "migration_cost=3600",
                 "--seed", "2", "--hours", "1.5", "-o", str(tmp_path / "cli")]) == 0
    for name in SAME_BYTES:
        assert (tmp_path / "api" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name
    api_summary = json.loads((tmp_path / "api" / "summary.json").read_text())
    cli_summary = json.loads((tmp_path / "cli" / "summary.json").read_text())
    assert _untimed(api_summary) == _untimed(cli_summary)
    assert _untimed(run.summary) == _untimed(api_summary)
    # the DataFrames hold what the files hold
    jobs = pd.read_csv(tmp_path / "cli" / "jobs.csv")
    assert list(run.jobs["job"]) == list(jobs["job"]) and len(run.jobs) == len(run.instance.trace) > 20
    assert run.jobs["jct"].fillna(-1).tolist() == pytest.approx(jobs["jct"].fillna(-1).tolist(), rel=1e-12)
    log = pd.read_csv(tmp_path / "cli" / "log.csv")
    assert len(run.log) == len(log) and list(run.log["event"]) == list(log["event"])
    assert run.timeseries["utilization"].tolist() == pytest.approx(
        pd.read_csv(tmp_path / "cli" / "timeseries.csv")["utilization"].tolist())
    assert run.replay() == run.violations == []
    assert len(run.plot()) == 3


def test_summary_records_options_resolved_and_the_rerun_is_byte_identical(trace_file, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["simulate", str(trace_file), "--policy", "gandiva", "--option", "migration_cost=3600",
                 "--seed", "1", "--start", "0.5", "-o", str(out)]) == 0
    run = json.loads((out / "summary.json").read_text())["run"]
    assert run["policy"] == "gandiva" and run["seed"] == 1 and run["options"] == {"migration_cost": 3600}
    import inspect

    from placement.sim.policies import policy_class

    params = inspect.signature(policy_class("gandiva")).parameters
    assert set(run["resolved_options"]) == set(params) and run["resolved_options"]["migration_cost"] == 3600
    defaults = {k: p.default for k, p in params.items() if k != "migration_cost"}
    assert {k: run["resolved_options"][k] for k in defaults} == defaults  # defaults included
    assert run["version"] == placement.__version__ and run["perf"] == "dally"  # the instance file's own
    assert run["command"].startswith("placement simulate ") and "--option migration_cost=3600" in run["command"]
    for extra in (["--policy", "fifo"], ["--seed", "3"], ["--option", "migrate=false"]):  # nothing silently ignored
        assert main(["simulate", "--rerun", str(out), *extra, "-o", str(tmp_path / "x")]) == 2
    assert not (tmp_path / "x").exists()
    assert main(["simulate", "--rerun", str(out), "-o", str(tmp_path / "again")]) == 0
    for name in SAME_BYTES:
        assert (out / name).read_bytes() == (tmp_path / "again" / name).read_bytes(), name
    # another policy on the same window is another log: the equality above is not vacuous
    assert main(["simulate", str(trace_file), "--policy", "fifo", "--seed", "1", "--start", "0.5",
                 "-o", str(tmp_path / "other")]) == 0
    assert (tmp_path / "other" / "log.json").read_bytes() != (out / "log.json").read_bytes()


def test_evaluate_reads_the_options_from_the_folder(trace_file, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["simulate", str(trace_file), "--policy", "fifo", "--hours", "1", "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["evaluate", str(out / "instance.json"), str(out / "log.json")]) == 0
    summary = json.loads((out / "summary.json").read_text())
    summary["run"]["options"] = {"no_such_option": 1}
    (out / "summary.json").write_text(json.dumps(summary))
    assert main(["evaluate", str(out / "instance.json"), str(out / "log.json")]) == 1
    assert "recorded options do not build policy 'fifo'" in capsys.readouterr().out


def test_rerun_refuses_a_folder_without_a_record(tmp_path, capsys):
    (tmp_path / "x").mkdir()
    assert main(["simulate", "--rerun", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: --rerun:")


def test_what_simulate_accepts_evaluate_reads(trace_file, tmp_path, capsys):
    """One limit for both: a machine of 1,025 GPUs is refused before the run, naming --cluster."""
    assert main(["simulate", str(trace_file), "--cluster", "1x1x1x1x1025", "-o", str(tmp_path / "big")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --cluster:") and "1024" in err and not (tmp_path / "big").exists()
    assert main(["simulate", str(trace_file), "--cluster", "1x1x1x1x1024", "--hours", "0.5",
                 "-o", str(tmp_path / "ok")]) == 0
    assert main(["evaluate", str(tmp_path / "ok" / "instance.json"), str(tmp_path / "ok" / "log.json")]) == 0
    with pytest.raises(InstanceError, match="^cluster: .*1024"):   # the Python name of --cluster
        placement.simulate(str(trace_file), cluster="1x1x1x1x1025")


def test_bad_input_is_the_same_one_line_error(trace_file, capsys):
    with pytest.raises(InstanceError) as exc:
        placement.simulate(str(trace_file), hours=-1)
    assert main(["simulate", str(trace_file), "--hours", "-1", "-o", "unused"]) == 2
    # the same message; the face names its parameter where the command names its flag
    assert capsys.readouterr().err.strip() == f"error: --{exc.value}"
    assert exc.value.field == "hours"
    with pytest.raises(InstanceError, match="policy"):
        placement.simulate(str(trace_file), policy="no-such-policy")


def test_solve_equals_the_command_line(tmp_path, capsys):
    inst = tmp_path / "t.json"
    assert main(["generate", "tetris", "--tables", "8", "--jobs", "12", "--regions", "3", "--seed", "1",
                 "-o", str(inst)]) == 0
    assert main(["solve", str(inst), "--solver", "hill-climb", "--seed", "0", "--option", "max_passes=1",
                 "-o", str(tmp_path / "r.json")]) == 0
    cli = json.loads((tmp_path / "r.json").read_text())
    res = placement.solve(str(inst), solver="hill-climb", seed=0, max_passes=1)
    assert (str(res.status), res.objective) == (cli["status"], cli["objective"])
    from placement.tetris import load_instance

    obj = load_instance(json.loads(inst.read_text()))
    assert placement.solve(obj, solver="hill-climb", seed=0, max_passes=1).objective == res.objective
    exact = placement.solve(obj)  # the family's exact model by default
    assert exact.status == "optimal" and exact.objective <= res.objective + 1e-9
    with pytest.raises(InstanceError, match="no_such.* is not a parameter"):
        placement.solve(obj, solver="hill-climb", no_such=1)


def test_sweep_equals_the_command_line(tmp_path, capsys):
    spec = {"kind": "solve", "family": "hived", "solvers": ["exact", "buddy"], "sizes": [{}], "seeds": [0, 1]}
    (tmp_path / "s.json").write_text(json.dumps(spec))
    assert main(["sweep", str(tmp_path / "s.json"), "-o", str(tmp_path / "cli"), "--workers", "0"]) == 0
    df = placement.sweep(spec)
    cli = pd.read_csv(tmp_path / "cli" / "results.csv")
    keep = [c for c in cli.columns if not any(t in c for t in ("time", "_s", "wall", "_us", "per_s"))]
    assert list(df.columns) == list(cli.columns) and len(df) == 4
    again = pd.read_csv(io.StringIO(df.to_csv(index=False)))  # the same text conventions as the file
    pd.testing.assert_frame_equal(again[keep], cli[keep])
    assert df["objective"].notna().all()


def _tiny(ctx: rp.Context) -> None:
    from placement.app.shipped import cluster_arg
    from placement.sim.instance import SimInstance
    from placement.sim.trace import synthetic_trace

    vals = []
    for seed in ctx.seeds:
        inst = SimInstance(synthetic_trace("poisson", jobs=15, seed=seed, max_gpus=4), cluster_arg("1x1x1x2x4"),
                           perf="ideal")
        _res, _rows, summ = ctx.simulate(inst, "gandiva", seed, f"g-s{seed}", options={"migration_cost": 60})
        vals.append(summ["mean_jct_s"])
        for load in (1, 2):
            ctx.regime(claim="c", knob="load", value=load, seed=seed, ours=summ["mean_jct_s"] * load,
                       paper=1.0, holds=load == 1)
    ctx.claim(claim="c", source="toy", paper="1", ours=vals, holds=True, rule="always")


def test_reproduce_returns_claims_and_regimes_as_dataframes(tmp_path, monkeypatch):
    monkeypatch.setattr(rp, "reproductions", lambda: {"tiny": rp.Reproduction("tiny", "Tiny", "t", _tiny, 2, 2)})
    rep = placement.reproduce("tiny", quick=True, out=tmp_path / "rep")
    assert isinstance(rep.claims, pd.DataFrame) and rep.claims["claim"].tolist() == ["c"]
    assert rep.claims["holds"].tolist() == [True] and len(rep.claims["ours"][0]) == 2
    assert isinstance(rep.regimes, pd.DataFrame) and len(rep.regimes) == 4
    assert sorted(rep.regimes["value"].unique().tolist()) == [1, 2]
    assert all(p.is_file() for p, _ in rep.figures) and rep.logs == 2 and rep.broken == {}
    # each reproduction log records its policy's resolved options
    run = json.loads((tmp_path / "rep" / "logs" / "g-s0" / "summary.json").read_text())["run"]
    assert run["policy"] == "gandiva" and run["options"] == {"migration_cost": 60}
    assert run["resolved_options"]["migration_cost"] == 60 and "migration" in run["resolved_options"]
    assert run["command"].startswith("placement reproduce tiny")


def test_import_placement_loads_no_app_until_a_function_is_used():
    code = ("import sys, placement\nassert 'placement.app' not in sys.modules\n"
            "f = placement.simulate\nassert 'placement.app.api' in sys.modules\n"
            "assert f is placement.simulate and 'simulate' in dir(placement)\n"
            "import placement.app.api as api\nassert all(getattr(placement, n) is getattr(api, n) for n in api.__all__)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    with pytest.raises(AttributeError):
        placement.no_such_name  # noqa: B018


def test_a_sweep_row_records_what_made_it_and_its_command_reruns_it(trace_file, tmp_path, capsys):
    import shlex

    spec = {"kind": "simulate", "policies": ["gandiva"], "traces": [{"trace": str(trace_file), "hours": 1}],
            "clusters": ["1x1x2x2x4"], "seeds": [5], "options": {"gandiva": {"migration_cost": 60}}}
    row = placement.sweep(spec).iloc[0]
    assert row["status"] == "ok" and row["version"] == placement.__version__ and row["perf"] == "dally"
    resolved = row["resolved_options"]   # decoded: the options as a dict, not JSON text
    assert resolved["migration_cost"] == 60 and "migration" in resolved and row["options"] == {
        "migration_cost": 60}
    assert main(shlex.split(row["command"])[1:] + ["-o", str(tmp_path / "alone")]) == 0
    alone = json.loads((tmp_path / "alone" / "summary.json").read_text())["metrics"]
    assert alone["mean_jct_s"] == row["mean_jct_s"] and alone["jobs"] == row["jobs"]
