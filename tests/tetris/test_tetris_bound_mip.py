"""The MIP over the relaxation's matrix (models/tetris_bound/mip.py): its placement is feasible and valued by
the reference evaluation, its bound is at most the brute-force and the exact model's optimum."""

import json

import numpy as np
import pytest
from hypothesis import assume, given, settings
from placement.instances import generate_tetris
from placement.models import tetris as exact
from placement.models import tetris_bound
from placement.models.tetris_bound import mip, relaxation

from placement.errors import InstanceError
from placement.tetris.evaluation import evaluate, violations
from tests.support import bound_tol as _tol
from tests.support import brute_force, tie_heavy
from tests.support import tiny_tetris as tiny


@settings(max_examples=15, deadline=None)
@given(tiny)
def test_bound_at_most_the_optimum_and_the_placement_feasible(inst):
    best, _ = brute_force(inst)
    res = mip.solve(inst, time_limit=30)
    if best is None:   # no feasible placement: the argmax rows make every integer point one, so none here
        assert res.status in ("infeasible", "time_limit") and res.solution is None
        return
    assert res.status in ("optimal", "feasible") and not violations(inst, res.solution)
    assert res.objective == pytest.approx(evaluate(inst, res.solution).objective, rel=1e-12)
    assert res.bound <= best + _tol(best) <= res.objective + 2 * _tol(best)
    assert res.stats["bound_certificate"] == mip.CERTIFICATE


@settings(max_examples=5, deadline=None)
@given(tie_heavy)
def test_ties_and_zero_sizes_count_for_the_cpu_limit_where_the_evaluation_does(inst):
    # ties of an analytics job's loads go to the lowest region in the reference evaluation; the argmax
    # rows must agree, or HiGHS's placement would break (5) or miss the optimum
    best, _ = brute_force(inst)
    assume(best is not None)
    res = mip.solve(inst, time_limit=30)
    assert res.solution is not None and not violations(inst, res.solution)
    assert res.bound <= best + _tol(best) <= res.objective + 2 * _tol(best)


def test_at_most_the_exact_optimum_on_fresh_seeds():
    # 20x40x4, fresh seeds: the exact model proves the optimum (verified by the reference evaluation);
    # HiGHS's bound on this MIP is at most it, and its placement at least it
    for T, J, R, s in ((20, 40, 4, 3863), (20, 40, 4, 3864)):
        inst = generate_tetris(T, J, R, seed=s)
        ex = exact.solve(inst, time_limit=120)
        assert ex.status == "optimal"
        res = mip.solve(inst, time_limit=60)
        assert res.bound <= ex.objective + _tol(ex.objective) <= res.objective + 2 * _tol(ex.objective)


def test_the_argmax_rows_make_every_integer_point_a_placement_that_keeps_the_cpu_limit():
    inst = generate_tetris(8, 14, 3, seed=3863)
    with_rows = tetris_bound.build(inst, integer=True, exact_argmax=True)
    without = tetris_bound.build(inst, integer=True)
    assert with_rows.argmax_rows > 0 and without.argmax_rows == 0
    assert with_rows.rows.n == without.rows.n + with_rows.argmax_rows


def test_cli_method_mip_writes_a_placement_and_a_bound(tmp_path):
    from placement.app.cli import main
    from placement.tetris import load_instance

    inst_path, out = tmp_path / "t.json", tmp_path / "mip.json"
    assert main(["generate", "tetris", "--tables", "6", "--jobs", "10", "--regions", "3", "--seed", "3864",
                 "-o", str(inst_path)]) == 0
    assert main(["solve", str(inst_path), "--solver", "bound", "--option", "method=mip", "--time-limit", "30",
                 "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    inst = load_instance(json.loads(inst_path.read_text()))
    best, _ = brute_force(inst)
    home = np.asarray([inst.region_index[doc["solution"]["home"][t.name]] for t in inst.tables])
    assert doc["objective"] == pytest.approx(evaluate(inst, home).objective)
    assert doc["bound"] <= best + _tol(best) <= doc["objective"] + 2 * _tol(best)


def test_bad_options_are_refused():
    inst = generate_tetris(4, 5, 2, seed=1)
    with pytest.raises(InstanceError, match="time_limit"):
        mip.solve(inst, time_limit=0)
    with pytest.raises(InstanceError, match="mip_gap"):
        mip.solve(inst, mip_gap=1.5)
    with pytest.raises(InstanceError, match="method"):
        tetris_bound.solve(inst, method="nope")


def test_a_model_too_large_is_refused_before_anything_is_built(monkeypatch):
    inst = generate_tetris(8, 14, 3, seed=3863)
    m = tetris_bound.build(inst, integer=True, exact_argmax=True)
    nz = mip.argmax_nonzeros(inst)
    # the count from the arrays equals the entries the argmax rows really add
    assert nz == sum(len(v) for v in m.rows.v) - sum(len(v) for v in tetris_bound.build(inst, integer=True).rows.v)
    monkeypatch.setattr(mip, "MAX_ARGMAX_NONZEROS", nz - 1)
    monkeypatch.setattr(relaxation, "build", lambda *a, **k: pytest.fail("built despite the limit"))
    with pytest.raises(InstanceError, match="method"):
        mip.solve(inst, time_limit=10)
