"""The Lagrangian decomposition bound (models/tetris_bound/lagrange.py) and the "auto" method choice.

Valid at *any* multipliers (weak duality): checked against brute force at random multipliers and
after the ascent, and against the stored proven optima of the instance library.
"""


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from placement.instances import generate_tetris
from placement.models import tetris_bound
from placement.models.tetris_bound import hot, lagrange

from placement.errors import InstanceError
from placement.tetris import load_instance
from tests.support import brute_force, library_tetris, proven_tetris, tie_heavy

tiny = st.builds(
    lambda T, J, R, seed, G, K, zipf, quota: generate_tetris(T, J, R, seed=seed, n_gpu_types=G, n_priorities=K,
                                                             zipf=zipf, quota_share=quota),
    T=st.integers(2, 6), J=st.integers(1, 12), R=st.integers(2, 3), seed=st.integers(0, 10_000),
    G=st.integers(1, 3), K=st.integers(1, 3), zipf=st.sampled_from([1.1, 2.5]), quota=st.sampled_from([0.1, 0.3, 1.0]),
).filter(lambda inst: inst.n_regions ** inst.n_tables <= 729)


def _tol(v):
    return 1e-9 * max(1.0, abs(v))


@settings(max_examples=15, deadline=None)
@given(tiny, st.integers(0, 2**31 - 1), st.floats(0.0, 1.0))
def test_value_at_random_multipliers_is_at_most_the_brute_force_optimum(inst, seed, alpha):
    best, _ = brute_force(inst)
    if best is None:
        return
    dec = lagrange.Decomposition(inst, alpha=alpha, cpu=True)   # (5) dualized too
    rng = np.random.default_rng(seed)
    n = dec.R * dec.GK + dec.R + 2 + len(dec.cap_v)
    lam0, mu0 = dec.start(inst.arrays.home0)
    for scale in (0.0, 1.0, 100.0, inst.w2):
        v = np.concatenate([lam0.ravel(), mu0, np.zeros(n - lam0.size - dec.R)]) + scale * rng.normal(size=n)
        val, grad = dec.value(v)
        assert val <= best + _tol(best)
        assert grad.shape == (n,)


@settings(max_examples=8, deadline=None)
@given(tiny)
def test_ascended_bound_is_at_most_the_brute_force_optimum_and_above_the_start(inst):
    best, _ = brute_force(inst)
    if best is None:
        return
    res = lagrange.solve(inst, time_limit=5, max_iter=40)
    assert res.bound is not None and 0.0 <= res.bound <= best + _tol(best)
    start, _ = lagrange.Decomposition(inst, alpha=0.5).value(_start_vector(inst))
    assert res.bound >= start - _tol(start)   # the ascent keeps the best evaluated point


def _start_vector(inst):
    dec = lagrange.Decomposition(inst, alpha=0.5)
    lam0, mu0 = dec.start(inst.arrays.home0)
    return np.concatenate([lam0.ravel(), mu0, np.zeros(2 + len(dec.cap_v))])


@settings(max_examples=8, deadline=None)
@given(tie_heavy)
def test_bound_valid_with_zero_sizes_and_ties(inst):
    best, _ = brute_force(inst)
    if best is None:
        return
    assert lagrange.solve(inst, time_limit=5, max_iter=30, alpha=1.0).bound <= best + _tol(best)


@pytest.mark.parametrize("name,optimum", proven_tetris()[::6])
def test_bound_at_most_the_stored_proven_optimum(name, optimum):
    inst = library_tetris(name)
    res = lagrange.solve(inst, time_limit=10, max_iter=60)
    assert 0.0 < res.bound <= optimum + _tol(optimum)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1), st.floats(0.0, 1.0))
def test_cell_inner_minimum_is_exact(seed, alpha):
    # the closed-form minimum of A q(y - s) - b y over [0, 1] against a fine grid
    inst = generate_tetris(4, 8, 2, seed=seed % 1000, n_gpu_types=2, n_priorities=2)
    dec = lagrange.Decomposition(inst, alpha=alpha)
    rng = np.random.default_rng(seed)
    b = rng.normal(scale=float(dec.c_A.max()) + 1.0, size=dec.c_A.shape)
    got, y = dec._inner(b)
    grid = np.linspace(0.0, 1.0, 2001)
    u = grid[None, None, :] - dec.c_s[:, :, None]
    f = dec.c_A[:, :, None] * ((1 - alpha) * np.maximum(u, 0) ** 2 + np.minimum(u, 0) ** 2) - b[:, :, None] * grid
    assert np.all(got <= f.min(axis=2) + 1e-9 * (1 + np.abs(f).max()))
    u0 = y - dec.c_s
    at_y = dec.c_A * ((1 - alpha) * np.maximum(u0, 0) ** 2 + np.minimum(u0, 0) ** 2) - b * y
    assert np.allclose(at_y, got)


def test_memory_estimate_refuses_before_allocating():
    inst = generate_tetris(30, 60, 4, seed=1)
    res = lagrange.solve(inst, time_limit=5, max_memory_mb=1.0)
    assert res.status == "error" and res.bound is None
    assert res.stats["memory_estimate_mb"] > 1.0


def test_bad_alpha_names_the_field():
    with pytest.raises(InstanceError, match="alpha"):
        lagrange.solve(generate_tetris(4, 5, 2, seed=1), alpha=1.5)


def test_auto_picks_branch_when_it_fits_and_the_forest_beyond():
    small = generate_tetris(20, 40, 4, seed=7)
    assert tetris_bound.choose_method(small, 60)[0] == "branch"
    assert tetris_bound.choose_method(small, 0.1)[0] == "forest"   # too little time for the root LP
    big = generate_tetris(tetris_bound.AUTO_BRANCH_MAX_TABLES + 1, 10, 3, seed=7)
    assert tetris_bound.choose_method(big, 3600)[0] == "lp"
    assert tetris_bound.choose_method(big, 100)[0] == "forest"     # too little time for the LP's interior point
    huge = generate_tetris(tetris_bound.AUTO_LP_MAX_TABLES + 1, 10, 3, seed=7)
    assert tetris_bound.choose_method(huge, 36_000)[0] == "forest"


def test_auto_lp_route_keeps_the_forest_as_its_floor(monkeypatch):
    # beyond the branching's size the LP runs after the forest; the larger valid bound is reported
    import placement.models.tetris_bound as tb

    inst = generate_tetris(6, 12, 3, seed=3817)
    best, _ = brute_force(inst)
    monkeypatch.setattr(tb, "AUTO_BRANCH_MAX_TABLES", 2)
    res = tetris_bound.solve(inst, time_limit=20)
    assert res.stats["auto"]["choice"] == "lp"
    assert res.stats["method"] in ("lp", "forest", "hot")
    forest_b = res.stats.get("bound_forest", res.bound)
    assert forest_b is not None and res.bound >= forest_b - 1e-9
    assert res.bound <= best + 1e-7 * max(1.0, best)


def test_auto_reports_its_method_and_never_less_than_hot():
    inst = generate_tetris(20, 40, 4, seed=7, zipf=2.5)
    best = tetris_bound.solve(inst, time_limit=3)
    assert best.stats["method"] in ("branch", "hot")
    assert best.stats["auto"]["choice"] == "branch"
    assert best.bound >= hot.solve(inst).bound - 1e-9
    quick = tetris_bound.solve(inst, time_limit=0.2, method="auto")
    assert quick.stats["auto"]["choice"] == "forest" and quick.stats["method"] in ("forest", "hot")
    assert quick.bound >= quick.stats["auto"]["hot_bound"] - 1e-9


def test_analytics_job_without_bytes_counts_its_cpu_in_region_zero():
    """(5) with an analytics job whose table has size 0: it is in region 0 whatever the table's home.
    Charging its CPU at the table's home (the earlier accounting) made the dualized value 50 here, above
    the optimum 0 (the table goes where the ML job's GPUs are, region 1, where the app has no CPU)."""
    doc = {"problem": "tetris", "version": 1, "name": "zero-bytes-cpu",
           "regions": [{"name": "r0", "storage_capacity": 10, "gpu_supply": {"H100": 0}},
                       {"name": "r1", "storage_capacity": 10, "gpu_supply": {"H100": 100}}],
           "apps": [{"name": "a", "cpu_capacity": {"r0": 5, "r1": 0}}],
           "tables": [{"name": "t0", "size": 0, "home": "r1"}],
           "jobs": [{"name": "ml", "kind": "ml", "tables": ["t0"], "gpu_type": "H100", "gpu_hours": 100,
                     "cpu_hours": 0, "priority": 0},
                    {"name": "an", "kind": "analytics", "tables": ["t0"], "cpu_hours": 5, "app": "a"}],
           "priority_weights": [1.0], "high_priorities": [], "weights": {"w1": 1.0, "w2": 100.0, "w3": 1.0},
           "home_threshold": 0, "move_quota": None}
    inst = load_instance(doc)
    best, _ = brute_force(inst)
    dec = lagrange.Decomposition(inst, alpha=0.5, cpu=True)
    n = dec.R * dec.GK + dec.R + 2 + len(dec.cap_v)
    lam0, mu0 = dec.start(inst.arrays.home0)
    k = list(zip(dec.cap_a.tolist(), dec.cap_r.tolist(), strict=True)).index((0, 1))
    for kappa in (0.0, 10.0, 1000.0):
        v = np.concatenate([lam0.ravel(), mu0, np.zeros(n - lam0.size - dec.R)])
        v[n - len(dec.cap_v) + k] = kappa
        assert dec.value(v)[0] <= best + _tol(best)
