"""``placement export`` (models/export.py): every exact model as MPS / LP, read back with its optimum.

The file is written by the modelling layer's own writer (Pyomo, or highspy for the matrix
models); read back by HiGHS (``Highs.readModel``) it must have the optimum the in-memory
solve proved (1e-6 relative). Tetris's file carries every chord of each square term up front, so
it is written without any solve and is the same bytes at any time limit (models/export.py).
"""

from __future__ import annotations

import highspy
import numpy as np
import pytest
from hypothesis import given, settings
from placement.instances import generate_cassini, generate_hived, generate_tetris
from placement.models import backends, cassini, export, hived, schedule_bound, tetris, tetris_bound
from placement.models.schedule_bound import BoundInstance

from placement.app.cli import main
from placement.errors import InstanceError
from tests.support import tiny_tetris

REL = 1e-6


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= REL * max(1.0, abs(a), abs(b))


def _highs_file_optimum(path) -> float:
    """The optimum of a model file as HiGHS reads it (its own reader, not our backend code)."""
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("mip_rel_gap", 1e-9)
    h.setOptionValue("mip_feasibility_tolerance", 1e-9)
    assert h.readModel(str(path)) == highspy.HighsStatus.kOk
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    return h.getInfo().objective_function_value


@settings(max_examples=5)
@given(tiny_tetris)
def test_tetris_exact_file_has_the_in_memory_optimum(tmp_path_factory, inst):
    path = tmp_path_factory.mktemp("x") / "t.mps"
    rec, = export.write("tetris", inst, path)
    memory = rec["in_memory"]
    assert memory["status"] == "optimal"
    assert _close(_highs_file_optimum(path), memory["objective"])


def test_tetris_models_read_back(tmp_path):
    inst = generate_tetris(6, 9, 3, seed=5)
    ref = tetris.solve(inst, time_limit=60)
    for suffix in (".mps", ".lp"):
        rec, = export.write("tetris", inst, tmp_path / f"e{suffix}")
        assert rec["sense"] == "min" and rec["integers"] > 0
        assert _close(_highs_file_optimum(rec["path"]), ref.objective)
    suffix = ".mps"
    # the joint model: its in-memory optimum
    rec, = export.write("tetris", inst, tmp_path / f"j{suffix}", "joint")
    assert rec["in_memory"]["status"] == "optimal"
    assert _close(_highs_file_optimum(rec["path"]), rec["in_memory"]["objective"])
    # the relaxation's MIP: its optimum is the bound method "mip"'s model value
    rec, = export.write("tetris", inst, tmp_path / f"b{suffix}", "bound-mip")
    mip = tetris_bound.solve(inst, method="mip", mip_gap=1e-9)
    assert _close(_highs_file_optimum(rec["path"]), mip.stats["model_objective"])


def test_cassini_link_and_cluster_files(tmp_path):
    inst = generate_cassini(4, 2, seed=11)
    recs = export.write("cassini", inst, tmp_path / "c.mps")
    assert recs and all(r["sense"] == "max" for r in recs)
    for r in recs:
        mem = cassini.solve_cluster(inst, r["candidate"])
        assert _close(_highs_file_optimum(r["path"]), mem.stats["model_objective"])
    from placement.cassini.circle import unified_circle

    for r in export.write("cassini", inst, tmp_path / "l.lp", "link"):
        circ = unified_circle([inst.job[n] for n in r["jobs"]], inst.topology.capacity[r["link"]],
                              inst.precision_deg, inst.max_angles)
        mem = cassini.solve_link(circ)
        assert _close(_highs_file_optimum(r["path"]), mem.stats["model_objective"])


@pytest.mark.parametrize("model,suffix", [("exact", ".mps"), ("feasibility", ".mps"), ("exact-pulp", ".mps"),
                                          ("exact-pulp", ".lp")])
def test_hived_file(tmp_path, model, suffix):
    inst = generate_hived(2, 4, 2, 4, seed=3)
    rec, = export.write("hived", inst, tmp_path / f"h{suffix}", model)
    assert rec["sense"] == "max"
    mem = hived.solve(inst, form="feasibility" if model == "feasibility" else "max")
    assert _close(_highs_file_optimum(rec["path"]), mem.stats["model_objective"])


def test_schedule_bound_file(tmp_path):
    b = BoundInstance(release=np.array([0.0, 2.0, 5.0]), work=np.array([10.0, 20.0, 5.0]), gpus=np.array([1, 2, 1]),
                      rates=np.array([[1.0, 0.8, 0.5]] * 3), total_gpus=4, machines=2, gpus_per_machine=2, racks=1,
                      gpus_per_rack=4)
    for objective in ("makespan", "mean_jct"):
        rec, = export.write_schedule_bound(b, tmp_path / f"{objective}.mps", objective=objective, buckets=8)
        mem = schedule_bound.solve(b, objective, buckets=8, max_doublings=0)
        shift = float(b.release.min()) if objective == "makespan" else 0.0  # the makespan counts from the first arrival
        assert _close(_highs_file_optimum(rec["path"]) - shift, mem.objective)


def test_cli_export_writes_and_reports(tmp_path, capsys):
    inst_path = tmp_path / "g.json"
    assert main(["generate", "tetris", "--tables", "6", "--jobs", "8", "--seed", "2", "-o", str(inst_path)]) == 0
    out = tmp_path / "g.mps"
    assert main(["export", str(inst_path), "-o", str(out), "--manifest", str(tmp_path / "m.json")]) == 0
    assert out.exists() and (tmp_path / "m.json").exists()
    assert "wrote" in capsys.readouterr().out
    ref = tetris.solve(generate_tetris(6, 8, 3, seed=2))
    got = backends.solve_file(out, "highs", time_limit=30, mip_gap=1e-9)
    assert _close(got.objective, ref.objective)


@pytest.mark.parametrize("argv,field", [
    (["-o", "OUT/x.txt"], "-o"),
    (["-o", "OUT/x.mps", "--model", "nope"], "model"),
    (["-o", "OUT/x.mps", "--option", "bogus=1"], "--option"),
])
def test_cli_export_bad_input_is_one_line(tmp_path, capsys, argv, field):
    inst_path = tmp_path / "g.json"
    main(["generate", "tetris", "--tables", "4", "--jobs", "4", "-o", str(inst_path)])
    capsys.readouterr()
    argv = [a.replace("OUT", str(tmp_path)) for a in argv]
    assert main(["export", str(inst_path), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {field}") and "\n" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.json"]  # nothing written


def test_write_rejects_other_families(tmp_path):
    with pytest.raises(InstanceError, match="instance"):
        export.write("dally", None, tmp_path / "x.mps")
