"""The Python face of the package: ``placement.simulate``, ``placement.solve``, ``placement.sweep``,
``placement.reproduce``, ``placement.compare`` and the listings ``placement.list_policies``,
``placement.list_solvers``, ``placement.list_options``, ``placement.list_metrics`` (app layer;
``placement`` re-exports these names lazily).

Each function is what the command of the same name runs, so a notebook and a shell give the same
numbers and files, and bad input is the same one-line :class:`~placement.errors.InstanceError`
with the same message, naming the Python parameter where the command names its flag
(``hours: must be a positive finite number`` for ``--hours``; ``options['k']`` for
``--option k``: :func:`placement.app.options.python_names`):

=====================================  =================================================
Python                                 command line
=====================================  =================================================
``run = placement.simulate(...)``      ``placement simulate ... -o DIR`` (``run.save(DIR)``)
``placement.solve(inst, solver=...)``  ``placement solve FILE --solver ...``
``placement.sweep(spec)``              ``placement sweep SPEC -o DIR``
``placement.reproduce(paper)``         ``placement reproduce PAPER --out DIR``
``placement.list_policies()``          ``placement simulate --help`` (the policy list)
=====================================  =================================================

Every input is checked before any work, in memory as on disk: a :class:`~placement.sim.trace.Trace`
built by hand, a :class:`~placement.sim.instance.SimInstance`, a document (a dict) or a pandas
DataFrame with the CSV v1 columns go through the checks a file's rows go through
(:func:`placement.sim.trace.check_trace`, :meth:`~placement.sim.trace.Trace.from_dataframe`).

Progress: ``simulate`` and ``reproduce`` show it for long calls, on by default in Jupyter and in a
terminal (``progress=None``), off with ``progress=False``; ``simulate`` updates one line (a rich
bar in a terminal, a text line in Jupyter), ``reproduce`` prints its progress lines (``echo``).

Results are pandas DataFrames where they are tables (tidy: one row per observation, lists as
lists, one boolean type): :attr:`Run.jobs` (one row per job, with ``run``, ``policy``,
``seed`` columns), :attr:`Run.log`, :attr:`Run.timeseries`, the sweep's rows (JSON columns
decoded), :attr:`Report.claims` and :attr:`Report.regimes` (``holds`` True/False/None in both);
:func:`compare` puts several runs in one table and one JCT CDF figure.

``simulate`` wraps the run module's (:mod:`placement.app.run`, with :class:`Run`),
``solve`` calls :func:`placement.app.solving.solve_options`: the command line calls the same
functions, and no module of the package imports this one (it is the top;
``tests/core/test_imports.py``). ``placement/__init__.py`` names these functions and imports
this module only when one of them is first used, so ``import placement`` loads no app code.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InstanceError
from .options import python_names, unknown_name
from .report import agg_backend
from .run import NETWORK_AWARE, Run, network_note
from .run import simulate as _simulate
from .solving import solve_options

__all__ = ["simulate", "Run", "solve", "sweep", "reproduce", "Report", "compare", "list_policies", "list_solvers",
           "list_options", "list_metrics"]



def _face(fn):
    """The face's errors name Python parameters (:func:`python_names`)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with python_names():
            return fn(*args, **kwargs)
    return wrapper


def _in_jupyter() -> bool:
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    with contextlib.suppress(Exception):
        ip = shell.get_ipython()
        return ip is not None and getattr(ip, "kernel", None) is not None
    return False


def _interactive() -> bool:
    """Progress on by default: in Jupyter, or with standard error on a terminal."""
    if _in_jupyter():
        return True
    with contextlib.suppress(Exception):
        return sys.stderr.isatty()
    return False


class _Line:
    """One progress line updated in place: a rich bar on a terminal, a text line in Jupyter
    (an updated display, so a stored notebook keeps only its last state). At most two updates
    a second."""

    def __init__(self, what: str):
        self.what, self.t0, self.last, self.handle, self.prog = what, time.perf_counter(), 0.0, None, None

    def __enter__(self):
        if _in_jupyter():
            from IPython.display import display

            self.handle = display({"text/plain": f"{self.what}: starting"}, raw=True, display_id=True)
        else:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self.prog = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), console=Console(stderr=True), transient=True,
                                 auto_refresh=False)   # no refresh thread: drawn from the caller's
            self.prog.__enter__()
            self.task = self.prog.add_task(self.what, total=None)
        return self

    def note(self, text: str) -> None:
        if self.prog is not None:
            self.prog.console.print(text, markup=False, highlight=False)
        else:
            print(text)

    def __call__(self, done: int, total: int, now: float) -> None:
        t = time.perf_counter()
        if self.prog is not None:
            self.prog.update(self.task, completed=done, total=max(1, total),
                             description=f"{self.what} (t = {now / 3600:,.1f} h)")
            if t - self.last >= 0.1:
                self.last = t
                self.prog.refresh()
        elif self.handle is not None and t - self.last >= 0.5:
            self.last = t
            self.handle.update({"text/plain": f"{self.what}: {done:,}/{max(1, total):,} events, simulated "
                                f"{now / 3600:,.1f} h, {t - self.t0:.0f} s"}, raw=True)

    def __exit__(self, *exc):
        if self.prog is not None:
            self.prog.__exit__(*exc)
        elif self.handle is not None:
            self.handle.update({"text/plain": f"{self.what}: {'done' if exc[0] is None else 'stopped'} in "
                                f"{time.perf_counter() - self.t0:.1f} s"}, raw=True)
        return False


# -- simulate -------------------------------------------------------------------------------------
def simulate(trace, cluster=None, policy: Any = "fifo", options: dict[str, Any] | None = None, seed: int = 0,
             perf: str | None = None, start: float = 0.0, hours: float | None = None,
             sample: int | None = None, checkpoint: float | None = None, scan: float | None = None,
             bin_s: float | None = None, progress=None, announce=None) -> Run:
    """Run a scheduling policy on a trace: ``placement simulate`` without writing.

    Parameters
    ----------
    trace : str, Path, Trace, SimInstance, dict or pandas.DataFrame
        A shipped trace name (``"philly"``, ``"openb"``), a trace file (Philly CSV, openb pod
        CSV, our CSV v1 with or without its version line, a Tiresias, Gavel, Blox or Pollux
        trace: :mod:`placement.sim.trace_formats`), a ``"trace"`` instance file (``instance.json`` of an earlier run) or
        document, a DataFrame with the CSV v1 columns (``id, submit, gpus, duration`` and
        optionally ``tenant, priority, gpu_type, model, tables, synthetic``;
        :meth:`Trace.from_dataframe <placement.sim.trace.Trace.from_dataframe>`), or an object.
        Every job is checked before the run, as a file's rows are.
    cluster : str or Cluster, optional
        Shorthand ``RxCxKxMxG[:TYPE]`` (regions x clusters x racks x machines x GPUs), a spec
        file, ``"openb"``, ``"cassini-testbed"``, or a Cluster; default by trace format.
    policy : str or Policy
        A registered policy name (:func:`list_policies` lists them) or a built object.
    options : dict, optional
        The policy's constructor options (``--option KEY=VALUE``; :func:`list_options` lists them with
        types and defaults), checked against its annotations before the run.
    seed : int
        Seeds the policy and the trace's synthetic fields and sample (same seed, same run).
    perf : {"ideal", "dally", "dally-machine", "goodput"}, optional
        The performance model. Default: a trace file's durations as observed (``"ideal"``: no
        placement slows a job), an instance's own. ``"dally"`` slows a job spread over machines,
        racks or clusters by Dally Table 1's factors: use it to compare network-aware policies
        (:data:`placement.app.run.NETWORK_AWARE`: Dally, the CASSINI variants), whose placements otherwise cannot
        matter on a cluster without a network model; such a run under ``"ideal"`` warns (on a
        cluster with a ``network`` section the shared links slow spread jobs under any model).
        The default stays ``"ideal"`` for all policies so that runs compared side by side share
        one model. Before the run a model name the performance model has no data for is
        refused (Dally Table 1's rows; the measured Pollux applications under ``"goodput"``,
        which also bounds machines to 4 GPUs and jobs to 64), and multi-GPU jobs without a model
        under ``"dally"`` warn (:func:`placement.app.run.perf_note`).
    start, hours : float
        The window, in hours: from ``start`` h after the first submit, ``hours`` long.
    sample : int, optional
        Keep this many jobs of the window, drawn uniformly (seeded).
    checkpoint, scan, bin_s : float, optional
        Checkpoint interval (s; default: a preempted job keeps its progress), the periodic scan
        interval (s), the time-series bin (s; default about 400 bins).
    progress : None, bool or callable(done, total, now)
        ``None``: a progress line in Jupyter and on a terminal, nothing otherwise; ``False``:
        quiet; ``True``: always; a callable is called now and then with the events done, the
        events known and the simulated time (s).
    announce : callable(str), optional
        Receives one line describing the run (trace, jobs, cluster, policy, perf) before it
        starts; with progress shown and no ``announce``, the line is printed.

    Returns
    -------
    Run
        ``run.jobs``, ``run.log``, ``run.timeseries`` (DataFrames), ``run.metrics`` (the
        headline numbers: :func:`list_metrics` defines each), ``run.summary``, ``run.replay()``,
        ``run.plot()``, ``run.save(DIR)``.

    Raises
    ------
    InstanceError
        Bad input, one line naming the parameter (``hours: must be a positive finite number``,
        ``trace 't' job 'e' submit: must be a finite number >= 0, got nan``).
    """
    with python_names():
        if progress is not None and not isinstance(progress, bool) and not callable(progress):
            raise InstanceError("progress", f"must be None, True, False or a callable, got {progress!r:.60}")
        if announce is not None and not callable(announce):
            raise InstanceError("announce", f"must be a callable taking one line of text, got {announce!r:.60}")
        if isinstance(policy, str) and not policy:
            raise InstanceError("policy", "must name a registered policy (placement.list_policies()), got ''")
        show = _interactive() if progress is None else progress is True
        with contextlib.ExitStack() as stack:
            line = stack.enter_context(_Line("simulating")) if show else None
            run = _simulate(trace, cluster, policy, options, seed, perf, start, hours, sample, checkpoint, scan,
                            bin_s, progress=line if line is not None else progress if callable(progress) else None,
                            announce=announce or (line.note if line is not None else None))
    note = network_note(run)
    if note:
        warnings.warn(note, UserWarning, stacklevel=2)
    return run


# -- solve ----------------------------------------------------------------------------------------
@_face
def solve(instance, solver: str | None = None, *, time_limit: float | None = None, seed: int | None = None,
          **options: Any):
    """Solve an instance of any registered family by solver name: ``placement solve``.

    ``instance``: a file, a parsed document or an instance object (a ``TetrisInstance`` ...);
    ``solver``: one of the family's solver names (:func:`list_solvers` lists them; default its
    exact model); ``time_limit``: seconds, a positive finite number; ``seed``: an integer >= 0;
    ``options``: the solver's keyword arguments (:func:`list_options` lists them with types and
    defaults), checked against its signature as ``--option`` is. Returns the
    :class:`~placement.result.SolveResult`, whose objective is the family's reference
    evaluation of its solution.
    """
    if time_limit is not None and (isinstance(time_limit, bool) or not isinstance(time_limit, int | float)
                                   or not math.isfinite(time_limit) or time_limit <= 0):
        raise InstanceError("time_limit", f"must be a positive finite number of seconds or None, got {time_limit!r:.60}")
    _seed(seed, allow_none=True)
    return solve_options(instance, solver, time_limit, seed, options)


def _seed(seed, allow_none: bool = False, name: str = "seed") -> None:
    if seed is None and allow_none:
        return
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InstanceError(name, f"must be a non-negative integer{' or None' if allow_none else ''}, got {seed!r:.60}")


# -- sweep ----------------------------------------------------------------------------------------
_JSON_COLUMNS = ("options", "resolved_options", "trace", "size")


@_face
def sweep(spec, out: str | os.PathLike | None = None, *, workers: int = 0, scheduler: str | None = None,
          progress: bool = False):
    """Run a grid of solves or simulations: ``placement sweep``. Returns one row per cell as a
    DataFrame (the columns of ``results.csv``; the ``options``, ``resolved_options``,
    ``trace`` and ``size`` columns decoded from JSON into dicts and lists).

    ``spec``: a spec file (YAML or JSON) or the same mapping in Python; ``out``: the results
    folder (resumable: finished cells are kept and skipped on a rerun); default a temporary one,
    removed afterwards. ``workers=0`` runs the cells here, one after another; ``workers=N`` on a
    Dask LocalCluster of N processes; ``scheduler="tcp://..."`` on a running Dask scheduler.
    ``progress``: a progress bar (True or False).
    """
    import pandas as pd

    from .sweep import load_spec, run_sweep
    from .sweep.report import columns

    if isinstance(workers, bool) or not isinstance(workers, int) or not 0 <= workers <= 256:
        raise InstanceError("--workers", "must be an integer in 0..256")
    if not isinstance(progress, bool):
        raise InstanceError("progress", f"must be True or False, got {progress!r:.60}")
    loaded = load_spec(spec if isinstance(spec, dict) else str(spec))
    with contextlib.ExitStack() as stack:
        if out is None:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="placement-sweep-"))) / "sweep"
        else:
            from ..io import check_output_folder

            folder = check_output_folder(out, "-o", ("results.csv", "results.parquet", "summary.md"))
        stack.enter_context(agg_backend())
        stats = run_sweep(loaded, folder, workers=workers, scheduler=scheduler, progress=progress)
    rows = stats["rows"]
    df = pd.DataFrame([{c: r.get(c) for c in columns(rows)} for r in rows], columns=columns(rows))
    for col in _JSON_COLUMNS:
        if col in df:
            df[col] = [json.loads(v) if isinstance(v, str) and v[:1] in "{[" else v for v in df[col]]
    return df


# -- reproduce ------------------------------------------------------------------------------------
@dataclass(eq=False)
class Report:
    """A paper's reproduction, as ``placement reproduce`` wrote it into :attr:`out`.

    ``claims``: one row per claim (claim, source, paper, ours as one value per seed, ours_text,
    holds, rule, difference, decided_by); ``regimes``: the regime map (claim, knob, value, seed,
    ours, paper, holds); ``holds`` is True, False or None (not judged) in both. ``results``: the
    rows the claims are computed from; ``figures``: the PNG files with their captions;
    ``markdown``: ``report.md``.
    """

    paper: str
    out: Path
    claims: Any
    regimes: Any
    results: Any
    figures: list[tuple[Path, str]]
    logs: int
    broken: dict[str, list[str]]

    @property
    def markdown(self) -> str:
        return (self.out / "report.md").read_text()

    def _repr_markdown_(self) -> str:  # Jupyter shows the report
        return self.markdown

    def __repr__(self) -> str:
        from .reproduce.claims import count_verdicts

        counts = count_verdicts(v for v in self.claims.get("verdict", []) if isinstance(v, str))
        said = ", ".join(f"{n} {v}" for v, n in counts.items()) or "none judged"
        return (f"Report({self.paper!r}: {len(self.claims)} claims ({said}); {self.logs} logs, "
                f"{len(self.broken)} failing replay_check; {self.out})")


def _holds(v) -> bool | None:
    """regimes.csv's ``yes``/``no``/empty as the claims' True/False/None."""
    if isinstance(v, bool):
        return v
    return {"yes": True, "no": False, "true": True, "false": False}.get(str(v).strip().lower())


@_face
def reproduce(name: str, quick: bool = False, seeds: int | None = None, out: str | os.PathLike | None = None,
              echo=None, workers: int = 0, scheduler: str | None = None) -> Report:
    """Run a paper's evaluation on its own terms: ``placement reproduce NAME``; returns its
    :class:`Report` (``.claims`` and ``.regimes`` DataFrames, ``.figures``); ``.claims`` has one
    row per claim with its ``verdict`` (one of the seven categories of
    :mod:`placement.app.reproduce.claims`) and ``detail``.

    Parameters
    ----------
    name : str
        The paper: ``"dally"``, ``"hived"``, ``"mast"``, ``"cassini"`` (the registered ones).
    quick : bool
        The few-minutes version: fewer seeds, shorter trace windows, smaller sweeps (each
        reproduction's page says which); False runs the paper's full set-up.
    seeds : int, optional
        How many seeds (0..seeds-1, 1 to 50) every measured number is taken over; a claim's
        ``ours`` holds one value per seed. Default: the reproduction's own (fewer when quick).
    out : str or Path, optional
        The folder it writes (default ``reproduce-NAME``, as the command).
    echo : None, False or callable(str)
        The progress lines (which run, which seed): ``None`` prints them in Jupyter and on a
        terminal; ``False`` is quiet; a callable receives each line.
    workers, scheduler
        ``workers=N``: the simulations as Dask tasks on a LocalCluster of N processes;
        ``scheduler="tcp://..."``: on a running Dask scheduler (the outputs are the serial
        run's, ``workers=0``).
    """
    import pandas as pd

    from .reproduce import reproductions, run_reproduction

    reps = reproductions()
    if not isinstance(name, str) or name not in reps:
        raise unknown_name(name, reps, "name", "a registered reproduction")
    if not isinstance(quick, bool):
        raise InstanceError("quick", f"must be True or False, got {quick!r:.60}")
    if seeds is not None and (isinstance(seeds, bool) or not isinstance(seeds, int) or not 1 <= seeds <= 50):
        raise InstanceError("seeds", f"must be an integer in 1..50 or None, got {seeds!r:.60}")
    if out is not None and not isinstance(out, str | os.PathLike):
        raise InstanceError("out", f"must be a folder path or None, got {type(out).__name__}")
    if echo is not None and echo is not False and not callable(echo):
        raise InstanceError("echo", f"must be None, False or a callable taking one line, got {echo!r:.60}")
    if echo is None and _interactive():
        t0 = time.perf_counter()

        def echo(text: str) -> None:
            print(f"[{time.perf_counter() - t0:5.0f} s] {text}", flush=True)
    with agg_backend():
        ctx = run_reproduction(name, None if out is None else str(out), quick=quick, seeds=seeds,
                               echo=echo or None, workers=workers, scheduler=scheduler)
    cols = ["key", "claim", "source", "paper", "ours", "ours_text", "verdict", "detail", "reading", "holds", "rule",
            "difference", "decided_by"]
    claims = pd.DataFrame([{k: v for k, v in c.document().items() if k in cols} for c in ctx.claims], columns=cols)
    claims["holds"] = pd.Series([_holds(v) for v in claims["holds"]], dtype=object)
    regimes = pd.read_csv(ctx.out / "regimes.csv", keep_default_na=False) \
        if (ctx.out / "regimes.csv").is_file() and (ctx.out / "regimes.csv").stat().st_size else pd.DataFrame(
            columns=["claim", "knob", "value", "seed", "ours", "paper", "holds"])
    if "holds" in regimes:
        regimes["holds"] = pd.Series([_holds(v) for v in regimes["holds"]], dtype=object, index=regimes.index)
        for col in ("ours", "paper"):
            if col in regimes:
                regimes[col] = pd.to_numeric(regimes[col].replace("", None), errors="coerce")
    results = pd.read_parquet(ctx.out / "results.parquet") if (ctx.out / "results.parquet").is_file() \
        else pd.DataFrame()
    return Report(ctx.paper, Path(ctx.out), claims, regimes, results,
                  [(Path(ctx.out) / rel, cap) for rel, cap in ctx.figures], ctx.logs, dict(ctx.broken))


# -- compare --------------------------------------------------------------------------------------
_COMPARED = ("finished", "unfinished", "mean_jct_s", "median_jct_s", "p95_jct_s", "p99_jct_s", "mean_waiting_s",
             "mean_queueing_delay_s", "mean_comm_overhead_s", "mean_slowdown", "preemptions", "allocation_rate",
             "mean_utilization", "makespan_s")


def compare(runs, *, metrics: tuple[str, ...] | list[str] = _COMPARED, ax=None):
    """Several runs side by side: ``(table, figure)``.

    ``runs``: :class:`Run` objects (a list, or a dict label -> Run). ``table``: one row per run
    with its ``run`` label (``policy/seedN``, or the dict's key), ``policy``, ``seed``,
    ``trace``, ``jobs``, ``cluster``, ``perf`` and the headline ``metrics`` (:func:`list_metrics`
    defines each; times in s), so ``table.groupby("policy")`` gives spreads over seeds.
    ``figure``: the runs' JCT CDFs on one log-scaled axis (hours), drawn into ``ax`` when given.
    Runs on different traces or performance models compare numbers that do not measure the same
    thing: that is refused.
    """
    import matplotlib.pyplot as plt
    import numpy as np
    import pandas as pd

    with python_names():
        items = list(runs.items()) if isinstance(runs, dict) else [(None, r) for r in (runs or [])]
        if not items:
            raise InstanceError("runs", "must hold at least one Run")
        for _label, r in items:
            if not isinstance(r, Run):
                raise InstanceError("runs", f"must be Run objects (placement.simulate), got {type(r).__name__}")
        names = [str(label) if label is not None else r.label for label, r in items]
        if len(set(names)) != len(names):
            raise InstanceError("runs", "two runs have the same label: pass a dict of label -> Run")
        shared = {(r.instance.trace.name, len(r.instance.trace), r.instance.perf) for _, r in items}
        if len(shared) > 1:
            raise InstanceError("runs", "must share one trace window and performance model to be compared, got "
                                + "; ".join(f"{t} ({n} jobs, perf {p})" for t, n, p in sorted(shared)))
        unknown = [m for m in metrics if not isinstance(m, str)]
        if unknown:
            raise InstanceError("metrics", "must be metric names (placement.list_metrics())")
    rows = []
    for name, (_, r) in zip(names, items, strict=True):
        rows.append({"run": name, "policy": r.policy, "seed": r.seed, "trace": r.instance.trace.name,
                     "jobs": len(r.instance.trace), "cluster": r.instance.cluster.name, "perf": r.instance.perf,
                     **{m: r.metrics.get(m) for m in metrics}})
    table = pd.DataFrame(rows)
    if ax is None:
        fig, ax = plt.subplots(figsize=(7, 3.8))
    else:
        fig = ax.figure
    for name, (_, r) in zip(names, items, strict=True):
        jct = np.sort([row["jct"] for row in r.rows if row["jct"] is not None]) / 3600.0
        if len(jct):
            ax.plot(np.maximum(jct, 1e-4), np.arange(1, len(jct) + 1) / len(r.rows), label=name)
    ax.set_xscale("log")
    ax.set_xlabel("JCT (h)")
    ax.set_ylabel("fraction of all jobs finished")
    ax.set_ylim(0, 1.02)
    ax.set_title(f"JCT CDF: {items[0][1].instance.trace.name}, perf {items[0][1].instance.perf}")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return table, fig


# -- listings -------------------------------------------------------------------------------------
def list_policies():
    """Every registered simulator policy: a DataFrame (policy, description, network_aware),
    as ``placement simulate --help`` lists them. ``network_aware``: a policy whose placements
    matter only under a performance model that slows spread jobs (``perf="dally"``)."""
    import pandas as pd

    from ..sim.policies import describe_policies

    return pd.DataFrame([{"policy": n, "description": d, "network_aware": n in NETWORK_AWARE}
                         for n, d in describe_policies().items()], columns=["policy", "description", "network_aware"])


@_face
def list_solvers(family: str | None = None):
    """The solvers of a problem family (``"tetris"``, ``"hived"``, ``"cassini"``), or of every
    family: a DataFrame (family, solver, exact, description), ``exact`` True for the family's
    default exact model (``placement.solve``'s default)."""
    import inspect

    import pandas as pd

    from ..registry import problems, resolve

    specs = {n: s for n, s in problems().items() if n != "trace"}   # the trace family is simulate()'s
    if family is not None and family not in specs:
        raise unknown_name(family, specs, "family", "a problem family")
    rows = []
    for name, spec in specs.items():
        if family is not None and name != family:
            continue
        for solver, target in spec.solvers.items():
            doc = inspect.getdoc(resolve(target)) or ""
            rows.append({"family": name, "solver": solver, "exact": solver == spec.exact_solver,
                         "description": doc.strip().splitlines()[0] if doc.strip() else ""})
    return pd.DataFrame(rows, columns=["family", "solver", "exact", "description"])


@_face
def list_options(name: str, family: str | None = None):
    """The options a policy (``list_options("dally")``) or a solver (``list_options("lns")``;
    ``family=`` only where two families have a solver of that name) takes: a DataFrame (option,
    type, default). ``type`` is what a value must be, as the option
    checker says it (``float >= 0``, ``one of [...]``); empty: not settable from the command line
    (a Python object may still be passed). A solver's ``seed`` and ``time_limit``, where it takes
    them, are given as ``solve``'s own parameters, not in its options."""
    import inspect

    import pandas as pd

    from ..options import option_listing
    from ..registry import problems, resolve
    from ..sim.policies import policy_class, policy_names

    specs = {n: s for n, s in problems().items() if n != "trace"}
    if family is None and name not in policy_names():
        owners = [f for f, spec in specs.items() if name in spec.solvers]
        if len(owners) > 1:
            raise InstanceError("family", f"must be given: {name!r} is a solver of {', '.join(owners)}")
        if not owners:
            known = list(policy_names()) + sorted({s for spec in specs.values() for s in spec.solvers})
            raise unknown_name(name, known, "name", "a registered policy or a solver")
        family = owners[0]     # a solver name that one family has: its family
    if family is None:
        rows = option_listing(policy_class(name))
    else:
        if family not in specs:
            raise unknown_name(family, specs, "family", "a problem family")
        if name not in specs[family].solvers:
            raise unknown_name(name, specs[family].solvers, "name", f"a solver of {family}")
        fn = resolve(specs[family].solvers[name])
        params = list(inspect.signature(fn).parameters)[1:]
        rows = option_listing(fn, only=params)
    return pd.DataFrame(rows, columns=["option", "type", "default"])


def list_metrics():
    """The glossary of a run's headline numbers (``run.metrics``, ``summary.json``'s ``metrics``,
    the columns of :func:`compare`): a DataFrame (metric, unit, definition). In short:

    - JCT = finish - submit; ``mean_queueing_delay_s`` is the *first* wait (first start - submit);
      ``mean_waiting_s`` is *every* wait, JCT - run time (Dally §5.1.4), so it exceeds the first
      wait when jobs are preempted or migrated.
    - ``mean_utilization`` and ``allocation_rate`` are measured inside the window from the first to
      the last submit (MAST §5.2), not over the drain; None when every job arrives at once.
    - ``mean_comm_overhead_s`` = run time - ideal duration: 0 under ``perf="ideal"``.

    The full table: ``placement/sim/README.md`` ("Metrics") and this function's result."""
    import pandas as pd

    from ..sim.metrics import METRICS

    return pd.DataFrame([{"metric": k, "unit": u, "definition": d} for k, (u, d) in METRICS.items()],
                        columns=["metric", "unit", "definition"])
