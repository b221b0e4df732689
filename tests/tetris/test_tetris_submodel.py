"""The exact model's sub-problems (some homes fixed, free tables limited to some regions) against brute force."""

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from placement.instances import generate_tetris
from placement.models.tetris import build, solve

from placement.tetris import evaluate, violations
from tests.support import large

tiny = st.builds(
    lambda T, J, R, seed, G, K, q: generate_tetris(T, J, R, seed=seed, n_gpu_types=G, n_priorities=K, quota_share=q),
    T=st.integers(2, 7), J=st.integers(1, 10), R=st.integers(2, 4), seed=st.integers(0, 10_000),
    G=st.integers(1, 3), K=st.integers(1, 3), q=st.sampled_from([0.1, 0.3, 1.0]),
)


def _neighbourhood_brute_force(inst, fixed, regions):
    free = np.flatnonzero(fixed < 0)
    best = None
    for combo in itertools.product(regions, repeat=len(free)):
        home = fixed.copy()
        home[free] = combo
        ev = evaluate(inst, home)
        if not violations(inst, home, ev) and (best is None or ev.objective < best):
            best = ev.objective
    return best


@st.composite
def neighbourhoods(draw, instances=tiny):
    inst = draw(instances)
    T, R = inst.n_tables, inst.n_regions
    start = np.asarray(draw(st.lists(st.integers(0, R - 1), min_size=T, max_size=T)), dtype=np.int64)
    free = draw(st.lists(st.booleans(), min_size=T, max_size=T))
    fixed = np.where(free, -1, start)
    regions = sorted(draw(st.sets(st.integers(0, R - 1), min_size=1, max_size=R)))
    if len(regions) ** int((fixed < 0).sum()) > 1000:
        fixed[np.flatnonzero(fixed < 0)[4:]] = start[np.flatnonzero(fixed < 0)[4:]]
    return inst, fixed, regions


@given(neighbourhoods())
def test_sub_problem_optimum_equals_neighbourhood_brute_force(case):
    inst, fixed, regions = case
    best = _neighbourhood_brute_force(inst, fixed, regions)
    res = solve(inst, time_limit=60, fixed=fixed, regions=regions)
    if best is None:
        assert res.status == "infeasible"
        return
    assert res.status == "optimal", res.message
    assert res.objective == pytest.approx(best, rel=1e-9, abs=1e-9)
    home = res.solution.home
    assert np.array_equal(home[fixed >= 0], fixed[fixed >= 0])
    assert set(home[fixed < 0].tolist()) <= set(regions)


@given(neighbourhoods(large))
def test_sub_problem_at_large_magnitudes(case):
    inst, fixed, regions = case
    best = _neighbourhood_brute_force(inst, fixed, regions)
    res = solve(inst, time_limit=60, fixed=fixed, regions=regions)
    if best is None:
        assert res.status == "infeasible"
    else:
        assert res.status == "optimal", res.message
        assert res.objective == pytest.approx(best, rel=1e-9)


@given(neighbourhoods(), st.randoms(use_true_random=False))
def test_sub_model_value_equals_reference_at_any_consistent_placement(case, rnd):
    """With the free tables' homes fixed too, the sub-model's value is the full objective."""
    inst, fixed, regions = case
    home = fixed.copy()
    for t in np.flatnonzero(fixed < 0):
        home[t] = rnd.choice(regions)
    res = solve(inst, time_limit=60, fixed=fixed, regions=regions, fix_home=home)
    if violations(inst, home):
        assert res.status in ("infeasible", "feasible") or res.solution is None or violations(inst, res.solution) == []
        assert res.status != "optimal"
    else:
        assert res.status == "optimal"
        assert res.stats["model_objective"] == pytest.approx(evaluate(inst, home).objective, rel=1e-7, abs=1e-7)


def test_sub_model_is_small():
    """Only the free tables and the jobs reading them get variables."""
    inst = generate_tetris(300, 600, 6, seed=3)
    fixed = inst.arrays.home0.copy()
    fixed[:5] = -1
    m = build(inst, fixed=fixed, regions=[0, 1])
    assert len(m.x) == 10
    full = build(inst)
    assert len(m.x) < len(full.x) / 100
