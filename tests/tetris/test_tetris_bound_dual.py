"""The Tetris bound's own dual certificate (models/tetris_bound/relaxation.py, dual_bound) and the disjunctive analytics rows."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from placement.instances import generate_tetris
from placement.models import tetris_bound

from tests.support import brute_force, lp_value_and_duals

tiny = st.builds(
    lambda T, J, R, seed: generate_tetris(T, J, R, seed=seed, n_gpu_types=2, n_priorities=2),
    T=st.integers(2, 5), J=st.integers(2, 8), R=st.integers(2, 3), seed=st.integers(0, 10_000),
).filter(lambda inst: inst.n_regions ** inst.n_tables <= 243)


@settings(max_examples=6, deadline=None)
@given(tiny, st.integers(0, 2**31 - 1))
def test_dual_bound_is_valid_at_any_multipliers_and_tight_at_the_lp_duals(inst, seed):
    best, _ = brute_force(inst)
    m = tetris_bound.build(inst)
    value, y = lp_value_and_duals(m)
    at_opt, _ = tetris_bound.dual_bound(m, y)
    # the LP's own duals reproduce its value (to the margin), and no LP value is above the optimum
    assert at_opt == pytest.approx(value, rel=1e-6, abs=1e-6)
    assert at_opt <= best + 1e-7 * max(1.0, best)
    # perturbed and random multipliers (wrong signs included): still below the optimum
    rng = np.random.default_rng(seed)
    for y2 in (y + rng.normal(0, 1 + np.abs(y)), rng.normal(0, 10, len(y)), np.zeros(len(y))):
        assert tetris_bound.dual_bound(m, y2)[0] <= best + 1e-7 * max(1.0, best)


@pytest.mark.parametrize("seed", [3811, 3812])
def test_disjunctive_analytics_rows_are_never_weaker_and_stay_valid(seed):
    inst = generate_tetris(6, 10, 3, seed=seed)
    best, _ = brute_force(inst)
    hull = tetris_bound.solve(inst, time_limit=30, method="lp")
    bigm = tetris_bound.solve(inst, time_limit=30, analytics_hull=False, method="lp")
    assert bigm.bound <= hull.bound + 1e-6 * max(1.0, hull.bound) <= best + 2e-6 * max(1.0, best)


def test_pdlp_round_stopped_early_still_gives_a_valid_bound():
    inst = generate_tetris(6, 10, 3, seed=3813)
    best, _ = brute_force(inst)
    m = tetris_bound.build(inst)
    h, _ = tetris_bound.highs_model(m, 30.0, 1e-6)
    h.setOptionValue("solver", "pdlp")
    h.setOptionValue("pdlp_iteration_limit", 50)
    h.run()
    sol = h.getSolution()
    assert sol.dual_valid
    early, _ = tetris_bound.dual_bound(m, np.asarray(sol.row_dual))
    full = tetris_bound.solve(inst, time_limit=30, lp_solver="pdlp", method="lp")
    assert early <= best + 1e-7 * max(1.0, best)
    assert full.bound <= best + 1e-7 * max(1.0, best)


class _Progress:
    """A stand-in for rich's progress bar (the bench sections only call ``update``)."""

    def update(self, *args, **kwargs):
        pass


def test_bench_certified_section_gaps_are_against_a_valid_bound():
    from placement.app.bench.tetris import _certified

    sec = _certified(0, _Progress(), None, sizes=[(8, 12, 3, 30.0)], seeds=1)
    (row,) = sec.rows
    assert row["bound_status"] in ("optimal", "time_limit") and row["bound_method"] == "branch"
    # the reported bound is the larger of the two valid ones, the branching never below its root LP
    assert row["bound"] == max(row["lp_bound"], row["hot_bound"])
    assert row["lp_root"] <= row["lp_bound"] + 1e-9 * row["lp_bound"]
    # branch and round starts from hill climbing's placement: never worse
    assert row["branch_round"] <= row["hill_climb"] + 1e-9 * row["hill_climb"]
    # HiGHS's MIP on the relaxation: a placement at least its own bound; the best of the row is the minimum
    assert row["mip_bound"] <= row["mip"] + 1e-9 * row["mip"]
    assert row["best"] == min(row[k] for k in ("hill_climb", "job_moves", "lns", "branch_round", "mip"))
    for k in ("hill_climb", "job_moves", "lns", "branch_round", "mip"):
        assert row["bound"] <= row[k] + 1e-9 * row[k]
        assert row[f"{k}_gap"] == pytest.approx((row[k] - row["bound"]) / row["bound"])


def test_dense_rows_split_through_partial_sums_keep_the_lp_value():
    inst = generate_tetris(10, 16, 3, seed=3814)
    whole = tetris_bound.solve(inst, time_limit=30, dense_row=0, method="lp")
    split = tetris_bound.solve(inst, time_limit=30, dense_row=4, method="lp")
    assert split.stats["split_rows"] > 0 and split.stats["columns"] > whole.stats["columns"]
    assert split.bound == pytest.approx(whole.bound, rel=1e-7, abs=1e-7)


def test_certified_gaps_beyond_the_branching_size_use_the_forest(monkeypatch):
    """The --scale section's path beyond BRANCH_MAX_TABLES (the forest decomposition, no branch and
    round), taken here on a tiny instance: its bound is valid for every placement of the row."""
    import placement.app.bench.tetris as bench_tetris

    monkeypatch.setattr(bench_tetris, "BRANCH_MAX_TABLES", 5)
    monkeypatch.setattr(bench_tetris, "LP_MAX_TABLES", 6)
    monkeypatch.setattr(bench_tetris, "LNS_MIN_S", 1.0)   # two seeds at the cost of one
    rows = bench_tetris._certified(0, _Progress(), None, sizes=[(8, 12, 3, 1.0)], seeds=2).rows
    # fresh seeds per size: CERTIFIED_SEED + 500 + 10 * size index + seed index
    assert [r["seed"] for r in rows] == [bench_tetris.CERTIFIED_SEED + 511, bench_tetris.CERTIFIED_SEED + 512]
    for row in rows:
        assert row["bound_method"] == "forest" and row["bound"] == max(row["lp_bound"], row["hot_bound"])
        for k in ("hill_climb", "job_moves", "lns"):
            assert 0 < row["bound"] <= row[k] + 1e-9 * row[k], k


def test_certified_gaps_between_the_branching_and_the_forest_round_the_lp(monkeypatch):
    """The --scale section's path at 10,000 tables (branch and round from the LP relaxation's solution),
    taken here on a tiny instance: the bound is the LP's, equal to the LP method's own, and at most every
    placement of the row; the rounding never worse than hill climbing (its start)."""
    import placement.app.bench.tetris as bench_tetris

    monkeypatch.setattr(bench_tetris, "BRANCH_MAX_TABLES", 5)
    monkeypatch.setattr(bench_tetris, "LNS_MIN_S", 1.0)
    (row,) = bench_tetris._certified(0, _Progress(), None, sizes=[(8, 12, 3, 30.0)], seeds=1).rows
    assert row["bound_method"] == "lp" and row["bound"] == max(row["lp_bound"], row["hot_bound"])
    assert row["lp_rounds"] >= 1 and row["lp_last_status"] == "Optimal"   # the LP's own rounds, reported
    inst = generate_tetris(8, 12, 3, seed=row["seed"], n_gpu_types=4, n_priorities=7)
    lp_alone = tetris_bound.solve(inst, time_limit=30, method="lp")
    assert row["lp_bound"] == pytest.approx(min(lp_alone.bound, row["branch_round"]), rel=1e-7, abs=1e-7)
    assert row["branch_round"] <= row["hill_climb"] + 1e-9 * row["hill_climb"]
    for k in ("hill_climb", "job_moves", "lns", "branch_round"):
        assert 0 < row["bound"] <= row[k] + 1e-9 * row[k], k
