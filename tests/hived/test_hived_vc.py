"""VC-assignment MIP (models/hived_vc.py): feasible, and equal to a brute force on tiny clusters."""

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st
from placement.models import hived_vc as hv

from placement.errors import InstanceError
from placement.hived.feasibility import is_feasible
from placement.result import Status
from placement.sim.trace import Job


def _per_tenant_options(cap, levels):
    g = hv.LEVEL_GPUS
    rng = [range(cap // g[k] + 1) if k in levels else range(1) for k in range(1, 5)]
    return [x for x in itertools.product(*rng) if sum(g[k + 1] * n for k, n in enumerate(x)) <= cap]


def _brute(demand, n_nodes, levels=(1, 2, 3, 4), largest=None, totals=None, fair=True):
    cap = 8 * n_nodes
    tenants = list(demand)
    opts = _per_tenant_options(cap, set(levels))
    best = None
    for combo in itertools.product(opts, repeat=len(tenants)):
        a = hv.VCAssignment(n_nodes, dict(zip(tenants, combo, strict=True)))
        if a.total_gpus > cap:
            continue
        ok = True
        for t in tenants:
            if largest and t in largest:
                k = hv.request_level(largest[t])
                need = hv.request_cells(largest[t]) * hv.LEVEL_GPUS[k]
                if sum(hv.LEVEL_GPUS[j + 1] * a.cells[t][j] for j in range(k - 1, 4)) < need:
                    ok = False
            if totals is not None and a.gpus(t) != totals[t]:
                ok = False
        if not ok:
            continue
        share, mix = hv.evaluate(a, demand)
        key = (round(share, 6), round(hv.shortfall(a, demand), 6) if fair else 0.0, mix)
        if best is None or key < best:
            best = key
    return best


demands = st.dictionaries(st.sampled_from(["a", "b"]),
                          st.tuples(*[st.integers(0, 5).map(float)] * 4).filter(lambda d: sum(d) > 0),
                          min_size=2, max_size=2)


@given(demands, st.sets(st.integers(1, 4), min_size=1), st.booleans())
def test_fit_equals_brute_force_one_node(demand, levels, cover):
    largest = {"a": 4, "b": 2} if cover else None
    res = hv.solve(demand, 1, levels=levels, largest=largest)
    brute = _brute(demand, 1, levels, largest)
    if brute is None:
        assert res.status == Status.INFEASIBLE
        return
    assert res.status == Status.OPTIMAL
    share, mix = hv.evaluate(res.solution, demand)
    assert share == pytest.approx(res.objective, abs=1e-9)
    assert share == pytest.approx(brute[0], abs=1e-5)
    assert hv.shortfall(res.solution, demand) == pytest.approx(brute[1], abs=1e-5)
    assert mix == pytest.approx(brute[2], abs=1e-5)
    assert is_feasible(hv.to_instance(res.solution))


@pytest.mark.slow
def test_fit_equals_brute_force_two_nodes_with_totals():
    demand = {"a": (3.0, 0.0, 5.0, 2.0), "b": (1.0, 4.0, 0.0, 6.0)}
    node, multi = hv.node_level_then_multi(demand, 2, largest={"a": 8, "b": 1})
    assert node.status == multi.status == Status.OPTIMAL
    assert all(c[:3] == (0, 0, 0) for c in node.solution.cells.values())
    totals = {t: node.solution.gpus(t) for t in demand}
    assert {t: multi.solution.gpus(t) for t in demand} == totals
    assert hv.evaluate(node.solution, demand)[0] == pytest.approx(_brute(demand, 2, (4,), {"a": 8, "b": 1})[0])
    assert hv.evaluate(multi.solution, demand)[1] == pytest.approx(_brute(demand, 2, largest={"a": 8, "b": 1},
                                                                          totals=totals)[2], abs=1e-6)
    # multi-level cells match the mix at least as well as node cells with the same GPUs
    assert multi.stats["mix"] <= node.stats["mix"] + 1e-9


@given(st.integers(1, 9).map(float), st.integers(1, 9).map(float))
def test_fair_stage_spreads_the_cut_like_brute_force(b, c):
    """One node, cells of 1 and 4 GPUs. Tenant a has almost no demand but must hold its 4-GPU
    job, so b and c share the 4 GPUs left against shares that add up to almost 8: every split at
    or below their shares ties on the L1 share. The fair stage picks the split with the smallest
    largest relative shortfall, as brute force does, never worse than the fit without it."""
    demand = {"a": (0.0, 0.0, 0.01, 0.0), "b": (b, 0.0, 0.0, 0.0), "c": (c, 0.0, 0.0, 0.0)}
    largest = {"a": 4, "b": 1, "c": 1}
    fair = hv.solve(demand, 1, levels=(1, 3), largest=largest)
    plain = hv.solve(demand, 1, levels=(1, 3), largest=largest, fair=False)
    brute = _brute(demand, 1, (1, 3), largest)
    assert fair.status == plain.status == Status.OPTIMAL
    assert hv.evaluate(fair.solution, demand)[0] == pytest.approx(brute[0], abs=1e-5)
    assert hv.evaluate(plain.solution, demand)[0] == pytest.approx(brute[0], abs=1e-5)
    assert hv.shortfall(fair.solution, demand) == pytest.approx(brute[1], abs=1e-5)
    assert hv.shortfall(fair.solution, demand) <= hv.shortfall(plain.solution, demand) + 1e-9


def test_demand_and_request_levels():
    jobs = [Job(id=str(i), submit=0.0, gpus=g, duration=10.0, tenant=t, priority=0, gpu_type=None,
                model=None) for i, (g, t) in enumerate([(1, "a"), (3, "a"), (8, "b"), (12, "b")])]
    d = hv.demand_from_jobs(jobs)
    assert d["a"] == (10.0, 0.0, 40.0, 0.0)  # a 3-GPU job reserves a 4-GPU cell
    assert d["b"] == (0.0, 0.0, 0.0, 80.0 + 160.0)  # 12 GPUs = two node cells
    assert [hv.request_level(g) for g in (1, 2, 3, 5, 9)] == [1, 2, 3, 4, 4]


def test_infeasible_cover_is_a_status_and_bad_input_names_field():
    res = hv.solve({"a": (1.0, 0, 0, 0), "b": (1.0, 0, 0, 0)}, 1, largest={"a": 8, "b": 8})
    assert res.status == Status.INFEASIBLE
    with pytest.raises(InstanceError, match="n_nodes"):
        hv.solve({"a": (1.0, 0, 0, 0)}, 0)
    with pytest.raises(InstanceError, match="levels"):
        hv.solve({"a": (1.0, 0, 0, 0)}, 1, levels=(5,))
