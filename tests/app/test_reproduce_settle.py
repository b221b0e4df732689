"""``Context.settle()``: under ``--workers`` a speculative pass ends at the barrier, so the calls
after it are submitted only with real arguments (none at a stood-in's), and the outputs stay the
serial run's; serially it does nothing."""

from __future__ import annotations

import re

import pytest

from placement.app import reproduce as rp
from placement.app.shipped import cluster_arg
from placement.sim.instance import SimInstance
from placement.sim.trace import synthetic_trace


def _toy(settle: bool):
    def run(ctx: rp.Context) -> None:
        """Per seed FIFO; then (after the barrier) Tiresias on a cluster sized from FIFO's mean JCT."""
        firsts = {}
        for seed in ctx.seeds:
            trace = synthetic_trace("poisson", jobs=40, seed=seed, jobs_per_hour=30, max_gpus=8)
            firsts[seed] = (trace, ctx.simulate(SimInstance(trace, cluster_arg("1x1x2x1x8"), perf="ideal"), "fifo",
                                                seed, f"fifo-s{seed}")[2])
        if settle:
            ctx.settle()
        for seed, (trace, first) in firsts.items():
            racks = 2 + int(first["mean_jct_s"]) % 3
            _res, _rows, summ = ctx.simulate(SimInstance(trace, cluster_arg(f"1x1x{racks}x1x8"), perf="ideal"),
                                             "tiresias", seed, f"tiresias-s{seed}")
            ctx.row(seed=seed, racks=racks, fifo_jct_s=first["mean_jct_s"], tiresias_jct_s=summ["mean_jct_s"])
    return run


@pytest.fixture
def registry(monkeypatch):
    reps = {name: rp.Reproduction(name, "toy", "fifo then tiresias", _toy(settle), seeds=3, quick_seeds=3)
            for name, settle in (("settled", True), ("unsettled", False))}
    monkeypatch.setattr(rp, "reproductions", lambda: reps)
    return reps


def _submitted(lines: list[str]) -> int:
    return sum(int(m.group(1)) for line in lines for m in [re.search(r"(\d+) simulations submitted", line)] if m)


def test_settle_submits_no_call_at_a_stood_in_argument(registry, tmp_path):
    serial = rp.run_reproduction("settled", str(tmp_path / "serial"))
    said: list[str] = []
    par = rp.run_reproduction("settled", str(tmp_path / "par"), workers=2, echo=said.append)
    assert (tmp_path / "serial" / "results.csv").read_bytes() == (tmp_path / "par" / "results.csv").read_bytes()
    assert serial.rows == par.rows and len(par.rows) == 3
    # the passes before the last submit each real call once: 3 FIFO runs, then 3 Tiresias runs at real sizes
    assert _submitted(said) == 6
    # without the barrier the first pass also submits Tiresias at the stand-ins' sizes (at least one differs)
    said2: list[str] = []
    rp.run_reproduction("unsettled", str(tmp_path / "par2"), workers=2, echo=said2.append)
    assert _submitted(said2) > 6


def test_settle_is_a_no_op_serially(tmp_path):
    ctx = rp.Context("toy", "toy", tmp_path, False, [0])
    ctx.settle()   # no runner: nothing stood in
