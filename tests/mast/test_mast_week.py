"""MAST at a week's scale: the multi-day Meta-like workload (placement.sim.meta_week), its CLI, and
the fast scheduling pass and record queue giving the same decisions as the one-at-a-time loop."""

from __future__ import annotations

import json
from statistics import NormalDist

import numpy as np
import pytest
from placement.solvers.online.mast_admission import GmsQueue
from placement.solvers.online.mast_queue import RecordGmsQueue

from placement.app.cli import main
from placement.app.policy_data import build_policy, candidate_placement
from placement.app.shipped import cluster_arg
from placement.sim.engine import simulate
from placement.sim.meta_trace import GANG_PROBS, GANG_SIZES, WARMUP_PREFIX
from placement.sim.meta_week import (
    DAY,
    _means,
    coupling_for,
    duration_quantile,
    gang_and_duration,
    meta_week,
)
from placement.sim.replay import replay_check


def test_duration_quantiles_are_the_papers():
    z = np.array([NormalDist().inv_cdf(q) for q in (0.5, 0.9, 0.99)])
    assert np.allclose(duration_quantile(z), [20 * 60, 6.7 * 3600, 66 * 3600], rtol=1e-12)
    zz = np.linspace(-6, 6, 1001)
    assert (np.diff(duration_quantile(zz)) >= 0).all()     # a quantile function


def test_gang_quantiles_by_inverse_cdf():
    # the gang drawn at normal score z is the inverse CDF of GANG_PROBS at Phi(z)
    cum = np.cumsum(GANG_PROBS)
    for q in (0.03, 0.5, 0.77, 0.9, 0.99, 0.999):
        z = NormalDist().inv_cdf(q)
        g, _ = gang_and_duration(np.array([z]), np.array([0.0]), cap=256)
        assert g[0] == GANG_SIZES[int(np.searchsorted(cum, q))]


def test_coupling_gives_the_mean_by_sampling():
    # the solved share reproduces the target mean GPU-seconds, checked by a million seeded draws
    target = 80 * 3600.0
    lam = coupling_for(target, cap=256)
    indep, coupled = _means(256)
    assert coupled < target < indep and 0 < lam < 1
    rng = np.random.default_rng(3)
    zg = rng.standard_normal(1_000_000)
    zd = np.where(rng.random(len(zg)) < lam, -zg, rng.standard_normal(len(zg)))
    g, d = gang_and_duration(zg, zd, cap=256)
    assert abs((g * d).mean() / target - 1) < 0.05
    with pytest.raises(ValueError):
        coupling_for(indep * 1.5, cap=256)


def test_week_trace_follows_the_paper():
    trace, masks = meta_week((128,) * 8, days=2, per_day=20_000, load=64, seed=1)
    arr = [j for j in trace.jobs if not j.id.startswith(WARMUP_PREFIX)]
    warm = [j for j in trace.jobs if j.id.startswith(WARMUP_PREFIX)]
    assert abs(len(arr) - 40_000) < 5 * 200                   # Poisson count, 5 standard deviations
    g = np.array([j.gpus for j in arr])
    d = np.array([j.duration for j in arr])
    assert list(np.percentile(g, [50, 90, 99])) == [16, 64, 128]
    assert np.allclose(np.percentile(d, [50, 90, 99]), [1200, 24120, 237600], rtol=0.06)
    share = np.bincount([j.priority for j in trace.jobs], minlength=7) / len(trace.jobs)
    assert np.allclose(share, [0.03, 0.20, 0.16, 0.54, 0.002, 0.005, 0.0602], atol=0.01)
    k = np.array([bin(masks[j.tables[0]]).count("1") for j in trace.jobs])
    assert abs((k >= 2).mean() - 0.9) < 0.01 and abs((k >= 4).mean() - 0.4) < 0.01
    assert abs((g * d).sum() / (1024 * 2 * DAY) / 64 - 1) < 0.15   # offered load
    used = sum(j.gpus for j in warm)
    assert 0.98 * 1024 - 128 <= used <= 0.98 * 1024 and all(j.submit == 0 for j in warm)
    assert all(0 <= j.submit < 2 * DAY for j in arr)
    small = [meta_week((128,) * 8, days=0.1, per_day=20_000, load=64, seed=s)[0].jobs for s in (1, 1, 2)]
    assert small[0] == small[1] != small[2]


def test_cli_days(tmp_path, capsys):
    out = tmp_path / "w.json"
    args = ["generate", "trace", "--kind", "mast", "--cluster", "4x1x4x8x8", "--days", "2", "--seed", "4",
            "-o", str(out)]
    assert main(args) == 0
    doc = json.loads(out.read_text())
    expected, _ = meta_week((256,) * 4, days=2, seed=4)     # the generator's 40 tenants, as the bench
    from placement.sim.instance import load_instance

    assert load_instance(doc).trace.jobs == expected.jobs
    assert main(["generate", "trace", "--kind", "poisson", "--days", "1", "-o", str(tmp_path / "x.json")]) == 2
    assert main([*args[:-1], str(tmp_path / "y.json"), "--days", "0"]) == 2
    err = capsys.readouterr().err
    assert "--days" in err and "Traceback" not in err
    assert not (tmp_path / "x.json").exists() and not (tmp_path / "y.json").exists()


@pytest.mark.parametrize(("policy", "opts"), [("mast", {}), ("mast", {"prefilter_min": 0}), ("federated", {})])
def test_fast_pass_places_as_the_loop(policy, opts):
    """Half a day with preemptions in 4 regions: the usable-table pass (the default) writes the
    log of §4.3's one-at-a-time loop (negative cache, auction) over the same pre-filtered
    candidates, with the pre-filter on many pending workloads and on every pass."""
    cl = cluster_arg("4x1x2x8x8")
    trace, masks = meta_week((128,) * 4, days=0.6, per_day=700, load=1.3, tenants=6, seed=11)
    # without the month-long tail, whose drain only re-arms GMS-scans
    trace = type(trace)(trace.name, tuple(j for j in trace.jobs if j.duration < DAY), trace.provenance)
    fast = simulate(trace, cl, build_policy(policy, cl, data=candidate_placement(cl, masks), **opts))
    loop_policy = build_policy(policy, cl, data=candidate_placement(cl, masks), **opts)
    loop_policy._fast_pass = loop_policy._loop_pass
    loop = simulate(trace, cl, loop_policy)
    assert fast.log.to_csv() == loop.log.to_csv()
    assert loop.policy_stats["cache_hits"] > 0 and fast.policy_stats["rms_calls"] < loop.policy_stats["rms_calls"]
    assert fast.stats["preemptions"] > 20
    assert replay_check(trace, cl, fast.log) == []


def test_record_queue_matches_the_base_queue():
    rng = np.random.default_rng(5)
    a, b = GmsQueue(), RecordGmsQueue()

    def rows(k):
        out = []
        for _ in range(k):
            out.append((f"j{rng.integers(10**9)}", int(rng.integers(1, 9)), 0, int(rng.integers(0, 3)),
                        int(rng.integers(0, 3)), int(rng.integers(0, 2)), int(rng.integers(0, 4)),
                        float(rng.integers(0, 3)), float(rng.choice([0.0, 0.5, 1.0])), 3, bool(rng.random() < 0.5)))
        return out

    for step in range(300):
        r = rng.random()
        if r < 0.5 or a.size == 0:
            new = rows(int(rng.integers(1, 4 if step % 7 else 80)))
            for q in (a, b):
                q.extend(new)
                q.sort()
        elif r < 0.7:
            keep = np.flatnonzero(rng.random(a.size) < 0.8)
            a.take(keep)
            b.take(keep)
        elif r < 0.8:     # a pass placed a few
            gone = sorted(set(rng.integers(0, a.size, 3).tolist()))
            a.take(np.setdiff1d(np.arange(a.size), gone))
            b.drop(gone)
        else:     # a GMS-scan: new keys, then a permutation
            eff = rng.integers(0, 3, a.size)
            order = rng.permutation(a.size)
            for q in (a, b):
                q.eff = eff.copy()
                q.take(order)
        for f in (*GmsQueue.FIELDS, "seq"):
            assert np.array_equal(getattr(a, f), getattr(b, f)), (step, f)



def test_cli_trace_carries_candidate_regions(tmp_path, capsys):
    """`placement generate trace --kind mast` writes each workload's candidate regions
    (``table_regions``), and `placement simulate` of the file gives MAST the data placement the
    bench builds from the generator's masks: the same log, the default recorded as
    ``candidate-regions``. Bad region names and a ``data=candidate-regions`` without them are
    one-line errors that write nothing."""
    from placement.sim.instance import load_instance, make_perf
    from placement.sim.log import read_log

    cl = cluster_arg("4x1x2x8x8")
    path = tmp_path / "w.json"
    assert main(["generate", "trace", "--kind", "mast", "--cluster", "4x1x2x8x8", "--days", "0.05", "--seed", "3",
                 "--tenants", "6", "-o", str(path)]) == 0
    doc = json.loads(path.read_text())
    trace, masks = meta_week((128,) * 4, days=0.05, tenants=6, seed=3)
    assert {t: sum(1 << int(r[1:]) for r in regs) for t, regs in doc["table_regions"].items()} == masks
    inst = load_instance(doc)
    assert inst.trace.jobs == trace.jobs
    out = tmp_path / "run"
    assert main(["simulate", str(path), "--policy", "mast", "-o", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["replay_ok"] and summary["run"]["resolved_options"]["data"] == "candidate-regions"
    want = simulate(trace, cl, build_policy("mast", cl, data=candidate_placement(cl, masks)),
                    perf=make_perf(inst.perf))
    assert read_log(out / "log.csv").to_csv() == want.log.to_csv()
    assert json.loads((out / "instance.json").read_text())["table_regions"] == doc["table_regions"]
    bad = dict(doc, table_regions={**doc["table_regions"], next(iter(masks)): ["r0", "nowhere"]})
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    plain = {k: v for k, v in doc.items() if k != "table_regions"}
    (tmp_path / "plain.json").write_text(json.dumps(plain))
    capsys.readouterr()
    assert main(["simulate", str(tmp_path / "bad.json"), "--policy", "mast", "-o", str(tmp_path / "b")]) == 2
    assert main(["simulate", str(tmp_path / "plain.json"), "--policy", "mast", "--option", "data=candidate-regions",
                 "-o", str(tmp_path / "c")]) == 2
    err = [x for x in capsys.readouterr().err.strip().splitlines() if not x.startswith("note:")]
    assert len(err) == 2 and "table_regions." in err[0] and "nowhere" in err[0] and "data" in err[1]
    assert not (tmp_path / "b").exists() and not (tmp_path / "c").exists()


def test_allocation_claim_recomputes_from_the_logs(tmp_path, monkeypatch):
    """The allocation claim on a tiny cluster: runs start full (never Fig. 5's 98%), the rate is
    measured from the warm-up's end, each judged loss is 1 - the rate recomputed from the run's
    log (both definitions), its precondition is the offered load of the measured arrivals, and
    the verdict is the contract's."""
    import math

    from placement.app.reproduce import mast_week
    from placement.app.reproduce.claims import verdict
    from placement.app.reproduce.context import Context
    from placement.app.reproduce.mast_spec import SPEC
    from placement.sim.instance import load_instance, load_solution
    from placement.sim.slo import Overhead, allocation_with_overhead

    monkeypatch.setattr(mast_week, "SMALL", "2x1x2x8x8")
    monkeypatch.setattr(mast_week, "DAYS", 1.0)
    monkeypatch.setattr(mast_week, "WARMUP_DAYS", 0.5)
    monkeypatch.setattr(mast_week, "LOADS", (1.2,))
    monkeypatch.setattr(mast_week, "MAP_LOADS", ())
    ctx = Context("mast", "t", tmp_path, quick=True, seeds=[0], spec=SPEC)
    mast_week.allocation_claim(ctx)
    rows = {c.reading: c for c in ctx.claims}
    assert {c.key for c in ctx.claims} == {"alloc"} and len(ctx.claims) == 2 * len(mast_week.LOADS)
    t0 = 0.5 * DAY
    for load in mast_week.LOADS:
        got = {"held": [], "rate": []}
        offered = []
        for s in (0,):
            folder = tmp_path / "logs" / f"alloc-load{load:g}-s{s}-mast"
            inst = load_instance(json.loads((folder / "instance.json").read_text()))
            log = load_solution(inst, json.loads((folder / "log.json").read_text()))
            warm = sum(j.gpus for j in inst.trace.jobs if j.id.startswith(WARMUP_PREFIX))
            assert 256 - 128 < warm <= 256                  # started full, to within a gang
            subs = [j.submit for j in inst.trace.jobs if not j.id.startswith(WARMUP_PREFIX)]
            a = allocation_with_overhead(inst.trace, log, 256, t0, max(subs), Overhead(seed=s), WARMUP_PREFIX)
            got["held"].append(1 - a["held"])
            got["rate"].append(1 - a["rate"])
            offered.append(sum(j.gpus * j.duration for j in inst.trace.jobs if not j.id.startswith(WARMUP_PREFIX)
                               and t0 <= j.submit < max(subs)) / (256 * (max(subs) - t0)))
            assert a["held"] >= a["rate"]
        for key, reading in mast_week.READINGS:
            c = rows[f"{reading}, offered load {load:g}x"]
            assert c.ours == pytest.approx(got[key])
            assert c.preconditions[0]["measured"] == pytest.approx(offered)
            want = verdict(c.ours, -math.inf, 0.02, tolerance=SPEC.tolerance, kind="bound",
                           precondition_ok=[x >= 1 for x in offered],
                           uncalibrated=["gang_mix", "durations"])    # never calibrated in this context
            assert {d["name"]: d.get("status") for d in c.depends_on if d["kind"] == "knob"} == {
                "gang_mix": "not converged", "durations": "not converged"}
            assert c.verdict == want.category
