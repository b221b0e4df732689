"""`SolveResult`: the one result type every exact model and heuristic returns.

Status codes
------------
``optimal``
    An exact solver proved optimality (within its ``mip_gap``).
``feasible``
    A solution satisfying every hard constraint, optimality not proven
    (heuristics always report this when they succeed).
``infeasible``
    An exact solver proved that no solution exists, or a heuristic found no
    feasible solution (``stats["proof"]`` tells which).
``time_limit``
    The time limit was hit; ``solution`` is the incumbent or ``None``.
``error``
    The solver failed; ``message`` says why.

``objective`` is always the *reference evaluation* of ``solution`` (never the
solver's own number), ``bound`` the best proven bound for exact solvers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = ["Status", "SolveResult", "relative_gap"]


class Status(StrEnum):
    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    INFEASIBLE = "infeasible"
    TIME_LIMIT = "time_limit"
    ERROR = "error"


def relative_gap(value: float | None, reference: float | None, sense: str = "min", *,
                 relative_to: str = "reference") -> float | None:
    """Relative distance of ``value`` from ``reference`` in the bad direction: the one gap formula.

    ``(value - reference) / max(|reference|, 1e-9)`` for minimization and the
    mirror image for maximization; ``None`` when either is missing or not finite.
    ``relative_to="value"`` divides by ``max(|value|, 1e-9)`` instead: the MIP
    solvers' gap of an incumbent ``value`` over its bound ``reference`` (HiGHS's
    ``mip_rel_gap``). :attr:`SolveResult.gap` and the benchmarks divide by the
    reference (the bound, the best known value).
    """
    if value is None or reference is None:
        return None
    if not (math.isfinite(value) and math.isfinite(reference)):
        return None
    if relative_to not in ("reference", "value"):
        raise ValueError(f"relative_to must be 'reference' or 'value', got {relative_to!r}")
    diff = value - reference if sense == "min" else reference - value
    return diff / max(abs(reference if relative_to == "reference" else value), 1e-9)


@dataclass
class SolveResult:
    """Outcome of one solve (see the module docstring for the statuses)."""

    status: Status
    solver: str
    solution: Any = None
    objective: float | None = None
    bound: float | None = None
    wall_time_s: float = 0.0
    stats: dict[str, Any] = field(default_factory=dict)
    message: str = ""
    sense: str = "min"

    def __post_init__(self) -> None:
        self.status = Status(self.status)

    @property
    def gap(self) -> float | None:
        """Relative gap between ``objective`` and ``bound`` (``None`` without a bound)."""
        g = relative_gap(self.objective, self.bound, self.sense)
        return None if g is None else max(g, 0.0)

    @property
    def has_solution(self) -> bool:
        return self.solution is not None

    def __repr__(self) -> str:
        """One readable line: status, objective, bound and gap, time; the statistics by name only
        (``result.stats`` holds them)."""
        def num(v):
            return "-" if v is None else f"{v:,.6g}"

        gap = self.gap
        # a heuristic reports "feasible" by contract; a bound it carries may still prove more
        proven = " (its bound proves it optimal)" if self.status == Status.FEASIBLE and gap == 0.0 else ""
        return (f"SolveResult(status={str(self.status)!r}{proven}, solver={self.solver!r}, objective={num(self.objective)}, "
                f"bound={num(self.bound)}, gap={'-' if gap is None else f'{gap:.3%}'}, "
                f"wall_time={self.wall_time_s:.2f} s" + (f", message={self.message[:80]!r}" if self.message else "")
                + (f", stats: {', '.join(list(self.stats)[:8])}{' ...' if len(self.stats) > 8 else ''}"
                   if self.stats else "") + ")")

    def to_dict(self, solution_json: Any = None) -> dict[str, Any]:
        """Plain-JSON form; ``solution_json`` is the problem's serialized solution."""
        return {
            "solver": self.solver,
            "status": str(self.status),
            "objective": self.objective,
            "bound": self.bound,
            "gap": self.gap,
            "wall_time_s": self.wall_time_s,
            "stats": _jsonable(self.stats),
            "message": self.message,
            "solution": solution_json,
        }


def _jsonable(obj: Any) -> Any:
    """Convert numpy scalars/arrays and tuples into JSON-serializable values."""
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj
