"""Problem families and how the app layer finds them.

A problem family (tetris, cassini, hived, ...) describes itself with one
:class:`ProblemSpec` and announces it in ``pyproject.toml`` under the
entry-point group ``placement.problems``. The CLI and the benchmark harness
only ever talk to specs, so a new family plugs in without editing the core.

Solvers are named by ``"module:function"`` strings and imported lazily by the
app layer (``placement/app/``), so that nothing in ``placement/`` outside it
imports ``models/`` or ``solvers/``.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import math
import sys
import types
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import entry_points
from typing import Any

from .errors import InstanceError

__all__ = ["ProblemSpec", "BenchSection", "problems", "get_problem", "resolve", "lazy", "call_solver",
           "solver_parameters", "check_solver_options", "problem_of_document"]

ENTRY_POINT_GROUP = "placement.problems"


@dataclass
class BenchSection:
    """Problem-specific benchmark output beyond the exact-vs-heuristic table."""

    title: str
    markdown: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    figures: list[str] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)


@dataclass
class ProblemSpec:
    """Everything the app layer needs to know about one problem family.

    Attributes
    ----------
    name : str
        Key used in files (``"problem": name``) and on the command line.
    sense : {"min", "max"}
        Optimization sense of the reference objective.
    load_instance : callable(doc) -> instance
        Validating loader; raises :class:`InstanceError`.
    instance_to_json : callable(instance) -> dict
    load_solution : callable(instance, doc) -> solution
    solution_to_json : callable(instance, solution) -> dict
    evaluate_report : callable(instance, solution) -> (dict, list[str])
        Objective terms and measures, and the list of violated hard constraints.
    solvers : dict[str, str]
        Solver name -> ``"module:function"``; the function returns ``SolveResult``.
    exact_solver : str
        Name of the exact solver (reference for gaps in benchmarks).
    add_generate_args / generate : argparse hooks for ``placement generate NAME``.
    bench_instances : callable(quick: bool) -> list[(name, instance)]
    bench_solvers : list of solver names run on each benchmark instance.
    bench_options : dict solver name -> extra keyword arguments in benchmarks.
    bench_extra : str
        ``"module:function"`` of an app-layer module (``placement/app/bench_<name>.py``),
        called as ``fn(out_dir=..., quick=..., scale=..., seed=..., progress=...)`` (plus
        ``rows=``, the family's rows of the main exact-vs-heuristic table, when it takes
        that parameter) and returning a list of :class:`BenchSection`.
    claims : callable(doc) -> bool, for documents without a ``"problem"`` key.
    add_commands : callable(subparsers) adding family-specific CLI commands.
    """

    name: str
    sense: str
    description: str
    load_instance: Callable[[Any], Any]
    instance_to_json: Callable[[Any], dict]
    load_solution: Callable[[Any, Any], Any]
    solution_to_json: Callable[[Any, Any], dict]
    evaluate_report: Callable[[Any, Any], tuple[dict, list[str]]]
    solvers: dict[str, str]
    exact_solver: str
    add_generate_args: Callable[[argparse.ArgumentParser], None] | None = None
    generate: Callable[[argparse.Namespace], Any] | None = None
    bench_instances: Callable[[bool], list[tuple[str, Any]]] | None = None
    bench_solvers: list[str] = field(default_factory=list)
    bench_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    bench_extra: str | None = None
    claims: Callable[[Any], bool] | None = None
    add_commands: Callable[[Any], None] | None = None


@cache
def problems() -> dict[str, ProblemSpec]:
    """All registered problem families, by name, in a stable order."""
    found: dict[str, ProblemSpec] = {}
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        spec = ep.load()
        found[spec.name] = spec
    return found


def get_problem(name: str) -> ProblemSpec:
    specs = problems()
    if name not in specs:
        raise InstanceError("problem", f"must be one of {sorted(specs)}, got {name!r}")
    return specs[name]


def problem_of_document(doc: Any) -> ProblemSpec:
    """The family a parsed instance document belongs to."""
    if isinstance(doc, dict) and "problem" in doc:
        return get_problem(doc["problem"]) if isinstance(doc["problem"], str) else get_problem(repr(doc["problem"]))
    for spec in problems().values():
        if spec.claims is not None and spec.claims(doc):
            return spec
    raise InstanceError("problem", "missing: the document must name its problem "
                        f"(one of {sorted(problems())})")


def resolve(target: str) -> Callable[..., Any]:
    """Import ``"module:function"``."""
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def lazy(target: str) -> Callable[..., Any]:
    """``"module:function"`` as a function that imports its module on the first call.

    A family's adapter names its loaders and reference evaluation this way, so that listing the
    families (every command does) does not import them and what they import (networkx, scipy).
    """
    module, _, attr = target.partition(":")
    if not module or not attr:
        raise ValueError(f"target: must be 'module:function', got {target!r}")

    def call(*args: Any, **kwargs: Any) -> Any:
        return resolve(target)(*args, **kwargs)

    call.__name__ = call.__qualname__ = attr
    call.__doc__ = f"``{target}``, imported on its first call."
    return call


def solver_parameters(spec: ProblemSpec, solver: str) -> list[str]:
    """Keyword parameters of a solver function (after the instance)."""
    if solver not in spec.solvers:
        raise InstanceError("--solver", f"must be one of {sorted(spec.solvers)} for {spec.name}, got {solver!r}")
    params = list(inspect.signature(resolve(spec.solvers[solver])).parameters.values())[1:]
    return [p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _option_kinds(hint: Any) -> tuple[set[type], tuple | None, bool]:
    """The plain types a command-line value may take for an annotation, its ``Literal`` choices, and
    whether ``None`` is allowed. An empty type set means: not settable from the command line."""
    origin = typing.get_origin(hint)
    if hint is type(None):
        return set(), None, True
    if origin is typing.Literal:
        return {type(a) for a in typing.get_args(hint)}, typing.get_args(hint), False
    if origin in (typing.Union, types.UnionType):
        kinds: set[type] = set()
        choices: tuple = ()
        has_choices, optional = False, False
        for arg in typing.get_args(hint):
            k, c, o = _option_kinds(arg)
            kinds |= k
            optional |= o
            if c is not None:
                has_choices = True
                choices += c
        return kinds, (choices if has_choices else None), optional
    if hint in (int, float, bool, str):
        return {hint}, None, False
    return set(), None, False


def _fits(value: Any, kinds: set[type]) -> bool:
    if isinstance(value, bool):
        return bool in kinds
    if isinstance(value, int):
        return int in kinds or float in kinds
    if isinstance(value, float):
        return float in kinds and math.isfinite(value)
    return isinstance(value, str) and str in kinds


def check_solver_options(spec: ProblemSpec, solver: str, options: dict[str, Any],
                         reserved: dict[str, str] | None = None) -> dict[str, Any]:
    """Validate ``--option`` values against the solver's signature before it runs
    (:func:`placement.options.check_options`: the same checker as for policies).

    Each key must be a keyword parameter of the solver, not one of ``reserved`` (the
    parameters that have their own flags, e.g. ``seed`` -> ``--seed``), and its value
    must fit the parameter's annotation. Parameters of other types (arrays, solutions)
    cannot be set from the command line. Returns the options converted to what the solver
    takes; raises :class:`InstanceError` naming ``--option``.
    """
    from .options import check_options

    accepted = solver_parameters(spec, solver)
    return check_options(resolve(spec.solvers[solver]), options, owner=f"solver {solver!r}",
                         reserved=reserved, only=accepted)


def call_solver(spec: ProblemSpec, solver: str, instance: Any, **options: Any):
    """Run ``solver`` of ``spec`` on ``instance``, passing only the options it accepts.

    Options the solver does not take are dropped with a one-line note on stderr, never silently.
    """
    if solver not in spec.solvers:
        raise InstanceError("--solver", f"must be one of {sorted(spec.solvers)} for {spec.name}, got {solver!r}")
    fn = resolve(spec.solvers[solver])
    params = inspect.signature(fn).parameters
    accepts_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    kwargs = {}
    for key, value in options.items():
        if value is None:
            continue
        if accepts_any or key in params:
            kwargs[key] = value
        else:
            # One line, never a multi-line warning: e.g. --seed given to a deterministic model.
            print(f"note: solver {solver!r} takes no {key!r}; it is ignored", file=sys.stderr)
    return fn(instance, **kwargs)


def names(items: Iterable[str]) -> str:
    return ", ".join(sorted(items))
