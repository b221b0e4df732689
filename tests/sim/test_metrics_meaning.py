"""Metrics only where they mean something: slowdown and communication overhead of goodput jobs
(whose duration is progress in samples) are None, and the mean utilization is measured inside the
window from the first to the last submission, not over the drain after it."""

from __future__ import annotations

import pytest
from placement.instances.traces import pollux_dir
from placement.solvers.online.fifo import FIFO

from placement.sim.cluster import Cluster
from placement.sim.engine import simulate
from placement.sim.goodput import GoodputPerf, load_applications
from placement.sim.log import EventLog, LogRow
from placement.sim.metrics import glossary, goodput_start, per_job, summary
from placement.sim.perf import IdealPerf
from placement.sim.trace import Job, Trace
from tests.support import held_gpu_seconds


@pytest.fixture(scope="module")
def apps():
    import scipy.optimize  # noqa: F401  (the goodput fit's; imported here, not timed in the run's test)

    return load_applications(pollux_dir() / "traces")


def test_goodput_jobs_have_no_slowdown_and_no_comm_overhead(apps):
    # two ncf jobs (their duration is ncf's total progress, 194,174 samples) on 4 GPUs, FIFO
    trace = Trace("ncf-2", (Job("b0", 0.0, 2, apps["ncf"].total, model="ncf"),
                            Job("b1", 30.0, 1, apps["ncf"].total, model="ncf")))
    cluster = Cluster.uniform(racks=1, machines=1, gpus_per_machine=4)
    res = simulate(trace, cluster, FIFO(), perf=GoodputPerf(apps))
    rows = per_job(res.log, trace)
    assert [r["state"] for r in rows] == ["finished", "finished"]
    # run time / progress is no slowdown: both jobs ran for less "time" than their sample count
    assert all(r["run_time"] < r["duration"] for r in rows)
    assert all(r["slowdown"] is None for r in rows)
    s = summary(rows, res.log, cluster.n_gpus)
    assert s["mean_slowdown"] is None and s["mean_comm_overhead_s"] is None
    assert "goodput" in glossary("mean_slowdown")[1] and "goodput" in glossary("mean_comm_overhead_s")[1]
    # the other numbers stay: the JCT is each job's finish - submit from the log
    fin = {r.job: r.time for r in res.log if r.event == "finish"}
    assert s["mean_jct_s"] == pytest.approx((fin["b0"] - 0.0 + fin["b1"] - 30.0) / 2)


def test_seconds_jobs_keep_their_slowdown():
    trace = Trace("two", (Job("a", 0.0, 2, 100.0), Job("b", 10.0, 4, 50.0)))
    cluster = Cluster.uniform(racks=1, machines=1, gpus_per_machine=4)
    res = simulate(trace, cluster, FIFO(), perf=IdealPerf())
    rows = {r["job"]: r for r in per_job(res.log, trace)}
    starts = {r.job: r.time for r in res.log if r.event == "start"}
    finishes = {r.job: r.time for r in res.log if r.event == "finish"}
    for j in trace.jobs:   # one attempt each: run time = finish - start
        assert rows[j.id]["slowdown"] == pytest.approx((finishes[j.id] - starts[j.id]) / j.duration)
    s = summary(list(rows.values()), res.log, cluster.n_gpus)
    assert s["mean_slowdown"] == pytest.approx(1.0) and s["mean_comm_overhead_s"] == pytest.approx(0.0)


def test_goodput_start_reads_the_segment_words():
    assert goodput_start("tier=machine workers=1 delay=30.0 rate=9.7 epoch=0 bsz=128 atomic=128 accum=0 "
                         "placement=1")
    assert not goodput_start("tier=rack rate=0.893")
    assert not goodput_start("")


def test_mean_utilization_is_measured_inside_the_submission_window():
    # 8 GPUs; submissions at 0 and 10; B runs on 4 GPUs until 1,000 s: a long drain after the last
    # submission that the mean over the makespan (0-1,000 s) would count
    trace = Trace("tail", (Job("A", 0.0, 4, 6.0), Job("B", 10.0, 4, 990.0)))
    log = EventLog([
        LogRow(0.0, "submit", "A"), LogRow(0.0, "start", "A", (0, 1, 2, 3)),
        LogRow(6.0, "finish", "A", (0, 1, 2, 3), 6.0),
        LogRow(10.0, "submit", "B"), LogRow(10.0, "start", "B", (4, 5, 6, 7)),
        LogRow(1000.0, "finish", "B", (4, 5, 6, 7), 990.0)])
    s = summary(per_job(log, trace), log, 8)
    hand = 4 * 6 / (8 * 10)                        # A's 24 GPU-s inside [0, 10], B starts at its end
    assert s["mean_utilization"] == pytest.approx(hand)
    assert s["mean_utilization"] == pytest.approx(held_gpu_seconds(log, 0.0, 10.0) / (8 * 10))
    assert s["mean_utilization"] == s["allocation_rate"]
    assert s["gpu_seconds_busy"] / (8 * s["makespan_s"]) == pytest.approx((24 + 3960) / 8000)  # the drain's mean
    assert "first to last submit" in glossary("mean_utilization")[1]


def test_mean_utilization_without_a_window_is_none():
    batch = Trace("batch", (Job("A", 0.0, 4, 9.0),))
    log = EventLog([LogRow(0.0, "submit", "A"), LogRow(0.0, "start", "A", (0, 1, 2, 3)),
                    LogRow(9.0, "finish", "A", (0, 1, 2, 3), 9.0)])
    assert summary(per_job(log, batch), log, 8)["mean_utilization"] is None
