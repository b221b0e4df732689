"""The scalable Tetris lower bound (models/tetris_bound/): valid against brute force and the exact model."""

import json

import pytest
from hypothesis import given, settings
from placement.instances import generate_tetris
from placement.models import tetris as exact
from placement.models import tetris_bound
from placement.solvers import hill_climb, lns

from placement.errors import InstanceError
from placement.tetris import evaluate
from tests.support import bound_tol as _tol
from tests.support import brute_force, tie_heavy
from tests.support import tiny_tetris as tiny


@settings(max_examples=12)
@given(tiny)
def test_bound_at_most_brute_force_optimum(inst):
    best, _ = brute_force(inst)
    for integer in (False, True):
        res = tetris_bound.solve(inst, integer=integer, time_limit=30, method="lp")
        assert res.status == "optimal"
        assert res.bound <= best + _tol(best)


@settings(max_examples=8)
@given(tie_heavy)
def test_bound_valid_with_zero_sizes_and_ties(inst):
    best, _ = brute_force(inst)
    res = tetris_bound.solve(inst, time_limit=30, method="lp")
    if best is None:   # no feasible placement: the relaxation may be infeasible too (a proof), or not
        assert res.status in ("optimal", "infeasible")
        return
    assert res.status == "optimal"
    assert res.bound <= best + _tol(best)


@pytest.mark.parametrize("size,seed", [((10, 15, 3), 3801), ((10, 15, 3), 3802), ((15, 25, 4), 3803),
                                       ((15, 25, 4), 3804), ((20, 40, 4), 3805)])
def test_bound_at_most_exact_optimum_on_fresh_seeds(size, seed):
    inst = generate_tetris(*size, seed=seed)
    # The limits are ceilings, not budgets: each solve takes 0.4-6 s alone; one run under a CPU-starved
    # machine hit a 60 s limit, so they are far above what an idle 2-core machine needs.
    opt = exact.solve(inst, time_limit=600)
    assert opt.status == "optimal"
    lp = tetris_bound.solve(inst, time_limit=120, method="lp")
    assert lp.status == "optimal"
    assert 0.0 <= lp.bound <= opt.objective + _tol(opt.objective)
    # more tangents or the integer variant never cross the optimum either
    assert tetris_bound.solve(inst, tangents=64, time_limit=30, method="lp").bound <= opt.objective + _tol(opt.objective)
    # nor does branching on hot tables' homes, which starts from the same LP and never falls below it
    br = tetris_bound.solve(inst, method="branch", max_nodes=100, time_limit=120)
    assert lp.bound - _tol(lp.bound) <= br.bound <= opt.objective + _tol(opt.objective)


def test_lp_bound_is_at_most_its_integer_variant():
    inst = generate_tetris(8, 12, 3, seed=3806)
    lp = tetris_bound.solve(inst, time_limit=30, method="lp")
    mip = tetris_bound.solve(inst, integer=True, time_limit=30, method="lp")
    best, _ = brute_force(inst)
    assert lp.bound <= mip.bound + _tol(mip.bound) <= best + 2 * _tol(best)


def test_heuristics_report_a_certified_gap_and_keep_their_decisions(tmp_path):
    inst = generate_tetris(10, 16, 3, seed=3807)   # the branching proves it in 360 nodes (12 x 20 x 3: 2,720)
    b = tetris_bound.solve(inst, time_limit=30, method="lp")
    path = tmp_path / "b.json"
    path.write_text(json.dumps({"problem": "tetris", **b.to_dict()}))
    plain = hill_climb.solve(inst)
    cert = hill_climb.solve(inst, bound=str(path))
    assert (cert.solution.home == plain.solution.home).all()
    assert cert.bound == pytest.approx(b.bound)
    assert cert.stats["certified_gap"] == pytest.approx((cert.objective - b.bound) / abs(b.bound))
    assert evaluate(inst, cert.solution).objective == pytest.approx(cert.objective)
    computed = hill_climb.solve(inst, bound="compute", bound_time_limit=60)
    auto = tetris_bound.solve(inst, time_limit=60)   # "compute" runs the default method, "auto" (branching here)
    assert computed.stats["certified_bound"] == pytest.approx(auto.bound)
    assert auto.bound >= b.bound - 1e-6 * abs(b.bound)   # the branching's root is the LP
    ln0 = lns.solve(inst, time_limit=None, iterations=3, seed=1, full_share=0)
    ln1 = lns.solve(inst, time_limit=None, iterations=3, seed=1, full_share=0, bound=b.bound)
    assert (ln0.solution.home == ln1.solution.home).all()
    assert ln1.stats["certified_gap"] == pytest.approx((ln1.objective - b.bound) / abs(b.bound))


def test_bound_file_of_another_instance_is_refused(tmp_path):
    a, other = generate_tetris(6, 8, 2, seed=1), generate_tetris(6, 8, 2, seed=2)
    path = tmp_path / "b.json"
    path.write_text(json.dumps(tetris_bound.solve(a, time_limit=30, method="lp").to_dict()))
    with pytest.raises(InstanceError, match="bound"):
        hill_climb.solve(other, bound=str(path))
    with pytest.raises(InstanceError, match="bound"):
        hill_climb.solve(other, bound=str(tmp_path / "missing.json"))


def test_cli_solver_bound(tmp_path, capsys):
    from placement.app.cli import main

    inst_path, out = tmp_path / "t.json", tmp_path / "b.json"
    assert main(["generate", "tetris", "--tables", "8", "--jobs", "12", "--regions", "3", "--seed", "5",
                 "-o", str(inst_path)]) == 0
    assert main(["solve", str(inst_path), "--solver", "bound", "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["status"] == "optimal" and doc["solution"] is None
    assert main(["solve", str(inst_path), "--solver", "hill-climb", "--option", f"bound={out}"]) == 0
    assert "certified_gap" in capsys.readouterr().out
