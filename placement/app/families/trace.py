"""The simulator as a problem family (``"problem": "trace"``) for the registry.

Instance and reference evaluation: :mod:`placement.sim.instance`. ``placement generate trace``
draws a synthetic trace; ``placement simulate`` (:mod:`placement.app.simulate`) runs a policy;
``placement evaluate RUN/instance.json RUN/log.json`` replays a written log; ``placement solve
INSTANCE --solver simulate --option policy=NAME`` runs the same pipeline as ``simulate``.
"""

from __future__ import annotations

import argparse
import math
import time
from typing import TYPE_CHECKING, Any

from placement.errors import InstanceError
from placement.registry import ProblemSpec, lazy
from placement.validate import generated_size

if TYPE_CHECKING:
    from placement.sim.cluster import Cluster
    from placement.sim.instance import SimInstance

__all__ = ["SPEC", "solve"]

# The simulator's modules load on first use, not when the registry lists the families.
PERF_MODELS = ("dally", "dally-machine", "ideal", "goodput")   # placement.sim.instance.PERF_MODELS


def cluster_arg(text: str, option: str = "--cluster") -> Cluster:
    """:func:`placement.app.shipped.cluster_arg`, imported on first use."""
    from placement.app.shipped import cluster_arg as parse

    return parse(text, option)


def solve(inst: SimInstance, policy: str = "fifo", seed: int | None = None,
          time_limit: float | None = None, **options: Any):
    """Run a registered policy (``--option policy=NAME``) on the instance: a
    :class:`~placement.result.SolveResult` whose solution is the log and objective the mean JCT
    (from the log). ``time_limit`` is not used (a simulation runs to its end)."""
    from placement.app.run import run_simulation
    from placement.result import SolveResult, Status

    t0 = time.perf_counter()
    res, _rows, terms, broken = run_simulation(inst, policy, seed or 0, options)
    status = Status.FEASIBLE if not broken else Status.ERROR
    return SolveResult(status, f"simulate:{policy}", solution=res.log, objective=terms["mean_jct_s"],
                       wall_time_s=time.perf_counter() - t0,
                       stats={**res.stats, **{f"policy_{k}": v for k, v in res.policy_stats.items()}},
                       message="; ".join(broken[:3]))


def _add_generate_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kind", choices=["batch", "poisson", "dally-batch", "dally-poisson", "dally-paper-batch",
                                      "dally-paper-poisson", "mast", "cassini"],
                   default="poisson",
                   help="batch / poisson: synthetic jobs (Philly's size histogram, log-normal durations); "
                        "dally-batch / dally-poisson: the Dally bench's workload, multi-GPU Philly rows "
                        "sampled by seed, all at time 0 or Poisson arrivals; dally-paper-batch / "
                        "dally-paper-poisson: the workload fitted to the Dally paper's baseline JCTs "
                        "(placement.sim.dally_workload.paper_trace: log-normal, median 132 h, sigma 0.6, 30%% of "
                        "jobs at 16-64 GPUs; Poisson at --load on the cluster's GPUs; "
                        "the regime of placement reproduce dally); mast: a Meta-like workload "
                        "from MAST's published distributions on the cluster's regions (a 98%% warm-up, then "
                        "8 h at 1.5x supply; --jobs and --jobs-per-hour do not apply; each job's table "
                        "stands for its candidate regions, written as table_regions, which simulate gives "
                        "MAST as its data); cassini: CASSINI's Poisson trace (§5.1) on its "
                        "24-GPU testbed (--cluster cassini-testbed-clos, the 48-link Clos, unless given): "
                        "all 13 models of the catalogue, 200-1,000 iterations, 1-12 workers, load 1 for 1 h "
                        "(--jobs and --jobs-per-hour do not apply) (default poisson)")
    p.add_argument("--jobs", type=int, default=None,
                   help="number of jobs (default 200; dally-batch 500, dally-poisson 400)")
    p.add_argument("--jobs-per-hour", type=float, default=None,
                   help="Poisson arrival rate (default 60; dally-poisson 8)")
    p.add_argument("--max-gpus", type=int, default=None, help="drop larger job sizes")
    p.add_argument("--tenants", type=int, default=None,
                   help="tenants (not the dally kinds; default 4, mast 40 as in the bench and reproduce mast)")
    p.add_argument("--gpu-types", default=None,
                   help="comma-separated GPU types to draw from (synthetic kinds only)")
    p.add_argument("--cluster", default=None,
                   help="cluster: spec file, openb node CSV, 'openb' or RxCxKxMxG[:TYPE] "
                        "(default 1x1x4x8x8; the dally kinds 1x1x8x8x8, the bench's 8 racks)")
    p.add_argument("--perf", choices=PERF_MODELS, default=None,
                   help="the performance model written into the instance (default dally; --kind cassini: ideal, "
                        "the only one its catalogue models run under)")
    p.add_argument("--load", type=float, default=None,
                   help="offered load (GPU-seconds submitted per GPU-second): dally-paper-poisson (default 1) "
                        "and mast with --days (default 1.05) only")
    p.add_argument("--days", type=float, default=None,
                   help="mast only: D days at MAST's daily rate and distributions on a fleet kept near full "
                        "(placement.sim.meta_week: 30,000 GPU workloads a day per 100,000 GPUs, a 98%% "
                        "warm-up, offered load 1.05x) instead of the 8-hour peak")


MAX_TENANTS = 100_000
BYTES_PER_JOB = 2_500


def _week(args: argparse.Namespace, sizes: tuple[int, ...]):
    """``--kind mast --days D``: :func:`placement.sim.meta_week.meta_week`, its size checked first."""
    from placement.sim.meta_week import DAILY_GPU_WORKLOADS, MAX_DAYS, PAPER_FLEET_GPUS, meta_week
    from placement.sim.trace import MAX_TRACE_ROWS

    if not (math.isfinite(args.days) and 0 < args.days <= MAX_DAYS):
        raise InstanceError("--days", f"must be a number of days in (0, {MAX_DAYS:g}]")
    expected = DAILY_GPU_WORKLOADS * sum(sizes) / PAPER_FLEET_GPUS * args.days * 1.05 + 0.1 * sum(sizes)
    if expected > MAX_TRACE_ROWS:
        raise InstanceError("--days", f"gives about {expected:,.0f} workloads on this cluster; at most "
                                      f"{MAX_TRACE_ROWS:,}")
    generated_size([("--days", expected * BYTES_PER_JOB)], "the trace")
    return meta_week(sizes, days=args.days, tenants=args.tenants, seed=args.seed,
                     **({} if getattr(args, "load", None) is None else {"load": args.load}))


def _dally_paper(args: argparse.Namespace, load: float | None) -> SimInstance:
    """``--kind dally-paper-batch|poisson``: :func:`placement.sim.dally_workload.paper_trace` on the
    cluster (default 8 racks of 8 machines of 8 GPUs, the Dally paper's detail case)."""
    from placement.sim.dally_workload import paper_trace
    from placement.sim.instance import SimInstance
    from placement.sim.trace import MAX_TRACE_ROWS

    if args.jobs_per_hour is not None:
        raise InstanceError("--jobs-per-hour", "does not apply to the dally-paper kinds (give --load)")
    kind = args.kind.removeprefix("dally-paper-")
    jobs = args.jobs if args.jobs is not None else (500 if kind == "batch" else 400)
    if not 1 <= jobs <= MAX_TRACE_ROWS:
        raise InstanceError("--jobs", f"must be an integer in 1..{MAX_TRACE_ROWS}")
    generated_size([("--jobs", jobs * BYTES_PER_JOB)], "the trace")
    cluster = cluster_arg(args.cluster or "1x1x8x8x8")
    trace = paper_trace(kind, jobs=jobs, seed=args.seed, load=1.0 if load is None else load, gpus=cluster.n_gpus)
    return SimInstance(trace, cluster, args.perf or "dally")


def _named(cluster, masks: dict[str, int]) -> dict[str, tuple[str, ...]]:
    """Table -> region bit mask as table -> region names of the cluster (the file's ``table_regions``)."""
    names = cluster.region_names
    return {t: tuple(names[r] for r in range(len(names)) if m >> r & 1) for t, m in masks.items()}


def _generate(args: argparse.Namespace) -> SimInstance:
    from placement.sim.instance import SimInstance
    from placement.sim.trace import MAX_TRACE_ROWS, synthetic_trace

    if args.kind == "cassini" and args.perf not in (None, "ideal"):
        raise InstanceError("--perf", f"--kind cassini runs under perf 'ideal' only (CASSINI's catalogue models are "
                            f"in neither Dally's Table 1 nor the goodput measurements), not {args.perf!r}")
    perf = args.perf or ("ideal" if args.kind == "cassini" else "dally")
    if getattr(args, "days", None) is not None and args.kind != "mast":
        raise InstanceError("--days", "applies to --kind mast only")
    load = getattr(args, "load", None)
    if load is not None:
        if not (args.kind == "dally-paper-poisson" or (args.kind == "mast" and args.days is not None)):
            raise InstanceError("--load", "applies to --kind dally-paper-poisson and to --kind mast with --days only")
        if not (math.isfinite(load) and 0 < load <= 100):
            raise InstanceError("--load", "must be a number in (0, 100]")
    if args.kind.startswith("dally-paper-"):
        return _dally_paper(args, load)
    dally = args.kind.startswith("dally-")
    kind = args.kind.removeprefix("dally-")
    jobs = args.jobs if args.jobs is not None else (200 if not dally else 500 if kind == "batch" else 400)
    rate = args.jobs_per_hour if args.jobs_per_hour is not None else (8.0 if dally else 60.0)
    if not 0 <= jobs <= MAX_TRACE_ROWS:
        raise InstanceError("--jobs", f"must be an integer in 0..{MAX_TRACE_ROWS}")
    if args.max_gpus is not None and args.max_gpus < 1:
        raise InstanceError("--max-gpus", "must be a positive integer")
    if not (math.isfinite(rate) and rate > 0):
        raise InstanceError("--jobs-per-hour", "must be a positive number")
    if args.tenants is None:
        args.tenants = 40 if args.kind == "mast" else 4
    if not 1 <= args.tenants <= MAX_TENANTS:
        raise InstanceError("--tenants", f"must be an integer in 1..{MAX_TENANTS:,}")
    # measured: a generated job with its cluster row takes about 2.3 KB in memory
    generated_size([("--jobs", jobs * BYTES_PER_JOB)], "the trace")
    types = [t for t in (args.gpu_types or "").split(",") if t] or None
    cluster = cluster_arg(args.cluster or ("1x1x8x8x8" if dally else "1x1x4x8x8"))
    if args.kind == "cassini":
        from placement.sim.cassini_workload import poisson_trace

        if args.cluster is None:
            cluster = cluster_arg("cassini-testbed-clos")
        return SimInstance(poisson_trace(args.seed, gpus=cluster.n_gpus), cluster, perf)
    if args.kind == "mast":
        from placement.sim.meta_trace import meta_trace

        sizes = tuple(int((cluster.region == r).sum()) for r in range(len(cluster.region_names)))
        if args.days is not None:
            trace, masks = _week(args, sizes)
        else:
            trace, masks = meta_trace(sizes, tenants=args.tenants, seed=args.seed)
        return SimInstance(trace, cluster, perf, table_regions=_named(cluster, masks))
    if dally:
        from placement.app.bench.dally import dally_trace

        trace = dally_trace(kind, jobs=jobs, seed=args.seed, jobs_per_hour=rate, max_gpus=args.max_gpus)
    else:
        trace = synthetic_trace(kind, jobs=jobs, seed=args.seed, jobs_per_hour=rate,
                                max_gpus=args.max_gpus, tenants=args.tenants, gpu_types=types)
    return SimInstance(trace, cluster, perf)


def _add_commands(sub) -> None:
    from placement.app.simulate import add_commands

    add_commands(sub)


def _claims(doc: Any) -> bool:
    return isinstance(doc, dict) and "jobs" in doc and "cluster" in doc and "columns" in doc


SPEC = ProblemSpec(
    name="trace",
    sense="min",
    description="trace-driven simulation: a trace on a cluster, a policy's event log",
    load_instance=lazy("placement.sim.instance:load_instance"),
    instance_to_json=lazy("placement.sim.instance:instance_to_json"),
    load_solution=lazy("placement.sim.instance:load_solution"),
    solution_to_json=lazy("placement.sim.instance:solution_to_json"),
    evaluate_report=lazy("placement.sim.instance:evaluate_report"),
    solvers={"simulate": "placement.app.families.trace:solve"},
    exact_solver="simulate",
    add_generate_args=_add_generate_args,
    generate=_generate,
    bench_instances=None,
    bench_extra="placement.app.bench.sim:bench_sections",
    claims=_claims,
    add_commands=_add_commands,
)
