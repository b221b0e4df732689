"""Benchmark section: HiveD on the Philly trace (HiveD §5.2-5.3, Figures 6, 7, 10, 11).

Schemes (simulator policies): ``private``, ``quota`` (node-level quotas, HiveD §3.3's rule),
``yarn-cs`` (§5.1's baseline: idle GPUs first, preempting for affinity), ``hived`` (multi-level
VCs with the same GPUs per tenant, dynamic binding), ``hived-static`` and ``hived-node``
(node-level VCs, for Figure 11). Measures, all from the logs:

- per-tenant mean queueing delay (time between submit and finish not spent running),
  normalized to private (Figure 7); the worst tenant's delay over time in a 12-hour sliding
  window by submit time (Figure 6);
- fragmentation over time as HiveD defines it (§5.2): the share of 8-GPU nodes that cannot give
  a high-priority job 8-GPU affinity, i.e. nodes holding any GPU of high-priority (guaranteed /
  within-quota) work (Figure 6 bottom, Figure 11); the class of each start comes from the
  policy; sampled hourly over the submission window only (not the drain after it);
- preempted GPUs, dynamic vs static binding (Figure 10);
- each scheme's speed: wall seconds and log events (starts, preemptions, finishes) per second of
  the engine's run, side by side in one run (the policies' cost, not a claim).

Default: a quick window (day 50, 24 h: the busiest stretch) on 64 nodes; ``--scale``: the whole
trace (82k jobs) under each scheme on 64 nodes, plus the paper's 200 and 279 nodes.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from ...registry import BenchSection
from ..report import markdown_table

__all__ = ["bench_sections", "run_schemes", "tenant_delays", "fragmentation", "run_priority", "SCHEMES"]

SCHEMES = {
    "private": ("private", {"levels": "node"}),
    "quota": ("quota", {"levels": "node"}),
    "yarn-cs": ("yarn-cs", {"levels": "node"}),
    "hived": ("hived", {"levels": "multi"}),
    "hived-static": ("hived-static", {"levels": "multi"}),
    "hived-node": ("hived", {"levels": "node"}),
}
QUICK = {"start": 50 * 86400.0, "hours": 24.0}
H = 3600.0


def _cluster(n_nodes: int):
    from ...sim.cluster import Cluster

    racks = max(1, n_nodes // 8) if n_nodes % 8 == 0 else 1
    return Cluster.uniform(1, 1, racks, n_nodes // racks, 8)


def _run_and_finish(log) -> tuple[dict[str, float], dict[str, float]]:
    """Per job, from the log alone: total run time over its attempts, and its finish time."""
    run: dict[str, float] = {}
    t0: dict[str, float] = {}
    fin: dict[str, float] = {}
    for r in log.rows:
        if r.event == "start":
            t0[r.job] = r.time
        elif r.event in ("preempt", "finish"):
            run[r.job] = run.get(r.job, 0.0) + r.time - t0.pop(r.job)
            if r.event == "finish":
                fin[r.job] = r.time
    return run, fin


def tenant_delays(trace, log) -> dict[str, dict[str, float]]:
    """Per job: queueing delay = (finish - submit) - run time; per tenant: mean and count."""
    run, fin = _run_and_finish(log)
    per: dict[str, list[float]] = {}
    for j in trace.jobs:
        if j.id in fin:
            per.setdefault(j.tenant, []).append(fin[j.id] - j.submit - run[j.id])
    return {t: {"mean_delay_s": float(np.mean(v)), "jobs": len(v)} for t, v in sorted(per.items())}


def delay_over_time(trace, log, tenant: str, window_s: float = 12 * H, step_s: float = H):
    """Mean queueing delay of ``tenant``'s jobs in a sliding window by submit time (Figure 6)."""
    run, fin = _run_and_finish(log)
    pts = sorted((j.submit, fin[j.id] - j.submit - run[j.id]) for j in trace.jobs
                 if j.tenant == tenant and j.id in fin)
    if not pts:
        return [], []
    s = np.array([p[0] for p in pts])
    d = np.array([p[1] for p in pts])
    lo, hi = float(trace.jobs[0].submit), float(trace.jobs[-1].submit)
    xs = np.arange(lo + window_s, max(hi, lo + window_s) + step_s, step_s)
    cs = np.concatenate([[0.0], np.cumsum(d)])
    a, b = np.searchsorted(s, xs - window_s), np.searchsorted(s, xs, side="right")
    n = b - a
    ys = np.where(n > 0, (cs[b] - cs[a]) / np.maximum(n, 1), np.nan)
    return xs.tolist(), ys.tolist()


def run_priority(high: set):
    """A function of a start / preempt / finish row: whether that run is high-priority, from
    ``high`` as job ids or as ``(job, start time)`` pairs (each run by its own priority)."""
    if not high or not isinstance(next(iter(high)), tuple):
        return lambda r: r.job in high
    current: dict[str, bool] = {}

    def is_high(r) -> bool:
        if r.event == "start":
            current[r.job] = (r.job, r.time) in high
            return current[r.job]
        return current.pop(r.job, False)
    return is_high


def fragmentation(log, high: set, n_nodes: int, step_s: float = H, start: float | None = None,
                  end: float | None = None, measure: str = "affinity"):
    """The fragmentation of GPU affinity over time, sampled every ``step_s`` inside [start, end].

    ``measure="affinity"`` (HiveD §5.2, Figures 6 and 11): "the proportion of 8-GPU nodes that
    cannot provide 8-GPU affinity for a high-priority job", i.e. the nodes on which at least one
    GPU is held by high-priority (guaranteed / within-quota) work; low-priority work does not
    count, since a high-priority job preempts it. ``measure="partial"``: the nodes holding 1-7
    high-priority GPUs (an earlier reading of ours, kept for comparison). ``start`` / ``end``
    default to the log's first and last event; samples are taken at ``start + k * step_s``,
    after every event at an earlier time. ``high``: job ids (every run of the job counts as
    high-priority) or ``(job, start time)`` pairs (each run counted by its own priority).
    """
    if measure not in ("affinity", "partial"):
        raise ValueError(f"measure must be 'affinity' or 'partial', not {measure!r}")
    cnt = np.zeros(n_nodes, dtype=np.int64)
    xs, ys = [], []
    is_high = run_priority(high)
    rows = log.rows
    if not rows:
        return xs, ys
    nxt = rows[0].time if start is None else float(start)
    stop = rows[-1].time if end is None else float(end)

    def sample():
        return float((cnt > 0).mean() if measure == "affinity" else ((cnt > 0) & (cnt < 8)).mean())

    for r in rows:
        while r.time > nxt and nxt <= stop:
            xs.append(nxt)
            ys.append(sample())
            nxt += step_s
        if r.event in ("start", "preempt", "finish") and is_high(r):
            nodes = np.asarray(r.gpus, dtype=np.int64) // 8
            np.add.at(cnt, nodes, 1 if r.event == "start" else -1)
    while nxt <= stop:
        xs.append(nxt)
        ys.append(sample())
        nxt += step_s
    return xs, ys


def run_schemes(trace, n_nodes: int, schemes=tuple(SCHEMES), order: str = "fifo", seed: int = 0):
    """Simulate each scheme (IdealPerf: HiveD §5.2 measures queueing, not speed); per scheme the
    log, the per-tenant delays, fragmentation series, preempted GPUs, wall time and violations."""
    from ...sim import replay_check, simulate
    from ...sim.perf import IdealPerf
    from ..policy_data import build_policy

    cluster = _cluster(n_nodes)
    perf = IdealPerf()
    out: dict[str, dict[str, Any]] = {}
    for name in schemes:
        pol_name, opts = SCHEMES[name]
        pol = build_policy(pol_name, cluster, order=order, **opts)
        t0 = time.perf_counter()
        res = simulate(trace, cluster, pol, perf=perf, seed=seed)
        wall = time.perf_counter() - t0
        checks = []
        if pol_name.startswith("hived"):
            from placement.solvers.online.hived import sharing_safety_check
            checks = [sharing_safety_check(pol.assign)]
        bad = replay_check(trace, cluster, res.log, perf=perf, checks=checks)
        high = set(getattr(pol, "guaranteed_ever", set()))
        xs, ys = fragmentation(res.log, high, n_nodes, start=trace.jobs[0].submit, end=trace.jobs[-1].submit)
        pre = sum(len(r.gpus) for r in res.log.rows if r.event == "preempt")
        out[name] = {"log": res.log, "delays": tenant_delays(trace, res.log), "frag_t": xs, "frag": ys,
                     "preempted_gpus": pre, "wall_s": wall, "violations": bad, "stats": pol.stats()}
    return out


def _rows(trace, runs) -> tuple[list[dict[str, Any]], str | None]:
    base = runs.get("private", {}).get("delays", {})
    rows = []
    worst, worst_ratio = None, -1.0
    for t, d in base.items():
        row = {"tenant": t, "jobs": d["jobs"], "private_delay_h": d["mean_delay_s"] / H}
        for s, r in runs.items():
            if s == "private":
                continue
            v = r["delays"].get(t, {}).get("mean_delay_s")
            row[f"{s}_x"] = (v / d["mean_delay_s"]) if v is not None and d["mean_delay_s"] > 60 else None
            if s == "quota" and row[f"{s}_x"] is not None and row[f"{s}_x"] > worst_ratio:
                worst, worst_ratio = t, row[f"{s}_x"]
        rows.append(row)
    return rows, worst


def bench_sections(out_dir, quick: bool = False, scale: bool = False, seed: int = 0, progress=None
                   ) -> list[BenchSection]:
    from placement.instances.traces import trace_path

    from ...sim.trace import load_philly

    cases = [("day 50, 24 h", QUICK, 64)]
    if scale:
        cases += [("whole trace", None, 64), ("whole trace", None, 200), ("whole trace", None, 279)]
    task = progress.add_task("hived: schemes on Philly", total=len(cases)) if progress is not None else None
    md, rows_all, summary = [], [], []
    for label, window, n_nodes in cases:
        trace = load_philly(trace_path("philly.csv"), **(window or {}))
        runs = run_schemes(trace, n_nodes, seed=seed)
        rows, worst = _rows(trace, runs)
        srow = []
        for s, r in runs.items():
            frag = np.array(r["frag"]) if r["frag"] else np.zeros(1)
            srow.append({"case": f"{label} / {n_nodes} nodes", "scheme": s, "jobs": len(trace.jobs),
                         "mean_delay_h": float(np.mean([d["mean_delay_s"] for d in r["delays"].values()])) / H,
                         "mean_fragmentation": float(frag.mean()), "preempted_gpus": r["preempted_gpus"],
                         "replay_violations": len(r["violations"]), "wall_s": round(r["wall_s"], 2),
                         "events": len(r["log"].rows),
                         "events_per_s": round(len(r["log"].rows) / r["wall_s"]) if r["wall_s"] > 0 else None})
        rows_all += srow
        md += [f"### {label}, {n_nodes} nodes ({len(trace.jobs)} jobs)", "",
               markdown_table(srow, list(srow[0])), "",
               "Per tenant: mean queueing delay in the private cluster (hours) and each scheme's "
               "delay divided by it (blank when the private delay is under a minute):", "",
               markdown_table(rows, list(rows[0]) if rows else []), ""]
        st, dy = runs.get("hived-static"), runs.get("hived")
        if st and dy and st["preempted_gpus"]:
            summary.append(f"hived ({label}, {n_nodes} nodes): dynamic binding preempts "
                           f"{dy['preempted_gpus']} GPUs vs static {st['preempted_gpus']} "
                           f"({100 * (dy['preempted_gpus'] / st['preempted_gpus'] - 1):+.0f}%; paper -55%)")
        nd, ml = runs.get("hived-node"), runs.get("hived")
        if nd and ml and nd["frag"]:
            summary.append(f"hived ({label}, {n_nodes} nodes): mean fragmentation multi-level "
                           f"{np.mean(ml['frag']):.3f} vs node-level {np.mean(nd['frag']):.3f} (paper: 10-20% lower)")
        if worst is not None:
            r = next(x for x in rows if x["tenant"] == worst)
            summary.append(f"hived ({label}, {n_nodes} nodes): worst tenant under quota {worst}: "
                           f"quota {r.get('quota_x') or 0:.3g}x private, HiveD {r.get('hived_x') or 0:.3g}x")
        summary.append(f"hived ({label}, {n_nodes} nodes): wall s per scheme (log events per second) "
                       + ", ".join(f"{s} {r['wall_s']:.1f} ({len(r['log'].rows) / max(r['wall_s'], 1e-9):,.0f}/s)"
                                   for s, r in runs.items())
                       + f"; replay violations {sum(len(r['violations']) for r in runs.values())}")
        if task is not None:
            progress.advance(task)
    text = ("HiveD on the Philly trace: private clusters, quota sharing (§3.3's rule and YARN-CS), HiveD (dynamic, "
            "static, node-level cells), per-VC FIFO, ideal speed. Quotas = the node-level VC fit; HiveD's "
            "multi-level VCs have the same GPUs per tenant.\n\n" + "\n".join(md))
    _ = Path(out_dir)
    return [BenchSection("HiveD on the Philly trace", text, rows_all, [], summary)]
