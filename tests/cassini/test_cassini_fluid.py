"""The fluid link model (placement.cassini.fluid): hand cases, max-min fairness, conservation."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from placement.cassini.fluid import FluidJob, max_min_rates, simulate
from placement.cassini.profiles import JobProfile, data_parallel, hybrid_parallel

UP = JobProfile("vgg", 100, ((60, 0.0), (40, 50.0)), "data_parallel")


def test_one_job_alone_runs_its_profile():
    for prof in (UP, hybrid_parallel("h", 240, bandwidth=45), data_parallel("d", 180)):
        r = simulate([FluidJob(prof, ("l",), iterations=4, shift=7)], {"l": 50.0})
        assert r.begin[0] == 7
        np.testing.assert_allclose(r.iteration_times()[0], prof.iteration_time)


def test_opposite_shifts_no_slowdown():
    jobs = [FluidJob(UP, ("l",), iterations=6), FluidJob(UP, ("l",), shift=50, iterations=6)]
    r = simulate(jobs, {"l": 50.0})
    for x in r.iteration_times():
        np.testing.assert_allclose(x, 100.0)
    assert r.link_overloaded_time["l"] == 0


def test_full_overlap_analytical_stretch():
    # both at line rate for u = 40: each gets C/2, so the Up phase lasts 2u and the iteration 100 + 40
    jobs = [FluidJob(UP, ("l",), iterations=5), FluidJob(UP, ("l",), iterations=5)]
    r = simulate(jobs, {"l": 50.0})
    for x in r.iteration_times():
        np.testing.assert_allclose(x, 140.0)
    # three identical jobs: Up phase 3u -> 180
    r3 = simulate([FluidJob(UP, ("l",), iterations=3) for _ in range(3)], {"l": 50.0})
    np.testing.assert_allclose(np.concatenate(r3.iteration_times()), 180.0)


def test_congestion_loss_factor_labelled_and_off_by_default():
    jobs = [FluidJob(UP, ("l",), iterations=3), FluidJob(UP, ("l",), iterations=3)]
    r = simulate(jobs, {"l": 50.0}, loss=0.2)
    # goodput 40 shared by two: 2000 / 20 = 100 ms of Up
    np.testing.assert_allclose(np.concatenate(r.iteration_times()), 160.0)
    with pytest.raises(ValueError, match="loss"):
        simulate(jobs, {"l": 50.0}, loss=1.0)
    with pytest.raises(ValueError, match="links"):
        simulate([FluidJob(UP, ("x",))], {"l": 50.0})


def test_stretch_delays_later_iterations_and_start():
    # job B starts 20 ms after A; the second overlap keeps moving B's phases
    jobs = [FluidJob(UP, ("l",), iterations=8), FluidJob(UP, ("l",), start=20, iterations=8)]
    r = simulate(jobs, {"l": 50.0})
    ends_b = r.ends[1]
    assert ends_b[0] > 120  # its first Up phase was shared
    # iteration ends are increasing and no iteration is faster than the profile
    for x in r.iteration_times():
        assert (x >= 100 - 1e-9).all()


def test_max_min_hand_example():
    # L0 (cap 10): f0, f1; L1 (cap 4): f1, f2 -> f1 = f2 = 2, f0 = 8
    inc = np.array([[1, 1, 0], [0, 1, 1]])
    np.testing.assert_allclose(max_min_rates(inc, np.array([10.0, 4.0]), np.full(3, np.inf)), [8, 2, 2])
    # demand caps: f2 wants 1 -> f1 = 3, f0 = 7
    np.testing.assert_allclose(max_min_rates(inc, np.array([10.0, 4.0]), np.array([50, 50, 1.0])), [7, 3, 1])


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2), st.floats(1, 60)), min_size=1, max_size=6),
       st.lists(st.floats(5, 60), min_size=3, max_size=3))
def test_max_min_is_feasible_and_each_flow_bottlenecked(flows, caps):
    n = len(flows)
    inc = np.zeros((3, n))
    for f, (a, b, _) in enumerate(flows):
        inc[a, f] = inc[b, f] = 1
    dem = np.array([d for *_, d in flows])
    c = np.array(caps)
    r = max_min_rates(inc, c, dem)
    load = inc @ r
    assert (load <= c + 1e-7).all() and (r <= dem + 1e-9).all()
    for f in range(n):  # max-min: at demand, or on a saturated link where it has the largest rate
        if r[f] < dem[f] - 1e-7:
            links = np.flatnonzero(inc[:, f])
            assert any(load[lk] >= c[lk] - 1e-7 and r[f] >= r[inc[lk] > 0].max() - 1e-7 for lk in links)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([100, 150, 200]), st.floats(0.2, 0.6), st.floats(10, 50),
                          st.floats(0, 100), st.integers(0, 2)), min_size=1, max_size=4))
def test_volume_conserved_and_never_faster_than_alone(specs):
    links = [("a",), ("a", "b"), ("b",)]
    jobs = [FluidJob(data_parallel(f"j{i}", it, comm_fraction=cf, bandwidth=bw), links[k], shift=s, iterations=3)
            for i, (it, cf, bw, s, k) in enumerate(specs)]
    r = simulate(jobs, {"a": 50.0, "b": 40.0})
    for j, x in zip(jobs, r.iteration_times(), strict=True):
        assert len(x) == 3 and (x >= j.profile.iteration_time - 1e-6).all()
    for lk in ("a", "b"):
        want = sum(3 * sum(t * b for t, b in j.profile.phases) for j in jobs if lk in j.links)
        assert r.link_volume.get(lk, 0.0) == pytest.approx(want, rel=1e-6)


def test_goodput_factor_reproduces_section_2_2_two_jobs_at_22_gbps_each():
    # §2.2: two VGG19 jobs started together on one 50 Gbps link each get ~22 Gbps under DCQCN.
    # With the calibrated factor the link delivers 0.88 * 50 = 44 while both send: 22 + 22; one
    # flow alone still gets its demand. The Up phase (u ms at b Gbps) stretches to u * b / 22.
    import numpy as np

    from placement.cassini.catalogue import profile_of
    from placement.cassini.fluid import (
        SECTION_2_2_GOODPUT,
        FluidJob,
        effective_capacity,
        max_min_rates,
        simulate,
    )
    from placement.cassini.stepped import stepped_iteration_times

    inc, caps, dem = np.ones((1, 2)), np.array([50.0]), np.array([48.0, 48.0])
    eff = effective_capacity(inc, caps, dem, 0.0, SECTION_2_2_GOODPUT)
    assert max_min_rates(inc, eff, dem).tolist() == pytest.approx([22.0, 22.0])
    assert max_min_rates(inc, caps, dem).tolist() == pytest.approx([25.0, 25.0])          # max-min alone
    assert effective_capacity(inc[:, :1], caps, dem[:1], 0.0, SECTION_2_2_GOODPUT).tolist() == [50.0]
    p = profile_of("VGG19", "a")
    up = sum(d for d, b in p.phases if b > 0)
    want = p.iteration_time - up + up * p.peak / 22
    jobs = [FluidJob(profile_of("VGG19", n), ("l",), iterations=4) for n in "ab"]
    r = simulate(jobs, {"l": 50.0}, shared_goodput=SECTION_2_2_GOODPUT)
    assert [float(x) for x in r.iteration_times()[0]] == pytest.approx([want] * 4)
    stepped = stepped_iteration_times([(j.profile, ("l",), 0.0) for j in jobs], {"l": 50.0}, 4 * want + 1,
                                      dt=0.05, shared_goodput=SECTION_2_2_GOODPUT)
    assert float(np.diff(np.concatenate([[0.0], stepped[0]]))[-1]) == pytest.approx(want, rel=2e-3)


def test_one_capacity_overlaps_that_fit_run_free_and_score_one_means_ideal():
    # The goodput factor applies only where demand exceeds capacity (fluid.py docstring): two
    # flows of 25 + 20 on 50 share nothing (full rates), 30 + 30 do (0.88 * 50 split).
    import numpy as np

    from placement.cassini.fluid import SECTION_2_2_GOODPUT, FluidJob, effective_capacity, simulate
    from placement.cassini.profiles import data_parallel
    from placement.cassini.stepped import stepped_iteration_times

    inc, caps = np.ones((1, 2)), np.array([50.0])
    assert effective_capacity(inc, caps, np.array([25.0, 20.0]), 0.0, SECTION_2_2_GOODPUT).tolist() == [50.0]
    assert effective_capacity(inc, caps, np.array([30.0, 30.0]), 0.0, SECTION_2_2_GOODPUT).tolist() == \
        pytest.approx([44.0])
    # always overlapping but fitting (25 + 25 = 50): each job runs its ideal iteration, in the
    # fluid model and in the independent stepped integration
    a, b = data_parallel("a", 100, 0.5, 25), data_parallel("b", 100, 0.5, 25)
    r = simulate([FluidJob(a, ("l",), iterations=5), FluidJob(b, ("l",), iterations=5)], {"l": 50.0},
                 shared_goodput=SECTION_2_2_GOODPUT)
    assert [float(x) for x in np.concatenate(r.iteration_times())] == pytest.approx([100.0] * 10)
    st = stepped_iteration_times([(a, ("l",), 0.0), (b, ("l",), 0.0)], {"l": 50.0}, 501.0, dt=0.5,
                                 shared_goodput=SECTION_2_2_GOODPUT)
    assert float(st[0][-1]) == pytest.approx(500.0, rel=1e-6)


def test_marked_volume_is_what_a_job_sends_while_its_link_is_over_capacity():
    # two jobs of Up 50 ms at 40 Gbps on one 50 Gbps link: in phase, both send while the link is
    # offered 80 Gbps (every Up phase marked, 25 Gbps each); half a period apart, never overloaded
    from placement.cassini.profiles import data_parallel

    p = data_parallel("p", 100, 0.5, 40)
    together = simulate([FluidJob(p, ("l",), shift=0.0, iterations=4), FluidJob(p, ("l",), shift=0.0, iterations=4)],
                        {"l": 50.0})
    apart = simulate([FluidJob(p, ("l",), shift=0.0, iterations=4), FluidJob(p, ("l",), shift=50.0, iterations=4)],
                     {"l": 50.0})
    # each Up phase moves 50 ms x 40 Gbps = 2,000 units, all of it while the link is overloaded
    assert together.marked == pytest.approx([4 * 2000.0, 4 * 2000.0])
    assert apart.marked == [0.0, 0.0]
