"""The smaller edges of the command line and the face: repeated options, a log given as an
instance, listings without a family, seconds in tables, ``--version``, the tiers of jobs.csv."""

from __future__ import annotations

import csv
import importlib.metadata
import json

import pytest
from placement.instances import generate_tetris

import placement
from placement.app.cli import main
from placement.app.commands import cell
from placement.app.run import write_outputs
from placement.errors import InstanceError
from placement.sim.instance import instance_to_json as instance_to_doc
from placement.sim.instance import solution_to_json
from placement.sim.trace import Job, Trace, write_trace_csv
from placement.tetris import instance_to_json


def _one_line(capsys, expect: str):
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    assert expect in err, err


@pytest.fixture
def files(tmp_path):
    inst = tmp_path / "i.json"
    inst.write_text(json.dumps(instance_to_json(generate_tetris(6, 8, 2, seed=3))))
    trace = tmp_path / "t.csv"
    write_trace_csv(Trace("t", (Job("a", 0.0, 16, 100.0, model="ResNet18"), Job("b", 5.0, 2, 50.0))), trace)
    return tmp_path, inst, trace


def test_a_repeated_option_is_an_error_not_the_last_one_kept(files, capsys):
    tmp, inst, trace = files
    out = tmp / "r.json"
    argv = ["solve", str(inst), "--solver", "hill-climb", "--option", "max_passes=1", "--option", "max_passes=2",
            "-o", str(out)]
    assert main(argv) == 2
    _one_line(capsys, "error: --option max_passes: is given twice (max_passes=1 and max_passes=2)")
    assert not out.exists()
    argv = ["simulate", str(trace), "--policy", "dally", "--option", "levels=2", "--option", "levels=3",
            "-o", str(tmp / "o")]
    assert main(argv) == 2
    _one_line(capsys, "error: --option levels: is given twice")
    assert not (tmp / "o").exists()


def test_an_event_log_given_as_an_instance_is_named_so(files, capsys):
    tmp, _, trace = files
    run = placement.simulate(str(trace), progress=False)
    (tmp / "run").mkdir()
    (tmp / "run" / "instance.json").write_text(json.dumps(instance_to_doc(run.instance)))
    (tmp / "run" / "log.json").write_text(json.dumps(solution_to_json(run.instance, run.result.log)))
    log = str(tmp / "run" / "log.json")
    # Before: 'log_columns: is not a known field'.
    assert main(["evaluate", log, log]) == 2
    _one_line(capsys, "error: document: is an event log (a run's log.json, the solution), not an instance: give "
                      "the run's instance.json")
    with pytest.raises(InstanceError, match="is an event log"):
        placement.simulate(log, progress=False)
    assert main(["evaluate", str(tmp / "run" / "instance.json"), log]) == 0


def test_list_options_finds_a_solver_without_its_family():
    by_name = placement.list_options("hill-climb")
    assert by_name.equals(placement.list_options("hill-climb", family="tetris"))
    assert "max_passes" in set(by_name["option"])
    with pytest.raises(InstanceError, match="family: must be given: 'exact' is a solver of"):
        placement.list_options("exact")
    with pytest.raises(InstanceError, match="did you mean 'hill-climb'"):
        placement.list_options("hill-clmb")
    assert list(placement.list_options("dally")["option"]) == list(placement.list_options("dally")["option"])


@pytest.mark.parametrize("key,value,text", [
    ("mean_jct_s", 78440.123, "78,440 s (21.8 h)"),
    ("makespan_s", 7.844e4, "78,440 s (21.8 h)"),
    ("mean_wait_s", 12.5, "12.5"),
    ("allocation_rate", 0.123456, "0.1235"),
    ("preemptions", 123456, "123,456"),
    ("x", None, "-"),
])
def test_seconds_print_as_seconds_and_hours_not_in_exponent_form(key, value, text):
    assert cell(key, value) == text


def test_the_simulate_table_has_no_exponent(files, capsys, monkeypatch):
    monkeypatch.setattr("placement.app.run.plot_run", lambda *a, **k: [])   # the table and files, not the plots
    tmp, _, trace = files
    long = tmp / "long.csv"
    write_trace_csv(Trace("l", (Job("a", 0.0, 1, 78440.0), Job("b", 1.0, 1, 90000.0))), long)
    assert main(["simulate", str(long), "-o", str(tmp / "o")]) == 0
    out = capsys.readouterr().out
    assert "e+0" not in out and "s (25.0 h)" in out


def test_version(capsys):
    with pytest.raises(SystemExit) as e:   # argparse's own, with other arguments
        main(["--version", "generate"])
    assert e.value.code == 0
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"placement {importlib.metadata.version('placement')}"


def test_jobs_csv_joins_tiers_as_a_list_cell(files):
    tmp, _, trace = files
    run = placement.simulate(str(trace), cluster="1x1x2x2x4", perf="dally", progress=False)
    write_outputs(tmp / "o", run.instance, run.result, run.rows, run.metrics, run.violations, plots=False)
    with open(tmp / "o" / "jobs.csv", newline="") as f:
        rows = {r["job"] if "job" in r else r["id"]: r for r in csv.DictReader(f)}
    tiers = {r["job"] if "job" in r else r["id"]: t for r, t in zip(run.rows, run.jobs["tiers"], strict=True)}
    assert tiers["a"] and all(" " not in r["tiers"] for r in rows.values())
    assert {k: r["tiers"].split(";") if r["tiers"] else [] for k, r in rows.items()} == tiers
