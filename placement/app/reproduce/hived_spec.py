"""HiveD's claim contract (OSDI'20 §5.1-5.3, Table 1, Figures 5-11): the paper's numbers
with their roles, one :class:`~.claims.ClaimSpec` per claim, the load knob and every unpublished
choice of :mod:`.hived` (see :mod:`.claims` for the rules).

Tolerance: the paper's numbers are read from its text about figures ("nearly 7x", "on average
9%"), so every claim's range is widened by 25% of its magnitude. The load knob is fitted to
§5.2's "around 90% of the GPUs are used by high-priority jobs" within 5 points (a relative
tolerance of 5/90).
"""

from __future__ import annotations

import math

from .claims import Choice, ClaimSpec, Knob, Measure, Number, PaperSpec, Precondition

__all__ = ["SPEC", "LOAD_KNOB", "FRAG_PRECONDITION", "QUOTA_PRECONDITION", "TENANT_CLAIMS", "PAPER_LOAD", "LOAD_TOLERANCE",
           "FIG8_STEPS", "FIG8_CLAIMS", "FIG9_FRACTIONS", "WORKLOAD_FRAG", "FRAG_DROP", "BASE_ANOMALY", "FIG5",
           "FIG5_BASE"]

PAPER_LOAD = 0.9                  # §5.2: "around 90% of the GPUs are used by high-priority jobs"
LOAD_TOLERANCE = 0.05 / PAPER_LOAD   # 5 points of 90%
LOAD_KNOB = "arrival rate"
FRAG_PRECONDITION = "yarn_fragmentation"
QUOTA_PRECONDITION = "prod_a_demand_over_quota"
WORKLOAD_FRAG = "workload_fragmentation"
FRAG_DROP = "workload_fragmentation_drop"
BASE_ANOMALY = "baseline_anomaly"
# Figure 8's steps: the Table 1 rows in the 8-GPU group, res-f first, then one more per step
FIG8_STEPS = (("res-f",), ("res-f", "prod-e"), ("res-f", "prod-e", "prod-d"), ("res-f", "prod-e", "prod-d", "prod-c"))
FIG8_CLAIMS = ("fig8.res_f_only", "fig8.prod_e", "fig8.prod_d", "fig8.prod_c")
FIG9_FRACTIONS = (0.25, 0.5, 0.75)   # Figure 9: the share of multi-GPU jobs whose affinity is soft
ALL = ("fig7.anomaly", "decommission", "hived.no_anomaly", "hived.reduced_share", "hived.max_reduction", "hived.mean_reduction",
       "frag.lower", "fig10.preemption", "fig11.multi_level") + FIG8_CLAIMS + (
       "fig8.hived_safe", "fig8.hived_shorter", "fig9.anomaly", "fig9.hived_safe", "fig5.yarn_cs", "fig5.tiresias",
       "fig5.gandiva", "fig5.hived_safe", "fig5.jct", "fig5.jct_gandiva")
TENANT_CLAIMS = ALL[:6]
FIG8 = FIG8_CLAIMS + ("fig8.hived_safe", "fig8.hived_shorter")
FIG9 = ("fig9.anomaly", "fig9.hived_safe")
FIG5 = ALL[-6:]
FIG5_BASE = "baseline_excess"

NUMBERS = (
    Number("load.high_share", PAPER_LOAD, PAPER_LOAD, "§5.2", "setup",
           "around 90% of the GPUs are used by high-priority jobs (200 nodes)"),
    Number("size.busy", 200, 200, "§5.2", "setup", "200 8-GPU nodes (the higher-load cluster)"),
    Number("size.original", 279, 279, "§5", "setup", "279 8-GPU nodes (the production cluster)"),
    Number("table1.jobs", 141950, 141950, "Table 1", "setup",
           "141,950 jobs: each tenant's jobs per GPU count and its quota"),
    Number("window.days", 20, 20, "§5.2", "setup", "jobs submitted in 20 days"),
    Number("frag.busy_level", 1.0, 1.0, "§5.2", "setup",
           "at 200 nodes the quota scheme's fragmentation level stays at 100% for most of the time"),
    Number("fig7.ratio", 6.5, 7.0, "Fig. 7", "claim", "nearly 7x (prod-a, Quota over Private)"),
    Number("decommission.res_f", 1.7, math.inf, "§5.2, Fig. 7", "claim",
           "over 1.7x (res-f, Quota w/o prod-a over Private)"),
    Number("fig7.hived_anomalies", 0, 0, "Fig. 7", "claim",
           "0: every single tenant has a shorter queuing delay in HiveD than in its private cluster"),
    Number("fig7.reduced_share", 9 / 11, 9 / 11, "§5.2", "claim", "9 of the 11 tenants"),
    Number("fig7.max_reduction", -0.94, -0.94, "§5.2", "claim", "up to -94% (prod-a)"),
    Number("fig7.mean_reduction", -0.09, -0.09, "§5.2", "claim", "-9% on average over the 11 tenants"),
    Number("fig6.fragmentation", -math.inf, 0.0, "§5.2, Fig. 6(a)", "claim",
           "lower in HiveD than in the quota scheme (no magnitude given: a bound at 0)"),
    Number("fig10.preemption", -0.55, -0.55, "Fig. 10, §5.3", "claim", "-55% preempted GPUs"),
    Number("fig11.gap", -0.20, -0.10, "Fig. 11, §5.3", "claim",
           "more than 10% (up to 20%) lower for most of the time (read as points of fragmentation)"),
    Number("fig8.fragmentation", 0.91, 0.91, "§5.2, Fig. 8", "setup",
           "workload fragmentation 0.91 when only res-f is in the 8-GPU group (highly fragmented)"),
    Number("fig8.res_f_only", 132.0, 132.0, "§5.2, Fig. 8", "claim",
           "132x (res-f, Quota over Private, only res-f in the 8-GPU group)"),
    Number("fig8.prod_e", 4.3, 4.3, "§5.2, Fig. 8", "claim", "4.3x (prod-e moved to the 8-GPU group)"),
    Number("fig8.prod_d", 1.9, 1.9, "§5.2, Fig. 8", "claim", "1.9x (prod-d moved too)"),
    Number("fig8.prod_c", 0.9, 0.9, "§5.2, Fig. 8", "claim", "0.9x (prod-c moved too)"),
    Number("fig8.hived", -math.inf, 1.0, "§5.2, Fig. 8", "claim",
           "HiveD guarantees sharing safety even under the highest fragmentation (res-f, HiveD over Private at "
           "most 1 at every step)"),
    Number("fig8.hived_shorter", -math.inf, 0.0, "§5.2, Fig. 8", "claim",
           "HiveD consistently provides shorter queuing delay (than Quota, at every step: a bound at 0)"),
    Number("fig9.ratio", 1.3, 1.3, "§5.2, Fig. 9", "claim",
           "1.3x (prod-a, Quota over Private, 50% of the multi-GPU jobs with soft affinity)"),
    Number("fig9.hived", -math.inf, 1.0, "§5.2, Fig. 9", "claim",
           "HiveD eliminates all the sharing anomalies (prod-a, HiveD over Private at most 1 at 25, 50 and 75%)"),
    Number("fig9.fractions", 0.25, 0.75, "§5.2, Fig. 9", "setup", "25%, 50%, 75% of the multi-GPU jobs relaxed"),
    Number("fig5.cluster", 96, 96, "§5.1, Fig. 5", "setup",
           "a 96-GPU cluster replaying 96/2,232 of the jobs of a 10-day trace"),
    Number("fig5.yarn_cs", 1000, 1000, "§5.1, Fig. 5(a)", "claim",
           "1,000 minutes longer queuing delay (prod-a, YARN-CS, quota-based cluster over private, days 8-10)"),
    Number("fig5.tiresias", 330, math.inf, "§5.1, Fig. 5(a)", "claim",
           "over 330 minutes longer queuing delay (prod-a, Tiresias with quota over private)"),
    Number("fig5.gandiva", 400, 400, "§5.1, Fig. 5(a)", "claim",
           "up to 400 minutes longer queuing delay (prod-a, Gandiva, shared over private, days 2 and 8)"),
    Number("fig5.hived", -math.inf, 0.0, "§5.1, Fig. 5(a)", "claim",
           "with HiveD, prod-a never experiences an excessive queuing delay (its excess over private at most 0), "
           "using each of the three schedulers"),
    Number("fig5.jct", -math.inf, 0.03, "§5.1, Fig. 5(b)", "claim",
           "HiveD's mean JCT across all tenants similar to without HiveD: at most 3% worse (YARN-CS)"),
    Number("fig5.jct_gandiva", -0.12, -0.12, "§5.1, Fig. 5(b)", "claim",
           "12% better mean JCT with HiveD (Gandiva)"),
)

_FRAG = Precondition(FRAG_PRECONDITION, "YARN-CS's fragmentation of GPU affinity near 100% over the window (the "
                     "median of its hourly level)", ">=", 0.95, "§5.2: the fragmentation level stays at 100% for "
                     "most of the time (200 nodes)")
_COVERED = Precondition(QUOTA_PRECONDITION, "prod-a's quota covers its demand (its jobs' GPU-time in the window over "
                        "the window, divided by its quota's GPUs)", "<=", 1.0, "§5.2: no queuing delay in its private "
                        "cluster suggests prod-a has enough GPU quota")
# _COVERED also conditions HiveD's prod-a guarantees (Figure 5's and Figure 9's "never worse than private"): the
# guarantee is for a tenant's within-quota work, and §5.1-5.2 tell the prod-a story where its quota covers its
# demand; where prod-a asks several times its quota, its private cluster queues most of its jobs and the two
# delays differ by queue order, not by sharing safety
_BASE = (LOAD_KNOB, "tenant mapping", "busy size", "zero-quota tenants", "window")
_WFRAG = Precondition(WORKLOAD_FRAG, "the reshaped window's workload fragmentation (jobs / GPUs) with only res-f in "
                      "the 8-GPU group", ">=", 0.85, "§5.2: 'the workload is highly fragmented (0.91)'")
_DROP = Precondition(FRAG_DROP, "the workload fragmentation goes down at this step (the previous step's minus "
                     "this one's)", ">", 0.0, "§5.2: 'when more tenants are moved to the 8-GPU group, the workload "
                     "fragmentation level goes down'")
_BASE8 = Precondition(BASE_ANOMALY, "the sharing anomaly exists in the baseline (YARN-CS's delay over the private "
                      "cluster's for the same tenant, its largest over the steps or fractions)", ">", 1.0,
                      "§5.2: HiveD is judged where the quota scheme shows the anomaly")
_BASE5 = Precondition(FIG5_BASE, "the quota scheme shows prod-a's excess (its peak 12-hour excess over the private "
                      "cluster, minutes, the same scheduler)", ">", 0.0,
                      "§5.1: HiveD is judged where the scheduler without HiveD shows the anomaly")
_FIG5 = _BASE + ("quota view", "anomaly tenant", "Figure 5 set-up", "Figure 5 excess", "Figure 5 seeds")
_FIG8 = _BASE + ("reshaping", "8-GPU group order", "quota view")
_FIG9 = _BASE + ("soft affinity", "relaxed jobs", "quota view", "anomaly tenant")

CLAIMS = (
    ClaimSpec("fig7.anomaly", "sharing anomaly: prod-a's mean queuing delay under YARN-CS over its private cluster's",
              "fig7.ratio", "mean queuing delay of prod-a's jobs, shared / private", baseline="private cluster",
              regime="§5.2's higher load (200 nodes)", window="the submission window", null=1.0,
              preconditions=(_FRAG, _COVERED), depends_on=_BASE + ("quota view", "anomaly tenant"), unit="x"),
    ClaimSpec("decommission", "after prod-a is decommissioned, res-f's mean queuing delay under YARN-CS over its "
              "private cluster's", "decommission.res_f", "mean queuing delay of res-f's jobs, shared / private",
              baseline="private cluster", regime="§5.2's higher load without prod-a", null=1.0,
              preconditions=(_FRAG,), depends_on=_BASE + ("decommissioned tenant",), unit="x"),
    ClaimSpec("hived.no_anomaly", "no tenant waits longer in HiveD than in its private cluster (tenants with an "
              "anomaly)", "fig7.hived_anomalies", "tenants whose mean delay in HiveD exceeds private's",
              baseline="private cluster", regime="§5.2's higher load", kind="bound",
              depends_on=_BASE + ("quota view", "anomaly rule", "opportunistic placement")),
    ClaimSpec("hived.reduced_share", "share of tenants whose mean delay HiveD reduces against YARN-CS",
              "fig7.reduced_share", "tenants with a lower mean delay in HiveD than under YARN-CS",
              baseline="YARN-CS", regime="§5.2's higher load", kind="bound", depends_on=_BASE + ("quota view",),
              unit="%", scale=100),
    ClaimSpec("hived.max_reduction", "HiveD's largest delay reduction against YARN-CS (a tenant)",
              "fig7.max_reduction", "min over tenants of HiveD / YARN-CS - 1", baseline="YARN-CS",
              regime="§5.2's higher load", depends_on=_BASE + ("quota view",), unit="%", scale=100),
    ClaimSpec("hived.mean_reduction", "HiveD's mean delay change against YARN-CS over tenants",
              "fig7.mean_reduction", "mean over tenants of HiveD / YARN-CS - 1", baseline="YARN-CS",
              regime="§5.2's higher load", depends_on=_BASE + ("quota view", "preemption"), unit="%", scale=100),
    ClaimSpec("frag.lower", "fragmentation of GPU affinity lower in HiveD than under YARN-CS",
              "fig6.fragmentation", "mean hourly fragmentation, HiveD / YARN-CS - 1", baseline="YARN-CS",
              regime="the original size (279 nodes)", window="the submission window, hourly", kind="bound",
              depends_on=_BASE + ("lower-load size",), unit="%", scale=100),
    ClaimSpec("fig10.preemption", "preempted GPUs, dynamic vs static binding", "fig10.preemption",
              "GPUs preempted in the window, dynamic / static - 1", baseline="static binding",
              regime="the original size (279 nodes)", depends_on=_BASE + ("lower-load size", "static binding"),
              unit="%", scale=100),
    ClaimSpec("fig11.multi_level", "fragmentation with multi-level cells minus node-level cells only",
              "fig11.gap", "mean hourly fragmentation, multi-level minus node-level (points)",
              baseline="node-level cells", regime="the same GPUs per tenant",
              depends_on=(LOAD_KNOB, "busy size", "window", "multi-level cells"), unit=" points", scale=100),
    ClaimSpec("fig8.res_f_only", "reshaped, only res-f in the 8-GPU group: res-f's mean queuing delay under YARN-CS "
              "over its private cluster's", "fig8.res_f_only", "mean queuing delay of res-f's jobs, shared / private",
              baseline="private cluster", regime="§5.2's higher load (200 nodes), workload fragmentation 0.91",
              null=1.0, preconditions=(_WFRAG,), depends_on=_FIG8, unit="x"),
    *(ClaimSpec(key, f"reshaped, {row} moved to the 8-GPU group too: res-f's mean queuing delay under YARN-CS over "
                "its private cluster's", key, "mean queuing delay of res-f's jobs, shared / private",
                baseline="private cluster", regime="§5.2's higher load, the workload fragmentation lower than at the "
                "step before", null=1.0, preconditions=(_DROP,), depends_on=_FIG8, unit="x")
      for key, row in zip(FIG8_CLAIMS[1:], ("prod-e", "prod-d", "prod-c"), strict=True)),
    ClaimSpec("fig8.hived_safe", "reshaped: res-f's mean queuing delay in HiveD over its private cluster's, the "
              "largest over Figure 8's four steps", "fig8.hived", "max over steps of res-f's delay, HiveD / private",
              baseline="private cluster", regime="§5.2's higher load, every step of Figure 8", kind="bound",
              preconditions=(_BASE8,), depends_on=_FIG8 + ("opportunistic placement",), unit="x"),
    ClaimSpec("fig8.hived_shorter", "reshaped: res-f's mean queuing delay in HiveD against YARN-CS, the largest "
              "change over Figure 8's four steps", "fig8.hived_shorter",
              "max over steps of res-f's delay, HiveD / YARN-CS - 1", baseline="YARN-CS",
              regime="§5.2's higher load, every step of Figure 8", kind="bound", preconditions=(_BASE8,),
              depends_on=_FIG8, unit="%", scale=100),
    ClaimSpec("fig9.anomaly", "50% of the multi-GPU jobs with soft affinity: prod-a's mean queuing delay under "
              "YARN-CS over its private cluster's", "fig9.ratio", "mean queuing delay of prod-a's jobs, shared / "
              "private", baseline="private cluster (the same jobs soft)", regime="§5.2's higher load (200 nodes)",
              null=1.0, preconditions=(_COVERED,), depends_on=_FIG9, unit="x"),
    ClaimSpec("fig9.hived_safe", "soft affinity: prod-a's mean queuing delay in HiveD over its private cluster's, "
              "the largest over 25, 50 and 75% of the multi-GPU jobs relaxed", "fig9.hived",
              "max over fractions of prod-a's delay, HiveD / private", baseline="private cluster (the same jobs soft)",
              regime="§5.2's higher load, every fraction of Figure 9", kind="bound", preconditions=(_BASE8, _COVERED),
              depends_on=_FIG9 + ("opportunistic placement",), unit="x"),
    ClaimSpec("fig5.yarn_cs", "YARN-CS without HiveD: prod-a's peak 12-hour excess queuing delay over its private "
              "cluster", "fig5.yarn_cs", "max over 12-hour moving windows of prod-a's mean delay, quota minus private "
              "(minutes)", baseline="private cluster", regime="§5.1's cluster runs (96 GPUs, 10 days)",
              window="12-hour moving windows by submission time", null=0.0, preconditions=(_COVERED,),
              depends_on=_FIG5 + ("YARN-CS",), unit=" min"),
    ClaimSpec("fig5.tiresias", "Tiresias without HiveD (quota enforced by a low-priority queue): prod-a's peak "
              "12-hour excess queuing delay over its private cluster", "fig5.tiresias",
              "max over 12-hour moving windows of prod-a's mean delay, quota minus private (minutes)",
              baseline="private cluster (Tiresias)", regime="§5.1's cluster runs (96 GPUs, 10 days)",
              window="12-hour moving windows by submission time", null=0.0, preconditions=(_COVERED,),
              depends_on=_FIG5 + ("Tiresias inside a VC",), unit=" min"),
    ClaimSpec("fig5.gandiva", "Gandiva without HiveD: prod-a's peak 12-hour excess queuing delay over its private "
              "cluster", "fig5.gandiva", "max over 12-hour moving windows of prod-a's mean delay, shared minus "
              "private (minutes)", baseline="private cluster (Gandiva)", regime="§5.1's cluster runs",
              window="12-hour moving windows by submission time", null=0.0,
              depends_on=_FIG5 + ("Gandiva inside a VC",), unit=" min"),
    ClaimSpec("fig5.hived_safe", "with HiveD: prod-a's peak 12-hour excess queuing delay over its private cluster "
              "(the same scheduler inside the VCs)", "fig5.hived", "max over 12-hour moving windows of prod-a's mean "
              "delay, HiveD minus private (minutes)", baseline="private cluster", regime="§5.1's cluster runs",
              window="12-hour moving windows by submission time", kind="bound", preconditions=(_BASE5, _COVERED),
              depends_on=_FIG5 + ("opportunistic placement",), unit=" min"),
    ClaimSpec("fig5.jct", "HiveD's mean JCT over the tenants' jobs against the same scheduler without HiveD",
              "fig5.jct", "mean JCT, HiveD / quota - 1", baseline="the scheduler without HiveD (quota)",
              regime="§5.1's cluster runs", kind="bound", depends_on=_FIG5 + ("Figure 5 JCT",), unit="%", scale=100),
    ClaimSpec("fig5.jct_gandiva", "Gandiva: HiveD's mean JCT over the tenants' jobs against Gandiva without HiveD",
              "fig5.jct_gandiva", "mean JCT, HiveD / shared - 1", baseline="Gandiva without HiveD",
              regime="§5.1's cluster runs", depends_on=_FIG5 + ("Gandiva inside a VC", "Figure 5 JCT"), unit="%",
              scale=100),
)

KNOBS = (
    Knob(LOAD_KNOB, ("load.high_share",), LOAD_TOLERANCE,
         "fitted: YARN-CS's share of GPUs running high-priority work under Table 1's quotas at the busy size, on a "
         "grid of arrival-rate scales refined by bisection (calibration.csv)"),
)

CHOICES = (
    Choice("tenant mapping", "trace tenant -> Table 1 row (choices.csv: tenant mapping rows)",
           "fitted: least summed L1 distance between each trace tenant's jobs per GPU count over the whole shipped "
           "trace and Table 1's counts, one to one (placement.hived.table1.identify_tenants)",
           affects=TENANT_CLAIMS, derived_from=("table1.jobs",)),
    Choice("busy size", 32, "ours, not fitted: the load is fitted by the arrival rate at this size instead of by "
           "the size (below it Table 1's rows of 1.5% and less hold no node)", affects=ALL),
    Choice("lower-load size", "busy size x 279/200", "paper §5 and §5.2 (279 and 200 nodes)",
           affects=("frag.lower", "fig10.preemption"), derived_from=("size.original", "size.busy")),
    Choice("window", "20 days (full), 4 days (--quick) after a warm-up; seeds shift it by 0, -3, +3, -6, +6 days",
           "paper §5.2 (20 days); the --quick window and the shifts ours, not fitted", affects=ALL,
           derived_from=("window.days",)),
    Choice("quota view", "Table 1 quotas (main reading); fitted to each tenant's demand (second reading)",
           "paper Table 1 for the main reading; the fitted reading is ours, not fitted", affects=TENANT_CLAIMS),
    Choice("zero-quota tenants", "tenants without a Table 1 row, or whose share rounds to 0 nodes, have no private "
           "cluster: their jobs run low-priority only and they are left out of every tenant comparison (each "
           "claim row names how many)", "ours, not fitted", affects=TENANT_CLAIMS),
    Choice("anomaly tenant", "prod-a, as identified (the paper's tenant); the worst tenant is a reported measure",
           "paper §5.2 (prod-a)", affects=("fig7.anomaly",)),
    Choice("decommissioned tenant", "prod-a: its jobs and its nodes removed, every other tenant's quota kept",
           "paper §5.2 (removing its GPUs and workload)", affects=("decommission",)),
    Choice("anomaly rule", "a tenant's mean delay more than 5% and more than 10 minutes above its private "
           "cluster's", "ours, not fitted", affects=("hived.no_anomaly",)),
    Choice("preemption", "checkpoint every hour of run time (main reading); all progress kept (second reading)",
           "ours, not fitted", affects=("hived.mean_reduction",)),
    Choice("static binding", "two readings: a new logical cell takes the VC's free statically bound cell of lowest "
           "index (a fixed order, the main reading), or the one with the fewest low-priority GPUs (§3.3's rule for "
           "dynamic binding applied inside the VC)", "ours, not fitted: the paper binds every cell for good (§5.3) "
           "and does not say which bound cell a job takes", affects=("fig10.preemption",)),
    Choice("opportunistic placement", "low-priority jobs run on any idle GPU, bound cells included",
           "ours, not fitted: read from §3.3 (low-priority cells scavenge idle GPUs)", affects=("hived.no_anomaly",)),
    Choice("multi-level cells", "each tenant's GPUs of the node-level fit split over levels by its demand per level",
           "paper §5.3 (each tenant's assignment matches the distribution of its demands)",
           affects=("fig11.multi_level",)),
    Choice("YARN-CS", "idle GPUs first, best fit, preemption of low-priority jobs only for affinity",
           "paper §5.1", affects=TENANT_CLAIMS + ("frag.lower",) + FIG8 + FIG9 + FIG5),
    Choice("reshaping", "per tenant N = round(its jobs' GPUs / 8 or 1) jobs of 8 or 1 GPUs over the warm-up and the "
           "window; submit times drawn from the tenant's own jobs (without replacement while N allows, every job "
           "N // n times plus a draw otherwise), seeded per seed and tenant; each reshaped job keeps the drawn "
           "job's duration; Table 1's quotas of the original trace kept; res-f's private cluster run once (its "
           "jobs are the same at every step)",
           "paper §5.2 for N and the submit times; the draw's form and the durations ours, not fitted",
           affects=FIG8),
    Choice("8-GPU group order", "res-f; then prod-e, prod-d, prod-c added one per step; every other tenant (with "
           "or without a Table 1 row) in the 1-GPU group", "paper §5.2", affects=FIG8),
    Choice("soft affinity", "a soft job takes any free GPUs at full speed when its affinity cannot be satisfied: "
           "under YARN-CS and quota sharing a within-quota job after its placement with affinity (preemption "
           "included) fails, idle GPUs first, then low-priority ones (preempted), and a low-priority job on idle "
           "GPUs; in a private cluster on its tenant's free GPUs; in HiveD a guaranteed job keeps its VC's cells "
           "(reserved cells give it the affinity) and relaxes only as an opportunistic job when no node has room",
           "paper §5.2 (the most optimistic assumption: no loss of speed); how each policy relaxes ours, not "
           "fitted (option soft: solvers/online/quota.py, private.py, hived.py)", affects=FIG9),
    Choice("relaxed jobs", "25, 50, 75% of the trace's multi-GPU jobs (every tenant's, warm-up included), drawn by "
           "one uniform number per job per seed, so the sets are nested",
           "paper §5.2 for the fractions; the draw ours, not fitted", affects=FIG9,
           derived_from=("fig9.fractions",)),
    Choice("Figure 5 set-up", "each seed's §5.2 set-up: Table 1 quotas in node-level cells at the busy size, the "
           "calibrated arrival rate, the seed's window, hour checkpoints; not a 96-GPU cluster replaying 96/2,232 of "
           "a 10-day trace's jobs with real models", "ours, not fitted (one set-up for §5.1 and §5.2; at 12 nodes "
           "most Table 1 rows hold no node)", affects=FIG5, derived_from=("fig5.cluster",)),
    Choice("Figure 5 excess", "prod-a's compared window jobs finishing in both runs, by submission time: the largest "
           "mean of (shared delay - private delay) over the jobs submitted in the 12 hours up to one job's "
           "submission, in minutes (the gap between Figure 5(a)'s curves on the same jobs)",
           "paper §5.1 for the 12-hour moving window; the difference on the same jobs ours, not fitted",
           affects=FIG5),
    Choice("Figure 5 JCT", "mean JCT (recorded duration + delay) over the compared window jobs (every tenant with a "
           "quota) finishing in both runs", "ours, not fitted (the paper: across all tenants)",
           affects=("fig5.jct", "fig5.jct_gandiva")),
    Choice("Tiresias inside a VC", "order='tiresias' in the private clusters, the quota scheme and HiveD: each "
           "tenant's queue, within-quota and low-priority alike, in least attained GPU-service first (Tiresias's LAS "
           "without its discretized queues and without preempting a tenant's own running jobs); placement and "
           "preemption of low-priority jobs the scheme's own (YARN-CS's idle-first rule under quota, HiveD's cells)",
           "paper §5.1 for the low-priority queue sorted by Tiresias; the rest ours, not fitted",
           affects=("fig5.tiresias", "fig5.hived_safe", "fig5.jct")),
    Choice("Gandiva inside a VC", "not run: no policy here runs Gandiva's greedy placement and migration inside a "
           "tenant's quota or a VC's cells (solvers/online/gandiva.py schedules a whole cluster); its rows read "
           "'not comparable'", "ours, not fitted", affects=("fig5.gandiva", "fig5.hived_safe", "fig5.jct_gandiva")),
    Choice("Figure 5 seeds", "YARN-CS: every seed (the seed's main runs); Tiresias: every seed of the full run, the "
           "first seed under --quick (3 more runs a seed)", "ours, not fitted", affects=FIG5),
    Choice("Figures 8-9 seeds", "every seed of the full run; the first seed under --quick (18 more runs a seed: Figure 8 nine, Figure 9 nine)",
           "ours, not fitted", affects=FIG8 + FIG9),
)

MEASURES = (
    Measure("load.busy_share", "the load read as busy GPUs (YARN-CS, Table 1 quotas, the calibrated load)",
            "§5.2's words name high-priority work; the knob is fitted to that reading"),
    Measure("fig7.worst", "the worst tenant's mean delay under YARN-CS over its private cluster's",
            "the paper reports prod-a's; the worst tenant shows whether another tenant suffers instead"),
    Measure("fig7.quota_rule", "the worst tenant's delay ratio under quota sharing with HiveD's rule (fewest "
            "low-priority GPUs first)", "not the paper's baseline: separates the placement rule from the quota"),
    Measure("frag.busy", "fragmentation, HiveD / YARN-CS - 1, at the busy size",
            "the paper states the comparison at 279 nodes"),
    Measure("fig10.delay", "mean delay over tenants, dynamic vs static binding (lower-load size)",
            "the paper reports preemption only"),
    Measure("fitted.high_share", "GPUs running high-priority work under the fitted quotas (YARN-CS, the same "
            "cluster and load)", "the load is calibrated under Table 1's quotas"),
    Measure("zero_quota", "tenants left out of the comparisons (no quota at the busy size)",
            "states what 'every tenant' covers"),
    Measure("fig9.ratio_25", "prod-a's delay under YARN-CS over private, 25% of the multi-GPU jobs soft",
            "the paper: no obvious anomaly in the average at 25%"),
    Measure("fig9.ratio_75", "prod-a's delay under YARN-CS over private, 75% of the multi-GPU jobs soft",
            "the paper: no obvious anomaly in the average at 75%"),
    Measure("fig9.hived_shorter", "prod-a's delay in HiveD over YARN-CS's - 1, the largest over the fractions",
            "the paper: HiveD always has the shortest queuing delay"),
)

SPEC = PaperSpec(paper="hived", tolerance=0.25, numbers=NUMBERS, claims=CLAIMS, knobs=KNOBS, choices=CHOICES,
                 measures=MEASURES)
