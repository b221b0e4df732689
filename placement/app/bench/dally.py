"""Dally benchmark sections (app layer): five policies on Philly-sampled DDL jobs, with the bound.

Set-up (Dally §5.1, with what we do not have replaced and labelled)
    Cluster: racks x 8 machines x 8 GPUs (§5.1.2; 2, 4, 8, 16 racks), one dynamic cluster, so
    a multi-rack placement is the simulator's ``cluster`` tier = Dally's "network" column.
    Jobs: the paper samples the SenseTime trace (not public); we sample ``philly.csv`` (traces
    README): by default only its multi-GPU rows (``min_gpus=2``: the "DDL jobs" Dally
    schedules; a 1-GPU job has no communication and every policy places it the same), 500 jobs
    all submitted at 0 (batch) or 400 with Poisson arrivals at ``jobs_per_hour`` (seeded). GPU
    demand and duration (= ideal compute time) are Philly's; the model is assigned uniformly
    over Table 1's six by a seeded rule (labelled synthetic); iterations = ideal time / the
    model's time per iteration (:data:`placement.solvers.online.dally.ITERATION_TIME`, synthetic).
    Performance: :class:`placement.sim.perf.DallyPerf` (Table 1). No checkpoint loss
    (the simulator's default: preemption keeps all progress).
Metrics (from the log, :mod:`placement.sim.metrics`)
    makespan; JCT average / median / P95 / P99 (Tables 2-3 print ">P95", ">P99");
    queueing delay = total time waiting = JCT - run time (includes waits after preemptions and
    Gandiva's migration pauses), average / P95 / P99 (Figure 6b); communication overhead per
    job = run time - ideal duration (exposed communication; no work is lost), mean in hours
    (Figure 6c); utilization and jobs remaining over time (Figures 9, 10).
Bound
    :mod:`placement.models.schedule_bound` (LP, HiGHS) on the same jobs: each policy's gap to a proven
    lower bound on makespan and mean JCT.
Grid
    ``quick``: 8 racks, batch. Default: 8 racks batch and Poisson, plus 2 racks batch.
    ``scale``: 2/4/8/16 racks x batch and Poisson.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

import numpy as np

from ...registry import BenchSection
from ..report import markdown_table, save_figure

__all__ = ["bench_sections", "dally_trace", "run_case", "POLICIES"]

POLICIES = ("dally", "dally-manual", "tiresias", "gandiva", "fifo")
H = 3600.0


def dally_trace(kind: str = "batch", *, jobs: int | None = None, seed: int = 0, jobs_per_hour: float = 8.0,
                min_gpus: int = 2, max_gpus: int | None = None):
    """Philly-sampled jobs for the Dally study (module docstring): ``kind`` "batch" or "poisson".

    ``jobs`` defaults to 500 (batch) / 400 (Poisson). Rows with fewer than ``min_gpus`` or
    more than ``max_gpus`` GPUs are left out before sampling. Models come from
    :func:`placement.sim.trace.load_philly`'s seeded rule (uniform over Table 1); submit
    times are ours (0, or Poisson); both are in each job's ``synthetic`` set.
    """
    from placement.errors import InstanceError
    from placement.sim.trace import Trace

    if kind not in ("batch", "poisson"):
        raise InstanceError("kind", "must be 'batch' or 'poisson'")
    n = jobs if jobs is not None else (500 if kind == "batch" else 400)
    full = _philly(seed)
    pool = [j for j in full.jobs if j.gpus >= min_gpus and (max_gpus is None or j.gpus <= max_gpus)]
    if n > len(pool):
        raise InstanceError("jobs", f"must be at most {len(pool)} (Philly rows with {min_gpus}+ GPUs)")
    rng = np.random.default_rng(seed)
    pick = np.sort(rng.choice(len(pool), size=n, replace=False))
    if kind == "batch":
        submit = np.zeros(n)
    else:
        submit = np.round(np.cumsum(rng.exponential(H / jobs_per_hour, size=n)), 3)
    out = [dataclasses.replace(pool[i], submit=float(submit[k]), synthetic=pool[i].synthetic | {"submit"})
           for k, i in enumerate(pick)]
    out.sort(key=lambda j: (j.submit, j.id))
    prov = (f"Dally study: {n} Philly rows with {min_gpus}+ GPUs sampled (seed {seed}); "
            + ("all submitted at 0" if kind == "batch" else f"Poisson arrivals, {jobs_per_hour:g}/h") +
            "; models synthetic (uniform over Dally Table 1)")
    return Trace(name=f"dally-{kind}-{n}-s{seed}", jobs=tuple(out), provenance=prov)


def _philly(seed: int):
    """The whole Philly trace with its seeded model rule (read once per seed, cached with the
    paper-regime workload's scaled rows)."""
    from placement.app.shipped import philly_rows

    return philly_rows(seed)


def _job_metrics(trace, log, n_gpus: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    from placement.sim.metrics import per_job, summary

    rows = per_job(log, trace)
    s = summary(rows, log, n_gpus)
    fin = [r for r in rows if r["state"] == "finished"]
    jct = np.array([r["jct"] for r in fin])
    wait = np.array([r["jct"] - r["run_time"] for r in fin])
    comm = np.array([r["run_time"] - r["duration"] for r in fin])
    out = {"makespan_h": s["makespan_s"] / H, "avg_jct_h": jct.mean() / H, "median_jct_h": np.median(jct) / H,
           "p95_jct_h": np.percentile(jct, 95) / H, "p99_jct_h": np.percentile(jct, 99) / H,
           "avg_wait_h": wait.mean() / H, "p95_wait_h": np.percentile(wait, 95) / H,
           "p99_wait_h": np.percentile(wait, 99) / H, "avg_comm_h": comm.mean() / H,
           "comm_share": float(comm.sum() / max(sum(r["duration"] for r in fin), 1e-9)),
           "utilization": s["mean_utilization"], "preemptions": s["preemptions"],
           "unfinished": s["unfinished"] + s["unschedulable"]}
    return out, rows


def run_case(racks: int, kind: str, seed: int = 0, policies=POLICIES, jobs: int | None = None,
             jobs_per_hour: float = 8.0, bound: bool = True, bound_buckets: int = 48) -> dict[str, Any]:
    """Simulate every policy on one (racks, arrival kind) case; metrics, replay check, bound gaps."""
    from placement.models.schedule_bound import instance_from_trace, solve
    from placement.sim import Cluster, replay_check, simulate
    from placement.sim.policies import make_policy

    trace = dally_trace(kind, jobs=jobs, seed=seed, jobs_per_hour=jobs_per_hour)
    cluster = Cluster.uniform(racks=racks, machines=8, gpus_per_machine=8)
    out: dict[str, Any] = {"racks": racks, "kind": kind, "jobs": len(trace.jobs), "rows": [], "series": {},
                           "timers": {}}
    lb = {}
    if bound:
        inst = instance_from_trace(trace, cluster)
        for obj in ("makespan", "mean_jct"):
            r = solve(inst, obj, buckets=bound_buckets)
            lb[obj] = r.bound if r.status == "optimal" else None
            out[f"bound_{obj}_s"] = lb[obj]
            out[f"bound_{obj}_wall_s"] = r.wall_time_s
    for name in policies:
        pol = make_policy(name)
        t0 = time.perf_counter()
        res = simulate(trace, cluster, pol, seed=seed)
        wall = time.perf_counter() - t0
        broken = replay_check(trace, cluster, res.log)
        m, rows = _job_metrics(trace, res.log, cluster.n_gpus)
        row = {"racks": racks, "kind": kind, "policy": name, **m, "replay_violations": len(broken),
               "sim_wall_s": round(wall, 3)}
        if lb.get("makespan"):
            row["makespan_gap"] = m["makespan_h"] * H / lb["makespan"] - 1
        if lb.get("mean_jct"):
            row["avg_jct_gap"] = m["avg_jct_h"] * H / lb["mean_jct"] - 1
        out["rows"].append(row)
        out["series"][name] = _series(rows, res.log, cluster.n_gpus)
        if name == "dally":
            out["timers"] = pol.stats().get("timer_trace", [])
    return out


def _series(rows, log, n_gpus: int, points: int = 200) -> dict[str, np.ndarray]:
    """Utilization and jobs remaining (submitted, not finished) over time."""
    from placement.sim.metrics import time_series

    ts = time_series(rows, log, n_gpus, max_bins=points)
    t = np.array([b["t_start"] for b in ts])
    util = np.array([b["utilization"] for b in ts])
    sub = np.sort([r["submit"] for r in rows])
    fin = np.sort([r["finish"] for r in rows if r["finish"] is not None])
    # jobs remaining is exact at any time: sample it on a log scale (the batch drains fast, then tails)
    end = max(float(fin[-1]) if len(fin) else 1.0, 1.0)
    tr = np.unique(np.concatenate([[0.0], np.geomspace(60.0, end, points), fin]))
    remaining = np.searchsorted(sub, tr, side="right") - np.searchsorted(fin, tr, side="right")
    return {"t_h": t / H, "utilization": util, "t_remaining_h": tr / H, "remaining": remaining}


# ----------------------------------------------------------------------------- figures

def _bars(ax, cases, key, policies, ylabel, title, log=False):
    xs = np.arange(len(cases))
    w = 0.8 / len(policies)
    for i, p in enumerate(policies):
        vals = [next((r[key] for r in c["rows"] if r["policy"] == p), np.nan) for c in cases]
        ax.bar(xs + i * w - 0.4 + w / 2, vals, w, label=p)
    ax.set_xticks(xs, [f"{c['racks']} racks" for c in cases])
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    if log:
        ax.set_yscale("log")


def _figures(out_dir: Path, batch: list[dict], poisson: list[dict]) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figs = []
    if batch:
        fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
        _bars(axes[0], batch, "makespan_h", POLICIES, "hours", "(a) makespan", log=True)
        _bars(axes[1], batch, "p95_wait_h", POLICIES, "hours", "(b) P95 queueing delay")
        _bars(axes[2], batch, "avg_comm_h", POLICIES, "hours per job", "(c) avg communication overhead", log=True)
        axes[0].legend(fontsize=7)
        fig.suptitle("Batch arrivals (Dally Figure 6's view)", fontsize=10)
        fig.tight_layout()
        figs.append(save_figure(fig, out_dir, "dally_fig6_batch.png"))
        case = next((c for c in batch if c["racks"] == 8), batch[-1])
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 3.8))
        for p in POLICIES:
            s = case["series"][p]
            a1.plot(s["t_h"], 100 * s["utilization"], label=p, lw=1)
            a2.step(s["t_remaining_h"], s["remaining"], where="post", label=p, lw=1)
        for ax in (a1, a2):
            ax.set_xscale("symlog", linthresh=10)
            ax.set_xlabel("hours since the batch arrived")
        a1.set_ylabel("GPU utilization (%)")
        a1.set_title(f"{case['racks']} racks: utilization (Figure 9's view)", fontsize=9)
        a2.set_ylabel("jobs remaining")
        a2.set_title(f"{case['racks']} racks: jobs remaining (Figure 10's view)", fontsize=9)
        a2.legend(fontsize=7)
        fig.tight_layout()
        figs.append(save_figure(fig, out_dir, "dally_fig9_10_util_remaining.png"))
    cases = [c for c in (batch + poisson)]
    if cases:
        fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
        if batch:
            _bars(axes[0], batch, "avg_jct_h", POLICIES, "hours", "(a) average JCT, batch")
        if poisson:
            _bars(axes[1], poisson, "avg_jct_h", POLICIES, "hours", "(b) average JCT, Poisson")
        axes[0].legend(fontsize=7)
        fig.suptitle("Average JCT (Dally Figure 11's view)", fontsize=10)
        fig.tight_layout()
        figs.append(save_figure(fig, out_dir, "dally_fig11_jct.png"))
        fig, ax = plt.subplots(figsize=(7, 3.6))
        for c in cases:
            for r in c["rows"]:
                if r.get("makespan_gap") is not None and c["kind"] == "batch":
                    ax.scatter(c["racks"], 100 * r["makespan_gap"], label=r["policy"] if c is cases[0] else None,
                               color=f"C{POLICIES.index(r['policy'])}", marker="o")
                if r.get("avg_jct_gap") is not None:
                    ax.scatter(c["racks"], 100 * r["avg_jct_gap"], color=f"C{POLICIES.index(r['policy'])}",
                               marker="x" if c["kind"] == "batch" else "^")
        ax.set_xscale("log", base=2)
        ax.set_yscale("symlog", linthresh=10)
        ax.set_xlabel("racks")
        ax.set_ylabel("gap to the LP bound (%)")
        ax.set_title("gap to the proven lower bound: o makespan (batch), x mean JCT batch, ^ Poisson", fontsize=8)
        ax.legend(fontsize=7)
        fig.tight_layout()
        figs.append(save_figure(fig, out_dir, "dally_gap_to_bound.png"))
    timer_cases = [c for c in cases if c["timers"]]
    if timer_cases:
        fig, ax = plt.subplots(figsize=(7, 3.6))
        for c in timer_cases:
            tr = np.array(c["timers"])
            if not len(tr):
                continue
            g = 8 if (tr[:, 1] == 8).any() else int(tr[0, 1])
            sel = tr[tr[:, 1] == g]
            ax.step(sel[:, 0] / H, sel[:, 3] / H, where="post", label=f"{c['racks']} racks {c['kind']}, rack timer")
            ax.step(sel[:, 0] / H, sel[:, 2] / H, where="post", ls="--", label=f"{c['racks']} racks {c['kind']}, machine")
        ax.set_xlabel("hours")
        ax.set_ylabel("timer (hours of starvation)")
        ax.set_title("auto-tuned delay timers of 8-GPU jobs over time (Figure 5's view)", fontsize=9)
        ax.legend(fontsize=6)
        fig.tight_layout()
        figs.append(save_figure(fig, out_dir, "dally_fig5_timers.png"))
    return figs


# ----------------------------------------------------------------------------- sections

def _fidelity(cases: list[dict]) -> list[str]:
    """The paper's directions, case by case: who wins, by how much."""
    lines = []
    for c in cases:
        r = {x["policy"]: x for x in c["rows"]}
        d, t, g, m = r["dally"], r["tiresias"], r["gandiva"], r["dally-manual"]

        def rel(a, b):
            return 100 * (a / b - 1) if b else float("nan")
        key = "makespan_h" if c["kind"] == "batch" else "avg_jct_h"
        label = "makespan" if key == "makespan_h" else "avg JCT"
        lines.append(
            f"{c['racks']} racks {c['kind']}: Dally {label} {rel(d[key], t[key]):+.0f}% vs Tiresias, "
            f"{rel(d[key], g[key]):+.0f}% vs Gandiva, {rel(d[key], m[key]):+.0f}% vs Dally-manual; "
            + (f"avg JCT {rel(d['avg_jct_h'], t['avg_jct_h']):+.0f}% vs Tiresias; " if key == "makespan_h" else "")
            + "communication overhead "
            f"{rel(d['avg_comm_h'], t['avg_comm_h']):+.0f}% vs Tiresias, {rel(d['avg_comm_h'], g['avg_comm_h']):+.0f}% "
            f"vs Gandiva")
    return lines


def bench_sections(out_dir, quick: bool = False, scale: bool = False, seed: int = 0, progress=None
                   ) -> list[BenchSection]:
    out = Path(out_dir)
    if scale:
        grid = [(r, k) for k in ("batch", "poisson") for r in (2, 4, 8, 16)]
    elif quick:
        grid = [(8, "batch")]
    else:
        grid = [(8, "batch"), (8, "poisson"), (2, "batch")]
    task = progress.add_task("dally: policies x clusters", total=len(grid)) if progress is not None else None
    cases = []
    for racks, kind in grid:
        cases.append(run_case(racks, kind, seed=seed))
        if task is not None:
            progress.advance(task)
    batch = sorted([c for c in cases if c["kind"] == "batch"], key=lambda c: c["racks"])
    poisson = sorted([c for c in cases if c["kind"] == "poisson"], key=lambda c: c["racks"])
    figs = _figures(out, batch, poisson)
    rows = [r | {"bound_makespan_h": (c["bound_makespan_s"] or 0) / H, "bound_avg_jct_h": (c["bound_mean_jct_s"] or 0) / H}
            for c in cases for r in c["rows"]]
    speed_case = next((c for c in cases if c["racks"] == 8 and c["kind"] == "batch"), None)
    speed = sum(r["sim_wall_s"] for r in speed_case["rows"]) if speed_case else None
    cols = ["racks", "kind", "policy", "makespan_h", "avg_jct_h", "median_jct_h", "p95_jct_h", "p99_jct_h",
            "avg_wait_h", "p95_wait_h", "p99_wait_h", "avg_comm_h", "utilization", "preemptions",
            "makespan_gap", "avg_jct_gap", "replay_violations", "sim_wall_s"]
    md = ["Five policies on Philly-sampled DDL jobs (models synthetic, Dally Table 1 slowdowns), "
          "racks x 8 machines x 8 GPUs; hours. Gaps are to the LP lower bound of models/schedule_bound.py "
          "(a proven bound for any policy). Every log passes replay_check (column replay_violations).", "",
          markdown_table(rows, cols), ""]
    for c in cases:
        if c["racks"] == 8:
            stats = [{"statistic": s, **{r["policy"]: r[k] for r in c["rows"]}}
                     for s, k in (("Average", "avg_jct_h"), ("Median", "median_jct_h"), (">P95", "p95_jct_h"),
                                  (">P99", "p99_jct_h"))]
            md += [f"JCT {c['kind']} statistics in hours, 8 racks (Dally Table {2 if c['kind'] == 'batch' else 3}'s view); "
                   f"LP bound on the average: {(c['bound_mean_jct_s'] or 0) / H:.1f} h", "",
                   markdown_table(stats, ["statistic", *POLICIES]), ""]
    fid = _fidelity(cases)
    md += [f"Directions on seed {seed} only (paper: Dally's makespan up to 69% below Tiresias and 92% below "
           "Gandiva; communication overhead 53-83% below Tiresias; the auto-tuner better than fixed timers). One "
           "seed's makespan is decided by single jobs; `placement reproduce dally` measures every claim over 5 "
           "seeds with the spread:", ""]
    md += [f"- {x}" for x in fid]
    if speed is not None:
        md += ["", f"Speed: the 500-job batch on 8 racks under all five policies took {speed:.2f} s of simulation "
               "(goal: 10 s), plus the bound's two LPs "
               f"({speed_case['bound_makespan_wall_s'] + speed_case['bound_mean_jct_wall_s']:.2f} s)."]
    summary = [f"dally (seed {seed} only): {x}" for x in fid[:2]]
    if speed is not None:
        summary.append(f"dally: 500-job batch on 8 racks, five policies: {speed:.2f} s of simulation (goal <= 10 s)")
    return [BenchSection("Dally: delay scheduling vs Tiresias, Gandiva, FIFO, with a proven bound", "\n".join(md),
                         rows, figs, summary)]
