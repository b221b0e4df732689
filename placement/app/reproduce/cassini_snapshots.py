"""Table 2 of CASSINI (§5.5, partial compatibility): five snapshots of jobs sharing one link.

For each snapshot the jobs share one 50 Gbps link (a two-rack tree, one server of each job in
each rack, the rack uplinks oversubscribed so that they carry 50 Gbps: our construction). The
compatibility score and time shifts come from the per-link model and Algorithm 1
(:func:`placement.solvers.affinity.rank_candidates`, 5 degree precision); each job's iteration time is
measured in the fluid model (:func:`placement.sim.network.iteration_times`) with those shifts
(Th+CASSINI) and, for Themis, network-agnostic phases: the snapshot's jobs start together, as
the paper's snapshots do (every shift 0). Profiles: the paper's configuration uses Table 2's
batch-size variants (:data:`placement.cassini.catalogue.VARIANTS`), the catalogue reading one
profile per model; each snapshot runs at one common period fitted so that its Themis meets
Table 2's Themis column (:func:`fit_period`; the Th+CASSINI column and the scores, CASSINI's
results, feed nothing). Fig. 17 (§5.7) counts time-shift adjustments on
snapshots 1-3: :func:`adjustments` runs §4.2 step 3's agent (:mod:`placement.cassini.fluid`)
on every job from the Th+CASSINI shifts for a minute, with seeded timing noise of
:data:`NOISE_LEVELS` (the paper's drift source, "our servers are not running perfectly in
sync"; its size is not stated, so the count is mapped over each level on the regime map and
judged at :data:`NOISE_JUDGED`, ours, not fitted).
"""

from __future__ import annotations

import copy
from dataclasses import replace

import numpy as np

from placement.cassini.catalogue import CATALOGUE, VARIANTS, period_of, variant_profile
from placement.cassini.instance import Candidate, build_instance
from placement.cassini.topology import tree_topology
from placement.sim.network import iteration_times
from placement.solvers.affinity import rank_candidates

from .cassini_spec import TABLE2
from .context import Context, fmt_spread

#: Table 2 (:data:`.cassini_spec.TABLE2`): jobs, the paper's Th+CASSINI ms, Themis ms, score
SNAPSHOTS = TABLE2
#: the period (ms) the fit scales from (any: the fluid model's times scale with a common period)
REFERENCE_PERIOD = 100


def _profile(variant: str, name: str, reading: str, common: int):
    """A snapshot job's profile at the common period ``common``: Table 2's batch-size variant
    (``"paper"``) or its model's catalogue shape (``"catalogue"``)."""
    return variant_profile(variant, name, common, overrides=reading == "paper")


def _link(n: int, goodput: float):
    """One 50 Gbps link shared by ``n`` jobs: a two-rack tree, one server of each job in each rack."""
    return replace(tree_topology(pods=1, tors_per_pod=2, servers_per_tor=n, server_capacity=50.0,
                                 oversubscription=float(n)), shared_goodput=goodput)


def themis_times(models: tuple[str, ...], reading: str, goodput: float, common: int) -> list[float]:
    """Each job's iteration (ms) in the fluid model when the snapshot's jobs start together
    (Themis, every shift 0) at the common period ``common``."""
    n = len(models)
    topo = _link(n, goodput)
    profs = [_profile(m, f"{VARIANTS[m][0]}-{i}", reading, common) for i, m in enumerate(models)]
    out = iteration_times(topo, {p.name: (p, (f"s{i}", f"s{n + i}"), 0.0) for i, p in enumerate(profs)})
    return [out[p.name] for p in profs]


def fit_period(k: int, reading: str = "paper", goodput: float = 1.0) -> tuple[int, float]:
    """Snapshot ``k``'s (1-based) common period (ms), fitted so that the fluid model's Themis
    (jobs started together) meets Table 2's Themis column: the mean over its jobs at
    :data:`REFERENCE_PERIOD` scaled to the column's mean (the fluid model's times scale with a
    common period), rounded to 5 ms (20 ms with ResNet50 at a quarter of it). Returns the period
    and the model's Themis mean there (the calibration's ``ours``)."""
    models, _, paper, _ = SNAPSHOTS[k - 1]
    at_ref = float(np.mean(themis_times(models, reading, goodput, REFERENCE_PERIOD)))
    step = 20 if any(VARIANTS[m][0] == "ResNet50" for m in models) else 5
    period = int(step * round(REFERENCE_PERIOD * float(np.mean(paper)) / at_ref / step))
    return period, float(np.mean(themis_times(models, reading, goodput, period)))


def fitted_common_period(goodput: float | None = None) -> int:
    """The catalogue's common period: the median of the five snapshots' fitted periods (paper
    reading, the transport's goodput factor by default), rounded to 20 ms
    (:data:`placement.cassini.catalogue.COMMON_PERIOD`)."""
    from placement.cassini.fluid import SECTION_2_2_GOODPUT

    g = SECTION_2_2_GOODPUT if goodput is None else goodput
    return int(20 * round(float(np.median([fit_period(k, "paper", g)[0] for k in range(1, 6)])) / 20))


#: relative standard deviation of each compute phase (timing noise, :mod:`placement.cassini.fluid`)
NOISE_LEVELS = (0.0, 0.001, 0.005, 0.01, 0.02)
#: the level the Fig. 17 claim is judged at (drawn: the paper does not state its jitter)
NOISE_JUDGED = 0.01


def snapshot(models: tuple[str, ...], seed: int, reading: str = "paper", goodput: float = 1.0,
             adjust_s: float = 60.0, noise: float = NOISE_JUDGED, common: int | None = None) -> dict:
    """Score, shifts and mean iteration times (ms) of one snapshot, Th+CASSINI and Themis (all
    jobs started together: shift 0); ``models`` are Table 2's variants, ``reading`` "paper"
    (the variants' profiles) or "catalogue" (one profile per model), at the common period
    ``common`` (default the catalogue's); ``goodput`` is the transport's factor on the shared
    link (:mod:`placement.cassini.fluid`). ``seed`` seeds Algorithm 1's search and the timing
    noise of Fig. 17's count (:func:`adjustments`, ``noise``)."""
    from placement.cassini.catalogue import COMMON_PERIOD

    names = [f"{VARIANTS[m][0]}-{i}" for i, m in enumerate(models)]
    c = COMMON_PERIOD if common is None else common
    return snapshot_of([_profile(m, nm, reading, c) for m, nm in zip(models, names, strict=True)], seed, goodput,
                       adjust_s, noise)


#: :func:`snapshot_of`'s results by content (the profiles and every argument): it is a seeded, pure
#: function, and ``--workers`` runs the paper's code once per pass, so later passes take it from here
_SNAPSHOTS: dict[tuple, dict] = {}


def snapshot_of(profs: list, seed: int, goodput: float = 1.0, adjust_s: float = 60.0,
                noise: float = NOISE_JUDGED, levels=NOISE_LEVELS) -> dict:
    """:func:`snapshot` on the given profiles (distinct names), one link of 50 Gbps shared by all;
    ``levels``: the noise levels of Fig. 17's count (``()``: only ``noise``). Computed once per
    content in a process (:data:`_SNAPSHOTS`; a copy is returned)."""
    key = (tuple((p.name, p.iteration_time, p.phases, p.kind) for p in profs), seed, float(goodput),
           float(adjust_s), float(noise), tuple(levels))
    if key not in _SNAPSHOTS:
        if len(_SNAPSHOTS) >= 10_000:
            _SNAPSHOTS.clear()
        _SNAPSHOTS[key] = _snapshot_of(profs, seed, goodput, adjust_s, noise, levels)
    return copy.deepcopy(_SNAPSHOTS[key])


def _snapshot_of(profs: list, seed: int, goodput: float, adjust_s: float, noise: float, levels) -> dict:
    n = len(profs)
    topo = _link(n, goodput)
    names = [p.name for p in profs]
    servers = {nm: (f"s{i}", f"s{n + i}") for i, nm in enumerate(names)}
    inst = build_instance(topo, profs, [Candidate("c0", tuple((nm, servers[nm]) for nm in names))], precision_deg=5.0)
    top = rank_candidates(inst, seed=seed)[0]
    shifts = {nm: float((top["shifts"] or {}).get(nm, 0.0)) for nm in names}
    cas = iteration_times(topo, {nm: (p, servers[nm], shifts[nm]) for nm, p in zip(names, profs, strict=True)})
    spec = {nm: (p, servers[nm], shifts[nm]) for nm, p in zip(names, profs, strict=True)}
    by_noise = {lv: adjustments(topo, spec, adjust_s, noise=lv, seed=seed, plans=cas)
                for lv in sorted({*levels, noise})}
    adjust = by_noise[noise]
    themis = iteration_times(topo, {nm: (p, servers[nm], 0.0) for nm, p in zip(names, profs, strict=True)})
    load = sum(p.mean_bandwidth for p in profs) / 50.0     # offered mean load over the link's capacity
    return {"score": top["score"], "shifts": [shifts[nm] for nm in names], "cassini": [cas[nm] for nm in names],
            "bound": [float(p.iteration_time) * max(1.0, load) for p in profs],
            "themis": [themis[nm] for nm in names], "ideal": [float(p.iteration_time) for p in profs],
            "adjust_per_min": [adjust[nm] for nm in names],
            "adjust_by_noise": {lv: [a[nm] for nm in names] for lv, a in by_noise.items()}}


def adjustments(topo, jobs: dict, seconds: float = 60.0, noise: float = 0.0, seed: int = 0,
                plans: dict | None = None) -> dict[str, float]:
    """Fig. 17's count on a snapshot (§5.7): each job's time-shift adjustments per minute when
    §4.2 step 3's agent runs on every job (:class:`placement.cassini.fluid.FluidJob` ``agent``)
    for ``seconds`` of the fluid model from the Th+CASSINI shifts, with seeded timing ``noise``.
    ``jobs`` as :func:`placement.sim.network.iteration_times`; ``plans`` (ms per job, default the
    profiles' iterations) is each job's planned rhythm: the noise-free Th+CASSINI iteration, so a
    partially compatible set that runs in a common stretched rhythm is on plan (§5.7: "respecting
    the time-shift is only required for compatible jobs")."""
    from placement.cassini.fluid import FluidJob, simulate

    names = sorted(jobs)
    horizon = seconds * 1000.0 + max(float(jobs[n][2]) for n in names)
    fl = [FluidJob(jobs[n][0], topo.job_links(tuple(jobs[n][1])), shift=float(jobs[n][2]), iterations=10**9,
                   agent=True, plan=None if plans is None else float(plans[n])) for n in names]
    r = simulate(fl, topo.capacity, horizon=horizon, shared_goodput=topo.shared_goodput, noise=noise, seed=seed)
    return {n: a / seconds * 60.0 for n, a in zip(names, r.adjustments, strict=True)}


READINGS = ("paper", "catalogue")

# snapshot 1's knobs (Table 2, 1.41x): VGG16's period off WideResNet101's by a fraction, and
# both jobs' Up bandwidth (Gbps) on the 50 Gbps link
SNAPSHOT_KNOBS = {"period mismatch": (0.0, 0.02, 0.05, 0.1), "Up bandwidth": (25.0, 35.0, 45.0, 50.0)}


def snapshot_regimes(ctx: Context, goodput: float = 1.0) -> dict:
    """Snapshot 1 (Table 2's gain 1.41x) with one knob changed: period mismatch (VGG16 (1400) at
    ``P (1 + m)`` ms, ``P`` the snapshot's fitted period) and Up bandwidth (both jobs); gain =
    Themis (together) over Th+CASSINI per seed, recorded with ``ctx.regime``. Returns
    ``{(knob, value): [gain per seed]}``."""
    from placement.cassini.profiles import synthetic_profile

    from .cassini_spec import table2_gain

    out: dict = {}
    period, _ = fit_period(1, "paper", goodput)
    paper = table2_gain(1)
    for knob, values in SNAPSHOT_KNOBS.items():
        for value in values:
            profs = []
            for i, v in enumerate(SNAPSHOTS[0][0]):
                model, over = VARIANTS[v]
                kind, _, kw = CATALOGUE[model]
                kw = {**kw, **over}
                it = period_of(model, period)
                if knob == "Up bandwidth":
                    kw["bandwidth"] = value
                elif i == 1:
                    it = int(round(it * (1 + value)))
                profs.append(synthetic_profile(kind, f"{model}-{i}", it, **kw))
            gains = []
            for seed in ctx.seeds:
                r = snapshot_of(profs, seed, goodput, adjust_s=10.0, levels=())
                gains.append(float(np.mean(r["themis"]) / np.mean(r["cassini"])))
                ctx.regime(claim=f"Table 2 snapshot 1: Themis / Th+CASSINI ({paper:.2f}x)", knob=knob, value=value,
                           seed=int(seed), ours=gains[-1], paper=round(paper, 3),
                           holds=gains[-1] - 1 >= (paper - 1) * (1 - 0.25))
            out[(knob, value)] = gains
    return out


def run_snapshots(ctx: Context, goodput: float = 1.0, adjust_note: str = "") -> None:
    """Table 2's rows, ours beside the paper's (gain = Themis / Th+CASSINI, mean over the jobs),
    in two readings: the paper's configuration (Table 2's batch-size variants) and the
    catalogue's one profile per model, each snapshot at its period fitted on Table 2's Themis
    column (``snapshot period`` calibration rows); the claims ``fig17_adjust`` (Fig. 17's
    adjustments per minute on snapshots 1-3), judged once per reading (they differ on snapshot
    3's variants), and ``table2_diminish``, judged once (its snapshots have no variant); the
    shifts' self-check a reported measure. ``adjust_note``: the Poisson trace's counts, added to
    the Fig. 17 row."""
    from .cassini_spec import table2_gain

    lines = ["| snapshot | jobs | paper: score, Themis / Th+CASSINI | reading | fitted period (ms) | our score | "
             "ours: Themis / Th+CASSINI (over seeds) | our shifts (ms, first seed) | adjustments / job-min (Fig. 17) |",
             "|---|---|---|---|---|---|---|---|---|"]
    gains_by: dict[tuple[str, int], list[float]] = {}      # (reading, snapshot) -> gain per seed
    adj_runs: dict[tuple[str, int], list[dict]] = {}       # (reading, snapshot) -> per seed
    for k, (models, _p_cas, _p_th, p_score) in enumerate(SNAPSHOTS, start=1):
        for reading in READINGS:
            period, ours = fit_period(k, reading, goodput)
            ctx.calibrate(knob="snapshot period", value=period, target=f"table2.themis.s{k}", ours=ours,
                          label=f"snapshot {k}, {reading} reading")
            runs = [snapshot(models, seed, reading=reading, goodput=goodput, common=period) for seed in ctx.seeds]
            adj_runs[(reading, k)] = runs
            gains = [float(np.mean(r["themis"]) / np.mean(r["cassini"])) for r in runs]
            gains_by[(reading, k)] = gains
            ctx.row(run=f"snapshot-{k}-{reading}", policy="table2", jobs=len(models), period=period,
                    score=runs[0]["score"], gain_median=float(np.median(gains)), paper_gain=table2_gain(k),
                    adjust_per_job_min=float(np.median([np.mean(r["adjust_per_min"]) for r in runs])))
            lines.append(f"| {k} | {', '.join(models)} | {p_score}, {table2_gain(k):.2f}x | {reading} | {period} | "
                         f"{runs[0]['score']:.2f} | {fmt_spread(gains, 'x')} | "
                         f"{', '.join(f'{x:.0f}' for x in runs[0]['shifts'])} | "
                         f"{fmt_spread([float(np.mean(r['adjust_per_min'])) for r in runs])} |")
    gap = [float(np.mean(r["cassini"]) / np.mean(r["bound"])) for r in adj_runs[("paper", 1)]]
    ctx.report_measure("shifts_hold_snapshot", gap, unit="x",
                       difference=f"score {adj_runs[('paper', 1)][0]['score']:.2f}; the bound: each job's ideal "
                                  f"iteration times max(1, the link's offered mean load over 50 Gbps); fluid model "
                                  f"with goodput factor {goodput:g} where demand exceeds capacity")
    n = len(ctx.seeds)
    for reading in READINGS:
        def score(k, i, reading=reading):
            return float(adj_runs[(reading, k)][i]["score"])

        adj = [float(np.mean([np.mean(r["adjust_per_min"]) for r in adj_runs[(reading, k)]])) for k in (1, 2, 3)]
        per_seed = [float(np.mean([np.mean(adj_runs[(reading, k)][i]["adjust_per_min"]) for k in (1, 2, 3)]))
                    for i in range(n)]
        lv_seed = {lv: [float(np.mean([np.mean(adj_runs[(reading, k)][i]["adjust_by_noise"][lv]) for k in (1, 2, 3)]))
                        for i in range(n)] for lv in NOISE_LEVELS}
        by_lv = {lv: float(np.median(v)) for lv, v in lv_seed.items()}
        for lv, vs in lv_seed.items():
            for seed, v in zip(ctx.seeds, vs, strict=True):
                ctx.regime(claim="Time-shift adjustments per job-minute, snapshots 1-3 (Fig. 17: < 2)",
                           knob=f"timing jitter ({reading} reading)", value=lv, seed=int(seed), ours=v, paper=2.0,
                           holds=v < 2)
        below = [lv for lv, v in by_lv.items() if v < 2]
        ctx.judge("fig17_adjust", per_seed, reading=reading,
                  measured={"compatible": [min(score(k, i) for k in (1, 2, 3)) for i in range(n)]},
                  difference=f"per snapshot {', '.join(f'{a:.1f}' for a in adj)} /min; §4.2 step 3's agent (a "
                             f"boundary > 5% of the ideal iteration off its planned rhythm waits for the next "
                             f"planned start) over a minute of the fluid model from Algorithm 1's shifts, timing "
                             f"jitter sd {NOISE_JUDGED:.1%} of each compute phase (ours, not fitted); median over "
                             f"seeds by jitter: " + ", ".join(f"{lv:.1%}: {v:.2f}" for lv, v in by_lv.items())
                             + " /min" + (f" (below 2 up to {max(below):.1%})" if below else " (never below 2)")
                             + (f"; {adjust_note}" if adjust_note else ""))
        if reading != "paper":    # snapshots 1, 2 and 5 have no batch-size variant: the readings coincide
            continue
        high = [float(np.mean([gains_by[(reading, 1)][i], gains_by[(reading, 2)][i]])) for i in range(n)]
        low = gains_by[(reading, 5)]
        ratio = [h / lo for h, lo in zip(high, low, strict=True)]
        ctx.judge("table2_diminish", ratio,
                  measured={"score-1 snapshots": [(score(1, i) + score(2, i)) / 2 for i in range(n)],
                            "score-0.6 snapshot": [score(5, i) for i in range(n)]},
                  difference=f"score-1.0 snapshots' gains {fmt_spread(high, 'x')}, score-0.6's {fmt_spread(low, 'x')} "
                             f"(one reading: snapshots 1, 2 and 5 have no batch-size variant); "
                             f"profiles drawn (catalogue docstring); fluid model with goodput factor {goodput:g} "
                             f"where demand exceeds capacity; Themis starts the snapshot's jobs together")
    ctx.section("Table 2: snapshots of jobs sharing one link", "\n".join(lines) + "\n\n"
                "Gain = mean iteration time of the snapshot's jobs under Themis (started together) over "
                "Th+CASSINI (Algorithm 1 shifts), in the fluid model on one 50 Gbps link (goodput factor "
                f"{goodput:g} while the flows' demand exceeds the capacity), each snapshot at its common period "
                "fitted on Table 2's Themis column. Readings: the paper's configuration (Table 2's batch-size "
                "variants, catalogue docstring) and the catalogue's one profile per model.")
