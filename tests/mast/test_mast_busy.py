"""§5.6's busy-hours workload (placement/sim/meta_trace.py), its quotas, the allocation rate with
idle set-up and preemption time (placement/sim/slo.py) and FIFO inside candidate regions, by hand
and by recomputation."""

from __future__ import annotations

import numpy as np
import pytest
from placement.solvers.online.fifo import FIFO

from placement.app.policy_data import candidate_placement
from placement.sim import Cluster, Job, Trace, simulate
from placement.sim.log import EventLog, LogRow
from placement.sim.meta_trace import (
    UNPRIORITISED,
    WARMUP_PREFIX,
    busy_quotas,
    busy_trace,
    fit_floor,
    others_ratios,
)
from placement.sim.perf import IdealPerf
from placement.sim.slo import RMS_S, Overhead, allocation_with_overhead, with_setup

S = (256, 192, 128, 128, 64)


def test_the_fitted_floor_gives_the_tetris_runs_spread():
    """A Tetris run's worst region and spread over regions, exactly; a spread no floor reaches
    gives the nearest floor."""
    for n, worst, std in ((3, 0.8, 0.25), (5, 0.75, 0.26), (8, 1.2, 0.3)):
        f = fit_floor(n, worst, std)
        assert np.std(np.r_[worst, others_ratios(n - 1, worst, f)]) == pytest.approx(std, abs=1e-9)
    assert fit_floor(5, 0.8, 5.0) == 0.0


@pytest.mark.parametrize("tetris", [True, False])
def test_busy_trace_is_built_as_described(tetris):
    worst = 0.8 if tetris else 1.6
    tr, masks, homes = busy_trace(S, worst=worst, after=0.8, tetris=tetris, load=1.5, hours=4.0, tenants=12, seed=3)
    again = busy_trace(S, worst=worst, after=0.8, tetris=tetris, load=1.5, hours=4.0, tenants=12, seed=3)
    assert again[0] == tr and again[1] == masks and again[2] == homes
    H = 4 * 3600.0
    backlog = [j for j in tr.jobs if "backlog" in j.id]
    running = [j for j in tr.jobs if j.id.startswith(WARMUP_PREFIX) and "backlog" not in j.id]
    # the demand above supply waits at time 0: 0.5 x the cluster, to within a gang per region
    assert 0.5 * sum(S) - 5 * 128 <= sum(j.gpus for j in backlog) <= 0.5 * sum(S)
    for r, size in enumerate(S):
        held = sum(j.gpus for j in running if homes[j.id] == r)
        assert size - 64 <= held <= size                # full at time 0 (§3.2), to within a gang
    for j in tr.jobs:
        regions = [r for r in range(len(S)) if masks[j.tables[0]] >> r & 1]
        assert homes[j.id] in regions and all(S[r] >= j.gpus for r in regions)
        assert j.submit + j.duration <= 2 * H + 1e-6
        assert j.priority == 6 or not j.tenant.startswith(UNPRIORITISED)
        if j.id.startswith(WARMUP_PREFIX) or not tetris:
            assert regions == [homes[j.id]]            # running, queued, and every table before Tetris
        elif j.priority <= 1:
            assert len(regions) <= 2                   # high-priority data in one or two regions
    assert all(j.submit == 0 for j in backlog + running)
    arrivals = [j for j in tr.jobs if not j.id.startswith(WARMUP_PREFIX)]
    assert arrivals and all(0 < j.submit < H for j in arrivals)


def test_busy_quotas_cover_each_holders_busiest_hour():
    tr, _, _ = busy_trace(S, load=1.25, hours=3.0, tenants=12, seed=1)
    q = busy_quotas(tr, sum(S), 3.0)
    demand: dict = {}
    for j in tr.jobs:
        a, b = j.submit, min(j.submit + j.duration, 3 * 3600.0)
        for k in range(3):
            x = j.gpus * max(0.0, min(b, (k + 1) * 3600.0) - max(a, k * 3600.0)) / 3600.0
            demand.setdefault((j.tenant, j.priority), np.zeros(3))[k] += x
    hi = {h: v for h, v in demand.items() if h[1] <= 1}
    if sum(np.ceil(v.max()) for v in hi.values()) <= sum(S):
        assert all(q[h] == np.ceil(v.max()) for h, v in hi.items())
    assert sum(q.values()) <= sum(S)
    assert all(v == 0 for (t, _), v in q.items() if t.startswith(UNPRIORITISED))


def test_allocation_rate_counts_setup_and_preemption_as_idle():
    """Constant 100 s set-up, 60 s preemption time. Job a (2 GPUs, running at 0, exempt from set-up)
    runs 0-500 and is preempted; b (2 GPUs) arrives at 100, waits, starts at 500 by preempting a
    (idle 100 + 60 + the RMS's time), finishes at 1500; a restarts at 1500 (idle 100), runs to the
    window's end at 2000. Working GPU-seconds: a 2 x 500 + b 2 x (1000 - 160.0055) + a
    2 x (500 - 100.0013); idle: 2 x 160.0055 + 2 x 100.0013; over 2 GPUs x 2000 s."""
    over = Overhead(100.0, 100.0, 60.0)
    trace = Trace("t", (Job("warm-a", 0.0, 2, 3000.0), Job("b", 100.0, 2, 1000.0)))
    log = EventLog([LogRow(0.0, "submit", "warm-a", ()), LogRow(0.0, "start", "warm-a", (0, 1)),
                    LogRow(100.0, "submit", "b", ()), LogRow(500.0, "preempt", "warm-a", (0, 1), 500.0),
                    LogRow(500.0, "start", "b", (0, 1)), LogRow(1500.0, "finish", "b", (0, 1), 1000.0),
                    LogRow(1500.0, "start", "warm-a", (0, 1), 500.0)])
    got = allocation_with_overhead(trace, log, 2, 0.0, 2000.0, over, "warm-")
    idle = 2 * (160.0 + RMS_S[1]) + 2 * (100.0 + RMS_S[0])
    assert got["idle"] == pytest.approx(idle / 4000.0)
    assert got["rate"] == pytest.approx((2 * 500 + 2 * 1000 + 2 * 500 - idle) / 4000.0)
    assert got["held"] == pytest.approx(1.0)
    setup = with_setup(trace, over, "warm-")
    assert [j.duration for j in setup.jobs] == [3000.0, 1100.0]


def test_fifo_runs_a_gang_inside_one_of_its_candidate_regions():
    """Two regions of one 8-GPU machine. x (8 GPUs, region 1 only) must wait for y (8 GPUs in
    region 1) although region 0 is free; without the data it starts at once in region 0."""
    from placement.sim.cluster import MachineSpec

    ms = [MachineSpec(f"r{r}-c0-k0-m0", f"r{r}-c0-k0", f"r{r}-c0", f"r{r}", 8, "H100", 64) for r in (0, 1)]
    cluster = Cluster.from_machines(ms, name="two")
    trace = Trace("t", (Job("y", 0.0, 8, 100.0, tables=("ty",)), Job("x", 1.0, 8, 10.0, tables=("tx",))))
    data = candidate_placement(cluster, {"ty": 2, "tx": 2})
    starts = {r.job: (r.time, r.gpus) for r in simulate(trace, cluster, FIFO(data=data), perf=IdealPerf()).log
              if r.event == "start"}
    assert starts["y"][1] == tuple(range(8, 16)) and starts["x"] == (100.0, tuple(range(8, 16)))
    free = {r.job: r.time for r in simulate(trace, cluster, FIFO(), perf=IdealPerf()).log if r.event == "start"}
    assert free["x"] == 1.0
