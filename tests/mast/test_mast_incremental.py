"""MAST's incremental structures equal their recomputation from scratch: the tenants' window
averages of (11) (forward pointers), each region's free and held GPU totals, the usable table
the pass reads, and the fits table the pass places by."""

import numpy as np
from placement.solvers.online.gms import TenantUsage
from placement.solvers.online.rms import RegionState

from placement.app.policy_data import build_policy, candidate_placement
from placement.app.shipped import cluster_arg
from placement.sim.engine import simulate
from placement.sim.meta_week import DAY, meta_week


def test_window_averages_equal_the_binary_searches():
    rng = np.random.default_rng(3)
    u = TenantUsage(2)
    t, checked = 0.0, 0
    for step in range(3000):
        t += float(rng.choice([0.0, 0.0, rng.exponential(400.0)]))      # many changes at one instant
        k = int(rng.integers(0, 6))
        u.change(t, k, int(rng.integers(-int(u.current[k]) if k < len(u.current) else 0, 9)))
        if step % 7 == 0:
            now = t if step % 5 else t - float(rng.uniform(0, 5000))   # now and then a query back in time
            w = float(rng.choice([600.0, 3600.0]))
            fast = u.window_avg(now, w)
            slow = [(u._integral_until(k, now) - u._integral_until(k, now - w)) / w if u._t[k] else 0.0
                    for k in range(u.n)]
            assert fast.tolist() == slow      # the same floats, not merely close
            checked += 1
    assert checked > 400 and u.n == 6


def test_region_totals_equal_a_recount():
    rng = np.random.default_rng(4)
    s = RegionState(np.repeat([0, 1], 6), np.repeat([0, 1, 2, 3], 3), np.tile([0, 1], 6), np.full(12, 8))
    running = []
    for j in range(400):
        if running and rng.random() < 0.45:
            s.remove_job(running.pop(int(rng.integers(len(running)))))
        else:
            ms = s.machines_of(int(rng.integers(2)), int(rng.integers(2)))
            m = ms[s.free[ms] > 0]
            if len(m) == 0:
                continue
            pick = m[: int(rng.integers(1, len(m) + 1))]
            s.add_job(f"j{j}", int(rng.integers(0, 7)), float(j), pick, np.minimum(s.free[pick], 1 + j % 3))
            running.append(f"j{j}")
        free, held = s.dt_free.copy(), s.dt_held.copy()
        s.refresh_totals()
        assert np.array_equal(free, s.dt_free)
        assert np.array_equal(held[:, :, : s.dt_held.shape[2]], s.dt_held) and not held[:, :, s.dt_held.shape[2]:].any()


def test_pass_tables_equal_their_recomputation():
    """Half a day with preemptions: at every pass the usable table kept per region equals its
    recomputation from the machines and running jobs, and the fits table the pass places by
    equals the regions x rows comparison it replaces."""
    cl = cluster_arg("4x1x2x8x8")
    trace, masks = meta_week((128,) * 4, days=0.6, per_day=700, load=1.3, tenants=6, seed=11)
    trace = type(trace)(trace.name, tuple(j for j in trace.jobs if j.duration < DAY), trace.provenance)
    pol = build_policy("mast", cl, data=candidate_placement(cl, masks))
    seen = {"usable": 0, "fits": 0}
    usable, fits_table = pol._region_usable, pol._fits_table

    def checked_usable(st):
        got = usable(st)
        assert np.array_equal(got, pol._region_usable_scratch(st))
        seen["usable"] += 1
        return got

    def checked_fits(best, sizes):
        got = fits_table(best, sizes)
        q = pol._q
        if q.size:
            R = best.shape[0]
            bits = ((q.elig[None, :] >> np.arange(R)[:, None]) & 1) == 1
            slow = np.where(bits, best[:, q.g, q.eff], -1).max(axis=0) >= q.n
            fast = (got[q.g, q.eff, np.searchsorted(sizes, q.n)] & q.elig) != 0
            assert np.array_equal(fast, slow)
            seen["fits"] += 1
        return got

    def checked_update(fits, best, sizes, r):
        got = type(pol)._fits_update(fits, best, sizes, r)
        assert np.array_equal(got, fits_table(best, sizes))
        seen["update"] = seen.get("update", 0) + 1
        return got

    pol._region_usable, pol._fits_table, pol._fits_update = checked_usable, checked_fits, checked_update
    res = simulate(trace, cl, pol)
    assert res.stats["preemptions"] > 20 and seen["usable"] > 100 and seen["fits"] > 100
    assert seen["update"] > 100


def test_small_machine_choice_equals_the_array_one():
    """RMS's machine choice (:func:`placement.solvers.online.rms.choose_machines`) made in plain Python for a
    few machines equals the array version on random availabilities: one machine, one rack, racks."""
    from placement.solvers.online.rms import _choose_arrays, _choose_small

    rng = np.random.default_rng(6)
    kinds = set()
    for _ in range(3000):
        m = int(rng.integers(1, 30))
        avail = rng.integers(1, 9, m)
        rack = rng.integers(0, int(rng.integers(1, 8)), m)
        n = int(rng.integers(1, int(avail.sum()) + 1))
        sel, counts = _choose_arrays(avail, rack, n)
        s2, c2 = _choose_small(avail.tolist(), rack.tolist(), n)
        assert sel.tolist() == s2 and counts.tolist() == c2
        kinds.add("one" if len(s2) == 1 else "rack" if len(set(rack[s2].tolist())) == 1 else "racks")
    assert kinds == {"one", "rack", "racks"}
