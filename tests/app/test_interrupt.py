"""An interrupt at any instant leaves the state before the command or its whole output.

Every writing command (``generate -o``, ``solve -o``, ``simulate -o``, ``sweep -o``,
``reproduce --out``) is interrupted at each of several instants: at the k-th file it writes
(a ``KeyboardInterrupt`` raised where ``SIGINT`` would surface), for k = 1, a middle one, the
last one and past the last. Exit 130 with the single line ``error: interrupted`` must leave the
output as it was before (no file of the new set, no staging folder); exit 0 must leave the whole
set. A real ``SIGINT`` sent while the outputs are moved into place is held until the last move
(exit 0, one ``note:`` line), and one sent to a running ``placement simulate`` process ends it
with 130 and the one line.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import placement.io as pio
from placement.app import reproduce as rp
from placement.app.cli import main

SIM_FILES = ("instance.json", "log.json", "log.csv", "jobs.csv", "timeseries.csv", "summary.json",
             "utilization_queue.png", "slo_violations.png", "jct_cdf.png")


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("intr")
    assert main(["generate", "trace", "--kind", "poisson", "--jobs", "25", "--seed", "1", "--cluster",
                 "1x1x1x2x4", "-o", str(d / "t.json")]) == 0
    assert main(["generate", "tetris", "--tables", "6", "--jobs", "8", "--regions", "2", "--seed", "1",
                 "-o", str(d / "tetris.json")]) == 0
    (d / "sweep.json").write_text(json.dumps({"kind": "solve", "family": "hived", "solvers": ["buddy"],
                                              "sizes": [{}], "seeds": [0, 1]}))
    return d


_WRITE_BYTES = pio.write_bytes


def _count_writes(monkeypatch, fail_at: int | None):
    """Count the files written (``placement.io.write_bytes``); raise KeyboardInterrupt at the
    ``fail_at``-th, as if SIGINT arrived while it was being written."""
    real = _WRITE_BYTES
    n = {"writes": 0}

    def write_bytes(path, data):
        n["writes"] += 1
        if fail_at is not None and n["writes"] == fail_at:
            raise KeyboardInterrupt
        return real(path, data)

    for mod in list(sys.modules.values()):  # modules that imported it by name, too
        if getattr(mod, "__name__", "").startswith("placement") and getattr(mod, "write_bytes", None) is not None \
                and getattr(mod.write_bytes, "__wrapped_io__", mod.write_bytes) is _WRITE_BYTES:
            monkeypatch.setattr(mod, "write_bytes", write_bytes)
    write_bytes.__wrapped_io__ = _WRITE_BYTES
    return n


def _snapshot(folder: Path) -> dict[str, bytes]:
    if not folder.exists():
        return {}
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _no_staging_left(parent: Path) -> bool:
    return not [p for p in parent.iterdir() if p.name.startswith(".") and p.name.endswith(".tmp")]


def _interrupt_at_each_instant(monkeypatch, capsys, argv, out: Path, complete, keep=lambda name: True):
    """Run ``argv`` once to count its writes, then interrupted at several of them."""
    before = {k: v for k, v in _snapshot(out).items() if keep(k)}
    n = _count_writes(monkeypatch, None)
    assert main(argv) == 0
    total = n["writes"]
    assert total >= 1 and complete(out)
    full = {k for k in _snapshot(out) if keep(k)}
    for fail_at in sorted({1, (total + 1) // 2, total, total + 1}):
        import shutil

        shutil.rmtree(out, ignore_errors=True)
        if before:
            out.mkdir(parents=True, exist_ok=True)
            for name, data in before.items():
                (out / name).parent.mkdir(parents=True, exist_ok=True)
                (out / name).write_bytes(data)
        capsys.readouterr()
        _count_writes(monkeypatch, fail_at)
        rc = main(argv)
        err = capsys.readouterr().err
        after = {k: v for k, v in _snapshot(out).items() if keep(k)}
        if fail_at <= total:
            assert rc == 130 and err == "error: interrupted\n", (fail_at, rc, err)
            assert after == before, f"interrupted at write {fail_at} of {total}: the output changed"
        else:
            assert rc == 0 and set(after) == full
        assert _no_staging_left(out.parent)
    return total


def test_generate_and_solve(inputs, tmp_path, monkeypatch, capsys):
    out = tmp_path / "gen.json"
    _interrupt_at_each_instant(monkeypatch, capsys, ["generate", "trace", "--jobs", "50", "-o", str(out)],
                               out, lambda p: p.is_file())
    res = tmp_path / "r.json"
    _interrupt_at_each_instant(monkeypatch, capsys, ["solve", str(inputs / "tetris.json"), "--solver",
                                                     "hill-climb", "-o", str(res)], res, lambda p: p.is_file())


def test_simulate_over_an_earlier_run(inputs, tmp_path, monkeypatch, capsys):
    out = tmp_path / "run"
    assert main(["simulate", str(inputs / "t.json"), "--policy", "fifo", "-o", str(out)]) == 0
    earlier = _snapshot(out)
    total = _interrupt_at_each_instant(
        monkeypatch, capsys, ["simulate", str(inputs / "t.json"), "--policy", "tiresias", "-o", str(out)], out,
        lambda p: all((p / f).is_file() for f in SIM_FILES))
    assert total == len(SIM_FILES)  # every file, the plots included, was an instant interrupted
    assert _snapshot(out) != earlier  # the last, uninterrupted run replaced the whole set


def test_sweep_results_land_as_one_set(inputs, tmp_path, monkeypatch, capsys):
    out = tmp_path / "sw"
    results = ("results.csv", "results.parquet", "summary.md", "gap_vs_size.png")
    _interrupt_at_each_instant(monkeypatch, capsys, ["sweep", str(inputs / "sweep.json"), "--workers", "0",
                                                     "-o", str(out)], out,
                               lambda p: all((p / f).is_file() for f in results),
                               keep=lambda name: not name.startswith("cells/"))  # the resume store


def _toy(ctx: rp.Context) -> None:
    from placement.app.shipped import cluster_arg
    from placement.sim.instance import SimInstance
    from placement.sim.trace import synthetic_trace

    inst = SimInstance(synthetic_trace("poisson", jobs=10, seed=0, max_gpus=4), cluster_arg("1x1x1x1x4"), perf="ideal")
    _res, _rows, summ = ctx.simulate(inst, "fifo", 0, "fifo")
    ctx.claim(claim="c", source="toy", paper="1", ours=[summ["mean_jct_s"]])


def test_reproduce(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(rp, "reproductions", lambda: {"toy": rp.Reproduction("toy", "Toy", "t", _toy, 1, 1)})
    out = tmp_path / "rep"
    _interrupt_at_each_instant(monkeypatch, capsys, ["reproduce", "toy", "--out", str(out)], out,
                               lambda p: (p / "report.md").is_file() and (p / "logs" / "fifo" / "log.json").is_file())


def test_a_signal_during_the_moves_waits_for_the_last(inputs, tmp_path, monkeypatch, capsys):
    real = pio._move_into

    def move_into(tmp, out):
        os.kill(os.getpid(), signal.SIGINT)  # delivered now, held by commit() until the moves end
        return real(tmp, out)

    monkeypatch.setattr(pio, "_move_into", move_into)
    out = tmp_path / "run"
    assert main(["simulate", str(inputs / "t.json"), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert err.startswith("note: interrupted after the outputs were in place") and err.count("\n") == 1
    assert all((out / f).is_file() for f in SIM_FILES) and _no_staging_left(tmp_path)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the handler is given back


def test_an_interrupt_while_the_commands_load_is_one_line(monkeypatch, capsys):
    import placement.app.cli as cli

    def loading():
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", loading)
    assert main(["simulate", "x"]) == 130
    assert capsys.readouterr().err == "error: interrupted\n"


def test_sigint_to_a_running_simulate(tmp_path):
    exe = Path(sys.executable).parent / "placement"
    p = subprocess.Popen([str(exe), "simulate", "philly", "--policy", "fifo", "-o", str(tmp_path / "run")],
                         cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=dict(os.environ, MPLBACKEND="Agg"))
    first = p.stdout.readline()  # the run has started: the trace is loaded and the policy runs
    assert "philly" in first
    time.sleep(0.2)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 130 and err == "error: interrupted\n", (p.returncode, err)
    assert not (tmp_path / "run").exists() and _no_staging_left(tmp_path)


def test_a_signal_while_the_files_are_written_drops_the_set_whole(inputs, tmp_path, monkeypatch, capsys):
    """A real SIGINT at the k-th file reaches no library mid-write: the files are finished into the
    staging folder, then the set is dropped whole before the move (exit 130, the output as it was)."""
    import placement.app.run as run_module

    real = run_module.write_outputs

    def write_outputs(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)  # delivered now, while the files are being written
        return real(*args, **kwargs)

    monkeypatch.setattr(run_module, "write_outputs", write_outputs)
    out = tmp_path / "run"
    assert main(["simulate", str(inputs / "t.json"), "-o", str(out)]) == 130
    assert capsys.readouterr().err == "error: interrupted\n"
    assert not out.exists() and _no_staging_left(tmp_path)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_the_entry_point_ignores_an_interrupt_once_the_command_returned(monkeypatch):
    """As the process's entry point (no argv) main leaves SIGINT ignored for the interpreter's
    teardown, so the exit code is the command's, never a death by the default handler."""
    monkeypatch.setattr(sys, "argv", ["placement", "generate", "--help"])
    try:
        with pytest.raises(SystemExit):   # argparse's --help exits inside the command
            main()
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
