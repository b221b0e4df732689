"""HiveD Table 1's quotas mapped onto a trace, start rows that name their class, and the outside
replay check of guaranteed cells (:func:`placement.sim.replay.guarantee_check`)."""

from __future__ import annotations

import pytest
from placement.models import hived_vc as hv
from placement.solvers.online.hived import HiveD, HiveDStatic, sharing_safety_check
from placement.solvers.online.tenants import oversize_jobs, table1_assignment

from placement.errors import InstanceError
from placement.hived.table1 import TABLE1, map_tenants, row_shares, size_column
from placement.sim import Cluster, replay_check, simulate
from placement.sim.log import EventLog, LogRow
from placement.sim.perf import IdealPerf
from placement.sim.replay import guarantee_check
from tests.support import sim_trace

PERF = IdealPerf()


def _jobs_like_table1(scale: int = 100):
    """One trace tenant per Table 1 row, each with the row's mix (counts / scale, at least 1 where
    the row has jobs), named so that name order differs from row order."""
    rows = []
    t = 0
    for n, (counts, _) in enumerate(TABLE1.values()):
        for col, c in enumerate(counts):
            for _ in range(-(-c // scale)):
                rows.append((t, (1, 2, 4, 8, 16)[col], 10, f"t{10 - n:02d}"))
                t += 1
    return sim_trace(rows).jobs, {f"t{10 - n:02d}": row for n, row in enumerate(TABLE1)}


def test_table1_sums_and_columns():
    assert sum(q for _, q in TABLE1.values()) == pytest.approx(1.0, abs=1e-9)
    assert sum(sum(c) for c, _ in TABLE1.values()) == 141950   # Table 1's total jobs
    assert [size_column(g) for g in (1, 2, 3, 4, 5, 8, 9, 16, 64)] == [0, 1, 2, 2, 3, 3, 4, 4, 4]
    with pytest.raises(InstanceError, match="gpus"):
        size_column(0)


def test_tenants_with_a_rows_mix_map_to_that_row():
    jobs, want = _jobs_like_table1()
    assert map_tenants(jobs) == dict(sorted(want.items()))
    assert map_tenants(list(reversed(jobs))) == map_tenants(jobs)   # order of jobs does not matter


def test_assignment_shares_nodes_and_oversize():
    jobs, want = _jobs_like_table1()
    a, rows = table1_assignment(jobs, 48)
    assert a.n_nodes == 48 and sum(c[3] for c in a.cells.values()) == 48
    assert all(c[:3] == (0, 0, 0) for c in a.cells.values())          # node-level cells only
    by = {r["tenant"]: r for r in rows}
    for t, row in want.items():
        share = TABLE1[row][1]
        assert abs(by[t]["nodes"] - share * 48) < 1.0                   # largest remainder
        # the largest-job rule is capped at the share: a quota below the largest job stays there
        assert by[t]["oversize"] == sum(1 for j in jobs if j.tenant == t and j.gpus > 8 * by[t]["nodes"])
    assert oversize_jobs(jobs, a) == {j.id for j in jobs if j.gpus > a.gpus(j.tenant)}
    res_a = next(t for t, r in want.items() if r == "res-a")
    assert by[res_a]["nodes"] == 0 and by[res_a]["oversize"] == sum(1 for j in jobs if j.tenant == res_a)


def test_fewer_tenants_rescale_the_shares():
    jobs, _ = _jobs_like_table1()
    two = [j for j in jobs if j.tenant in ("t10", "t04")]   # res-a and prod-a
    m = map_tenants(two)
    assert m == {"t04": "prod-a", "t10": "res-a"}
    s = row_shares(m)
    assert s["prod-a"] == pytest.approx(0.0879 / (0.0879 + 0.0037))
    a, _ = table1_assignment(two, 10)
    assert a.cells["t04"][3] == 10 and a.cells["t10"][3] == 0   # 9.6 and 0.4 nodes


def test_more_tenants_than_rows_share_the_nearest_row():
    jobs, _ = _jobs_like_table1()
    extra = sim_trace([(0, 1, 10, "zz"), (1, 1, 10, "zz")]).jobs   # all 1-GPU: like res-d
    m = map_tenants(list(jobs) + list(extra))
    assert m["zz"] == "res-d" and len(set(m.values())) == 11


ASSIGN = hv.VCAssignment(2, {"A": (0, 0, 0, 1), "B": (0, 0, 0, 1)})
ROWS = [(0, 8, 100, "B"), (0, 4, 100, "A"), (1, 4, 50, "C"), (5, 4, 10, "A"), (6, 2, 10, "A")]


@pytest.mark.parametrize("policy", [HiveD, HiveDStatic])
def test_start_rows_name_their_class_and_the_replay_checks_the_cells(policy):
    trace, cluster = sim_trace(ROWS), Cluster.uniform(1, 1, 1, 2, 8)
    res = simulate(trace, cluster, policy(assignment=ASSIGN), perf=PERF)
    checks = [sharing_safety_check(ASSIGN), guarantee_check(ASSIGN.cells)]
    assert replay_check(trace, cluster, res.log, perf=PERF, checks=checks) == []
    starts = [r for r in res.log.rows if r.event == "start"]
    assert all("class=" in r.extra and "vc=" in r.extra for r in starts)
    cls = {r.job: r.extra.split("class=")[1].split()[0] for r in starts}
    assert cls["j002"] == "opportunistic" and cls["j000"] == cls["j001"] == "guaranteed"
    pre = [r.job for r in res.log.rows if r.event == "preempt"]
    assert pre == ["j002"]


def _log(*rows):
    return EventLog([LogRow(*r) for r in rows])


def test_guarantee_check_flags_each_kind_of_breach():
    trace = sim_trace([(0, 4, 10, "A"), (0, 4, 10, "B"), (0, 2, 10, "A")])
    cluster = Cluster.uniform(1, 1, 1, 2, 8)
    chk = guarantee_check({"A": (0, 0, 0, 1), "B": (0, 0, 0, 1)})

    def msgs(*starts, tail=()):
        rows = [(0.0, "submit", j) for j in ("j000", "j001", "j002")] + list(starts) + list(tail)
        return chk(trace, cluster, _log(*rows))

    ok = (0.0, "start", "j000", (0, 1, 2, 3), 0.0, "class=guaranteed vc=A cells=8:0")
    assert msgs(ok) == []
    assert "names no class" in msgs((0.0, "start", "j000", (0, 1, 2, 3), 0.0, "tier=machine"))[0]
    assert "tenant is A" in msgs((0.0, "start", "j000", (0, 1, 2, 3), 0.0, "class=guaranteed vc=B cells=8:0"))[0]
    assert "outside its cells" in msgs((0.0, "start", "j000", (8, 9, 10, 11), 0.0,
                                        "class=guaranteed vc=A cells=8:0"))[0]
    assert "aligned cell of 4" in msgs((0.0, "start", "j000", (2, 3, 4, 5), 0.0,
                                        "class=guaranteed vc=A cells=8:0"))[0]
    assert "overlaps" in " ".join(msgs(ok, (0.0, "start", "j001", (4, 5, 6, 7), 0.0,
                                            "class=guaranteed vc=B cells=8:0")))
    assert "reserves 1" in " ".join(msgs(ok, (0.0, "start", "j002", (8, 9), 0.0,
                                              "class=guaranteed vc=A cells=8:1")))
    assert msgs(ok, (0.0, "start", "j002", (4, 5), 0.0, "class=guaranteed vc=A cells=8:0")) == []
    assert "preempts a guaranteed" in " ".join(msgs(ok, tail=[(1.0, "preempt", "j000", (0, 1, 2, 3), 0.0)]))
    opp = (0.0, "start", "j001", (8, 9, 10, 11), 0.0, "class=opportunistic vc=B")
    assert msgs(opp, tail=[(1.0, "preempt", "j001", (8, 9, 10, 11), 0.0)]) == []


def test_static_binding_takes_the_cell_with_fewest_low_priority_gpus():
    # A reserves both nodes (static: both bound at the start). C's 4-GPU scavenger lands on node 0
    # (lowest index); A's 8-GPU job then takes node 1 (no low-priority GPU) and preempts nobody;
    # with the lowest-index rule it would have preempted C.
    a = hv.VCAssignment(2, {"A": (0, 0, 0, 2)})
    trace, cluster = sim_trace([(0, 4, 50, "C"), (1, 8, 10, "A")]), Cluster.uniform(1, 1, 1, 2, 8)
    res = simulate(trace, cluster, HiveDStatic(assignment=a), perf=PERF)
    assert replay_check(trace, cluster, res.log, perf=PERF, checks=[guarantee_check(a.cells)]) == []
    start = {r.job: r for r in res.log.rows if r.event == "start"}
    assert {g // 8 for g in start["j000"].gpus} == {0}
    assert {g // 8 for g in start["j001"].gpus} == {1} and "cells=8:1" in start["j001"].extra
    assert not [r for r in res.log.rows if r.event == "preempt"]
    # the fixed order takes the lowest bound cell, node 0, and preempts C's scavenger there
    fixed = simulate(trace, cluster, HiveDStatic(assignment=a, pick="lowest"), perf=PERF)
    assert replay_check(trace, cluster, fixed.log, perf=PERF, checks=[guarantee_check(a.cells)]) == []
    start = {r.job: r for r in fixed.log.rows if r.event == "start" and r.job == "j001"}
    assert {g // 8 for g in start["j001"].gpus} == {0} and "cells=8:0" in start["j001"].extra
    assert [r.job for r in fixed.log.rows if r.event == "preempt"] == ["j000"]
    with pytest.raises(InstanceError, match="pick"):
        HiveDStatic(assignment=a, pick="random")


def test_busy_share_and_job_classes_hand_values():
    from placement.app.reproduce.hived_quotas import busy_share, job_classes

    # 16 GPUs over [0, 10]: 8 GPUs busy over [0, 5), 4 over [5, 10) -> (40 + 20) / 160
    log = _log((0.0, "start", "a", tuple(range(8)), 0.0, "tier=machine rate=1.0 class=opportunistic vc=A"),
               (5.0, "preempt", "a", tuple(range(8)), 2.0),
               (5.0, "start", "b", (8, 9, 10, 11), 0.0, "tier=machine rate=1.0 class=guaranteed vc=B cells=8:1"),
               (9.0, "start", "a", tuple(range(8)), 2.0, "tier=machine rate=1.0 class=opportunistic vc=A"),
               (10.0, "finish", "b", (8, 9, 10, 11), 5.0))
    assert busy_share(log, 16, 0.0, 10.0) == pytest.approx((8 * 5 + 4 * 5 + 8 * 1) / 160)
    c = job_classes(log)
    assert c["a"] == {"opportunistic": True, "preempted": 1, "lost": pytest.approx(3.0)}   # ran 5 s, kept 2
    assert c["b"] == {"opportunistic": False, "preempted": 0, "lost": 0.0}


def test_examine_lists_tenant_jobs_and_cause():
    from placement.app.reproduce.hived_quotas import examine

    trace = sim_trace([(0, 8, 10, "A"), (0, 8, 10, "A")])
    log = _log((0.0, "start", "j000", tuple(range(8)), 0.0, "class=opportunistic vc=A"),
               (4.0, "preempt", "j000", tuple(range(8)), 0.0),
               (4.0, "start", "j001", tuple(range(8)), 0.0, "class=guaranteed vc=A cells=8:0"),
               (14.0, "finish", "j001", tuple(range(8)), 10.0),
               (14.0, "start", "j000", tuple(range(8)), 0.0, "class=guaranteed vc=A cells=8:0"),
               (24.0, "finish", "j000", tuple(range(8)), 10.0))
    jobs = list(trace.jobs)
    shared = {"delays": {"A": 4000.0}, "job_delays": {"j000": 7000.0, "j001": 1000.0}, "log": log}
    private = {"delays": {"A": 1000.0}, "job_delays": {"j000": 0.0, "j001": 2000.0}}
    (e,) = examine("r", "table1", 1, shared, private, jobs, [])
    assert (e["tenant"], e["jobs"], e["opportunistic_jobs"], e["preempted_jobs"]) == ("A", 2, 1, 1)
    assert e["excess_h"] == pytest.approx((7000 - 0 + 1000 - 2000) / 2 / 3600)
    assert e["guaranteed_only_excess_h"] == pytest.approx(-1000 / 3600)
    assert e["worst_jobs"].startswith("j000 (8 GPUs, opportunistic, preempted")
    assert e["verdict"] == "outside the guarantee"
    (b,) = examine("r", "table1", 1, shared, private, jobs, ["guarantee: row 3 preempts a guaranteed job of VC A"])
    assert b["verdict"].startswith("bug: guarantee")
    assert examine("r", "table1", 1, {**shared, "delays": {"A": 1000.0}}, private, jobs, []) == []


def test_free_nodes_counts_nodes_without_high_priority_work_per_hour():
    from placement.app.bench.hived_trace import fragmentation
    from placement.app.reproduce.hived_quotas import free_nodes

    h = 3600.0
    # 2 nodes; a holds node 0 over [0.5 h, 2.5 h), b node 1 over [1.5 h, 3.5 h); samples at 0-3 h
    log = _log((0.5 * h, "start", "a", (0, 1, 2, 3), 0.0), (1.5 * h, "start", "b", tuple(range(8, 16)), 0.0),
               (2.5 * h, "finish", "a", (0, 1, 2, 3), 2 * h), (3.5 * h, "finish", "b", tuple(range(8, 16)), 2 * h))
    _xs, ys = fragmentation(log, {"a", "b"}, 2, step_s=h, start=0.0, end=3 * h)
    f = free_nodes(ys, 2)            # free nodes per hour: 2, 1, 0, 1
    assert (f["samples"], f["median"], f["min"]) == (4, 1.0, 0)
    assert (f["below_1"], f["below_2"], f["below_4"]) == (0.25, 0.75, 1.0)
    _xs, low = fragmentation(log, {"b"}, 2, step_s=h, start=0.0, end=3 * h)   # a low-priority: its node stays free
    assert free_nodes(low, 2)["below_1"] == 0.0
    assert free_nodes([], 2)["median"] is None


def test_identify_counts_matches_tenants_by_absolute_counts():
    from placement.hived.table1 import identify_counts

    # each row's counts off by up to 10% (deterministic), under names whose order differs from
    # the rows'; one tiny tenant left over
    got = {f"t{10 - n:02d}": tuple(int(c * (1.0 + 0.1 * ((n + i) % 3 - 1))) for i, c in enumerate(counts))
           for n, (counts, _) in enumerate(TABLE1.values())}
    got["zz"] = (3, 0, 0, 1, 0)
    mapping, fit = identify_counts(got)
    assert mapping == {f"t{10 - n:02d}": row for n, row in enumerate(TABLE1)}
    assert [f["row"] for f in fit] == list(TABLE1) and all(f["margin"] > 0 for f in fit)
    for f in fit:   # the distance is the L1 of the counts
        assert f["distance"] == sum(abs(a - b) for a, b in zip(f["trace"], TABLE1[f["row"]][0], strict=True))
    with pytest.raises(InstanceError, match="counts"):
        identify_counts({"a": (1, 2)})


def test_a_fixed_mapping_gives_every_window_the_same_quotas():
    jobs, want = _jobs_like_table1()
    mapping = dict(want)
    half = [j for j in jobs if j.tenant not in ("t00", "t01")] + list(sim_trace([(0, 1, 10, "stray")]).jobs)
    a_all, _ = table1_assignment(jobs, 40, mapping)
    a_half, rows = table1_assignment(half, 40, mapping)
    assert {t: c for t, c in a_half.cells.items() if t != "stray"} == a_all.cells   # absent tenants keep theirs
    assert a_half.cells["stray"] == (0, 0, 0, 0)                                      # no row, no quota
    by = {r["tenant"]: r for r in rows}
    assert by["stray"]["row"] == "-" and by["t00"]["nodes"] == a_all.cells["t00"][3]
    assert sum(c[3] for c in a_all.cells.values()) == 40
    for t, row in want.items():
        assert abs(a_all.cells[t][3] - TABLE1[row][1] * 40) < 1.0                   # Table 1's own shares
    with pytest.raises(InstanceError, match="mapping"):
        table1_assignment(jobs, 40, {})
