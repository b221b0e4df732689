"""``placement reproduce --workers N / --scheduler ADDR``: a reproduction's simulations as Dask
tasks give the serial run's outputs (``results.csv``, every log, the claims), on a LocalCluster
and on an outside ``dask scheduler`` with one ``dask worker``, both started here on loopback.

The toy reproduction chooses its second run's cluster from the first run's result and reads
the policy object after each run, so the passes (see ``placement.app.reproduce.parallel``) must
find calls that a stand-in outcome does not announce; a tiny HiveD configuration (a size search
chosen from earlier runs, the sharing-safety check built from the policy object) is the real
paper's code on the same engine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import placement
from placement.app import reproduce as rp
from placement.app.cli import main
from placement.app.reproduce import hived
from placement.app.shipped import cluster_arg
from placement.sim.instance import SimInstance
from placement.sim.trace import synthetic_trace

# Table 1's quotas only, without Figures 8-9 and Figure 5's Tiresias runs (tests/hived/test_reproduce_hived.py
# runs those, with the fitted quotas): the search, the main runs, Figure 10's size and the regime map are the same code
TINY_HIVED = hived.Config(start_day=50.0, days=0.25, warmup_days=0.1, nodes=16, scales=(1.0, 2.0), refine=1,
                          max_jobs=60, regime_nodes=(20,), regime_spare=(0.0,), regime_checkpoint_h=(1.0,), regime_days=(0.25,),
                          views=("table1",), fig89_seeds=0, fig5_seeds=0)


def _chain(ctx: rp.Context) -> None:
    """FIFO, then Tiresias on a cluster sized from FIFO's mean JCT (a call that depends on a result)."""
    gaps = []
    for seed in ctx.seeds:
        trace = synthetic_trace("poisson", jobs=40, seed=seed, jobs_per_hour=30, max_gpus=8)
        _res, _rows, first = ctx.simulate(SimInstance(trace, cluster_arg("1x1x2x1x8"), perf="ideal"), "fifo", seed,
                                          f"fifo-s{seed}")
        racks = 2 + int(first["mean_jct_s"]) % 3
        res, _rows, summ = ctx.simulate(SimInstance(trace, cluster_arg(f"1x1x{racks}x1x8"), perf="ideal"),
                                        "tiresias", seed, f"tiresias-s{seed}")
        ctx.row(seed=seed, racks=racks, fifo_jct_s=first["mean_jct_s"], tiresias_jct_s=summ["mean_jct_s"],
                policy_class=type(ctx.last_policy).__name__, events=len(res.log.rows))
        gaps.append(summ["mean_jct_s"] / first["mean_jct_s"] - 1)
    ctx.claim(claim="Tiresias on more racks lowers mean JCT", source="toy", paper="-10%", ours=gaps, unit="%",
              scale=100, holds=sorted(gaps)[len(gaps) // 2] < 0, rule="median below 0")


@pytest.fixture
def registry(monkeypatch):
    reps = {"chain": rp.Reproduction("chain", "A chained toy", "fifo then tiresias", _chain, seeds=2, quick_seeds=2),
            "hived": rp.configured(hived.REPRODUCTION, seeds=1, config=TINY_HIVED)}
    monkeypatch.setattr(rp, "reproductions", lambda: reps)
    return reps


def _untimed(doc):
    """``doc`` without the wall times (the engine's and the replay check's): not deterministic."""
    if isinstance(doc, dict):
        return {k: _untimed(v) for k, v in doc.items() if k not in ("wall_s", "replay_check_s")}
    return [_untimed(v) for v in doc] if isinstance(doc, list) else doc


def _same_outputs(a: Path, b: Path) -> None:
    """The same results.csv, regimes.csv, logs (byte for byte) and claims; summaries equal apart
    from wall times."""
    assert (a / "results.csv").read_bytes() == (b / "results.csv").read_bytes()
    assert (a / "regimes.csv").read_bytes() == (b / "regimes.csv").read_bytes()
    logs = sorted(p.name for p in (a / "logs").iterdir())
    assert logs and logs == sorted(p.name for p in (b / "logs").iterdir())
    for run in logs:
        for f in ("log.json", "instance.json", "jobs.csv"):
            assert (a / "logs" / run / f).read_bytes() == (b / "logs" / run / f).read_bytes(), (run, f)
        sa, sb = (_untimed(json.loads((d / "logs" / run / "summary.json").read_text())) for d in (a, b))
        assert sa == sb, run
    ca, cb = (json.loads((d / "claims.json").read_text()) for d in (a, b))
    assert ca["claims"] == cb["claims"]
    assert ca["logs"] == cb["logs"] and ca["replay_ok"] and cb["replay_ok"]


def test_local_cluster_gives_the_serial_outputs(registry, tmp_path):
    for paper, seeds in (("chain", "3"), ("hived", "1")):
        serial, par = tmp_path / f"{paper}-serial", tmp_path / f"{paper}-par"
        assert main(["reproduce", paper, "--seeds", seeds, "--workers", "0", "--out", str(serial)]) == 0
        assert main(["reproduce", paper, "--seeds", seeds, "--workers", "2", "--out", str(par)]) == 0
        _same_outputs(serial, par)
    assert len((tmp_path / "chain-par" / "results.csv").read_text().splitlines()) == 1 + 3


def _start(argv: list[str], log: Path) -> subprocess.Popen:
    return subprocess.Popen(argv, stdout=log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True,
                            env={**os.environ, "DASK_DISTRIBUTED__WORKER__DAEMON": "False"})


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def test_outside_scheduler_gives_the_serial_outputs(registry, tmp_path):
    dask = str(Path(sys.executable).with_name("dask"))
    sfile = tmp_path / "scheduler.json"
    procs = [_start([dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                     "--scheduler-file", str(sfile)], tmp_path / "scheduler.log")]
    try:
        deadline = time.monotonic() + 90
        while not (sfile.exists() and sfile.stat().st_size) and time.monotonic() < deadline:
            assert procs[0].poll() is None, (tmp_path / "scheduler.log").read_text()
            time.sleep(0.2)
        address = json.loads(sfile.read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:")
        procs.append(_start([dask, "worker", "--scheduler-file", str(sfile), "--nthreads", "1", "--nworkers", "1",
                             "--no-dashboard", "--host", "127.0.0.1"], tmp_path / "worker.log"))
        outside = placement.reproduce("chain", seeds=2, out=tmp_path / "outside", scheduler=address)
        serial = placement.reproduce("chain", seeds=2, out=tmp_path / "serial", workers=0)
        _same_outputs(tmp_path / "serial", tmp_path / "outside")
        assert outside.claims.equals(serial.claims) and outside.results.equals(serial.results)
    finally:
        for p in reversed(procs):
            _stop(p)


@pytest.mark.parametrize("argv, field", [(["--workers", "-1"], "--workers"),
                                         (["--scheduler", "tcp://127.0.0.1:9"], "--scheduler")])
def test_bad_workers_or_scheduler_is_one_line(registry, tmp_path, capsys, monkeypatch, argv, field):
    monkeypatch.setattr("placement.app.sweep.run.CONNECT_TIMEOUT_S", 0.5)   # a refused port is retried until then
    rc = main(["reproduce", "chain", "--out", str(tmp_path / "o"), *argv])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and field in err, err
    assert not (tmp_path / "o").exists()
    with pytest.raises(placement.InstanceError, match="^workers: "):   # the face names the Python parameter
        placement.reproduce("chain", workers=-1, out=tmp_path / "o")
