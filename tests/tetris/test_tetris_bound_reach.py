"""The reachable-values variant of the Lagrangian bound (models/tetris_bound/reach.py).

Valid at any multipliers (its blocks' domains are restricted to values every placement takes):
checked against brute force at random multipliers and after a short ascent, against the stored
proven optima of the instance library, and against the plain decomposition at the same multipliers
(never below it: a minimum over a subset of the same domain).
"""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from placement.instances import generate_tetris
from placement.models.tetris_bound import lagrange, reach

from tests.support import brute_force, library_tetris, proven_tetris

tiny = st.builds(
    lambda T, J, R, seed, G, K, quota: generate_tetris(T, J, R, seed=seed, n_gpu_types=G, n_priorities=K,
                                                       quota_share=quota),
    T=st.integers(2, 5), J=st.integers(2, 12), R=st.integers(2, 3), seed=st.integers(0, 10_000),
    G=st.integers(1, 2), K=st.integers(1, 3), quota=st.sampled_from([0.1, 0.3, 1.0]),
).filter(lambda inst: inst.n_regions ** inst.n_tables <= 243)


def _tol(v):
    return 1e-9 * max(1.0, abs(v))


def _vector(dec, inst, rng, scale):
    n = dec.R * dec.GK + dec.R + 2 + len(dec.cap_v)
    lam0, mu0 = dec.start(inst.arrays.home0)
    return np.concatenate([lam0.ravel(), mu0, np.zeros(n - lam0.size - dec.R)]) + scale * rng.normal(size=n)


@settings(max_examples=6, deadline=None)
@given(tiny, st.integers(0, 2**31 - 1), st.floats(0.0, 1.0))
def test_value_at_random_multipliers_is_at_most_the_optimum_and_at_least_the_plain_one(inst, seed, alpha):
    best, _ = brute_force(inst)
    if best is None:
        return
    rng = np.random.default_rng(seed)
    plain = lagrange.Decomposition(inst, alpha=alpha, cpu=True)
    for cls in (reach.ReachDecomposition, reach.ReachForestDecomposition):
        dec = cls(inst, alpha=alpha, cpu=True)
        for scale in (0.0, inst.w2):
            v = _vector(dec, inst, rng, scale)
            val, _ = dec.value(v)
            assert val <= best + _tol(best)
            if cls is reach.ReachDecomposition:
                assert val >= plain.value(v)[0] - 1e-7 * max(1.0, abs(val))


@settings(max_examples=4, deadline=None)
@given(tiny)
def test_ascended_bound_is_at_most_the_brute_force_optimum(inst):
    best, _ = brute_force(inst)
    if best is None:
        return
    res = reach.solve(inst, time_limit=5, max_iter=8)
    assert res.bound is not None and 0.0 <= res.bound <= best + _tol(best)
    assert res.solver == "tetris-bound-reach"


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**31 - 1), st.floats(0.0, 1.0))
def test_inner_minimum_is_the_minimum_over_the_reachable_shares(seed, alpha):
    inst = generate_tetris(4, 8, 2, seed=seed % 1000, n_gpu_types=2, n_priorities=2)
    dec = reach.ReachDecomposition(inst, alpha=alpha)
    rng = np.random.default_rng(seed)
    b = rng.normal(scale=float(dec.c_A.max()) + 1.0, size=dec.c_A.shape)
    got, y = dec._inner(b)
    n, K = dec.c_A.shape
    checked = 0
    for i in range(n):
        for k in range(K):
            if not dec.c_has[i, k]:
                continue
            g = int(dec.c_g[i])
            Y = dec.c_sets[g, k] / dec.TD[g, k]
            u = Y - dec.c_s[i, k]
            f = dec.c_A[i, k] * ((1 - alpha) * np.maximum(u, 0) ** 2 + np.minimum(u, 0) ** 2) - b[i, k] * Y
            assert got[i, k] == pytest.approx(f.min(), rel=1e-12, abs=1e-12)
            assert np.isclose(Y, y[i, k], rtol=0, atol=1e-15).any()
            checked += 1
    assert checked


def test_subset_sums_against_enumeration():
    vals = np.array([3, 5, 5, 9, 0])
    want = sorted({sum(c) for m in range(6) for c in itertools.combinations(vals.tolist(), m)})
    assert reach.subset_sums(vals, 30).tolist() == [v for v in want if v <= 30]
    assert reach.subset_sums(vals, 10).tolist() == [v for v in want if v <= 10]


@pytest.mark.parametrize("name,optimum", proven_tetris()[5::6])
def test_bound_at_most_the_stored_proven_optimum(name, optimum):
    inst = library_tetris(name)
    res = reach.solve(inst, time_limit=5, max_iter=12)
    assert res.bound <= optimum + _tol(optimum)
    if inst.n_tables <= 30:   # above, 12 ascent steps in 5 s can leave the bound at 0 (valid, weak)
        assert res.bound > 0.0
