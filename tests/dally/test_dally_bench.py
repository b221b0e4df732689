"""The Dally benchmark's building blocks on a small case: the workload rule, every policy judged by
replay_check, the bound below every policy, and the section's table."""

from __future__ import annotations

import pytest

from placement.app.bench.dally import POLICIES, dally_trace, run_case
from placement.errors import InstanceError


def test_dally_trace_is_seeded_and_labelled():
    a = dally_trace("poisson", jobs=30, seed=4, jobs_per_hour=10.0)
    b = dally_trace("poisson", jobs=30, seed=4, jobs_per_hour=10.0)
    assert a == b
    assert all(j.gpus >= 2 and {"model", "submit"} <= j.synthetic for j in a.jobs)
    assert [j.submit for j in a.jobs] == sorted(j.submit for j in a.jobs) and a.jobs[-1].submit > 0
    batch = dally_trace("batch", jobs=30, seed=4)
    assert {j.submit for j in batch.jobs} == {0.0}
    with pytest.raises(InstanceError, match="kind"):
        dally_trace("bursty")


@pytest.mark.slow
def test_small_case_every_policy_replays_clean_and_stays_above_the_bound():
    case = run_case(2, "batch", seed=1, jobs=60)
    assert [r["policy"] for r in case["rows"]] == list(POLICIES)
    for r in case["rows"]:
        assert r["replay_violations"] == 0 and r["unfinished"] == 0
        assert r["makespan_gap"] >= -1e-9 and r["avg_jct_gap"] >= -1e-9
        assert r["avg_comm_h"] >= -1e-9
    assert case["timers"], "the auto-tuner's timers over time are recorded"
