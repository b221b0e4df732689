"""Checking an exact model's claim against the reference evaluation.

A solver's own number is never the last word. After an exact model is solved, the
rounded solution is scored by the problem's reference evaluation, and

* the model's objective value must equal that reference value within ``tol``
  (relative to ``max(1, |reference|)``): otherwise the model does not describe the
  objective it claims to, and its bound cannot be trusted either;
* the solver's bound must not be refuted by the reference value (for a maximization,
  ``reference <= bound + tol``): a bound beaten by a real solution is wrong;
* the relative gap between the reference value and the bound must be at most
  ``mip_gap`` (plus ``tol``).

Only when all three hold may a result be called ``optimal``. Otherwise an ``optimal``
status becomes ``feasible`` (the solution still satisfies every hard constraint), the
bound is replaced by an honest one (``None`` when it is refuted or the model disagrees
with the evaluation) and the message says which check failed. ``time_limit`` and other
statuses are left as they are (their bound is still checked). The record goes to
``stats["verification"]``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from placement.result import Status, relative_gap

__all__ = ["Verdict", "verify"]

TOL = 1e-6


@dataclass
class Verdict:
    status: Status
    bound: float | None
    message: str
    record: dict[str, Any]


def verify(status: Status, model_value: float | None, reference: float, bound: float | None, *,
           sense: str, mip_gap: float, tol: float = TOL) -> Verdict:
    """Check a solved model (see the module docstring); ``reference`` is the reference evaluation."""
    scale = max(1.0, abs(reference))
    agree = model_value is not None and math.isfinite(model_value) and abs(model_value - reference) <= tol * scale
    if bound is None or not math.isfinite(bound):
        refuted, gap = False, None
    else:
        refuted = (reference > bound + tol * scale) if sense == "max" else (reference < bound - tol * scale)
        gap = max(relative_gap(reference, bound, sense) or 0.0, 0.0)
    closed = gap is not None and not refuted and gap <= mip_gap + tol
    problems = []
    if not agree:
        problems.append(f"model objective {model_value!r} differs from the reference evaluation {reference!r}")
    if refuted:
        problems.append(f"solver bound {bound!r} is beaten by the reference evaluation {reference!r}")
    elif status == Status.OPTIMAL and not closed:
        problems.append(f"gap {gap!r} between the reference evaluation and the bound exceeds mip_gap {mip_gap!r}")
    honest = bound
    if not agree or refuted:
        honest = None
    elif honest is not None:
        # Within tolerance: the bound is at least as good as the solution it covers.
        honest = max(honest, reference) if sense == "max" else min(honest, reference)
    verified = agree and not refuted and closed
    new_status = Status.FEASIBLE if status == Status.OPTIMAL and not verified else status
    record = {"model_objective": model_value, "reference_objective": reference, "solver_bound": bound,
              "bound": honest, "gap": gap, "mip_gap": mip_gap, "tolerance": tol, "agree": agree,
              "bound_refuted": refuted, "verified": verified}
    message = "verification failed: " + "; ".join(problems) if problems else ""
    return Verdict(new_status, honest, message, record)
