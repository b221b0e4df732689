"""The persistent Tetris model (models/tetris_persistent.py): one model, many neighbourhoods, each exact."""

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from placement.instances import generate_tetris
from placement.models.tetris_persistent import PersistentTetris

from placement.tetris import evaluate, violations
from tests.support import brute_force


def _neighbourhood_optimum(inst, home, free, regions):
    """Brute force over the free tables' regions, the rest fixed at ``home``."""
    best = None
    for combo in itertools.product(regions, repeat=len(free)):
        cand = home.copy()
        cand[free] = combo
        ev = evaluate(inst, cand)
        if not violations(inst, cand, ev) and (best is None or ev.objective < best):
            best = ev.objective
    return best


small = st.builds(
    lambda T, J, R, seed: generate_tetris(T, J, R, seed=seed),
    T=st.integers(3, 6), J=st.integers(2, 10), R=st.integers(2, 3), seed=st.integers(0, 10_000),
).filter(lambda inst: inst.n_regions ** inst.n_tables <= 729)


@settings(max_examples=8, deadline=None)
@given(small, st.integers(0, 1000))
def test_every_neighbourhood_on_one_model_is_exact(inst, seed):
    """Several neighbourhoods in a row on one persistent model (cuts carried over): each answer is the
    brute-force optimum of its neighbourhood, and the whole instance gives the brute-force optimum."""
    best, best_home = brute_force(inst)
    if best is None or violations(inst, inst.arrays.home0):
        return
    rng = np.random.default_rng(seed)
    model = PersistentTetris(inst)
    home = inst.arrays.home0.copy()
    for _ in range(4):
        k = int(rng.integers(1, inst.n_tables + 1))
        free = np.sort(rng.choice(inst.n_tables, size=k, replace=False))
        # As in LNS, the free tables may always stay where they are.
        regions = sorted(set(rng.choice(inst.n_regions, size=int(rng.integers(1, inst.n_regions + 1)),
                                        replace=False).tolist()) | set(home[free].tolist()))
        res = model.solve(home, free, regions, time_limit=60.0, node_limit=None)
        want = _neighbourhood_optimum(inst, home, free, regions)
        tol = 1e-6 * max(1.0, abs(want))
        assert res.objective <= evaluate(inst, home).objective + tol  # never worse than the start
        if res.status == "optimal":
            assert abs(res.objective - want) <= tol
        assert res.objective == evaluate(inst, res.solution.home).objective
        assert not violations(inst, res.solution.home)
        home = res.solution.home
    res = model.solve(home, np.arange(inst.n_tables), range(inst.n_regions), time_limit=60.0, node_limit=None)
    assert res.status == "optimal"
    assert abs(res.objective - best) <= 1e-6 * max(1.0, abs(best))


def test_cutoff_with_nothing_better_is_a_proof_returning_the_incumbent():
    inst = generate_tetris(5, 8, 3, seed=4)
    best, best_home = brute_force(inst)
    model = PersistentTetris(inst)
    res = model.solve(best_home, np.arange(inst.n_tables), range(inst.n_regions), time_limit=60.0,
                      node_limit=None, highs_options={"objective_bound": best + 1e-9 * max(1.0, abs(best))})
    assert res.status in ("feasible", "optimal")
    assert np.array_equal(res.solution.home, best_home) or abs(res.objective - best) <= 1e-6 * abs(best)
    if res.status == "feasible":
        assert res.stats["verification"][-1]["claim"] == "infeasible"
