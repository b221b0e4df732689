"""``placement simulate``: run a policy on a trace and write the results (app layer).

Outputs in ``-o DIR`` (each written atomically, after the inputs are validated):
``instance.json`` (trace + cluster + perf model: the input ``placement evaluate`` needs),
``log.json`` and ``log.csv`` (the event log), ``jobs.csv`` (per job), ``timeseries.csv``,
``summary.json`` (metrics, engine and policy statistics, replay_check's verdict), and PNG plots
(utilization and queue length over time; SLO violation rate per priority over time; JCT CDF).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

from ..errors import InstanceError
from ..io import write_json, write_text
from .options import key_value, nonnegative_int
from .report import fmt, save_figure

__all__ = ["add_commands", "cmd_simulate", "run_simulation", "write_outputs", "DEFAULT_CLUSTERS"]

# Default cluster per trace format when --cluster is not given. Philly: 512 GPUs (the trace's
# mean demand is 374 GPUs: sum of duration x GPUs over its 109 days, measured), 8 per machine.
DEFAULT_CLUSTERS = {"philly": "1x1x8x8x8", "openb": "openb", "v1": "1x1x4x8x8"}


def add_commands(sub) -> None:
    p = sub.add_parser("simulate", help="run a scheduling policy on a trace (trace-driven simulator)")
    p.add_argument("trace", help="trace file (Philly CSV, openb pod CSV, our CSV v1, or a "
                   "'trace' instance .json/.yaml) or a shipped name: philly, openb")
    p.add_argument("--policy", default="fifo", help="a registered policy (listed below; default fifo)")
    p.add_argument("--cluster", default=None, help="spec .json/.yaml, openb node .csv, 'openb', or "
                   "RxCxKxMxG[:TYPE] (default: by trace format, philly 1x1x8x8x8, openb its nodes)")
    p.add_argument("--seed", type=nonnegative_int, default=0)
    p.add_argument("--start", type=float, default=0.0, help="window start, hours after the first submit")
    p.add_argument("--hours", type=float, default=None, help="window length in hours")
    p.add_argument("--sample", type=int, default=None, help="keep N jobs of the window, uniformly (seeded)")
    p.add_argument("--perf", choices=["dally", "dally-machine", "ideal"], default=None,
                   help="performance model (default: a trace file's durations as observed, "
                   "ideal; a JSON instance's own; dally = Dally Table 1 slowdowns)")
    p.add_argument("--checkpoint", type=float, default=None, help="checkpoint interval, s (default: keep all progress)")
    p.add_argument("--scan", type=float, default=None, help="periodic scan interval, s")
    p.add_argument("--option", action="append", type=key_value, metavar="KEY=VALUE",
                   help="a policy constructor argument (repeatable)")
    p.add_argument("--bin", type=float, default=None, help="time-series bin, s (default: about 400 bins)")
    p.add_argument("-o", "--output", required=True, help="output folder (created if missing)")
    p.set_defaults(func=cmd_simulate)
    _list_policies_in_help(p)


def _list_policies_in_help(p: argparse.ArgumentParser) -> None:
    """``--help`` ends with every registered policy and its one-line description (the classes are
    imported only when help is shown)."""
    base = p.format_help

    def format_help() -> str:
        from ..sim.policies import describe_policies

        desc = describe_policies()
        width = max((len(n) for n in desc), default=0)
        lines = [f"  {n:<{width}}  {d}" for n, d in desc.items()]
        return base() + "\npolicies (entry-point group placement.policies):\n" + "\n".join(lines) + "\n"

    p.format_help = format_help


OUTPUT_FILES = ("instance.json", "log.json", "log.csv", "jobs.csv", "timeseries.csv", "summary.json",
                "utilization_queue.png", "slo_violations.png", "jct_cdf.png")


def _check_out_dir(path: str) -> Path:
    """``-o``: checked before any work (:func:`placement.io.check_output_folder`)."""
    from ..io import check_output_folder

    return check_output_folder(path, "-o", OUTPUT_FILES)


def load_inputs(args: argparse.Namespace):
    """(SimInstance, trace format) from the command-line arguments; all validation here."""
    from ..io import read_document
    from ..sim.instance import SimInstance, load_instance
    from ..sim.trace import window
    from .shipped import cluster_arg, load_trace_arg

    for name in ("start", "hours", "checkpoint", "scan", "bin"):
        v = getattr(args, name, None)
        if v is not None and (not math.isfinite(v) or v < 0 or (v == 0 and name != "start")):
            raise InstanceError(f"--{name}", "must be a positive finite number")
    if args.scan is not None and args.scan < 1.0:
        raise InstanceError("--scan", "must be at least 1 s (a scan runs the policy over the whole queue)")
    if args.sample is not None and args.sample < 1:
        raise InstanceError("--sample", "must be a positive number of jobs")
    win = {"start": args.start * 3600.0, "hours": args.hours, "sample": args.sample, "seed": args.seed}
    src = str(args.trace)
    if src.lower().endswith((".json", ".yaml", ".yml")):
        inst = load_instance(read_document(src))
        jobs = window(inst.trace.jobs, **win)
        trace = type(inst.trace)(inst.trace.name, tuple(jobs), inst.trace.provenance)
        cluster = cluster_arg(args.cluster) if args.cluster else inst.cluster
        return SimInstance(trace, cluster, args.perf or inst.perf,
                           args.checkpoint or inst.checkpoint_interval,
                           args.scan or inst.scan_interval), "json"
    trace, fmt_ = load_trace_arg(src, **win)
    cluster = cluster_arg(args.cluster or DEFAULT_CLUSTERS[fmt_])
    # a real trace's durations are what the jobs took: no slowdown model unless asked for
    return SimInstance(trace, cluster, args.perf or "ideal", args.checkpoint, args.scan), fmt_


def run_simulation(inst, policy: str, seed: int = 0, options: dict | None = None, progress=None,
                   checks=None, built: list | None = None):
    """Simulate; returns (SimResult, per-job rows, summary dict, violations).

    ``checks(policy)``, when given, returns extra replay checks built from the policy object (a
    HiveD run's sharing-safety check needs its VC assignment); ``built``, when given, receives the
    policy object (its statistics and classes of jobs beyond the log)."""
    from ..sim.engine import simulate
    from ..sim.link_check import link_factor_check
    from ..sim.link_metrics import iteration_summary
    from ..sim.links import LinkSharing
    from ..sim.metrics import per_job, summary
    from ..sim.replay import replay_check
    from .policy_data import build_policy

    pol = build_policy(policy, inst.cluster, **(options or {}))
    if built is not None:
        built.append(pol)
    perf = inst.perf_model()
    links = LinkSharing(inst.cluster) if inst.cluster.network is not None else False
    res = simulate(inst.trace, inst.cluster, pol, perf=perf, seed=seed, scan_interval=inst.scan_interval,
                   checkpoint_interval=inst.checkpoint_interval, progress=progress, links=links)
    t0 = time.perf_counter()
    extra = list(checks(pol)) if checks else []
    if links:
        extra.append(link_factor_check(links))
    broken = replay_check(inst.trace, inst.cluster, res.log, perf=perf, checks=extra)
    replay_s = time.perf_counter() - t0
    rows = per_job(res.log, inst.trace)
    summ = summary(rows, res.log, inst.cluster.n_gpus)
    if links:
        summ.update(iteration_summary(inst.trace, res.log))
    summ["replay_check_s"] = round(replay_s, 3)
    return res, rows, summ, broken


def _csv(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return ""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: ("" if v is None else repr(v) if isinstance(v, float) else v) for k, v in r.items()})
    return buf.getvalue()


def plot_run(out: Path, ts: list[dict[str, Any]], rows: list[dict[str, Any]], title: str) -> list[str]:
    """Utilization/queue, SLO violation rate per priority over time, JCT CDF."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    figs = []
    if ts:
        hours = np.array([(r["t_start"] - ts[0]["t_start"]) / 3600 for r in ts])
        fig, ax1 = plt.subplots(figsize=(8, 3.5))
        ax1.plot(hours, [r["utilization"] for r in ts], color="tab:blue", label="GPU utilization")
        ax1.set_ylim(0, 1.05)
        ax1.set_xlabel("hours")
        ax1.set_ylabel("utilization")
        ax2 = ax1.twinx()
        ax2.plot(hours, [r["queue_length"] for r in ts], color="tab:red", label="queue length")
        ax2.set_ylabel("pending jobs")
        fig.legend(loc="upper right", fontsize=8)
        ax1.set_title(f"{title}: utilization and queue")
        fig.tight_layout()
        figs.append(save_figure(fig, out, "utilization_queue.png"))
        keys = [k for k in ts[0] if k.startswith("slo_violation_rate_p")]
        fig, ax = plt.subplots(figsize=(8, 3.5))
        for k in keys:
            ys = [np.nan if r[k] is None else 100 * r[k] for r in ts]
            ax.plot(hours, ys, marker=".", lw=1, label=f"priority {k.rsplit('p', 1)[1]}")
        ax.set_xlabel("hours (by submit time)")
        ax.set_ylabel("SLO violations (%)")
        ax.set_title(f"{title}: scheduling-latency SLO violations per priority")
        ax.legend(fontsize=8)
        fig.tight_layout()
        figs.append(save_figure(fig, out, "slo_violations.png"))
    jct = sorted(r["jct"] for r in rows if r["jct"] is not None)
    if jct:
        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.plot(np.maximum(jct, 1e-3), np.arange(1, len(jct) + 1) / len(jct))
        ax.set_xscale("log")
        ax.set_xlabel("JCT (s)")
        ax.set_ylabel("fraction of jobs")
        ax.set_title(f"{title}: JCT CDF")
        fig.tight_layout()
        figs.append(save_figure(fig, out, "jct_cdf.png"))
    return figs


def write_outputs(out: Path, inst, res, rows, summ, broken, bin_s=None, plots=True) -> list[str]:
    from ..sim.instance import instance_to_json, solution_to_json
    from ..sim.metrics import time_series

    out.mkdir(parents=True, exist_ok=True)
    ts = time_series(rows, res.log, inst.cluster.n_gpus, bin_s=bin_s)
    write_text(out / "instance.json", json.dumps(instance_to_json(inst), separators=(",", ":")) + "\n")
    write_text(out / "log.json", json.dumps(solution_to_json(inst, res.log), separators=(",", ":")) + "\n")
    res.log.write_csv(out / "log.csv")
    write_text(out / "jobs.csv", _csv(rows))
    write_text(out / "timeseries.csv", _csv(ts))
    write_json(out / "summary.json", {
        "trace": inst.trace.name, "provenance": inst.trace.provenance, "jobs": len(inst.trace),
        "cluster": inst.cluster.name, "gpus": inst.cluster.n_gpus, "gpu_types": inst.cluster.type_count,
        "policy": res.policy, "perf": inst.perf, "checkpoint_interval": inst.checkpoint_interval,
        "scan_interval": inst.scan_interval, "metrics": summ, "engine": res.stats,
        "policy_stats": res.policy_stats, "replay_violations": broken[:100],
        "replay_ok": not broken,
        "synthetic_fields": sorted(set().union(*(j.synthetic for j in inst.trace.jobs))) if len(inst.trace) else []})
    return plot_run(out, ts, rows, f"{inst.trace.name} / {res.policy}") if plots else []


def cmd_simulate(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    from ..sim.policies import policy_class

    out = _check_out_dir(args.output)
    policy_class(args.policy)
    inst, fmt_ = load_inputs(args)
    console = Console(stderr=False, width=None if sys.stdout.isatty() else 120)
    console.print(f"{inst.trace.name}: {len(inst.trace)} jobs ({fmt_}) on {inst.cluster.name} "
                  f"({inst.cluster.n_gpus} GPUs), policy {args.policy}, perf {inst.perf}")
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console, transient=True) as prog:
        task = prog.add_task("simulating", total=max(1, len(inst.trace)))

        def progress(done, total, now):
            prog.update(task, completed=done, description=f"simulating (t = {now / 3600:.1f} h)")

        t0 = time.perf_counter()
        res, rows, summ, broken = run_simulation(inst, args.policy, args.seed, dict(args.option or []),
                                                 progress=progress)
        elapsed = time.perf_counter() - t0
    from ..io import staged_folder

    with staged_folder(out) as stage:  # an error or an interrupt leaves the folder as it was
        figs = write_outputs(stage, inst, res, rows, summ, broken, bin_s=args.bin)
    table = Table(title=f"{inst.trace.name} / {args.policy}")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for k, v in summ.items():
        table.add_row(k, fmt(v))
    for k, v in res.stats.items():
        table.add_row(f"engine.{k}", fmt(v))
    for k, v in res.policy_stats.items():
        if not isinstance(v, list | dict):
            table.add_row(f"policy.{k}", fmt(v))
    console.print(table)
    console.print(f"replay_check: {'no violation' if not broken else f'{len(broken)} violation(s): ' + broken[0]}")
    console.print(f"wrote {out}/ instance.json log.json log.csv jobs.csv timeseries.csv summary.json "
                  f"and {len(figs)} plot(s) in {elapsed:.1f} s")
    return 0 if not broken else 1
