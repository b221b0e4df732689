"""Branching on tables' homes (models/tetris_bound/branch.py): valid against brute force, never below the LP,
and the numpy infeasibility certificate (models/tetris_bound/relaxation.py, farkas_value)."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from placement.instances import generate_tetris
from placement.models import tetris_bound
from placement.models.tetris_bound import branch

from placement.errors import InstanceError
from tests.support import bound_tol as _tol
from tests.support import brute_force, tie_heavy
from tests.support import tiny_tetris as tiny


@settings(max_examples=10, deadline=None)
@given(tiny)
def test_branch_bound_between_the_lp_and_the_brute_force_optimum(inst):
    best, _ = brute_force(inst)
    assume(best is not None)
    lp = tetris_bound.solve(inst, time_limit=30, method="lp")
    br = branch.solve(inst, time_limit=30, max_nodes=400)
    assert br.stats["root_bound"] == pytest.approx(lp.bound, rel=1e-6, abs=1e-6)
    assert lp.bound - _tol(lp.bound) <= br.bound <= best + _tol(best)


@settings(max_examples=5, deadline=None)
@given(tie_heavy)
def test_branch_bound_valid_with_zero_sizes_and_ties(inst):
    best, _ = brute_force(inst)
    br = branch.solve(inst, time_limit=30, max_nodes=400)
    if best is not None:   # without a feasible placement every answer holds; with one, never "infeasible"
        assert br.status != "infeasible" and br.bound <= best + _tol(best)


def test_a_complete_tree_closes_most_of_the_gap():
    # 6 tables x 3 regions: the whole tree fits in the node limit; the bound is then the minimum over
    # leaves where nothing is fractional, far above the LP and still at most the optimum
    inst = generate_tetris(6, 10, 3, seed=3821)
    best, _ = brute_force(inst)
    lp = tetris_bound.solve(inst, time_limit=30, method="lp")
    br = branch.solve(inst, time_limit=60, max_nodes=5000)
    assert br.status == "optimal" and br.stats["open_leaves"] >= 1
    assert lp.bound < 0.9 * best
    assert 0.95 * best <= br.bound <= best + _tol(best)


@settings(max_examples=5, deadline=None)
@given(tiny, st.integers(0, 2**31 - 1))
def test_farkas_value_is_never_positive_for_a_feasible_relaxation(inst, seed):
    # weak duality: psi(y) <= 0 for every y when a point exists (the current homes are one)
    m = tetris_bound.build(inst)
    rng = np.random.default_rng(seed)
    for y in (rng.normal(0, 1, m.rows.n), rng.normal(0, 100, m.rows.n), np.zeros(m.rows.n)):
        assert tetris_bound.farkas_value(m, y) <= 1e-9


def test_a_fixing_beyond_the_move_quota_is_closed_by_a_certified_ray():
    inst = generate_tetris(6, 10, 3, seed=3822)
    A = inst.arrays
    t = int(np.argmax(A.size))
    assert A.size[t] > inst.move_quota  # moving the largest table alone breaks the quota
    m = tetris_bound.build(inst)
    h, _ = tetris_bound.highs_model(m, 30.0, 1e-6)
    h.setOptionValue("solver", "simplex")
    other = (int(A.home0[t]) + 1) % inst.n_regions
    search = branch._Search(inst, m, h, float("inf"), 1e-6, 30)
    fix = {int(c): float(r == other) for r, c in enumerate(search.table_cols(t))}
    b, x, status = search.solve_node(fix)
    assert status == "Infeasible (certified)" and b == np.inf and x is None


def test_bad_options_are_refused():
    inst = generate_tetris(4, 5, 2, seed=1)
    with pytest.raises(InstanceError, match="max_nodes"):
        branch.solve(inst, max_nodes=0)
    with pytest.raises(InstanceError, match="time_limit"):
        branch.solve(inst, time_limit=0)


def test_cli_bound_methods(tmp_path):
    import json

    from placement.app.cli import main

    inst_path = tmp_path / "t.json"
    assert main(["generate", "tetris", "--tables", "6", "--jobs", "10", "--regions", "3", "--seed", "3823",
                 "-o", str(inst_path)]) == 0
    bounds = {}
    for method in ("lp", "branch", "hot", "mip"):
        out = tmp_path / f"{method}.json"
        assert main(["solve", str(inst_path), "--solver", "bound", "--time-limit", "30", "--option",
                     f"method={method}", "-o", str(out)]) == 0
        bounds[method] = json.loads(out.read_text())["bound"]
    from placement.tetris import load_instance

    best, _ = brute_force(load_instance(json.loads(inst_path.read_text())))
    assert bounds["lp"] <= bounds["branch"] + 1e-6 * max(1.0, best)
    assert max(bounds.values()) <= best + 1e-7 * max(1.0, best)
    with pytest.raises(InstanceError, match="method"):
        tetris_bound.solve(generate_tetris(4, 5, 2, seed=1), method="nope")
