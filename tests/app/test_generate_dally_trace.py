"""The Dally bench's workload is reachable from the command line.

``placement generate trace --kind dally-batch|dally-poisson`` writes the same jobs the bench
simulates (:func:`placement.app.bench.dally.dally_trace`), and ``placement simulate`` on that
file gives the bench's metrics for the same policy and cluster.
"""

from __future__ import annotations

import json

import pytest

from placement.app.bench.dally import run_case
from placement.app.cli import main
from placement.sim.instance import load_instance


@pytest.mark.parametrize("kind", ["batch", "poisson"])
def test_cli_trace_is_the_bench_trace_and_simulates_the_same(kind, tmp_path, capsys):
    path = tmp_path / "d.json"
    assert main(["generate", "trace", "--kind", f"dally-{kind}", "--jobs", "60", "--cluster", "1x1x2x8x8",
                 "--seed", "4", "-o", str(path)]) == 0
    inst = load_instance(json.loads(path.read_text()))
    case = run_case(2, kind, seed=4, policies=("dally", "tiresias"), jobs=60, bound=False)
    assert len(inst.trace.jobs) == case["jobs"] == 60
    assert all(j.gpus >= 2 and "submit" in j.synthetic for j in inst.trace.jobs)
    assert (kind == "batch") == all(j.submit == 0 for j in inst.trace.jobs)
    for row in case["rows"]:
        out = tmp_path / row["policy"]
        assert main(["simulate", str(path), "--policy", row["policy"], "--seed", "4", "-o", str(out)]) == 0
        summary = json.loads((out / "summary.json").read_text())
        assert summary["replay_ok"]
        assert summary["metrics"]["makespan_s"] == pytest.approx(row["makespan_h"] * 3600, rel=1e-9)
    capsys.readouterr()


def test_dally_kinds_refuse_more_jobs_than_the_trace_has(tmp_path, capsys):
    assert main(["generate", "trace", "--kind", "dally-batch", "--jobs", "100000", "-o", str(tmp_path / "x.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "jobs" in err[0] and not (tmp_path / "x.json").exists()
