"""Simulator benchmark sections (``placement bench``, family ``trace``).

Our own section: a quick window of the Philly trace through FIFO and FIFO with backfill on the
default 512-GPU cluster, judged by replay_check; with ``--scale``, the whole Philly trace (82k
jobs) through FIFO, reporting wall time and peak memory. Then every entry of :data:`SECTIONS`
("module:function", called like ``bench_extra`` hooks) adds its sections: each policy helper
appends its line.
"""

from __future__ import annotations

import inspect
import resource
import time
from pathlib import Path
from typing import Any

from ...registry import BenchSection, resolve
from ..report import markdown_table

__all__ = ["bench_sections", "SECTIONS", "QUICK_WINDOW", "QUICK_CLUSTER"]

SECTIONS: list[str] = [
    "placement.app.bench.mast:bench_sections",
    "placement.app.bench.dally:bench_sections",
    "placement.app.bench.hived_trace:bench_sections",
    "placement.app.bench.pollux:bench_sections",
]
# A busy day of Philly (day 50 after the first submit: 1,432 jobs asking 915 GPUs on average,
# measured), the default window of the quick bench.
QUICK_WINDOW = {"start": 50 * 86400.0, "hours": 24.0}
QUICK_CLUSTER = "1x1x2x8x8"  # 128 GPUs: the window's jobs queue (measured: about 1.3e5 s mean wait)


def _philly_instance(window: dict | None, cluster: str = "1x1x8x8x8"):
    from placement.instances.traces import trace_path

    from ...sim.instance import SimInstance
    from ...sim.trace import load_philly
    from ..shipped import cluster_arg

    trace = load_philly(trace_path("philly.csv"), **(window or {}))
    return SimInstance(trace, cluster_arg(cluster), "dally")


def _core_section(out_dir: Path, quick: bool, scale: bool, seed: int, progress) -> BenchSection:
    from ..run import run_simulation, write_outputs

    inst = _philly_instance(QUICK_WINDOW, QUICK_CLUSTER)
    rows_out: list[dict[str, Any]] = []
    figures: list[str] = []
    summary: list[str] = []
    task = progress.add_task("trace: philly window", total=2 + (1 if scale else 0)) if progress else None
    for policy, opts in (("fifo", {}), ("fifo", {"backfill": True})):
        label = policy + ("+backfill" if opts else "")
        t0 = time.perf_counter()
        res, rows, summ, broken = run_simulation(inst, policy, seed, opts)
        wall = time.perf_counter() - t0
        sub = out_dir / "sim" / f"philly-day50-{label}"
        figs = write_outputs(sub, inst, res, rows, summ, broken)
        figures += [str(Path("sim") / sub.name / f) for f in figs[:1]]
        rows_out.append({"run": f"philly day 50-51 / {label}", "jobs": len(inst.trace),
                         "mean_jct_s": summ["mean_jct_s"], "p95_jct_s": summ["p95_jct_s"],
                         "mean_queueing_delay_s": summ["mean_queueing_delay_s"],
                         "mean_slowdown": summ["mean_slowdown"], "utilization": summ["mean_utilization"],
                         "replay_violations": len(broken), "wall_s": round(wall, 2)})
        if task is not None:
            progress.advance(task)
    a, b = rows_out
    if a["mean_jct_s"] and b["mean_jct_s"]:
        summary.append(f"trace: Philly day 50 ({a['jobs']} jobs, 128 GPUs): FIFO+backfill mean JCT "
                       f"{b['mean_jct_s'] / a['mean_jct_s']:.2f}x strict FIFO's; replay_check violations "
                       f"{a['replay_violations'] + b['replay_violations']}")
    if scale:
        inst = _philly_instance(None, "1x1x8x8x8")
        t0 = time.perf_counter()
        res, rows, summ, broken = run_simulation(inst, "fifo", seed, {})
        wall = time.perf_counter() - t0
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        rows_out.append({"run": "philly whole / fifo", "jobs": len(inst.trace),
                         "mean_jct_s": summ["mean_jct_s"], "p95_jct_s": summ["p95_jct_s"],
                         "mean_queueing_delay_s": summ["mean_queueing_delay_s"],
                         "mean_slowdown": summ["mean_slowdown"], "utilization": summ["mean_utilization"],
                         "replay_violations": len(broken), "wall_s": round(wall, 2)})
        summary.append(f"trace: whole Philly trace ({len(inst.trace)} jobs) through FIFO with metrics and "
                       f"replay_check in {wall:.1f} s (engine {res.stats['wall_s']:.1f} s); process peak RSS "
                       f"{peak:.0f} MiB")
        if task is not None:
            progress.advance(task)
    cols = ["run", "jobs", "mean_jct_s", "p95_jct_s", "mean_queueing_delay_s", "mean_slowdown",
            "utilization", "replay_violations", "wall_s"]
    md = ("Trace-driven simulator: Philly per-job trace, Dally Table 1 performance model "
          "(models synthetic). Day 50 window on 128 GPUs (2 racks x 8 machines x 8 GPUs); the whole trace "
          "(--scale) on 512 GPUs (8 racks). Every log judged by replay_check.\n\n" + markdown_table(rows_out, cols))
    return BenchSection("Simulator: FIFO on Philly", md, rows_out, figures, summary)


def bench_sections(out_dir, quick: bool = False, scale: bool = False, seed: int = 0, progress=None
                   ) -> list[BenchSection]:
    out = Path(out_dir)
    sections = [_core_section(out, quick, scale, seed, progress)]
    for target in SECTIONS:
        hook = resolve(target)
        kwargs = {"out_dir": out, "quick": quick, "scale": scale, "seed": seed, "progress": progress}
        params = inspect.signature(hook).parameters
        sections += hook(**{k: v for k, v in kwargs.items() if k in params})
    return sections
