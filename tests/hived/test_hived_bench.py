"""The HiveD benchmark pieces run on small settings and report consistent numbers."""

from __future__ import annotations

from placement.app.bench.hived import feasibility_sweep, fragmentation_run, job_trace, scale_run


def test_scale_run_small():
    # scale_run raises if a legal guaranteed request fails; timings are the bench's business
    r = scale_run(1, 300, seed=3)
    assert r["requests"] == 300 and r["gpus"] == 8192
    low = scale_run(1, 300, seed=3, low_every=3)
    assert low["low_requests"] == 100 and 0 <= low["preempted"] <= 100


def test_feasibility_sweep_agrees():
    rows = feasibility_sweep(4, seed=2)
    assert all(r["closed_form"] == r["exact"] for r in rows)


def test_fragmentation_schemes_replay_the_same_trace():
    jobs, mix = job_trace(4, 300, 256, load=0.8, seed=1)
    runs = {s: fragmentation_run(s, jobs, mix, racks=1, nodes_per_rack=32) for s in
            ("multi-level", "node-level", "quota")}
    for r in runs.values():
        assert r["jobs"] == 300 and 0 <= r["dropped"] <= 300
        assert 0.0 <= r["fragmentation_mean"] <= 1.0
    assert runs["multi-level"]["anomalies"] == runs["node-level"]["anomalies"] == 0
