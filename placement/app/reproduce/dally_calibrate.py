"""Dally's unpublished workload, fitted to the paper's *baseline* JCTs (Tables 2-3), never Dally's.

What is fitted, to what
    The paper publishes no job length, GPU count or arrival rate (§5.1.1); it publishes the JCT
    statistics of its four policies on 8 racks (:data:`placement.sim.dally_workload.PAPER_JCT_S`).
    Following "Calibrate on the baselines" (``../shared/DESIGN.md``), the workload of
    :func:`placement.sim.dally_workload.fitted_trace` is fitted to the baselines' columns only:

    - batch (Table 2): Tiresias's and Gandiva's median and mean JCT, fitted jointly by the job
      lengths (log-normal median and sigma), the shares of jobs at 16-64 GPUs and at 1 GPU, and
      Gandiva's time-slicing depth (``max_share``, jobs per GPU set; the Gandiva paper publishes
      none);
    - Poisson (Table 3): the offered load, fitted to Tiresias's and Gandiva's *mean* JCT with
      the batch fit held. Their Poisson medians (1,170 h and 6,312 h) cannot be fitted: at every
      load we tried (1 to 25) both our medians stay under 30 h, because Tiresias's 2D-LAS
      serves each new arrival first and Gandiva's greedy start finishes the small ones at once;
      so the load is also a knob of the regime map, and the Poisson medians stay in
      ``calibration.csv`` as targets missed.

    What the fit reached (seed 0, 8 racks): batch, Tiresias median 362 h (paper 707), mean
    1,884 h (1,239); Gandiva median 262 h (51), mean 3,551 h (1,619); Poisson at load 10,
    Tiresias mean 1,633 h (1,203), Gandiva mean 2,318 h (4,825). Over every
    shape tried (job-length median 0.5-60 h, sigma 1-3.5, 10-90% of jobs at 16-64 GPUs, 7.5-60%
    at 1 GPU, Gandiva depth 1-32), our Tiresias's batch median was at most about 3x our
    Gandiva's; the paper's is 14x (707 h / 51 h). Deeper time slicing raised Gandiva's median
    (its depth fitted to 1: no oversubscription) and a larger share of 1-GPU jobs lowered both
    medians alike. So the two baseline medians are not reproduced together within 25%: the
    paper's Gandiva finishes half its jobs in 51 h while its Tiresias takes 707 h, which our
    Tiresias (the authors' simulator's rules, backfilling short jobs) does not do on any
    workload we tried.

    Issue 48, second pass: the shapes the first fit lacked, with Gandiva's time slicing in the
    loop (:data:`TRIED_MIXTURE`, :data:`PROBES`; :func:`probe` re-runs the latter).
    (a) A two-component job-length mixture (a share 0.5-0.75 of short jobs, median 1-12 h,
    sigma 0.3-1; the rest long, median 80-1,000 h, sigma 0.3-2; 0-60% of jobs at 16-64 GPUs,
    0-40% at 1 GPU; Gandiva's depth 4, 8 or 16): in all 27 random points our Gandiva's batch
    median was *above* our Tiresias's (ratio Tiresias / Gandiva 0.16 to 0.71). Time slicing
    shares a GPU set among ``max_share`` jobs, so a short job runs at 1 / depth and waits for
    the long ones it shares with: it raises the median (Gandiva depth 8 on the mixture 55%
    10 h (sigma 0.8) / 45% 300 h (sigma 1), 10% at 16-64 GPUs, 25% at 1, seed 0: short jobs'
    median JCT 169 h against 207 h at depth 1, but the median of all jobs 908 h against 363 h). (b) Job length growing with GPU count (median x (g/8)^1.5,
    and the reverse, x (g/8)^-1), light tails (100 h, sigma 0.5), very heavy tails (1 h, sigma
    3.5), with Tiresias as its authors run it and strict, Gandiva with random or lowest-id
    placement, no migration, depth 8 (:data:`PROBES`, seeds 0-1): the largest ratio of
    Tiresias's median to Gandiva's was 3.3 (light tails, Gandiva with lowest-id placement),
    the paper's 13.9. (c) Tiresias's queue limits x 10, 100, 1,000, 10,000 on the fitted
    workload *lower* its batch median (152, 54, 124, 204 h against 362 h at x 1): with longer
    queues 2D-LAS serves the least-served (short, small) jobs first for longer. So under the
    paper's descriptions (Tiresias: discretized 2D-LAS with preemption, §3.4 and its authors'
    simulator; Gandiva: greedy network-agnostic placement with migration, §5.1.3, plus the
    Gandiva paper's suspend-resume time slicing) the two batch medians of Table 2 are mutually
    inconsistent: Gandiva's 51 h median says at least 250 of 500 jobs finished within 51 h
    under a FIFO/greedy scheduler, while Tiresias, which serves the least-attained-service job
    first and preempts for it, finished fewer than 250 within 707 h on the same jobs. Least
    attained service finishes the short and small jobs first; greedy FIFO and round-robin
    slicing do not, so on every workload we drew the LAS median is at most about 3x the
    greedy one, never 14x. The fit keeps the first pass's point (loss 0.88 over the four batch
    targets; the best mixture point reached 0.96).

    The fit: one seed, 8 racks, loss = mean |log(ours / paper)| over the batch targets plus the
    same over the Poisson means, minimised over the points of :data:`TRIED`,
    :data:`TRIED_RANDOM` (batch) and :data:`TRIED_POISSON` (the load), which record every point
    evaluated with its outcome (explored by hand, a coarse grid then around the best; the
    finalists 2.5 h and 4 h: 0.80 + 0.75 and 0.88 + 0.52);
    frozen in :data:`placement.sim.dally_workload.FIT` and :data:`GANDIVA_MAX_SHARE`.
    :func:`search` re-runs a grid (default :data:`SEARCH`, around the fit). Every run of
    ``placement reproduce dally`` re-measures the targets on its own seeds
    (:func:`record`: ``calibration.csv`` and the report's "Calibration" section) so the reader
    sees how close the fit holds out of the fitting seed.
    Run the fit again with ``python -m placement.app.reproduce.dally_calibrate`` (minutes).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

__all__ = ["GANDIVA_MAX_SHARE", "GANDIVA_PAPER", "TARGETS", "SEARCH", "TRIED", "TRIED_RANDOM", "TRIED_MIXTURE", "PROBE_SHAPES", "PROBE_FORMS", "PROBES", "probe", "TRIED_POISSON", "record", "search", "loss"]

H = 3600.0
GANDIVA_MAX_SHARE = 1   # jobs per GPU set under time slicing (fitted; see SEARCH)
# Gandiva as the Dally paper reads it (§5.1.3: migration "whenever resources become available")
# with the Gandiva paper's time slicing (OSDI'18 §3.1), max_share fitted: the reproduction's form.
GANDIVA_PAPER: dict[str, Any] = {"migration": "eager", "time_slicing": True, "time_slice": 2 * H,
                                 "max_share": GANDIVA_MAX_SHARE, "placement": "random"}
# (policy, arrival kind, statistic): the paper's numbers are PAPER_JCT_S's; stat index 0 mean, 1 median
TARGETS = [("tiresias", "batch", "median"), ("tiresias", "batch", "mean"), ("gandiva", "batch", "median"),
           ("gandiva", "batch", "mean"), ("tiresias", "poisson", "median"), ("tiresias", "poisson", "mean"),
           ("gandiva", "poisson", "median"), ("gandiva", "poisson", "mean")]
_STAT = {"mean": (0, "mean_jct_s"), "median": (1, "median_jct_s")}
# The grid :func:`search` runs by default: around the frozen fit.
SEARCH = {"median_h": (3.0, 4.0, 6.0), "sigma": (2.5,), "share_large": (0.6, 0.7), "share_single": (0.1,),
          "max_share": (1, 8), "load": (5.0, 10.0, 25.0)}
# The points the fit was chosen from (seed 0, 8 racks, batch; hours): median_h, sigma, share at
# 16-64 GPUs, share at 1 GPU, Gandiva's time-slicing depth (1: none), then Tiresias's median and
# mean and Gandiva's median and mean JCT. The chosen point is (4, 2.5, 0.6, 0.1, 1).
TRIED = (
    (5, 2.5, 0.25, 0.1875, 16, 45, 718, 70, 426), (3, 2.5, 0.25, 0.1875, 16, 23, 413, 43, 257),
    (5, 2.5, 0.25, 0.1875, 8, 45, 718, 79, 424), (8, 2.2, 0.25, 0.1875, 16, 57, 767, 110, 448),
    (5, 2.5, 0.25, 0.1875, 1, 45, 718, 56, 500), (20, 1.5, 0.25, 0.1875, 1, 126, 475, 121, 550),
    (2, 2.5, 0.6, 0.1, 1, 214, 665, 71, 708), (2, 2.5, 0.6, 0.1, 4, 214, 665, 149, 456),
    (2, 2.5, 0.6, 0.1, 8, 214, 665, 109, 443), (2, 2.5, 0.6, 0.1, 32, 214, 665, 82, 398),
    (2, 3.0, 0.7, 0.075, 1, 316, 2152, 192, 2048), (2, 3.0, 0.7, 0.075, 2, 316, 2152, 493, 2060),
    (3, 2.8, 0.8, 0.05, 1, 815, 2930, 420, 3312), (3, 2.8, 0.8, 0.05, 2, 815, 2930, 872, 2599),
    (4, 2.6, 0.75, 0.0625, 1, 600, 1945, 375, 2596), (4, 2.6, 0.75, 0.0625, 8, 600, 1945, 307, 1398),
    (4, 2.6, 0.75, 0.0625, 32, 600, 1945, 184, 1274), (3, 2.5, 0.7, 0.075, 1, 337, 1724, 222, 1223),
    (3, 2.5, 0.7, 0.075, 32, 337, 1724, 129, 878), (1, 3.5, 0.5, 0.125, 1, 45, 2575, 37, 1461),
    (2, 3.0, 0.5, 0.125, 1, 69, 1893, 74, 979), (1, 3.0, 0.6, 0.1, 1, 78, 800, 45, 773),
    (0.5, 3.5, 0.4, 0.15, 1, 6, 932, 14, 516), (2, 2.5, 0.5, 0.4, 1, 33, 502, 26, 474),
    (4, 2.0, 0.45, 0.5, 1, 26, 323, 33, 346), (2, 2.5, 0.3, 0.6, 1, 7, 352, 12, 143),
    (1, 2.0, 0.5, 0.125, 1, 24, 148, 13, 91), (1, 2.0, 0.7, 0.075, 1, 63, 158, 40, 274),
    (1, 2.5, 0.5, 0.125, 1, 23, 300, 18, 247), (1, 2.5, 0.7, 0.075, 1, 99, 547, 66, 409),
    (4, 2.5, 0.6, 0.1, 1, 362, 1884, 133, 1284),
)
# The rows above ran Gandiva with lowest-id placement; with the reproduction's random placement
# (network-agnostic, chosen afterwards for Fig. 6c's ordering) the two finalists gave:
TRIED_RANDOM = ((2.5, 2.5, 0.6, 0.1, 1, 183, 1168, 208, 2375), (4, 2.5, 0.6, 0.1, 1, 362, 1884, 262, 3551))
# Poisson (hours): median_h, load, Tiresias median and mean, Gandiva median and mean (lowest-id
# placement for the first seven, random for the last three).
# Issue 48, second pass (module notes (a)): two-component length mixtures, seed 0, 8 racks,
# batch, random placement: share of short jobs, short median h, long median h, short sigma,
# long sigma, share at 16-64 GPUs, share at 1 GPU, Gandiva depth; Tiresias median and mean,
# Gandiva median and mean (h). The 27 points of a random search (numpy seed 1), lowest loss first;
# re-run with fitted_trace's short_share / short_median_h / short_sigma options.
TRIED_MIXTURE = (
    (0.69, 2, 272, 0.99, 1.93, 0.1, 0, 16, 86, 1172, 218, 1269),
    (0.63, 6.5, 116, 0.87, 1.46, 0.25, 0.4, 16, 80, 938, 288, 1582),
    (0.52, 1.9, 550, 0.79, 0.52, 0.1, 0, 8, 692, 2037, 1788, 2977),
    (0.72, 2.9, 355, 0.32, 1.44, 0.25, 0.1, 16, 197, 2123, 434, 3544),
    (0.52, 4.9, 689, 0.72, 0.74, 0.1, 0.4, 8, 557, 1865, 1643, 3086),
    (0.6, 3.9, 86, 0.83, 1.21, 0.6, 0.4, 4, 312, 1902, 816, 4315),
    (0.55, 7.3, 130, 0.36, 1.75, 0.4, 0.4, 16, 166, 1830, 548, 3763),
    (0.7, 2.3, 316, 0.44, 1.99, 0, 0, 4, 29, 691, 111, 830),
    (0.73, 5.5, 283, 0.35, 1.13, 0.25, 0.25, 4, 128, 1684, 783, 2961),
    (0.62, 2, 81, 0.75, 1.52, 0.6, 0.1, 16, 302, 2424, 942, 4191),
    (0.67, 3.7, 175, 0.58, 1.9, 0.4, 0.4, 4, 182, 2943, 505, 3923),
    (0.54, 2.7, 81, 0.48, 1.02, 0.4, 0, 8, 243, 881, 1450, 3347),
    (0.61, 5.2, 253, 0.71, 1.73, 0.4, 0.25, 8, 707, 3563, 1209, 6348),
    (0.55, 2.7, 144, 0.89, 0.96, 0.6, 0.4, 4, 654, 3752, 1194, 8927),
    (0.75, 6.6, 198, 0.75, 0.95, 0.1, 0.1, 16, 64, 432, 312, 742),
    (0.7, 2.1, 251, 0.39, 0.99, 0.6, 0, 8, 814, 2159, 2410, 7323),
    (0.64, 2, 120, 0.98, 1.18, 0.1, 0, 8, 80, 354, 298, 657),
    (0.52, 7.8, 121, 0.56, 0.84, 0.6, 0, 16, 727, 1696, 4687, 10334),
    (0.61, 2.5, 106, 0.44, 0.78, 0.1, 0, 4, 83, 248, 520, 837),
    (0.69, 4.6, 811, 0.33, 1.2, 0.4, 0.4, 8, 367, 5536, 942, 11105),
    (0.6, 6.1, 417, 0.6, 1.77, 0.4, 0.1, 8, 635, 7082, 2555, 11610),
    (0.63, 10.6, 115, 0.96, 0.83, 0.6, 0.1, 4, 1248, 2487, 6516, 10012),
    (0.58, 4.2, 931, 0.84, 1.64, 0.4, 0.4, 16, 593, 12515, 1490, 19364),
    (0.71, 9, 424, 0.47, 1.61, 0.6, 0, 16, 1322, 5460, 4163, 18247),
    (0.53, 3.5, 581, 0.51, 1.61, 0.4, 0.25, 16, 1689, 10215, 2384, 17113),
    (0.74, 2.7, 169, 0.89, 0.51, 0, 0.4, 16, 9, 170, 25, 106),
    (0.57, 1.7, 402, 0.86, 1.94, 0.6, 0, 4, 1781, 10158, 7979, 47579),
)
# Module notes (b): the shapes (options of fitted_trace on top of FIT) and the policy forms :func:`probe` runs.
PROBE_SHAPES: dict[str, dict[str, float]] = {
    "fit": {},
    "small-short/large-long (beta 1.5)": {"median_h": 30, "size_exponent": 1.5, "sigma": 1.0, "share_large": 0.3,
                                          "share_single": 0.6},
    "large-short/small-long (beta -1)": {"median_h": 100, "size_exponent": -1.0, "sigma": 1.0, "share_large": 0.4,
                                         "share_single": 0.25},
    "light tail (100 h, sigma 0.5)": {"median_h": 100, "sigma": 0.5},
    "very heavy tail (1 h, sigma 3.5)": {"median_h": 1, "sigma": 3.5},
}
PROBE_FORMS: dict[str, tuple[str, dict[str, Any]]] = {
    "tiresias": ("tiresias", {}), "tiresias-strict": ("tiresias", {"consolidation": "wait"}),
    "gandiva": ("gandiva", dict(GANDIVA_PAPER)), "gandiva-lowest": ("gandiva", {**GANDIVA_PAPER, "placement": "lowest"}),
    "gandiva-none": ("gandiva", {"migration": "none"}), "gandiva-ms8": ("gandiva", {**GANDIVA_PAPER, "max_share": 8}),
}
# Their outcome: shape -> seed -> policy form -> (median, mean) JCT, hours; batch, 8 racks.
PROBES = {
    'fit': {
        0: {'tiresias': (362, 1884), 'tiresias-strict': (190, 619), 'gandiva': (262, 3551), 'gandiva-lowest': (133, 1284), 'gandiva-none': (461, 4169), 'gandiva-ms8': (664, 3009)},
        1: {'tiresias': (181, 1777), 'tiresias-strict': (148, 1024), 'gandiva': (522, 4074), 'gandiva-lowest': (188, 1516), 'gandiva-none': (420, 4363), 'gandiva-ms8': (442, 2686)},
    },
    'small-short/large-long (beta 1.5)': {
        0: {'tiresias': (3, 7489), 'tiresias-strict': (4, 4236), 'gandiva': (11, 18329), 'gandiva-lowest': (11, 4658), 'gandiva-none': (11, 8931), 'gandiva-ms8': (11, 12436)},
        1: {'tiresias': (3, 5655), 'tiresias-strict': (4, 3433), 'gandiva': (12, 16363), 'gandiva-lowest': (12, 8293), 'gandiva-none': (12, 11367), 'gandiva-ms8': (11, 12109)},
    },
    'large-short/small-long (beta -1)': {
        0: {'tiresias': (906, 1484), 'tiresias-strict': (1154, 1256), 'gandiva': (1266, 2841), 'gandiva-lowest': (1106, 1437), 'gandiva-none': (1703, 2995), 'gandiva-ms8': (6068, 5514)},
        1: {'tiresias': (1057, 1766), 'tiresias-strict': (1144, 1348), 'gandiva': (1983, 3970), 'gandiva-lowest': (980, 1650), 'gandiva-none': (1541, 2924), 'gandiva-ms8': (3345, 4551)},
    },
    'light tail (100 h, sigma 0.5)': {
        0: {'tiresias': (2892, 4832), 'tiresias-strict': (1127, 2657), 'gandiva': (2943, 14418), 'gandiva-lowest': (870, 6430), 'gandiva-none': (2564, 7791), 'gandiva-ms8': (13091, 22373)},
        1: {'tiresias': (2188, 3727), 'tiresias-strict': (1223, 2772), 'gandiva': (3916, 17217), 'gandiva-lowest': (1603, 7296), 'gandiva-none': (3461, 10495), 'gandiva-ms8': (6181, 19317)},
    },
    'very heavy tail (1 h, sigma 3.5)': {
        0: {'tiresias': (85, 2081), 'tiresias-strict': (41, 1125), 'gandiva': (175, 4915), 'gandiva-lowest': (71, 1854), 'gandiva-none': (262, 6108), 'gandiva-ms8': (249, 4017)},
        1: {'tiresias': (66, 5921), 'tiresias-strict': (87, 4764), 'gandiva': (189, 6567), 'gandiva-lowest': (115, 5039), 'gandiva-none': (341, 6593), 'gandiva-ms8': (150, 6312)},
    },
}
TRIED_POISSON = ((4, 1, 8, 364, 14, 327), (4, 1.5, 8, 302, 15, 366), (4, 2, 8, 330, 16, 360), (4, 3, 9, 544, 29, 428),
                 (4, 5, 17, 691, 26, 555), (4, 10, 13, 1633, 23, 759), (4, 25, 18, 2372, 29, 929),
                 (4, 5, 17, 691, 41, 2542), (4, 10, 13, 1633, 39, 2318), (2.5, 10, 8, 892, 23, 1449))


def paper_value(policy: str, kind: str, stat: str) -> float:
    """The paper's number of a target, seconds (Tables 2-3)."""
    from placement.sim.dally_workload import PAPER_JCT_S

    return float(PAPER_JCT_S[kind][policy][_STAT[stat][0]])


def loss(pairs: list[tuple[float, float]]) -> float:
    """Mean |log(ours / paper)| over (ours, paper) pairs: a factor of 2 either way costs the same."""
    return sum(abs(math.log(o / p)) for o, p in pairs) / len(pairs)


def record(ctx, results: dict, d: int, seeds: list[int], load: float) -> None:
    """One ``ctx.calibrate`` row per target (hours: the paper's, ours as the median over seeds on
    ``d`` racks, error = ours - paper) and a section with the relative errors."""
    from placement.sim.dally_workload import FIT

    from .context import fmt_spread, spread

    batch = (f"median_h={FIT['median_h']:g}, sigma={FIT['sigma']:g}, share_large={FIT['share_large']:g}, "
             f"share_single={FIT['share_single']:g}, gandiva max_share={GANDIVA_MAX_SHARE}")
    lines = ["The workload's parameters, fitted jointly to the baselines' JCTs of Tables 2-3 on 8 racks (seed 0; "
             f"{len(TRIED) + len(TRIED_RANDOM)} batch points and {len(TRIED_POISSON)} Poisson ones, listed in "
             "`placement.app.reproduce.dally_calibrate.TRIED`), and how close they "
             f"hold on this run's seeds ({d} racks; median, min to max over seeds). Dally's and Dally-manual's "
             "columns were never fitted. Our Tiresias's batch median was at most about 3x our Gandiva's on every "
             "shape tried (the paper's: 14x; with two-component length mixtures, lengths growing or shrinking with "
             "GPU count, Gandiva's time slicing in the fitting loop and Tiresias's queue limits x 1 to x 10,000: "
             "`TRIED_MIXTURE`, `PROBES`), so the two baseline medians are not reached together: least attained "
             "service finishes short and small jobs first, greedy FIFO and round-robin slicing do not; the Poisson "
             "medians are out of reach at every load (2D-LAS serves each arrival first), so the load was fitted to "
             "the Poisson means and is a knob of the regime map.", "", "| target | paper | ours | ours / paper - 1 | within 25% |",
             "|---|---|---|---|---|"]
    for pol, kind, stat in TARGETS:
        vals = [results[("paper", d, kind, s)][pol].get(_STAT[stat][1]) if ("paper", d, kind, s) in results
                else None for s in seeds]
        sp = spread(vals)
        if sp is None:
            continue
        paper = paper_value(pol, kind, stat)
        ctx.calibrate(parameter=batch if kind == "batch" else f"load={load:g} (batch fit held)",
                      value=batch if kind == "batch" else load, target=f"{pol} {kind} {stat} JCT (h)",
                      paper=paper / H, ours=sp[0] / H)
        rel = sp[0] / paper - 1
        lines.append(f"| {pol} {kind} {stat} JCT | {paper / H:,.0f} h | {fmt_spread(vals, ' h', 1 / H)} | "
                     f"{100 * rel:+.0f}% | {'yes' if abs(rel) <= 0.25 else 'no'} |")
    ctx.section("Calibration fit", "\n".join(lines))


def _measure(trace, racks: int, policies: dict[str, tuple[str, dict]]) -> dict[str, dict[str, float]]:
    from placement.sim import Cluster, simulate
    from placement.sim.metrics import per_job, summary
    from placement.sim.perf import DallyPerf
    from placement.sim.policies import make_policy

    cl = Cluster.uniform(racks=racks, machines=8, gpus_per_machine=8)
    out = {}
    for label, (pol, opts) in policies.items():
        res = simulate(trace, cl, make_policy(pol, **opts), perf=DallyPerf())
        s = summary(per_job(res.log, trace), res.log, cl.n_gpus)
        out[label] = {"mean": s["mean_jct_s"], "median": s["median_jct_s"]}
    return out


def search(grid: dict[str, tuple] | None = None, seed: int = 0, racks: int = 8, echo=print) -> list[dict[str, Any]]:
    """The fit (module docstring): every batch point of ``grid``, then the load for the best one
    (its loss over the Poisson means only, the medians being out of reach).
    Returns one row per point with its loss; prints them with ``echo``."""
    from placement.sim.dally_workload import fitted_trace

    grid = grid or SEARCH
    rows = []
    for med, sig, share, single, ms in itertools.product(grid["median_h"], grid["sigma"], grid["share_large"],
                                                         grid["share_single"], grid["max_share"]):
        if single > 1 - share:
            continue
        tr = fitted_trace("batch", seed=seed, median_h=med, sigma=sig, share_large=share, share_single=single,
                          gpus=64 * racks)
        got = _measure(tr, racks, {"tiresias": ("tiresias", {}),
                                   "gandiva": ("gandiva", {**GANDIVA_PAPER, "max_share": ms})})
        pairs = [(got[p][st], paper_value(p, "batch", st)) for p, k, st in TARGETS if k == "batch"]
        rows.append({"median_h": med, "sigma": sig, "share_large": share, "share_single": single, "max_share": ms,
                     "load": None,
                     "loss": loss(pairs), **{f"{p}_{st}_h": got[p][st] / H for p, k, st in TARGETS if k == "batch"}})
        echo(rows[-1])
    best = min(rows, key=lambda r: r["loss"])
    for load in grid["load"]:
        tr = fitted_trace("poisson", seed=seed, median_h=best["median_h"], sigma=best["sigma"],
                          share_large=best["share_large"], share_single=best["share_single"], load=load,
                          gpus=64 * racks)
        got = _measure(tr, racks, {"tiresias": ("tiresias", {}),
                                   "gandiva": ("gandiva", {**GANDIVA_PAPER, "max_share": best["max_share"]})})
        pairs = [(got[p][st], paper_value(p, "poisson", st)) for p, k, st in TARGETS
                 if k == "poisson" and st == "mean"]
        rows.append({**{k: best[k] for k in ("median_h", "sigma", "share_large", "share_single", "max_share")},
                     "load": load,
                     "loss": loss(pairs), **{f"{p}_{st}_h": got[p][st] / H for p, k, st in TARGETS
                                             if k == "poisson"}})
        echo(rows[-1])
    return rows


def probe(seeds=(0, 1), racks: int = 8, echo=print) -> dict:
    """Re-run :data:`PROBES`: each shape of :data:`PROBE_SHAPES` (batch) under each form of
    :data:`PROBE_FORMS`; returns shape -> seed -> form -> (median, mean) JCT in hours."""
    from placement.sim.dally_workload import fitted_trace

    out: dict = {}
    for name, kw in PROBE_SHAPES.items():
        for seed in seeds:
            got = _measure(fitted_trace("batch", seed=seed, gpus=64 * racks, **kw), racks, PROBE_FORMS)
            out.setdefault(name, {})[seed] = {k: (round(v["median"] / H), round(v["mean"] / H)) for k, v in got.items()}
            echo(name, seed, out[name][seed])
    return out


if __name__ == "__main__":
    search()
