"""CASSINI per link: unified circle, integer-grid evaluation, exhaustive search vs Table 1 model vs brute force."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from placement.instances.cassini import figure5_instance
from placement.models.cassini import solve_link
from placement.solvers.rotation import exhaustive, local_search, search_link

from placement.cassini.circle import unified_circle
from placement.cassini.evaluation import link_demand, link_score
from placement.cassini.profiles import JobProfile


@st.composite
def profiles(draw, iters=(20, 30, 40, 60, 120), quantum=10, n_jobs=(2, 3), max_phases=4):
    """Jobs whose phase boundaries lie on a ``quantum`` lattice (so refined circles stay small)."""
    n = draw(st.integers(*n_jobs))
    jobs = []
    for i in range(n):
        it = draw(st.sampled_from(iters))
        units = it // quantum
        k = draw(st.integers(1, min(max_phases, units)))
        cuts = sorted(draw(st.lists(st.integers(1, units - 1), min_size=k - 1, max_size=k - 1, unique=True))) \
            if units > 1 else []
        bounds = [0] + cuts + [units]
        phases = tuple(((b - a) * quantum, float(draw(st.sampled_from([0, 10, 20, 30, 40, 45]))))
                       for a, b in zip(bounds, bounds[1:], strict=False))
        jobs.append(JobProfile(f"j{i}", it, phases))
    return jobs


def brute_force_best(jobs, capacity):
    """Best integer-grid score over every integer shift (job 0 fixed at 0)."""
    best = -math.inf
    for rest in itertools.product(*(range(j.iteration_time) for j in jobs[1:])):
        best = max(best, link_score(jobs, (0,) + rest, capacity))
    return best


def test_link_demand_follows_the_shifted_phases():
    a = JobProfile("a", 4, ((1, 10.0), (3, 0.0)))
    b = JobProfile("b", 6, ((2, 5.0), (4, 0.0)))
    d = link_demand([a, b], [1, 3])
    # a sends at t = 1, 5, 9 (period 4); b at t = 3, 4, 9, 10 (period 6) over p = 12.
    expect = np.zeros(12)
    expect[[1, 5, 9]] += 10
    expect[[3, 4, 9, 10]] += 5
    assert np.array_equal(d, expect)
    assert link_score([a, b], [1, 3], 12.0) == pytest.approx(1 - 3 / (12 * 12))


@given(profiles(), st.sampled_from([40.0, 50.0, 60.0]), st.data())
def test_faithful_circle_scores_equal_integer_grid(jobs, cap, data):
    c = unified_circle(jobs, cap)
    assert c.faithful and c.perimeter % c.n_angles == 0
    rot = [data.draw(st.integers(0, k - 1)) for k in c.n_rotations]
    assert c.score(rot) == pytest.approx(link_score(jobs, c.shifts(rot), cap), abs=1e-12)


@settings(max_examples=30)
@given(profiles(iters=(4, 6, 8, 12), quantum=1, max_phases=3), st.sampled_from([30.0, 50.0]))
def test_exhaustive_on_faithful_grid_equals_best_integer_shift(jobs, cap):
    c = unified_circle(jobs, cap)
    assert c.faithful
    rot, score, _ = exhaustive(c)
    assert score == pytest.approx(brute_force_best(jobs, cap), abs=1e-12)
    assert link_score(jobs, c.shifts(rot), cap) == pytest.approx(score, abs=1e-12)


@settings(max_examples=20)
@given(profiles(), st.sampled_from([40.0, 50.0]))
def test_exact_model_equals_exhaustive_and_local_never_better(jobs, cap):
    c = unified_circle(jobs, cap)
    res = solve_link(c, time_limit=30)
    assert res.status == "optimal"
    _, ex, _ = exhaustive(c)
    assert res.objective == pytest.approx(ex, abs=1e-7)
    assert res.stats["circle_score"] == pytest.approx(res.objective, abs=1e-9)  # faithful grid
    _, loc, _ = local_search(c, restarts=2, seed=1)
    assert loc <= ex + 1e-12


@settings(max_examples=10)
@given(profiles(iters=(72, 144), quantum=2, n_jobs=(2, 2), max_phases=3), st.sampled_from([40.0, 50.0]))
def test_default_five_degrees_kept_where_faithful(jobs, cap):
    c = unified_circle(jobs, cap, precision_deg=5.0)
    # p in {72, 144} and every boundary even: the 5-degree slot (1 or 2 units) is faithful.
    assert (c.mode, c.n_angles, c.faithful) == ("requested", 72, True)
    res = solve_link(c, time_limit=30)
    assert res.objective == pytest.approx(exhaustive(c)[1], abs=1e-7)


def test_precision_sweep_requested_grid_is_never_better_than_faithful():
    jobs = [JobProfile("a", 120, ((70, 0.0), (50, 40.0))), JobProfile("b", 180, ((110, 0.0), (70, 35.0)))]
    best = exhaustive(unified_circle(jobs, 50.0))[1]
    for prec in (60.0, 30.0, 15.0, 10.0, 5.0, 1.0):
        c = unified_circle(jobs, 50.0, precision_deg=prec, refine=False)
        rot, _, _ = exhaustive(c)
        assert link_score(jobs, c.shifts(rot), 50.0) <= best + 1e-12


def test_figure5_forty_and_sixty_ms_become_fully_compatible():
    inst = figure5_instance()
    j1, j2 = inst.jobs
    assert inst.perimeter(["j1", "j2"]) == 120
    assert link_score([j1, j2], [0, 0], 50.0) == pytest.approx(0.95)
    c = unified_circle([j1, j2], 50.0)
    rot, score, _ = exhaustive(c)
    assert score == pytest.approx(1.0)
    s1, s2 = c.shifts(rot)
    assert (s1 - s2) % 20 == 10  # e.g. j1 turned by 30 degrees = 10 ms of the 120 ms circle
    assert link_score([j1, j2], [10, 0], 50.0) == pytest.approx(1.0)
    # Every fully compatible pair of integer shifts has this relative shift.
    for a in range(40):
        for b in range(60):
            assert (link_score([j1, j2], [a, b], 50.0) == pytest.approx(1.0)) == ((a - b) % 20 == 10)


def test_incommensurate_iteration_times_fold_to_an_exact_search():
    a = JobProfile("a", 255, ((141, 0.0), (114, 40.0)))
    b = JobProfile("b", 161, ((80, 0.0), (81, 40.0)))
    c = unified_circle([a, b], 50.0, max_angles=720)
    assert c.perimeter == 255 * 161 and (c.mode, c.faithful) == ("folded", True)
    # Coprime iteration times: every relative offset occurs on the circle, so shifts cannot matter,
    # and the folded domain has a single configuration.
    assert c.n_rotations == (1, 1)
    base = link_score([a, b], [0, 0], 50.0)
    for s in [(0, 17), (100, 3), (254, 160)]:
        assert link_score([a, b], s, 50.0) == pytest.approx(base, abs=1e-12)
    rot, circle_score, _ = search_link(c)
    assert circle_score == pytest.approx(link_score([a, b], c.shifts(rot), 50.0), abs=1e-12)


@settings(max_examples=25)
@given(profiles(iters=(5, 6, 7, 9, 10), quantum=1, max_phases=3), st.sampled_from([30.0, 50.0]))
def test_folded_search_equals_best_integer_shift(jobs, cap):
    c = unified_circle(jobs, cap, max_angles=2)
    if c.perimeter // c.quantum > 2:
        assert c.mode == "folded" and c.faithful
        # prod_j gcd(L_{j-1}, iter_j) = prod(iter) / p, on the quantum lattice of the link.
        n = len(jobs)
        assert np.prod(c.n_rotations) * c.quantum ** (n - 1) == np.prod([j.iteration_time for j in jobs]) // c.perimeter
    rot, score, _ = exhaustive(c)
    assert score == pytest.approx(brute_force_best(jobs, cap), abs=1e-12)
    assert link_score(jobs, c.shifts(rot), cap) == pytest.approx(score, abs=1e-12)


def test_coarse_grid_beyond_the_folding_budget_reports_its_error():
    a = JobProfile("a", 250, ((137, 0.0), (113, 40.0)))
    b = JobProfile("b", 200, ((101, 0.0), (99, 35.0)))
    c = unified_circle([a, b], 50.0, max_angles=720, max_folded=10)
    assert c.mode == "coarse" and not c.faithful and c.perimeter % c.n_angles == 0
    rot, circle_score, _ = search_link(c)
    ref = link_score([a, b], c.shifts(rot), 50.0)
    # Slot averaging can only hide excess (max(0, mean) <= mean of max(0, .)).
    assert circle_score >= ref - 1e-12
    folded = unified_circle([a, b], 50.0)
    assert folded.mode == "folded"
    assert exhaustive(folded)[1] >= ref - 1e-12
