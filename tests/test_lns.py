"""MIP-based LNS (solvers/lns.py) against brute force, the exact model and its hill-climbing start."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from instances import generate_tetris
from placement.tetris import evaluate, violations
from solvers import hill_climb, lns
from tests.tetris_oracle import brute_force

small = st.builds(
    lambda T, J, R, seed: generate_tetris(T, J, R, seed=seed),
    T=st.integers(3, 6), J=st.integers(2, 10), R=st.integers(2, 3), seed=st.integers(0, 10_000),
).filter(lambda inst: inst.n_regions ** inst.n_tables <= 729)

OPTS = dict(time_limit=None, iterations=8, sub_time_limit=60.0, size=4)


@settings(max_examples=10)
@given(small, st.integers(0, 3))
def test_lns_feasible_not_below_optimum_not_worse_than_start(inst, seed):
    res = lns.solve(inst, seed=seed, **OPTS)
    best, _ = brute_force(inst)
    assert res.status == "feasible"
    assert not violations(inst, res.solution)
    assert res.objective == evaluate(inst, res.solution).objective
    assert res.objective >= best - 1e-9 * max(1.0, abs(best))
    start = hill_climb.solve(inst, seed=seed)
    assert res.stats["start_objective"] == start.objective
    assert res.objective <= start.objective


def test_lns_is_deterministic_per_seed_and_improves_on_hill_climbing():
    inst = generate_tetris(20, 40, 4, seed=102)
    a = lns.solve(inst, seed=1, time_limit=None, iterations=6, sub_time_limit=600.0)
    b = lns.solve(inst, seed=1, time_limit=None, iterations=6, sub_time_limit=600.0)
    assert np.array_equal(a.solution.home, b.solution.home)
    assert a.objective == b.objective
    assert a.stats["rounds"] == 6
    assert a.objective <= a.stats["start_objective"]
