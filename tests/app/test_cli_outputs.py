"""Every command refuses its output path before any work: one line, exit 2, nothing printed on
standard output (no result computed) and nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from placement.instances import generate_tetris

import placement
from placement.app.cli import main
from placement.errors import InstanceError
from placement.tetris import instance_to_json

SWEEP = Path(__file__).resolve().parents[2] / "instances" / "sweeps" / "tiny.yaml"


@pytest.fixture
def place(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("keep\n")
    (tmp_path / "i.json").write_text(json.dumps(instance_to_json(generate_tetris(6, 8, 2, seed=3))))
    return tmp_path


@pytest.mark.parametrize("argv,expect", [
    (["generate", "tetris", "-o", ""], "error: -o: must name a file"),
    (["generate", "tetris", "-o", "afile/x.json"], "error: -o: folder 'afile' does not exist (it is a file)"),
    (["solve", "i.json", "--solver", "hill-climb", "-o", ""], "error: -o: must name a file"),
    (["solve", "i.json", "--solver", "hill-climb", "-o", "afile/r.json"], "error: -o: folder 'afile' does not exist (it is a file)"),
    (["simulate", "philly", "--hours", "1", "-o", "afile"], "error: -o: 'afile' is a file; give a folder"),
    (["simulate", "philly", "--hours", "1", "-o", "afile/run"], "error: -o: folder 'afile' does not exist (it is a file)"),
    (["sweep", str(SWEEP), "-o", "afile"], "error: -o: 'afile' is a file; give a folder"),
    (["reproduce", "dally", "--quick", "--out", "afile/rep"], "error: --out: folder 'afile' does not exist (it is a file)"),
])
def test_a_bad_output_path_is_refused_before_any_work(place, capsys, argv, expect):
    before = sorted(p.name for p in place.iterdir())
    assert main(argv) == 2
    cap = capsys.readouterr()
    assert cap.out == ""                     # nothing computed and printed (generate -o '' printed the instance)
    assert cap.err.count("\n") == 1 and cap.err.startswith(expect), cap.err
    assert sorted(p.name for p in place.iterdir()) == before
    assert (place / "afile").read_text() == "keep\n"


def test_run_save_names_its_parameter(place, monkeypatch):
    monkeypatch.setattr("placement.app.run.plot_run", lambda *a, **k: [])   # the files, not the plots
    run = placement.simulate(_tiny(), progress=False)
    with pytest.raises(InstanceError) as e:
        run.save("afile")
    assert e.value.field == "path" and "is a file; give a folder" in e.value.message
    with pytest.raises(InstanceError, match="path: must be a folder path, got int"):
        run.save(3)
    run.save(place / "out")
    assert (place / "out" / "summary.json").is_file()


def _tiny():
    from placement.sim.trace import Job, Trace

    return Trace("tiny", (Job("a", 0.0, 1, 10.0), Job("b", 1.0, 2, 5.0)))
