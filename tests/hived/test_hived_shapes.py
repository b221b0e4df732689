"""HiveD §5.2's workload transforms (Figures 8 and 9) and the policies' soft affinity, on hand-made jobs."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from placement.models import hived_vc as hv
from placement.solvers.online.hived import HiveD, sharing_safety_check
from placement.solvers.online.private import Private
from placement.solvers.online.tenants import spread_place
from placement.solvers.online.yarn_cs import YarnCS

from placement.app.reproduce.hived_shapes import relax, reshape, workload_fragmentation
from placement.sim import simulate
from placement.sim.cluster import Cluster
from placement.sim.perf import IdealPerf
from placement.sim.replay import guarantee_check, replay_check
from placement.sim.trace import Job, Trace


def _jobs():
    rng = np.random.default_rng(3)
    out = []
    for t, n in (("a", 30), ("b", 7), ("c", 12)):
        for i in range(n):
            out.append(Job(f"{t}{i}", float(rng.uniform(0, 1e5)), int(rng.choice([1, 2, 4, 8, 16])),
                           float(rng.uniform(60, 1e4)), tenant=t))
    return tuple(sorted(out, key=lambda j: (j.submit, j.id)))


def test_reshape_keeps_each_tenants_gpus_and_draws_from_its_own_jobs():
    jobs = _jobs()
    got = reshape(jobs, {"b"}, seed=5)
    for t in ("a", "b", "c"):
        own = [j for j in jobs if j.tenant == t]
        new = [j for j in got if j.tenant == t]
        g = sum(j.gpus for j in own)
        size = 8 if t == "b" else 1
        assert {j.gpus for j in new} == {size}
        assert len(new) == max(1, round(g / size))                      # N = GPUs / size
        assert abs(sum(j.gpus for j in new) - g) <= size / 2            # GPUs kept to the nearest job
        src = {j.id: j for j in own}
        for j in new:                                                   # submit and duration of an own job
            s = src[j.id.split("~")[0]]
            assert (j.submit, j.duration) == (s.submit, s.duration)
        counts = Counter(j.id.split("~")[0] for j in new)
        reps = len(new) // len(own)
        assert set(counts.values()) <= {reps, reps + 1}                 # as even as N allows
    assert len({j.id for j in got}) == len(got)
    assert got == reshape(jobs, {"b"}, seed=5)                          # seeded
    assert got != reshape(jobs, {"b"}, seed=6)
    # a tenant's reshaping depends on its group only
    other = reshape(jobs, {"b", "c"}, seed=5)
    assert [j for j in other if j.tenant in "ab"] == [j for j in got if j.tenant in "ab"]


def test_workload_fragmentation_is_jobs_over_gpus():
    jobs = _jobs()
    assert workload_fragmentation(jobs) == pytest.approx(len(jobs) / sum(j.gpus for j in jobs))
    assert workload_fragmentation(reshape(jobs, set(), 0)) == 1.0       # every job 1 GPU
    all8 = reshape(jobs, {"a", "b", "c"}, 0)
    assert workload_fragmentation(all8) == pytest.approx(1 / 8)
    assert workload_fragmentation(()) is None
    # moving a tenant to the 8-GPU group lowers it
    assert workload_fragmentation(reshape(jobs, {"a"}, 0)) < workload_fragmentation(reshape(jobs, set(), 0))


def test_relax_draws_multi_gpu_jobs_nested_and_seeded():
    jobs = _jobs()
    multi = {j.id for j in jobs if j.gpus > 1}
    sets = [set(relax(jobs, f, 2)) for f in (0.0, 0.25, 0.5, 0.75, 1.0)]
    assert sets[0] == set() and sets[-1] == multi
    assert all(x <= y for x, y in zip(sets, sets[1:], strict=False))
    assert set(relax(jobs, 0.5, 2)) == set(relax(jobs, 0.5, 2)) and relax(jobs, 0.5, 2) != relax(jobs, 0.5, 3)
    with pytest.raises(ValueError):
        relax(jobs, 1.5, 0)


def test_spread_place_takes_idle_gpus_on_the_fewest_nodes_first():
    usable = np.zeros(24, dtype=bool)
    usable[[0, 1, 8, 9, 10, 16]] = True
    assert spread_place(usable, 4) == (0, 8, 9, 10)    # the fullest node first, then node index
    assert spread_place(usable, 7) is None
    cost = np.zeros(24, dtype=bool)
    cost[[8, 9, 10]] = True
    assert spread_place(usable, 4, cost) == (0, 1, 8, 16)   # idle before costly


def _fragmented():
    """Tenant x's three nodes each hold a 5-GPU job: 9 GPUs free, no node with 8, so a within-quota
    8-GPU job has no affinity until one finishes (t = 1000 s)."""
    jobs = [Job(f"x{i}", 0.0, 5, 1000.0, tenant="x") for i in range(3)] + [Job("big", 1.0, 8, 100.0, tenant="x")]
    a = hv.VCAssignment(3, {"x": (0, 0, 0, 3)})
    return Trace("t", tuple(jobs)), Cluster.uniform(1, 1, 1, 3, 8), a


def _big_start(pol, trace, cluster, checks=()):
    res = simulate(trace, cluster, pol, perf=IdealPerf())
    assert replay_check(trace, cluster, res.log, perf=IdealPerf(), checks=list(checks)) == []
    return next(r for r in res.log.rows if r.event == "start" and r.job == "big")


@pytest.mark.parametrize("cls", [YarnCS, Private, HiveD])
def test_a_soft_job_relaxes_its_affinity_a_hard_one_waits(cls):
    trace, cluster, a = _fragmented()
    checks = [sharing_safety_check(a), guarantee_check(a.cells)] if cls is HiveD else []
    hard = _big_start(cls(assignment=a), trace, cluster, checks)
    assert hard.time == pytest.approx(1000.0) and len({g // 8 for g in hard.gpus}) == 1
    pol = cls(assignment=a, soft=("big",))
    soft = _big_start(pol, trace, cluster, checks)
    assert soft.time == pytest.approx(1.0) and len({g // 8 for g in soft.gpus}) > 1   # any GPUs, at once
    if cls is HiveD:   # HiveD's VC has no free cell: the soft job relaxes as an opportunistic job
        assert "class=opportunistic" in soft.extra and pol.n["relaxed_starts"] == 1
    if cls is YarnCS:
        assert pol.n["relaxed_starts"] == 1


@pytest.mark.parametrize("name", ["quota", "private", "hived", "hived-static"])
@pytest.mark.parametrize("bad", ["j1", 5, [1, 2], None, [["a"]]])
def test_a_soft_option_that_is_not_a_list_of_job_ids_is_one_error_naming_it(name, bad):
    from placement.errors import InstanceError
    from placement.sim.policies import make_policy

    with pytest.raises(InstanceError, match="^soft: must be a list of job ids"):
        make_policy(name, soft=bad)
    assert make_policy(name, soft=["a", "b"]).soft == {"a", "b"}
