"""``placement reproduce PAPER``: a paper's evaluation on its own terms (app layer).

A *reproduction* runs one paper's experiments as the paper set them up, as far as public data
allows, and writes ``DIR/report.md``: one row per claim of the paper (the claim, the paper's
number with its figure or table, ours as median and min-max over seeds, whether it holds, and
the set-up difference that explains any gap), the figures, ``results.parquet`` /
``results.csv`` (one row per run and seed: the numbers the claims are computed from) and every
simulation log under ``logs/<run>/`` (``instance.json`` + ``log.json``, so ``placement evaluate
logs/<run>/instance.json logs/<run>/log.json`` recomputes a run's metrics from outside). Every
log is checked with ``replay_check`` as it is written; a broken log is reported in
``report.md`` and the command exits 1.

Reproductions register like problem families: a :class:`Reproduction` in an app-layer module
``placement/app/reproduce/<paper>.py``, announced in ``pyproject.toml`` under the entry-point
group ``placement.reproductions``. Its ``run(ctx)`` receives a :class:`~.context.Context`
(the seeds, ``quick``, the staging folder) and records claims, rows, figures and notes on it.

Options: ``--quick`` (a few minutes on 2 cores: fewer seeds, shorter windows, as each paper's
module states), ``--seeds N`` (default: the reproduction's own, at least 3; seeds are
``0..N-1``), ``--out DIR`` (default ``reproduce-<paper>``), ``--workers N`` (the simulations
as Dask tasks on a LocalCluster of N processes; default 0: serially, here) or ``--scheduler
ADDR`` (on a running ``dask scheduler``): the engine of ``placement sweep``, with the serial
run's outputs (:mod:`.parallel` says how, for any paper's module unchanged). Outputs are staged
and moved into place at the end: an error or an interrupt leaves ``DIR`` as it was.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, partial
from importlib.metadata import entry_points

from ...errors import InstanceError
from ..options import nonnegative_int
from .claims import PaperSpec
from .context import Claim, Context, spread

__all__ = ["Reproduction", "Claim", "Context", "spread", "reproductions", "get_reproduction", "configured",
           "add_parser", "run_reproduction", "ENTRY_POINT_GROUP"]

ENTRY_POINT_GROUP = "placement.reproductions"


@dataclass(frozen=True)
class Reproduction:
    """One paper's evaluation.

    Attributes
    ----------
    name : str
        Command-line name (``placement reproduce NAME``).
    title : str
        The paper: title, venue, year.
    summary : str
        One line: what is run.
    run : callable(Context) -> None
        Runs the experiments and records claims, rows, figures and notes on the context.
    seeds, quick_seeds : int
        Default number of seeds in a full and a ``--quick`` run (a full run judges every claim on
        at least 5).
    spec : PaperSpec or None
        The paper's numbers, claims, knobs and choices (:mod:`.claims`): every claim the run
        records is judged by the one verdict function against it.
    """

    name: str
    title: str
    summary: str
    run: Callable[[Context], None]
    seeds: int = 5
    quick_seeds: int = 3
    spec: PaperSpec | None = None

    def __post_init__(self) -> None:
        if self.spec is not None and not isinstance(self.spec, PaperSpec):
            raise InstanceError(f"reproduction {self.name}: spec", "must be a PaperSpec")
        if self.spec is not None and self.seeds < 5:
            raise InstanceError(f"reproduction {self.name}: seeds", f"a full run judges on at least 5 seeds, got {self.seeds}")


def configured(rep: Reproduction, seeds: int, **run_options) -> Reproduction:
    """The same reproduction with ``run_options`` passed to its ``run`` (for instance a smaller
    ``config``) and ``seeds`` seeds in full and quick runs alike (tests use a tiny one)."""
    new = dataclasses.replace(rep, run=partial(rep.run, **run_options))
    object.__setattr__(new, "seeds", seeds)          # below the full run's 5: a test's tiny run
    object.__setattr__(new, "quick_seeds", seeds)
    return new


@cache
def reproductions() -> dict[str, Reproduction]:
    """Every registered reproduction, by name, in a stable order."""
    found: dict[str, Reproduction] = {}
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        rep = ep.load()
        found[rep.name] = rep
    return found


def get_reproduction(name: str) -> Reproduction:
    reps = reproductions()
    if name not in reps:
        raise InstanceError("PAPER", f"must be one of {sorted(reps)}, got {name!r}")
    return reps[name]


def add_parser(sub) -> None:
    reps = reproductions()
    listing = "\n".join(f"  {r.name:<8} {r.summary}" for r in reps.values())
    p = sub.add_parser("reproduce", help="a paper's evaluation on its own terms: report.md, figures, logs",
                       description="Run a paper's evaluation as the paper set it up and write "
                       "OUT/report.md (one row per claim: the paper's number, ours as median and "
                       "min-max over seeds, whether it holds, the set-up difference), figures, "
                       "results.parquet and every log (each checked with replay_check).",
                       epilog=f"papers:\n{listing}", formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paper", metavar="PAPER", help=f"one of: {', '.join(reps) or '(none registered)'}")
    p.add_argument("--quick", action="store_true", help="the few-minutes version (fewer seeds, shorter windows)")
    p.add_argument("--seeds", type=nonnegative_int, default=None,
                   help="number of seeds (0..N-1); default: the paper's reproduction's own")
    p.add_argument("--out", default=None, help="output folder (default: reproduce-PAPER)")
    p.add_argument("--workers", type=nonnegative_int, default=0,
                   help="run the simulations as Dask tasks on a LocalCluster of N processes (default 0: here, "
                   "serially); the outputs are the serial run's")
    p.add_argument("--scheduler", default=None, metavar="ADDR",
                   help="run the simulations on the Dask scheduler at ADDR (tcp://host:port) instead")
    p.set_defaults(func=cmd_reproduce)


def run_reproduction(name: str, out: str | None = None, quick: bool = False, seeds: int | None = None,
                     echo: Callable[[str], None] | None = None, workers: int = 0,
                     scheduler: str | None = None) -> Context:
    """Run a reproduction into ``out`` (staged; moved into place when it ends) and return its
    context (claims, rows, files). ``workers`` > 0 or ``scheduler``: the simulations run as Dask
    tasks (:mod:`.parallel`), the outputs are the serial run's."""
    from ...io import check_output_folder, staged_folder

    if isinstance(workers, bool) or not isinstance(workers, int) or not 0 <= workers <= 256:
        raise InstanceError("--workers", "must be an integer in 0..256")
    if scheduler is not None and (not isinstance(scheduler, str) or not scheduler.strip()):
        raise InstanceError("--scheduler", "must be a scheduler address such as tcp://127.0.0.1:8786")
    rep = get_reproduction(name)
    n = (rep.quick_seeds if quick else rep.seeds) if seeds is None else seeds
    if n < 1:
        raise InstanceError("--seeds", "must be at least 1")
    if n > 50:
        raise InstanceError("--seeds", f"must be at most 50, got {n}")
    folder = check_output_folder(out or f"reproduce-{rep.name}", option="--out",
                                 files=("report.md", "results.csv", "results.parquet", "regimes.csv"))
    t0 = time.perf_counter()
    with staged_folder(folder) as stage:
        if workers or scheduler:
            from .parallel import run_passes

            ctx = run_passes(rep.run, lambda runner, say: Context(rep.name, rep.title, stage, quick=quick,
                                                                  seeds=list(range(n)), echo=say, runner=runner,
                                                                  spec=rep.spec),
                             stage, workers=workers, scheduler=scheduler, echo=echo)
        else:
            ctx = Context(rep.name, rep.title, stage, quick=quick, seeds=list(range(n)), echo=echo, spec=rep.spec)
            rep.run(ctx)
        ctx.finish(time.perf_counter() - t0, command=_command(rep.name, quick, seeds, out))
    ctx.out = folder
    return ctx


def _command(name: str, quick: bool, seeds: int | None, out: str | None) -> str:
    parts = ["placement reproduce", name] + (["--quick"] if quick else [])
    parts += [f"--seeds {seeds}"] if seeds is not None else []
    return " ".join(parts)


def cmd_reproduce(args: argparse.Namespace) -> int:
    from rich.console import Console

    console = Console(highlight=False)
    if args.workers > 256:
        raise InstanceError("--workers", "must be an integer in 0..256")
    ctx = run_reproduction(args.paper, args.out, quick=args.quick, seeds=args.seeds,
                           echo=lambda s: console.print(s, markup=False), workers=args.workers,
                           scheduler=args.scheduler)
    console.print(f"{len(ctx.claims)} claims ({ctx.counts_line()}); "
                  f"{ctx.logs} logs, {len(ctx.broken)} failing replay_check; wrote {ctx.out}/report.md",
                  markup=False)
    return 0 if not ctx.broken else 1
