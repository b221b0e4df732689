"""The joint home-and-replica MIP against brute force, the sequential pipeline and hand cases."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from placement.instances import generate_tetris, tetris_document
from placement.models.tetris import solve as solve_home
from placement.models.tetris_joint import solve
from placement.solvers.replicas import collocation
from placement.solvers.replicas import solve as sequential_replicas

from placement.tetris import TetrisSolution, load_instance
from placement.tetris.replica_eval import default_weights, evaluate_joint, joint_violations

REL = 1e-7
GAP = 1e-9  # the MIP gap of these tests: the DR term can be ~1e-5 of the objective


def _options(inst):
    """Every (home, replica set) of one table: home h and any subset of the other regions."""
    R = inst.n_regions
    out = []
    for h in range(R):
        others = [r for r in range(R) if r != h]
        for k in range(len(others) + 1):
            out += [(h, c) for c in itertools.combinations(others, k)]
    return out


def _brute_force(inst, budget, **weights):
    """Best joint objective over every (homes, replicas) pair, by the reference evaluation alone."""
    best = None
    for combo in itertools.product(_options(inst), repeat=inst.n_tables):
        sol = TetrisSolution(home=np.array([h for h, _ in combo], dtype=np.int64),
                             replicas=tuple(c for _, c in combo))
        if joint_violations(inst, sol, budget):
            continue
        val = evaluate_joint(inst, sol, **weights).objective
        best = val if best is None else min(best, val)
    return best


@st.composite
def tiny(draw):
    R = draw(st.integers(2, 3))
    T = draw(st.integers(2, 4 if R == 2 else 3))
    doc = tetris_document(T, draw(st.integers(1, 6)), R, seed=draw(st.integers(0, 10_000)),
                          n_gpu_types=draw(st.integers(1, 3)), n_priorities=draw(st.integers(1, 2)),
                          storage_room=draw(st.sampled_from([1.0, 1.5, 2.5])))
    inst = load_instance(doc)
    budget = draw(st.integers(0, inst.arrays.total_size))
    lam, mu = default_weights(inst)
    weights = draw(st.sampled_from([{}, {"runnable_weight": 0.0, "dr_weight": 0.0},
                                    {"runnable_weight": 10 * lam, "dr_weight": 10 * lam}]))
    return inst, budget, weights


@settings(max_examples=25)
@given(tiny())
def test_joint_optimum_equals_brute_force(case):
    inst, budget, weights = case
    best = _brute_force(inst, budget, **weights)
    res = solve(inst, replica_budget=budget, mip_gap=GAP, time_limit=60, **weights)
    assert best is not None  # generated instances are feasible at their start homes
    assert res.status == "optimal"
    assert res.objective == pytest.approx(best, rel=REL, abs=1e-6)
    assert res.bound <= res.objective + 1e-6 * max(1.0, abs(res.objective))
    assert joint_violations(inst, res.solution, budget) == []
    # The MIP's own value at its answer equals the reference evaluation.
    assert res.stats["model_objective"] == pytest.approx(
        evaluate_joint(inst, res.solution, **weights).objective, rel=REL, abs=1e-6)


small = st.builds(lambda T, J, R, seed: generate_tetris(T, J, R, seed=seed, n_gpu_types=3),
                  T=st.integers(3, 8), J=st.integers(2, 14), R=st.integers(2, 4), seed=st.integers(0, 10_000))


@settings(max_examples=10)
@given(small)
def test_joint_is_never_worse_than_the_sequential_pipeline(inst):
    """Home MIP then §3.5 replicas is a feasible point of the joint model at its own replica bytes."""
    homes = solve_home(inst, time_limit=60)
    seq = sequential_replicas(inst, home=homes.solution.home)
    budget = seq.stats["replica_bytes"]
    seq_value = evaluate_joint(inst, seq.solution).objective
    point = solve(inst, replica_budget=budget, fix_solution=seq.solution, time_limit=60)
    assert point.status == "optimal" and point.objective == pytest.approx(seq_value, rel=1e-12)
    assert point.stats["model_objective"] == pytest.approx(seq_value, rel=REL, abs=1e-6)
    res = solve(inst, replica_budget=budget, mip_gap=GAP, time_limit=60)
    assert res.status == "optimal"
    assert res.objective <= seq_value + 1e-6 * max(1.0, abs(seq_value))
    assert res.stats["model_objective"] == pytest.approx(res.objective, rel=REL, abs=1e-6)
    # The exact second stage (homes fixed, replicas optimal) lies between the two.
    second = solve(inst, replica_budget=budget, fix_home=homes.solution.home, mip_gap=GAP, time_limit=60)
    assert res.objective - 1e-6 <= second.objective <= seq_value + 1e-6 * max(1.0, abs(seq_value))
    assert np.array_equal(second.solution.home, homes.solution.home)


@pytest.mark.parametrize("seed", [3, 8])
def test_budget_zero_reduces_to_the_home_model(seed):
    inst = generate_tetris(8, 12, 3, seed=seed)
    home = solve_home(inst, time_limit=60)
    flat = solve(inst, replica_budget=0, runnable_weight=0, dr_weight=0, mip_gap=GAP, time_limit=60)
    assert flat.status == "optimal" and not any(flat.solution.replicas)
    assert flat.objective == pytest.approx(home.objective, rel=1e-6)
    free = solve(inst, replica_budget=inst.arrays.total_size, runnable_weight=0, dr_weight=0, mip_gap=GAP)
    assert free.status == "optimal" and free.objective == pytest.approx(home.objective, rel=1e-6)
    # Default weights, no budget: no replica, and never worse than the home optimum's point.
    res = solve(inst, replica_budget=0, mip_gap=GAP, time_limit=60)
    at_home = evaluate_joint(inst, TetrisSolution(home=home.solution.home, replicas=None))
    assert res.status == "optimal" and not any(res.solution.replicas)
    assert res.objective <= at_home.objective + 1e-9 * abs(at_home.objective)
    assert res.stats["home_objective"] >= home.objective * (1 - 1e-6)


def _hand_instance(move_quota):
    """east has A100 only, west H100 only; t1 (10 GB) at east is read by an H100 job of 50 GPU-hours."""
    return load_instance({
        "regions": [{"name": "east", "storage_capacity": 30, "gpu_supply": {"A100": 10}},
                    {"name": "west", "storage_capacity": 30, "gpu_supply": {"H100": 100}}],
        "tables": [{"name": "t1", "size": 10, "home": "east"}, {"name": "t2", "size": 4, "home": "east"}],
        "jobs": [{"name": "h", "kind": "ml", "tables": ["t1"], "gpu_type": "H100", "gpu_hours": 50,
                  "priority": 0},
                 {"name": "a", "kind": "ml", "tables": ["t1", "t2"], "gpu_type": "A100", "gpu_hours": 20,
                  "priority": 0}],
        "priority_weights": [1], "high_priorities": [], "weights": {"w1": 1, "w2": 0, "w3": 0},
        "move_quota": move_quota})


def test_hand_case_budget_decides_the_replica():
    inst = _hand_instance(move_quota=0)  # homes stay in east; (1) is 0 there
    both = solve(inst, replica_budget=10, runnable_weight=2.0, dr_weight=1.0)
    assert both.status == "optimal"
    assert both.solution.replicas == ((1,), ())  # t1 copied to west: the H100 job runs there
    assert both.stats["runnable_gpu_hours"] == 70 and both.stats["dr_tables"] == 1
    assert both.objective == pytest.approx(0 - 2.0 * 70 - 1.0 * 1)
    short = solve(inst, replica_budget=9, runnable_weight=2.0, dr_weight=1.0)
    assert short.solution.replicas == ((), (1,))  # only t2 (4 GB) fits: a DR copy, no new job
    assert short.stats["runnable_gpu_hours"] == 20
    assert short.objective == pytest.approx(-2.0 * 20 - 1.0)


def test_hand_case_joint_moves_the_home_instead_of_copying():
    inst = _hand_instance(move_quota=None)
    # No replica allowed. Homes (east, east): only job a runs, J = -2*20 = -40; (west, west): only h,
    # J = -2*50 = -100; split homes make job a NULL, (1) = 14: J = 14 - 100 or 14 - 0. Best: both west.
    best = _brute_force(inst, 0, runnable_weight=2.0, dr_weight=1.0)
    res = solve(inst, replica_budget=0, runnable_weight=2.0, dr_weight=1.0, mip_gap=GAP)
    assert res.status == "optimal" and res.objective == pytest.approx(best)
    assert res.objective == pytest.approx(-100.0) and best == pytest.approx(-100.0)
    assert res.stats["runnable_gpu_hours"] == 50 and res.solution.home.tolist() == [1, 1]


def test_infeasible_input_is_a_status():
    doc = tetris_document(5, 8, 2, seed=3)
    doc["home_threshold"] = 10**9
    inst = load_instance(doc)
    res = solve(inst, replica_budget=100, time_limit=30)
    assert res.status == "infeasible" and res.solution is None
    assert "(6)" in res.message
    ok = load_instance(tetris_document(5, 8, 2, seed=3))
    every = TetrisSolution(home=ok.arrays.home0.copy(),
                           replicas=tuple((1 - int(h),) for h in ok.arrays.home0))
    res = solve(ok, replica_budget=1, fix_solution=every)
    assert res.status == "infeasible" and "replica budget" in res.message


@pytest.mark.parametrize("kw,field", [({"replica_budget": -1}, "replica_budget"),
                                      ({"replica_budget": 2.5}, "replica_budget"),
                                      ({"replica_budget": "10"}, "replica_budget"),
                                      ({"replica_budget": True}, "replica_budget"),
                                      ({"runnable_weight": float("nan")}, "runnable_weight"),
                                      ({"dr_weight": -1.0}, "dr_weight")])
def test_bad_parameters_are_one_line_errors(kw, field):
    inst = generate_tetris(4, 5, 2, seed=1)
    with pytest.raises(ValueError) as err:
        solve(inst, **kw)
    assert str(err.value).startswith(field) and "\n" not in str(err.value)


@settings(max_examples=10)
@given(small, st.integers(0, 10_000))
def test_runnable_jobs_agree_with_the_replica_solver(inst, seed):
    """Two implementations of data-GPU collocation (numpy AND/OR here, bit masks in solvers/replicas.py)."""
    rng = np.random.default_rng(seed)
    R = inst.n_regions
    home = rng.integers(0, R, inst.n_tables)
    reps = tuple(tuple(r for r in range(R) if r != home[t] and rng.random() < 0.3) for t in range(inst.n_tables))
    ev = evaluate_joint(inst, TetrisSolution(home=home, replicas=reps))
    other = collocation(inst, home, reps)
    assert np.array_equal(ev.runnable, other["runnable"])
    assert ev.measures["collocation_gpu_hours"] == pytest.approx(other["gpu_hours"])


def test_constant_row_that_cannot_hold_is_infeasible():
    """No high-priority job at all: (6)'s left side is the constant 0, below a positive threshold."""
    doc = tetris_document(4, 6, 2, seed=2, n_priorities=3)
    doc["high_priorities"] = []
    doc["home_threshold"] = 1
    res = solve(load_instance(doc), replica_budget=10)
    assert res.status == "infeasible" and "(6)" in res.message and res.solution is None


def test_time_limit_is_a_status_with_a_feasible_answer_or_none():
    inst = generate_tetris(30, 60, 5, seed=9, storage_room=1.3)
    budget = inst.arrays.total_size // 10
    res = solve(inst, replica_budget=budget, time_limit=0.5)
    assert res.status in ("time_limit", "optimal")
    if res.solution is not None:
        assert joint_violations(inst, res.solution, budget) == []
        assert res.objective == pytest.approx(evaluate_joint(inst, res.solution).objective, rel=1e-12)
        assert res.bound is None or res.bound <= res.objective + 1e-9 * abs(res.objective)
