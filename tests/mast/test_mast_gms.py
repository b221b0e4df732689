"""GMS (MAST §4.2): credit (10)-(11) by hand, quota demotion, window averages, quota scan."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from placement.solvers.online.gms import GmsParams, TenantUsage, credit, gms_scan, quota_scan


def _usage() -> TenantUsage:
    u = TenantUsage(2)
    u.change(0.0, 0, 4)        # tenant 0: 4 GPUs from t=0
    u.change(1800.0, 1, 2)     # tenant 1: 2 GPUs from t=1800
    return u


def test_window_average_by_hand():
    avg = _usage().window_avg(3600.0, 3600.0)
    assert avg.tolist() == [4.0, 1.0]                     # 4*3600/3600, 2*1800/3600
    assert _usage().window_avg(5400.0, 3600.0).tolist() == [4.0, 2.0]


def test_gms_order_matches_10_11_by_hand():
    p = GmsParams(w_age=1.0, age_cap=7200.0, w_fair=4.0, window=3600.0, fair_share="mean-active")
    now = 3600.0
    avg = _usage().window_avg(now, p.window)             # [4, 1]; mean over tenants 2.5
    # A: tenant 0, queued 1 h: 1 + 4 (1 - 4/2.5) = -1.4
    # B: tenant 1, queued 0.5 h: 0.5 + 4 (1 - 1/2.5) = 2.9
    # C: tenant 0, queued 4 h, capped at 2 h: 2 + 4 (1 - 4/2.5) = -0.4
    queued = np.array([0.0, 1800.0, now - 4 * 3600.0])
    scan = gms_scan(now, queued, priority=np.array([1, 1, 1]), tenant=np.array([0, 1, 0]),
                    demand=np.array([1, 2, 3]), used=np.array([4, 2]), quota=np.array([100, 100]),
                    tenant_avg=avg, params=p)
    assert scan.credit == pytest.approx([-1.4, 2.9, -0.4])
    assert scan.order.tolist() == [1, 2, 0]
    assert scan.within_quota.all() and scan.priority.tolist() == [1, 1, 1]


def test_gms_11_as_written_divides_by_all_tenants_usage():
    """(11) as written: the denominator is the window average of all tenants' usage, 4 + 1 = 5.
    A: 1 + 4 (1 - 4/5) = 1.8; B: 0.5 + 4 (1 - 1/5) = 3.7; C: 2 + 4 (1 - 4/5) = 2.8."""
    p = GmsParams(w_age=1.0, age_cap=7200.0, w_fair=4.0, window=3600.0)
    assert p.fair_share == "total"
    now = 3600.0
    queued = np.array([0.0, 1800.0, now - 4 * 3600.0])
    scan = gms_scan(now, queued, priority=np.array([1, 1, 1]), tenant=np.array([0, 1, 0]),
                    demand=np.array([1, 2, 3]), used=np.array([4, 2]), quota=np.array([100, 100]),
                    tenant_avg=_usage().window_avg(now, p.window), params=p)
    assert scan.credit == pytest.approx([1.8, 3.7, 2.8])
    assert scan.order.tolist() == [1, 2, 0]
    with pytest.raises(ValueError, match="fair_share"):
        GmsParams(fair_share="mean")
    with pytest.raises(ValueError, match="quota_used"):
        GmsParams(quota_used="some")


def test_quota_demotes_to_lowest_priority():
    p = GmsParams(w_age=1.0, age_cap=7200.0, w_fair=4.0, window=3600.0, lowest=6)
    now = 3600.0
    avg = _usage().window_avg(now, p.window)
    queued = np.array([0.0, 1800.0, now - 4 * 3600.0])
    # tenant 0 holds 4 of a quota of 6: C (credit -0.4, 3 GPUs) is scanned first and would
    # reach 7 > 6: demoted; A (1 GPU) then fits (5 <= 6) and keeps its priority.
    scan = gms_scan(now, queued, priority=np.array([1, 1, 1]), tenant=np.array([0, 1, 0]),
                    demand=np.array([1, 2, 3]), used=np.array([4, 0]), quota=np.array([6, 100]),
                    tenant_avg=avg, params=p)
    assert scan.within_quota.tolist() == [True, True, False]
    assert scan.priority.tolist() == [1, 1, 6]
    assert scan.order.tolist() == [1, 0, 2]


def test_credit_without_usage_and_cap():
    p = GmsParams(w_age=2.0, age_cap=3600.0, w_fair=1.0)
    c = credit(np.array([0.0, 1800.0, 10 * 3600.0]), np.zeros(3), 0.0, p)
    assert c.tolist() == pytest.approx([1.0, 2.0, 3.0])


@given(seed=st.integers(0, 10**6))
def test_quota_scan_equals_a_plain_loop(seed):
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(0, 40)), int(rng.integers(1, 5))
    tenant, demand = rng.integers(0, k, n), rng.integers(1, 9, n)
    used, quota = rng.integers(0, 10, k), rng.integers(0, 30, k)
    order = rng.permutation(n)
    room = (quota - used).astype(int).tolist()
    expect = np.zeros(n, dtype=bool)
    for i in order:
        if demand[i] <= room[tenant[i]]:
            expect[i] = True
            room[tenant[i]] -= int(demand[i])
    assert quota_scan(order, tenant, demand, used, quota).tolist() == expect.tolist()


@given(seed=st.integers(0, 10**6))
def test_window_average_equals_integration_on_a_grid(seed):
    rng = np.random.default_rng(seed)
    u = TenantUsage()
    level = np.zeros(3, dtype=int)
    grid = np.zeros((3, 200))                      # GPUs in use per tenant per unit step
    for t in sorted(rng.integers(0, 200, 15).tolist()):
        k = int(rng.integers(0, 3))
        d = int(rng.integers(-level[k], 5))
        u.change(float(t), k, d)
        level[k] += d
        grid[k, t:] = level[k]
    now, w = float(rng.integers(1, 200)), float(rng.integers(1, 100))
    lo = int(max(0, now - w))
    expect = grid[:, lo:int(now)].sum(axis=1) / w
    assert u.window_avg(now, w) == pytest.approx(expect)


def test_params_are_validated():
    with pytest.raises(ValueError, match="window"):
        GmsParams(window=0)
    with pytest.raises(ValueError, match="lowest"):
        GmsParams(lowest=-1)
