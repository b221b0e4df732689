"""Hill climbing (MAST §3.4) against the reference evaluation, brute force and the exact model."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from placement.instances import generate_tetris, tetris_document
from placement.solvers.hill_climb import HillClimbState, full_move_delta, solve

from placement.tetris import evaluate, load_instance, violations
from tests.support import brute_force
from tests.support import tie_heavy as _tie_heavy

REL = 1e-9


def _close(x: float, y: float, rel: float = REL) -> bool:
    return abs(x - y) <= rel * max(1.0, abs(x), abs(y))


@st.composite
def instances(draw, max_tables=25, max_jobs=40, max_regions=5, min_tables=1, min_regions=1):
    T = draw(st.integers(min_tables, max_tables))
    J = draw(st.integers(0, max_jobs))
    R = draw(st.integers(min_regions, max_regions))
    return generate_tetris(T, J, R, seed=draw(st.integers(0, 10_000)),
                           n_gpu_types=draw(st.integers(1, 3)), n_priorities=draw(st.integers(1, 4)),
                           max_tables_per_job=draw(st.integers(1, 4)),
                           quota_share=draw(st.sampled_from([0.05, 0.3, 1.0])))


def _net_moved(inst, home) -> int:
    """Bytes of the tables away from their starting home, summed table by table."""
    return sum(t.size for t, r in zip(inst.tables, home, strict=True) if inst.region_names[r] != t.home)


@given(inst=instances(max_tables=40, max_jobs=80, max_regions=6), seed=st.integers(0, 2**31 - 1))
def test_incremental_delta_equals_reference(inst, seed):
    """Every candidate move's delta and feasibility, and the state after random moves,
    equal the reference evaluation of the moved placement (independent computations)."""
    rng = np.random.default_rng(seed)
    state = HillClimbState(inst)
    R, T = inst.n_regions, inst.n_tables
    for _ in range(12):
        base = evaluate(inst, state.home)
        assert _close(state.objective, base.objective)
        assert (state.violation == 0) == (not violations(inst, state.home, base))
        tabs = rng.choice(T, size=min(3, T), replace=False)
        ev = state.evaluate_tables(tabs)
        for b, t in enumerate(tabs):
            for c in range(R):
                home = state.home.copy()
                home[t] = c
                moved = evaluate(inst, home)
                assert _close(base.objective + ev.delta[b, c], moved.objective)
                assert ev.feasible[b, c] == (not violations(inst, home, moved))
        state.apply(int(rng.integers(T)), int(rng.integers(R)))
    final = evaluate(inst, state.home)
    assert _close(state.objective, final.objective)
    assert state.moved == _net_moved(inst, state.home)


@given(inst=instances(), seed=st.integers(0, 3), job_moves=st.booleans(),
       order=st.sampled_from(["gain", "gain_per_byte"]), kicks=st.sampled_from([0, 0, 3]))
def test_hill_climb_feasible_improving_within_quota(inst, seed, job_moves, order, kicks):
    res = solve(inst, seed=seed, record_moves=True, job_moves=job_moves, order=order, kicks=kicks)
    assert res.status == "feasible"  # generated starts are feasible
    ev = evaluate(inst, res.solution)
    assert violations(inst, res.solution, ev) == []
    assert res.objective == ev.objective
    assert _close(res.stats["incremental_objective"], ev.objective)
    assert res.objective <= evaluate(inst, inst.initial_solution()).objective
    assert _net_moved(inst, res.solution.home) <= inst.move_quota
    assert res.stats["bytes_moved"] == _net_moved(inst, res.solution.home)
    # Replay the path of the returned placement: every accepted move (one table, or
    # all tables of a job with job_moves) strictly improves the reference objective;
    # every move, kicks included, keeps every hard constraint and the quota.
    home = inst.arrays.home0.copy()
    prev = evaluate(inst, home).objective
    for tabs, froms, to, gain, kind in res.stats["moves"]:
        assert kind in ("table", "job", "kick")
        assert len(tabs) == 1 or (job_moves and kind == "job")
        for t, frm in zip(tabs, froms, strict=True):
            assert home[t] == frm != to
            home[t] = to
        ev_t = evaluate(inst, home)
        assert _close(prev - ev_t.objective, gain, 1e-7)
        if kind != "kick":
            assert ev_t.objective < prev and gain > 0
        assert violations(inst, home, ev_t) == []
        prev = ev_t.objective
    assert np.array_equal(home, res.solution.home)
    if kicks == 0:
        assert res.stats["moves_accepted"] + res.stats["job_moves_accepted"] == len(res.stats["moves"])


@given(inst=instances(max_tables=30, max_jobs=50), seed=st.integers(0, 3))
def test_kicks_never_worse_than_plain_climb(inst, seed):
    plain = solve(inst, seed=seed)
    ils = solve(inst, seed=seed, kicks=4)
    assert ils.status == "feasible"
    assert ils.objective <= plain.objective
    assert ils.stats["kicks"] == (4 if inst.n_regions > 1 else 0)


@given(inst=instances(), seed=st.integers(0, 5))
def test_deterministic_per_seed(inst, seed):
    a, b = solve(inst, seed=seed), solve(inst, seed=seed)
    assert a.status == b.status and a.objective == b.objective
    assert np.array_equal(a.solution.home, b.solution.home)
    assert a.stats["moves_evaluated"] == b.stats["moves_evaluated"]


@given(inst=instances(max_tables=8, max_jobs=14, max_regions=3, min_tables=4, min_regions=2))
def test_never_better_than_brute_force(inst):
    best, _ = brute_force(inst)
    res = solve(inst)
    assert best is not None  # the start is feasible
    assert res.objective >= best - 1e-6 * max(1.0, abs(best))


def test_single_pass_is_local_for_queue_and_passes_converge():
    """After convergence (default passes) no single-table move improves and stays feasible."""
    inst = generate_tetris(40, 80, 4, seed=3, n_gpu_types=3, n_priorities=4, quota_share=1.0)
    res = solve(inst)
    state = HillClimbState(inst, res.solution.home)
    ev = state.evaluate_tables(np.arange(inst.n_tables))
    d = np.where(ev.feasible, ev.delta, np.inf)
    assert d.min() >= -1e-9 * abs(res.objective)
    one = solve(inst, max_passes=1)
    assert one.stats["passes"] == 1 and res.objective <= one.objective + 1e-9 * abs(one.objective)


def test_full_move_delta_matches_incremental():
    inst = generate_tetris(30, 60, 4, seed=5, n_gpu_types=2, n_priorities=3)
    state = HillClimbState(inst)
    ev = state.evaluate_tables(np.arange(inst.n_tables))
    for t in range(0, inst.n_tables, 7):
        for c in range(inst.n_regions):
            assert _close(full_move_delta(inst, state.home, t, c), ev.delta[t, c])


def _doc_with(**changes):
    doc = tetris_document(12, 20, 3, seed=11, n_gpu_types=2, n_priorities=3)
    doc.update(changes)
    return doc


def test_infeasible_start_is_repaired_or_reported():
    doc = _doc_with()
    used = {}
    for t in doc["tables"]:
        used[t["home"]] = used.get(t["home"], 0) + t["size"]
    full = max(used, key=used.get)
    for r in doc["regions"]:  # the fullest region must shed a table; others have room
        r["storage_capacity"] = used[full] - 1 if r["name"] == full else sum(used.values())
    doc["move_quota"] = None
    inst = load_instance(doc)
    assert violations(inst, inst.initial_solution())
    res = solve(inst)
    assert res.stats["initial_violation"] > 0
    assert res.status == "feasible"
    assert violations(inst, res.solution) == []
    assert res.objective == evaluate(inst, res.solution).objective


def test_no_feasible_placement_is_infeasible_not_a_proof():
    doc = _doc_with()
    doc["home_threshold"] = 10**9  # (6) cannot hold anywhere
    inst = load_instance(doc)
    res = solve(inst)
    assert res.status == "infeasible"
    assert res.solution is None and res.objective is None
    assert res.stats["proof"] is False and "not a proof" in res.message


def test_time_limit_returns_feasible_incumbent():
    inst = generate_tetris(200, 400, 5, seed=2, n_gpu_types=3, n_priorities=4)
    res = solve(inst, time_limit=0.0)
    assert res.status == "time_limit"
    assert res.solution is not None and violations(inst, res.solution) == []


@pytest.mark.slow
@settings(max_examples=8)
@given(inst=instances(max_tables=8, max_jobs=12, max_regions=3, min_tables=4, min_regions=2))
def test_never_better_than_exact(inst):
    import placement.models.tetris as exact
    ex = exact.solve(inst, time_limit=20)
    res = solve(inst)
    ref = ex.objective if ex.status == "optimal" else ex.bound
    if ref is not None:
        assert res.objective >= ref - 1e-6 * max(1.0, abs(ref))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["t006-j008-r2-s0.json", "t010-j015-r3-s1.json", "t015-j025-r4-s1.json"])
def test_stored_instances_not_better_than_exact_optimum(name):
    import placement.models.tetris as exact
    from placement.instances import stored, stored_path

    from placement.io import read_document

    if name not in stored("tetris"):
        pytest.skip(f"stored instance {name} not present")
    inst = load_instance(read_document(str(stored_path("tetris", name))))
    ex = exact.solve(inst, time_limit=30)
    assert ex.status == "optimal"
    for kw in ({}, {"job_moves": True}, {"max_passes": 1}):
        res = solve(inst, **kw)
        assert res.status == "feasible"
        assert res.objective >= ex.objective - 1e-6 * abs(ex.objective)


def test_small_batches_give_the_same_climb(monkeypatch):
    """Splitting the sweep into many batches changes nothing (all against one state)."""
    import placement.solvers.hill_climb as hc

    inst = generate_tetris(60, 120, 4, seed=9, n_gpu_types=3, n_priorities=4)
    ref = solve(inst, seed=1)
    monkeypatch.setattr(hc, "_MAX_BATCH_ENTRIES", 5)
    monkeypatch.setattr(hc, "_MAX_BATCH_CELLS", 4 * 3 * 4 * 3)
    small = solve(inst, seed=1)
    assert np.array_equal(ref.solution.home, small.solution.home)
    assert ref.objective == small.objective


@given(_tie_heavy)
def test_zero_sizes_and_ties_stay_exact_in_the_incremental_state(inst):
    """Zero-size tables and majority ties: the incremental state still equals the reference."""
    res = solve(inst, seed=0)
    if res.solution is not None:
        assert res.stats["incremental_objective"] == pytest.approx(evaluate(inst, res.solution).objective,
                                                                   rel=1e-9, abs=1e-9)
    if res.status == "feasible":
        assert not violations(inst, res.solution)
        best, _ = brute_force(inst)
        assert res.objective >= best - 1e-9 * max(1.0, abs(best))
