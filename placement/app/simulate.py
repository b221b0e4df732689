"""``placement simulate``: the command that runs a policy on a trace and writes the results (app
layer). What it runs and writes is the run module's (:mod:`placement.app.run`: :func:`~placement.app.run.simulate`
and :meth:`~placement.app.run.Run.save`, the same functions as ``placement.simulate``); this module
holds the command's arguments, its ``--help`` listing of the policies, ``--rerun`` and its
printed table.

``--rerun DIR`` re-runs a folder from its ``instance.json`` and the policy, options and seed its
``summary.json`` records; the log comes out byte for byte the same.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from ..errors import InstanceError
from .commands import cell
from .options import key_value, nonnegative_int, option_dict
from .run import OUTPUT_FILES, network_note, package_version

__all__ = ["add_commands", "cmd_simulate"]


def add_commands(sub) -> None:
    p = sub.add_parser("simulate", help="run a scheduling policy on a trace (trace-driven simulator)")
    p.add_argument("trace", nargs="?", default=None, help="trace file (Philly CSV, openb pod CSV, our CSV "
                   "v1 or a plain CSV with its columns, a Tiresias, Gavel, Blox or Pollux trace, or a 'trace' "
                   "instance .json/.yaml) or a shipped name: philly, openb, pollux-workload-N[-x0.5|-x1.5|-x2.0] "
                   "(the Pollux authors' workloads, N = 1..8)")
    p.add_argument("--policy", default=None, help="a registered policy (listed below; default fifo)")
    p.add_argument("--cluster", default=None, help="spec .json/.yaml, openb node .csv, 'openb', or "
                   "RxCxKxMxG[:TYPE] (default: by trace format, philly 1x1x8x8x8, openb its nodes)")
    p.add_argument("--seed", type=nonnegative_int, default=None, help="default 0")
    p.add_argument("--start", type=float, default=None, help="window start, hours after the first submit")
    p.add_argument("--hours", type=float, default=None, help="window length in hours")
    p.add_argument("--sample", type=int, default=None, help="keep N jobs of the window, uniformly (seeded)")
    p.add_argument("--perf", choices=["dally", "dally-machine", "ideal", "goodput"], default=None,
                   help="performance model (default: a trace file's durations as observed, "
                   "ideal; a JSON instance's own; dally = Dally Table 1 slowdowns; goodput = Pollux's "
                   "measured applications, the default of the pollux workloads)")
    p.add_argument("--checkpoint", type=float, default=None, help="checkpoint interval, s (default: keep all progress)")
    p.add_argument("--scan", type=float, default=None, help="periodic scan interval, s")
    p.add_argument("--option", action="append", type=key_value, metavar="KEY=VALUE",
                   help="a policy constructor argument (repeatable)")
    p.add_argument("--bin", type=float, default=None, help="time-series bin, s (default: about 400 bins)")
    p.add_argument("-o", "--output", default=None, help="output folder (created if missing; required "
                   "unless --rerun, which writes into its folder by default)")
    p.add_argument("--rerun", metavar="DIR", default=None, help="re-run the folder of an earlier run: its "
                   "instance.json and the policy, options and seed its summary.json records")
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


def _check_out_dir(path: str) -> Path:
    """``-o``: checked before any work (:func:`placement.io.check_output_folder`)."""
    from ..io import check_output_folder

    return check_output_folder(path, "-o", OUTPUT_FILES)


def _rerun_args(args: argparse.Namespace) -> dict[str, Any]:
    """``--rerun DIR``: the run's inputs from ``DIR/instance.json`` (trace, cluster, perf model and
    intervals exactly as run) and ``DIR/summary.json``'s ``run`` (policy, options as given, seed,
    time-series bin)."""
    from ..io import read_document

    folder = Path(args.rerun)
    given = [f"--{k}" for k in ("policy", "seed", "start", "cluster", "perf", "checkpoint", "scan", "bin",
                                 "sample", "hours") if getattr(args, k, None) is not None] + (["--option"] if args.option else []) + (
             ["a trace"] if args.trace else [])
    if given:
        raise InstanceError("--rerun", f"takes everything from the folder; do not give {given[0]}")
    if not (folder / "instance.json").is_file() or not (folder / "summary.json").is_file():
        raise InstanceError("--rerun", f"{str(folder)!r} must be a folder written by placement simulate "
                            "(instance.json and summary.json)")
    summ = read_document(folder / "summary.json")
    run = summ.get("run") if isinstance(summ, dict) else None
    if not isinstance(run, dict) or not isinstance(run.get("policy"), str) or not isinstance(
            run.get("options"), dict) or not isinstance(run.get("seed"), int):
        raise InstanceError(f"{folder / 'summary.json'}: run", "must record the policy, its options and "
                            "the seed (a folder written before provenance was recorded cannot be re-run)")
    if run.get("agent"):
        raise InstanceError(f"{folder / 'summary.json'}: run.agent", "the run shared links with CASSINI's "
                            "agent (a `placement reproduce cassini` run); --rerun re-runs `placement simulate` "
                            "runs, and `placement evaluate` re-checks this one from its files")
    if run.get("version") != package_version():
        print(f"note: {folder} was written by placement {run.get('version')}, this is "
              f"{package_version()}; the re-run may differ", file=sys.stderr)
    return {"trace": str(folder / "instance.json"), "cluster": None, "policy": run["policy"],
            "options": run["options"], "seed": run["seed"], "perf": None, "start": 0.0, "hours": None,
            "sample": None, "checkpoint": None, "scan": None, "bin_s": run.get("bin_s")}


def cmd_simulate(args: argparse.Namespace) -> int:
    import matplotlib

    matplotlib.use("Agg")
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    from .run import simulate

    if args.rerun is not None:
        kw = _rerun_args(args)
        out = _check_out_dir(args.rerun if args.output is None else args.output)
    else:
        if args.trace is None:
            raise InstanceError("trace", "is required (or --rerun DIR)")
        if args.output is None:
            raise InstanceError("-o", "is required: the output folder")
        out = _check_out_dir(args.output)
        kw = {"trace": args.trace, "cluster": args.cluster, "policy": "fifo" if args.policy is None else args.policy,
              "options": option_dict(args.option), "seed": args.seed or 0, "perf": args.perf,
              "start": args.start or 0.0,
              "hours": args.hours, "sample": args.sample, "checkpoint": args.checkpoint, "scan": args.scan,
              "bin_s": args.bin}
    console = Console(stderr=False, width=None if sys.stdout.isatty() else 120)
    # drawn from this thread only (no refresh thread): an interrupt can never leave a thread
    # writing to the terminal while the interpreter shuts down
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console, transient=True, auto_refresh=False) as prog:
        task = prog.add_task("simulating", total=None)
        drawn = [0.0]

        def progress(done, total, now):
            prog.update(task, completed=done, total=max(1, total),
                        description=f"simulating (t = {now / 3600:.1f} h)")
            if time.perf_counter() - drawn[0] >= 0.1:
                drawn[0] = time.perf_counter()
                prog.refresh()

        t0 = time.perf_counter()
        run = simulate(**kw, progress=progress,
                       announce=lambda text: console.print(text, markup=False, highlight=False),
                       warn=lambda text: print(f"note: {text}", file=sys.stderr))
        elapsed = time.perf_counter() - t0
    note = network_note(run)
    if note:
        print(f"note: {note}", file=sys.stderr)
    figs = run.save(out, checked=True)
    summ, res, broken = run.metrics, run.result, run.violations
    table = Table(title=f"{run.instance.trace.name} / {run.policy}")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for k, v in summ.items():
        table.add_row(k, cell(k, v))
    for k, v in res.stats.items():
        table.add_row(f"engine.{k}", cell(k, v))
    for k, v in res.policy_stats.items():
        if not isinstance(v, list | dict):
            table.add_row(f"policy.{k}", cell(k, v))
    console.print(table)
    console.print(f"replay_check: {'no violation' if not broken else f'{len(broken)} violation(s): ' + broken[0]}")
    console.print(f"wrote {out}/ instance.json log.json log.csv jobs.csv timeseries.csv summary.json "
                  f"and {len(figs)} plot(s) in {elapsed:.1f} s")
    return 0 if not broken else 1
