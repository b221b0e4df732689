"""Registry of simulator policies: the entry-point group ``placement.policies``.

A policy is a class in its own module (``solvers/online/<name>.py``) announced by one line in
``pyproject.toml``::

    [project.entry-points."placement.policies"]
    fifo = "placement.solvers.online.fifo:FIFO"

The simulator core never names a policy: it finds them here, loading a module only when its
policy is asked for. The first line of a class's docstring is its one-line description
(``placement simulate --help`` lists them).
"""

from __future__ import annotations

import inspect
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from ..errors import InstanceError

__all__ = ["ENTRY_POINT_GROUP", "policy_entry_points", "policy_names", "policy_class", "make_policy",
           "describe_policies"]

ENTRY_POINT_GROUP = "placement.policies"


@cache
def policy_entry_points() -> dict[str, EntryPoint]:
    """Every registered policy's entry point, by name (sorted)."""
    eps = sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name)
    return {ep.name: ep for ep in eps}


def policy_names() -> list[str]:
    return list(policy_entry_points())


def policy_class(name: str):
    """The class registered as ``name``; :class:`InstanceError` on ``--policy`` when unknown."""
    eps = policy_entry_points()
    if name not in eps:
        raise InstanceError("--policy", f"must be one of {', '.join(eps)}, not {name!r}")
    return eps[name].load()


def make_policy(name: str, **options: Any):
    """A fresh policy object ``name`` built with ``options`` as given (no data filled in: see
    :func:`placement.app.policy_data.build_policy` for what ``placement simulate`` adds)."""
    return policy_class(name)(**options)


def describe_policies() -> dict[str, str]:
    """Name -> the first line of the policy class's docstring."""
    out = {}
    for name in policy_entry_points():
        doc = inspect.getdoc(policy_class(name)) or ""
        out[name] = doc.strip().splitlines()[0] if doc.strip() else ""
    return out
