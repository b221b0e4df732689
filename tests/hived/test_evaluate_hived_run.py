"""``placement evaluate`` on a written HiveD run runs HiveD's own checks (sharing safety and the
start rows' classes, :func:`placement.sim.replay.guarantee_check`), with the VC assignment the run
recorded in ``summary.json`` (its dataclass form) or fitted for the cluster."""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest

from placement.app.cli import main

WINDOW = ["philly", "--start", "1200", "--hours", "6", "--cluster", "1x1x1x64x8"]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("hv") / "run"
    assert main(["simulate", *WINDOW, "--policy", "hived", "-o", str(out)]) == 0
    return out


def _evaluate(d, capsys) -> tuple[int, str]:
    capsys.readouterr()
    rc = main(["evaluate", str(d / "instance.json"), str(d / "log.json")])
    return rc, capsys.readouterr().out


def _copy(src, dst):
    dst.mkdir()
    for name in ("instance.json", "log.json", "summary.json"):
        (dst / name).write_bytes((src / name).read_bytes())
    return dst


def test_a_clean_run_passes_and_a_moved_guaranteed_cell_is_flagged(run_dir, tmp_path, capsys):
    assert _evaluate(run_dir, capsys)[0] == 0
    d = _copy(run_dir, tmp_path / "tampered")
    doc = json.loads((d / "log.json").read_text())
    row = next(r for r in doc["log"] if r[1] == "start" and "class=guaranteed" in r[5] and "cells=8:" in r[5])
    cell = int(row[5].split("cells=8:")[1].split(",")[0].split()[0])
    row[5] = row[5].replace(f"cells=8:{cell}", f"cells=8:{(cell + 1) % 64}", 1)
    (d / "log.json").write_text(json.dumps(doc))
    rc, out = _evaluate(d, capsys)
    assert rc == 1 and "outside its cells" in out


def test_the_recorded_assignment_form_builds_the_policy(run_dir, tmp_path, capsys):
    from placement.app.policy_data import build_policy
    from placement.app.shipped import cluster_arg

    fitted = build_policy("hived", cluster_arg("1x1x1x64x8"), table_regions=False).assignment_arg
    d = _copy(run_dir, tmp_path / "recorded")
    summary = json.loads((d / "summary.json").read_text())
    summary["run"]["options"] = {"assignment": asdict(fitted)}  # {"n_nodes": N, "cells": {...}}
    (d / "summary.json").write_text(json.dumps(summary))
    rc, out = _evaluate(d, capsys)
    assert rc == 0 and "do not build" not in out
