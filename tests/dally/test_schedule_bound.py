"""The time-indexed schedule bound (models/schedule_bound.py): hand cases and LP <= IP <= schedules.

The brute force here is independent of the model: it builds real non-preemptive
schedules on a concrete machine/rack structure (every job order, each job at
its earliest finish given the GPUs still free), and any such schedule is an
upper bound on the optimum, so the model's values must never exceed it.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from placement.models.schedule_bound import BoundInstance, placeable_tiers, simple_terms, solve

from placement.errors import InstanceError

TOL = 1e-6


def _inst(release, work, gpus, rates, racks, machines_per_rack, gpm):
    return BoundInstance(release=np.array(release, float), work=np.array(work, float),
                         gpus=np.array(gpus, int), rates=np.array(rates, float),
                         total_gpus=racks * machines_per_rack * gpm, machines=racks * machines_per_rack,
                         gpus_per_machine=gpm, racks=racks, gpus_per_rack=machines_per_rack * gpm)


def test_two_full_cluster_jobs_makespan_is_their_sum():
    inst = _inst([0, 0], [1, 1], [8, 8], [[1, 0, 0], [1, 0, 0]], 1, 1, 8)
    res = solve(inst, "makespan", width=0.25, horizon=4)
    assert res.status == "optimal"
    assert res.objective == pytest.approx(2.0, abs=1e-7)
    assert res.bound <= 2.0


def test_two_full_cluster_jobs_mean_jct_hand_value():
    # buckets of 0.25 over [0, 2): the work-weighted bucket starts of both jobs add up to
    # 0.25 * (0 + 0.25 + ... + 1.75) = 1.75 whatever the split. C_A >= 1 (its run time) costs nothing
    # while A's mean start is <= 0.5, leaving B a mean start of 1.25, C_B >= 1.75: mean 1.375
    # (the true optimum is 1.5; the gap is the bucket discretization and the mean-busy-time relaxation).
    inst = _inst([0, 0], [1, 1], [8, 8], [[1, 0, 0], [1, 0, 0]], 1, 1, 8)
    res = solve(inst, "mean_jct", width=0.25, horizon=4)
    assert res.objective == pytest.approx(1.375, abs=1e-6)


def test_machine_count_row_tightens_hand_value():
    # 1 rack x 2 machines x 8 GPUs, three 5-GPU jobs of work 1, rate 1 on a machine and 1/2 on the rack.
    # Only two can share the machines; by hand the LP optimum is T = 1.2 (a = 2T machine-time,
    # b = 6 - 4T rack-time, each job's run time <= T gives 6 - 2T <= 3T). The real optimum is 2.
    inst = _inst([0, 0, 0], [1, 1, 1], [5, 5, 5], [[1, 0.5, 0]] * 3, 1, 2, 8)
    res = solve(inst, "makespan", buckets=12, horizon=2.4)
    assert res.objective == pytest.approx(1.2, abs=1e-6)


def test_release_times_shift_the_makespan_origin():
    # a job released at 5 on an empty cluster: the makespan counts from the first arrival
    inst = _inst([2, 5], [1, 3], [1, 1], [[1, 0, 0], [1, 0, 0]], 1, 1, 8)
    res = solve(inst, "makespan")
    assert res.objective == pytest.approx(6.0, abs=1e-6)
    jct = solve(inst, "mean_jct")
    assert jct.objective == pytest.approx(2.0, abs=1e-6)


def test_bad_input_names_the_field():
    with pytest.raises(InstanceError, match="rates"):
        _inst([0], [1], [1], [[0, 0, 0]], 1, 1, 8)
    with pytest.raises(InstanceError, match="gpus"):
        _inst([0], [1], [9], [[0, 0, 1]], 1, 1, 8)
    inst = _inst([0], [1], [1], [[1, 0, 0]], 1, 1, 8)
    with pytest.raises(InstanceError, match="objective"):
        solve(inst, "median")


# ----------------------------------------------------------------------------- brute force

def _brute_force(inst: BoundInstance, racks: int, mpr: int, gpm: int):
    """Best makespan and best mean JCT over greedy non-preemptive schedules on integer times."""
    n = inst.n
    p = {(j, tau): int(round(inst.work[j] / inst.rates[j, tau]))
         for j in range(n) for tau in range(3) if inst.rates[j, tau] > 0}
    horizon = int(inst.release.max()) + sum(max(v for (i, _), v in p.items() if i == j) for j in range(n)) + 1
    machine_of = np.repeat(np.arange(racks * mpr), gpm)
    rack_of = machine_of // mpr
    best_ms, best_jct = np.inf, np.inf
    for order in itertools.permutations(range(n)):
        busy = np.zeros((horizon, len(machine_of)), dtype=bool)
        finish = {}
        for j in order:
            g = int(inst.gpus[j])
            choice = None
            for t in range(int(inst.release[j]), horizon):
                for tau in range(3):
                    if (j, tau) not in p or t + p[(j, tau)] > horizon:
                        continue
                    free = ~busy[t:t + p[(j, tau)]].any(axis=0)
                    groups = machine_of if tau == 0 else rack_of if tau == 1 else np.zeros_like(rack_of)
                    ok = [u for u in np.unique(groups) if free[groups == u].sum() >= g]
                    if ok:
                        gpus = np.flatnonzero(free & (groups == ok[0]))[:g]
                        if choice is None or t + p[(j, tau)] < choice[0]:
                            choice = (t + p[(j, tau)], t, gpus)
                        break  # the first placeable tier at t is the fastest one there
                if choice is not None and choice[0] <= t + 1:
                    break
            fin, start, gpus = choice
            busy[start:fin, gpus] = True
            finish[j] = fin
        best_ms = min(best_ms, max(finish.values()) - inst.release.min())
        best_jct = min(best_jct, float(np.mean([finish[j] - inst.release[j] for j in range(n)])))
    return best_ms, best_jct


@st.composite
def tiny_instances(draw):
    racks, mpr, gpm = draw(st.sampled_from([(2, 2, 2), (1, 2, 4), (2, 1, 4)]))
    n = draw(st.integers(2, 4))
    release, work, gpus, rates = [], [], [], []
    for _ in range(n):
        g = draw(st.integers(1, racks * mpr * gpm))
        ok = placeable_tiers(g, gpm, mpr, mpr * gpm, racks)
        slow = sorted(draw(st.lists(st.sampled_from([1, 2, 3]), min_size=3, max_size=3)))
        rates.append([1.0 / s if fit else 0.0 for s, fit in zip(slow, ok, strict=True)])
        release.append(draw(st.integers(0, 2)))
        work.append(draw(st.integers(1, 2)))
        gpus.append(g)
    return _inst(release, work, gpus, rates, racks, mpr, gpm), (racks, mpr, gpm)


@pytest.mark.slow
@given(tiny_instances())
def test_lp_le_ip_le_any_schedule(case):
    inst, shape = case
    bf_ms, bf_jct = _brute_force(inst, *shape)
    horizon = float(inst.release.min() + bf_ms + 1)
    for objective, bf in (("makespan", bf_ms), ("mean_jct", bf_jct)):
        lp = solve(inst, objective, width=1.0, horizon=horizon)
        ip = solve(inst, objective, width=1.0, horizon=horizon, integer=True, time_limit=20)
        default_lp = solve(inst, objective)
        assert lp.status == "optimal" and ip.status == "optimal"
        assert lp.objective <= ip.objective + TOL, (objective, lp.objective, ip.objective)
        assert ip.objective <= bf + TOL, (objective, ip.objective, bf)
        assert default_lp.bound <= bf + TOL, (objective, default_lp.bound, bf)
        assert lp.bound <= lp.objective
    terms = simple_terms(inst)
    assert max(terms["makespan_single_job_s"], terms["makespan_capacity_s"]) <= bf_ms + TOL
    assert max(terms["mean_jct_single_job_s"], terms["mean_jct_capacity_s"]) <= bf_jct + TOL


def test_simple_terms_by_hand():
    """One 8-GPU machine. a: 8 GPUs x 1 s at 0; b: 8 GPUs x 1 s at 0; c: 1 GPU x 5 s at 0.5.
    Single-job makespan term: c, 0.5 + 5 = 5.5. Capacity: from 0, areas 1 + 1 + 5/8 = 2.625;
    from 0.5, 0.5 + 0.625 = 1.125: 2.625. Mean JCT single-job term (1 + 1 + 5) / 3. SRPT on the
    areas (1, 1, 0.625 released at 0.5): a 0-1, c 1-1.625, b 1.625-2.625 (c is shorter than b's
    remaining 1 at time 1): completions 1, 1.125 (after release), 2.625: mean 4.75 / 3."""
    inst = _inst([0, 0, 0.5], [1, 1, 5], [8, 8, 1], [[1, 0, 0]] * 3, 1, 1, 8)
    t = simple_terms(inst)
    assert t["makespan_single_job_s"] == pytest.approx(5.5) and t["makespan_single_job"] == "2"
    assert t["makespan_capacity_s"] == pytest.approx(2.625) and t["makespan_binding"] == "single job"
    assert t["mean_jct_single_job_s"] == pytest.approx(7 / 3)
    assert t["mean_jct_capacity_s"] == pytest.approx(4.75 / 3) and t["mean_jct_binding"] == "single job"
    res = solve(inst, "makespan")
    assert res.stats["makespan_single_job_s"] == pytest.approx(5.5)
    assert res.objective >= 5.5 - 1e-6
