"""CASSINI's claim contract (NSDI 2024, §5.1-§5.7): the paper's numbers, claims, knobs and choices.

Everything ``placement reproduce cassini`` judges by, declared once (:mod:`.claims` states the
rules). Twenty-one claims, one per distinct claim of the paper: Fig. 11(b)'s mean and p99 gains,
Th+CASSINI near Ideal, Po+CASSINI's similar gain on the Poisson trace; Fig. 12(b)'s two gains
on the model-parallel mix; Fig. 13(a)'s four gains on the stress test (Themis and Pollux);
Fig. 14(a)'s two gains on the dynamic model-parallel trace and Po+CASSINI's similar one (§5.4);
the ECN-mark reductions of Fig. 13(d) (Themis, Pollux) and Fig. 14(d), on a marked-packet proxy; Fig. 16(b)'s two gains on
multi-GPU servers (§5.6); Table 2's diminishing gain at score 0.6; Fig. 17's fewer than two adjustments a minute; §5.1's
Random with the highest network overhead. Self-checks of our model (the shifts hold in the link
model), the Tiresias plug-in and the agent's counts on the Poisson trace are reported measures.

Calibration, on baseline and set-up numbers only:

- ``phase spread`` (the link model's phase dynamics of network-agnostic jobs,
  :func:`placement.sim.links.spread_phase`): fitted so that Themis over Ideal on the Poisson trace
  meets the ~1.6x that Fig. 11(b) implies for the baseline (Th+CASSINI about Ideal and 1.6x below
  Themis), tolerance 15%. The claims of the engine's runs depend on it and read
  ``uncalibrated`` while it does not converge.
- ``goodput factor``: §2.2's two VGG19 at about 22 Gbps each on 50 Gbps (Fig. 2(b)).
- ``snapshot period``: each Table 2 snapshot's common period, fitted so that the fluid model's
  Themis (jobs started together) meets Table 2's *Themis* column (a baseline); the catalogue's
  common period is the median of these fits (:func:`.cassini_snapshots.fitted_common_period`).
  Table 2's Th+CASSINI column and its scores are CASSINI's results and feed nothing.
"""

from __future__ import annotations

import math
import statistics

from .claims import Choice, ClaimSpec, Knob, Measure, Number, PaperSpec, Precondition

__all__ = ["SPEC", "TOLERANCE", "PHASE_TOLERANCE", "TABLE2", "ENGINE_DEPENDS", "table2_gain"]

INF = math.inf
TOLERANCE = 0.25         # ours: one tolerance for every CASSINI claim (the issue states none)
PHASE_TOLERANCE = 0.15   # the tolerance on Themis / Ideal ~1.6x

# Table 2: (jobs as "model (batch size)", Th+CASSINI ms (claim), Themis ms (baseline), score (claim))
TABLE2 = (
    (("WideResNet101 (800)", "VGG16 (1400)"), (138, 148), (205, 199), 1.0),
    (("VGG19 (1400)", "VGG16 (1700)", "ResNet50 (1600)"), (168, 163, 59), (220, 220, 55), 1.0),
    (("VGG19 (1024)", "VGG16 (1200)"), (166, 168), (176, 177), 0.9),
    (("RoBERTa (12)", "RoBERTa (12)"), (164, 180), (210, 208), 0.8),
    (("BERT (8)", "VGG19 (1400)", "WideResNet101 (800)"), (209, 294, 265), (213, 292, 266), 0.6),
)


def table2_gain(k: int) -> float:
    """Snapshot ``k``'s (1-based) gain in Table 2: its jobs' mean Themis time over their mean
    Th+CASSINI time."""
    _, cas, th, _ = TABLE2[k - 1]
    return statistics.mean(th) / statistics.mean(cas)


_HIGH = [table2_gain(k) / table2_gain(5) for k in (1, 2)]   # score-1.0 snapshots over the 0.6 one

NUMBERS = (
    # claims
    Number("fig11.mean", 1.6, 1.6, "Fig. 11(b), §5.2", "claim", "1.6x (average iteration time)"),
    Number("fig11.p99", 1.8, 1.8, "Fig. 11(b), §5.2", "claim", "1.8x (99th percentile)"),
    Number("fig11.ideal", 1.0, 1.0, "Fig. 11(b), §5.2", "claim", "similar performance as Ideal (~1x)"),
    Number("fig11.pollux", 1.6, 1.6, "§5.2", "claim",
           "similar gains between Po+CASSINI and Pollux (read as Th+CASSINI's 1.6x)"),
    Number("fig12.mean", 1.2, 1.2, "Fig. 12(b), §5.2", "claim", "1.2x (average)"),
    Number("fig12.p99", 1.6, 1.6, "Fig. 12(b), §5.2", "claim", "1.6x (99th percentile)"),
    Number("fig13.mean", 1.5, 1.5, "Fig. 13(a), §5.3", "claim", "1.5x (average, vs Themis)"),
    Number("fig13.p99", 2.2, 2.2, "Fig. 13(a), §5.3", "claim", "2.2x (99th percentile, vs Themis)"),
    Number("fig13.po_mean", 1.6, 1.6, "Fig. 13(a), §5.3", "claim", "1.6x (average, vs Pollux)"),
    Number("fig13.po_p99", 2.5, 2.5, "Fig. 13(a), §5.3", "claim", "2.5x (99th percentile, vs Pollux)"),
    Number("fig14.mean", 1.2, 1.2, "Fig. 14(a), §5.4", "claim", "1.2x (average, dynamic model-parallel trace)"),
    Number("fig14.p99", 1.6, 1.6, "Fig. 14(a), §5.4", "claim", "1.6x (99th percentile, dynamic model-parallel trace)"),
    Number("fig14.pollux", 1.2, 1.2, "§5.4", "claim",
           "similar gains between Pollux and Po+CASSINI (read as Th+CASSINI's 1.2x)"),
    Number("fig13.ecn", 1 - 1 / 27, 1 - 1 / 27, "Fig. 13(d), §5.3", "claim",
           "DLRM: 27x more ECN marks per iteration under Themis (a 96.3% reduction)"),
    Number("fig13.ecn_po", 1 - 1 / 33, 1 - 1 / 33, "Fig. 13(d), §5.3", "claim",
           "DLRM: 33x more ECN marks per iteration under Pollux (a 97.0% reduction)"),
    Number("fig14.ecn", 1 - 1 / 29, 1 - 1 / 29, "Fig. 14(d), §5.4", "claim",
           "29x fewer ECN marked packets with Th+CASSINI (a 96.6% reduction)"),
    Number("fig16.mean", 1.4, 1.4, "Fig. 16(b), §5.6", "claim", "1.4x (average, multi-GPU servers)"),
    Number("fig16.p99", 1.9, 1.9, "Fig. 16(b), §5.6", "claim", "1.9x (99th percentile, multi-GPU servers)"),
    Number("table2.diminish", min(_HIGH), max(_HIGH), "Table 2, §5.5", "claim",
           f"the score-1.0 snapshots' gains ({table2_gain(1):.2f}x, {table2_gain(2):.2f}x) over the score-0.6 "
           f"one's ({table2_gain(5):.2f}x): {min(_HIGH):.2f}-{max(_HIGH):.2f}x"),
    Number("fig17.adjust", -INF, 2.0, "Fig. 17, §5.7", "claim", "< 2 adjustments per minute (snapshots 1-3)"),
    Number("random.overhead", 1.01, INF, "§5.1 (Random)", "claim",
           "the highest network overhead (no number: read as at least 1% above Themis's, ours)"),
    Number("table2.scores", 0.6, 1.0, "Table 2", "claim", "compatibility scores 1.0, 1.0, 0.9, 0.8, 0.6"),
    # baselines and set-up
    Number("themis.over_ideal", 1.6, 1.6, "Fig. 11(b), §5.2", "baseline",
           "Themis about 1.6x Ideal (implied: Th+CASSINI about Ideal and 1.6x below Themis)"),
    *(Number(f"table2.themis.s{k}", statistics.mean(th), statistics.mean(th), "Table 2 (Themis column)", "baseline",
             f"snapshot {k} under Themis: {', '.join(f'{x} ms' for x in th)}")
      for k, (_, _, th, _) in enumerate(TABLE2, start=1)),
    Number("fig2b.share", 22.0, 22.0, "§2.2, Fig. 2(b)", "setup", "two VGG19 sharing 50 Gbps get about 22 Gbps each"),
    Number("load", 0.8, 1.0, "§5.1", "setup", "load 80-100% (average fraction of GPUs serving jobs)"),
    Number("candidates", 10, 10, "§5.1", "setup", "up to 10 placement candidates"),
    Number("precision", 5, 5, "§5.1, Table 1", "setup", "5 degrees angle discretization"),
    Number("lease", 600, 600, "§5.1", "setup", "Themis lease (bidding period) 10 minutes"),
    Number("trigger", 0.05, 0.05, "§5.7", "setup", "an adjustment when a boundary is more than 5% of the ideal "
           "iteration off"),
)

LOAD = Precondition("load", "GPU load of the Themis run over the measured window (GPUs serving jobs over the "
                    "cluster's, §5.1's load definition)", ">=", 0.8, "§5.1")
COMPATIBLE = Precondition("compatible", "our score of snapshots 1-3 (the lowest), the paper's compatible "
                          "snapshots (Fig. 17 measures them)", ">=", 0.85, "§5.7, Table 2")
HIGH_SCORE = Precondition("score-1 snapshots", "our mean score of snapshots 1 and 2 (Table 2: 1.0)", ">=", 0.95,
                          "Table 2")
LOW_SCORE = Precondition("score-0.6 snapshot", "our score of snapshot 5 (Table 2: 0.6)", "<=", 0.75, "Table 2")

#: what every claim on the engine's runs depends on
ENGINE_DEPENDS = ("phase spread", "goodput factor", "profiles", "link model", "testbed reading", "elastic Themis",
                  "window")
_PO = ("pollux phases", "goodput inputs")


def _gain(key, text, number, metric, exp, baseline="Themis", extra=(), pre=(LOAD,)):
    window = {"stress test": "the two arriving jobs' runs", "multi-GPU dynamic trace": "every job's whole run",
              "dynamic model-parallel trace": "every job's whole run"}
    return ClaimSpec(key, text, number, metric, baseline=baseline, regime=exp,
                     window=window.get(exp, "first to last submission"),
                     null=1.0, preconditions=pre, depends_on=ENGINE_DEPENDS + tuple(extra), unit="x")


CLAIMS = (
    _gain("poisson_mean", "Th+CASSINI improves the average iteration time vs Themis (Poisson trace)", "fig11.mean",
          "Themis / Th+CASSINI, mean iteration time", "Poisson trace, 13 models, load 1"),
    _gain("poisson_p99", "Th+CASSINI improves the p99 iteration time vs Themis (Poisson trace)", "fig11.p99",
          "Themis / Th+CASSINI, 99th percentile iteration time", "Poisson trace, 13 models, load 1"),
    ClaimSpec("poisson_ideal", "Th+CASSINI achieves similar performance as Ideal (mean iteration over Ideal's, "
              "Poisson trace)", "fig11.ideal", "Th+CASSINI / Ideal, mean iteration time", baseline="Ideal",
              regime="Poisson trace, 13 models, load 1", window="first to last submission", kind="bound",
              preconditions=(LOAD,), depends_on=ENGINE_DEPENDS, unit="x"),
    _gain("poisson_pollux", "Po+CASSINI improves the average iteration time vs Pollux (Poisson trace)",
          "fig11.pollux", "Pollux / Po+CASSINI, mean iteration time", "Poisson trace, 13 models, load 1",
          baseline="Pollux", extra=_PO, pre=()),
    _gain("mp_mean", "Th+CASSINI improves the average iteration time vs Themis (model-parallel mix)", "fig12.mean",
          "Themis / Th+CASSINI, mean iteration time", "Poisson arrivals, GPT-1/2/3 and DLRM", pre=()),
    _gain("mp_p99", "Th+CASSINI improves the p99 iteration time vs Themis (model-parallel mix)", "fig12.p99",
          "Themis / Th+CASSINI, 99th percentile iteration time", "Poisson arrivals, GPT-1/2/3 and DLRM", pre=()),
    _gain("stress_mean", "Th+CASSINI improves the average iteration time vs Themis (stress test)", "fig13.mean",
          "Themis / Th+CASSINI, mean iteration time", "stress test", pre=()),
    _gain("stress_p99", "Th+CASSINI improves the p99 iteration time vs Themis (stress test)", "fig13.p99",
          "Themis / Th+CASSINI, 99th percentile iteration time", "stress test", pre=()),
    _gain("stress_po_mean", "Po+CASSINI improves the average iteration time vs Pollux (stress test)",
          "fig13.po_mean", "Pollux / Po+CASSINI, mean iteration time", "stress test", baseline="Pollux", extra=_PO,
          pre=()),
    _gain("stress_po_p99", "Po+CASSINI improves the p99 iteration time vs Pollux (stress test)", "fig13.po_p99",
          "Pollux / Po+CASSINI, 99th percentile iteration time", "stress test", baseline="Pollux", extra=_PO,
          pre=()),
    _gain("mpdyn_mean", "Th+CASSINI improves the average iteration time vs Themis (dynamic model-parallel trace)",
          "fig14.mean", "Themis / Th+CASSINI, mean iteration time", "dynamic model-parallel trace",
          extra=("dynamic traces",), pre=()),
    _gain("mpdyn_p99", "Th+CASSINI improves the p99 iteration time vs Themis (dynamic model-parallel trace)",
          "fig14.p99", "Themis / Th+CASSINI, 99th percentile iteration time", "dynamic model-parallel trace",
          extra=("dynamic traces",), pre=()),
    _gain("mpdyn_pollux", "Po+CASSINI improves the average iteration time vs Pollux (dynamic model-parallel trace)",
          "fig14.pollux", "Pollux / Po+CASSINI, mean iteration time", "dynamic model-parallel trace", baseline="Pollux",
          extra=("dynamic traces",) + _PO, pre=()),
    *(ClaimSpec(key, text, number, "reduction of the arriving DLRM's marked-packet proxy per iteration, (baseline "
                "- +CASSINI) / the larger of the two", baseline=base, regime=exp, window="the arriving DLRM's run",
                null=0.0, depends_on=ENGINE_DEPENDS + ("dynamic traces", "ECN proxy") + extra, unit="%", scale=100)
      for key, text, number, base, exp, extra in (
          ("ecn_stress", "Th+CASSINI cuts DLRM's ECN marks vs Themis (stress test)", "fig13.ecn", "Themis",
           "stress test", ()),
          ("ecn_stress_po", "Po+CASSINI cuts DLRM's ECN marks vs Pollux (stress test)", "fig13.ecn_po", "Pollux",
           "stress test", _PO),
          ("ecn_mpdyn", "Th+CASSINI cuts ECN marks vs Themis (dynamic model-parallel trace, the arriving DLRM)",
           "fig14.ecn", "Themis", "dynamic model-parallel trace", ()))),
    _gain("multi_mean", "Th+CASSINI improves the average iteration time vs Themis (multi-GPU servers)", "fig16.mean",
          "Themis / Th+CASSINI, mean iteration time", "multi-GPU dynamic trace", extra=("multi-GPU testbed",),
          pre=()),
    _gain("multi_p99", "Th+CASSINI improves the p99 iteration time vs Themis (multi-GPU servers)", "fig16.p99",
          "Themis / Th+CASSINI, 99th percentile iteration time", "multi-GPU dynamic trace",
          extra=("multi-GPU testbed",), pre=()),
    ClaimSpec("random_worst", "Random placement has the highest network overhead: its mean iteration over Ideal's "
              "above Themis's (Poisson trace, both in Themis's elastic auctions)", "random.overhead",
              "(Random / Ideal) / (Themis / Ideal), mean iteration time", baseline="Themis",
              regime="Poisson trace, 13 models, load 1", window="first to last submission", null=1.0,
              preconditions=(LOAD,), depends_on=ENGINE_DEPENDS + ("random placement",), unit="x"),
    ClaimSpec("table2_diminish", "The gain diminishes at score 0.6: the score-1.0 snapshots' mean gain over the "
              "score-0.6 snapshot's (Table 2)", "table2.diminish",
              "mean over snapshots 1-2 of Themis / Th+CASSINI, over snapshot 5's", baseline="Themis (started "
              "together)", regime="one 50 Gbps link", window="the fluid model's steady state", null=1.0,
              preconditions=(HIGH_SCORE, LOW_SCORE),
              depends_on=("snapshot period", "goodput factor", "profiles", "snapshot profiles", "link model"),
              unit="x"),
    ClaimSpec("fig17_adjust", "Time-shift adjustments are rare: fewer than two per minute (snapshots 1-3)",
              "fig17.adjust", "adjustments per job-minute, mean over snapshots 1-3", regime="snapshots 1-3",
              window="a minute of the fluid model from Algorithm 1's shifts", kind="bound",
              preconditions=(COMPATIBLE,),
              depends_on=("snapshot period", "goodput factor", "profiles", "snapshot profiles", "timing jitter",
                          "link model"), unit=" /min"),
)

KNOBS = (
    Knob("phase spread", ("themis.over_ideal",), PHASE_TOLERANCE,
         "fitted: Themis / Ideal on the Poisson trace over the spreads 1, 0.5, 0.25, 0 (the whole range: "
         "start-time phases to every job in phase)"),
    Knob("goodput factor", ("fig2b.share",), 0.05, "fitted: §2.2's share of two VGG19 on one 50 Gbps link"),
    Knob("snapshot period", tuple(f"table2.themis.s{k}" for k in range(1, 6)), PHASE_TOLERANCE,
         "fitted: each snapshot's common period, scaled so that the fluid model's Themis (jobs started together) "
         "meets Table 2's Themis column"),
)

_TRACE = ("poisson_mean", "poisson_p99", "poisson_ideal", "poisson_pollux", "mp_mean", "mp_p99", "stress_mean",
          "stress_p99", "stress_po_mean", "stress_po_p99", "mpdyn_mean", "mpdyn_p99", "mpdyn_pollux", "multi_mean",
          "multi_p99", "random_worst", "ecn_stress", "ecn_stress_po", "ecn_mpdyn")
_SNAP = ("table2_diminish", "fig17_adjust")

CHOICES = (
    Choice("profiles", "catalogue: kinds, Up fractions and Up bandwidths per model",
           "ours, not fitted: the measured profiles are not public; VGG16 0.45 from Fig. 3(c), 45 Gbps from Fig. 2(b), "
           "GPT shapes from Fig. 1 (GPT-1 data, GPT-2 pipeline, GPT-3 hybrid parallel; on Fig. 11's trace only "
           "DLRM model-parallel, §5.2), BERT 0.6 from §2.3 (BERT and VGG19 not compatible), XLM 0.65 from §5.2 "
           "(XLM and WideResNet101 not compatible); WideResNet101 0.4, RoBERTa 0.6, CamemBERT 0.35 / 30 Gbps, "
           "ResNet50 0.3 / 5 Gbps (§5.5: its demand not significant), BERT 40 Gbps and the model-parallel shapes drawn",
           affects=_TRACE + _SNAP),
    Choice("common period", "the median of the snapshot periods fitted on Table 2's Themis column, a multiple of 4",
           "fitted: Table 2's Themis column (placement.app.reproduce.cassini_snapshots.fitted_common_period)",
           affects=_TRACE, derived_from=tuple(f"table2.themis.s{k}" for k in range(1, 6))),
    Choice("ResNet50 period", "a quarter of the common period",
           "fitted: Table 2's Themis column, snapshot 2 (ResNet50 at 55 ms beside VGG at 220 ms)",
           affects=_TRACE + _SNAP, derived_from=("table2.themis.s2",)),
    Choice("snapshot profiles", "Table 2's batch sizes: Up fraction 0.45 at VGG19 (1400) / VGG16 (1700), compute "
           "linear in the batch (VGG19 (1024) 0.528, VGG16 (1200) 0.537); the other variants as their model",
           "paper Table 2 (batch sizes), compute linear in the batch (ours); a second reading with every variant "
           "as its model's profile (they differ on snapshot 3)", affects=_SNAP),
    Choice("timing jitter", "sd 1% of each compute phase (mapped over 0-2% on the regime map)",
           "ours, not fitted: the paper does not state its servers' jitter", affects=("fig17_adjust",)),
    Choice("link model", "fluid max-min per link with the goodput factor; the engine's factor is a component's "
           "steady state over 16 iterations after 3", "ours, not fitted: DCQCN/PFC not modelled",
           affects=_TRACE + _SNAP),
    Choice("testbed reading", "Clos reading of Fig. 10 (6 racks of 4, 13 switches, 48 links, ECMP by hash); the "
           "tree reading a second view", "paper §5.1 (13 logical switches, 48 links, 2:1), layout ours",
           affects=_TRACE),
    Choice("elastic Themis", "partial-allocation split with fairness knob 0.8, rack penalty 1.25, linear scaling "
           "in workers", "ours, not fitted: Themis's agents' bids are not public", affects=_TRACE),
    Choice("window", "from the first submission to the last (the stress test: the two arriving jobs' runs)",
           "ours, not fitted", affects=_TRACE),
    Choice("dynamic traces", "three busy 6-worker jobs (18 GPUs) drawn from the trace's mix, two 3-worker jobs "
           "arriving at 60 s (stress test: ResNet50 and DLRM; model-parallel: DLRM and a drawn GPT)",
           "ours, not fitted: §5.3 and §5.4 name the arriving models, not the busy jobs nor their sizes",
           affects=("stress_mean", "stress_p99", "stress_po_mean", "stress_po_p99", "mpdyn_mean", "mpdyn_p99",
                    "mpdyn_pollux")),
    Choice("ECN proxy", "the Gbit a job sends while a link it crosses is offered more than its capacity (a queue "
           "builds), per iteration, in the fluid model", "ours, not fitted: the fluid model has no queues, DCQCN or "
           "WRED thresholds (§5.1: 1000-2000 cells)", affects=("ecn_stress", "ecn_stress_po", "ecn_mpdyn")),
    Choice("multi-GPU testbed", "six two-GPU servers in three racks of two, 2:1 rack uplinks; two running 3-GPU "
           "jobs, DLRM and a drawn 3-GPU job arriving at 60 s", "ours, not fitted: Fig. 16(a)'s layout and the "
           "dynamic trace's jobs are not stated beyond §5.6's example (XLM, ResNet50, DLRM)",
           affects=("multi_mean", "multi_p99")),
    Choice("random placement", "Themis's elastic auctions and leases, each winner's GPUs drawn uniformly among "
           "the free ones", "ours, not fitted: §5.1 says only 'places workers for each job randomly'",
           affects=("random_worst",)),
    Choice("pollux phases", "Pollux's jobs keep their start-time phases (its restarts begin after a delay in the "
           "engine, where no phase rule applies)", "ours, not fitted",
           affects=("poisson_pollux", "stress_po_mean", "stress_po_p99", "mpdyn_pollux")),
    Choice("goodput inputs", "each model borrows the Pollux authors' closest measured application",
           "ours, not fitted", affects=("poisson_pollux", "stress_po_mean", "stress_po_p99", "mpdyn_pollux")),
    Choice("agent gate", "the agent acts on sets scoring at least 0.99 (one 5-degree slot of overlap)",
           "ours, not fitted: §5.7 says only that compatible jobs respect their shifts", affects=_TRACE),
    Choice("candidates", "up to 10 from the Themis auction's reassignment (§4.2 step 1): every winner of the "
           "auction (jobs starting, moved, grown or re-placed, and winners whose lease expired and kept their GPUs) "
           "on the pool (GPUs free, given back, or the renewed winners' own): the base's placement, swaps of "
           "equal-size winners, whole reassignments drawn at the same tiers; the earlier rule (only the jobs "
           "starting now, onto the GPUs free now) run beside on the Poisson trace",
           "paper §4.2 and §5.1 (up to 10 candidates), generator ours", affects=_TRACE),
)

MEASURES = (
    Measure("shifts_hold", "The shifts hold in the link model: Th+CASSINI's mean iteration over the per-iteration "
            "bound on its own placements (Poisson trace)", "a check of our model, not a paper number (1x when every "
            "compatible set runs at its bound)"),
    Measure("shifts_hold_snapshot", "The shifts hold in the link model on snapshot 1: Th+CASSINI's mean iteration "
            "over the bound on its placement", "a check of our model, not a paper number"),
    Measure("themis_over_ideal", "Themis / Ideal, mean iteration time (Poisson trace, main runs)",
            "the room any interleaving has; the phase spread's target is ~1.6x"),
    Measure("tiresias_gain", "Tiresias / Tiresias+CASSINI, mean iteration time (Poisson trace)",
            "§4 and §6 say CASSINI is scheduler-agnostic; the paper measures no Tiresias number"),
    Measure("poisson_adjust", "The agent's time-shift adjustments per shifted job-minute on the Poisson trace",
            "Fig. 17 is measured on snapshots, not on the trace"),
    Measure("gpu_load", "GPU load of the Themis run over the measured window", "§5.1's load 80-100%: the "
            "precondition of the Poisson claims"),
    Measure("candidate_sets", "Distinct link sets among a ranking's candidates (Th+CASSINI, Poisson trace, mean per "
            "ranking)", "how much choice the candidate generator gives Algorithm 2"),
    Measure("candidate_one_set", "Share of Th+CASSINI's rankings whose candidates have one distinct link set "
            "(Poisson trace)", "rankings where Algorithm 2 has no choice to make"),
    Measure("gain_starting", "Th+CASSINI / Themis with the earlier candidate rule (only the jobs starting now, onto "
            "the GPUs free now), mean iteration time (Poisson trace)", "the candidate generator's share of the gain: "
            "the same runs beside the reassignment's"),
    Measure("random_fixed_gang", "Random (FIFO, fixed gangs) / Ideal over fixed-gang Themis / Ideal (Poisson trace)",
            "the fixed-gang reading of §5.1's Random, beside the elastic one judged"),
)

SPEC = PaperSpec("cassini", TOLERANCE, NUMBERS, CLAIMS, KNOBS, CHOICES, MEASURES)
