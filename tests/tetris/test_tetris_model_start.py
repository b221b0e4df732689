"""The exact model's start, its secants at a placement, the per-level big-M and the proof by the best bound."""

import numpy as np
import pyomo.environ as pyo
import pytest
from hypothesis import given
from hypothesis import strategies as st
from placement.instances import generate_tetris
from placement.models.tetris import (
    SATURATION_LEVEL,
    add_secants_at,
    add_violated_secants,
    build,
    solve,
)
from pyomo.contrib.solver.common.factory import SolverFactory

from placement.tetris import evaluate, violations
from placement.tetris.evaluation import sigmoid
from tests.support import brute_force

tiny = st.builds(
    lambda T, J, R, seed, G, K: generate_tetris(T, J, R, seed=seed, n_gpu_types=G, n_priorities=K),
    T=st.integers(2, 6), J=st.integers(1, 8), R=st.integers(2, 3), seed=st.integers(0, 10_000),
    G=st.integers(1, 3), K=st.integers(1, 3),
).filter(lambda inst: inst.n_regions ** inst.n_tables <= 729)


def _random_home(inst, rnd) -> np.ndarray:
    return np.array([rnd.randrange(inst.n_regions) for _ in range(inst.n_tables)], dtype=np.int64)


@given(tiny, st.randoms(use_true_random=False))
def test_a_start_keeps_the_optimum(inst, rnd):
    """Any start (feasible or not) handed to HiGHS leaves the optimum and the bound as brute force says."""
    best, _ = brute_force(inst)
    res = solve(inst, time_limit=60, start=_random_home(inst, rnd))
    assert res.status == "optimal"
    assert res.objective == pytest.approx(best, rel=1e-6, abs=1e-6)
    assert res.bound <= best + 1e-6 * max(1.0, abs(best))
    assert not violations(inst, res.solution)


@given(tiny, st.randoms(use_true_random=False))
def test_secants_at_a_placement_make_the_model_exact_there(inst, rnd):
    """After add_secants_at, the model's value at that placement is the reference value, no lazy cut missing."""
    home = _random_home(inst, rnd)
    m = build(inst)
    add_secants_at(m, evaluate(inst, home))
    for (t, r), v in m.x.items():
        v.fix(1 if home[t] == r else 0)
    res = SolverFactory("highs").solve(m, threads=1, load_solutions=False, raise_exception_on_nonoptimal_result=False,
                                       solver_options={"presolve": "off", "mip_feasibility_tolerance": 1e-9})
    if violations(inst, home):
        return  # (4)-(6) or the quota cannot hold: nothing to compare
    res.solution_loader.load_vars()
    assert add_violated_secants(m, 1e-9) == []
    assert pyo.value(m.obj) == pytest.approx(evaluate(inst, home).objective, rel=1e-7, abs=1e-7)


@given(tiny, st.randoms(use_true_random=False))
def test_the_level_big_m_holds_the_product_at_every_placement(inst, rnd):
    """At a placement's own overload level, sum_k w_k (7) is within that level's big-M (no value is lost)."""
    home = _random_home(inst, rnd)
    m = build(inst)
    A, ev = inst.arrays, evaluate(inst, home)
    TD, TS = A.total_demand, A.total_supply
    for (r, g), levels in m._levels.items():
        over = max(0, int(ev.demand[r, g].sum()) - int(A.supply[r, g]))
        level = min(lv for lv in levels if lv >= min(over, levels[-1]))
        s = A.supply[r, g] / TS[g]
        q = sum(A.prio_w[k] * (ev.demand[r, g, k] / TD[g, k] - s) ** 2 for k in range(TD.shape[1]) if TD[g, k] > 0)
        assert q <= m._level_qmax[r, g, level] * (1 + 1e-12) + 1e-12
    assert sigmoid(SATURATION_LEVEL) == 1.0


def test_the_best_bound_closes_the_proof_and_matches_a_cold_solve():
    """A 20-table instance: with the start, the proof ends by the best bound, at the cold solve's optimum."""
    inst = generate_tetris(20, 40, 4, seed=4)
    cold = solve(inst, time_limit=120)
    warm = solve(inst, time_limit=120, start=cold.solution.home)
    assert cold.status == "optimal" and warm.status == "optimal"
    assert warm.objective == pytest.approx(cold.objective, rel=1e-6)
    assert warm.stats["closed_by_bound"] >= 1
    assert warm.stats["round_log"][0]["best_reference"] == pytest.approx(cold.objective, rel=1e-12)


@pytest.mark.parametrize("seed", [4, 5])
def test_highs_receives_the_start(seed):
    """The start reaches HiGHS (through the private hooks of the pinned Pyomo interface): with no
    branching and no primal heuristics, HiGHS's incumbent is the start, at its reference value (the
    secants added there make the model exact at it); without the start it has no incumbent at all."""
    from placement.models.tetris import DEFAULT_HIGHS_OPTIONS, _StartedHighs, _x_start

    inst = generate_tetris(20, 40, 4, seed=seed)
    home = inst.arrays.home0.copy()
    incumbents = []
    for with_start in (True, False):
        m = build(inst)
        add_secants_at(m, evaluate(inst, home))
        opt = _StartedHighs()
        opt.start = _x_start(m, home) if with_start else None
        res = opt.solve(m, threads=1, tee=False, load_solutions=False, raise_exception_on_nonoptimal_result=False,
                        solver_options={**DEFAULT_HIGHS_OPTIONS, "mip_max_nodes": 0, "mip_heuristic_effort": 0.0})
        incumbents.append(res.incumbent_objective)
    assert incumbents[0] == pytest.approx(evaluate(inst, home).objective, rel=1e-9)
    assert incumbents[1] is None
