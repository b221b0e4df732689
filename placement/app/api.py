"""The Python face of the package: ``placement.simulate``, ``placement.solve``, ``placement.sweep``,
``placement.reproduce`` (app layer; ``placement`` re-exports these names lazily).

Each function is what the command of the same name runs, so a notebook and a shell give the same
numbers and files, and bad input is the same one-line :class:`~placement.errors.InstanceError`:

=====================================  =================================================
Python                                 command line
=====================================  =================================================
``run = placement.simulate(...)``      ``placement simulate ... -o DIR`` (``run.save(DIR)``)
``placement.solve(inst, solver=...)``  ``placement solve FILE --solver ...``
``placement.sweep(spec)``              ``placement sweep SPEC -o DIR``
``placement.reproduce(paper)``         ``placement reproduce PAPER --out DIR``
=====================================  =================================================

Results are pandas DataFrames where they are tables: :attr:`Run.jobs` (one row per job),
:attr:`Run.log` (the event log), :attr:`Run.timeseries`, the sweep's rows,
:attr:`Report.claims` and :attr:`Report.regimes`.

Why a lazy re-export: the core (``placement`` outside ``placement.app``) never imports the app
(``../../README.md``, "Layout"); ``placement/__init__.py`` names these four functions and two
classes and imports this module only when one of them is first used (module ``__getattr__``),
so ``import placement`` and every core module still load no app, solver or model code.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InstanceError

__all__ = ["simulate", "Run", "solve", "sweep", "reproduce", "Report"]


# -- simulate -------------------------------------------------------------------------------------
@dataclass(eq=False)
class Run:
    """One simulation: what ``placement simulate`` computes, before it is written.

    Attributes
    ----------
    instance : SimInstance
        The trace window, cluster and performance model that ran.
    result : SimResult
        The engine's outcome (the event log ``result.log``, engine and policy statistics).
    policy : str
        The policy's registered name.
    seed : int
    metrics : dict
        The headline numbers (``summary.json``'s ``metrics``).
    violations : list of str
        replay_check's verdict, computed when the run ended (empty: a valid schedule).
    provenance : dict
        What made the run (``summary.json``'s ``run``): options as given and resolved
        (defaults included), seed, perf model, package version, the command line.
    policy_object : the policy as built (its statistics, its VC assignment ...).
    """

    instance: Any
    result: Any
    policy: str
    seed: int
    metrics: dict[str, Any]
    violations: list[str]
    provenance: dict[str, Any]
    policy_object: Any = None
    rows: list[dict[str, Any]] = field(default_factory=list, repr=False)
    bin_s: float | None = None

    def __repr__(self) -> str:
        return (f"Run({self.instance.trace.name!r}: {len(self.instance.trace)} jobs on {self.instance.cluster.name} "
                f"({self.instance.cluster.n_gpus} GPUs), policy {self.policy!r}, seed {self.seed}, "
                f"mean JCT {self.metrics.get('mean_jct_s')}, {len(self.violations)} replay violations)")

    @property
    def jobs(self):
        """One row per job (``jobs.csv``): submit, start, end, JCT, queueing delay, slowdown, state ..."""
        import pandas as pd

        return pd.DataFrame(self.rows)

    @property
    def log(self):
        """The event log (``log.csv``): time, event, job, gpus (a tuple), work_done, extra."""
        import pandas as pd

        return pd.DataFrame([r._asdict() for r in self.result.log],
                            columns=["time", "event", "job", "gpus", "work_done", "extra"])

    def _series(self) -> list[dict[str, Any]]:
        from ..sim.metrics import time_series

        return time_series(self.rows, self.result.log, self.instance.cluster.n_gpus, bin_s=self.bin_s)

    @property
    def timeseries(self):
        """Per time bin (``timeseries.csv``): utilization, queue length, running jobs, SLO
        violation rate per priority."""
        import pandas as pd

        return pd.DataFrame(self._series())

    @property
    def summary(self) -> dict[str, Any]:
        """The document ``summary.json`` holds."""
        from .simulate import summary_document

        return summary_document(self.instance, self.result, self.metrics, self.violations, self.provenance)

    def replay(self) -> list[str]:
        """replay_check run again from the log alone (and the checks the policy's guarantees add:
        :func:`placement.app.simulate.policy_checks`); an empty list is a valid schedule."""
        from ..sim.replay import replay_check
        from .simulate import policy_checks

        checks = policy_checks(self.policy, self.policy_object, self.instance.cluster)
        return replay_check(self.instance.trace, self.instance.cluster, self.result.log,
                            perf=self.instance.perf_model(), checks=checks)

    def plot(self) -> list:
        """The run's figures (utilization and queue, SLO violations per priority, JCT CDF) as
        matplotlib figures, drawn with the current backend (inline in a notebook)."""
        from .simulate import run_figures

        return [fig for _name, fig in run_figures(self._series(), self.rows,
                                                  f"{self.instance.trace.name} / {self.policy}")]

    def save(self, path: str | os.PathLike, *, checked: bool = False) -> list[str]:
        """Write what ``placement simulate -o PATH`` writes (``instance.json``, ``log.json``,
        ``log.csv``, ``jobs.csv``, ``timeseries.csv``, ``summary.json``, the plots), staged and
        moved into place as one set; returns the plot file names."""
        from ..io import staged_folder
        from .simulate import OUTPUT_FILES, write_outputs

        out = Path(path)
        if not checked:
            from ..io import check_output_folder

            out = check_output_folder(path, "-o", OUTPUT_FILES)
        with _agg_backend(), staged_folder(out) as stage:
            return write_outputs(stage, self.instance, self.result, self.rows, self.metrics, self.violations,
                                 bin_s=self.bin_s, run=self.provenance)


def simulate(trace, cluster=None, policy="fifo", options: dict[str, Any] | None = None, seed: int = 0,
             perf: str | None = None, start: float = 0.0, hours: float | None = None,
             sample: int | None = None, checkpoint: float | None = None, scan: float | None = None,
             bin_s: float | None = None, progress=None, announce=None) -> Run:
    """Run a scheduling policy on a trace: ``placement simulate`` without writing.

    Parameters
    ----------
    trace : str, Path, Trace or SimInstance
        A shipped trace name (``"philly"``, ``"openb"``), a trace file (Philly CSV, openb pod
        CSV, our CSV v1), a ``"trace"`` instance file (``instance.json`` of an earlier run), or
        an object.
    cluster : str or Cluster, optional
        Shorthand ``RxCxKxMxG[:TYPE]`` (regions x clusters x racks x machines x GPUs), a spec
        file, ``"openb"``, ``"cassini-testbed"``, or a Cluster; default by trace format.
    policy : str or Policy
        A registered policy name (``placement simulate --help`` lists them) or a built object.
    options : dict, optional
        The policy's constructor options (``--option KEY=VALUE``), checked against its
        annotations before the run.
    seed, perf, start, hours, sample, checkpoint, scan, bin_s
        As the command's options: ``start`` and ``hours`` in hours after the first submit,
        ``perf`` one of ``"ideal"`` (a trace file's default), ``"dally"``, ``"dally-machine"``.
    progress : callable(done, total, now), optional
        Called now and then during the run.

    Returns
    -------
    Run
        ``run.jobs``, ``run.log``, ``run.timeseries`` (DataFrames), ``run.summary``,
        ``run.replay()``, ``run.plot()``, ``run.save(DIR)``.

    Raises
    ------
    InstanceError
        Bad input, one line naming the option (``--hours: must be a positive finite number``).
    """
    from ..sim.policies import policy_class
    from .simulate import command_line, run_simulation, sim_instance

    if isinstance(policy, str):
        policy_class(policy)  # an unknown name is refused before the trace is read
    if options is not None and not isinstance(options, dict):
        raise InstanceError("options", f"must be a mapping of option names to values, got {type(options).__name__}")
    inst, fmt_ = sim_instance(trace, cluster, perf=perf, start=start, hours=hours, sample=sample, seed=seed,
                              checkpoint=checkpoint, scan=scan, bin_s=bin_s)
    if announce is not None:
        announce(f"{inst.trace.name}: {len(inst.trace)} jobs ({fmt_}) on {inst.cluster.name} "
                 f"({inst.cluster.n_gpus} GPUs), policy {policy if isinstance(policy, str) else type(policy).__name__}, "
                 f"perf {inst.perf}")
    built: list = []
    record: dict[str, Any] = {}
    res, rows, summ, broken = run_simulation(inst, policy, seed, dict(options or {}), progress=progress,
                                             built=built, record=record)
    record["bin_s"] = bin_s
    if isinstance(policy, str):
        record["command"] = command_line(trace, cluster, policy, options, seed, perf, start, hours, sample,
                                         checkpoint, scan, bin_s)
    return Run(inst, res, record["policy"], seed, summ, broken, record, built[0], rows, bin_s)


# -- solve ----------------------------------------------------------------------------------------
def _family_of(instance) -> tuple[Any, Any]:
    """(ProblemSpec, instance) for a file path, a parsed document or an instance object."""
    from ..io import read_document
    from ..registry import problem_of_document, problems

    if isinstance(instance, str | os.PathLike):
        doc = read_document(instance)
        spec = problem_of_document(doc)
        return spec, spec.load_instance(doc)
    if isinstance(instance, dict):
        spec = problem_of_document(instance)
        return spec, spec.load_instance(instance)
    module = type(instance).__module__
    for spec in problems().values():
        pkg = "placement.sim" if spec.name == "trace" else f"placement.{spec.name}"
        if module == pkg or module.startswith(pkg + "."):
            return spec, instance
    raise InstanceError("instance", f"must be an instance file, a document or an instance of a registered "
                        f"family ({', '.join(problems())}), got {type(instance).__name__}")


def solve(instance, solver: str | None = None, *, time_limit: float | None = None, seed: int | None = None,
          **options: Any):
    """Solve an instance of any registered family by solver name: ``placement solve``.

    ``instance``: a file, a parsed document or an instance object (a ``TetrisInstance`` ...);
    ``solver``: one of the family's solver names (``placement solve --help``; default its
    exact model); ``options``: the solver's keyword arguments, checked against its signature
    as ``--option`` is. Returns the :class:`~placement.result.SolveResult`, whose objective is
    the family's reference evaluation of its solution.
    """
    return solve_options(instance, solver, time_limit, seed, options)


def solve_options(instance, solver: str | None, time_limit: float | None, seed: int | None,
                  options: dict[str, Any]):
    """:func:`solve` with the options as one mapping (the command line's ``--option`` pairs,
    where a key may clash with ``seed``: the checker then names the flag to use)."""
    from ..registry import call_solver, check_solver_options

    spec, inst = _family_of(instance)
    name = solver or spec.exact_solver
    extra = check_solver_options(spec, name, dict(options), reserved={"seed": "--seed", "time_limit": "--time-limit"})
    return call_solver(spec, name, inst, time_limit=time_limit, seed=seed, **extra)


# -- sweep ----------------------------------------------------------------------------------------
def sweep(spec, out: str | os.PathLike | None = None, *, workers: int = 0, scheduler: str | None = None,
          progress: bool = False):
    """Run a grid of solves or simulations: ``placement sweep``. Returns one row per cell as a
    DataFrame (the columns of ``results.csv``).

    ``spec``: a spec file (YAML or JSON) or the same mapping in Python; ``out``: the results
    folder (resumable: finished cells are kept and skipped on a rerun); default a temporary one,
    removed afterwards. ``workers=0`` runs the cells here, one after another; ``workers=N`` on a
    Dask LocalCluster of N processes; ``scheduler="tcp://..."`` on a running Dask scheduler.
    """
    import pandas as pd

    from .sweep import load_spec, run_sweep
    from .sweep.report import _columns

    if isinstance(workers, bool) or not isinstance(workers, int) or not 0 <= workers <= 256:
        raise InstanceError("--workers", "must be an integer in 0..256")
    loaded = load_spec(spec if isinstance(spec, dict) else str(spec))
    with contextlib.ExitStack() as stack:
        if out is None:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="placement-sweep-"))) / "sweep"
        else:
            from ..io import check_output_folder

            folder = check_output_folder(out, "-o", ("results.csv", "results.parquet", "summary.md"))
        stack.enter_context(_agg_backend())
        stats = run_sweep(loaded, folder, workers=workers, scheduler=scheduler, progress=progress)
    rows = stats["rows"]
    return pd.DataFrame([{c: r.get(c) for c in _columns(rows)} for r in rows], columns=_columns(rows))


# -- reproduce ------------------------------------------------------------------------------------
@dataclass(eq=False)
class Report:
    """A paper's reproduction, as ``placement reproduce`` wrote it into :attr:`out`.

    ``claims``: one row per claim (claim, source, paper, ours as one value per seed, ours_text,
    holds, rule, difference, decided_by); ``regimes``: the regime map (claim, knob, value, seed,
    ours, paper, holds); ``results``: the rows the claims are computed from; ``figures``: the
    PNG files with their captions; ``markdown``: ``report.md``.
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
        held = int((self.claims["holds"] == True).sum()) if len(self.claims) else 0  # noqa: E712
        return (f"Report({self.paper!r}: {len(self.claims)} claims, {held} hold; {self.logs} logs, "
                f"{len(self.broken)} failing replay_check; {self.out})")


def reproduce(name: str, quick: bool = False, seeds: int | None = None, out: str | os.PathLike | None = None,
              echo=None, workers: int = 0, scheduler: str | None = None) -> Report:
    """Run a paper's evaluation on its own terms: ``placement reproduce NAME``; returns its
    :class:`Report` (``.claims`` and ``.regimes`` DataFrames, ``.figures``). ``out``: the
    folder it writes (default ``reproduce-NAME``, as the command). ``workers=N``: the
    simulations as Dask tasks on a LocalCluster of N processes; ``scheduler="tcp://..."``: on a
    running Dask scheduler (the same outputs as serially, ``workers=0``)."""
    import pandas as pd

    from .reproduce import run_reproduction

    with _agg_backend():
        ctx = run_reproduction(name, None if out is None else str(out), quick=quick, seeds=seeds, echo=echo,
                               workers=workers, scheduler=scheduler)
    claims = pd.DataFrame([{"claim": c.claim, "source": c.source, "paper": c.paper, "ours": c.ours,
                            "ours_text": c.ours_text(), "holds": c.holds, "rule": c.rule,
                            "difference": c.difference, "decided_by": c.decided_by} for c in ctx.claims],
                          columns=["claim", "source", "paper", "ours", "ours_text", "holds", "rule", "difference",
                                   "decided_by"])
    regimes = pd.read_csv(ctx.out / "regimes.csv") if (ctx.out / "regimes.csv").is_file() and \
        (ctx.out / "regimes.csv").stat().st_size else pd.DataFrame(
            columns=["claim", "knob", "value", "seed", "ours", "paper", "holds"])
    results = pd.read_parquet(ctx.out / "results.parquet") if (ctx.out / "results.parquet").is_file() \
        else pd.DataFrame()
    return Report(ctx.paper, Path(ctx.out), claims, regimes, results,
                  [(Path(ctx.out) / rel, cap) for rel, cap in ctx.figures], ctx.logs, dict(ctx.broken))


@contextlib.contextmanager
def _agg_backend():
    """Draw the files' figures with Agg, then give the caller's backend back (a notebook keeps
    its inline plots; the reproductions and the sweep select Agg for themselves)."""
    import matplotlib

    before = matplotlib.get_backend()
    try:
        yield
    finally:
        if matplotlib.get_backend() != before:
            with contextlib.suppress(Exception):
                matplotlib.use(before)
