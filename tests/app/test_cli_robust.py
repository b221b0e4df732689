"""The command line keeps its promises: one line and exit 2 for bad input, results never lost."""

import json
import os
import shutil
import subprocess
import sys

import pytest
from placement.instances import generate_hived, generate_tetris

from placement.app.cli import main
from placement.tetris import instance_to_json


@pytest.fixture(scope="module")
def tetris_file(tmp_path_factory):
    p = tmp_path_factory.mktemp("t") / "i.json"
    p.write_text(json.dumps(instance_to_json(generate_tetris(6, 8, 2, seed=3))))
    return p


def _one_line(capsys, expect: str):
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    assert "Traceback" not in err
    assert expect in err, err


@pytest.mark.parametrize("argv,expect", [
    (["solve", "{f}", "--time-limit", "abc"], "error: --time-limit: must be a number"),
    (["solve", "{f}", "--time-limit", "inf"], "error: --time-limit: must be a positive finite number"),
    (["solve", "{f}", "--option", "noeq"], "error: --option: must be key=value"),
    (["solve", "{f}", "--option", "seed=1"], "'seed' is set with --seed"),
    (["solve", "{f}", "--option", "time_limit=5"], "'time_limit' is set with --time-limit"),
    (["solve", "{f}", "--solver", "hill-climb", "--option", "max_passes=x"], "--option max_passes: must be int"),
    (["solve", "{f}", "--solver", "hill-climb-ils", "--option", "kicks=x"], "--option kicks: must be int"),
    (["solve", "{f}", "--solver", "hill-climb", "--option", "order=bogus"], "must be one of ['gain', 'gain_per_byte']"),
    (["solve", "{f}", "--solver", "replicas", "--option", "home=[0,1]"], "cannot be set from the command line"),
    (["solve", "{f}", "--solver", "hill-climb", "--option", "max_passes=" + "[" * 5000], "--option"),
    (["solve", "{f}", "--solver", "hill-climb", "--option", "max_passes=" + "9" * 5000], "--option"),
    (["solve", "{f}", "--solver", "hill-climb", "--option", "bogus=1"], "is not a parameter of solver"),
    (["solve", "{f}", "--solver", "nope"], "--solver: must be one of"),
    (["solve", "{f}", "--seed", "-1"], "error: --seed: must be a non-negative integer"),
    (["generate", "tetris", "--seed", "-1"], "error: --seed: must be a non-negative integer"),
    (["generate", "cassini", "--seed", "-1"], "error: --seed: must be a non-negative integer"),
    (["generate", "tetris", "--tables", "x"], "error: --tables:"),
    (["solve"], "error: instance: is required"),
    (["solve", "{f}", "--bogus"], "error: --bogus: is not an option"),
    (["frobnicate"], "error: command:"),
])
def test_bad_command_lines_are_one_line_exit_2(tetris_file, tmp_path, capsys, argv, expect):
    out = tmp_path / "o.json"
    argv = [a.replace("{f}", str(tetris_file)) for a in argv]
    with pytest.raises(SystemExit) as e_info:
        rc = main(argv + (["-o", str(out)] if argv[0] == "solve" and len(argv) > 1 else []))
        raise SystemExit(rc)
    assert e_info.value.code == 2
    _one_line(capsys, expect)
    assert not out.exists()


def test_solver_options_of_the_right_type_pass(tetris_file, tmp_path):
    out = tmp_path / "o.json"
    assert main(["solve", str(tetris_file), "--solver", "hill-climb", "--option", "max_passes=1",
                 "--option", "order=gain_per_byte", "--seed", "2", "-o", str(out)]) == 0
    assert json.loads(out.read_text())["status"] == "feasible"


def test_deterministic_model_given_a_seed_prints_one_note(tetris_file, capsys):
    assert main(["solve", str(tetris_file), "--seed", "3"]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("note: ") and "seed" in err


def _placement() -> list[str]:
    exe = shutil.which("placement", path=os.path.dirname(sys.executable))
    return [exe] if exe else [sys.executable, "-m", "placement.app.cli"]


@pytest.mark.parametrize("unbuffered", ["1", ""])
@pytest.mark.parametrize("solver", ["hill-climb", "exact"])
def test_closed_stdout_never_costs_the_output_file(tetris_file, tmp_path, unbuffered, solver):
    out = tmp_path / "o.json"
    env = dict(os.environ, PYTHONUNBUFFERED=unbuffered)
    if not unbuffered:
        env.pop("PYTHONUNBUFFERED")
    proc = subprocess.Popen(_placement() + ["solve", str(tetris_file), "--solver", solver, "-o", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    proc.stdout.readline()  # like `| head -1`: read one line, then leave
    proc.stdout.close()
    err = proc.stderr.read().decode()
    rc = proc.wait(timeout=120)
    assert rc == 0, err
    assert "Traceback" not in err
    doc = json.loads(out.read_text())
    assert doc["solver"] and doc["solution"] is not None


def test_stdout_closed_before_start_still_writes(tetris_file, tmp_path):
    out = tmp_path / "o.json"
    r = subprocess.run(_placement() + ["solve", str(tetris_file), "--solver", "hill-climb", "-o", str(out)],
                       stderr=subprocess.PIPE,
                       env=dict(os.environ, PYTHONUNBUFFERED="1"), timeout=120,
                       stdin=subprocess.DEVNULL, pass_fds=(), close_fds=True,
                       preexec_fn=lambda: os.close(1))
    assert r.returncode == 0, r.stderr.decode()
    assert json.loads(out.read_text())["status"] == "feasible"


def test_buddy_takes_a_time_limit_without_warnings(tmp_path, capsys):
    from placement.hived.config import instance_to_json as hived_json

    p = tmp_path / "h.json"
    p.write_text(json.dumps(hived_json(generate_hived(seed=1))))
    out = tmp_path / "o.json"
    assert main(["solve", str(p), "--solver", "buddy", "--time-limit", "5", "-o", str(out)]) == 0
    assert capsys.readouterr().err == ""
    assert json.loads(out.read_text())["status"] == "optimal"


def test_buddy_time_limit_is_a_status():
    from placement.solvers import buddy

    r = buddy.solve(generate_hived(seed=1, overload=2), time_limit=0.0)
    assert r.status in ("time_limit", "optimal")
    assert r.solution is not None


def test_heuristics_without_a_feasible_answer_say_proof_false():
    """Storage too small for the tables: no placement is feasible; heuristics say so, proving nothing."""
    from placement.solvers import hill_climb, replicas

    from placement.tetris import load_instance

    doc = instance_to_json(generate_tetris(6, 8, 2, seed=3))
    for r in doc["regions"]:
        r["storage_capacity"] = 1
    inst = load_instance(doc)
    for r in (hill_climb.solve(inst, time_limit=5), replicas.solve(inst, time_limit=5)):
        assert r.status == "infeasible", r.status
        assert r.stats["proof"] is False


def test_simulate_scan_interval_bounded(tmp_path, capsys):
    rc = main(["simulate", "philly", "--sample", "5", "--scan", "1e-300", "-o", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("error: --scan: must be at least 1 s"), err
    assert not (tmp_path / "o").exists()


def test_simulate_option_values_are_bounded(tmp_path, capsys):
    rc = main(["simulate", "philly", "--sample", "5", "--option", "x=" + "[" * 5000, "-o", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("error: --option:"), err
