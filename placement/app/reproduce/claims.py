"""The claim contract and the one verdict function every reproduction uses (app layer).

A paper's reproduction declares, in one :class:`PaperSpec` per paper:

- :class:`Number` -- every number of the paper it uses, as a range ``[lo, hi]`` with its source
  (figure / table / section) and its *role*: ``claim`` (what the paper says its system achieves),
  ``baseline`` (what it reports for a baseline) or ``setup`` (its cluster, load, periods...);
- :class:`ClaimSpec` -- each claim: the paper's number (a ``claim`` :class:`Number`), the
  comparison (metric, baseline, regime, window), the value of "no effect" (``null``), the
  preconditions the paper states for it (:class:`Precondition`, each measured on the run) and the
  knobs and choices it depends on;
- :class:`Knob` -- each parameter fitted to the paper's *baseline* or *setup* numbers, with its
  tolerance;
- :class:`Choice` -- each unpublished choice, with how it was chosen (``paper §x``, ``reference
  code repo@commit file``, ``fitted: ...``, ``ours, not fitted``) and the numbers it derives from;
- :class:`Measure` -- a number we report that the paper does not (a self-check, a second
  reading): reported, never judged.

The declaration is checked when it is built: a claim without a range, a source or a role, a
precondition that cannot be measured (no comparison or threshold), a knob without a tolerance or
a reference to an unknown number is one :class:`~placement.errors.InstanceError` line.
:func:`leaks` lists every knob target and choice that derives from a ``claim`` number (by
declaration, or by value: a choice whose value equals a claim number); a test runs it over every
registered paper.

:func:`verdict` is the single verdict function. With the paper's range ``[lo, hi]``, the paper's
tolerance ``tol`` and ours as one value per seed, in this order:

1. ``off-regime`` -- a precondition fails (on more than half of the seeds); its measured value is
   shown. Seeds where a precondition fails are left out of the judgement on the others.
2. ``not comparable`` -- the compared policies coincide (the caller measures it), or no seed
   measured the number.
3. ``uncalibrated`` -- a knob the claim depends on did not converge (``not converged`` or ``at the
   grid's edge``; a knob never calibrated in the run counts as not converged).
4. For an *effect* (the paper reports a change from ``null``: a reduction, a speed-up): ``no`` when
   every seed is on the wrong side of ``null`` (or on it); ``not decided`` when the seeds straddle
   ``null``; otherwise ``holds`` when the median effect's magnitude lies in the paper's magnitudes
   widened by ``tol`` (``[min|lo-null|·(1-tol), max|hi-null|·(1+tol)]``), else ``direction only``
   (``over`` or ``under``).
5. For a *bound* (the paper states a limit or a level: "below 1.3% at all times", "around 90%"):
   ``holds`` when every seed lies in ``[lo, hi]`` widened by ``tol`` (relative to the range's
   magnitude), ``no`` when none does, ``not decided`` otherwise.
"""

from __future__ import annotations

import math
import operator
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...errors import InstanceError

__all__ = ["VERDICTS", "ROLES", "HOW", "CALIBRATION_STATUSES", "Number", "Precondition", "ClaimSpec", "Knob",
           "Choice", "Measure", "PaperSpec", "Verdict", "verdict", "calibration_status", "leaks", "count_verdicts",
           "judge_preconditions"]

VERDICTS = ("holds", "direction only", "no", "not decided", "off-regime", "not comparable", "uncalibrated")
ROLES = ("claim", "baseline", "setup")
HOW = ("paper", "reference code", "fitted", "ours, not fitted")
CALIBRATION_STATUSES = ("converged", "not converged", "at the grid's edge")
_OPS: dict[str, Callable[[float, float], bool]] = {">=": operator.ge, "<=": operator.le, ">": operator.gt,
                                                   "<": operator.lt}


def _text(where: str, name: str, v: Any) -> None:
    if not isinstance(v, str) or not v.strip():
        raise InstanceError(f"{where}: {name}", f"must be a non-empty text, got {v!r}")


def _finite(where: str, name: str, v: Any, inf_ok: bool = False) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or math.isnan(v) or (not inf_ok and math.isinf(v)):
        raise InstanceError(f"{where}: {name}", f"must be a finite number, got {v!r}")
    return float(v)


@dataclass(frozen=True)
class Number:
    """A number the paper reports: ``[lo, hi]`` (``lo == hi`` for a single value; ``-inf`` /
    ``inf`` for an open side, as in "below 1.3%"), its source and its role."""

    key: str
    lo: float
    hi: float
    source: str
    role: str
    text: str = ""        # as the paper writes it ("nearly 7x", "-19% to -36%")

    def __post_init__(self) -> None:
        _text("number", "key", self.key)
        where = f"number {self.key}"
        lo = _finite(where, "range", self.lo, inf_ok=True)
        hi = _finite(where, "range", self.hi, inf_ok=True)
        if lo > hi or (math.isinf(lo) and math.isinf(hi)):
            raise InstanceError(f"{where}: range", f"must be [lo, hi] with lo <= hi and one side finite, "
                                f"got [{self.lo}, {self.hi}]")
        _text(where, "source", self.source)
        if self.role not in ROLES:
            raise InstanceError(f"{where}: role", f"must be one of {list(ROLES)}, got {self.role!r}")

    @property
    def mid(self) -> float:
        """The range's middle (its finite side when one side is open)."""
        if math.isinf(self.lo):
            return self.hi
        if math.isinf(self.hi):
            return self.lo
        return (self.lo + self.hi) / 2

    def as_text(self) -> str:
        return self.text or (f"{self.lo:g}" if self.lo == self.hi else f"{self.lo:g} to {self.hi:g}")


@dataclass(frozen=True)
class Precondition:
    """A condition the paper states for a claim, measured on every seed: ``measured OP threshold``
    (OP one of ``>=``, ``<=``, ``>``, ``<``)."""

    name: str
    text: str
    op: str
    threshold: float
    source: str = ""

    def __post_init__(self) -> None:
        _text("precondition", "name", self.name)
        where = f"precondition {self.name}"
        _text(where, "text", self.text)
        if self.op not in _OPS:
            raise InstanceError(f"{where}: op", f"must be one of {list(_OPS)} (a precondition is measured and "
                                f"compared), got {self.op!r}")
        _finite(where, "threshold", self.threshold)

    def test(self, value: float | None) -> bool | None:
        """Whether it holds at ``value``; ``None`` when not measured."""
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return None
        return _OPS[self.op](float(value), float(self.threshold))

    @property
    def rule(self) -> str:
        return f"{self.op} {self.threshold:g}"


@dataclass(frozen=True)
class ClaimSpec:
    """One claim of the paper: its number, the comparison and what the verdict depends on.

    ``kind`` is ``"effect"`` (a change from ``null``; the sign is the paper's direction) or
    ``"bound"`` (a level or limit the paper states). ``depends_on`` names knobs and choices of the
    same :class:`PaperSpec`; ``reading`` labels one reading of a choice with two (both are run)."""

    key: str
    claim: str
    number: str
    metric: str
    baseline: str = ""
    regime: str = ""
    window: str = ""
    null: float = 0.0
    kind: str = "effect"
    preconditions: tuple[Precondition, ...] = ()
    depends_on: tuple[str, ...] = ()
    unit: str = ""
    scale: float = 1.0

    def __post_init__(self) -> None:
        _text("claim", "key", self.key)
        where = f"claim {self.key}"
        for name in ("claim", "number", "metric"):
            _text(where, name, getattr(self, name))
        _finite(where, "null", self.null)
        _finite(where, "scale", self.scale)
        if self.kind not in ("effect", "bound"):
            raise InstanceError(f"{where}: kind", f"must be 'effect' or 'bound', got {self.kind!r}")
        if not all(isinstance(p, Precondition) for p in self.preconditions):
            raise InstanceError(f"{where}: preconditions", "must be Precondition objects (a name, a text, an "
                                "operator and a threshold: something measured)")
        if isinstance(self.depends_on, str) or not all(isinstance(d, str) for d in self.depends_on):
            raise InstanceError(f"{where}: depends_on", "must be a tuple of knob and choice names")


@dataclass(frozen=True)
class Knob:
    """A parameter fitted to the paper's baseline or set-up numbers (``targets``: their keys); a
    calibration row is ``converged`` when ours is within ``tolerance`` (relative) of the target."""

    name: str
    targets: tuple[str, ...]
    tolerance: float
    how: str = "fitted: loss on baseline targets"

    def __post_init__(self) -> None:
        _text("knob", "name", self.name)
        where = f"knob {self.name}"
        if isinstance(self.targets, str) or not self.targets:
            raise InstanceError(f"{where}: targets", "must name at least one paper number (a tuple of keys)")
        tol = _finite(where, "tolerance", self.tolerance)
        if tol <= 0:
            raise InstanceError(f"{where}: tolerance", f"must be > 0, got {self.tolerance!r}")


@dataclass(frozen=True)
class Choice:
    """An unpublished choice of the set-up and how it was chosen (``how`` starts with one of
    :data:`HOW`); ``derived_from``: the paper numbers its value comes from; ``affects``: claim keys."""

    name: str
    value: Any
    how: str
    affects: tuple[str, ...] = ()
    derived_from: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _text("choice", "name", self.name)
        where = f"choice {self.name}"
        if not isinstance(self.how, str) or not any(self.how.startswith(h) for h in HOW):
            raise InstanceError(f"{where}: how", f"must start with one of {list(HOW)} (e.g. 'paper §5.2', "
                                f"'reference code repo@commit file'), got {self.how!r}")
        for name in ("affects", "derived_from"):
            v = getattr(self, name)
            if isinstance(v, str) or not all(isinstance(x, str) for x in v):
                raise InstanceError(f"{where}: {name}", "must be a tuple of keys")

    @property
    def unfitted(self) -> bool:
        return self.how.startswith("ours, not fitted")


@dataclass(frozen=True)
class Measure:
    """A number we report that the paper does not report as a claim: shown, never judged."""

    key: str
    text: str
    why: str = ""

    def __post_init__(self) -> None:
        _text("measure", "key", self.key)
        _text(f"measure {self.key}", "text", self.text)


@dataclass(frozen=True)
class PaperSpec:
    """Everything a paper's reproduction judges by, declared in one place (see the module
    docstring). ``tolerance`` widens every claim's range (one stated tolerance per paper)."""

    paper: str
    tolerance: float
    numbers: tuple[Number, ...]
    claims: tuple[ClaimSpec, ...] = ()
    knobs: tuple[Knob, ...] = ()
    choices: tuple[Choice, ...] = ()
    measures: tuple[Measure, ...] = ()
    by_key: dict[str, Number] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _text("paper", "name", self.paper)
        tol = _finite(f"paper {self.paper}", "tolerance", self.tolerance)
        if not 0 <= tol < 1:
            raise InstanceError(f"paper {self.paper}: tolerance", f"must be in [0, 1), got {self.tolerance!r}")
        for name, cls in (("numbers", Number), ("claims", ClaimSpec), ("knobs", Knob), ("choices", Choice),
                          ("measures", Measure)):
            items = getattr(self, name)
            if not all(isinstance(x, cls) for x in items):
                raise InstanceError(f"paper {self.paper}: {name}", f"must all be {cls.__name__} objects")
            names = [getattr(x, "key", None) or x.name for x in items]
            dup = sorted({n for n in names if names.count(n) > 1})
            if dup:
                raise InstanceError(f"paper {self.paper}: {name}", f"duplicate keys {dup}")
        by_key = {n.key: n for n in self.numbers}
        object.__setattr__(self, "by_key", by_key)
        knobs = {k.name for k in self.knobs}
        choices = {c.name for c in self.choices}
        claims = {c.key for c in self.claims}
        for c in self.claims:
            num = by_key.get(c.number)
            if num is None:
                raise InstanceError(f"claim {c.key}: number", f"must be a key of the paper's numbers, got {c.number!r}")
            if num.role != "claim":
                raise InstanceError(f"claim {c.key}: number", f"{c.number!r} has role {num.role!r}: a claim is judged "
                                    "on a number whose role is 'claim'")
            for d in c.depends_on:
                if d not in knobs and d not in choices:
                    raise InstanceError(f"claim {c.key}: depends_on", f"{d!r} is neither a knob nor a choice")
        for k in self.knobs:
            for t in k.targets:
                if t not in by_key:
                    raise InstanceError(f"knob {k.name}: targets", f"{t!r} is not a key of the paper's numbers")
        for ch in self.choices:
            for t in ch.derived_from:
                if t not in by_key:
                    raise InstanceError(f"choice {ch.name}: derived_from", f"{t!r} is not a key of the paper's numbers")
            for a in ch.affects:
                if a not in claims:
                    raise InstanceError(f"choice {ch.name}: affects", f"{a!r} is not a claim key")

    def claim(self, key: str) -> ClaimSpec:
        for c in self.claims:
            if c.key == key:
                return c
        raise InstanceError("claim", f"{key!r} is not declared for {self.paper}")

    def knob(self, name: str) -> Knob:
        for k in self.knobs:
            if k.name == name:
                return k
        raise InstanceError("knob", f"{name!r} is not declared for {self.paper}")

    def measure(self, key: str) -> Measure:
        for m in self.measures:
            if m.key == key:
                return m
        raise InstanceError("measure", f"{key!r} is not declared for {self.paper}")

    def choices_for(self, claim_key: str, depends_on: tuple[str, ...] | None = None) -> list[Choice]:
        """The choices a claim depends on: named in its ``depends_on`` (or the ``depends_on`` given,
        a row's own) or naming it in ``affects``."""
        names = self.claim(claim_key).depends_on if depends_on is None else depends_on
        return [ch for ch in self.choices if ch.name in names or claim_key in ch.affects]


# -- leaks --------------------------------------------------------------------------------------
def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _numbers_in(value: Any) -> list[float]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int | float):
        return [float(value)] if math.isfinite(value) else []
    if isinstance(value, list | tuple):
        return [x for v in value for x in _numbers_in(v)]
    return []


def leaks(spec: PaperSpec) -> list[str]:
    """Every knob target and choice that derives from a number whose role is ``claim``: declared
    (``targets`` / ``derived_from``), or by value (a choice's number equal to a claim number, as
    given or as a percentage, other than 0 and whole numbers up to 10). One line each."""
    claim_nums = [n for n in spec.numbers if n.role == "claim"]
    out = []
    for k in spec.knobs:
        out += [f"knob {k.name!r} is fitted to {t!r}, a claim number ({spec.by_key[t].source})"
                for t in k.targets if spec.by_key[t].role == "claim"]
    for ch in spec.choices:
        out += [f"choice {ch.name!r} derives from {t!r}, a claim number ({spec.by_key[t].source})"
                for t in ch.derived_from if spec.by_key[t].role == "claim"]
        for v in _numbers_in(ch.value):
            if v == 0 or (v == int(v) and abs(v) <= 10):
                continue
            for n in claim_nums:
                ends = [x for x in (n.lo, n.hi) if math.isfinite(x)]
                if any(_close(v, x) or _close(v * 100, x) or _close(v, x * 100) for x in ends):
                    out.append(f"choice {ch.name!r} = {v:g} equals claim number {n.key!r} ({n.as_text()}, {n.source})")
    return out


# -- calibration --------------------------------------------------------------------------------
def calibration_status(rows: Iterable[Mapping[str, Any]]) -> str:
    """A knob's status over its rows: ``converged`` when every row is, ``at the grid's edge`` when
    a row that is not converged sits on the search grid's edge, else ``not converged`` (also when
    the knob has no row)."""
    st = [r.get("status") for r in rows]
    if st and all(s == "converged" for s in st):
        return "converged"
    return "at the grid's edge" if "at the grid's edge" in st else "not converged"


# -- the verdict --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Verdict:
    """The category (one of :data:`VERDICTS`) and a one-line reason."""

    category: str
    detail: str = ""
    seeds_judged: int = 0


def _vals(values: Sequence[float | None]) -> list[float]:
    return [float(v) for v in values if v is not None and not isinstance(v, bool) and math.isfinite(float(v))]


def judge_preconditions(preconditions: Sequence[Precondition], measured: Mapping[str, Sequence[float | None]],
                        n_seeds: int) -> tuple[list[bool], list[dict[str, Any]]]:
    """Per seed, whether every precondition holds (``True`` where all measured ones do), and one
    record per precondition (name, text, rule, measured values, held count). A precondition with
    no measurement is an error: the contract asks for it to be measured."""
    ok = [True] * n_seeds
    records = []
    for p in preconditions:
        if p.name not in measured:
            raise InstanceError(f"precondition {p.name}", "was not measured on the run (pass its value per seed)")
        vals = list(measured[p.name])
        if len(vals) != n_seeds:
            raise InstanceError(f"precondition {p.name}", f"needs one measured value per seed ({n_seeds}), got {len(vals)}")
        tests = [p.test(v) for v in vals]
        for i, t in enumerate(tests):
            if t is False:
                ok[i] = False
        records.append({"name": p.name, "text": p.text, "rule": p.rule, "source": p.source,
                        "measured": [None if v is None else float(v) for v in vals],
                        "held": sum(t is True for t in tests), "of": sum(t is not None for t in tests)})
    return ok, records


def verdict(values: Sequence[float | None], lo: float, hi: float, *, tolerance: float, null: float = 0.0,
            kind: str = "effect", precondition_ok: Sequence[bool] | None = None, failed: str = "",
            comparable: bool = True, not_comparable: str = "", uncalibrated: Sequence[str] = ()) -> Verdict:
    """The verdict of a claim whose paper range is ``[lo, hi]`` on ours (one value per seed); see
    the module docstring for the order of the categories. ``precondition_ok``: per seed, whether
    the claim's preconditions hold there (``failed`` describes the failures); ``comparable=False``
    with ``not_comparable`` the reason; ``uncalibrated``: the knobs that did not converge."""
    n = len(values)
    if precondition_ok is not None:
        if len(precondition_ok) != n:
            raise InstanceError("verdict", "precondition_ok needs one entry per seed")
        held = sum(bool(x) for x in precondition_ok)
        if 2 * held <= n and n > 0:
            return Verdict("off-regime", f"precondition fails on {n - held} of {n} seeds" + (f": {failed}" if failed else ""))
        values = [v for v, ok in zip(values, precondition_ok, strict=True) if ok]
    if not comparable:
        return Verdict("not comparable", not_comparable or "the compared policies coincide")
    xs = _vals(values)
    if not xs:
        return Verdict("not comparable", "no seed measured it")
    if uncalibrated:
        return Verdict("uncalibrated", "depends on " + ", ".join(uncalibrated) + " (calibration did not converge)",
                       len(xs))
    width = max(abs(x) for x in (lo, hi) if math.isfinite(x)) if any(math.isfinite(x) for x in (lo, hi)) else 1.0
    if kind == "bound":
        wlo = lo - tolerance * width if math.isfinite(lo) else -math.inf
        whi = hi + tolerance * width if math.isfinite(hi) else math.inf
        inside = [wlo <= x <= whi for x in xs]
        if all(inside):
            return Verdict("holds", f"every seed in [{wlo:.4g}, {whi:.4g}]", len(xs))
        if not any(inside):
            side = "over" if statistics.median(xs) > whi else "under"
            return Verdict("no", f"every seed outside [{wlo:.4g}, {whi:.4g}] ({side})", len(xs))
        return Verdict("not decided", f"{sum(inside)} of {len(xs)} seeds in [{wlo:.4g}, {whi:.4g}]", len(xs))
    # an effect: the paper's direction is the side of null its range lies on
    ends = [x for x in (lo, hi) if math.isfinite(x)]
    sign = 1.0 if statistics.mean(ends) > null else -1.0
    if all(x == null for x in ends):
        raise InstanceError("verdict", "an effect's range must differ from its null value")
    right = [(x - null) * sign > 0 for x in xs]
    if not any(right):
        return Verdict("no", "every seed on the wrong side of " + f"{null:g}", len(xs))
    if not all(right):
        return Verdict("not decided", f"seeds straddle {null:g} ({sum(right)} of {len(xs)} in the paper's direction)",
                       len(xs))
    mags = [abs(x - null) for x in ends]
    mlo = 0.0 if math.isinf(lo) or math.isinf(hi) else min(mags) * (1 - tolerance)
    mhi = math.inf if math.isinf(lo) or math.isinf(hi) else max(mags) * (1 + tolerance)
    if math.isinf(lo) or math.isinf(hi):     # "at least x": the finite end bounds the magnitude below
        mlo = abs(ends[0] - null) * (1 - tolerance)
    med = abs(statistics.median(xs) - null)
    if mlo <= med <= mhi:
        return Verdict("holds", f"median effect {med:.4g} in [{mlo:.4g}, {mhi:.4g}]", len(xs))
    side = "over" if med > mhi else "under"
    return Verdict("direction only", f"{side}: median effect {med:.4g} outside [{mlo:.4g}, {mhi:.4g}]", len(xs))


def count_verdicts(verdicts: Iterable[str]) -> dict[str, int]:
    """Counts per category, in :data:`VERDICTS` order, zeros left out."""
    got = list(verdicts)
    return {v: got.count(v) for v in VERDICTS if got.count(v)}
