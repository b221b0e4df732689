"""Dally's pure pieces (solvers/online/delay.py): Algorithm 1 branch by branch, Algorithm 2 against
hand computations, Nw_sens and the offer order, GPU choice per tier."""

from __future__ import annotations

import statistics

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from placement.solvers.online.delay import (
    HOUR,
    MANUAL_TIMERS,
    AutoTuner,
    Timers,
    fit_timers,
    mean_plus_two_sd,
    nw_sens,
    offer_order,
    on_offer,
)

from placement.sim.placement import choose_gpus

T = Timers(10.0, 30.0)


# ----------------------------------------------------------------------------- Algorithm 1

def test_fits_one_machine_accepts_at_machine_and_records_whatever_the_timers():
    d = on_offer(4, starvation=0.0, timers=T, machine_free_max=4, rack_free_max=8, total_free=20)
    assert (d.accept, d.tier, d.record) == (True, "machine", "machine")


def test_machine_timer_running_rejects_a_rack_offer():
    d = on_offer(6, starvation=9.9, timers=T, machine_free_max=5, rack_free_max=16, total_free=40)
    assert not d.accept and d.retry_at == 10.0


def test_machine_timer_elapsed_accepts_at_rack():
    d = on_offer(6, starvation=10.0, timers=T, machine_free_max=5, rack_free_max=16, total_free=40)
    assert (d.accept, d.tier, d.record) == (True, "rack", "rack")


def test_rack_timer_running_rejects_a_network_offer():
    d = on_offer(6, starvation=29.0, timers=T, machine_free_max=5, rack_free_max=5, total_free=40)
    assert not d.accept and d.retry_at == 30.0


def test_rack_timer_elapsed_accepts_on_network_without_recording():
    d = on_offer(6, starvation=30.0, timers=T, machine_free_max=5, rack_free_max=5, total_free=40)
    assert (d.accept, d.tier, d.record) == (True, "network", None)


def test_too_few_free_gpus_is_a_plain_reject():
    d = on_offer(6, starvation=1e9, timers=T, machine_free_max=2, rack_free_max=3, total_free=5)
    assert not d.accept and d.retry_at is None


def test_timers_are_zero_where_the_job_cannot_fit_the_tier():
    assert fit_timers(8, T, 8, 64) == T
    assert fit_timers(9, T, 8, 64) == Timers(0.0, 30.0)
    assert fit_timers(65, T, 8, 64) == Timers(0.0, 0.0)
    # a 16-GPU job with zeroed machine timer takes a rack offer at once
    d = on_offer(16, starvation=0.0, timers=fit_timers(16, T, 8, 64), machine_free_max=8,
                 rack_free_max=16, total_free=16)
    assert d.tier == "rack"
    # a 100-GPU job takes the network at once
    d = on_offer(100, starvation=0.0, timers=fit_timers(100, T, 8, 64), machine_free_max=8,
                 rack_free_max=64, total_free=128)
    assert d.tier == "network"


@given(g=st.integers(1, 20), s=st.floats(0, 100), tm=st.floats(0, 50), tr=st.floats(0, 100),
       m=st.integers(0, 8), r=st.integers(0, 16), extra=st.integers(0, 30))
def test_on_offer_never_accepts_a_worse_tier_before_its_timer(g, s, tm, tr, m, r, extra):
    r = max(r, m)
    total = r + extra
    d = on_offer(g, s, Timers(tm, tr), m, r, total)
    if d.accept:
        assert g <= {"machine": m, "rack": r, "network": total}[d.tier]
        if d.tier == "rack":
            assert g > m and s >= tm
        if d.tier == "network":
            assert g > r and s >= tm and s >= tr
    else:
        assert g > m
        assert (s < tm) or (g > r and s < tr) or g > total


# ----------------------------------------------------------------------------- Algorithm 2

def test_auto_tuner_mean_plus_two_sample_sd_by_hand():
    tuner = AutoTuner(history=100.0)
    for now, wait in ((0.0, 2.0), (1.0, 4.0), (2.0, 9.0)):
        tuner.record("machine", 4, wait, now)
    tuner.record("rack", 4, 50.0, 2.0)
    # mean 5, sample variance ((9 + 1 + 16) / 2) = 13 -> 5 + 2 * sqrt(13)
    t = tuner.timers(4, now=3.0)
    assert t.machine == pytest.approx(5 + 2 * 13 ** 0.5)
    assert t.rack == pytest.approx(50.0)  # one entry: no sample deviation
    # another demand has empty lists: the initial (manual) timers
    assert tuner.timers(2, now=3.0) == MANUAL_TIMERS


def test_auto_tuner_history_window_by_age_and_by_value():
    tuner = AutoTuner(history=10.0)
    tuner.record("machine", 2, 100.0, now=0.0)
    tuner.record("machine", 2, 4.0, now=5.0)
    tuner.record("machine", 2, 6.0, now=8.0)
    assert tuner.timers(2, now=10.0).machine == pytest.approx(mean_plus_two_sd([100.0, 4.0, 6.0]))
    # at 10.5 the entry recorded at 0 is older than the window
    assert tuner.timers(2, now=10.5).machine == pytest.approx(5 + 2 * statistics.stdev([4.0, 6.0]))
    lit = AutoTuner(history=10.0, window="value")
    for now, wait in ((0.0, 100.0), (5.0, 4.0), (8.0, 6.0)):
        lit.record("machine", 2, wait, now)
    assert lit.timers(2, now=1e6).machine == pytest.approx(5 + 2 * statistics.stdev([4.0, 6.0]))


@given(st.lists(st.floats(0, 1e6), min_size=1, max_size=30))
def test_mean_plus_two_sd_matches_statistics(values):
    expected = statistics.fmean(values) + (2 * statistics.stdev(values) if len(values) > 1 else 0.0)
    assert mean_plus_two_sd(values) == pytest.approx(expected, rel=1e-9, abs=1e-6)


# ----------------------------------------------------------------------------- Nw_sens

def test_nw_sens_by_hand():
    # 300 of 1000 iterations, 1 s each ideal: 300 s ideal work in 600 s of running -> 0.5
    assert nw_sens(300, 1000, 600.0, 1000.0) == pytest.approx(0.5)
    assert nw_sens(0, 1000, 0.0, 1000.0) == 1.0  # never ran: no slowdown observed
    assert nw_sens(1000, 1000, 1000.0, 1000.0) == pytest.approx(1.0)


def test_offer_order_is_increasing_nw_sens_then_submit_then_id():
    order = offer_order([("a", 1.0, 0.0), ("b", 0.2, 5.0), ("c", 0.2, 1.0), ("d", 0.9, 0.0), ("e", 1.0, 0.0)])
    assert order == ["c", "b", "d", "a", "e"]


# ----------------------------------------------------------------------------- GPU choice

def _cluster(racks=2, machines=2, gpm=4):
    machine = np.repeat(np.arange(racks * machines), gpm)
    return machine, machine // machines


def _tier(gpus, machine, rack):
    if len(set(machine[gpus])) == 1:
        return "machine"
    return "rack" if len(set(rack[gpus])) == 1 else "network"


@given(st.lists(st.booleans(), min_size=16, max_size=16), st.integers(1, 16),
       st.sampled_from(["machine", "rack", "network"]))
def test_choose_gpus_returns_free_gpus_within_the_tier(free, g, tier):
    machine, rack = _cluster()
    free = np.array(free)
    got = choose_gpus(free, machine, rack, g, tier)
    fits = {"machine": max(np.bincount(machine[free], minlength=4)) if free.any() else 0,
            "rack": max(np.bincount(rack[free], minlength=2)) if free.any() else 0,
            "network": int(free.sum())}[tier]
    if g > fits:
        assert got is None
        return
    assert got is not None and len(got) == g == len(set(got.tolist()))
    assert free[got].all()
    order = ["machine", "rack", "network"]
    assert order.index(_tier(got, machine, rack)) <= order.index(tier)


def test_choose_gpus_best_fit_machine():
    machine, rack = _cluster()
    free = np.zeros(16, bool)
    free[[0, 1, 2, 3]] = True      # machine 0: 4 free
    free[[4, 5]] = True            # machine 1: 2 free
    assert choose_gpus(free, machine, rack, 2, "machine").tolist() == [4, 5]
    assert choose_gpus(free, machine, rack, 3, "machine").tolist() == [0, 1, 2]
    assert HOUR == 3600.0
