"""The faster CASSINI hot paths give the same results as before (no wall time asserted here; the
speed is measured by ``python -m placement.app.reproduce.cassini_speed``):

- whole runs: Themis and Th+CASSINI logs and measures on two generated scenes equal digests
  computed with the code before the change (commit e36cccf);
- ``rank_candidates`` (per-link optimum cache, repair rows, excess terms and shifted demand rows reused, loopy
  score without the iteration times) against the reference implementation on every ranking of a run, cold and warm;
- the plug-in's instance building against ``build_instance``;
- ``placement_bound`` against the reference;
- the process-wide component cache of the link model: a fresh model's measures and statistics
  with the cache warm equal those with it empty.
"""

from __future__ import annotations

import hashlib

import pytest
from placement.solvers import affinity
from placement.solvers.online.cassini import ThemisCassini

from placement.app.reproduce.cassini_reference import (
    placement_bound_reference,
    rank_candidates_reference,
)
from placement.app.reproduce.cassini_sim import experiment_trace, measure
from placement.app.reproduce.cassini_sim import testbed as clos_testbed
from placement.app.reproduce.cassini_speed import capture, same, same_instance
from placement.app.run import run_simulation
from placement.cassini.instance import build_instance
from placement.sim import links as lk
from placement.sim.instance import SimInstance
from placement.sim.link_metrics import placement_bound

# (experiment, seed, hours, policy) -> (log rows, log digest, iter_mean, ceiling), computed with the
# code of commit e36cccf (before the hot paths were changed)
BEFORE = {
    ("poisson", 3, 0.25, "themis"): (196, "c95aab3ba21291dd", 135.77039360480816, 1.0889382691942862),
    ("poisson", 3, 0.25, "themis+cassini"): (234, "7eefe981ffe5c5a8", 139.27677637275283, 1.1093556523683865),
    ("model-parallel", 1, 0.25, "themis"): (273, "14549937bbed36eb", 152.72917621156014, 1.0908758829360445),
    ("model-parallel", 1, 0.25, "themis+cassini"): (362, "8e34e4ff1aa924d5", 156.945009331861, 1.120778948227762),
}


def _digest(log) -> str:
    return hashlib.sha256(repr([tuple(vars(r).values()) if hasattr(r, "__dict__") else tuple(r)
                                for r in log]).encode()).hexdigest()[:16]


@pytest.mark.parametrize("exp,seed,hours", [("poisson", 3, 0.25), ("model-parallel", 1, 0.25)])
def test_runs_equal_the_code_before(exp, seed, hours):
    cluster = clos_testbed()
    trace = experiment_trace(exp, seed, hours)
    inst = SimInstance(trace, cluster, "ideal")
    for pol, agent in (("themis", False), ("themis+cassini", True)):
        res, _rows, _summ, broken = run_simulation(inst, pol, seed, {"elastic": True}, agent=agent)
        m = measure(exp, trace, res.log, res.link_model)
        assert not broken
        assert (len(res.log), _digest(res.log), m["iter_mean"], m["ceiling"]) == BEFORE[(exp, seed, hours, pol)]


@pytest.fixture(scope="module")
def run():
    return capture(hours=0.25, seed=3)


def test_rank_candidates_equal_the_reference(run):
    _trace, _cluster, _log, _model, got = run
    insts = [g[3] for g in got]
    ref = [rank_candidates_reference(i) for i in insts]
    assert any(not r["loop_free"] and r["repair_moves"] for rows in ref for r in rows), "no loopy candidate repaired"
    affinity._OPTIMA.clear()
    affinity._ROWS.clear()
    affinity._SHIFTED.clear()
    affinity._EXCESS.clear()
    affinity._SCORES.clear()
    cold = [affinity.rank_candidates(i) for i in insts]
    warm = [affinity.rank_candidates(i) for i in insts]
    assert same(ref, cold) and same(ref, warm)
    # the cached optima are copies: editing a returned row leaves the cache alone
    for rows in cold:
        for r in rows:
            for o in (r.get("link_optima") or {}).values():
                o.shifts.clear()
    assert same(ref, [affinity.rank_candidates(i) for i in insts])


def test_instances_equal_build_instance(run):
    got = run[4]
    plug = ThemisCassini(precision=got[0][3].precision_deg)
    for topo, profiles, cs, _ in got:
        ref = build_instance(topo, profiles, cs, precision_deg=got[0][3].precision_deg)
        assert same_instance(ref, plug._instance(topo, profiles, cs))


def test_placement_bound_equals_the_reference(run):
    trace, _cluster, log, model, _ = run
    assert same(placement_bound_reference(trace, log, model), placement_bound(trace, log, model))
    only = {j.id for j in trace.jobs[::2]}
    assert same(placement_bound_reference(trace, log, model, 100.0, 600.0, only=only),
                placement_bound(trace, log, model, 100.0, 600.0, only=only))


def test_shared_component_cache_changes_nothing(run):
    trace, cluster, log, _model, _ = run
    saved = dict(lk._SHARED)

    def fresh():
        m = lk.LinkSharing(cluster, agent=True)
        m.seen = {}
        return measure("poisson", trace, log, m), dict(m.stats), dict(m.seen)

    try:
        lk._SHARED.clear()
        cold = fresh()
        assert lk._SHARED
        warm = fresh()
    finally:
        lk._SHARED.clear()
        lk._SHARED.update(saved)
    assert same(cold, warm)
    assert cold[1]["fluid_runs"] > 0


def test_regime_map_runs_a_repeated_pair_once(monkeypatch):
    """A knob at the main runs' value repeats the main pair: simulated once, the same rows under
    every knob's run names as simulating it again gives (run_pair stood in by a seeded fake)."""
    from placement.app.reproduce import cassini_sim

    calls = []

    def fake_run_pair(ctx, exp, cluster, trace, seed, tag, keep_log=False, spread=1.0, **kw):
        calls.append(tag)
        h = int(hashlib.sha256(repr((cluster.name, sorted(cluster.network.items()), len(trace), trace.jobs[0].submit,
                                     spread, seed)).encode()).hexdigest()[:8], 16)
        out = {}
        for pol in ("themis", "themis+cassini"):
            m = {"iter_mean": 100.0 + h % 97 + (pol == "themis"), "over_ideal": 1.0 + h % 13 / 10,
                 "jobs_at_once": 4.0, "ceiling": 1.1}
            ctx.row(run=f"{tag}-{pol}-s{seed}", seed=seed, policy=pol, cluster=cluster.name, **m)
            out[pol] = m
        return out, {}

    class Ctx:
        seeds = (0,)

        def __init__(self):
            self.rows, self.regimes = [], []

        def row(self, **v):
            self.rows.append(v)

        def regime(self, **v):
            self.regimes.append(v)

    monkeypatch.setattr(cassini_sim, "run_pair", fake_run_pair)
    knobs = dict(cassini_sim.KNOBS)
    memo = Ctx()
    res = cassini_sim.regime_map(memo, 0.05, spread=1.0)
    n_runs = len(calls)
    calls.clear()
    again = Ctx()
    # the same map without the memo: every (knob, value) pair simulated on its own
    for knob, (_, values) in knobs.items():
        for value in values:
            monkeypatch.setattr(cassini_sim, "KNOBS", {knob: ("", (value,))})
            assert cassini_sim.regime_map(again, 0.05, spread=1.0)[(knob, value, 0)] == res[(knob, value, 0)]
    # jobs at once 3.7, goodput loss 0.12, load 1 and phase spread 1 are the main runs' pair
    assert (n_runs, len(calls)) == (sum(len(v) for _, v in knobs.values()) - 3, sum(len(v) for _, v in knobs.values()))
    assert memo.rows == again.rows and memo.regimes == again.regimes


def test_snapshot_memo_returns_the_computed_result():
    from placement.app.reproduce import cassini_snapshots as cs

    models = cs.SNAPSHOTS[0][0]
    cs._SNAPSHOTS.clear()
    first = cs.snapshot(models, 0, adjust_s=5.0)
    first["score"] = -1.0   # a copy: editing it leaves the memo alone
    again = cs.snapshot(models, 0, adjust_s=5.0)
    names = [f"{cs.VARIANTS[m][0]}-{i}" for i, m in enumerate(models)]
    from placement.cassini.catalogue import COMMON_PERIOD

    fresh = cs._snapshot_of([cs._profile(m, nm, "paper", COMMON_PERIOD) for m, nm in zip(models, names, strict=True)],
                            0, 1.0, 5.0, cs.NOISE_JUDGED, cs.NOISE_LEVELS)
    assert same(again, fresh) and len(cs._SNAPSHOTS) == 1
