"""(5)'s fixings (models/tetris_bound/fixings.py): true of every feasible placement; the bounds keep them and stay valid."""

import copy

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from placement.instances import generate_tetris, tetris_document
from placement.models.tetris_bound import relaxation
from placement.models.tetris_bound import solve as bound
from placement.models.tetris_bound.fixings import cpu_fixings
from placement.solvers import hill_climb

from placement.tetris import evaluate, load_instance, violations
from placement.tetris.evaluation import job_regions
from tests.support import small_sizes


def _tight_cpu(T, J, R, seed, factor, sizes=None):
    """A generated instance with every app's CPU capacity scaled by ``factor`` (so (5) binds and
    forbids homes), optionally with table sizes in {0, 1, 2} (analytics jobs without bytes)."""
    doc = copy.deepcopy(tetris_document(T, J, R, seed=seed, ml_share=0.5))
    for app in doc["apps"]:
        app["cpu_capacity"] = {r: int(v * factor) for r, v in app["cpu_capacity"].items()}
    return load_instance(doc if sizes is None else small_sizes(doc, sizes))


tight = st.builds(_tight_cpu, T=st.integers(2, 6), J=st.integers(2, 12), R=st.integers(2, 3),
                  seed=st.integers(0, 10_000), factor=st.sampled_from([0.05, 0.2, 0.5]),
                  sizes=st.one_of(st.none(), st.lists(st.integers(0, 2), min_size=6, max_size=6)),
                  ).filter(lambda inst: inst.n_regions ** inst.n_tables <= 729)


def _feasible_homes(inst):
    R, T = inst.n_regions, inst.n_tables
    grid = np.indices((R,) * T).reshape(T, -1).T
    return [h for h in grid if not violations(inst, h, evaluate(inst, h))]


@settings(max_examples=25, deadline=None)
@given(tight)
def test_every_feasible_placement_keeps_the_fixings(inst):
    fx = cpu_fixings(inst)
    lens = np.diff(inst.arrays.job_ptr)
    for home in _feasible_homes(inst):
        assert not fx.table[np.arange(inst.n_tables), home].any()
        region, _ = job_regions(inst.arrays, home, inst.n_regions)
        placed = (lens > 1) & (region >= 0)
        assert not fx.job[np.flatnonzero(placed), region[placed]].any()


@settings(max_examples=12, deadline=None)
@given(tight)
def test_bounds_with_the_fixings_stay_below_the_brute_force_optimum(inst):
    values = [evaluate(inst, h).objective for h in _feasible_homes(inst)]
    if not values:
        return
    best = min(values)
    tol = 1e-6 * max(1.0, best)
    for method in ("lp", "forest"):
        assert bound(inst, method=method, time_limit=2).bound <= best + tol


def test_fixings_close_homes_and_lift_the_lp():
    """At 100 x 200 x 5 (seed 7) (5) forbids 25 homes; the LP rises (16,915 -> 26,404) and stays a bound
    of the placements hill climbing finds."""
    inst = generate_tetris(100, 200, 5, seed=7, n_gpu_types=4, n_priorities=7)
    fx = cpu_fixings(inst)
    assert fx.n_table > 0 and fx.job.any()
    values = []
    for fixings in (False, True):
        m = relaxation.build(inst, fixings=fixings)
        h, _ = relaxation.highs_model(m, 60, 1e-6)
        h.run()
        values.append(h.getInfo().objective_function_value)
    assert values[1] > 1.2 * values[0]
    lp = bound(inst, method="lp", time_limit=60)      # its tangent rounds only add valid cuts
    assert lp.bound >= values[1] - 1e-6 * values[1]
    assert lp.bound <= hill_climb.solve(inst).objective
