"""The closed-form hot-table bound (models/tetris_bound/hot.py): valid against brute force; its knapsack exact."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from placement.instances import generate_tetris
from placement.models.tetris_bound import hot

from placement.tetris import evaluate
from tests.support import brute_force, tie_heavy

tiny = st.builds(
    lambda T, J, R, seed, G, K, zipf: generate_tetris(T, J, R, seed=seed, n_gpu_types=G, n_priorities=K, zipf=zipf),
    T=st.integers(2, 6), J=st.integers(1, 12), R=st.integers(2, 3), seed=st.integers(0, 10_000),
    G=st.integers(1, 3), K=st.integers(1, 3), zipf=st.sampled_from([1.1, 2.5]),
).filter(lambda inst: inst.n_regions ** inst.n_tables <= 729)


@settings(max_examples=15, deadline=None)
@given(tiny)
def test_hot_bound_at_most_the_brute_force_optimum(inst):
    best, _ = brute_force(inst)
    assert hot.solve(inst, max_tables=None).bound <= best + 1e-9 * max(1.0, best)


@settings(max_examples=8, deadline=None)
@given(tie_heavy)
def test_hot_bound_valid_with_zero_sizes_and_ties(inst):
    best, _ = brute_force(inst)
    assert hot.solve(inst, max_tables=None).bound <= best + 1e-9 * max(1.0, best)


def test_each_table_term_is_below_every_placement_with_that_home():
    # the per-table argument itself: for every placement, sum over tables of C[t, home_t] <= objective
    inst = generate_tetris(5, 14, 3, seed=3831, zipf=2.5)
    C, owner = hot.table_costs(inst)
    tables = np.unique(owner[owner >= 0])
    assert C.max() > 0   # a hot table with a positive term
    for combo in itertools.product(range(inst.n_regions), repeat=inst.n_tables):
        home = np.asarray(combo)
        assert C[np.arange(len(tables)), home[tables]].sum() <= evaluate(inst, home).objective + 1e-9


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 6), st.integers(0, 2**31 - 1))
def test_group_minimum_is_below_every_point_and_attained(n, seed):
    rng = np.random.default_rng(seed)
    size = rng.integers(0, 50, n).astype(float)
    sigma = rng.uniform(0.01, 0.5, n)
    e, s, A, w1 = rng.uniform(0, 0.3), rng.uniform(0, 0.4), rng.uniform(0, 500), rng.uniform(0.1, 2)

    def f(theta):
        return w1 * float(size @ (1 - theta)) + A * max(0.0, e + float(sigma @ theta) - s) ** 2

    got = hot._group_min(size, sigma, e, s, A, w1)
    pts = [np.asarray(b, float) for b in itertools.product((0, 1), repeat=n)] + list(rng.uniform(0, 1, (200, n)))
    assert got <= min(f(p) for p in pts) + 1e-9 * max(1.0, got)
    # attained: the fractional knapsack at the best placed share reaches it (a fine scan of the share)
    order = np.argsort(-(size / sigma))
    scan = []
    for D in np.linspace(0, sigma.sum(), 4001):
        theta, left = np.zeros(n), D
        for j in order:
            theta[j] = min(1.0, left / sigma[j])
            left -= theta[j] * sigma[j]
        scan.append(f(theta))
    assert got == pytest.approx(min(scan), rel=1e-3, abs=1e-3 * max(1.0, A))
