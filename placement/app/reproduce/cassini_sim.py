"""The CASSINI reproduction's runs: §5.1's testbed experiments in the simulator's engine, their
measures, and the regime map.

Every experiment is a ``placement simulate`` run (:meth:`Context.simulate`: the engine with a
policy of :mod:`placement.solvers.online`, ``themis`` or ``themis+cassini`` with ``elastic=True`` (worker
counts re-tuned per lease, §5.1) unless a view says fixed gangs, the log checked by
``replay_check`` with the link factors recomputed by :mod:`placement.sim.link_check`). The
testbed is a cluster of 24 single-GPU machines with a ``network`` section (:mod:`placement.sim.network`):
the Clos reading of Fig. 10 (6 racks of 4, 13 switches, 48 links, 2:1) by default, the tree
reading (12 racks of 2, 36 links) as a second view; ``goodput`` is the transport factor
(:data:`placement.cassini.fluid.SECTION_2_2_GOODPUT` = 0.88 by default, 1 = max-min as a
second view).

Measures of one run (:func:`measure`), inside the measured window (from the first submission to
the last; for the stress test the two arriving jobs' whole runs): iteration time mean and p99
over iterations (Fig. 11(b)'s CDF is over every iteration), the same iterations' Ideal (every
job alone: its profile's iteration, the paper's dedicated-cluster benchmark), the run over
Ideal, the bound on the run's own placements (:func:`placement.sim.link_metrics.placement_bound`:
the run's mean over the mean that no shift can beat on its placements; ``ceiling`` in the rows), the time-shift adjustments of §5.7
(:func:`placement.sim.link_metrics.shift_adjustments`: the drift trigger's count and the
re-alignments of running jobs when placements change), placements per minute and the jobs
running at once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from placement.cassini.fluid import SECTION_2_2_GOODPUT
from placement.sim.cassini_workload import (
    ALL_MODELS,
    MODEL_PARALLEL,
    mp_dynamic_trace,
    multigpu_trace,
    poisson_trace,
    stress_trace,
)
from placement.sim.instance import SimInstance
from placement.sim.link_metrics import (
    ecn_marks,
    iteration_time_samples,
    placement_bound,
    shift_adjustments,
    weighted_quantile,
)
from placement.sim.links import LinkSharing
from placement.sim.log import EventLog, LogRow
from placement.sim.trace import Trace

from ..shipped import cluster_arg
from .cassini_spec import TOLERANCE
from .context import Context

__all__ = ["testbed", "experiment_trace", "measure", "run_pair", "regime_map", "KNOBS", "GAIN_RULE"]

CLOS = ("cassini-testbed-clos", "Clos, 48 links")
TREE = ("cassini-testbed", "tree, 36 links")
#: the regime map's "holds" for the Poisson gain: the paper's 1.6x within the contract's tolerance
#: (the verdict function's lower end for an effect of 0.6 over 1)
GAIN_RULE = 1 + 0.6 * (1 - TOLERANCE)


def testbed(name: str = CLOS[0], goodput: float = SECTION_2_2_GOODPUT, oversubscription: float | None = None):
    """A shipped testbed cluster with the transport's ``goodput`` factor and, when given, the
    rack uplinks set for ``oversubscription``:1 (Clos: every switch link at ``100 / k`` Gbps, a
    rack's 4 x 50 Gbps over its two uplinks; tree: the spec's ``oversubscription``)."""
    cl = cluster_arg(name)
    net = dict(cl.network)
    net["goodput"] = float(goodput)
    if oversubscription is not None:
        if net.get("kind") == "clos":
            net["link_capacity"] = net["servers_per_rack"] * net["server_capacity"] / (
                net.get("uplinks_per_rack", 1) * oversubscription)
        else:
            net["oversubscription"] = float(oversubscription)
    return replace(cl.with_network(net), name=f"{cl.name}-g{goodput:g}" + (
        f"-o{oversubscription:g}" if oversubscription is not None else ""))


def multigpu_testbed(goodput: float = SECTION_2_2_GOODPUT):
    """§5.6's testbed (Fig. 16(a)): six servers of two A100s with 50 Gbps NICs; the layout is not
    stated, ours is three racks of two servers with 2:1 rack uplinks (the testbed's
    oversubscription), the transport's ``goodput`` factor."""
    from placement.sim.cluster import Cluster

    net = {"racks": 3, "servers_per_rack": 2, "gpus_per_server": 2, "server_capacity": 50, "oversubscription": 2,
           "goodput": float(goodput)}
    cl = Cluster.uniform(racks=3, machines=2, gpus_per_machine=2, gpu_type="A100", name="cassini-multigpu")
    return cl.with_network(net)


def experiment_trace(exp: str, seed: int, hours: float, load: float = 1.0, workers: tuple[int, int] = (1, 12),
                     stress_iterations: int = 1000) -> Trace:
    """``poisson`` (all 13 models, Fig. 11), ``model-parallel`` (GPT-1/2/3 and DLRM, Fig. 12),
    ``stress`` (DLRM + ResNet50 into a busy cluster, Fig. 13, ``stress_iterations`` each),
    ``multi-gpu`` (§5.6: DLRM and a drawn job into two running ones, for :func:`multigpu_testbed`),
    ``mp-dynamic`` (Fig. 14: DLRM and a GPT into three running model-parallel jobs), seeded
    (:mod:`placement.sim.cassini_workload`)."""
    if exp == "stress":
        return stress_trace(seed, iterations=stress_iterations)
    if exp == "multi-gpu":
        return multigpu_trace(seed, iterations=stress_iterations)
    if exp == "mp-dynamic":
        return mp_dynamic_trace(seed, iterations=stress_iterations)
    models = MODEL_PARALLEL if exp == "model-parallel" else ALL_MODELS
    return poisson_trace(seed, hours=hours, load=load, models=models, workers=workers)


def _cut(log: EventLog, end: float) -> EventLog:
    """The log cut at ``end``: running jobs are closed there by a pseudo-finish (samples only)."""
    rows, running = [], {}
    for r in log:
        if r.time > end:
            break
        rows.append(r)
        if r.event == "start":
            running[r.job] = r.gpus
        elif r.event in ("finish", "preempt"):
            running.pop(r.job, None)
    rows += [LogRow(end, "finish", j, g) for j, g in running.items()]
    return EventLog(rows)


def measure(exp: str, trace: Trace, log: EventLog, links: LinkSharing) -> dict:
    """The run's measures (module docstring), from its log alone."""
    from placement.cassini.catalogue import PROFILES

    if exp == "stress":
        only = {j.id for j in trace.jobs if j.submit > 0}
        start, end = -math.inf, math.inf
    elif exp in ("multi-gpu", "mp-dynamic"):
        only, start, end = None, -math.inf, math.inf
    else:
        only = None
        start, end = trace.jobs[0].submit, max(j.submit for j in trace.jobs)
    sub = Trace(trace.name, tuple(j for j in trace.jobs if only is None or j.id in only))
    samples = iteration_time_samples(sub, _cut(log, end) if math.isfinite(end) else log)
    it = np.array([s[1] for s in samples])
    w = np.array([s[2] for s in samples])
    jobs = {j.id: j for j in trace.jobs}
    ideal = np.array([PROFILES[jobs[s[0]].model][1] for s in samples], dtype=float)
    ceil = placement_bound(trace, log, links, start, end, only=only)
    adj = shift_adjustments(trace, log, links, start, end)
    marks = ecn_marks(trace, log, links, start, end)
    dlrm = [j.id for j in trace.jobs if j.model == "DLRM" and (only is None or j.id in only) and j.submit > 0]
    mean = float(np.average(it, weights=w))
    load = gpu_load(log, links, start, end) if math.isfinite(end) else None
    ideal_mean = float(np.average(ideal, weights=w))
    return {"iter_mean": mean, "iter_p99": weighted_quantile(it, w, 0.99), "ideal_mean": ideal_mean,
            "over_ideal": mean / ideal_mean, "ceiling": ceil["ceiling"], "bound_mean": ceil["bound_ms_mean"],
            "adjust_per_job_min": adj["per_job_minute"], "adjust_steady_per_job_min": adj["per_job_minute_steady"],
            "adjust_per_min": adj["per_minute"], "realign_per_job_min": adj["realign_per_job_minute"],
            "realign_per_min": adj["realign_per_minute"], "starts_per_min": adj["starts_per_minute"],
            "jobs_at_once": adj["jobs_running_mean"], "gpu_load": load,
            "marks_dlrm": marks.get(dlrm[0], 0.0) if dlrm else None}


def gpu_load(log: EventLog, links: LinkSharing, start: float, end: float) -> float:
    """§5.1's load over ``[start, end]``: GPU-seconds serving running jobs (start to finish or
    preemption, from the log) over the cluster's GPUs times the window."""
    n_gpus = links.n_gpus
    since: dict[str, tuple[float, int]] = {}
    busy = 0.0
    for r in log:
        if r.event == "start":
            since[r.job] = (r.time, len(r.gpus))
        elif r.event in ("finish", "preempt") and r.job in since:
            t0, g = since.pop(r.job)
            busy += g * max(0.0, min(r.time, end) - max(t0, start))
    for t0, g in since.values():
        busy += g * max(0.0, end - max(t0, start))
    return busy / (n_gpus * (end - start)) if end > start else float("nan")


#: a run's name in the reproduction -> (the simulator's policy, its options besides elastic and the
#: phase spread): Random is §5.1's baseline in Themis's elastic regime (random placement), the FIFO
#: Random a second view; ``themis+cassini-starting`` is Th+CASSINI with the earlier candidate rule
#: (only the jobs starting now move, onto the GPUs free now), run beside the reassignment's
POLICY_RUNS = {"random": ("themis", {"placement": "random"}), "random-fifo": ("random", {}),
               "themis+cassini-starting": ("themis+cassini", {"candidate_rule": "starting"})}
#: the policies the phase spread applies to (network-agnostic placement in Themis or Random)
SPREAD_POLICIES = ("themis", "themis+cassini", "random")


def run_pair(ctx: Context, exp: str, cluster, trace: Trace, seed: int, tag: str,
             policies=("themis", "themis+cassini"), keep_log: bool = True,
             elastic: bool = True, agent: bool | str = True, spread: float = 1.0) -> tuple[dict[str, dict], dict]:
    """Each policy on ``trace`` over ``cluster`` (one engine run each, checked), measured:
    ``({policy: measures}, {policy: log})``. ``elastic``: Themis (and Th+CASSINI) re-tune worker
    counts per lease as §5.1 runs it (:class:`placement.solvers.online.themis.Themis`); False keeps
    fixed gangs. ``agent``: how the ``+cassini`` runs share links (:class:`placement.sim.links.LinkSharing`):
    True, §4.2 step 3's agent on the sets CASSINI found compatible (set score at least
    :data:`placement.sim.links.AGENT_MIN_SCORE`, the paper's premise); ``"all"``, on every shared
    link; False, none. With the agent the ``adjust_*`` measures are its own count and
    ``agent_share`` the share of distinct shared-link sets it acts on. The measures reuse the
    run's own link model (:func:`_measure_with`). ``spread``: the phase spread of the Themis and
    Random runs (:func:`placement.sim.links.spread_phase`; 1, start-time phases). Names of
    :data:`POLICY_RUNS` run their policy and options (``random``: Themis's auctions with random
    placement)."""
    inst = SimInstance(trace, cluster, "ideal")
    out, logs = {}, {}
    for pol in policies:
        name = f"{tag}-{pol}-s{seed}"
        policy, extra = POLICY_RUNS.get(pol, (pol, {}))
        opts = dict(extra)
        if elastic and policy.startswith("themis"):
            opts["elastic"] = True
        if spread < 1 and policy in SPREAD_POLICIES:
            opts["phase_spread"] = float(spread)
        opts = opts or None
        ag = agent if policy.endswith("+cassini") else False
        res, _rows, summ = ctx.simulate(inst, policy, seed, name, options=opts, keep_log=keep_log, agent=ag)
        m = _measure_with(exp, trace, res.log, cluster, ag, res.link_model)
        m["jct"] = summ["mean_jct_s"]
        st = ctx.last_policy.stats()
        m["moves"] = st.get("moves", 0)
        m["partial_starts"] = st.get("partial_starts", 0)
        cas = st.get("cassini") or {}
        m["link_sets"] = cas.get("mean_link_sets")
        m["candidates"] = cas["candidates"] / cas["rankings"] if cas.get("rankings") else None
        m["one_link_set"] = cas.get("share_one_link_set")
        m["renewed"], m["renewed_moved"] = cas.get("renewed"), cas.get("renewed_moved")
        ctx.row(run=name, seed=seed, experiment=exp, policy=pol, elastic=bool(opts and opts.get("elastic")),
                spread=spread, cluster=cluster.name,
                goodput=cluster.network.get("goodput", 1.0), jobs=len(trace), **m)
        out[pol] = m
        logs[pol] = res.log
    return out, logs


def _measure_with(exp: str, trace: Trace, log: EventLog, cluster, agent, model=None) -> dict:
    """:func:`measure` with the link model the run shared links with (``agent`` as :func:`run_pair`);
    ``agent`` (the rule's name) and ``agent_share`` (distinct shared-link sets the agent acted on,
    over those it saw in the measured window; None without it) added.

    ``model``: the engine's own :class:`~placement.sim.links.LinkSharing` of the run
    (``SimResult.link_model``), reused when it has ``agent``'s rule, so each fluid component is
    solved once per run: the engine solved every component of the log's intervals (the log
    records its phases exactly, so the measure's keys hit its cache), and a component's result is
    a function of its cache key alone, so the measures are the same floats as a fresh model's
    (tests/cassini/test_cassini_measure_reuse.py); ``agent_share`` counts the components the
    measure touched (:attr:`LinkSharing.seen`), as a fresh model's ``stats`` did. With
    ``--workers`` the model is the worker's, shipped back with the run's result
    (:func:`.parallel.simulate_task`), so the main process does not solve every component again
    in each pass; without one (a model that did not pickle) a fresh model with the run's rule.
    Saving, measured side by side in one process (the run's measures both ways, same log; one
    :func:`run_pair` of the Poisson trace at the quick size, 0.75 h, 89 / 106 / 104 jobs on the Clos
    testbed, Themis and Th+CASSINI, seeds 0, 1, 2): the pair's measures take 0.27 / 0.24 / 0.31 s
    instead of 6.4 / 6.1 / 5.3 s, the whole pair (engine runs, replay checks, measures) is 1.43x /
    1.27x / 1.28x faster (20.2 s -> 14.1 s on seed 0)."""
    own = model if _reusable(model, agent) else LinkSharing(cluster, agent=agent)
    if not agent:
        m = measure(exp, trace, log, own)
        m.update(agent="off", agent_share=None)
        return m
    own.seen = {}
    try:
        m = measure(exp, trace, log, own)
    finally:
        seen, own.seen = own.seen, None
    m.update(agent="compatible" if agent is True else "all",
             agent_share=sum(seen.values()) / len(seen) if seen else None)
    return m


def _reusable(model, agent) -> bool:
    """Whether ``model`` is a link model with the rule ``LinkSharing(cluster, agent=agent)`` has."""
    from placement.sim import links as lk

    return (isinstance(model, LinkSharing) and model.agent == bool(agent)
            and model.agent_min_score == (lk.AGENT_MIN_SCORE if agent is True else None)
            and model.loss == 0.0 and model.window_iterations == lk.WINDOW_ITERATIONS and model.warmup == lk.WARMUP)


# ------------------------------------------------------------------------------ the regime map
# knob -> (label, values, how a value sets up the run); the trace is the Poisson trace of all 13
# models at load 1 on the Clos with the goodput factor unless the knob changes it
KNOBS = {
    "jobs at once": ("jobs running at once (nominal, 24 GPUs / mean workers at load 1; workers 1-W)",
                     (3.7, 5.3, 9.6, 16.0)),
    "oversubscription": ("rack-uplink oversubscription k:1 (Clos)", (2.0, 4.0, 6.0, 8.0)),
    "goodput loss": ("share of a shared link's capacity lost to the transport (1 - goodput)",
                     (0.0, 0.06, 0.12, 0.24)),
    "load": ("offered load of the Poisson trace (§5.1: 80-100%)", (0.5, 0.8, 0.9, 1.0)),
    "phase spread": ("phase spread of network-agnostic jobs (1: start-time phases, 0: all in phase)",
                     (1.0, 0.5, 0.25, 0.0)),
}
#: the phase spread's calibration grid (the whole range, :func:`calibrate_phase_spread`)
PHASE_GRID = (1.0, 0.5, 0.25, 0.0)
#: Fig. 11(b)'s implied Themis / Ideal on the Poisson trace (the knob's target, a baseline number)
THEMIS_OVER_IDEAL = 1.6
_WORKERS = {3.7: 12, 5.3: 8, 9.6: 4, 16.0: 2}     # 24 / ((1 + W) / 2)


def regime_map(ctx: Context, hours: float, keep_log: bool = False, spread: float = 1.0, seeds=None) -> dict:
    """Th+CASSINI over Themis (mean iteration time) and Themis over Ideal against each knob of
    :data:`KNOBS` (the others at the main runs' values: ``spread`` the fitted phase spread), per
    seed of ``seeds`` (default the run's), recorded with ``ctx.regime`` (``regimes.csv``). A pair
    repeated at the main runs' value of several knobs (same trace, cluster, spread and seed) is
    simulated once, its rows recorded again under each knob's run names (without ``keep_log``)."""
    res: dict = {}
    # a knob at the main runs' value repeats the same pair (same trace, cluster, spread, seed: the
    # runs are seeded): it is run once and its rows recorded again under each knob's run names
    done: dict[tuple, tuple[dict, list[dict]]] = {}
    for knob, (_, values) in KNOBS.items():
        for value in values:
            for seed in (ctx.seeds if seeds is None else seeds):
                workers, cluster = (1, 12), testbed()
                sp = value if knob == "phase spread" else spread
                if knob == "jobs at once":
                    workers = (1, _WORKERS[value])
                load = 1.0
                if knob == "oversubscription":
                    cluster = testbed(oversubscription=value)
                elif knob == "goodput loss":
                    cluster = testbed(goodput=1.0 - value)
                elif knob == "load":
                    load = value
                tag = f"regime-{knob.replace(' ', '_')}-{value:g}"
                same = (workers, load, sp, seed, hours, cluster.name, repr(sorted(cluster.network.items())))
                if same in done and not keep_log:
                    r, rows = done[same]
                    for row in rows:
                        ctx.row(**{**row, "run": f"{tag}-{row['policy']}-s{seed}"})
                else:
                    trace = experiment_trace("poisson", 1000 + seed, hours, load=load, workers=workers)
                    n0 = len(ctx.rows)
                    r, _ = run_pair(ctx, "poisson", cluster, trace, seed, tag, keep_log=keep_log, spread=sp)
                    done[same] = (r, [dict(row) for row in ctx.rows[n0:]])
                gain = r["themis"]["iter_mean"] / r["themis+cassini"]["iter_mean"]
                room = r["themis"]["over_ideal"]
                res[(knob, value, seed)] = (gain, room, r["themis"]["jobs_at_once"], r["themis"]["ceiling"])
                _regime(ctx, claim=GAIN_CLAIM, knob=knob, value=value, seed=seed, ours=gain, paper=1.6,
                        holds=gain >= GAIN_RULE)
                _regime(ctx, claim=ROOM_CLAIM, knob=knob, value=value, seed=seed, ours=room, paper=THEMIS_OVER_IDEAL,
                        holds=abs(room / THEMIS_OVER_IDEAL - 1) <= 0.15)
    return res


GAIN_CLAIM = "Th+CASSINI / Themis, mean iteration time (Fig. 11(b): 1.6x)"
ROOM_CLAIM = "Themis / Ideal, mean iteration time (Fig. 11(b) implies ~1.6x: the phase spread's target)"


def fit_phase_spread(ctx: Context, hours: float, load: float = 1.0) -> tuple[float, bool, dict]:
    """Fit the phase spread (:func:`placement.sim.links.spread_phase`) to Themis / Ideal on the
    Poisson trace (Fig. 11(b)'s implied ~1.6x, a baseline number): elastic Themis on each seed's
    ``hours``-long trace at every spread of :data:`PHASE_GRID` (the whole range), the value whose
    median over seeds is nearest the target chosen. Returns ``(spread, edge, {spread: [Themis /
    Ideal per seed]})``, ``edge`` when the chosen value is an end of the range (the grid cannot be
    extended); every point also goes to the regime map (knob ``phase spread (fit, Themis only)``).
    The caller records the calibration row on its main runs (``ctx.calibrate``)."""
    cluster = testbed()
    got: dict[float, list[float]] = {}
    for sp in PHASE_GRID:
        for seed in ctx.seeds:
            trace = experiment_trace("poisson", seed, hours, load)
            r, _ = run_pair(ctx, "poisson", cluster, trace, seed, f"fit-spread-{sp:g}", policies=("themis",),
                            keep_log=False, spread=sp)
            got.setdefault(sp, []).append(r["themis"]["over_ideal"])
            _regime(ctx, claim=ROOM_CLAIM, knob="phase spread (fit, Themis only)", value=sp, seed=seed,
                    ours=r["themis"]["over_ideal"], paper=THEMIS_OVER_IDEAL,
                    holds=abs(r["themis"]["over_ideal"] / THEMIS_OVER_IDEAL - 1) <= 0.15)
    med = {sp: float(np.median(v)) for sp, v in got.items()}
    best = min(PHASE_GRID, key=lambda sp: (abs(med[sp] - THEMIS_OVER_IDEAL), -sp))
    return best, best in (PHASE_GRID[0], PHASE_GRID[-1]), got


_FALLBACK: dict[int, list[dict]] = {}


def _regime(ctx: Context, **row) -> None:
    """``ctx.regime`` (the shared regime-map API); until the context has it, the rows are kept
    here and :func:`write_regimes_fallback` writes ``regimes.csv``."""
    if hasattr(ctx, "regime"):
        ctx.regime(**row)
    else:
        _FALLBACK.setdefault(id(ctx), []).append(row)


def write_regimes_fallback(ctx: Context) -> None:
    import csv
    import io

    from ...io import write_text

    rows = _FALLBACK.pop(id(ctx), [])
    if not rows:
        return
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=["claim", "knob", "value", "seed", "ours", "paper", "holds"], lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    write_text(ctx.out / "regimes.csv", buf.getvalue())


# ------------------------------------------------------------------------------ Pollux and Po+CASSINI
def pollux_trace(trace: Trace, per_node: int = 1) -> Trace:
    """``trace`` for Pollux (§5.1's Po rows): each job's work in its goodput application's units
    (:data:`placement.cassini.catalogue.GOODPUT_ANALOGUE`, the Pollux authors' measured analogue),
    chosen so that Pollux's job is the job Themis runs: the work the analogue completes in the
    trace's duration on the trace's worker count (``ceil(gpus / per_node)`` servers, the testbed's
    one GPU each by default), at its initial batch in epoch 0, capped at the application's whole
    training. The unit is the application's progress unit, one initial-batch iteration
    (:func:`placement.sim.goodput.true_rate`), not the iterations times the initial batch (that
    gives every job 12-256x its work: ResNet50 runs 4.2 h of the stress test alone on 24 GPUs,
    ~21 Poisson jobs at once, most on one GPU)."""
    from placement.cassini.catalogue import GOODPUT_ANALOGUE
    from placement.sim.goodput import FIXED_BATCH, batch_layout, true_rate

    apps = _pollux_apps()
    out = []
    for j in trace.jobs:
        app, w = apps[GOODPUT_ANALOGUE[j.model]], int(j.gpus)
        layout = tuple(min(per_node, w - k * per_node) for k in range(-(-w // per_node)))
        b = FIXED_BATCH.get(app.name, max(app.init_batch_size, app.min_local_bsz * w))
        atomic, accum = batch_layout(app, w, b)
        atomic = min(atomic, app.max_local_bsz, int(app.max_batch_size / (w * (accum + 1))))
        rate = true_rate(app, layout, atomic, accum, 0)
        out.append(replace(j, duration=float(min(app.total, j.duration * rate))))
    return replace(trace, name=trace.name + "-pollux", jobs=tuple(out))


def _pollux_apps():
    from placement.instances.traces import pollux_dir
    from placement.sim.goodput import load_applications

    return load_applications(pollux_dir() / "traces")


def pollux_perf():
    """A fresh :class:`placement.sim.goodput.GoodputPerf` on the catalogue models' analogue
    applications (:data:`placement.cassini.catalogue.GOODPUT_ANALOGUE`)."""
    from placement.cassini.catalogue import GOODPUT_ANALOGUE
    from placement.sim.goodput import GoodputPerf

    apps = _pollux_apps()
    return GoodputPerf({m: apps[a] for m, a in GOODPUT_ANALOGUE.items()})


@dataclass(frozen=True)
class PolluxInstance(SimInstance):
    """A :class:`~placement.sim.instance.SimInstance` whose performance model is Pollux's goodput
    model on the catalogue's analogue applications (:func:`pollux_perf`, a fresh one per run), so
    Pollux runs go through :meth:`Context.simulate` like the others (log written under ``logs/``,
    provenance recorded, ``replay_check`` with the goodput check and the link-factor check)."""

    perf: str = "goodput"

    def perf_model(self):
        return pollux_perf()


#: model-parallel models of the Poisson trace and the stress test (CASSINI §5.2: "we use model
#: parallelism for the DLRM model"; §5.3: Pollux places DLRM across servers): under Pollux they keep
#: their trace's worker count (:class:`placement.solvers.online.pollux.Pollux` ``fixed_models``)
POLLUX_FIXED = ("DLRM",)
#: on the dynamic model-parallel trace (Fig. 14) GPT-2 (pipeline) and GPT-3 (hybrid) are model-parallel too
POLLUX_FIXED_MP = ("DLRM", "GPT-2", "GPT-3")


def run_pollux_pair(ctx: Context, exp: str, cluster, trace: Trace, seed: int, tag: str,
                    agent: bool | str = True, keep_log: bool = True) -> tuple[dict, dict]:
    """``pollux`` and ``pollux+cassini`` on :func:`pollux_trace` of ``trace`` (one engine run
    each through :meth:`Context.simulate` on a :class:`PolluxInstance`; the +cassini run shares
    links as ``agent`` says, :func:`run_pair`): each log written and checked by ``replay_check``
    with the goodput check and the link-factor check, a broken one recorded. Iteration times are
    the catalogue iteration over the logged link factor (:func:`measure`): the network's share of
    the iteration at Pollux's own allocation. Returns ``({policy: measures}, {policy: log})``."""
    ptrace = pollux_trace(trace, per_node=int(cluster.machine_gpus.max()))
    inst = PolluxInstance(ptrace, cluster)
    out, logs = {}, {}
    for pol in ("pollux", "pollux+cassini"):
        ag = agent if pol.endswith("+cassini") else False
        res, _rows, summ = ctx.simulate(inst, pol, seed, f"{tag}-{pol}-s{seed}", keep_log=keep_log, agent=ag,
                                        options={"fixed_models": POLLUX_FIXED_MP if exp == "mp-dynamic"
                                                 else POLLUX_FIXED})
        m = _measure_with(exp, ptrace, res.log, cluster, ag, res.link_model)
        m["jct"] = summ["mean_jct_s"]
        m["agent_adjust_per_job_min"] = m["adjust_per_job_min"] if ag else None
        out[pol], logs[pol] = m, res.log
    return out, logs
