"""``placement reproduce mast``: MAST §5.2-5.6 on its own terms, judged by :mod:`.mast_spec`.

Set-up, as the paper sets it and where ours differs
    Workload: MAST's trace is not public; §5.6's busy hours are drawn from the paper's published
    distributions (:func:`placement.sim.meta_trace.busy_trace`: §2's per-tenant priority mix,
    §5.1's gang sizes (median 16 / p90 64 / p99 128 GPUs) and durations, 8 hours: "an 8-hour
    trace"): arrivals with a daily peak at hour 4, every region full at time 0 (§3.2: demand
    consistently above supply), the demand above supply (``load`` - 1 x the cluster) waiting at
    time 0 as low-priority backlogs spread unevenly over the regions (``imbalance``: in
    proportion to their low-priority work), high-priority (levels 0-1) tables in one or two
    regions (a replica where high-priority capacity is spare, as Tetris places it). The worst
    region's high-priority demand/supply and the regions' spread come from our own Tetris run on
    the same regions (:mod:`.mast_tetris`, per seed): V1 (hill climbing) for the judged view, V0
    (the starting homes) for the regime map. Cluster: regions of unequal size
    (``Config.region_machines`` 8-GPU machines each). Quotas
    (:func:`placement.sim.meta_trace.busy_quotas`) planned for high-priority work: each
    high-priority holder gets its busiest hour's demand, levels 2-6 the rest by demand.
Policies
    ``mast`` (GMS + RMS + cross-region auction) and ``federated`` (the same GMS and RMS after
    binding each workload at arrival to the eligible region with the lowest demand/supply of
    its GPU type, §5.6).
Measures (:mod:`placement.sim.slo`, :func:`measure`)
    Scheduling events (a submission or a preemption until the next start); latency as §5.5
    lists it (queueing and scheduling plus a preemption charge of ``preempt_s``, ours) and, as a
    second reading, with container set-up too (§5.5's log-normal, P50 150 s, P90 278 s); the
    guarantee judged on the within-quota events of the guaranteed levels 0-5 (:data:`GUARANTEED`;
    the lowest level, unprioritised and over-quota work shown apart); "all the time" on hourly
    windows, each with its 95% interval; limits 10 min / 1 h / 4 h for priorities 0 / 1 / 2+ (ours:
    §5.5 gives none), levels 0-1's limit judged at each of ``judged_limits_min``; violations split
    into scheduler-caused (the latency without any charge above the limit) and overhead-caused.
§5.6's condition (:mod:`.mast_busy`)
    Per seed: in the busiest hour, is the region with the lowest high-priority demand/supply not
    the region with the most GPUs a waiting high-priority workload could use? The precondition of
    the SLO claims; where MAST and federated give the same events and violations on most seeds the
    comparison is ``not comparable``.
Readings of §4.2
    ``mast-earlier`` runs MAST with the earlier readings of (11) and the quota scan (a measure).
Regime map (``regimes.csv``)
    MAST's worst window (at most 1.3%?) and federated's worst high-priority window (above
    MAST's and 1.3%?) over the Tetris view (V1 / V0), the backlog's imbalance, the offered load,
    the high-priority share (all high-priority demand x ``high_scales``) and the SLO limit of
    levels 0-1, and over the region-imbalance sweep's backlog.
Region-imbalance sweep (:func:`placement.sim.meta_trace.imbalance_trace`)
    Two equal regions built for the situation §5.6 describes (a low-priority backlog inflates
    one region's demand/supply; ``protected`` of the other held by level-0 work); level-0
    arrivals eligible in both; reported per setting, not judged.
Allocation rate (:mod:`.mast_week`) and Tetris V0 to V1 (:mod:`.mast_tetris`)
Full: 8,192 GPUs in regions of 3,072 / 2,048 / 1,536 / 1,024 / 512, 80 tenants, 5 seeds;
``--quick``: half the size (4,096 GPUs), 40 tenants, 3 seeds (the sweep on two regions of 256 GPUs).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from . import Context, Reproduction
from .context import fmt_spread
from .mast_setup import (
    FULL,
    GUARANTEED,
    KNOBS,
    LOWEST,
    POLICIES,
    QUICK,
    RUNS,
    VIEW_KNOB,
    VIEWS,
    Config,
    H,
    cluster_of,
    overheads,
    per_seed,
    points,
    run_options,
    wilson,
)
from .mast_spec import SPEC
from .mast_week import allocation_claim

__all__ = ["REPRODUCTION", "Config", "FULL", "QUICK", "run", "POLICIES", "RUNS", "GUARANTEED", "LOWEST",
           "cluster_of", "run_options", "measure", "busy_runs", "KNOBS", "VIEWS", "wilson"]

def run(ctx: Context, config: Config | None = None) -> None:
    from .mast_tetris import HP_LOAD, tetris_views

    cfg = config or (QUICK if ctx.quick else FULL)
    cluster = cluster_of(cfg)
    paper, full = overheads(cfg)
    S = tuple(8 * m for m in cfg.region_machines)
    ctx.note(f"Cluster: {len(cfg.region_machines)} regions of {', '.join(map(str, S))} GPUs ({cluster.n_gpus} in "
             "all); the paper's regions are far larger.")
    ctx.note(f"Tetris (ours, `mast_tetris`): V0 (starting homes) and V1 (§3.4's hill climbing) per seed on a "
             f"Meta-like instance over these regions (§2's priority mix, fleet-wide high-priority demand "
             f"{HP_LOAD:g}x supply, ours); the busy hours take V1's worst-region demand/supply and spread, the "
             "regime map V0's as well; §5.6's 2.63 / 0.98 are judged, never used.")
    ctx.note(f"Workload: §5.6's busy hours (`busy_trace`: {cfg.tenants} tenants, §2's priority mix, §5.1's gangs "
             f"and durations, a daily peak at hour {cfg.peak_hour:g}, every region full at time 0 (§3.2), all "
             f"priorities at {cfg.load:g}x supply with the excess waiting as low-priority backlogs spread unevenly "
             f"(imbalance {cfg.imbalance:g}), high-priority tables in one or two regions); MAST's trace is not public.")
    ctx.note(f"SLO as §5.5-5.6 count it: within-quota events of the guaranteed levels {GUARANTEED[0]}-"
             f"{GUARANTEED[-1]} (the lowest level {LOWEST} and unprioritised work shown apart); 'all the time' on "
             "hourly windows with 95% intervals; limits 10 min / 1 h / 4 h for levels 0 / 1 / 2+ (ours; the paper "
             f"publishes none), levels 0-1 judged at {', '.join(f'{x:g}' for x in cfg.judged_limits_min)} min and "
             f"mapped at {', '.join(f'{x:g}' for x in cfg.slo_limits_min)} min.")
    ctx.note(f"Latency: §5.5's (queueing and scheduling, plus {paper.preempt_s:g} s when the start preempted work: "
             f"ours, §5.5 gives no figure); second reading: {full.describe()}. The logs keep the simulator's start "
             "times.")
    tv = {s: tetris_views(S, s) for s in ctx.seeds}
    _tetris_claims(ctx, cfg, tv)
    per = busy_runs(ctx, cfg, cluster, tv)
    sweep = _sweep(ctx, cfg)
    _calibration(ctx, cfg, per, full)        # before the claims: a claim on a knob that did not converge is uncalibrated
    _regimes(ctx, cfg, per, sweep)
    _claims(ctx, cfg, per)
    _sweep_claims(ctx, cfg, sweep)
    from . import mast_sections as sections

    sections.sweep_figure(ctx, cfg, sweep)
    if config is None:       # §5.2's allocation rate (reproduce/mast_week.py)
        allocation_claim(ctx)


TETRIS_CLAIM = "Tetris V1 lowers the most overloaded region's high-priority demand/supply"
TETRIS_KNOB = "fleet-wide high-priority demand/supply of the Tetris instance"


def _tetris_claims(ctx: Context, cfg: Config, tv: dict[int, dict[str, Any]]) -> None:
    """§5.6's Tetris paragraph judged on our own V0 and V1 (:mod:`.mast_tetris`), with V0's
    overload measured per seed as the precondition; a regime map over the instance's fleet-wide
    high-priority demand/supply."""
    from .mast_tetris import HP_LOAD, HP_LOADS, tetris_views

    seeds = ctx.seeds

    def ch(key, f):
        return [f(tv[s]["v0"][key], tv[s]["v1"][key]) for s in seeds]

    rel = lambda a, b: None if a == 0 else b / a - 1   # noqa: E731
    v0w = [tv[s]["v0"]["hp_ratio_max"] for s in seeds]
    v1w = [tv[s]["v1"]["hp_ratio_max"] for s in seeds]
    over = {"V0 overloaded": v0w}
    S = tuple(8 * m for m in cfg.region_machines)
    for hl in HP_LOADS:
        for s in seeds:
            v = tv[s] if hl == HP_LOAD else tetris_views(S, s, hp_load=hl)
            a, b = v["v0"]["hp_ratio_max"], v["v1"]["hp_ratio_max"]
            ctx.regime(claim=TETRIS_CLAIM, knob=TETRIS_KNOB, value=hl, seed=s, ours=b / a - 1 if a else None,
                       paper=SPEC.by_key["tetris.worst_change"].mid, holds=None if not a else bool(b < a))
    how = ("our Tetris instance's V0 homes are drawn concentrated (Dirichlet 0.5 over regions), not users' "
           "choices; hill climbing (V2's objective, §3.3) stands for V1")
    ctx.judge("tetris_worst", ch("hp_ratio_max", rel), measured=over,
              difference=f"V0 {fmt_spread(v0w)}, V1 {fmt_spread(v1w)}; {how}; regime map: "
                         + ctx.crossover(TETRIS_CLAIM, TETRIS_KNOB))
    ctx.judge("tetris_std", ch("hp_ratio_std", rel), measured=over,
              difference=f"V0 {fmt_spread([tv[s]['v0']['hp_ratio_std'] for s in seeds])}, V1 "
                         f"{fmt_spread([tv[s]['v1']['hp_ratio_std'] for s in seeds])}")
    ctx.judge("tetris_home", ch("home_rate", lambda a, b: 100 * (b - a)), measured=over,
              difference=f"V0 {fmt_spread([tv[s]['v0']['home_rate'] for s in seeds], '%', 100)}, V1 "
                         f"{fmt_spread([tv[s]['v1']['home_rate'] for s in seeds], '%', 100)} (ours far below the "
                         "paper's 90%: our instance's jobs read up to 3 random tables)")
    ctx.report_measure("tetris_v1_worst", v1w)
    ctx.report_measure("tetris_v0_worst", v0w)
    for s in seeds:
        ctx.row(run=f"tetris-s{s}", seed=s, view="tetris", status=tv[s]["status"],
                **{f"{v}_{k}": tv[s][v][k] for v in ("v0", "v1") for k in ("hp_ratio_max", "hp_ratio_std",
                                                                             "home_rate", "bytes_moved")})


def busy_runs(ctx: Context, cfg: Config, cluster, tv) -> dict[tuple[str, Any, int, str], dict[str, Any]]:
    """Every busy-hours setting (:func:`points`) on every seed, each run of it measured from its
    log: (kind, value, seed, run) -> :func:`measure`'s figures plus the workload's per-region
    high-priority demand/supply (``ratio``) and §5.6's condition (``condition``, from the
    federated run's log). ``tv``: the seed's Tetris views (:func:`.mast_tetris.tetris_views`). The
    default setting is ("view", "V1"); each knob's default value refers to it."""
    out: dict[tuple[str, Any, int, str], dict[str, Any]] = {}
    for seed in ctx.seeds:
        for kind, val in points(cfg):
            runs = RUNS if (kind, val) == ("view", VIEWS[0]) else POLICIES
            for pol, r in _busy_runs(ctx, cfg, cluster, kind, val, seed, runs, tv[seed]).items():
                out[(kind, val, seed, pol)] = r
        for field, _values, _ in KNOBS:
            for pol in (*POLICIES, "_trace"):
                out[(field, float(getattr(cfg, field)), seed, pol)] = out[("view", VIEWS[0], seed, pol)]
    return out


def _setting(cfg: Config, kind: str, val: Any, views: dict[str, Any]) -> dict[str, Any]:
    v1 = views["v1"]
    kw = {"worst": v1["hp_ratio_max"], "spread": v1["hp_ratio_std"], "tetris": True, "imbalance": cfg.imbalance,
          "load": cfg.load, "high_scale": cfg.high_scale}
    if kind == "view":
        if val == "V0":
            kw.update(worst=views["v0"]["hp_ratio_max"], after=v1["hp_ratio_max"], tetris=False)
    else:
        kw[kind] = val
    return kw


def _busy_runs(ctx: Context, cfg: Config, cluster, kind: str, val: Any, seed: int, runs,
               views) -> dict[str, dict[str, Any]]:
    from placement.app.policy_data import candidate_placement
    from placement.sim.instance import SimInstance
    from placement.sim.meta_trace import busy_quotas, busy_trace, high_priority_ratio

    from .mast_busy import condition

    S = tuple(8 * m for m in cfg.region_machines)
    kw = _setting(cfg, kind, val, views)
    trace, masks, homes = busy_trace(S, worst_region=cfg.worst_region, amplitude=cfg.amplitude,
                                     peak_hour=cfg.peak_hour, hours=cfg.hours, warm_fill=cfg.warm_fill,
                                     tenants=cfg.tenants, seed=seed, **kw)
    quotas = busy_quotas(trace, cluster.n_gpus, cfg.hours)
    ratio = high_priority_ratio(trace, homes, S, cfg.hours)
    out, logs = {}, {}
    for pol in runs:
        name = f"busy-{kind}{val if isinstance(val, str) else f'{val:g}'}-s{seed}-{pol}"
        policy, extra = run_options(pol)
        res, _rows, summ = ctx.simulate(SimInstance(trace, cluster, perf="ideal"), policy, seed, name,
                                        options={"data": candidate_placement(cluster, masks), "quotas": dict(quotas),
                                                 **extra})
        m = measure(trace, res.log, quotas, cfg)
        m["ratio"] = [float(x) for x in ratio]
        m["summary"] = {k: v for k, v in summ.items() if k in ("mean_utilization", "preemptions", "finished",
                                                                  "unfinished")}
        ps = res.policy_stats or {}
        m["rms_ms"] = 1000 * ps["rms_time_s"] / ps["rms_calls"] if ps.get("rms_calls") else None
        out[pol], logs[pol] = m, res.log
        common = dict(run=name, seed=seed, policy=pol, setting=kind, value=str(val))
        for lv in ("guaranteed", "high", "high_all"):
            for w in m["windows"][lv]:
                ctx.row(**common, view="window", levels=lv, **w)
        for cls, (n, v) in m["classes"].items():
            ctx.row(**common, view="class", levels=cls, events=n, violations=v, rate=v / n if n else None)
        ctx.row(**common, view="run", jobs=len(trace), worst_ratio=float(ratio[cfg.worst_region % len(S)]),
                max_ratio=float(ratio.max()), ratio_std=float(ratio.std()), worst_window=m["worst"]["guaranteed"],
                worst_window_high=m["worst"]["high"], worst_window_high_all=m["worst"]["high_all"],
                overall=m["overall"]["guaranteed"], overall_high=m["overall"]["high"],
                overall_high_all=m["overall"]["high_all"], high_within_share=m["high_within_share"],
                p95_high_s=m["p95_high_s"], p95_high_raw_s=m["p95_high_raw_s"],
                worst_window_setup=m["setup"]["worst"]["guaranteed"],
                worst_window_high_setup=m["setup"]["worst"]["high"], overall_setup=m["setup"]["overall"]["guaranteed"],
                violations=m["split"]["violations"], scheduler_caused=m["split"]["scheduler"], **m["summary"])
    cond = condition(trace, homes, logs["federated"], cluster.region, S, cfg.hours)
    ctx.row(run=f"busy-{kind}{val}-s{seed}", seed=seed, setting=kind, value=str(val), view="condition",
            **{k: (str(v) if isinstance(v, list) else v) for k, v in cond.items()})
    for m in out.values():
        m["condition"] = cond
    out["_trace"] = {"arrivals": _arrival_stats(trace), "warm": _warm_share(trace, S)}
    return out


def _arrival_stats(trace) -> dict[str, float]:
    """Gang and duration quantiles of the arrivals (the calibration rows)."""
    from placement.sim.meta_trace import WARMUP_PREFIX

    arr = [j for j in trace.jobs if not j.id.startswith(WARMUP_PREFIX)]
    g = np.array([j.gpus for j in arr], dtype=float)
    d = np.array([j.duration for j in arr], dtype=float)
    out = {f"gang_p{q}": float(np.percentile(g, q)) for q in (50, 90, 99)} if len(arr) else {}
    out.update({f"duration_p{q}_h": float(np.percentile(d, q)) / H for q in (50, 90)} if len(arr) else {})
    return out


def _warm_share(trace, S) -> float:
    """GPUs held by the work running at time 0 (not the backlog) over the cluster's."""
    from placement.sim.meta_trace import WARMUP_PREFIX

    return sum(j.gpus for j in trace.jobs if j.id.startswith(WARMUP_PREFIX) and "backlog" not in j.id) / sum(S)


def _worst(ws: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The window with the highest rate (the first on a tie); None when no window has events."""
    known = [w for w in ws if w["rate"] is not None]
    return max(known, key=lambda w: w["rate"]) if known else None


def measure(trace, log, quotas, cfg: Config) -> dict[str, Any]:
    """The SLO of one run as §5.5-5.6 count it (module docstring), with §5.5's latency (queueing
    and scheduling plus the preemption charge): hourly windows of the within-quota events of the
    guaranteed levels, of the high levels 0-1 within quota (``high``) and of every high-priority
    event (``high_all``), their worst windows (``worst``: rates; ``worst_window``: the windows),
    overall rates, events and violations per class, the share of high-priority events within
    quota, the P95 latency of within-quota high-priority events with and without the charges;
    ``by_limit``: the worst windows again with levels 0-1's SLO limit at each of
    ``cfg.slo_limits_min`` and ``cfg.judged_limits_min``; ``setup``: worst and overall rates with
    container set-up added (the second reading); ``split``: the guaranteed levels' violations and
    how many the scheduler caused (the latency without any charge above the limit)."""
    from placement.sim.meta_trace import HIGH_LEVELS, UNPRIORITISED, WARMUP_PREFIX
    from placement.sim.slo import NO_OVERHEAD, scheduling_events, slo_windows

    end = cfg.hours * H
    paper, full = overheads(cfg)

    def judged(evs):
        return [e for e in evs if (not e.job.startswith(WARMUP_PREFIX) or e.begin > 0) and 0 <= e.begin < end]

    ev = judged(scheduling_events(trace, log, quotas, overhead=paper))
    raw = judged(scheduling_events(trace, log, quotas, overhead=NO_OVERHEAD))
    with_setup = judged(scheduling_events(trace, log, quotas, overhead=full))
    keep = {"guaranteed": lambda e: e.within_quota and e.priority in GUARANTEED,
            "high": lambda e: e.within_quota and e.priority in HIGH_LEVELS,
            "high_all": lambda e: e.priority in HIGH_LEVELS}
    windows = {k: slo_windows(ev, 0.0, end, f, cfg.min_events) for k, f in keep.items()}
    classes: dict[str, tuple[int, int]] = {}

    def add(name, es):
        classes[name] = (len(es), sum(e.violated for e in es))

    for p in GUARANTEED:
        add(f"level {p}", [e for e in ev if e.within_quota and e.priority == p])
    add(f"level {LOWEST} (lowest), within quota",
        [e for e in ev if e.within_quota and e.priority == LOWEST and not e.tenant.startswith(UNPRIORITISED)])
    add("unprioritised", [e for e in ev if e.tenant.startswith(UNPRIORITISED)])
    add("over quota (prioritised tenants)", [e for e in ev if not e.within_quota
                                              and not e.tenant.startswith(UNPRIORITISED)])
    add("high priority (levels 0-1), over quota", [e for e in ev if not e.within_quota and e.priority in HIGH_LEVELS])

    def p95(evs):
        lat = [e.latency for e in evs if keep["high"](e)]
        return float(np.percentile(lat, 95)) if lat else None

    def overall(evs, f):
        es = [e for e in evs if f(e)]
        return sum(e.violated for e in es) / len(es) if es else None

    hp = [e for e in ev if e.priority in HIGH_LEVELS]
    worst_w = {k: _worst(ws) for k, ws in windows.items()}
    raw_violated = {(e.job, e.begin): e.violated for e in raw}
    guaranteed = [e for e in ev if keep["guaranteed"](e) and e.violated]
    limits = sorted(set(cfg.slo_limits_min) | set(cfg.judged_limits_min))
    return {"windows": windows, "worst_window": worst_w,
            "worst": {k: None if w is None else w["rate"] for k, w in worst_w.items()},
            "overall": {k: overall(ev, f) for k, f in keep.items()},
            "classes": classes, "p95_high_s": p95(ev), "p95_high_raw_s": p95(raw),
            "high_within_share": sum(e.within_quota for e in hp) / len(hp) if hp else None,
            "by_limit": {lim: _worst_at_limit(ev, lim * 60.0, keep, cfg) for lim in limits},
            "setup": {"worst": {k: None if (w := _worst(slo_windows(with_setup, 0.0, end, f, cfg.min_events))) is None
                                else w["rate"] for k, f in keep.items()},
                      "overall": {k: overall(with_setup, f) for k, f in keep.items()}},
            "split": {"violations": len(guaranteed),
                      "scheduler": sum(raw_violated.get((e.job, e.begin), False) for e in guaranteed)},
            "key": [(e.job, e.begin, e.within_quota, e.violated) for e in ev if keep["guaranteed"](e)]}


def _worst_at_limit(ev, limit_s: float, keep, cfg: Config) -> dict[str, float | None]:
    """The worst window's rate per view when levels 0-1 have the limit ``limit_s`` (others
    keep theirs)."""
    from placement.sim.meta_trace import HIGH_LEVELS
    from placement.sim.metrics import slo_limit
    from placement.sim.slo import slo_windows

    again = [dataclasses.replace(e, violated=e.latency > (limit_s if e.priority in HIGH_LEVELS
                                                          else slo_limit(e.priority))) for e in ev]
    return {k: max((w["rate"] for w in slo_windows(again, 0.0, cfg.hours * H, f, cfg.min_events)
                    if w["rate"] is not None), default=None) for k, f in keep.items()}


def _sweep(ctx: Context, cfg: Config) -> dict[tuple[float, float, int, str], dict[str, Any]]:
    """The region-imbalance sweep: (backlog, protected, seed, policy) -> within-quota level-0
    events and violations in the window (module docstring)."""
    from placement.app.policy_data import candidate_placement
    from placement.sim.instance import SimInstance
    from placement.sim.meta_trace import imbalance_trace
    from placement.sim.slo import scheduling_events

    S = cfg.sweep_region_gpus
    cluster = cluster_of(Config(region_machines=(S // 8, S // 8)))
    out: dict[tuple[float, float, int, str], dict[str, Any]] = {}
    for b in cfg.sweep_backlog:
        for p in cfg.sweep_protected:
            for seed in ctx.seeds:
                trace, masks, quotas = imbalance_trace(S, backlog=b, protected=p, hours=cfg.sweep_hours,
                                                       load=cfg.sweep_load, seed=seed)
                inst = SimInstance(trace, cluster, perf="ideal")
                for pol in POLICIES:
                    name = f"sweep-b{b:g}-p{p:g}-s{seed}-{pol}"
                    res, _rows, _summ = ctx.simulate(inst, pol, seed, name,
                                                     options={"data": candidate_placement(cluster, masks), "quotas": dict(quotas)})
                    ev = [e for e in scheduling_events(trace, res.log, quotas)
                          if 0 < e.begin < cfg.sweep_hours * H and e.within_quota and e.priority == 0]
                    r = {"events": len(ev), "violations": sum(e.violated for e in ev)}
                    r["rate"] = r["violations"] / r["events"] if r["events"] else None
                    out[(b, p, seed, pol)] = r
                    ctx.row(run=name, seed=seed, policy=pol, view="imbalance sweep", backlog=b, protected=p,
                            priority=0, **r)
    return out


def _sweep_claims(ctx: Context, cfg: Config, sweep) -> None:
    """The imbalance sweep as reported measures, one per setting (no setting picked after the fact)."""
    settings = [(b, p) for b in cfg.sweep_backlog for p in cfg.sweep_protected]
    for b, p in settings:
        for pol, key in (("federated", "sweep_fed"), ("mast", "sweep_mast")):
            ctx.report_measure(key, [sweep[(b, p, s, pol)]["rate"] for s in ctx.seeds], unit="%", scale=100,
                               text=f"{pol}: within-quota level-0 violations, imbalance sweep, backlog {b:g} x a "
                                    f"region, B {p:.0%} protected")
    lines = [f"Two regions of {cfg.sweep_region_gpus} GPUs; a low-priority backlog of `backlog` x a region waits "
             "for region A (inflating its demand/supply ratio); `protected` of region B is held by level-0 work; "
             f"{cfg.sweep_hours:g} h of level-0 arrivals offering {cfg.sweep_load:g} x a region, eligible in both. "
             "Within-quota level-0 violation rate over the window, median (min to max) over seeds; the last "
             "column counts the within-quota events judged.", "",
             "| backlog | protected | mast | federated | events (mast / federated) |", "|---|---|---|---|---|"]
    for b, p in settings:
        cells = [fmt_spread([sweep[(b, p, s, pol)]["rate"] for s in ctx.seeds], "%", 100) for pol in POLICIES]
        evs = [fmt_spread([sweep[(b, p, s, pol)]["events"] for s in ctx.seeds]) for pol in POLICIES]
        lines.append(f"| {b:g} | {p:.0%} | {cells[0]} | {cells[1]} | {evs[0]} / {evs[1]} |")
    lines += ["", "With no backlog the ratios tie and federation alternates between the regions, so about half "
              "the level-0 work binds to B; only the part beyond B's preemptible share then waits. A within-quota "
              "event counts the GPUs of its tenant's earlier within-quota events still waiting, so under "
              "federation work bound to B crowds later arrivals out of quota: the judged sets differ between "
              "the policies (the events column)."]
    ctx.section("Region-imbalance sweep", "\n".join(lines))


CLAIM_MAST = "MAST: within-quota violations below 1.3% at all times"
CLAIM_FED = "federated: high-priority within-quota violations above MAST's"


def _fed_holds(f: float | None, m: float | None) -> bool | None:
    if f is None or m is None:
        return None
    return bool(f > max(m, 0.013))


def _regimes(ctx: Context, cfg: Config, per, sweep) -> None:
    """The regime map: MAST's worst window (guaranteed levels) and federated's worst
    high-priority within-quota window against MAST's, over each knob of :data:`KNOBS`, the SLO
    limit of levels 0-1 (ours: the paper publishes none; judged on the same runs at each Tetris
    view) and the imbalance sweep's backlog."""
    for field, values, knob in KNOBS:
        for v in getattr(cfg, values):
            for s in ctx.seeds:
                m, f = per[(field, float(v), s, "mast")], per[(field, float(v), s, "federated")]
                mw = m["worst"]["guaranteed"]
                ctx.regime(claim=CLAIM_MAST, knob=knob, value=float(v), seed=s, ours=mw, paper=0.013,
                           holds=None if mw is None else bool(mw <= 0.013))
                ctx.regime(claim=CLAIM_FED, knob=knob, value=float(v), seed=s, ours=f["worst"]["high"],
                           paper=0.5, holds=_fed_holds(f["worst"]["high"], m["worst"]["high"]))
    for v in VIEWS:
        for s in ctx.seeds:
            m, f = per[("view", v, s, "mast")], per[("view", v, s, "federated")]
            mw = m["worst"]["guaranteed"]
            ctx.regime(claim=CLAIM_MAST, knob=VIEW_KNOB, value=v, seed=s, ours=mw, paper=0.013,
                       holds=None if mw is None else bool(mw <= 0.013))
            ctx.regime(claim=CLAIM_FED, knob=VIEW_KNOB, value=v, seed=s, ours=f["worst"]["high"], paper=0.5,
                       holds=_fed_holds(f["worst"]["high"], m["worst"]["high"]))
    for v in VIEWS:
        knob = f"SLO limit of levels 0-1 (min), Tetris view {v}"
        for lim in cfg.slo_limits_min:
            for s in ctx.seeds:
                m = per[("view", v, s, "mast")]["by_limit"][lim]
                f = per[("view", v, s, "federated")]["by_limit"][lim]
                ctx.regime(claim=CLAIM_MAST, knob=knob, value=float(lim), seed=s, ours=m["guaranteed"], paper=0.013,
                           holds=None if m["guaranteed"] is None else bool(m["guaranteed"] <= 0.013))
                ctx.regime(claim=CLAIM_FED, knob=knob, value=float(lim), seed=s, ours=f["high"], paper=0.5,
                           holds=_fed_holds(f["high"], m["high"]))
    for p in cfg.sweep_protected:
        knob = f"low-priority backlog for region A (x a region; B {p:.0%} protected)"
        for b in cfg.sweep_backlog:
            for s in ctx.seeds:
                m, f = sweep[(b, p, s, "mast")]["rate"], sweep[(b, p, s, "federated")]["rate"]
                ctx.regime(claim=CLAIM_MAST, knob=knob, value=float(b), seed=s, ours=m, paper=0.013,
                           holds=None if m is None else bool(m <= 0.013))
                ctx.regime(claim=CLAIM_FED, knob=knob, value=float(b), seed=s, ours=f, paper=0.5,
                           holds=_fed_holds(f, m))


def identical(per, kind, v, seed) -> bool:
    """Whether MAST and federated give the same judged events (job, begin, within quota,
    violated) on a seed: then the comparison says nothing about the policies."""
    return per[(kind, v, seed, "mast")]["key"] == per[(kind, v, seed, "federated")]["key"]


def _interval_text(per, kind, v, seeds, pol, levels: str) -> str:
    """Each seed's worst window: violations of events, its hours and its 95% interval."""
    out = []
    for s in seeds:
        w = per[(kind, v, s, pol)]["worst_window"][levels]
        if w is None:
            out.append(f"s{s}: no event")
            continue
        lo, hi = wilson(w["violations"], w["events"])
        out.append(f"s{s}: {w['violations']} of {w['events']} in {w['lo'] / H:g}-{w['hi'] / H:g} h "
                   f"[{100 * lo:.1f}, {100 * hi:.1f}]%")
    return "; ".join(out)


def _claims(ctx: Context, cfg: Config, per) -> None:
    """The SLO claims of §5.6 on the V1 view, each under every reading of the latency and of
    levels 0-1's limit, with §5.6's condition measured per seed as their precondition."""
    seeds = ctx.seeds
    v = VIEWS[0]
    cond = {"condition": [float(bool(per[("view", v, s, "mast")]["condition"]["holds_all"])) for s in seeds]}
    same = [identical(per, "view", v, s) for s in seeds]
    held = [s for s, c in zip(seeds, cond["condition"], strict=True) if c]
    n_same = sum(x for s, x in zip(seeds, same, strict=True) if s in held)
    comparable = not held or 2 * n_same <= len(held)
    why = (f"MAST and federated give the same events and violations on {n_same} of the {len(held)} seeds where "
           "§5.6's condition holds")
    crossings = "; ".join(ctx.crossover(CLAIM_MAST, k) for _, _, k in KNOBS)
    for lim in cfg.judged_limits_min:
        reading = f"§5.5 latency, levels 0-1 limit {lim:g} min"
        ctx.judge("mast_slo", [per[("view", v, s, "mast")]["by_limit"][lim]["guaranteed"] for s in seeds],
                  measured=cond, reading=reading,
                  difference=("worst windows at the default limits: "
                              + _interval_text(per, "view", v, seeds, "mast", "guaranteed")
                              + f"; regime map: {crossings}") if lim == 10.0 else "")
        ctx.judge("fed_high", [per[("view", v, s, "federated")]["by_limit"][lim]["high"] for s in seeds],
                  measured=cond, reading=reading, comparable=comparable, not_comparable=why,
                  difference=("worst windows at the default limits: "
                              + _interval_text(per, "view", v, seeds, "federated", "high")) if lim == 10.0 else "")
    reading = "latency with container set-up, default limits"
    ctx.judge("mast_slo", [per[("view", v, s, "mast")]["setup"]["worst"]["guaranteed"] for s in seeds],
              measured=cond, reading=reading)
    ctx.judge("fed_high", [per[("view", v, s, "federated")]["setup"]["worst"]["high"] for s in seeds],
              measured=cond, reading=reading, comparable=comparable, not_comparable=why)
    for name, path in (("§5.5 latency, default limits", ("overall",)), (reading, ("setup", "overall"))):
        diff = []
        for s in seeds:
            a, b = per[("view", v, s, "federated")], per[("view", v, s, "mast")]
            for k in path:
                a, b = a[k], b[k]
            diff.append(None if a["guaranteed"] is None or b["guaranteed"] is None
                        else a["guaranteed"] - b["guaranteed"])
        ctx.judge("fed_higher", diff, measured=cond, reading=name, comparable=comparable, not_comparable=why)
    res = []
    for s in seeds:
        w = per[("view", v, s, "mast")]["worst_window"]["guaranteed"]
        res.append(None if w is None else wilson(w["violations"], w["events"])[1])
    ctx.report_measure("slo_resolution", res, unit="%", scale=100)
    ctx.report_measure("condition_share", cond["condition"], text="§5.6's condition holds (1) or not (0), V1 view")
    ctx.report_measure("condition_hp", [float(bool(per[("view", v, s, "mast")]["condition"]["holds"])) for s in seeds],
                       text="§5.6's condition with the lowest high-priority demand/supply holds (1) or not (0), V1 view")
    ctx.report_measure("identical_runs", [float(x) for x in same],
                       text="MAST and federated give the same judged events (1) or not (0), V1 view")
    for pol in POLICIES:
        split = [per[("view", v, s, pol)]["split"] for s in seeds]
        ctx.report_measure("scheduler_caused", [x["scheduler"] / x["violations"] if x["violations"] else None
                                                for x in split], unit="%", scale=100,
                           text=f"{pol}: share of the guaranteed levels' violations the scheduler caused (latency "
                                "without any charge above the limit)",
                           difference="violations: " + ", ".join(f"{x['scheduler']} of {x['violations']}"
                                                                 for x in split))
    e = per_seed(per, "view", v, seeds, "mast-earlier", "worst", "guaranteed")
    ctx.report_measure("mast_earlier", e, unit="%", scale=100,
                       difference="(11) divided by the mean over active tenants; the quota scan from within-quota "
                                  "running workloads only")
    ctx.report_measure("rms_ms", per_seed(per, "view", v, seeds, "mast", "rms_ms"), unit=" ms",
                       difference="wall-clock on this machine, shared; §5.4's slowest production RMS: 1.3 ms without "
                                  "preemption, 5.5 ms with")
    ctx.report_measure("p95_mast", per_seed(per, "view", v, seeds, "mast", "p95_high_s"), unit=" min", scale=1 / 60,
                       difference="without the charges: "
                                  + fmt_spread(per_seed(per, "view", v, seeds, "mast", "p95_high_raw_s"), " min", 1 / 60))
    ctx.report_measure("p95_fed", per_seed(per, "view", v, seeds, "federated", "p95_high_s"), unit=" min", scale=1 / 60,
                       difference="without the charges: " + fmt_spread(
                           per_seed(per, "view", v, seeds, "federated", "p95_high_raw_s"), " min", 1 / 60))
    from . import mast_sections as sections

    sections.latency_figure(ctx, cfg, per)
    sections.workload_section(ctx, cfg, per)
    sections.condition_section(ctx, cfg, per)
    sections.class_section(ctx, cfg, per)
    sections.window_section(ctx, cfg, per)


def _calibration(ctx: Context, cfg: Config, per, over) -> None:
    """The knobs fitted to §5.1's and §5.5's set-up numbers, measured on the busy-hours arrivals
    and on the set-up draws (medians over seeds; ``calibration.csv``)."""
    seeds = ctx.seeds
    base = [per[("view", VIEWS[0], s, "_trace")] for s in seeds]

    def med(xs):
        xs = [x for x in xs if x is not None]
        return float(np.median(xs)) if xs else None

    for q in (50, 90, 99):
        ctx.calibrate(knob="gang_mix", value="GANG_PROBS", target=f"gang.p{q}", label=f"P{q}, arrivals",
                      ours=med([b["arrivals"].get(f"gang_p{q}") for b in base]))
    for q in (50, 90):
        ctx.calibrate(knob="durations", value="PAPER_LOG_DURATION", target=f"duration.p{q}",
                      label=f"P{q} (h), arrivals, cut to end by {2 * cfg.hours:g} h",
                      ours=med([b["arrivals"].get(f"duration_p{q}_h") for b in base]))
    draws = np.array([over.setup(f"draw{i}", 0.0) for i in range(20000)])
    for q in (50, 90, 99):
        ctx.calibrate(knob="setup_time", value=f"{over.setup_p50_s:g} / {over.setup_p90_s:g} s",
                      target=f"setup.p{q}", label=f"P{q} (s), 20,000 draws" + (", out of sample" if q == 99 else ""),
                      ours=float(np.percentile(draws, q)))


REPRODUCTION = Reproduction(
    name="mast", title="MAST (Global Scheduling of ML Training across Geo-Distributed Datacenters, OSDI 2024)",
    summary="§5.2, §5.5-5.6: within-quota SLO of the guaranteed levels in §5.6's busy hours, MAST vs federated, "
            "on hourly windows and a range of limits; the allocation rate after a warm-up; Tetris's V0 to V1 from "
            "our own Tetris run; regime maps over Tetris view, backlog imbalance, load, high-priority share and "
            "SLO limit",
    run=run, seeds=5, quick_seeds=3, spec=SPEC)
