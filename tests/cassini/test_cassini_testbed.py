"""Themis and Th+CASSINI on the testbed with the fluid link model: logs pass the replay check
(iteration times recomputed by an independent time-stepped integration), determinism, errors."""

import numpy as np
import pytest

from placement.cassini.fluid import FluidJob, simulate
from placement.cassini.profiles import JobProfile
from solvers.cassini_testbed import (
    Config,
    TraceJob,
    poisson_trace,
    replay_check,
    run,
    stepped_iteration_times,
    summary,
)

UP = JobProfile("vgg", 100, ((60, 0.0), (40, 50.0)), "data_parallel")


def test_stepped_integration_matches_event_driven():
    specs = [(UP, ("l",), 0.0), (UP, ("l",), 20.0)]
    ends = stepped_iteration_times(specs, {"l": 50.0}, 1000.0, dt=0.05)
    r = simulate([FluidJob(p, ls, shift=s, iterations=8) for p, ls, s in specs], {"l": 50.0})
    for a, b in zip(ends, r.ends, strict=True):
        k = min(len(a), len(b))
        np.testing.assert_allclose(a[:k], b[:k], atol=0.2)
    full = stepped_iteration_times([(UP, ("l",), 0.0)] * 2, {"l": 50.0}, 700.0, dt=0.05)
    np.testing.assert_allclose(np.diff(np.concatenate([[0], full[0]])), 140.0, atol=0.1)


@pytest.mark.parametrize("policy", ["themis", "themis+cassini"])
def test_small_run_passes_replay_check(policy):
    trace = poisson_trace(3, hours=0.4, load=1.0, mean_minutes=6)
    cfg = Config(policy=policy, packing="anywhere", window_iterations=8)
    log = run(trace, cfg, seed=3)
    assert len(log["finished"]) == len(trace)
    assert replay_check(log, cfg, epochs=list(range(0, len(log["epochs"]), 4))) == []
    s = summary(log)
    assert s["iter_mean"] >= s["ideal_mean"] - 1e-9
    assert run(trace, cfg, seed=3)["epochs"] == log["epochs"]


def test_cassini_shifts_remove_the_overlap_of_two_jobs_sharing_a_link():
    # two VGG16 gangs that must cross racks (3 workers each, 2 servers per rack) on an empty cluster
    trace = [TraceJob("a", "VGG16", 0.0, 3, 2000), TraceJob("b", "VGG16", 0.0, 3, 2000)]
    cas = summary(run(trace, Config(policy="themis+cassini", packing="anywhere", candidates=1), seed=0))
    assert cas["iter_mean"] == pytest.approx(cas["ideal_mean"], rel=1e-6)


def test_bad_input_names_the_field():
    with pytest.raises(ValueError, match="policy"):
        run([], Config(policy="x"))
    with pytest.raises(ValueError, match="workers"):
        run([TraceJob("a", "VGG16", 0.0, 30, 10)], Config())
