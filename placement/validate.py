"""The validation vocabulary: every loader, the cluster spec, the HiveD config, trace files and
policy options check their input with these.

Each checks one value and raises :class:`InstanceError` naming the field and stating what the
value must be; each returns the value (converted where noted). Documents: :func:`obj`,
:func:`known_keys`, :func:`required_keys`, :func:`as_list`, :func:`list_field`,
:func:`integer`, :func:`number`, :func:`name`, :func:`unique`, :func:`total`. Text fields
(CSV cells): :func:`parse_number`, :func:`parse_integer`. Options (name first, as a keyword
argument is named): :func:`check_number`, :func:`check_bool`. Command-line counts:
:func:`option_counts`, :func:`generated_size`.
"""

from __future__ import annotations

import math
import re
from typing import Any

from .errors import InstanceError

__all__ = ["obj", "known_keys", "required_keys", "as_list", "list_field", "integer", "number", "name", "unique",
           "total", "MAX_INTEGER", "parse_number", "parse_integer", "option_counts", "generated_size", "check_number",
           "check_bool", "seed", "generated_file"]


def obj(v: Any, where: str) -> dict:
    """``v`` must be a JSON object (dict)."""
    if not isinstance(v, dict):
        raise InstanceError(where, f"must be an object, got {type(v).__name__}")
    return v


def known_keys(d: dict, allowed, prefix: str) -> dict:
    """Every key of ``d`` must be in ``allowed`` (a misspelt key would silently drop a setting);
    the offending key is reported as ``prefix + key`` (``prefix`` ends with ``.`` or is empty)."""
    for key in d:
        if key not in allowed:
            raise InstanceError(f"{prefix}{key}", f"is not a known field (expected one of {sorted(allowed)})")
    return d


def required_keys(d: dict, required, prefix: str) -> dict:
    """Every key of ``required`` must be present; a missing one is ``prefix + key``: is missing."""
    for key in sorted(required):
        if key not in d:
            raise InstanceError(f"{prefix}{key}", "is missing")
    return d


def as_list(v: Any, where: str, *, nonempty: bool = False, allow_none: bool = False) -> list:
    """``v`` must be a list (non-empty when asked; ``None`` reads as ``[]`` when allowed)."""
    if v is None and allow_none:
        return []
    if not isinstance(v, list):
        raise InstanceError(where, f"must be a list, got {type(v).__name__}")
    if nonempty and not v:
        raise InstanceError(where, "must not be empty")
    return v


def list_field(doc: dict, key: str, prefix: str, *, required: bool = True) -> list:
    """``doc[key]`` as a list; a missing key is an error when ``required``, else ``[]``."""
    if key not in doc:
        if required:
            raise InstanceError(f"{prefix}{key}", "is missing")
        return []
    return as_list(doc[key], f"{prefix}{key}")


MAX_INTEGER = 2**53  # every integer up to here is exact in a double, so sums stay exact in int64


def integer(v: Any, where: str, minimum: int = 0, maximum: int = MAX_INTEGER) -> int:
    """``v`` must be an integer in ``[minimum, maximum]`` (a float with an integral value is accepted)."""
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        raise InstanceError(where, f"must be an integer >= {minimum}, got {v!r}")
    if v > maximum:
        raise InstanceError(where, f"must be at most {maximum}, got {v!r}")
    return v


def total(values, where: str, maximum: int = MAX_INTEGER) -> int:
    """The sum of already validated integers must stay at most ``maximum`` (exact arithmetic)."""
    s = sum(values)
    if s > maximum:
        raise InstanceError(where, f"total must be at most {maximum} for exact arithmetic, got {s}")
    return s


def number(v: Any, where: str, *, positive: bool = False) -> float:
    """``v`` must be a finite number >= 0 (> 0 when ``positive``)."""
    ok = not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v)
    if not ok or v < 0 or (positive and v == 0):
        raise InstanceError(where, f"must be a finite number {'> 0' if positive else '>= 0'}, got {v!r}")
    return float(v)


def name(v: Any, where: str, *, numbers: bool = False, pattern: re.Pattern | None = None,
         describe: str = "") -> str:
    """``v`` must be a non-empty string (an integer too when ``numbers``: YAML reads ``1`` as one,
    returned as ``"1"``); with ``pattern``, one it matches in full, ``describe`` saying which."""
    if numbers and isinstance(v, int) and not isinstance(v, bool):
        v = str(v)
    if not isinstance(v, str) or not v:
        raise InstanceError(where, f"must be a non-empty string, got {v!r}")
    if pattern is not None and not pattern.fullmatch(v):
        raise InstanceError(where, f"must be {describe or 'a name matching ' + pattern.pattern}, got {v[:40]!r}")
    return v


def unique(names: list[str], where: str) -> None:
    """Names must not repeat; the second occurrence is reported as ``where[i].name``."""
    seen: set[str] = set()
    for i, n in enumerate(names):
        if n in seen:
            raise InstanceError(f"{where}[{i}].name", f"duplicate name {n!r}")
        seen.add(n)


def parse_number(text: str, where: str, *, minimum: float = 0.0) -> float:
    """A text field (a CSV cell) holding a finite number >= ``minimum``."""
    try:
        v = float(text)
    except ValueError:
        raise InstanceError(where, f"must be a number, not {text[:40]!r}") from None
    if not math.isfinite(v) or v < minimum:
        raise InstanceError(where, f"must be a finite number >= {minimum:g}, not {text[:40]!r}")
    return v


def parse_integer(text: str, where: str, *, minimum: int = 0, maximum: int = 10**9) -> int:
    """A text field (a CSV cell) holding an integer in ``[minimum, maximum]`` (``8.0`` reads as 8)."""
    try:
        v = float(text)
    except ValueError:
        v = float("nan")
    if not math.isfinite(v) or v != int(v) or v < minimum or v > maximum:
        raise InstanceError(where, f"must be an integer in {minimum}..{maximum}, not {text[:40]!r}")
    return int(v)


MAX_SEED = 2**63 - 1


def seed(v: Any, where: str = "seed") -> int:
    """A generator's seed: an integer in 0..2^63-1 (``numpy.random.default_rng`` takes it as is);
    ``-1``, ``1.5``, ``"1"`` or ``True`` is one :class:`InstanceError` naming ``where``."""
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_SEED:
        kind = "" if isinstance(v, int) and not isinstance(v, bool) else f" ({type(v).__name__})"
        raise InstanceError(where, f"must be an integer in 0..2^63-1, got {v!r:.60}{kind}")
    return v


def generated_file(terms: list[tuple[str, float]], what: str = "the instance") -> None:
    """Refuse, before any work, to generate a file that the readers refuse: ``terms`` lists
    ``(option, bytes)``, a lower bound of the bytes each option's items take in the written
    document; their sum must stay within :func:`placement.io.max_input_bytes` (64 MiB unless
    ``PLACEMENT_MAX_INPUT_BYTES`` says otherwise), the size ``solve``, ``evaluate`` and
    ``simulate`` read. One :class:`InstanceError` names the largest contributor."""
    from .io import max_input_bytes

    limit = max_input_bytes()
    total_bytes = sum(b for _, b in terms)
    if total_bytes > limit:
        option, big = max(terms, key=lambda t: t[1])
        raise InstanceError(option, f"too large: {what} would be a file of at least {_human(total_bytes)} "
                                    f"({_human(big)} from {option}), and the commands read files of at most "
                                    f"{_human(limit)} (PLACEMENT_MAX_INPUT_BYTES)")


def option_counts(args: Any, *, positive: tuple[str, ...] = (), non_negative: tuple[str, ...] = ()) -> None:
    """Command-line counts of ``placement generate``: named as the option (``--top-cells``)."""
    for attr in positive:
        if getattr(args, attr) < 1:
            raise InstanceError(f"--{attr.replace('_', '-')}", "must be a positive integer")
    for attr in non_negative:
        if getattr(args, attr) < 0:
            raise InstanceError(f"--{attr.replace('_', '-')}", "must be a non-negative integer")


DEFAULT_GENERATE_BYTES = 2 * 2**30


def generated_size(terms: list[tuple[str, float]], what: str = "the instance") -> None:
    """Refuse to generate what would not fit in memory, naming the option that makes it too large.

    ``terms`` lists ``(option, bytes)``: an estimate of the memory each option's items
    take (Python objects and arrays, a conservative per-item size times the count, as the
    generator's docstring states). Their sum must stay within the budget
    ``PLACEMENT_MAX_GENERATE_BYTES`` (default 2 GiB); else one :class:`InstanceError`
    names the largest contributor. Checked before anything is allocated.
    """
    import os

    raw = os.environ.get("PLACEMENT_MAX_GENERATE_BYTES")
    budget = DEFAULT_GENERATE_BYTES
    if raw is not None:
        try:
            budget = int(raw)
        except ValueError:
            raise InstanceError("PLACEMENT_MAX_GENERATE_BYTES", f"must be an integer, got {raw!r}") from None
    total_bytes = sum(b for _, b in terms)
    if total_bytes > budget:
        option, big = max(terms, key=lambda t: t[1])
        raise InstanceError(option, f"too large: {what} would take about {_human(total_bytes)} of memory "
                                    f"({_human(big)} from {option}); the limit is {_human(budget)} "
                                    "(PLACEMENT_MAX_GENERATE_BYTES)")


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:,.0f} B" if unit == "B" else f"{n:.3g} {unit}"
        n /= 1024
    return f"{n:.3g} B"


def check_number(name: str, value, lo: float | None = None, hi: float | None = None) -> float:
    """``value`` as a finite float within [lo, hi]; :class:`InstanceError` naming ``name`` otherwise."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or (lo is not None and value < lo) or (hi is not None and value > hi):
        rng = f" in [{lo:g}, {hi:g}]" if lo is not None and hi is not None else f" >= {lo:g}" if lo is not None else ""
        raise InstanceError(name, f"must be a finite number{rng}, got {value!r}")
    return float(value)


def check_bool(name: str, value) -> bool:
    if not isinstance(value, bool):
        raise InstanceError(name, f"must be true or false, got {value!r}")
    return value
