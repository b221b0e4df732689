"""The forest bound (models/tetris_bound/forest.py): the Lagrangian decomposition with multi-table ML
jobs kept whole along a spanning forest, each tree solved exactly by dynamic programming.

Checked: the DP's minimum equals the minimum over every home vector of the same objective (and the
objective at the DP's minimizer), the tables' block is never below lagrange's at the same
multipliers, and the bound stays below the brute-force optimum and the stored proven optima.
"""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from placement.instances import generate_tetris
from placement.models import tetris_bound
from placement.models.tetris_bound import forest, lagrange
from placement.solvers import hill_climb

from tests.support import brute_force, library_tetris, proven_tetris

tiny = st.builds(
    lambda T, J, R, seed, G, K, zipf, quota: generate_tetris(T, J, R, seed=seed, n_gpu_types=G, n_priorities=K,
                                                             zipf=zipf, quota_share=quota),
    T=st.integers(2, 6), J=st.integers(1, 14), R=st.integers(2, 3), seed=st.integers(0, 10_000),
    G=st.integers(1, 2), K=st.integers(1, 2), zipf=st.sampled_from([1.1, 2.5]), quota=st.sampled_from([0.1, 1.0]),
).filter(lambda inst: inst.n_regions ** inst.n_tables <= 729)


def _tol(v):
    return 1e-9 * max(1.0, abs(v))


def _random_point(dec, inst, rng, scale):
    lam0, mu0 = dec.start(inst.arrays.home0)
    lam = lam0 + scale * rng.normal(size=lam0.shape)
    return np.where(dec.on[None, :], lam, 0.0), mu0 + scale * rng.normal(size=mu0.shape)


@settings(max_examples=12, deadline=None)
@given(tiny, st.integers(0, 2**31 - 1))
def test_tree_dp_is_the_exact_minimum_and_never_below_lagrange(inst, seed):
    dec = forest.ForestDecomposition(inst)
    base = lagrange.Decomposition(inst)
    rng = np.random.default_rng(seed)
    for scale in (1.0, float(inst.w2)):
        lam, mu = _random_point(dec, inst, rng, scale)
        rho, nu = abs(rng.normal()), abs(rng.normal())
        C, place = dec.unary(lam, mu, rho, nu)
        if place is None:
            return
        total, _, home, _, _ = dec._homes(C.copy(), place)
        brute = min(dec.objective_at(C, place, np.asarray(h))
                    for h in itertools.product(range(dec.R), repeat=dec.T))
        assert abs(total - brute) <= _tol(brute)
        assert abs(dec.objective_at(C, place, home) - total) <= _tol(total)
        assert dec.tables(lam, mu, rho, nu)[0] >= base.tables(lam, mu, rho, nu)[0] - _tol(total)


@settings(max_examples=5, deadline=None)
@given(tiny, st.integers(0, 2**31 - 1))
def test_value_at_random_multipliers_and_after_the_ascent_is_at_most_the_brute_force_optimum(inst, seed):
    best, _ = brute_force(inst)
    if best is None:
        return
    dec = forest.ForestDecomposition(inst, alpha=0.5, cpu=True)
    rng = np.random.default_rng(seed)
    n = dec.R * dec.GK + dec.R + 2 + len(dec.cap_v)
    for scale in (0.0, 1.0, float(inst.w2)):
        val, grad = dec.value(scale * rng.normal(size=n))
        assert val <= best + _tol(best) and grad.shape == (n,)
    res = forest.solve(inst, time_limit=5, max_iter=15)
    assert res.bound is not None and 0.0 <= res.bound <= best + _tol(best)


@pytest.mark.parametrize("name,optimum", proven_tetris()[1::6])
def test_bound_at_most_the_stored_proven_optimum(name, optimum):
    inst = library_tetris(name)
    res = forest.solve(inst, time_limit=10, max_iter=20)
    assert 0.0 < res.bound <= optimum + _tol(optimum)
    assert res.stats["jobs_kept_whole"] <= res.stats["multi_table_ml_jobs"]


def test_memory_refusal_the_dispatcher_and_the_seeded_placement():
    inst = generate_tetris(12, 24, 3, seed=5)
    assert forest.solve(inst, time_limit=5, max_memory_mb=1.0).status == "error"
    res = tetris_bound.solve(inst, method="forest", time_limit=0.5)
    assert res.bound is not None and res.bound >= 0.0
    placed = hill_climb.solve_seeded(inst, res)
    assert placed.objective is not None and placed.objective >= res.bound - _tol(res.bound)
