"""``placement sweep``: serial = LocalCluster = resumed, a killed worker loses no cell, bad specs."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
import yaml

from placement.app.cli import main
from placement.app.sweep import expand_cells, load_spec, run_sweep

TIMEY = ("wall_time_s", "solver_time_s")


def _spec(tmp_path, **over) -> Path:
    doc = {"kind": "solve", "family": "tetris", "solvers": ["exact", "hill-climb"],
           "sizes": [{"tables": 5, "jobs": 6, "regions": 2}, {"tables": 6, "jobs": 8, "regions": 2}],
           "seeds": [0, 1], "time_limit": 60}
    doc.update(over)
    p = tmp_path / "spec.yaml"
    p.write_text(yaml.safe_dump(doc))
    return p


def _comparable(rows):
    out = []
    for r in rows:
        out.append({k: v for k, v in r.items()
                    if k not in TIMEY and not (k.startswith("stat.") and (k.endswith("_s") or "per_s" in k
                                                                        or "time" in k))})
    return out


@pytest.mark.slow
def test_local_cluster_equals_serial_and_resume_runs_nothing(tmp_path):
    spec = load_spec(_spec(tmp_path))
    serial = run_sweep(spec, tmp_path / "serial", workers=0, progress=False)
    dask = run_sweep(spec, tmp_path / "dask", workers=2, progress=False)
    assert serial["ran"] == dask["ran"] == len(expand_cells(spec)) == 8
    assert _comparable(serial["rows"]) == _comparable(dask["rows"])
    again = run_sweep(spec, tmp_path / "dask", workers=2, progress=False)
    assert again["ran"] == 0 and again["cached"] == 8
    assert _comparable(again["rows"]) == _comparable(dask["rows"])
    # the exact solver's rows are the reference of gap_to_best: never above the heuristic's value
    for r in serial["rows"]:
        if r["solver"] == "exact":
            assert r["status"] == "optimal" and r["gap_to_best"] == 0.0
    for name in ("results.csv", "results.parquet", "summary.md", "gap_vs_size.png"):
        assert (tmp_path / "dask" / name).stat().st_size > 0
    import pyarrow.parquet as pq

    table = pq.read_table(tmp_path / "dask" / "results.parquet")
    assert table.num_rows == 8 and "gap_to_best" in table.column_names


@pytest.mark.slow
def test_killed_worker_loses_no_cell(tmp_path):
    spec = load_spec(_spec(tmp_path, sizes=[{"tables": 12, "jobs": 20, "regions": 3}], seeds=[0, 1, 2, 3, 4, 5],
                           solvers=["exact"]))
    killed = []

    def kill_one_worker(key, row):
        if killed:
            return
        workers = [p for p in psutil.Process().children(recursive=True) if "python" in p.name().lower()]
        if workers:
            workers[-1].kill()
            killed.append(workers[-1].pid)

    res = run_sweep(spec, tmp_path / "out", workers=2, progress=False, on_cell=kill_one_worker)
    assert killed, "no worker process found to kill"
    cells = list((tmp_path / "out" / "cells").glob("*.json"))
    assert len(cells) == len(res["rows"]) == 6 == res["ran"]
    assert all(r["status"] == "optimal" for r in res["rows"]), [r.get("error") for r in res["rows"]]
    assert len({json.loads(c.read_text())["key"] for c in cells}) == 6


def _placement() -> list[str]:
    exe = Path(sys.executable).parent / "placement"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "placement.app.cli"]


@pytest.mark.slow
def test_killed_sweep_reruns_only_missing_cells(tmp_path):
    spec_path = _spec(tmp_path, sizes=[{"tables": 10, "jobs": 15, "regions": 3}], seeds=list(range(8)),
                      solvers=["exact"])
    out = tmp_path / "out"
    proc = subprocess.Popen(_placement() + ["sweep", str(spec_path), "-o", str(out), "--workers", "0"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline and len(list((out / "cells").glob("*.json"))) < 2:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done = len(list((out / "cells").glob("*.json")))
    assert 2 <= done < 8, done
    res = run_sweep(load_spec(spec_path), out, workers=0, progress=False)
    assert res["cached"] == done and res["ran"] == 8 - done
    assert len(list((out / "cells").glob("*.json"))) == 8


@pytest.mark.parametrize("over,expect", [
    ({"family": "nope"}, "family: must be one of"),
    ({"solvers": ["exact", "bogus"]}, "solvers[1]: must be one of"),
    ({"sizes": [{"tables": 5, "jobs": 6, "regions": 2}, {"tables": -3}]}, "sizes[1].tables"),
    ({"sizes": [{"tables": 10**12}]}, "sizes[0].tables: too large"),
    ({"sizes": [{"tablez": 5}]}, "sizes[0].tablez"),
    ({"seeds": [-1]}, "seeds[0]"),
    ({"seeds": []}, "seeds: must be a non-empty list"),
    ({"time_limit": -5}, "time_limit"),
    ({"options": {"hill-climb": {"order": "bogus"}}}, "options.hill-climb"),
    ({"options": {"hill-climb": {"seed": 3}}}, "options.hill-climb"),
    ({"bogus_field": 1}, "bogus_field: is not a field"),
    ({"kind": "other"}, "kind: must be"),
])
def test_bad_specs_fail_before_work_with_one_line(tmp_path, capsys, over, expect):
    out = tmp_path / "out"
    rc = main(["sweep", str(_spec(tmp_path, **over)), "-o", str(out), "--workers", "0"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and expect in err, err
    assert not (out / "cells").exists() or not list((out / "cells").iterdir())


def test_bad_simulation_specs(tmp_path, capsys):
    for doc, expect in [
        ({"kind": "simulate", "policies": ["nope"], "traces": [{"trace": "philly"}], "clusters": ["1x1x1x2x8"],
          "seeds": [0]}, "policies[0]: must be one of"),
        ({"kind": "simulate", "policies": ["fifo"], "traces": [{"trace": "philly", "hours": -1}],
          "clusters": ["1x1x1x2x8"], "seeds": [0]}, "hours"),
        ({"kind": "simulate", "policies": ["fifo"], "traces": [{"trace": "no-such-file.csv"}],
          "clusters": ["1x1x1x2x8"], "seeds": [0]}, "no-such-file.csv"),
        # what simulate refuses is refused before any cell runs
        ({"kind": "simulate", "policies": ["private"], "traces": [{"trace": "philly", "hours": 1}],
          "clusters": ["1x1x1x2x8"], "seeds": [0], "options": {"private": {"levels": "bogus"}}},
         "options.private: --option levels: must be one of ['multi', 'node']"),
        ({"kind": "simulate", "policies": ["hived"], "traces": [{"trace": "philly", "hours": 1}],
          "clusters": ["1x1x1x2x4"], "seeds": [0]}, "options.hived: cluster on 1x1x1x2x4: HiveD needs 8-GPU"),
        ({"kind": "simulate", "policies": ["quota"], "traces": [{"trace": "philly", "hours": 1}],
          "clusters": ["1x1x1x2x8"], "seeds": [0], "options": {"quota": {"assignment": {"t0": [0, 0, 0, 3]}}}},
         "options.quota: assignment on 1x1x1x2x8: does not fit the cluster's 2 nodes"),
        ({"kind": "simulate", "policies": ["mast"], "traces": [{"trace": "philly", "hours": 1}],
          "clusters": ["1x1x1x2x8"], "seeds": [0], "options": {"mast": {"quota_share": 0}}},
         "options.mast: --option quota_share: must be float > 0"),
    ]:
        p = tmp_path / "s.yaml"
        p.write_text(yaml.safe_dump(doc))
        assert main(["sweep", str(p), "-o", str(tmp_path / "o"), "--workers", "0"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and expect in err, err
        assert not (tmp_path / "o" / "cells").exists() or not list((tmp_path / "o" / "cells").iterdir())


def test_unreachable_scheduler_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("placement.app.sweep.run.CONNECT_TIMEOUT_S", 0.5)   # a refused port is retried until then
    rc = main(["sweep", str(_spec(tmp_path)), "-o", str(tmp_path / "o"), "--scheduler", "tcp://127.0.0.1:9"])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("error: --scheduler: cannot reach"), err


def test_simulation_sweep_serial(tmp_path):
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump({"kind": "simulate", "policies": ["fifo", "dally"],
                                 "traces": [{"trace": "philly", "start": 400, "hours": 240, "sample": 30}],
                                 "clusters": ["1x1x1x2x8"], "seeds": [0]}))
    res = run_sweep(load_spec(p), tmp_path / "o", workers=0, progress=False)
    assert res["ran"] == 2
    for r in res["rows"]:
        assert r["status"] == "ok" and r["replay_violations"] == 0, r
        assert r["jobs"] == 30 and r["finished"] + r["unschedulable"] + r["unfinished"] == 30
    assert (tmp_path / "o" / "metric_vs_cluster.png").exists()


def test_a_cell_that_raises_is_recorded_and_the_sweep_goes_on(tmp_path, monkeypatch):
    import placement.app.sweep.run as sw

    real = sw._run_solve

    def flaky(cell, row):
        if cell["seed"] == 1 and cell["solver"] == "hill-climb":
            raise RuntimeError("boom")
        return real(cell, row)

    monkeypatch.setattr(sw, "_run_solve", flaky)
    res = run_sweep(load_spec(_spec(tmp_path)), tmp_path / "o", workers=0, progress=False)
    errs = [r for r in res["rows"] if r["status"] == "error"]
    assert len(errs) == 2 and all("boom" in r["error"] for r in errs)
    assert sum(r["status"] == "optimal" for r in res["rows"]) == 4


def test_summary_medians_are_medians():
    from placement.app.sweep.report import _median

    assert _median([3.0, 1.0]) == 2.0 and _median([5, 1, 3]) == 3 and _median([None, "x", True]) is None
