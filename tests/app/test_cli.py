"""The command line: generate -> solve -> evaluate, and bad input (one line, exit 2, nothing written)."""

import json

import pytest

from placement.app.cli import main
from placement.tetris import evaluate, load_instance, load_solution


def test_generate_solve_evaluate_round_trip(tmp_path, capsys):
    inst_path, out_path = tmp_path / "i.json", tmp_path / "o.json"
    assert main(["generate", "tetris", "--tables", "6", "--jobs", "8", "--regions", "2", "--seed", "4",
                 "-o", str(inst_path)]) == 0
    assert main(["solve", str(inst_path), "--solver", "exact", "--time-limit", "30", "-o", str(out_path)]) == 0
    out = json.loads(out_path.read_text())
    assert set(out) >= {"problem", "solver", "status", "objective", "bound", "wall_time_s", "stats", "solution"}
    assert out["status"] == "optimal"
    inst = load_instance(json.loads(inst_path.read_text()))
    sol = load_solution(inst, out)
    assert out["objective"] == pytest.approx(evaluate(inst, sol).objective)
    capsys.readouterr()
    assert main(["evaluate", str(inst_path), str(out_path)]) == 0
    assert "violations: none" in capsys.readouterr().out


def test_generate_is_deterministic(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    for p in (a, b):
        assert main(["generate", "tetris", "--tables", "9", "--jobs", "11", "--seed", "7", "-o", str(p)]) == 0
    assert a.read_bytes() == b.read_bytes()


@pytest.mark.parametrize("content,expect", [
    ("{not json", "is not valid JSON"),
    ('{"problem": "tetris", "regions": [{"name": "r", "storage_capacity": -1}]}', "regions[0].storage_capacity"),
    ('{"problem": "nope"}', "problem: must be one of"),
    ("[1, 2]", "problem: missing"),
])
def test_bad_instance_one_line_exit_2_nothing_written(tmp_path, capsys, content, expect):
    bad, out = tmp_path / "bad.json", tmp_path / "out.json"
    bad.write_text(content)
    assert main(["solve", str(bad), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and expect in err and "\n" not in err
    assert not out.exists()


def test_missing_file_and_foreign_solution(tmp_path, capsys):
    assert main(["solve", str(tmp_path / "absent.json")]) == 2
    assert "file not found" in capsys.readouterr().err
    inst_path, sol_path = tmp_path / "i.json", tmp_path / "s.json"
    main(["generate", "tetris", "--tables", "3", "--jobs", "2", "-o", str(inst_path)])
    sol_path.write_text(json.dumps({"problem": "tetris", "home": {"other": "r0"}}))
    capsys.readouterr()
    assert main(["evaluate", str(inst_path), str(sol_path)]) == 2
    assert "solution.home.other" in capsys.readouterr().err


def test_unknown_solver_is_bad_input(tmp_path, capsys):
    inst_path = tmp_path / "i.json"
    main(["generate", "tetris", "--tables", "3", "--jobs", "2", "-o", str(inst_path)])
    assert main(["solve", str(inst_path), "--solver", "magic"]) == 2
    assert "--solver" in capsys.readouterr().err


def test_solver_options_pass_through_and_unknown_ones_are_rejected(tmp_path, capsys):
    inst_path, one, full = tmp_path / "i.json", tmp_path / "one.json", tmp_path / "full.json"
    main(["generate", "tetris", "--tables", "30", "--jobs", "50", "--regions", "4", "--seed", "3", "-o", str(inst_path)])
    assert main(["solve", str(inst_path), "--solver", "hill-climb", "--option", "max_passes=1", "-o", str(one)]) == 0
    assert main(["solve", str(inst_path), "--solver", "hill-climb", "-o", str(full)]) == 0
    passes_one = json.loads(one.read_text())["stats"]["passes"]
    passes_full = json.loads(full.read_text())["stats"]["passes"]
    assert passes_one == 1 and passes_full >= passes_one
    capsys.readouterr()
    assert main(["solve", str(inst_path), "--solver", "hill-climb", "--option", "bogus=1"]) == 2
    assert "--option: 'bogus' is not a parameter" in capsys.readouterr().err


@pytest.mark.parametrize("name,content,expect", [
    ("dup.json", '{"problem": "tetris", "move_quota": 1, "move_quota": 2}', "repeats the key 'move_quota'"),
    ("dup.yaml", "physicalCluster: {}\nvirtualClusters:\n  vc1: {}\n  vc1: {}\n", "line 4: repeats the key 'vc1'"),
])
def test_duplicate_keys_are_bad_input(tmp_path, capsys, name, content, expect):
    path = tmp_path / name
    path.write_text(content)
    assert main(["solve", str(path)]) == 2
    assert expect in capsys.readouterr().err


def test_output_paths_are_checked_before_any_work(tmp_path, capsys):
    inst_path = tmp_path / "i.json"
    main(["generate", "tetris", "--tables", "3", "--jobs", "2", "-o", str(inst_path)])
    capsys.readouterr()
    assert main(["solve", str(inst_path), "-o", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err
    assert main(["generate", "tetris", "-o", str(tmp_path / "missing" / "x.json")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert not (tmp_path / "missing").exists()
