"""MIP-based LNS (solvers/lns.py) against brute force, the exact model and its hill-climbing start."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from placement.instances import generate_tetris
from placement.solvers import hill_climb, lns

from placement.tetris import evaluate, violations
from tests.support import brute_force

small = st.builds(
    lambda T, J, R, seed: generate_tetris(T, J, R, seed=seed),
    T=st.integers(3, 6), J=st.integers(2, 10), R=st.integers(2, 3), seed=st.integers(0, 10_000),
).filter(lambda inst: inst.n_regions ** inst.n_tables <= 729)

OPTS = dict(time_limit=None, iterations=8, sub_time_limit=60.0, size=4)


@settings(max_examples=10)
@given(small, st.integers(0, 3), st.sampled_from([0.0, 0.3]), st.booleans())
def test_lns_feasible_not_below_optimum_not_worse_than_start(inst, seed, full_share, full_start):
    """With and without the whole-model phase, cold or started: feasible, >= the optimum, <= the start;
    bound and proof honest."""
    res = lns.solve(inst, seed=seed, full_share=full_share, full_start=full_start, **OPTS)
    best, _ = brute_force(inst)
    assert res.status == "feasible"
    if res.bound is not None:
        assert res.bound <= best + 1e-9 * max(1.0, abs(best))
    if res.stats["proof"]:
        assert abs(res.objective - best) <= 1e-6 * max(1.0, abs(best))
        assert res.bound == res.objective
    assert not violations(inst, res.solution)
    assert res.objective == evaluate(inst, res.solution).objective
    assert res.objective >= best - 1e-9 * max(1.0, abs(best))
    start = hill_climb.solve(inst, seed=seed)
    assert res.stats["start_objective"] == start.objective
    assert res.objective <= start.objective


def test_lns_is_deterministic_per_seed_and_improves_on_hill_climbing():
    inst = generate_tetris(20, 40, 4, seed=102)
    # Neighbourhoods only (no whole-model phase), then the defaults (phase B node-limited without a time limit).
    a = lns.solve(inst, seed=1, time_limit=None, iterations=6, sub_time_limit=600.0, full_share=0.0)
    b = lns.solve(inst, seed=1, time_limit=None, iterations=6, sub_time_limit=600.0, full_share=0.0)
    c = lns.solve(inst, seed=1, time_limit=None, iterations=6, sub_time_limit=600.0)
    d = lns.solve(inst, seed=1, time_limit=None, iterations=6, sub_time_limit=600.0)
    assert np.array_equal(c.solution.home, d.solution.home) and c.objective == d.objective
    assert c.objective <= c.stats["start_objective"]
    assert np.array_equal(a.solution.home, b.solution.home)
    assert a.objective == b.objective
    assert a.stats["rounds"] == 6
    assert a.objective <= a.stats["start_objective"]


def test_whole_instance_neighbourhood_proves_and_stops():
    """Phase B on a small instance proves optimality: the search stops there, with the brute-force optimum."""
    inst = generate_tetris(6, 8, 3, seed=5)
    res = lns.solve(inst, seed=0, time_limit=None, iterations=50)
    best, _ = brute_force(inst)
    assert res.stats["proof"] is True and res.stats["stopped_by"] == "proof"
    assert res.stats["rounds"] == 0
    assert abs(res.objective - best) <= 1e-6 * max(1.0, abs(best))


def test_neighbourhoods_alone_can_prove_with_the_whole_instance():
    """Without phase B, a neighbourhood that is the whole instance (every region) also ends the search

    (with the exact overload levels: the default saturated sub-model is a relaxation, whose optimum is
    no proof for the true objective unless the reference evaluation agrees).
    """
    inst = generate_tetris(5, 6, 2, seed=9)
    res = lns.solve(inst, seed=0, time_limit=None, iterations=100, full_share=0.0, size=5, kicks=0, saturation=37)
    best, _ = brute_force(inst)
    assert res.stats["proof"] is True and res.stats["rounds"] >= 1
    assert abs(res.objective - best) <= 1e-6 * max(1.0, abs(best))


def test_reader_cap_keeps_popular_tables_out():
    inst = generate_tetris(200, 2000, 4, seed=3)
    readers = np.diff(inst.arrays.tab_ptr)
    order = np.argsort(-readers, kind="stable")
    free = np.sort(order[:30])
    kept = lns._cap_affected(inst, free, 50)
    assert readers[kept].sum() <= 50
    assert set(kept.tolist()) <= set(free.tolist())
    # Greedy in order: a table that fits after a skipped one is still taken.
    assert all(readers[t] > 50 - readers[kept].sum() for t in free if t not in set(kept.tolist()))


@settings(max_examples=6)
@given(small, st.sampled_from(["gpu_type", "jobs,gpu_type", "region_pair", "overloaded,moved", "absorb", "quota"]))
def test_every_kind_alone_keeps_the_properties(inst, kinds):
    res = lns.solve(inst, seed=0, kinds=kinds, full_share=0.0, **OPTS)
    best, _ = brute_force(inst)
    assert res.status == "feasible" and not violations(inst, res.solution)
    assert best - 1e-9 * max(1.0, abs(best)) <= res.objective <= res.stats["start_objective"]


def test_unknown_kind_is_refused_before_any_work():
    import pytest

    from placement.errors import InstanceError

    with pytest.raises(InstanceError, match="kinds"):
        lns.solve(generate_tetris(4, 4, 2, seed=0), kinds="jobs,bogus")


def test_adaptive_kinds_deterministic_and_persistent_equals_rebuilt_on_a_whole_instance():
    """Adaptive kind weights: same seed, same result; weights stay within [floor, 1]. The persistent model
    and the rebuilt sub-models both reach the brute-force optimum on a small instance."""
    inst = generate_tetris(6, 10, 3, seed=21)
    kw = dict(seed=2, time_limit=None, iterations=12, sub_time_limit=600.0, full_share=0.0, adaptive=True)
    a, b = lns.solve(inst, **kw), lns.solve(inst, **kw)
    assert np.array_equal(a.solution.home, b.solution.home) and a.objective == b.objective
    assert all(lns.ADAPTIVE_FLOOR <= w <= 1.0 for w in a.stats["kind_weights"].values())
    assert a.stats["persistent"] is True
    best, _ = brute_force(inst)
    for cells in (0, 2400):
        res = lns.solve(inst, seed=0, time_limit=None, iterations=100, full_share=0.0, size=6, kicks=0,
                        saturation=37, persistent_max_cells=cells)
        assert res.stats["persistent"] is (cells > 0)
        assert res.stats["proof"] is True
        assert abs(res.objective - best) <= 1e-6 * max(1.0, abs(best))


def test_absorb_frees_the_jobs_of_the_most_overloaded_region_and_gpu_type():
    """The absorb neighbourhood, checked by hand on its definition: its free tables are read by ML jobs
    of the (region, GPU type) with the largest overload, and the regions hold that region."""
    from placement.tetris import evaluate as ev_of

    inst = generate_tetris(30, 60, 5, seed=8803)
    home = inst.arrays.home0.copy()
    ev = ev_of(inst, home)
    A = inst.arrays
    over = ev.demand.sum(axis=2) - A.supply
    r0, g = np.unravel_index(int(np.argmax(over)), over.shape)
    assert over[r0, g] > 0
    hoods = lns._Neighbourhoods(inst, np.random.default_rng(0), all_regions=3)
    free, regions = hoods.absorb(home, ev, 8)
    jobs = np.flatnonzero(A.job_ml & (ev.job_region == r0) & (A.job_gpu == g))
    tables = set(A.job_tab[np.isin(A.entry_job, jobs)].tolist())
    assert 0 < len(free) <= 8 and set(free.tolist()) <= tables
    assert r0 in regions and set(home[free].tolist()) <= set(regions)


@settings(max_examples=10)
@given(small, st.integers(0, 3))
def test_whole_model_again_keeps_bound_and_objective_honest(inst, seed):
    """Phase B cut to one node, then run again after every round without improvement: feasible, >= the
    optimum, its bounds below it, a proof only at the optimum."""
    res = lns.solve(inst, seed=seed, full_node_limit=1, whole_again_after=1, **OPTS)
    best, _ = brute_force(inst)
    assert not violations(inst, res.solution)
    assert res.objective == evaluate(inst, res.solution).objective
    assert res.objective >= best - 1e-9 * max(1.0, abs(best))
    if res.bound is not None:
        assert res.bound <= best + 1e-9 * max(1.0, abs(best))
    if res.stats["proof"]:
        assert abs(res.objective - best) <= 1e-6 * max(1.0, abs(best))


def test_whole_model_again_runs_from_the_improved_incumbent_deterministically():
    inst = generate_tetris(20, 40, 4, seed=5)
    kw = dict(seed=1, time_limit=None, iterations=12, sub_time_limit=600.0, full_node_limit=1, whole_again_after=1)
    a = lns.solve(inst, **kw)
    b = lns.solve(inst, **kw)
    assert a.stats["whole_again"] >= 1
    assert np.array_equal(a.solution.home, b.solution.home) and a.objective == b.objective
    assert a.objective <= a.stats["start_objective"]


def test_quota_frees_every_moved_table_and_the_largest_still_home():
    """The quota neighbourhood, checked by hand on its definition: every table away from its current
    home, plus max(size, moved // 2) tables still there, none of which is less than a third of the size
    of a table left out (sizes jittered by a factor in [0.5, 1.5]); every region allowed at 5 regions."""
    from placement.tetris import evaluate as ev_of

    inst = generate_tetris(30, 60, 5, seed=8803)
    A = inst.arrays
    home = hill_climb.solve(inst, seed=0).solution.home
    away = np.flatnonzero(home != A.home0)
    assert inst.move_quota is not None and len(away) >= 2
    hoods = lns._Neighbourhoods(inst, np.random.default_rng(0), all_regions=6)
    for size in (1, 4, 12):
        free, regions = hoods.quota(home, ev_of(inst, home), size)
        assert set(away.tolist()) <= set(free.tolist())
        stay = np.setdiff1d(free, away)
        assert len(stay) == min(int((home == A.home0).sum()), max(size, len(away) // 2))
        left = np.setdiff1d(np.flatnonzero(home == A.home0), stay)
        if len(left):
            assert A.size[stay].min() * 3 >= A.size[left].max()
        assert list(regions) == list(range(inst.n_regions))


def test_quota_neighbourhood_is_bounded_on_a_large_placement():
    """With more moved tables than two thirds of its cap, the quota neighbourhood samples them:
    never more than ``max_free`` tables, moved ones at most two thirds of it."""
    from placement.tetris import evaluate as ev_of

    inst = generate_tetris(300, 600, 6, seed=4)
    A = inst.arrays
    home = A.home0.copy()
    home[:200] = (home[:200] + 1) % inst.n_regions  # 200 tables away (a placement for the draw only)
    hoods = lns._Neighbourhoods(inst, np.random.default_rng(1), all_regions=6, max_free=48)
    free, _ = hoods.quota(home, ev_of(inst, home), 6)
    moved = free[home[free] != A.home0[free]]
    assert len(free) <= 48 and len(moved) == 32 and len(free) - len(moved) == 16


def test_cold_whole_model_skips_the_ils_and_a_started_one_runs_it():
    """Phase B cold (the default) leaves phase A at hill climbing; started from phase A, the ILS runs
    first. Either way the search proves the brute-force optimum on a small instance."""
    inst = generate_tetris(6, 8, 3, seed=5)
    best, _ = brute_force(inst)
    cold = lns.solve(inst, seed=0, time_limit=None, iterations=5)
    warm = lns.solve(inst, seed=0, time_limit=None, iterations=5, full_start=True)
    assert "ils_objective" not in cold.stats and "ils_objective" in warm.stats
    for res in (cold, warm):
        assert res.stats["proof"] is True
        assert abs(res.objective - best) <= 1e-6 * max(1.0, abs(best))


def test_phase_b_is_cold_by_default_and_started_on_request(monkeypatch):
    """The whole model gets no start by default and phase A's placement with ``full_start=True``."""
    starts = []
    real = lns.exact.solve

    def spy(inst, **kw):
        starts.append(kw.get("start"))
        return real(inst, **kw)

    monkeypatch.setattr(lns.exact, "solve", spy)
    inst = generate_tetris(6, 8, 3, seed=5)
    lns.solve(inst, seed=0, time_limit=None, iterations=1, full_share=0.3)
    lns.solve(inst, seed=0, time_limit=None, iterations=1, full_share=0.3, full_start=True)
    assert starts[0] is None and starts[1] is not None and len(starts) == 2
