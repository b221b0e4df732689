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

``simulate`` and :class:`Run` are the run module's (:mod:`placement.app.run`), ``solve`` calls
:func:`placement.app.solving.solve_options`: the command line calls the same functions, and no
module of the package imports this one (it is the top; ``tests/core/test_imports.py``).

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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InstanceError
from .report import agg_backend
from .run import Run, simulate
from .solving import solve_options

__all__ = ["simulate", "Run", "solve", "sweep", "reproduce", "Report"]


# -- solve ----------------------------------------------------------------------------------------
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
    from .sweep.report import columns

    if isinstance(workers, bool) or not isinstance(workers, int) or not 0 <= workers <= 256:
        raise InstanceError("--workers", "must be an integer in 0..256")
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
    return pd.DataFrame([{c: r.get(c) for c in columns(rows)} for r in rows], columns=columns(rows))


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

    with agg_backend():
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
