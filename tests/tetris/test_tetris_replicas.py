"""Extra replicas (MAST §3.5): collocation, storage capacity, DR copies, checked independently."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from placement.instances import tetris_document
from placement.solvers.hill_climb import solve as hill_climb
from placement.solvers.replicas import solve

from placement.tetris import evaluate, load_instance, violations


@st.composite
def instances(draw):
    doc = tetris_document(draw(st.integers(1, 30)), draw(st.integers(0, 50)), draw(st.integers(1, 5)),
                         seed=draw(st.integers(0, 10_000)), n_gpu_types=draw(st.integers(1, 4)),
                         n_priorities=draw(st.integers(1, 4)), max_tables_per_job=draw(st.integers(1, 4)))
    roomy = draw(st.booleans())
    if roomy:  # room for every table in every region: every ML job must become runnable
        total = sum(t["size"] for t in doc["tables"])
        for r in doc["regions"]:
            r["storage_capacity"] = total * (len(doc["regions"]) + 1)
    return load_instance(doc), roomy


def _holders(inst, sol) -> list[set[int]]:
    """Regions holding each table (home and replicas), by plain set arithmetic."""
    out = []
    for t in range(inst.n_tables):
        regs = {int(sol.home[t])}
        regs.update(int(r) for r in (sol.replicas[t] if sol.replicas else ()))
        out.append(regs)
    return out


def _stored(inst, holders) -> dict[int, int]:
    used = dict.fromkeys(range(inst.n_regions), 0)
    for t, regs in enumerate(holders):
        for r in regs:
            used[r] += inst.tables[t].size
    return used


@given(case=instances())
def test_replicas_collocate_within_storage(case):
    inst, roomy = case
    res = solve(inst)
    assert res.status == "feasible"
    sol = res.solution
    assert sol.replicas is not None and len(sol.replicas) == inst.n_tables
    assert np.array_equal(sol.home, hill_climb(inst).solution.home)
    ev = evaluate(inst, sol)
    assert res.objective == ev.objective and violations(inst, sol, ev) == []
    for t, regs in enumerate(sol.replicas):
        assert int(sol.home[t]) not in regs and len(set(regs)) == len(regs)

    holders = _holders(inst, sol)
    used = _stored(inst, holders)
    cap = {r: reg.storage_capacity for r, reg in enumerate(inst.regions)}
    assert all(used[r] <= cap[r] for r in used)  # replicas count against (4)

    gpu_regions = {g: {r for r, reg in enumerate(inst.regions) if reg.gpu_supply.get(g, 0) > 0}
                   for g in inst.gpu_types}
    tidx = inst.table_index
    ml = [j for j in inst.jobs if j.kind == "ml"]
    runnable = []
    for j in ml:
        tabs = [tidx[n] for n in j.tables]
        where = set.intersection(*(holders[t] for t in tabs)) & gpu_regions[j.gpu_type]
        runnable.append(bool(where))
        if not where:
            # Where the instance allows it: no region with the job's GPU type has room
            # left for the job's missing tables.
            assert not roomy
            for r in gpu_regions[j.gpu_type]:
                missing = sum(inst.tables[t].size for t in tabs if r not in holders[t])
                assert missing > cap[r] - used[r]
    if ml:
        assert res.stats["collocation_jobs_after"] == sum(runnable) / len(ml)
        assert res.stats["collocation_jobs_after"] >= res.stats["collocation_jobs_before"]
    assert res.stats["ml_jobs_not_runnable"] == len(runnable) - sum(runnable)
    rep_bytes = sum(inst.tables[t].size * len(regs) for t, regs in enumerate(sol.replicas))
    assert res.stats["replica_bytes"] == rep_bytes
    assert sum(res.stats["replicas_by_phase"].values()) == sum(len(r) for r in sol.replicas)
    if roomy and inst.n_regions > 1:
        assert all(sol.replicas)  # every table has a DR copy outside its home


@given(case=instances(), seed=st.integers(0, 3))
def test_replicas_deterministic(case, seed):
    inst, _ = case
    a, b = solve(inst, seed=seed), solve(inst, seed=seed)
    assert a.solution == b.solution


def test_given_home_and_no_dr():
    doc = tetris_document(20, 40, 4, seed=7, n_gpu_types=3, n_priorities=3)
    inst = load_instance(doc)
    home = inst.arrays.home0
    res = solve(inst, home=home, dr=False, storage_quota_share=0.0)
    assert np.array_equal(res.solution.home, home)
    assert res.stats["replicas_by_phase"]["dr"] == 0 and res.stats["replicas_by_phase"]["hot"] == 0


def test_infeasible_given_home_is_reported():
    doc = tetris_document(10, 20, 3, seed=3)
    doc["home_threshold"] = 10**9
    inst = load_instance(doc)
    res = solve(inst, home=inst.arrays.home0)
    assert res.status == "infeasible" and res.solution is None


def test_time_limited_homes_keep_time_limit_status():
    inst = load_instance(tetris_document(60, 120, 4, seed=5, n_gpu_types=2))
    res = solve(inst, time_limit=0.0)
    assert res.status == "time_limit"
    assert res.solution is not None and violations(inst, res.solution) == []
    assert res.solution.replicas is not None


@given(case=instances(), share=st.sampled_from([0.0, 0.05, 0.2, 0.5]))
def test_replica_budget_caps_every_phase(case, share):
    """Total replica bytes never exceed ``replica_budget``; budget 0 makes none; a budget of what the
    unbudgeted run used gives the same replicas (the phases add greedily in the same order)."""
    inst, _ = case
    home = hill_climb(inst).solution.home
    free = solve(inst, home=home)
    used = free.stats["replica_bytes"]
    sizes = [t.size for t in inst.tables]
    budget = share * sum(sizes)
    res = solve(inst, home=home, replica_budget=budget)
    assert res.status == "feasible" and res.stats["replica_budget"] == budget
    rep_bytes = sum(sizes[t] * len(r) for t, r in enumerate(res.solution.replicas))
    assert rep_bytes == res.stats["replica_bytes"] <= budget
    if budget == 0:
        assert not any(res.solution.replicas)
    same = solve(inst, home=home, replica_budget=used)
    assert same.solution.replicas == free.solution.replicas


def test_replica_budget_bad_value_is_one_line():
    inst = load_instance(tetris_document(5, 5, 2, seed=1))
    for bad in (-1, float("nan"), "10", True):
        try:
            solve(inst, home=inst.arrays.home0, replica_budget=bad)
        except ValueError as e:
            assert str(e).startswith("replica_budget:") and "\n" not in str(e)
        else:
            raise AssertionError(f"replica_budget={bad!r} accepted")
