"""Dally's unpublished workload, fitted to the paper's *baseline* JCTs (Tables 2-3), never Dally's.

What is fitted, to what
    The paper publishes no job length, GPU count or arrival rate (§5.1.1); it publishes the JCT
    statistics of its four policies on 8 racks (:data:`.dally_spec.TABLES`).
    Following "Calibrate on the baselines" (``../shared/DESIGN.md``), the workload of
    :func:`placement.sim.dally_workload.fitted_trace` is fitted to the baselines' columns only.

    The fit in use (:data:`placement.sim.dally_workload.FIT`, :func:`search`): Table 2 read with
    Gandiva's median at 510 h (:data:`FIT_READING`; a dropped digit of the printed 183,717 s,
    see :mod:`.dally_spec`), Tiresias in its strict reading (:data:`TIRESIAS_FIT`, the lower loss)
    and Gandiva on the lowest-numbered free GPUs (the reproduction fits that choice again on its
    own runs). Every shape of :data:`SEARCH` runs at a 100 h job-length median on seeds 0-2;
    batch JCTs scale with job length, so the median is then set to put the worst of the four
    targets (Tiresias's and Gandiva's batch median and mean) as close as possible, and the shape
    with the smallest worst error wins (:data:`TRIED_510`): job lengths log-normal with median
    132 h and sigma 0.6, 30% of jobs at 16-64 GPUs, 40% at 1 GPU; every target within 22% on
    seeds 0-2 (the quick run's), within 30% on seeds 0-4 (Tiresias's median the worst). The
    Poisson load is then the load of :data:`SEARCH` with the lowest loss on Table 3's four
    baseline targets, bracketed by the grid (loss 1.29, 1.20, 1.17, 1.21 at 8, 16, 32, 64 on
    seeds 0-2: 32); their medians stay far under the paper's at every load (Tiresias's -51%,
    Gandiva's -93% at 32), so that knob does not converge. The printed
    51 h reading has its own fit (:data:`FIT_51H`), with Gandiva in its OSDI'18 form (every job
    admitted, fluid time slicing), chosen in two steps: :func:`osdi18_surface` ranks the shapes of
    :data:`TRIED_OSDI18` (run at a 100 h job-length median, balanced by scale), then
    :func:`fit_51h` measures the best four at job-length medians of 0.5-8 h, since Tiresias's
    queue limits are absolute GPU-seconds and its JCTs do not scale with job length
    (:data:`TRIED_51H`). The best: sigma 3, 85% of jobs at 16-64 GPUs, median 2 h, Tiresias
    strict, worst error 56%, where Tiresias's batch median over Gandiva's is 5.4x on seeds 0-2
    (the paper's 13.9x; with the other Gandiva forms the ratio stayed under about 3 on every
    shape tried). It does not converge: Tiresias's mean comes out several times its median, the
    paper's 1.75x.

    The earlier fit, kept as the record of what the 51 h reading allows:

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

    Shapes tried beyond the fit, with Gandiva's time slicing in the loop (depth 4-16):
    two-component job-length mixtures (27 random points), job length growing or shrinking
    with GPU count, light and very heavy tails, Tiresias strict, Gandiva with lowest-id
    placement: the largest ratio of Tiresias's batch median to Gandiva's was 3.3, the paper's
    13.9 (its 51 h reading) or 1.39 (510 h). Least attained service finishes short and small
    jobs first; greedy FIFO and round-robin slicing over jobs of one size do not.

    That earlier fit: one seed, 8 racks, loss = mean |log(ours / paper)| over the batch targets
    plus the same over the Poisson means, minimised over the points of :data:`TRIED`,
    :data:`TRIED_RANDOM` (batch) and :data:`TRIED_POISSON` (the load), which record every point
    evaluated with its outcome (the finalists 2.5 h and 4 h: 0.80 + 0.75 and 0.88 + 0.52); its
    Gandiva depth is the :data:`GANDIVA_MAX_SHARE` still in use.
    :func:`search` re-runs the fit in use (default grid :data:`SEARCH`). Every run of
    ``placement reproduce dally`` re-measures the targets on its own seeds (:func:`record`: one
    ``calibration.csv`` row per target of the spec's knobs, :data:`.dally_spec.WORKLOAD_51H`,
    :data:`.dally_spec.WORKLOAD_510H` and :data:`.dally_spec.POISSON_LOAD`, each with its status
    against the 25% tolerance), so the reader sees how close the fit holds on the run's seeds,
    and the claims that depend on a knob that did not converge read ``uncalibrated``.
    Run the fit again with ``python -m placement.app.reproduce.dally_calibrate`` (minutes).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

__all__ = ["GANDIVA_MAX_SHARE", "GANDIVA_PAPER", "FIT_READING", "TIRESIAS_FIT", "SEARCH", "TRIED_510", "TRIED",
           "TRIED_RANDOM", "TRIED_POISSON", "TRIED_OSDI18", "record", "search", "balance", "loss", "paper_value",
           "osdi18_shapes", "osdi18_surface", "OSDI18_GRID", "FIT_51H", "TRIED_51H", "fit_51h"]

H = 3600.0
GANDIVA_MAX_SHARE = 1   # jobs per GPU set under time slicing (fitted on the earlier workload, TRIED)
FIT_READING = "Gandiva median 510 h"   # the reading of Table 2 the workload is fitted to (.dally_spec)
TIRESIAS_FIT = "tiresias-strict"       # the Tiresias form the workload is fitted with
# Gandiva as the Dally paper reads it (§5.1.3: migration "whenever resources become available")
# with the Gandiva paper's time slicing (OSDI'18 §3.1), max_share fitted: the reproduction's form.
GANDIVA_PAPER: dict[str, Any] = {"migration": "eager", "time_slicing": True, "time_slice": 2 * H,
                                 "max_share": GANDIVA_MAX_SHARE, "placement": "random"}
_STAT = {"mean": (0, "mean_jct_s"), "median": (1, "median_jct_s")}
# The grid :func:`search` runs by default: around the frozen fit (shapes at a 100 h median; loads).
SEARCH = {"sigma": (0.5, 0.6, 0.7), "share_large": (0.25, 0.3, 0.35), "share_single": (0.35, 0.4, 0.5),
          "load": (4.0, 8.0, 16.0, 32.0, 64.0)}
# The shapes of SEARCH and their outcome (batch, 8 racks): sigma, share at 16-64 GPUs, share at 1 GPU,
# then the median (h) that balances the four batch targets and the worst relative error there, on
# seeds 0-2 and on seeds 0-4. Smallest worst error on seeds 0-2 first; the first row is the fit.
TRIED_510 = (
    (0.6, 0.3, 0.4, 132, 0.22, 140, 0.30),
    (0.5, 0.3, 0.4, 140, 0.23, 139, 0.34),
    (0.5, 0.3, 0.5, 156, 0.26, 145, 0.31),
    (0.7, 0.3, 0.35, 144, 0.30, 132, 0.33),
    (0.6, 0.3, 0.5, 160, 0.31, 150, 0.35),
    (0.6, 0.25, 0.4, 174, 0.34, 154, 0.33),
    (0.7, 0.25, 0.35, 156, 0.34, 149, 0.36),
    (0.5, 0.3, 0.35, 146, 0.35, 128, 0.39),
    (0.5, 0.35, 0.5, 123, 0.35, 131, 0.44),
    (0.6, 0.35, 0.5, 127, 0.35, 128, 0.45),
    (0.7, 0.25, 0.4, 157, 0.37, 153, 0.36),
    (0.6, 0.25, 0.35, 151, 0.37, 148, 0.38),
    (0.6, 0.3, 0.35, 125, 0.38, 125, 0.38),
    (0.5, 0.25, 0.35, 146, 0.42, 143, 0.39),
    (0.5, 0.25, 0.4, 150, 0.43, 145, 0.38),
    (0.5, 0.35, 0.35, 115, 0.43, 111, 0.45),
    (0.6, 0.35, 0.35, 119, 0.43, 106, 0.49),
    (0.5, 0.35, 0.4, 120, 0.45, 120, 0.45),
    (0.5, 0.25, 0.5, 179, 0.47, 164, 0.38),
    (0.6, 0.25, 0.5, 177, 0.48, 166, 0.38),
    (0.6, 0.35, 0.4, 116, 0.50, 116, 0.50),
    (0.7, 0.25, 0.5, 157, 0.52, 157, 0.36),
)
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
# The rows above ran Gandiva with lowest-id placement; with random placement the two finalists gave
# (the reproduction runs both placements and fits the choice on Gandiva's targets, see dally.py):
TRIED_RANDOM = ((2.5, 2.5, 0.6, 0.1, 1, 183, 1168, 208, 2375), (4, 2.5, 0.6, 0.1, 1, 362, 1884, 262, 3551))
# Poisson (hours): median_h, load, Tiresias median and mean, Gandiva median and mean (lowest-id
# placement for the first seven, random for the last three).
TRIED_POISSON = ((4, 1, 8, 364, 14, 327), (4, 1.5, 8, 302, 15, 366), (4, 2, 8, 330, 16, 360), (4, 3, 9, 544, 29, 428),
                 (4, 5, 17, 691, 26, 555), (4, 10, 13, 1633, 23, 759), (4, 25, 18, 2372, 29, 929),
                 (4, 5, 17, 691, 41, 2542), (4, 10, 13, 1633, 39, 2318), (2.5, 10, 8, 892, 23, 1449))


# Gandiva in its OSDI'18 form (gandiva-osdi18) beside Tiresias, batch, 8 racks, job-length median 100 h,
# medians over seeds 0-2 (hours): sigma, share at 16-64 GPUs, share at 1 GPU, then the median and mean JCT
# of Tiresias (authors' reading), of Tiresias strict and of the OSDI'18 Gandiva, and the median JCT under
# equal-rate fluid processor sharing (placement.sim.processor_sharing, the review's reference).
# From osdi18_shapes() (OSDI18_GRID); osdi18_surface() reads it against both target sets.
TRIED_OSDI18: tuple[tuple[float, ...], ...] = (
    (0.6, 0.3, 0.05, 657, 1825, 535, 1313, 1465, 1698, 1110),
    (0.6, 0.3, 0.1, 549, 1842, 563, 1214, 1432, 1634, 1096),
    (0.6, 0.3, 0.4, 254, 1307, 416, 1044, 1289, 1416, 1005),
    (0.6, 0.6, 0.05, 1822, 3928, 1026, 2921, 2672, 3184, 1933),
    (0.6, 0.6, 0.1, 2283, 4090, 1259, 3209, 2631, 3263, 1919),
    (0.6, 0.8, 0.05, 3061, 6739, 3216, 4147, 3614, 4408, 2474),
    (0.6, 0.8, 0.1, 2798, 6555, 3272, 4369, 3612, 4317, 2459),
    (2.5, 0.3, 0.05, 1678, 17069, 1040, 16483, 1333, 14333, 916),
    (2.5, 0.3, 0.1, 1668, 16838, 963, 15777, 1355, 9446, 903),
    (2.5, 0.3, 0.4, 592, 15146, 803, 7368, 1185, 7373, 828),
    (2.5, 0.6, 0.05, 5488, 33629, 2897, 29355, 2456, 19713, 1570),
    (2.5, 0.6, 0.1, 7635, 35847, 5098, 23476, 2479, 22444, 1558),
    (2.5, 0.8, 0.05, 10685, 51379, 11017, 34568, 3585, 21445, 2011),
    (2.5, 0.8, 0.1, 11120, 40915, 10266, 31433, 3508, 21435, 1997),
    (3.0, 0.3, 0.05, 1994, 55175, 1840, 37016, 1360, 90836, 905),
    (3.0, 0.3, 0.1, 2314, 45866, 1749, 23433, 1354, 23125, 893),
    (3.0, 0.3, 0.4, 831, 62606, 706, 31098, 1165, 20717, 818),
    (3.0, 0.6, 0.05, 10704, 86465, 7013, 42998, 2327, 66888, 1545),
    (3.0, 0.6, 0.1, 10846, 76131, 6409, 52750, 2416, 72853, 1533),
    (3.0, 0.8, 0.05, 24309, 140539, 16505, 100323, 3693, 63937, 1980),
    (3.0, 0.8, 0.1, 30575, 126090, 20141, 86224, 3430, 70763, 1966),
    (3.5, 0.3, 0.05, 3316, 94997, 2062, 146240, 1383, 458811, 901),
    (3.5, 0.3, 0.1, 2872, 103351, 2150, 107836, 1345, 76759, 888),
    (3.5, 0.3, 0.4, 1366, 161357, 956, 66953, 1098, 78871, 814),
    (3.5, 0.6, 0.05, 17476, 247235, 6712, 203385, 2317, 445747, 1532),
    (3.5, 0.6, 0.1, 13032, 246930, 9845, 113169, 2404, 164053, 1520),
    (3.5, 0.8, 0.05, 41346, 397543, 26116, 288003, 3645, 464535, 1964),
    (3.5, 0.8, 0.1, 40980, 458682, 23470, 294037, 3537, 267132, 1951),
    (2.75, 0.85, 0.05, 30007, 117224, 18610, 56323, 3969, 38279, 2129),
    (2.75, 0.85, 0.1, 30301, 134354, 17409, 52224, 3969, 45200, 2116),
    (2.75, 0.9, 0.05, 29206, 218169, 28581, 91858, 4131, 45578, 2238),
    (3.0, 0.85, 0.05, 28338, 198937, 27710, 112826, 3976, 68306, 2115),
    (3.0, 0.85, 0.1, 22098, 158720, 21491, 86961, 3882, 82857, 2102),
    (3.0, 0.9, 0.05, 29490, 222827, 35235, 121912, 4165, 89389, 2224),
    (3.25, 0.85, 0.05, 38043, 375989, 35227, 165087, 3912, 137666, 2106),
    (3.25, 0.85, 0.1, 44352, 366431, 36007, 160992, 3933, 159771, 2092),
    (3.25, 0.9, 0.05, 36580, 305580, 43572, 201151, 4184, 160108, 2214),
    (2.75, 0.95, 0.02, 25231, 147668, 28953, 100866, 4204, 57206, 2345),
    (3.0, 0.95, 0.02, 39149, 175525, 36848, 132419, 4245, 89270, 2331),
    (3.25, 0.95, 0.02, 39626, 376746, 55484, 255047, 4344, 174545, 2321),
    (3.0, 0.9, 0.02, 22596, 236936, 33288, 116583, 4155, 82449, 2231),
)
OSDI18_GRID = {"sigma": (0.6, 2.5, 3.0, 3.5), "share_large": (0.3, 0.6, 0.8), "share_single": (0.05, 0.1, 0.4)}
# then refined toward the 51 h set's lowest worst error (more large jobs, sigma near 3), in this order
OSDI18_REFINED = ({"sigma": (2.75, 3.0, 3.25), "share_large": (0.85, 0.9), "share_single": (0.05, 0.1)},
                  {"sigma": (2.75, 3.0, 3.25), "share_large": (0.95,), "share_single": (0.02,)},
                  {"sigma": (3.0,), "share_large": (0.9,), "share_single": (0.02,)})
# The 51 h target set's own fit (Table 2 as printed), Gandiva in its OSDI'18 form: the first row of
# TRIED_51H (fit_51h: the shapes osdi18_surface() ranks best at that reading, each measured at its
# own job-length medians). It does not converge (worst error 56% against the 25% tolerance;
# Tiresias's mean over its median comes out several times the paper's 1.75), so claims under the
# 51 h reading stay uncalibrated. Tried beside it at 90% of jobs at 16-64 GPUs
# (seeds 0-2, not kept): job lengths growing or shrinking with GPU count (size_exponent +-1 at sigma
# 2.5 and 3) and a short second component (30-50% of jobs, median 1-5% of the main one): worst
# errors 39% to 86%. The reproduction runs it beside the 510 h fit
# for the calibration rows of that knob and the OSDI'18 ratio (dally.py, "paper51").
FIT_51H: dict[str, Any] = {"median_h": 2.0, "sigma": 3.0, "share_large": 0.85, "share_single": 0.05,
                           "tiresias": "tiresias-strict", "gandiva": "gandiva-osdi18"}
# The policies the OSDI'18 record and the 51 h fit run: label -> (registered policy, options)
_OSDI18_FORMS = {"tiresias": ("tiresias", {}), "tiresias-strict": ("tiresias", {"consolidation": "wait"}),
                 "gandiva-osdi18": ("gandiva-osdi18", {})}
# Table 2 (batch, 8 racks) targets in hours: Tiresias median and mean, Gandiva median (two readings), mean.
_T2_H = {"tiresias": (2547080 / H, 4461998 / H), "51 h": 183717 / H, "510 h": 1837170 / H, "gandiva_mean": 5828719 / H}


def osdi18_shapes(grid: dict[str, tuple] | None = None, seeds=(0, 1, 2), racks: int = 8,
                  echo=print) -> list[tuple]:
    """The rows of :data:`TRIED_OSDI18`: every valid shape of ``grid`` (default :data:`OSDI18_GRID`
    then each of :data:`OSDI18_REFINED`; a share at 1 GPU that leaves nothing for 2-8 GPUs is
    skipped) at a 100 h job-length median on ``seeds``, batch, ``racks`` racks."""
    import statistics

    import numpy as np

    from placement.sim.dally_workload import fitted_trace
    from placement.sim.processor_sharing import processor_sharing

    grids = (OSDI18_GRID, *OSDI18_REFINED) if grid is None else (grid,)
    forms = _OSDI18_FORMS
    rows = []
    shapes = [p for g in grids for p in itertools.product(g["sigma"], g["share_large"], g["share_single"])]
    for sig, large, single in shapes:
        if single + large > 1 - 1e-9 and single > 0:
            continue
        traces = [fitted_trace("batch", seed=s, median_h=100.0, sigma=sig, share_large=large, share_single=single,
                               gpus=64 * racks) for s in seeds]
        got = [_measure(t, racks, forms) for t in traces]
        ps = [float(np.median(processor_sharing([j.submit for j in t.jobs], [j.gpus for j in t.jobs],
                                                [j.duration for j in t.jobs], 64 * racks))) for t in traces]
        vals = [round(statistics.median(g[p][st] for g in got) / H) for p in forms for st in ("median", "mean")]
        rows.append((sig, large, single, *vals, round(statistics.median(ps) / H)))
        echo(rows[-1])
    return rows


# The 51 h set's fit at its own scale (Tiresias's queue limits are absolute GPU-seconds, so its
# JCTs do not scale with job length as the OSDI'18 Gandiva's do): for the shapes of osdi18_surface()
# with the lowest worst errors at that reading, each job-length median of FIT_51H_MEDIANS on seeds
# 0-2, batch, 8 racks: sigma, share at 16-64 GPUs, share at 1 GPU, median_h, the Tiresias reading,
# the worst relative error over Table 2's four batch targets (51 h reading), and Tiresias's median
# over the OSDI'18 Gandiva's. From fit_51h(); FIT_51H is its first row (the lowest worst error).
TRIED_51H: tuple[tuple[Any, ...], ...] = (
    (3.0, 0.85, 0.05, 2.0, 'tiresias-strict', 0.559, 5.44),
    (3.0, 0.95, 0.02, 1.0, 'tiresias-strict', 0.584, 6.93),
    (3.0, 0.9, 0.02, 1.0, 'tiresias-strict', 0.634, 6.23),
    (3.0, 0.9, 0.02, 1.0, 'tiresias', 0.677, 6.65),
    (3.0, 0.9, 0.05, 1.0, 'tiresias', 0.716, 4.83),
    (3.0, 0.85, 0.05, 1.0, 'tiresias-strict', 0.726, 4.87),
    (3.0, 0.9, 0.02, 0.5, 'tiresias', 0.745, 8.67),
    (3.0, 0.95, 0.02, 1.0, 'tiresias', 0.75, 8.02),
    (3.0, 0.9, 0.05, 1.0, 'tiresias-strict', 0.757, 4.13),
    (3.0, 0.85, 0.05, 1.0, 'tiresias', 0.761, 4.26),
    (3.0, 0.85, 0.05, 0.5, 'tiresias', 0.789, 7.96),
    (3.0, 0.95, 0.02, 0.5, 'tiresias-strict', 0.806, 6.46),
    (3.0, 0.95, 0.02, 0.5, 'tiresias', 0.822, 5.93),
    (3.0, 0.9, 0.05, 0.5, 'tiresias-strict', 0.84, 5.41),
    (3.0, 0.9, 0.05, 0.5, 'tiresias', 0.851, 5.06),
    (3.0, 0.9, 0.02, 0.5, 'tiresias-strict', 0.908, 3.1),
    (3.0, 0.85, 0.05, 0.5, 'tiresias-strict', 0.919, 2.89),
    (3.0, 0.9, 0.05, 2.0, 'tiresias-strict', 1.097, 4.99),
    (3.0, 0.9, 0.02, 2.0, 'tiresias-strict', 1.151, 5.48),
    (3.0, 0.95, 0.02, 2.0, 'tiresias-strict', 1.3, 5.74),
    (3.0, 0.85, 0.05, 2.0, 'tiresias', 1.719, 6.45),
    (3.0, 0.85, 0.05, 4.0, 'tiresias-strict', 2.181, 3.74),
    (3.0, 0.95, 0.02, 2.0, 'tiresias', 2.183, 4.78),
    (3.0, 0.9, 0.02, 2.0, 'tiresias', 2.199, 7.92),
    (3.0, 0.9, 0.05, 2.0, 'tiresias', 2.36, 5.47),
    (3.0, 0.9, 0.05, 4.0, 'tiresias-strict', 3.009, 6.56),
    (3.0, 0.95, 0.02, 4.0, 'tiresias-strict', 3.152, 5.7),
    (3.0, 0.85, 0.05, 4.0, 'tiresias', 3.643, 5.27),
    (3.0, 0.9, 0.02, 4.0, 'tiresias-strict', 4.371, 5.58),
    (3.0, 0.9, 0.05, 4.0, 'tiresias', 5.109, 11.56),
    (3.0, 0.85, 0.05, 8.0, 'tiresias-strict', 5.233, 4.86),
    (3.0, 0.95, 0.02, 4.0, 'tiresias', 5.657, 4.92),
    (3.0, 0.9, 0.02, 8.0, 'tiresias-strict', 5.809, 6.15),
    (3.0, 0.9, 0.02, 4.0, 'tiresias', 5.853, 6.9),
    (3.0, 0.9, 0.05, 8.0, 'tiresias-strict', 5.87, 7.0),
    (3.0, 0.95, 0.02, 8.0, 'tiresias-strict', 6.518, 8.46),
    (3.0, 0.85, 0.05, 8.0, 'tiresias', 7.452, 8.16),
    (3.0, 0.9, 0.02, 8.0, 'tiresias', 9.451, 10.59),
    (3.0, 0.9, 0.05, 8.0, 'tiresias', 11.412, 5.18),
    (3.0, 0.95, 0.02, 8.0, 'tiresias', 13.557, 4.65),
)
FIT_51H_MEDIANS = (0.5, 1.0, 2.0, 4.0, 8.0)


def fit_51h(n_shapes: int = 4, medians=FIT_51H_MEDIANS, seeds=(0, 1, 2), racks: int = 8, echo=print) -> list[tuple]:
    """The rows of :data:`TRIED_51H`, sorted by worst error (see there)."""
    import statistics

    from placement.sim.dally_workload import fitted_trace

    shapes = []
    for r in osdi18_surface():
        key = (r["sigma"], r["share_large"], r["share_single"])
        if r["reading"] == "51 h" and key not in shapes:
            shapes.append(key)
    forms = _OSDI18_FORMS
    rows = []
    for (sig, large, single), med in itertools.product(shapes[:n_shapes], medians):
        got = [_measure(fitted_trace("batch", seed=s, median_h=med, sigma=sig, share_large=large,
                                     share_single=single, gpus=64 * racks), racks, forms) for s in seeds]
        m = {(p, st): statistics.median(g[p][st] for g in got) / H for p in forms for st in ("median", "mean")}
        for tir in ("tiresias", "tiresias-strict"):
            ours = (m[(tir, "median")], m[(tir, "mean")], m[("gandiva-osdi18", "median")], m[("gandiva-osdi18", "mean")])
            paper = (*_T2_H["tiresias"], _T2_H["51 h"], _T2_H["gandiva_mean"])
            worst = max(abs(o / p - 1) for o, p in zip(ours, paper, strict=True))
            rows.append((sig, large, single, med, tir, round(worst, 3), round(ours[0] / ours[2], 2)))
            echo(rows[-1])
    return sorted(rows, key=lambda r: r[5])


def osdi18_surface(rows=None) -> list[dict[str, Any]]:
    """The loss surface of the OSDI'18 Gandiva: for each row of ``rows`` (default
    :data:`TRIED_OSDI18`), each reading of Table 2's Gandiva median (51 h, 510 h) and each Tiresias
    reading, the job-length scale that balances the four batch targets (Tiresias's and Gandiva's
    median and mean, :func:`balance`) and the worst relative error left; with Tiresias's median
    over the OSDI'18 Gandiva's and over processor sharing's, and Tiresias's mean / median (the
    paper's 1.75). Sorted by worst error."""
    rows = TRIED_OSDI18 if rows is None else rows
    out = []
    for sig, large, single, tm, tmean, sm, smean, gm, gmean, psm in rows:
        for reading in ("51 h", "510 h"):
            for form, med, mean in (("tiresias", tm, tmean), ("tiresias-strict", sm, smean)):
                ours = (med, mean, gm, gmean)
                paper = (*_T2_H["tiresias"], _T2_H[reading], _T2_H["gandiva_mean"])
                k, worst = balance([o / p for o, p in zip(ours, paper, strict=True)])
                out.append({"reading": reading, "tiresias": form, "sigma": sig, "share_large": large,
                            "share_single": single, "median_h": 100.0 * k, "worst_error": worst,
                            "ratio": med / gm, "ratio_ps": med / psm, "tiresias_mean_over_median": mean / med})
    return sorted(out, key=lambda r: r["worst_error"])


def paper_value(policy: str, kind: str, stat: str) -> float:
    """The paper's number of a target, seconds (Tables 2-3, :data:`.dally_spec.TABLES`)."""
    from .dally_spec import TABLES

    return float(TABLES[kind][policy][_STAT[stat][0]])


def loss(pairs: list[tuple[float, float]]) -> float:
    """Mean |log(ours / paper)| over (ours, paper) pairs: a factor of 2 either way costs the same."""
    return sum(abs(math.log(o / p)) for o, p in pairs) / len(pairs)


def record(ctx, results: dict, d: int, seeds: list[int], load: float, gandiva: str = "gandiva") -> None:
    """One ``ctx.calibrate`` row per target of the spec's workload and load knobs (ours: the
    median over seeds on ``d`` racks, seconds; Tiresias in the form the fit used,
    :data:`TIRESIAS_FIT`; Gandiva the run label ``gandiva``, its fitted placement), and a section in
    hours."""
    from placement.sim.dally_workload import FIT

    from .context import fmt_spread, spread
    from .dally_spec import GANDIVA_READINGS, POISSON_LOAD, SPEC, WORKLOAD_51H

    batch = (f"median_h={FIT['median_h']:g}, sigma={FIT['sigma']:g}, share_large={FIT['share_large']:g}, "
             f"share_single={FIT['share_single']:g}, gandiva max_share={GANDIVA_MAX_SHARE}")
    lines = ["The workload's parameters, fitted jointly to the baselines' JCTs of Tables 2-3 on 8 racks (seed 0; "
             f"{len(TRIED) + len(TRIED_RANDOM)} batch points and {len(TRIED_POISSON)} Poisson ones, listed in "
             "`placement.app.reproduce.dally_calibrate.TRIED`), and how close they hold on this run's seeds "
             f"({d} racks; median, min to max over seeds). Dally's and Dally-manual's columns were never fitted. "
             "Table 2's Gandiva median is carried in two readings (51 h as printed, 510 h with a dropped digit "
             "restored), one knob each, each with its own fit: the 510 h set's is the workload in use, the 51 h "
             "set's (Gandiva in its OSDI'18 form, every job admitted with fluid time slicing; "
             "`dally_calibrate.FIT_51H`, from the loss surface in 'Gandiva in its OSDI'18 form') runs beside it "
             "for this knob's rows only. The Poisson medians are out of reach at every load (2D-LAS serves each "
             "arrival first), so the load is also a knob of the regime map.", "",
             "| knob | target | paper | ours | ours / paper - 1 | status |", "|---|---|---|---|---|---|"]
    fit51 = (f"median_h={FIT_51H['median_h']:g}, sigma={FIT_51H['sigma']:g}, "
             f"share_large={FIT_51H['share_large']:g}, share_single={FIT_51H['share_single']:g}, "
             f"gandiva {FIT_51H['gandiva']}, {FIT_51H['tiresias']} (the 51 h set's own fit)")
    for knob in (*(k for _key, k in GANDIVA_READINGS.values()), POISSON_LOAD):
        own = knob == WORKLOAD_51H and ("paper51", d, "batch", seeds[0]) in results
        wl = "paper51" if own else "paper"
        for target in SPEC.knob(knob).targets:
            _t, pol, stat = target.split(".")[:3]
            kind = "batch" if target.startswith("t2") else "poisson"
            if own:
                run = FIT_51H["gandiva"] if pol == "gandiva" else FIT_51H["tiresias"]
            else:
                run = gandiva if pol == "gandiva" else TIRESIAS_FIT
            vals = [results[(wl, d, kind, s)][run].get(_STAT[stat][1]) if (wl, d, kind, s) in results
                    else None for s in seeds]
            sp = spread(vals)
            value = fit51 if own else batch if kind == "batch" else f"load={load:g} (batch fit held)"
            r = ctx.calibrate(knob=knob, value=value, target=target, ours=None if sp is None else sp[0],
                              label=f"{pol} {kind} {stat}")
            if sp is None:
                continue
            paper = r["paper"]
            lines.append(f"| {knob} | {pol} {kind} {stat} JCT ({target}) | {paper / H:,.0f} h | "
                         f"{fmt_spread(vals, ' h', 1 / H)} | {100 * (sp[0] / paper - 1):+.0f}% | {r['status']} |")
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


def balance(ratios: list[float]) -> tuple[float, float]:
    """The scale ``k`` of the job lengths that puts the worst of the relative errors
    ``k * ratio - 1`` as close to 0 as possible (batch JCTs scale with job length), and that
    worst error: ``k = 2 / (min + max)``, error ``(max - min) / (max + min)``."""
    lo, hi = min(ratios), max(ratios)
    return 2.0 / (lo + hi), (hi - lo) / (hi + lo)


def search(grid: dict[str, tuple] | None = None, seeds=(0, 1, 2), racks: int = 8,
           echo=print) -> list[dict[str, Any]]:
    """The fit (module docstring): every shape of ``grid`` at a 100 h median on ``seeds``, its
    median balanced on the four batch targets of :data:`FIT_READING` (:func:`balance`), then the
    loads for the best shape (loss over Table 3's four baseline targets). One row per point,
    printed with ``echo``."""
    import statistics

    from placement.sim.dally_workload import fitted_trace

    from .dally_spec import GANDIVA_READINGS, SPEC

    grid = grid or SEARCH
    forms = {"tiresias": ("tiresias", {"consolidation": "wait"}),
             "gandiva": ("gandiva", {**GANDIVA_PAPER, "placement": "lowest"})}
    g_median = SPEC.by_key[GANDIVA_READINGS[FIT_READING][0]].mid
    paper = [paper_value("tiresias", "batch", "median"), paper_value("tiresias", "batch", "mean"), g_median,
             paper_value("gandiva", "batch", "mean")]
    rows = []
    for sig, share, single in itertools.product(grid["sigma"], grid["share_large"], grid["share_single"]):
        if single > 1 - share:
            continue
        got = [_measure(fitted_trace("batch", seed=s, median_h=100.0, sigma=sig, share_large=share,
                                     share_single=single, gpus=64 * racks), racks, forms) for s in seeds]
        ours = [statistics.median(g[p][st] for g in got) for p, st in
                (("tiresias", "median"), ("tiresias", "mean"), ("gandiva", "median"), ("gandiva", "mean"))]
        k, worst = balance([o / p for o, p in zip(ours, paper, strict=True)])
        rows.append({"sigma": sig, "share_large": share, "share_single": single, "median_h": 100.0 * k,
                     "worst_error": worst, "load": None})
        echo(rows[-1])
    best = min(rows, key=lambda r: r["worst_error"])
    for load in grid["load"]:
        got = [_measure(fitted_trace("poisson", seed=s, median_h=best["median_h"], sigma=best["sigma"],
                                     share_large=best["share_large"], share_single=best["share_single"], load=load,
                                     gpus=64 * racks), racks, forms) for s in seeds]
        pairs = [(statistics.median(g[p][st] for g in got), paper_value(p, "poisson", st))
                 for p in ("tiresias", "gandiva") for st in ("median", "mean")]
        rows.append({**{k: best[k] for k in ("sigma", "share_large", "share_single", "median_h")}, "load": load,
                     "loss": loss(pairs)})
        echo(rows[-1])
    return rows


if __name__ == "__main__":
    search()
