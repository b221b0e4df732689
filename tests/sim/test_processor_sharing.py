"""Equal-rate fluid processor sharing (:mod:`placement.sim.processor_sharing`).

Worked hand cases; equality with the engine running the OSDI'18 Gandiva on one GPU with 1-GPU
jobs (where time slicing is exactly processor sharing), an independent computation; work
conservation; refusals.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from placement.solvers.online.gandiva_fluid import GandivaFluid

from placement.errors import InstanceError
from placement.sim import Cluster, Job, Trace, simulate
from placement.sim.metrics import per_job
from placement.sim.perf import IdealPerf
from placement.sim.processor_sharing import processor_sharing


def test_hand_cases():
    # two 1-GPU jobs on one GPU, 1 s and 3 s at 0: both at 1/2 until 2, then the second alone
    assert processor_sharing([0, 0], [1, 1], [1, 3], 1).tolist() == [2.0, 4.0]
    # the second arrives at 1 when the first has 1 s left: both at 1/2 until 3, then 1 s alone
    assert processor_sharing([0, 1], [1, 1], [2, 2], 1).tolist() == [3.0, 4.0]
    # demand under the cluster: everyone at full speed
    assert processor_sharing([0, 0], [2, 1], [1, 1], 4).tolist() == [1.0, 1.0]
    # an idle gap before the second arrival
    assert processor_sharing([0, 5], [1, 1], [1, 1], 1).tolist() == [1.0, 6.0]
    # a 4-GPU and a 2-GPU job on 3 GPUs: rate 1/2 until the 2 s job ends at 4; the 6 s job has 4 s left
    # alone at rate min(1, 3/4) = 0.75: 16/3 s more
    assert processor_sharing([0, 0], [4, 2], [6, 2], 3) == pytest.approx([4 + 16 / 3, 4.0])


@given(st.lists(st.tuples(st.integers(0, 50), st.integers(1, 40)), min_size=1, max_size=8))
def test_equals_the_engine_time_slicing_one_gpu(jobs):
    trace = Trace("ps", tuple(Job(f"j{i}", float(s), 1, float(d)) for i, (s, d) in enumerate(jobs)))
    res = simulate(trace, Cluster.uniform(1, 1, 1, 1, 1), GandivaFluid(), perf=IdealPerf())
    finish = {r["job"]: r["submit"] + r["jct"] for r in per_job(res.log, trace)}
    got = processor_sharing([s for s, _ in jobs], [1] * len(jobs), [d for _, d in jobs], 1)
    assert got == pytest.approx([finish[f"j{i}"] for i in range(len(jobs))], rel=1e-9, abs=1e-6)


@given(st.lists(st.tuples(st.integers(1, 8), st.integers(1, 100)), min_size=1, max_size=20), st.integers(1, 8))
def test_work_conserving_while_the_demand_covers_the_cluster(jobs, n_gpus):
    g = np.array([a for a, _ in jobs], float)
    d = np.array([b for _, b in jobs], float)
    done = processor_sharing(np.zeros(len(jobs)), g, d, n_gpus)
    # GPU-seconds delivered up to the first finish equal n_gpus x that time when the demand covers the cluster
    t0 = done.min()
    if g.sum() >= n_gpus:
        assert (g * np.minimum(d, t0 * min(1.0, n_gpus / g.sum()))).sum() == pytest.approx(n_gpus * t0)
    assert (done >= d - 1e-9).all()          # nobody faster than its ideal time
    assert done.max() >= (g * d).sum() / n_gpus - 1e-6   # nor the cluster faster than its capacity


@pytest.mark.parametrize("args,field", [(([0], [0], [1], 1), "gpus"), (([0], [1], [-1], 1), "duration"),
                                        (([0], [1], [1], 0), "n_gpus"), (([0, 1], [1], [1], 1), "jobs"),
                                        (([np.nan], [1], [1], 1), "submit")])
def test_refusals_name_the_field(args, field):
    with pytest.raises(InstanceError, match=field):
        processor_sharing(*args)
