"""Failures scored as MIPLIB does in ``bench --library`` (placement/app/bench/library_run.py), the
Python verbs of placement/app/library_api.py, and output folders refused before any work."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest
from placement.instances import generate_cassini, generate_hived, generate_tetris
from placement.models import backends, tetris

from placement.app import library_api
from placement.app.bench import library_run as LR
from placement.app.bench import mps_check
from placement.app.cli import main
from placement.errors import InstanceError

DEFECT = Path(__file__).parents[1] / "core" / "highs_defect"


def test_failure_kinds():
    known = {"status": "optimal", "objective": 10.0, "bound": 10.0}
    assert LR.failures("optimal", 10.0, 10.0, known, "min", 5.0, 60.0) == []
    assert LR.failures("optimal", 10.00001, 10.0, known, "min", 5.0, 60.0) == []  # within FAIL_REL
    assert LR.failures("optimal", 11.0, 11.0, known, "min", 5.0, 60.0)[0].startswith("wrong optimal")
    assert [f.split(" (")[0] for f in LR.failures("time_limit", 12.0, 10.5, known, "min", 5.0, 60.0)] == \
        ["bound crossing"]
    assert LR.failures("infeasible", None, None, known, "min", 1.0, 60.0)[0].startswith("false infeasible")
    assert LR.failures("time_limit", 10.0, 9.0, known, "min", 68.2, 60.0)[0].startswith("over time")
    assert LR.failures("time_limit", 10.0, 9.0, known, "min", 60.5, 60.0) == []  # a stop within the slack
    best = {"status": "best-known", "objective": 10.0, "bound": 8.0}
    assert LR.failures("optimal", 9.0, 9.0, best, "min", 1.0, 60.0) == []  # better than known: a new optimum
    assert LR.failures("optimal", 12.0, 12.0, best, "min", 1.0, 60.0)[0].startswith("wrong optimal")
    assert LR.failures("optimal", 9.0, 9.5, best, "max", 1.0, 60.0)[0].startswith("wrong optimal")
    assert LR.failures("error", None, None, None, "min", 0.1, 60.0) == ["abort"]
    assert LR.failures("optimal", 1.0, 1.0, None, "min", 0.1, 60.0, "row r1 violated by 2")[0].startswith(
        "infeasible answer")


@pytest.fixture
def planted(tmp_path):
    """A user's folder: HiGHS 1.15.1's wrong 'optimal' on the reproducer (its optimum is 0), and a
    .solu that plants a known value below the true optimum of the other (any right bound crosses it)."""
    folder = tmp_path / "mine"
    folder.mkdir()
    shutil.copy(DEFECT / "fractional_bound_optimal.mps", folder / "wrongopt.mps")
    (folder / "crossing.mps").write_text(
        "NAME crossing\nROWS\n N obj\n G c1\nCOLUMNS\n    MARKER 'MARKER' 'INTORG'\n    x obj 1 c1 1\n"
        "    MARKER 'MARKER' 'INTEND'\nRHS\n    RHS c1 1.5\nBOUNDS\n UP BND x 10\nENDATA\n")  # min x, x >= 1.5: 2
    (folder / "known.solu").write_text(mps_check.write_solu([("wrongopt", "optimal", 0.0, 0.0),
                                                             ("crossing", "best-known", 1.0, None)]))
    return folder


def test_planted_wrong_optimal_and_bound_crossing_are_failures(tmp_path, planted):
    res = LR.run_library_bench(tmp_path / "out", ["highs"], 10.0, folder=planted, progress=lambda *_: None)
    by = {r["instance"]: r for r in res["rows"]}
    assert by["wrongopt"]["status"] == "optimal" and by["wrongopt"]["objective"] == 1.0  # the defect, on the raw file
    assert by["wrongopt"]["failure"].startswith("wrong optimal") and not by["wrongopt"]["solved"]
    assert "bound crossing" in by["crossing"]["failure"] and not by["crossing"]["reached"]
    assert by["crossing"]["checked"] and by["crossing"]["objective"] == 2.0
    summary, = res["summary"]
    assert summary["failures"] == 2 and summary["solved"] == 0
    listed = list(csv.DictReader(open(tmp_path / "out" / "library_failures.csv")))
    assert sorted(r["instance"] for r in listed) == ["crossing", "wrongopt"]
    assert "## Failures (2)" in (tmp_path / "out" / "library_report.md").read_text()


def test_right_answers_on_a_user_folder_are_no_failures(tmp_path, planted):
    """SCIP and CBC solve the same two files: the reproducer's true optimum 0 is not a failure."""
    others = [s for s in ("scip", "cbc") if backends.available(s)]
    if not others:
        pytest.skip("neither SCIP nor CBC is installed")
    res = LR.run_library_bench(tmp_path / "out", others, 10.0, folder=planted, progress=lambda *_: None)
    for r in res["rows"]:
        if r["instance"] == "wrongopt":
            assert r["solved"] and not r["failure"] and r["objective"] == 0.0


def test_python_bench_and_its_errors_name_python_parameters(tmp_path, planted):
    res = library_api.bench(tmp_path / "o", folder=planted, solvers="highs", time_limit=5)
    assert set(res["rows"]["instance"]) == {"wrongopt", "crossing"} and int(res["summary"]["failures"].sum()) == 2
    with pytest.raises(InstanceError) as exc:
        library_api.bench(tmp_path / "o2", folder=planted, solvers="highs,gurobi")
    assert str(exc.value).startswith("solvers:")
    with pytest.raises(InstanceError, match="^folder:"):
        library_api.bench(tmp_path / "o3", folder=tmp_path / "nothing-here")
    with pytest.raises(InstanceError, match="^time_limit:"):
        library_api.bench(tmp_path / "o4", folder=planted, time_limit=-1)


def test_export_and_load_solution_round_trip(tmp_path):
    """export() writes the file; an outside solver's .sol on it, read back by load_solution(), has the
    package's optimum by the reference evaluation, and the checker accepts it."""
    inst = generate_tetris(5, 8, 3, seed=2)
    rec, = library_api.export(inst, tmp_path / "t.mps", solve=False)
    out = backends.solve_file(rec["path"], "highs", time_limit=20, mip_gap=1e-9)
    model = mps_check.read_mps(rec["path"])
    mps_check.write_sol(tmp_path / "t.sol", {k: v for k, v in out.values.items() if k in model.cost}, out.objective)
    got = library_api.load_solution(inst, tmp_path / "t.sol", model_file=rec["path"])
    ref = tetris.solve(inst)
    assert got["check"].ok and got["violations"] == []
    assert abs(got["objective"] - ref.objective) <= 1e-6 * max(1.0, abs(ref.objective))


def test_load_solution_bad_input_is_one_line(tmp_path):
    inst = generate_cassini(4, 2, seed=1)
    with pytest.raises(InstanceError, match="^candidate:"):
        library_api.load_solution(inst, {})
    with pytest.raises(InstanceError, match="^solution:"):
        library_api.load_solution(generate_hived(1, 4, 2, 3, seed=1), {"nope": 1.0})
    with pytest.raises(InstanceError, match="^out:"):
        library_api.export(inst, tmp_path / "x.txt")


def test_bench_refuses_an_existing_file_as_out_before_any_work(tmp_path, capsys, monkeypatch):
    import placement.app.bench as B

    def no_work(*a, **k):
        raise AssertionError("work started before the output folder was checked")

    monkeypatch.setattr(B, "_run_family", no_work)
    monkeypatch.setattr(LR, "_library_jobs", no_work)
    taken = tmp_path / "taken"
    taken.write_text("mine")
    for argv in (["bench", "--quick", "--out", str(taken)], ["bench", "--library", "--quick", "--out", str(taken)]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("error: --out") and "\n" not in err
        assert taken.read_text() == "mine"


def test_seeds_give_one_run_each_and_the_spread(tmp_path, planted):
    res = LR.run_library_bench(tmp_path / "out", ["highs"], 10.0, folder=planted, seeds=3, seed=4,
                               progress=lambda *_: None)
    runs = [(r["instance"], r["seed"]) for r in res["rows"]]
    assert sorted(runs) == sorted((n, s) for n in ("crossing", "wrongopt") for s in (4, 5, 6))
    spread = max(max(ts) - min(ts) for ts in (
        [r["solver_time_s"] for r in res["rows"] if r["instance"] == n] for n in ("crossing", "wrongopt")))
    summary, = res["summary"]
    assert summary["runs"] == 6 and summary["failures"] == 6 and summary["time_spread_s"] == spread
    with pytest.raises(InstanceError, match="seeds"):
        LR.run_library_bench(tmp_path / "o2", ["highs"], 10.0, folder=planted, seeds=0)


def test_cli_entry_takes_a_folder(tmp_path, planted, capsys):
    """cmd_library with ``--library DIR`` (args.library a path) benches the folder; --rebuild refuses it."""
    import argparse

    from placement.app.bench.library_run import cmd_library

    args = argparse.Namespace(library=str(planted), solvers=["highs"], time_limit=5.0, rebuild=False, only=None,
                              out=str(tmp_path / "o"), quick=False, seed=0)
    assert cmd_library(args) == 0
    out = capsys.readouterr().out
    assert "2 failure(s)" in out and (tmp_path / "o" / "library_failures.csv").exists()
    args.rebuild = True
    with pytest.raises(InstanceError, match="--rebuild"):
        cmd_library(args)


def test_command_line_and_front_door_take_a_folder(tmp_path, planted, capsys):
    """``placement bench --library DIR --seeds 2`` benches the user's folder (both seeds run), and the
    Python front door exposes the same verbs as ``placement.bench``/``export``/``load_solution``."""
    import placement
    from placement.app import library_api
    from placement.app.cli import main

    out = tmp_path / "cli"
    assert main(["bench", "--library", str(planted), "--solvers", "highs", "--time-limit", "5", "--seeds", "2",
                 "--out", str(out)]) == 0
    assert "4 failure(s)" in capsys.readouterr().out   # two planted failures, each on both seeds
    assert main(["bench", "--library", str(planted), "--seeds", "0", "--out", str(tmp_path / "x")]) == 2
    assert not (tmp_path / "x").exists()
    assert (placement.bench, placement.export, placement.load_solution) == (
        library_api.bench, library_api.export, library_api.load_solution)
