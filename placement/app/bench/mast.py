"""MAST fast-path benchmark sections (app layer): GMS and RMS speed, the negative cache,
RMS against its exact MIP, and (on the simulator) MAST against the federated baseline.

Sections
--------
GMS-scan (§5.4)
    One pass over 10,000 pending workloads of 200 tenants with a day of usage history:
    window averages, credit (10)-(11), the quota scan, the <priority, credit> order.
    Goal <= 0.5 s (paper: ~34 s for 6-10k workloads in Python).
RMS per workload (§5.4)
    One region of 20 dynamic clusters, 20,480 GPUs (8 per machine, 16 machines per rack),
    random running jobs; requests of mixed sizes and priorities against a region with
    2% of its GPUs free (most plans need no preemption) and a full region (every plan
    preempts). Goals <= 1 ms and <= 2 ms (paper: 1.3 ms and 5.5 ms).
Negative cache
    A GMS-scan pass of pending workloads (priority order) against a full region, the
    cache on and off, the same requests in the same run: hit rate, identical decisions,
    speed ratio.
RMS vs the MIP
    Generated dynamic-cluster snapshots, mostly full: how often RMS's plan is
    lexicographically optimal and the worst gap, per cost component.
A week at Meta's scale (``--scale``)
    FIFO and MAST side by side on 7 days of the Meta-like workload on 102,400 GPUs in 20
    regions (:func:`mast_week_run`): wall time, ratio (goal <= 3x), peak RSS (goal 4 GB), the
    allocation rate (§5.2), GMS-scan and RMS times beside §5.4's 34 s and 1.3 / 5.5 ms.
Whole Philly trace (``--scale``)
    FIFO and MAST side by side on the whole trace, 1,024 GPUs in 4 regions, observed
    durations (:func:`philly_whole_run`): wall time of each, the MAST / FIFO ratio (goal 6x),
    peak RSS, makespan. Measured once (2 busy cores): FIFO 29.1 s, MAST 79.6 s, 2.7x; peak
    RSS 165 / 221 MiB; both end on day 108.9, no replay_check violation. Under the Dally perf
    model (``perf="dally"``): FIFO 17.7 s, MAST 307.6 s, 17.4x, makespans 3,891 days (FIFO,
    philly-65656) and 1,892 days (MAST): multi-GPU jobs run up to 197x longer, the queue
    grows long, and MAST's passes scan it all where FIFO stops at its head.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import numpy as np

from ...registry import BenchSection
from ..report import markdown_table as _md

__all__ = ["bench_sections", "slo_report", "scheduling_events", "compare_run", "cache_sim_run",
           "philly_whole_run", "uniform_region", "gms_scan_run", "rms_speed_run", "negative_cache_run",
           "rms_vs_mip_run", "mast_week_run"]


def uniform_region(n_dclusters: int = 20, racks: int = 8, machines: int = 16, gpus: int = 8, *,
                   fill: float = 1.0, seed: int = 0):
    """A region of identical machines filled with random jobs up to ``fill`` of its GPUs."""
    from placement.solvers.online.rms import RegionState, choose_machines

    rng = np.random.default_rng(seed)
    per = racks * machines
    s = RegionState(np.repeat(np.arange(n_dclusters), per), np.repeat(np.arange(n_dclusters * racks), machines),
                    np.zeros(n_dclusters * per, dtype=np.int64), np.full(n_dclusters * per, gpus))
    target = (1 - fill) * s.capacity.sum()
    sizes = np.array([1, 1, 2, 4, 8, 8, 16, 32, 64])
    j = 0
    while s.free.sum() > target:
        d = int(rng.integers(n_dclusters))
        ms = s.machines_of(d, 0)
        a = s.free[ms]
        if a.sum() == 0:
            continue
        n = int(min(a.sum(), rng.choice(sizes), max(1, s.free.sum() - target)))
        sel, c = choose_machines(a, s.rack[ms], n)
        s.add_job(f"bg{j}", int(rng.integers(1, 7)), float(j), ms[sel], c)
        j += 1
    return s


def slo_report(events: list[tuple], limits: dict, end: float, bucket: float = 3600.0,
               start: float = 0.0) -> dict:
    """SLO violations of scheduling events, per priority and over time.

    ``events``: ``(priority, since, started)`` per scheduling event (a workload entering
    the queue at ``since`` by submission or preemption, running from ``started`` or None).
    An event with a limit L (``limits[priority]``; levels without a limit are not judged)
    is judged at its deadline ``since + L`` when that is <= ``end``: violated when it had
    not started by then. Returns per-priority counts and rates, the overall rate, and a
    series of (bucket start, priority, judged, violated) over deadline buckets.
    """
    per: dict = {}
    series: dict = {}
    for prio, since, started in events:
        lim = limits.get(int(prio))
        if lim is None:
            continue
        deadline = since + lim
        if deadline > end:
            continue
        bad = started is None or started - since > lim
        c = per.setdefault(int(prio), [0, 0])
        c[0] += 1
        c[1] += bad
        b = start + bucket * np.floor((deadline - start) / bucket)
        s = series.setdefault((float(b), int(prio)), [0, 0])
        s[0] += 1
        s[1] += bad
    judged = sum(c[0] for c in per.values())
    violated = sum(c[1] for c in per.values())
    return {"per_priority": {p: {"judged": c[0], "violated": c[1], "rate": c[1] / c[0]} for p, c in sorted(per.items())},
            "judged": judged, "violated": violated, "rate": violated / judged if judged else 0.0,
            "series": [(b, p, c[0], c[1]) for (b, p), c in sorted(series.items())]}


def gms_scan_run(n_pending: int = 10_000, n_tenants: int = 200, seed: int = 0, repeats: int = 5) -> dict:
    from placement.solvers.online.gms import GmsParams, TenantUsage, gms_scan

    rng = np.random.default_rng(seed)
    now = 86_400.0
    usage = TenantUsage(n_tenants)
    for t in np.sort(rng.uniform(0, now, 20_000)):
        k = int(rng.integers(n_tenants))
        usage.change(float(t), k, int(rng.integers(-int(usage.current[k]), 9)))
    queued = rng.uniform(0, now, n_pending)
    prio = rng.choice(7, n_pending, p=[0.03, 0.2, 0.16, 0.54, 0.002, 0.005, 0.063])
    tenant = rng.integers(0, n_tenants, n_pending)
    demand = rng.choice([1, 2, 4, 8, 16, 32, 64], n_pending)
    quota = rng.integers(8, 512, n_tenants)
    params = GmsParams()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        avg = usage.window_avg(now, params.window)
        scan = gms_scan(now, queued, prio, tenant, demand, usage.current.copy(), quota, avg, params)
        times.append(time.perf_counter() - t0)
    return {"pending": n_pending, "tenants": n_tenants, "scan_s_median": statistics.median(times),
            "scan_s_max": max(times), "over_quota": int((~scan.within_quota).sum())}


def rms_speed_run(fill: float, n_requests: int = 400, seed: int = 0) -> dict:
    from placement.solvers.online.rms import plan_region

    s = uniform_region(fill=fill, seed=seed)
    rng = np.random.default_rng(seed + 1)
    reqs = [(int(rng.choice([1, 2, 4, 8, 16, 32, 64])), int(rng.integers(0, 4))) for _ in range(n_requests)]
    times, pre, none = [], 0, 0
    for n, p in reqs:
        t0 = time.perf_counter()
        plan = plan_region(s, n, 0, p)
        times.append(time.perf_counter() - t0)
        none += plan is None
        pre += plan is not None and plan.cost[0] == 1
    return {"gpus": int(s.capacity.sum()), "dclusters": s.n_dclusters, "running_jobs": len(s.jobs()),
            "free_share": float(s.free.sum() / s.capacity.sum()), "requests": n_requests,
            "with_preemption": pre, "no_plan": none, "ms_median": 1e3 * statistics.median(times),
            "ms_mean": 1e3 * statistics.fmean(times), "ms_p99": 1e3 * float(np.percentile(times, 99))}


def negative_cache_run(n_pending: int = 3000, seed: int = 0) -> dict:
    """One pass over pending workloads in priority order, cache on vs off (same requests)."""
    from placement.solvers.online.rms import NegativeCache, plan_region

    rng = np.random.default_rng(seed + 2)
    prio = np.sort(rng.choice(7, n_pending, p=[0.03, 0.2, 0.16, 0.54, 0.002, 0.005, 0.063]), kind="stable")
    sizes = rng.choice([1, 2, 4, 8, 16, 32, 64, 128, 256], n_pending)
    out, logs = {}, {}
    for enabled in (True, False):
        s = uniform_region(fill=1.0, seed=seed)
        cache = NegativeCache(enabled=enabled)
        log = []
        t0 = time.perf_counter()
        for i in range(n_pending):
            n, p = int(sizes[i]), int(prio[i])
            key = (p, 0)
            if cache.failed(key, n):
                log.append(None)
                continue
            plan = plan_region(s, n, 0, p)
            if plan is None:
                cache.store(key, n)
                log.append(None)
                continue
            jobs = s.jobs()
            levels = [jobs[v][0] for v in plan.victims]
            s.apply(plan, f"w{i}", p, 1e6)
            cache.placed(min(levels) if levels else None)
            log.append((plan.dcluster, plan.victims, plan.machines.tolist()))
        out[enabled] = time.perf_counter() - t0
        logs[enabled] = log
        if enabled:
            hit_rate = cache.hit_rate
    return {"pending": n_pending, "placed": sum(x is not None for x in logs[True]), "hit_rate": hit_rate,
            "same_decisions": logs[True] == logs[False], "s_cache_on": out[True], "s_cache_off": out[False],
            "speedup": out[False] / max(out[True], 1e-9)}


def rms_vs_mip_run(n_cases: int = 60, seed: int = 0) -> dict:
    """RMS's plan vs the lexicographic MIP on generated, mostly full dynamic clusters."""
    from placement.models.mast_rms import COST_NAMES, evaluate_plan
    from placement.models.mast_rms import solve as mip_solve
    from placement.solvers.online.rms import RegionState, choose_machines, plan_dcluster

    rng = np.random.default_rng(seed)
    rows, mip_s, rms_s = [], 0.0, 0.0
    for case in range(n_cases):
        racks, per = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        s = RegionState(np.zeros(racks * per, int), np.repeat(np.arange(racks), per), np.zeros(racks * per, int),
                        rng.choice([2, 4, 8], racks * per))
        for j in range(60):
            if s.free.sum() <= 0.05 * s.capacity.sum():
                break
            ms = s.machines_of(0, 0)
            n = int(rng.integers(1, min(int(s.free.sum()), 12) + 1))
            sel, c = choose_machines(s.free[ms], s.rack[ms], n)
            s.add_job(f"j{j}", int(rng.integers(0, 7)), float(rng.integers(0, 1000)), ms[sel], c)
        n, p = int(rng.integers(1, int(s.capacity.sum()) + 1)), int(rng.integers(0, 6))
        t0 = time.perf_counter()
        plan = plan_dcluster(s, 0, n, 0, p)
        rms_s += time.perf_counter() - t0
        view = s.dcluster_view(0, 0)
        res = mip_solve(view, n, p)
        mip_s += res.wall_time_s
        if plan is None:
            rows.append({"case": case, "status": str(res.status), "rms": None, "mip": None})
            continue
        take = np.zeros(len(view["machines"]), dtype=np.int64)
        take[s.local[plan.machines]] = plan.counts
        cost, bad = evaluate_plan(view, n, p, plan.victims, take)
        assert not bad and res.status == "optimal"
        mip = res.stats["cost"]
        first = next((COST_NAMES[i] for i in range(len(cost)) if abs(cost[i] - mip[i]) > 1e-6), None)
        rows.append({"case": case, "status": "optimal" if first is None else f"worse in {first}",
                     "rms": cost, "mip": mip, "first_diff": first,
                     "diff": None if first is None else cost[COST_NAMES.index(first)] - mip[COST_NAMES.index(first)]})
    placed = [r for r in rows if r["rms"] is not None]
    worse = [r for r in placed if r["first_diff"] is not None]
    worst = max(worse, key=lambda r: (COST_NAMES.index(r["first_diff"]) * -1, r["diff"]), default=None)
    return {"cases": n_cases, "with_plan": len(placed), "preempting": sum(r["mip"][0] for r in placed),
            "rms_optimal": len(placed) - len(worse), "worst": worst, "rows": rows,
            "mip_s_mean": mip_s / n_cases, "rms_ms_mean": 1e3 * rms_s / n_cases}


# ----------------------------------------------------------------------------- simulator runs
BUSY_WINDOW = {"start": 50 * 86400.0, "hours": 8.0}
"""Philly's day 50 (the simulator's quick window, measured busy), its first 8 hours."""
BUSY_CLUSTER = {"regions": 4, "clusters": 1, "racks": 2, "machines": 2, "gpus_per_machine": 8}
"""128 GPUs in 4 regions of one dynamic cluster (2 racks of 2 8-GPU machines): busy for the window."""


def scheduling_events(log, trace) -> list[tuple]:
    """§5.5's scheduling events from a log: ``(priority, since, started)`` per queue entry
    (submission or preemption), ``started`` None when it never ran again."""
    prio = {j.id: j.priority for j in trace.jobs}
    open_: dict = {}
    out = []
    for r in log:
        if r.event in ("submit", "preempt"):
            open_[r.job] = r.time
        elif r.event == "start" and r.job in open_:
            out.append((prio[r.job], open_.pop(r.job), r.time))
    out += [(prio[j], t, None) for j, t in open_.items()]
    return out


def compare_run(trace, cluster, policies=("mast", "federated"), seed: int = 0, options: dict | None = None,
                bucket: float = 3600.0) -> dict:
    """Each policy on the trace: replay_check, SLO violations per priority and over time."""
    from ...sim.engine import simulate
    from ...sim.metrics import DEFAULT_SLO, slo_limit
    from ...sim.replay import replay_check
    from ..policy_data import build_policy

    end = max(j.submit for j in trace.jobs) if trace.jobs else 0.0
    t_start = min(j.submit for j in trace.jobs) if trace.jobs else 0.0
    prios = sorted({j.priority for j in trace.jobs})
    limits = {p: slo_limit(p, DEFAULT_SLO) for p in prios}
    out = {}
    for name in policies:
        t0 = time.perf_counter()
        res = simulate(trace, cluster, build_policy(name, cluster, **(options or {})), seed=seed)
        wall = time.perf_counter() - t0
        ev = scheduling_events(res.log, trace)
        delays = [s - q for _, q, s in ev if s is not None]
        out[name] = {"result": res, "wall_s": wall, "replay": replay_check(trace, cluster, res.log),
                     "slo": slo_report(ev, limits, end=end + max(limits.values()), bucket=bucket, start=t_start),
                     "mean_delay_s": float(np.mean(delays)) if delays else 0.0,
                     "p95_delay_s": float(np.percentile(delays, 95)) if delays else 0.0,
                     "limits": limits}
    return out


BUSY_CONFIGS = (("Tetris replicas, quotas", {}),
                ("no data constraint, no quotas", {"data": None, "quota_share": 1e3}))


def _busy_section(out_dir: Path, quick: bool, seed: int) -> BenchSection:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from placement.instances.traces import trace_path

    from ...sim.cluster import Cluster
    from ...sim.trace import load_philly
    from ..report import save_figure

    window = dict(BUSY_WINDOW, hours=2.0) if quick else BUSY_WINDOW
    trace = load_philly(trace_path("philly.csv"), **window)
    cluster = Cluster.uniform(**BUSY_CLUSTER)
    rows, summary, worst_txt = [], [], []
    fig, axes = plt.subplots(len(BUSY_CONFIGS), 2, figsize=(11, 3.4 * len(BUSY_CONFIGS)), squeeze=False)
    limits = None
    for ci, (label, options) in enumerate(BUSY_CONFIGS):
        runs = compare_run(trace, cluster, seed=seed, options=options)
        for pi, (name, run) in enumerate(runs.items()):
            slo = run["slo"]
            limits = run["limits"]
            row = {"setting": label, "policy": name, "jobs": len(trace.jobs), "judged": slo["judged"],
                   "violation_rate": slo["rate"], "mean_delay_s": run["mean_delay_s"],
                   "p95_delay_s": run["p95_delay_s"], "preemptions": run["result"].stats["preemptions"],
                   "replay_violations": len(run["replay"]), "wall_s": round(run["wall_s"], 2)}
            for p, c in slo["per_priority"].items():
                row[f"rate_p{p}"] = c["rate"]
            ser = slo["series"]
            row["worst_hour"] = max((v / j for _, _, j, v in ser if j), default=0.0)
            row["worst_hour_p0"] = max((v / j for _, q, j, v in ser if j and q == 0), default=0.0)
            rows.append(row)
            ax = axes[ci][pi]
            t0 = min((b for b, *_ in ser), default=0.0)
            for p in sorted({x[1] for x in ser}):
                pts = [(b, v / j) for b, q, j, v in ser if q == p and j]
                ax.plot([(b - t0) / 3600 for b, _ in pts], [100 * v for _, v in pts], "o-", label=f"priority {p}")
            ax.set_title(f"{name}, {label}", fontsize=9)
            ax.set_xlabel("hour of the deadline")
            ax.set_ylabel("SLO violations (%)")
            ax.legend(fontsize=7)
        m, f = rows[-2], rows[-1]
        worst_txt.append(f"{label}: worst hour MAST {100 * m['worst_hour']:.1f}% vs federated "
                         f"{100 * f['worst_hour']:.1f}% (priority 0: {100 * m['worst_hour_p0']:.1f}% vs "
                         f"{100 * f['worst_hour_p0']:.1f}%), overall {100 * m['violation_rate']:.1f}% vs "
                         f"{100 * f['violation_rate']:.1f}%")
    fig.tight_layout()
    fig_name = save_figure(fig, out_dir, "mast_vs_federated_slo.png")
    prio_cols = sorted({k for r in rows for k in r if k.startswith("rate_p")})
    md = (f"Philly day 50, {window['hours']:g} h window ({len(trace.jobs)} jobs, priorities synthetic), "
          f"{cluster.n_gpus} GPUs in {BUSY_CLUSTER['regions']} regions (one dynamic cluster of "
          f"{cluster.n_gpus // BUSY_CLUSTER['regions'] // BUSY_CLUSTER['clusters']} GPUs each); SLO limits "
          f"{limits} s on the scheduling latency of every queue entry (submission or preemption, §5.5), "
          "judged at the deadline. " + "; ".join(worst_txt) + ". Paper (§5.6): MAST <= 1.3% at all times, "
          "federated up to 50% for high priority at peak.\n\n"
          + _md(rows, ["setting", "policy", "judged", "violation_rate", *prio_cols, "worst_hour", "worst_hour_p0",
                       "mean_delay_s", "p95_delay_s", "preemptions", "replay_violations", "wall_s"]))
    summary.append(f"mast: busy {window['hours']:g} h Philly window on {cluster.n_gpus} GPUs: " + "; ".join(worst_txt)
                   + f"; replay_check violations {sum(r['replay_violations'] for r in rows)}")
    return BenchSection("MAST vs federated: SLO violations on a busy window (§5.6)", md, rows, [fig_name], summary)


def cache_sim_run(trace, cluster, seed: int = 0) -> dict:
    """The same simulation with the negative cache on and off: identical logs, work and time."""
    from ...sim.engine import simulate
    from ..policy_data import build_policy

    out = {}
    for on in (True, False):
        t0 = time.perf_counter()
        res = simulate(trace, cluster, build_policy("mast", cluster, negative_cache=on, prefilter=False), seed=seed)
        out[on] = (time.perf_counter() - t0, res)
    a, b = out[True][1], out[False][1]
    return {"same_log": a.log.to_csv() == b.log.to_csv(), "hit_rate": a.policy_stats["cache_hit_rate"],
            "rms_calls_on": a.policy_stats["rms_calls"], "rms_calls_off": b.policy_stats["rms_calls"],
            "rms_s_on": a.policy_stats["rms_time_s"], "rms_s_off": b.policy_stats["rms_time_s"],
            "wall_on": out[True][0], "wall_off": out[False][0]}


def philly_whole_run(seed: int = 0, perf: str = "ideal", policies: tuple[str, ...] = ("fifo", "mast"),
                     hours: float | None = None) -> dict:
    """The whole Philly trace (or its first ``hours``) on 1,024 GPUs in 4 regions
    (``--cluster 4x2x2x8x8``), FIFO and MAST side by side on the same trace, cluster, perf model
    and process: wall time of each, MAST / FIFO ratio, process peak RSS after each run,
    makespan in days, the last job to finish, replay_check.

    ``perf="ideal"`` (the default of ``placement simulate`` on a trace file) runs jobs for their
    observed durations. ``perf="dally"`` multiplies a multi-GPU job's time by 1 + its Table 1
    overhead at the widest tier it spans, with the model each Philly job is labelled with
    (synthetic, drawn per job): a 4-GPU MobileNetV3 job across dynamic clusters runs 196.9x
    slower, so one 19-day job ends thousands of days after the trace's last arrival (day 109)."""
    import resource

    from placement.instances.traces import trace_path

    from ...sim.cluster import Cluster
    from ...sim.engine import simulate
    from ...sim.perf import DallyPerf, IdealPerf
    from ...sim.replay import replay_check
    from ...sim.trace import load_philly
    from ..policy_data import build_policy

    trace = load_philly(trace_path("philly.csv"), hours=hours)
    cluster = Cluster.uniform(regions=4, clusters=2, racks=2, machines=8, gpus_per_machine=8)
    model = IdealPerf() if perf == "ideal" else DallyPerf()
    out: dict = {"jobs": len(trace.jobs), "gpus": cluster.n_gpus, "perf": perf,
                 "last_submit_days": max(j.submit for j in trace.jobs) / 86400.0}
    for name in policies:
        t0 = time.perf_counter()
        res = simulate(trace, cluster, build_policy(name, cluster), perf=model, seed=seed)
        wall = time.perf_counter() - t0
        fin = [r for r in res.log if r.event == "finish"]
        last = max(fin, key=lambda r: r.time) if fin else None
        out[name] = {"wall_s": wall, "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                     "replay_violations": len(replay_check(trace, cluster, res.log, perf=model)),
                     "unfinished": len(res.unfinished), "makespan_days": (last.time / 86400.0) if last else 0.0,
                     "last_job": last.job if last else None, "stats": res.policy_stats}
    if "fifo" in out and "mast" in out:
        out["ratio"] = out["mast"]["wall_s"] / out["fifo"]["wall_s"]
    return out


def mast_week_run(days: float = 7.0, cluster_text: str = "20x1x8x80x8", seed: int = 0,
                  policies: tuple[str, ...] = ("fifo", "mast"), echo=None) -> dict:
    """FIFO and MAST side by side in one process on ``days`` days of the Meta-like workload
    (:func:`placement.sim.meta_week.meta_week`, the trace ``placement generate trace --kind mast
    --days D`` writes) on 102,400 GPUs in 20 regions: wall time of each and the MAST / FIFO ratio
    (the machine's load cancels in the ratio), the process's peak RSS after each run, the
    allocation rate inside the submission window (§5.2), replay_check, and MAST's GMS-scan and
    RMS times beside §5.4's 34 s per scan and 1.3 / 5.5 ms per workload without / with
    preemption. MAST receives each workload's candidate regions (Fig. 7) as its data placement;
    its GMS-scans and auctions are timed by wrapping the policy's methods (the wrappers decide
    nothing)."""
    import resource

    from ...sim.engine import simulate
    from ...sim.meta_week import meta_week
    from ...sim.metrics import allocation_rate
    from ...sim.replay import replay_check
    from ..policy_data import build_policy, candidate_placement
    from ..shipped import cluster_arg

    cluster = cluster_arg(cluster_text)
    sizes = tuple(int((cluster.region == r).sum()) for r in range(len(cluster.region_names)))
    t0 = time.perf_counter()
    trace, masks = meta_week(sizes, days=days, tenants=40, seed=seed)
    subs = [j.submit for j in trace.jobs]
    out: dict = {"jobs": len(trace.jobs), "gpus": cluster.n_gpus, "regions": len(sizes), "days": days,
                 "generate_s": time.perf_counter() - t0}
    for name in policies:
        pol = build_policy(name, cluster, **({"data": candidate_placement(cluster, masks)} if name in ("mast", "federated") else {}))
        timing = {"scan": [], "plain": [], "preempt": []}
        if name == "mast":
            scan, auction = pol._gms_scan, pol._auction

            def timed_scan(now, _f=scan, timing=timing):
                a = time.perf_counter()
                _f(now)
                timing["scan"].append(time.perf_counter() - a)

            def timed_auction(*args, _f=auction, timing=timing, **kw):
                a = time.perf_counter()
                win = _f(*args, **kw)
                if win is not None:
                    timing["preempt" if win[2].victims else "plain"].append(time.perf_counter() - a)
                return win

            pol._gms_scan, pol._auction = timed_scan, timed_auction
        if echo:
            echo(f"mast week: {name} on {len(trace.jobs):,} workloads, {cluster.n_gpus:,} GPUs")
        t1, c1 = time.perf_counter(), time.process_time()
        res = simulate(trace, cluster, pol, seed=seed, links=False)
        wall, cpu = time.perf_counter() - t1, time.process_time() - c1
        t2 = time.perf_counter()
        broken = replay_check(trace, cluster, res.log)
        out[name] = {"wall_s": wall, "cpu_s": cpu, "replay_s": time.perf_counter() - t2, "replay_violations": len(broken),
                     "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                     "log_rows": len(res.log), "starts": res.stats["starts"], "preemptions": res.stats["preemptions"],
                     "peak_pending": res.stats["peak_pending"], "unfinished": len(res.unfinished),
                     "allocation_rate": allocation_rate(res.log, cluster.n_gpus, min(subs), max(subs))}
        if name == "mast":
            st = res.policy_stats
            out[name].update({
                "gms_scans": len(timing["scan"]),
                "gms_scan_s_mean": statistics.fmean(timing["scan"]) if timing["scan"] else None,
                "gms_scan_s_max": max(timing["scan"], default=None),
                "rms_calls": st["rms_calls"], "rms_ms_per_call": 1e3 * st["rms_time_s"] / max(st["rms_calls"], 1),
                "workload_ms_plain": 1e3 * statistics.fmean(timing["plain"]) if timing["plain"] else None,
                "workload_ms_preempt": 1e3 * statistics.fmean(timing["preempt"]) if timing["preempt"] else None})
        del res
    if "fifo" in out and "mast" in out:
        out["ratio"] = out["mast"]["wall_s"] / out["fifo"]["wall_s"]
        out["ratio_cpu"] = out["mast"]["cpu_s"] / out["fifo"]["cpu_s"]
    return out


def _week_section(seed: int) -> BenchSection:
    """The ``--scale`` section: :func:`mast_week_run` on 7 days of 102,400 GPUs."""
    w = mast_week_run(7.0, seed=seed)
    f, m = w["fifo"], w["mast"]
    rows = [{"policy": p, **{k: v for k, v in w[p].items()}} for p in ("fifo", "mast")]
    md = (f"7 days of the Meta-like workload (`placement generate trace --kind mast --cluster 20x1x8x80x8 --days 7`: "
          f"{w['jobs']:,} workloads, {w['gpus']:,} GPUs in {w['regions']} regions), FIFO and MAST side by side in one "
          f"process: FIFO {f['wall_s']:.0f} s ({f['cpu_s']:.0f} s CPU), MAST {m['wall_s']:.0f} s ({m['cpu_s']:.0f} s CPU), "
          f"**{w['ratio']:.1f}x** (CPU {w['ratio_cpu']:.1f}x; goal <= 3x, <= 10 min); "
          f"peak RSS {f['peak_rss_mib']:.0f} MiB after FIFO, {m['peak_rss_mib']:.0f} MiB after MAST (goal 4 GB); "
          f"allocation rate over the submission window {f['allocation_rate']:.1%} (FIFO) / {m['allocation_rate']:.1%} "
          f"(MAST; paper 98%); replay_check violations {f['replay_violations']} / {m['replay_violations']} "
          f"(check {m['replay_s']:.0f} s). MAST: {m['gms_scans']} GMS-scans of up to {m['peak_pending']:,} pending "
          f"workloads, {m['gms_scan_s_mean']:.3f} s mean, {m['gms_scan_s_max']:.3f} s max (paper: 34 s for "
          f"6,000-10,000); {m['rms_calls']:,} RMS calls, {m['rms_ms_per_call']:.2f} ms each; per scheduled workload "
          f"{m['workload_ms_plain']:.2f} ms without preemption, {m['workload_ms_preempt']:.2f} ms with (paper: 1.3 / "
          f"5.5 ms at the slowest RMS).\n\n"
          + _md(rows, ["policy", "wall_s", "cpu_s", "peak_rss_mib", "allocation_rate", "starts", "preemptions", "peak_pending",
                       "replay_violations"]))
    summary = [f"mast: a week of {w['jobs']:,} workloads on {w['gpus']:,} GPUs: MAST {m['wall_s']:.0f} s, "
               f"{w['ratio']:.1f}x FIFO's {f['wall_s']:.0f} s, peak RSS {m['peak_rss_mib']:.0f} MiB, allocation rate "
               f"{m['allocation_rate']:.1%}, GMS-scan {m['gms_scan_s_mean']:.2f} s (paper 34 s), RMS "
               f"{m['workload_ms_plain']:.2f} / {m['workload_ms_preempt']:.2f} ms per workload (paper 1.3 / 5.5 ms)"]
    return BenchSection("MAST: a week at Meta's scale (--scale)", md, rows, [], summary)


def bench_sections(out_dir: Path, quick: bool = False, scale: bool = False, seed: int = 0,
                   progress=None) -> list[BenchSection]:
    out_dir = Path(out_dir)
    sections = []
    task = progress.add_task("mast: fast path", total=4) if progress is not None else None

    def tick():
        if task is not None:
            progress.advance(task)

    g = gms_scan_run(10_000 if not quick else 2_000, seed=seed)
    r_free = rms_speed_run(0.98, n_requests=400 if not quick else 100, seed=seed)
    r_full = rms_speed_run(1.0, n_requests=400 if not quick else 100, seed=seed)
    nc = negative_cache_run(3000 if not quick else 600, seed=seed)
    rows = [{"measure": "GMS-scan pass", "size": f"{g['pending']} pending, {g['tenants']} tenants",
             "value": g["scan_s_median"], "unit": "s (median of 5)", "goal": "<= 0.5 s", "paper": "34 s"},
            {"measure": "RMS per workload, 2% free", "size": f"{r_free['dclusters']} clusters, {r_free['gpus']} GPUs",
             "value": r_free["ms_mean"], "unit": f"ms mean ({r_free['with_preemption']} of {r_free['requests']} preempt)",
             "goal": "<= 1 ms", "paper": "1.3 ms"},
            {"measure": "RMS per workload, full (preemption)", "size": f"{r_full['running_jobs']} running jobs",
             "value": r_full["ms_mean"], "unit": f"ms mean (p99 {r_full['ms_p99']:.2f})", "goal": "<= 2 ms",
             "paper": "5.5 ms"},
            {"measure": "negative cache hit rate", "size": f"{nc['pending']} pending, full region",
             "value": nc["hit_rate"], "unit": "share of lookups", "goal": "-", "paper": "~0.8"},
            {"measure": "pass time, cache off / on", "size": f"same decisions: {nc['same_decisions']}",
             "value": nc["speedup"], "unit": "x", "goal": "-", "paper": "-"}]
    sections.append(BenchSection(
        "MAST: GMS and RMS speed, negative cache (§5.4)",
        _md(rows, ["measure", "size", "value", "unit", "goal", "paper"]), rows, [],
        [f"mast: GMS-scan of {g['pending']} pending workloads {g['scan_s_median']:.3f} s (goal 0.5 s); "
         f"RMS per workload at {r_free['gpus']} GPUs: {r_free['ms_mean']:.2f} ms (2% free), "
         f"{r_full['ms_mean']:.2f} ms with preemption (goals 1 and 2 ms)",
         f"mast: negative cache hit rate {nc['hit_rate']:.0%}, pass {nc['speedup']:.1f}x faster with it, "
         f"identical decisions: {nc['same_decisions']}"]))
    tick()
    tick()

    m = rms_vs_mip_run(20 if quick else 60, seed=seed)
    w = m["worst"]
    worst_txt = "none" if w is None else f"RMS {w['rms']} vs MIP {w['mip']} (first worse in {w['first_diff']})"
    md = (f"{m['cases']} generated clusters (1-3 racks of 1-3 machines, 95% busy), {m['with_plan']} with a plan, "
          f"{m['preempting']} of them preempting. RMS optimal in {m['rms_optimal']}/{m['with_plan']}. "
          f"Worst case: {worst_txt}. "
          f"MIP {m['mip_s_mean'] * 1e3:.0f} ms per case (6 sequential HiGHS solves), RMS {m['rms_ms_mean']:.3f} ms.\n\n"
          + _md([r for r in m["rows"] if r.get("first_diff")], ["case", "status", "rms", "mip"]))
    sections.append(BenchSection(
        "MAST: RMS plan vs the lexicographic MIP (models/mast_rms.py)", md,
        [{k: v for k, v in r.items()} for r in m["rows"]], [],
        [f"mast: RMS lexicographically optimal in {m['rms_optimal']}/{m['with_plan']} generated cluster snapshots; "
         + ("never worse" if w is None else f"worst: first worse in {w['first_diff']} by {w['diff']}")]))
    tick()

    sections.append(_busy_section(out_dir, quick, seed))
    from placement.instances.traces import trace_path

    from ...sim.cluster import Cluster
    from ...sim.trace import load_philly

    window = dict(BUSY_WINDOW, hours=2.0) if quick else BUSY_WINDOW
    c = cache_sim_run(load_philly(trace_path("philly.csv"), **window), Cluster.uniform(**BUSY_CLUSTER), seed)
    rows = [c]
    md = (f"The busy window through MAST with the pre-filter off, negative cache on vs off, same run: identical "
          f"logs: {c['same_log']}; hit rate {c['hit_rate']:.0%}; RMS calls {c['rms_calls_on']} vs "
          f"{c['rms_calls_off']}; RMS time {c['rms_s_on']:.2f} s vs {c['rms_s_off']:.2f} s; simulation "
          f"{c['wall_on']:.2f} s vs {c['wall_off']:.2f} s.")
    summary = [f"mast: negative cache in the simulator: hit rate {c['hit_rate']:.0%}, RMS calls "
               f"{c['rms_calls_off'] / max(c['rms_calls_on'], 1):.1f}x fewer, same log: {c['same_log']}"]
    if scale:
        w = philly_whole_run(seed)
        f, m = w["fifo"], w["mast"]
        rows.append({"jobs": w["jobs"], "gpus": w["gpus"], "perf": w["perf"], "ratio": w["ratio"],
                     **{f"{p}_{k}": v for p in ("fifo", "mast") for k, v in w[p].items() if k != "stats"}})
        md += (f"\n\nWhole Philly trace ({w['jobs']} jobs, {w['gpus']} GPUs in 4 regions, observed durations), "
               f"side by side in one process: FIFO {f['wall_s']:.1f} s, MAST {m['wall_s']:.1f} s, "
               f"**{w['ratio']:.1f}x** (goal 6x); process peak RSS {f['peak_rss_mib']:.0f} MiB after FIFO, "
               f"{m['peak_rss_mib']:.0f} MiB after MAST; makespan {f['makespan_days']:.0f} / "
               f"{m['makespan_days']:.0f} days (last arrival day {w['last_submit_days']:.0f}); replay_check "
               f"violations {f['replay_violations']} / {m['replay_violations']}, unfinished {f['unfinished']} / "
               f"{m['unfinished']}.")
        summary.append(f"mast: whole Philly trace through MAST in {m['wall_s']:.1f} s, {w['ratio']:.1f}x FIFO's "
                       f"{f['wall_s']:.1f} s, peak RSS {m['peak_rss_mib']:.0f} MiB, replay violations "
                       f"{m['replay_violations']}")
    sections.append(BenchSection("MAST: negative cache in the simulator" + (", whole Philly trace" if scale else ""),
                                 md, rows, [], summary))
    if scale:
        sections.append(_week_section(seed))
    tick()
    return sections
