"""``simulate -o`` and ``sweep -o``: targets checked before any work, outputs staged and moved into
place at the end, so a bad target, a failure or an interrupt leaves the folder as it was."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from placement.app.cli import main

ROOT = Path(__file__).resolve().parents[2]
RUN = ["simulate", "philly", "--start", "1200", "--hours", "1", "--cluster", "1x1x2x4x8"]


def _one_line(capsys, expect: str) -> None:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: -o: ") and expect in err, err


@pytest.mark.parametrize("make,expect", [
    (lambda d: d / ("a" * 300), "longer than"),
    (lambda d: d / "/".join(["b"] * 2100), "longer than 4,000 bytes"),
    (lambda d: (d / "dangling").symlink_to(d / "nowhere") or d / "dangling", "link to nothing"),
    (lambda d: (d / "loop").symlink_to(d / "loop") or d / "loop", "link to nothing"),
    (lambda d: (d / "file").write_text("x") and d / "file", "is a file"),
    (lambda d: (d / "o" / "summary.json").mkdir(parents=True) or d / "o", "is a folder where an output file goes"),
    (lambda d: d / "missing" / "o", "does not exist"),
])
def test_bad_simulate_targets_are_refused_before_work(tmp_path, capsys, make, expect):
    target = make(tmp_path)
    before = sorted(p.name for p in tmp_path.rglob("*"))
    assert main([*RUN, "-o", str(target)]) == 2
    _one_line(capsys, expect)
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


def test_a_failure_after_the_run_writes_nothing(tmp_path, capsys):
    out = tmp_path / "o"
    assert main([*RUN, "--bin", "1e-300", "-o", str(out)]) == 2
    assert capsys.readouterr().err.startswith("error: --bin")
    assert list(tmp_path.iterdir()) == []


def test_outputs_replace_an_earlier_run_file_by_file(tmp_path, capsys):
    out = tmp_path / "o"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    assert main([*RUN, "-o", str(out)]) == 0
    assert (out / "notes.txt").read_text() == "mine" and (out / "summary.json").exists()
    assert [p for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no staging folder left
    capsys.readouterr()


@pytest.mark.slow
def test_an_interrupt_leaves_nothing(tmp_path):
    exe = Path(sys.executable).parent / "placement"
    p = subprocess.Popen([str(exe), "simulate", "philly", "--start", "1200", "--hours", "600", "--cluster",
                          "1x1x2x4x8", "--policy", "tiresias", "-o", str(tmp_path / "o")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    p.stdout.readline()  # the first line is printed once the inputs are loaded: the run is under way
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 130 and err.decode().strip().splitlines()[-1] == "error: interrupted"
    assert os.listdir(tmp_path) == []


def test_sweep_targets(tmp_path, capsys):
    spec = str(ROOT / "instances" / "sweeps" / "tiny.yaml")
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "cells").write_text("x")
    assert main(["sweep", spec, "-o", str(tmp_path / "s"), "--workers", "0"]) == 2
    assert "is a file where the finished cells go" in capsys.readouterr().err
    assert main(["sweep", spec, "-o", str(tmp_path / "u"), "--scheduler", "tcp://127.0.0.1:9"]) == 2
    assert "--scheduler: cannot reach" in capsys.readouterr().err
    assert not (tmp_path / "u").exists()
