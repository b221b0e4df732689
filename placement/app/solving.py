"""Solving an instance of any registered family by solver name, below both the face
(``placement.solve``, :mod:`placement.app.api`) and the command line (``placement solve``,
:mod:`placement.app.commands`), which both call :func:`solve_options`."""

from __future__ import annotations

import os
from typing import Any

from ..errors import InstanceError

__all__ = ["family_of", "solve_options"]


def family_of(instance) -> tuple[Any, Any]:
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


def solve_options(instance, solver: str | None, time_limit: float | None, seed: int | None,
                  options: dict[str, Any]):
    """:func:`placement.solve` with the options as one mapping (the command line's ``--option`` pairs,
    where a key may clash with ``seed``: the checker then names the flag to use)."""
    from ..registry import call_solver, check_solver_options

    spec, inst = family_of(instance)
    name = spec.exact_solver if solver is None else solver
    if name not in spec.solvers:
        from .options import unknown_name

        raise unknown_name(name, spec.solvers, "--solver", f"a solver of {spec.name}")
    extra = check_solver_options(spec, name, dict(options), reserved={"seed": "--seed", "time_limit": "--time-limit"})
    return call_solver(spec, name, inst, time_limit=time_limit, seed=seed, **extra)
