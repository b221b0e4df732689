"""Exact CASSINI and HiveD models are checked against the reference evaluation.

The check fires when the model's value and the reference evaluation disagree (we perturb the
evaluation the model module sees), when the bound is too far (we report a looser bound than
HiGHS did) and on a per-link model whose angle grid is not faithful (a real disagreement);
on generated instances the model's value equals the reference evaluation and results verify.
"""

from __future__ import annotations

import dataclasses
import types

import placement.models.cassini as mc
import placement.models.hived as mh
import placement.models.hived_pulp as mhp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from placement.instances import generate_cassini, generate_hived
from placement.models.verification import verify

from placement.cassini.circle import unified_circle
from placement.cassini.evaluation import evaluate as cassini_evaluate
from placement.cassini.evaluation import link_score
from placement.cassini.profiles import JobProfile
from placement.result import Status
from tests.support import hived_instances


def test_verify_accepts_agreement_and_rejects_each_failure():
    ok = verify(Status.OPTIMAL, 0.75, 0.75, 0.75, sense="max", mip_gap=1e-9)
    assert (ok.status, ok.bound, ok.record["verified"], ok.message) == (Status.OPTIMAL, 0.75, True, "")
    off = verify(Status.OPTIMAL, 0.80, 0.75, 0.80, sense="max", mip_gap=1e-9)
    assert off.status == Status.FEASIBLE and off.bound is None and not off.record["agree"]
    assert "differs from the reference evaluation" in off.message
    refuted = verify(Status.OPTIMAL, 0.75, 0.75, 0.70, sense="max", mip_gap=1e-9)
    assert refuted.status == Status.FEASIBLE and refuted.bound is None and refuted.record["bound_refuted"]
    loose = verify(Status.OPTIMAL, 0.75, 0.75, 0.90, sense="max", mip_gap=1e-3)
    assert loose.status == Status.FEASIBLE and loose.bound == 0.90 and "exceeds mip_gap" in loose.message
    # A time limit stays a time limit; minimization mirrors the bound test.
    assert verify(Status.TIME_LIMIT, 3.0, 3.0, 5.0, sense="max", mip_gap=0).status == Status.TIME_LIMIT
    assert verify(Status.OPTIMAL, 2.0, 2.0, 2.5, sense="min", mip_gap=0).record["bound_refuted"]
    assert verify(Status.OPTIMAL, 2.0, 2.0 + 1e-9, 2.0, sense="min", mip_gap=0).status == Status.OPTIMAL


@settings(max_examples=4, deadline=None)
@given(st.integers(0, 10**6), st.integers(3, 5))
def test_cassini_exact_value_equals_reference_on_generated(seed, n_jobs):
    inst = generate_cassini(n_jobs, 2, seed=seed)
    for cand in inst.candidates:
        r = mc.solve_cluster(inst, cand.name, time_limit=30)
        if "verification" not in r.stats:  # no shared link: nothing was modelled
            continue
        v = r.stats["verification"]
        assert r.status == Status.OPTIMAL and v["verified"], r.message
        assert v["model_objective"] == pytest.approx(cassini_evaluate(inst, r.solution).score, abs=1e-6)
        assert r.objective == cassini_evaluate(inst, r.solution).score


def test_cassini_check_fires_when_the_evaluation_disagrees(monkeypatch):
    inst = generate_cassini(5, 2, seed=3)
    cand = next(c.name for c in inst.candidates if inst.shared_links(c.name))
    honest = mc.solve_cluster(inst, cand, time_limit=30)
    assert honest.status == Status.OPTIMAL and honest.stats["verification"]["verified"]
    monkeypatch.setattr(mc, "evaluate", lambda i, s: types.SimpleNamespace(score=cassini_evaluate(i, s).score - 0.01))
    r = mc.solve_cluster(inst, cand, time_limit=30)
    assert r.status == Status.FEASIBLE and r.bound is None and not r.stats["verification"]["verified"]
    assert "verification failed" in r.message
    whole = mc.solve(inst, time_limit=30)  # the candidate-level result inherits it
    assert whole.status == Status.FEASIBLE


def test_cassini_check_fires_when_the_bound_is_loose(monkeypatch):
    inst = generate_cassini(5, 2, seed=3)
    cand = next(c.name for c in inst.candidates if inst.shared_links(c.name))
    real_run = mc._run

    def loose(m, time_limit, mip_gap, mip_solver="highs"):
        status, has, bound, tc = real_run(m, time_limit, mip_gap, mip_solver)
        return status, has, bound + 0.05, tc  # a bound further than mip_gap from the solution

    monkeypatch.setattr(mc, "_run", loose)
    r = mc.solve_cluster(inst, cand, time_limit=30)
    v = r.stats["verification"]
    assert r.status == Status.FEASIBLE and v["agree"] and v["gap"] > 1e-3
    assert r.bound == pytest.approx(v["solver_bound"]) and r.bound > r.objective


def test_link_model_on_an_unfaithful_grid_is_not_called_optimal():
    """Where the tolerance bites for real: slot-averaged angles hide excess, so the model's
    score and the integer-grid reference differ and the result is only feasible."""
    a = JobProfile("a", 250, ((137, 0.0), (113, 40.0)))
    b = JobProfile("b", 200, ((101, 0.0), (99, 35.0)))
    c = unified_circle([a, b], 50.0, max_angles=40, max_folded=10)
    assert c.mode == "coarse" and not c.faithful
    r = mc.solve_link(c, time_limit=30)
    v = r.stats["verification"]
    assert r.objective == link_score([a, b], r.stats["shifts"], 50.0)
    # Slot averaging can only hide excess, so the model's own score is never below the reference.
    assert v["model_objective"] > r.objective + 1e-6 and not v["agree"]
    assert r.status == Status.FEASIBLE and r.bound is None and "not faithful" in r.message


@settings(max_examples=8, deadline=None)
@given(hived_instances)
def test_hived_value_equals_reference_on_generated(inst):
    for solve in (mh.solve, mhp.solve):
        r = solve(inst, time_limit=60)
        if "verification" not in r.stats:  # nothing to decide (pinned cells only)
            continue
        v = r.stats["verification"]
        assert r.status == Status.OPTIMAL and v["verified"], r.message
        assert v["model_objective"] == pytest.approx(r.objective) and r.bound == r.objective


@pytest.mark.parametrize("module", [mh, mhp], ids=["pyomo", "pulp"])
def test_hived_check_fires_when_the_evaluation_disagrees(monkeypatch, module):
    inst = generate_hived(2, 3, 2, 3, seed=7, overload=1, n_pinned=1)
    assert mh.structure(inst).index
    real = module.evaluate
    monkeypatch.setattr(module, "evaluate", lambda i, s: dataclasses.replace(real(i, s), honoured=real(i, s).honoured - 1))
    r = module.solve(inst, time_limit=60)
    assert r.status == Status.FEASIBLE and r.bound is None and "verification failed" in r.message


@settings(max_examples=2, deadline=None)
@given(st.integers(0, 10**6))
def test_table1_solver_brackets_the_exact_optimum(seed):
    """``--solver table1``: reference score of the composed shifts <= exact optimum <= mean of per-link
    optima; a candidate whose links are all consistent reaches its bound exactly."""
    inst = generate_cassini(4, 2, seed=seed)
    t1 = mc.solve_table1(inst, time_limit=30)
    ex = mc.solve(inst, time_limit=30)
    assert ex.status == Status.OPTIMAL and t1.has_solution
    assert t1.objective == cassini_evaluate(inst, t1.solution).score
    assert t1.objective <= ex.objective + 1e-9
    for row in t1.stats["candidates"]:
        if row["bound"] is None:
            continue
        for info in row["links"].values():
            assert info["score"] <= info["optimum"] + 1e-9  # no unique assignment beats a per-link optimum
        if row["consistent"]:
            assert row["score"] == pytest.approx(row["bound"], abs=1e-9)
    if t1.bound is not None:
        assert ex.objective <= t1.bound + 1e-9
        assert (t1.status == Status.OPTIMAL) == (t1.objective >= t1.bound - 1e-9)


def test_compose_shifts_keeps_every_per_link_optimum_on_a_tree():
    """Loop-free Affinity graph (a path j0 - l1 - j1 - l2 - j2): Algorithm 1's walk keeps each
    link's relative shifts, so every link scores its per-link optimum under the unique shifts."""
    a = JobProfile("a", 40, ((20, 0.0), (20, 40.0)))
    b = JobProfile("b", 60, ((30, 0.0), (30, 40.0)))
    c = JobProfile("c", 40, ((10, 0.0), (30, 30.0)))
    link_jobs = {"l1": ("a", "b"), "l2": ("b", "c")}
    jobs = {"a": a, "b": b, "c": c}
    per_link, optimum = {}, {}
    for lk, names in link_jobs.items():
        circ = unified_circle([jobs[n] for n in names], 50.0)
        r = mc.solve_link(circ, time_limit=30)
        assert r.status == Status.OPTIMAL
        per_link[lk] = dict(zip(names, r.stats["shifts"], strict=True))
        optimum[lk] = r.objective
    shifts = mc.compose_shifts(link_jobs, per_link, {n: j.iteration_time for n, j in jobs.items()})
    assert shifts["a"] == 0
    for lk, names in link_jobs.items():
        assert link_score([jobs[n] for n in names], [shifts[n] for n in names], 50.0) == pytest.approx(optimum[lk])
