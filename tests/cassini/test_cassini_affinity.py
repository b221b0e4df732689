"""CASSINI across links: Affinity graph, loop detection, BFS shifts (Theorem 1), ranking, fallback, exact model."""

import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from placement.instances.cassini import figure8b_instance, generate_cassini, links_instance
from placement.models.cassini import solve as solve_exact
from placement.models.cassini import solve_cluster
from placement.solvers.affinity import bfs_shifts, link_optima, rank_candidates, repair_shifts
from placement.solvers.affinity import solve as solve_affinity
from placement.solvers.rotation import solve as solve_rotation

from placement.cassini.affinity import affinity_graph, has_loop, loop_components
from placement.cassini.evaluation import candidate_scores, evaluate, link_score
from placement.cassini.instance import CassiniSolution
from placement.cassini.profiles import JobProfile

ITERS = (20, 30, 40, 60)


@st.composite
def job_list(draw, n):
    jobs = []
    for i in range(n):
        it = draw(st.sampled_from(ITERS))
        units = it // 10
        cut = draw(st.integers(1, units - 1))
        bw = float(draw(st.sampled_from([20, 30, 40, 45])))
        jobs.append(JobProfile(f"j{i}", it, ((cut * 10, 0.0), ((units - cut) * 10, bw))))
    return jobs


@st.composite
def loop_free_structure(draw, max_links=4):
    """A random forest-shaped Affinity graph (1-2 trees): each new link touches one earlier job of its tree."""
    links: dict[str, list[str]] = {}
    n_jobs = 0
    for tree in range(draw(st.integers(1, 2))):
        first = draw(st.integers(2, 3))
        members = list(range(n_jobs, n_jobs + first))
        links[f"t{tree}l0"] = [f"j{i}" for i in members]
        n_jobs += first
        for k in range(1, draw(st.integers(1, max_links - tree))):
            anchor = draw(st.sampled_from(members))
            new = draw(st.integers(1, 2))
            links[f"t{tree}l{k}"] = [f"j{anchor}"] + [f"j{n_jobs + i}" for i in range(new)]
            members += list(range(n_jobs, n_jobs + new))
            n_jobs += new
    return links, n_jobs


@st.composite
def any_structure(draw, max_jobs=5, max_links=4):
    """Random link -> jobs sets (loops allowed)."""
    n_jobs = draw(st.integers(2, max_jobs))
    n_links = draw(st.integers(1, max_links))
    links = {}
    for k in range(n_links):
        members = draw(st.lists(st.integers(0, n_jobs - 1), min_size=2, max_size=min(3, n_jobs), unique=True))
        links[f"l{k}"] = [f"j{i}" for i in sorted(members)]
    used = sorted({j for js in links.values() for j in js}, key=lambda s: int(s[1:]))
    return links, used


@settings(max_examples=50)
@given(loop_free_structure(), st.data(), st.integers(0, 3))
def test_theorem1_bfs_keeps_every_link_at_its_optimum(structure, data, seed):
    links, n = structure
    jobs = data.draw(job_list(n))
    inst = links_instance(links, jobs, capacity=50.0)
    shared = inst.shared_links("c0")
    assert set(shared) == set(links) and not has_loop(shared)
    opt = link_optima(inst, "c0", method="exhaustive")
    iters = {j.name: j.iteration_time for j in jobs}
    t = bfs_shifts(shared, {lk: o.shifts for lk, o in opt.items()}, iters, seed=seed)
    assert set(t) == {j.name for j in jobs}
    for lk, o in opt.items():
        names = shared[lk]
        for a, b in itertools.combinations(names, 2):
            g = np.gcd(iters[a], iters[b])
            assert (t[a] - t[b]) % g == (o.shifts[a] - o.shifts[b]) % g
        got = link_score([inst.job[x] for x in names], [t[x] for x in names], 50.0)
        assert got == pytest.approx(o.score, abs=1e-12)
    sol = CassiniSolution("c0", tuple((j.name, t[j.name]) for j in jobs))
    mean_opt = np.mean([o.score for o in opt.values()])
    assert evaluate(inst, sol).score == pytest.approx(mean_opt, abs=1e-12)
    exact = solve_cluster(inst, "c0", time_limit=60)
    assert exact.status == "optimal"
    assert exact.objective == pytest.approx(mean_opt, abs=1e-7)


@given(any_structure())
def test_loop_detection_agrees_with_cycle_basis(structure):
    links, _ = structure
    g = affinity_graph(links)
    assert has_loop(links) == bool(nx.cycle_basis(g))
    assert has_loop(links) == bool(loop_components(g))
    # A forest has exactly |nodes| - |components| edges.
    assert has_loop(links) == (g.number_of_edges() > g.number_of_nodes() - nx.number_connected_components(g))


def test_two_jobs_sharing_two_links_form_a_loop():
    assert has_loop({"a": ["j1", "j2"], "b": ["j2", "j1"]})
    assert not has_loop({"a": ["j1", "j2"], "b": ["j2", "j3"], "c": ["j4"]})


@settings(max_examples=15)
@given(st.integers(0, 10_000))
def test_loopy_candidates_are_never_ranked_loop_free(seed):
    inst = generate_cassini(6, 4, seed=seed, fragmentation=0.6)
    rows = rank_candidates(inst, loops="fallback")
    for r in rows:
        g = affinity_graph(inst.shared_links(r["candidate"]))
        assert r["loop_free"] == (not nx.cycle_basis(g))
    scores = [r["score"] for r in rows]
    assert scores == sorted(scores, reverse=True)
    discard = rank_candidates(inst, loops="discard")
    for r in discard:
        assert (r["score"] is None) == (not r["loop_free"])


@settings(max_examples=30)
@given(any_structure(max_jobs=4, max_links=3), st.data())
def test_fallback_and_affinity_never_beat_the_exact_cluster_model(structure, data):
    links, used = structure
    jobs = data.draw(job_list(int(used[-1][1:]) + 1))
    inst = links_instance(links, jobs, capacity=50.0)
    exact = solve_exact(inst, time_limit=60)
    assert exact.status == "optimal"
    assert exact.objective == pytest.approx(evaluate(inst, exact.solution).score, abs=1e-12)
    assert exact.stats["model_objective"] == pytest.approx(exact.objective, abs=1e-7)
    aff = solve_affinity(inst)
    assert aff.status == "feasible"
    assert aff.objective <= exact.objective + 1e-9
    assert aff.objective == pytest.approx(evaluate(inst, aff.solution).score, abs=1e-12)
    simple = solve_rotation(inst, seed=1)
    assert simple.objective <= exact.objective + 1e-9
    assert simple.stats["per_link_optimum_mean"] >= exact.objective - 1e-9  # per-link optima bound every shift


@settings(max_examples=15)
@given(any_structure(max_jobs=3, max_links=3), st.data())
def test_exact_cluster_model_equals_brute_force(structure, data):
    links, used = structure
    jobs = data.draw(job_list(int(used[-1][1:]) + 1))
    inst = links_instance(links, jobs, capacity=50.0)
    best = -np.inf
    names = [j.name for j in jobs]
    for shifts in itertools.product(*(range(j.iteration_time) for j in jobs[1:])):
        sc = candidate_scores(inst, "c0", dict(zip(names, (0,) + shifts, strict=True)))
        best = max(best, np.mean(list(sc.values())))
    for form in ("config", "slot"):
        res = solve_cluster(inst, "c0", time_limit=60, formulation=form)
        assert res.status == "optimal"
        assert res.objective == pytest.approx(best, abs=1e-9)


def test_repair_never_lowers_the_score():
    inst = generate_cassini(8, 3, seed=5, fragmentation=0.8)
    for c in inst.candidates:
        start = {j.name: 0 for j in inst.jobs}
        before = np.mean(list(candidate_scores(inst, c.name, start).values()) or [1.0])
        after_shifts, _ = repair_shifts(inst, c.name, start, [j.name for j in inst.jobs])
        after = np.mean(list(candidate_scores(inst, c.name, after_shifts).values()) or [1.0])
        assert after >= before - 1e-12


def test_figure8b_shifts_follow_equations_7_to_9():
    inst = figure8b_instance()
    shared = inst.shared_links("c0")
    assert shared == {"l1": ("j1", "j2"), "l2": ("j2", "j3")}
    opt = link_optima(inst, "c0", method="exhaustive")
    w = {lk: o.shifts for lk, o in opt.items()}
    iters = {j.name: j.iteration_time for j in inst.jobs}
    t = bfs_shifts(shared, w, iters, start="j1")
    assert t["j1"] == 0                                                              # (7)
    assert t["j2"] == (-w["l1"]["j1"] + w["l1"]["j2"]) % iters["j2"]                 # (8)
    assert t["j3"] == (-w["l1"]["j1"] + w["l1"]["j2"] - w["l2"]["j2"] + w["l2"]["j3"]) % iters["j3"]  # (9)
    res = solve_affinity(inst)
    exact = solve_exact(inst)
    assert res.objective == pytest.approx(exact.objective, abs=1e-9)
    assert res.stats["links_at_per_link_optimum"] == 2
    # Without coordination (all shifts 0) the chain loses score.
    zero = CassiniSolution("c0", tuple((j.name, 0) for j in inst.jobs))
    assert evaluate(inst, zero).score < res.objective


def test_time_limit_is_a_status_with_an_evaluated_incumbent():
    inst = generate_cassini(10, 10, seed=1)
    res = solve_affinity(inst, time_limit=1e-9)
    assert res.status == "time_limit" and res.stats["skipped_candidates"] == 9
    assert res.objective == pytest.approx(evaluate(inst, res.solution).score)
    full = solve_affinity(inst)
    assert full.status == "feasible" and full.objective >= res.objective - 1e-12


def test_oversized_cluster_model_is_an_error_status_and_affinity_still_solves():
    a = JobProfile("a", 255, ((141, 0.0), (114, 40.0)))
    b = JobProfile("b", 161, ((80, 0.0), (81, 40.0)))
    inst = links_instance({"l": ["a", "b"]}, [a, b], capacity=50.0)
    res = solve_exact(inst)
    assert res.status == "error" and "max_terms" in res.message and res.solution is None
    aff = solve_affinity(inst)
    # Coprime iteration times: the folded search has one configuration and every shift scores alike.
    assert aff.status == "feasible" and aff.stats["circle_error_max"] == 0.0
    assert aff.objective == pytest.approx(evaluate(inst, CassiniSolution("c0", (("a", 0), ("b", 0)))).score)
