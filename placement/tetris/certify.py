"""Certified gaps of Tetris heuristics: a heuristic's objective against a valid lower bound.

A bound comes from ``placement solve FILE --solver bound -o B.json`` (the
relaxation of :mod:`placement.models.tetris_bound`), from the exact model's ``bound``, or
from any number the caller vouches for. :func:`given_bound` reads ``--option
bound=...`` (a number or such a file); :func:`attach` records the gap in a
heuristic's :class:`~placement.result.SolveResult` without changing its decisions.
"""

from __future__ import annotations

import math
from pathlib import Path

from ..errors import InstanceError
from ..result import SolveResult, relative_gap
from .instance import TetrisInstance

__all__ = ["given_bound", "attach"]


def given_bound(value, inst: TetrisInstance) -> float:
    """The lower bound named by ``value``: a finite number, or a JSON file with a ``bound`` field.

    A file written by ``solve --solver bound -o`` names its instance in
    ``stats["instance"]``; a file for another instance is refused.
    """
    from ..io import read_document

    if isinstance(value, bool):
        raise InstanceError("bound", "must be a number or a file written by `solve --solver bound -o`")
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            raise InstanceError("bound", f"must be finite, got {value}")
        return float(value)
    if not isinstance(value, str) or not Path(value).is_file():
        raise InstanceError("bound", f"must be a number or an existing file, got {str(value)[:80]!r}")
    doc = read_document(value)
    b = doc.get("bound") if isinstance(doc, dict) else None
    if isinstance(b, bool) or not isinstance(b, (int, float)) or not math.isfinite(b):
        raise InstanceError("bound", f"{value} has no finite 'bound' field")
    named = (doc.get("stats") or {}).get("instance") if isinstance(doc.get("stats"), dict) else None
    if named and inst.name and named != inst.name:
        raise InstanceError("bound", f"{value} is a bound of instance {named!r}, not {inst.name!r}")
    return float(b)


def attach(res: SolveResult, bound: float, source: str) -> SolveResult:
    """Record ``bound`` (valid lower bound) and the certified gap of ``res.objective`` in ``res.stats``.

    ``res.bound`` becomes the larger of its own bound and ``bound`` (both valid). A
    bound above the objective cannot be a lower bound of this instance: it is kept
    in the stats with ``bound_inconsistent`` and not used.
    """
    res.stats["certified_bound"] = bound
    res.stats["bound_source"] = source
    if res.objective is None:
        return res
    if bound > res.objective + 1e-9 * max(1.0, abs(res.objective)):
        res.stats["bound_inconsistent"] = True
        return res
    res.bound = bound if res.bound is None else max(res.bound, bound)
    res.stats["certified_gap"] = relative_gap(res.objective, res.bound)
    return res
