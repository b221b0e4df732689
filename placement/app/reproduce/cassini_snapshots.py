"""Table 2 of CASSINI (§5.5, partial compatibility): five snapshots of jobs sharing one link.

For each snapshot the jobs share one 50 Gbps link (a two-rack tree, one server of each job in
each rack, the rack uplinks oversubscribed so that they carry 50 Gbps: our construction). The
compatibility score and time shifts come from the per-link model and Algorithm 1
(:func:`placement.solvers.affinity.rank_candidates`, 5 degree precision); each job's iteration time is
measured in the fluid model (:func:`placement.sim.network.iteration_times`) with those shifts
(Th+CASSINI) and, for Themis, network-agnostic phases: the snapshot's jobs start together, as
the paper's snapshots do (every shift 0). Profiles: the paper's configuration uses Table 2's
batch-size variants (:data:`placement.cassini.catalogue.VARIANTS`), the catalogue reading one
profile per model. Fig. 17 (§5.7) counts time-shift adjustments on
snapshots 1-3: :func:`adjustments` runs §4.2 step 3's agent (:mod:`placement.cassini.fluid`)
on every job from the Th+CASSINI shifts for a minute, with seeded timing noise of
:data:`NOISE_LEVELS` (the paper's drift source, "our servers are not running perfectly in
sync"; its size is not stated, so the count is reported at each level and judged at
:data:`NOISE_JUDGED`, drawn).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from placement.cassini.catalogue import CATALOGUE, VARIANTS, profile_of, variant_profile
from placement.cassini.instance import Candidate, build_instance
from placement.cassini.topology import tree_topology
from placement.sim.network import iteration_times
from placement.solvers.affinity import rank_candidates

from .context import Context, fmt_spread

# (jobs as "model (batch size)", the paper's Th+CASSINI ms, Themis ms, score) -- Table 2
SNAPSHOTS = (
    (("WideResNet101 (800)", "VGG16 (1400)"), (138, 148), (205, 199), 1.0),
    (("VGG19 (1400)", "VGG16 (1700)", "ResNet50 (1600)"), (168, 163, 59), (220, 220, 55), 1.0),
    (("VGG19 (1024)", "VGG16 (1200)"), (166, 168), (176, 177), 0.9),
    (("RoBERTa (12)", "RoBERTa (12)"), (164, 180), (210, 208), 0.8),
    (("BERT (8)", "VGG19 (1400)", "WideResNet101 (800)"), (209, 294, 265), (213, 292, 266), 0.6),
)


def _profile(variant: str, name: str, reading: str):
    """A snapshot job's profile: Table 2's batch-size variant (``"paper"``) or its model's
    catalogue profile (``"catalogue"``)."""
    if reading == "paper":
        return variant_profile(variant, name)
    return profile_of(VARIANTS[variant][0], name)


#: relative standard deviation of each compute phase (timing noise, :mod:`placement.cassini.fluid`)
NOISE_LEVELS = (0.0, 0.001, 0.005, 0.01, 0.02)
#: the level the Fig. 17 claim is judged at (drawn: the paper does not state its jitter)
NOISE_JUDGED = 0.01


def snapshot(models: tuple[str, ...], seed: int, reading: str = "paper", goodput: float = 1.0,
             adjust_s: float = 60.0, noise: float = NOISE_JUDGED) -> dict:
    """Score, shifts and mean iteration times (ms) of one snapshot, Th+CASSINI and Themis (all
    jobs started together: shift 0); ``models`` are Table 2's variants, ``reading`` "paper"
    (the variants' profiles) or "catalogue" (one profile per model); ``goodput`` is the
    transport's factor on the shared link (:mod:`placement.cassini.fluid`). ``seed`` seeds
    Algorithm 1's search and the timing noise of Fig. 17's count (:func:`adjustments`, ``noise``)."""
    names = [f"{VARIANTS[m][0]}-{i}" for i, m in enumerate(models)]
    return snapshot_of([_profile(m, nm, reading) for m, nm in zip(models, names, strict=True)], seed, goodput,
                       adjust_s, noise)


def snapshot_of(profs: list, seed: int, goodput: float = 1.0, adjust_s: float = 60.0,
                noise: float = NOISE_JUDGED, levels=NOISE_LEVELS) -> dict:
    """:func:`snapshot` on the given profiles (distinct names), one link of 50 Gbps shared by all;
    ``levels``: the noise levels of Fig. 17's count (``()``: only ``noise``)."""
    n = len(profs)
    topo = replace(tree_topology(pods=1, tors_per_pod=2, servers_per_tor=n, server_capacity=50.0,
                                 oversubscription=float(n)), shared_goodput=goodput)
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
    """Snapshot 1 (Table 2: 1.41x) with one knob changed: period mismatch (VGG16 (1400) at
    ``145 (1 + m)`` ms) and Up bandwidth (both jobs); gain = Themis (together) over Th+CASSINI
    per seed, recorded with ``ctx.regime``. Returns ``{(knob, value): [gain per seed]}``."""
    from placement.cassini.profiles import synthetic_profile

    out: dict = {}
    base = [(v, VARIANTS[v]) for v in SNAPSHOTS[0][0]]
    for knob, values in SNAPSHOT_KNOBS.items():
        for value in values:
            profs = []
            for i, (_v, (model, it, over)) in enumerate(base):
                kind, _, kw = CATALOGUE[model]
                kw = {**kw, **over}
                if knob == "Up bandwidth":
                    kw["bandwidth"] = value
                elif i == 1:
                    it = int(round(it * (1 + value)))
                profs.append(synthetic_profile(kind, f"{model}-{i}", it, **kw))
            gains = []
            for seed in ctx.seeds:
                r = snapshot_of(profs, seed, goodput, adjust_s=10.0, levels=())
                gains.append(float(np.mean(r["themis"]) / np.mean(r["cassini"])))
                ctx.regime(claim="Table 2 snapshot 1: Themis / Th+CASSINI (1.41x)", knob=knob, value=value,
                           seed=int(seed), ours=gains[-1], paper=1.41, holds=gains[-1] >= 1.2)
            out[(knob, value)] = gains
    return out


def run_snapshots(ctx: Context, goodput: float = 1.0, adjust_note: str = "") -> None:
    """Table 2's rows, ours beside the paper's (gain = Themis / Th+CASSINI, mean over the jobs),
    in two readings: the paper's configuration (Table 2's batch-size variants) and the
    catalogue's one profile per model;
    and Fig. 17's adjustments per minute on snapshots 1-3 in both readings (``adjust_note``: the
    Poisson trace's counts, added to those claims)."""
    lines = ["| snapshot | jobs | paper: score, Themis / Th+CASSINI | reading | our score | ours: Themis / "
             "Th+CASSINI (over seeds) | our shifts (ms, first seed) | adjustments / job-min (Fig. 17) |",
             "|---|---|---|---|---|---|---|---|"]
    by: dict[tuple[str, float], list[list[float]]] = {}   # (reading, paper score) -> per snapshot, per seed
    adj_runs: dict[tuple[str, int], list[dict]] = {}       # (reading, snapshot) -> per seed
    for k, (models, p_cas, p_th, p_score) in enumerate(SNAPSHOTS, start=1):
        paper_gain = float(np.mean(p_th) / np.mean(p_cas))
        for reading in READINGS:
            runs = [snapshot(models, seed, reading=reading, goodput=goodput) for seed in ctx.seeds]
            adj_runs[(reading, k)] = runs
            gains = [float(np.mean(r["themis"]) / np.mean(r["cassini"])) for r in runs]
            by.setdefault((reading, p_score), []).append(gains)
            ctx.row(run=f"snapshot-{k}-{reading}", policy="table2", jobs=len(models), score=runs[0]["score"],
                    gain_median=float(np.median(gains)), paper_gain=paper_gain,
                    adjust_per_job_min=float(np.median([np.mean(r["adjust_per_min"]) for r in runs])))
            lines.append(f"| {k} | {', '.join(models)} | {p_score}, {paper_gain:.2f}x | {reading} | "
                         f"{runs[0]['score']:.2f} | {fmt_spread(gains, 'x')} | "
                         f"{', '.join(f'{x:.0f}' for x in runs[0]['shifts'])} | "
                         f"{fmt_spread([float(np.mean(r['adjust_per_min'])) for r in runs])} |")
    gap = [float(np.mean(r["cassini"]) / np.mean(r["bound"])) for r in adj_runs[("paper", 1)]]
    ctx.claim(claim="The shifts hold in the link model on snapshot 1 at the paper's configuration: Th+CASSINI's mean "
              "iteration over the per-iteration bound on its placement", source="Table 2, §4.1 (our check of the "
              "model, not a paper number)", paper="1x (score 1.0: the shifts keep the set at its bound)", ours=gap,
              unit="x", holds=float(np.median(gap)) <= 1.05, rule="holds when ours' median is at most 1.05x",
              difference=f"score {adj_runs[('paper', 1)][0]['score']:.2f}; the bound: each job's ideal iteration "
                         f"times max(1, the link's offered mean load over 50 Gbps), as on the Poisson trace; "
                         f"fluid model with goodput factor {goodput:g} where demand exceeds capacity")
    for reading in READINGS:
        adj = [float(np.mean([np.mean(r["adjust_per_min"]) for r in adj_runs[(reading, k)]]))
               for k in (1, 2, 3)]
        per_seed = [float(np.mean([np.mean(adj_runs[(reading, k)][i]["adjust_per_min"]) for k in (1, 2, 3)]))
                    for i in range(len(ctx.seeds))]
        scores = [adj_runs[(reading, k)][0]["score"] for k in (1, 2, 3)]
        lv_seed = {lv: [float(np.mean([np.mean(adj_runs[(reading, k)][i]["adjust_by_noise"][lv]) for k in (1, 2, 3)]))
                        for i in range(len(ctx.seeds))] for lv in NOISE_LEVELS}
        by_lv = {lv: float(np.median(v)) for lv, v in lv_seed.items()}
        for lv, vs in lv_seed.items():
            for seed, v in zip(ctx.seeds, vs, strict=True):
                ctx.regime(claim="Time-shift adjustments per job-minute, snapshots 1-3 (Fig. 17: < 2)",
                           knob=f"timing noise ({reading} reading)", value=lv, seed=int(seed), ours=v, paper=2.0,
                           holds=v < 2)
        ctx.claim(claim=f"Time-shift adjustments are rare: fewer than two per minute (snapshots 1-3, {reading} reading)",
                  source="Fig. 17, §5.7", paper="< 2 / min (scores 1.0, 1.0, 0.9)", ours=per_seed, unit=" /min",
                  holds=float(np.median(per_seed)) < 2,
                  rule="holds when ours' median (per job, mean over snapshots 1-3) is below 2 per minute",
                  difference=f"per snapshot {', '.join(f'{a:.1f}' for a in adj)} /min at our scores "
                             f"{', '.join(f'{x:.2f}' for x in scores)}: §4.2 step 3's agent (a boundary > 5% of "
                             f"the ideal iteration off its planned rhythm waits for the next planned start) over a "
                             f"minute of the fluid model from Algorithm 1's shifts, with timing noise of sd "
                             f"{NOISE_JUDGED:.1%} of each compute phase (drawn: the paper does not state its "
                             f"jitter); median over seeds at sd "
                             + ", ".join(f"{lv:.1%}: {v:.2f}" for lv, v in by_lv.items()) + " /min"
                             + (f"; {adjust_note}" if adjust_note else ""))
        high = np.mean(by[(reading, 1.0)], axis=0)      # per seed: mean gain of the score-1.0 snapshots
        low = np.asarray(by[(reading, 0.6)][0])         # per seed: the score-0.6 snapshot's gain
        ratio = [float(h / lo) for h, lo in zip(high, low, strict=True)]
        ctx.claim(claim=f"Fully compatible snapshots (score 1.0) gain more than the partially compatible one "
                  f"(score 0.6): their mean gain over its gain ({reading} reading)", source="Table 2, §5.5",
                  paper="1.34x (1.32-1.41x at 1.0 over 1.00x at 0.6)", ours=ratio, unit="x",
                  holds=float(np.median(ratio)) > 1.02,
                  rule="holds when ours' median is above 1.02x",
                  difference=f"profiles from the paper's figures and tables (catalogue docstring); fluid model "
                             f"with goodput factor {goodput:g} where demand exceeds capacity; Themis starts the "
                             f"snapshot's jobs together")
    ctx.section("Table 2: snapshots of jobs sharing one link", "\n".join(lines) + "\n\n"
                "Gain = mean iteration time of the snapshot's jobs under Themis (started together) over "
                "Th+CASSINI (Algorithm 1 shifts), in the fluid model on one 50 Gbps link (goodput factor "
                f"{goodput:g} while the flows' demand exceeds the capacity). Readings: the paper's "
                "configuration (Table 2's batch-size variants, catalogue docstring) and the catalogue's "
                "one profile per model.")
