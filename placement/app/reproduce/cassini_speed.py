"""CASSINI's hot paths, before and after they were made faster, timed side by side in one run on
the same input (``python -m placement.app.reproduce.cassini_speed [--hours H] [--seed S] [--reps R]``).

The input is one Th+CASSINI run of the reproduction's Poisson trace at the quick length (0.75 h,
seed 0, the Clos testbed with the transport's goodput, §4.2's agent on compatible sets): every
ranking's inputs are captured while it runs, then timed here

- ``rank_candidates``: the reference (:func:`.cassini_reference.rank_candidates_reference`) vs
  :func:`placement.solvers.affinity.rank_candidates` over every captured instance, in run order, its
  caches (per-link optima, the repair's lattice rows and excess terms, shifted demand rows, link scores) emptied
  first, as a process starts;
- instance building: ``build_instance`` on every ranking vs the plug-in's
  (:meth:`placement.solvers.online.cassini.CassiniPlugin._instance`, a fresh plug-in);
- ``placement_bound``: the reference vs :func:`placement.sim.link_metrics.placement_bound` on the run's log;
- a fresh link model's measures on the run's log (what ``--workers`` runs do in the main
  process): the components solved afresh vs taken from the process's shared cache
  (:data:`placement.sim.links._SHARED`, filled by the run).

Every pair is checked to give the same result (rows, instances' loaded links, bounds, measures)
before its times are printed: the CPU time of this process (best of ``--reps``), which other work
on a shared machine disturbs less than wall time; read the ratios.
"""

from __future__ import annotations

import argparse
import time


def _best(fn, reps: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(reps):
        t0 = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t0)
    return best, out


def same(a, b) -> bool:
    """Equal, NaN equal to NaN (dicts, lists and tuples compared item by item)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    return bool(a == b)


def same_instance(a, b) -> bool:
    """The same CASSINI instance: jobs (by content), candidates, grid, capacities, loaded links."""
    def jobs(i):
        return [(j.name, j.iteration_time, j.phases, j.kind) for j in i.jobs]

    return (jobs(a) == jobs(b) and a.candidates == b.candidates and a._loads == b._loads
            and (a.precision_deg, a.max_angles, a.max_perimeter, a.name) == (b.precision_deg, b.max_angles,
                                                                             b.max_perimeter, b.name)
            and a.topology.capacity == b.topology.capacity)


def capture(hours: float = 0.75, seed: int = 0):
    """Run Th+CASSINI on the Poisson trace; returns ``(trace, cluster, log, link model, rankings)``
    with ``rankings`` the ``(topology, profiles, candidates, instance)`` of every ranking."""
    from placement.app.reproduce.cassini_sim import (
        CLOS,
        SECTION_2_2_GOODPUT,
        experiment_trace,
        testbed,
    )
    from placement.app.run import run_simulation
    from placement.sim.instance import SimInstance
    from placement.solvers.online import cassini as online

    cluster = testbed(CLOS[0], SECTION_2_2_GOODPUT)
    trace = experiment_trace("poisson", seed, hours)
    got: list = []
    orig = online.CassiniPlugin._instance

    def spy(self, topology, profiles, cs):
        inst = orig(self, topology, profiles, cs)
        got.append((topology, list(profiles), list(cs), inst))
        return inst

    online.CassiniPlugin._instance = spy
    try:
        res, _rows, _summ, broken = run_simulation(SimInstance(trace, cluster, "ideal"), "themis+cassini", seed,
                                                   {"elastic": True}, agent=True)
    finally:
        online.CassiniPlugin._instance = orig
    if broken:
        raise RuntimeError(f"the captured run's log is broken: {broken[:3]}")
    return trace, cluster, res.log, res.link_model, got


def main(argv=None) -> None:
    from placement.app.reproduce.cassini_sim import measure
    from placement.cassini.instance import build_instance
    from placement.sim import links as lk
    from placement.sim.link_metrics import placement_bound
    from placement.solvers import affinity
    from placement.solvers.online.cassini import ThemisCassini

    from .cassini_reference import placement_bound_reference, rank_candidates_reference

    ap = argparse.ArgumentParser()
    ap.add_argument("--hours", type=float, default=0.75)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args(argv)
    trace, cluster, log, model, got = capture(a.hours, a.seed)
    insts = [g[3] for g in got]
    print(f"captured {len(insts)} rankings, {sum(len(i.candidates) for i in insts)} candidates; {len(log)} log rows")
    rows: list[tuple[str, float, float]] = []

    def fast_rank():   # every cache of the ranking emptied first, as a process starts
        affinity._OPTIMA.clear()
        affinity._ROWS.clear()
        affinity._ROWS_HELD[0] = 0
        affinity._SHIFTED.clear()
        affinity._SHIFTED_HELD[0] = 0
        affinity._EXCESS.clear()
        affinity._SCORES.clear()
        return [affinity.rank_candidates(i) for i in insts]

    t_old, ref = _best(lambda: [rank_candidates_reference(i) for i in insts], a.reps)
    t_new, new = _best(fast_rank, a.reps)
    assert same(ref, new), "rank_candidates: rows differ from the reference"
    rows.append(("rank_candidates (all rankings of the run)", t_old, t_new))

    precision = insts[0].precision_deg

    def build_new():
        plug = ThemisCassini(precision=precision)
        return [plug._instance(t, p, c) for t, p, c, _ in got]

    t_old, ref_i = _best(lambda: [build_instance(t, p, c, precision_deg=precision) for t, p, c, _ in got], a.reps)
    t_new, new_i = _best(build_new, a.reps)
    assert all(same_instance(x, y) for x, y in zip(ref_i, new_i, strict=True)), "instances differ"
    rows.append(("instance building (all rankings)", t_old, t_new))

    t_old, ref_b = _best(lambda: placement_bound_reference(trace, log, model), a.reps)
    t_new, new_b = _best(lambda: placement_bound(trace, log, model), a.reps)
    assert same(ref_b, new_b), "placement_bound differs"
    rows.append(("placement_bound (the run's log)", t_old, t_new))

    def fresh(shared: bool):
        saved = dict(lk._SHARED)
        if not shared:
            lk._SHARED.clear()
        try:
            m = lk.LinkSharing(cluster, agent=True)
            m.seen = {}
            return measure("poisson", trace, log, m), dict(m.stats), dict(m.seen)
        finally:
            lk._SHARED.clear()
            lk._SHARED.update(saved)

    t_old, ref_m = _best(lambda: fresh(False), 1)
    t_new, new_m = _best(lambda: fresh(True), 1)
    assert same(ref_m, new_m), "a fresh model's measures differ with the shared cache"
    rows.append(("measures on a fresh link model (the run's log)", t_old, t_new))

    print("\n| hot path | before (CPU s) | after (CPU s) | speed-up |\n|---|---|---|---|")
    for name, o, n in rows:
        print(f"| {name} | {o:.3f} | {n:.3f} | {o / n:.1f}x |")


if __name__ == "__main__":
    main()
