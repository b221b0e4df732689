"""``--option KEY=VALUE``: one parser for every command that passes keyword arguments; the
face's parameters named as Python names (:func:`python_names`); near-miss suggestions for names
(:func:`unknown_name`) (app layer)."""

from __future__ import annotations

import argparse
import contextlib
import difflib
import re
from collections.abc import Iterable
from typing import Any

from ..errors import InstanceError
from ..io import parse_document

__all__ = ["key_value", "nonnegative_int", "python_names", "unknown_name", "PYTHON_NAMES", "option_dict"]

# The command line's flags and the Python face's parameter names for the same input: an error
# raised under the face (placement.simulate, solve, sweep, reproduce) names the parameter.
PYTHON_NAMES = {"--hours": "hours", "--start": "start", "--sample": "sample", "--checkpoint": "checkpoint",
                "--scan": "scan", "--bin": "bin_s", "--perf": "perf", "--seed": "seed", "--cluster": "cluster",
                "--policy": "policy", "--option": "options", "-o": "out", "--time-limit": "time_limit",
                "--solver": "solver", "--workers": "workers", "--scheduler": "scheduler", "--seeds": "seeds",
                "--quick": "quick", "--out": "out", "PAPER": "name"}
_FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z-]*|-o|PAPER)(?![\w-])")


def _py(match: re.Match) -> str:
    return PYTHON_NAMES.get(match.group(1), match.group(1))


@contextlib.contextmanager
def python_names():
    """Re-raise an :class:`InstanceError` from the code below the face with the Python names of
    :data:`PYTHON_NAMES` (``hours: must be ...`` rather than ``--hours: must be ...``;
    ``options['k']`` for ``--option k``); the message itself is the command line's."""
    try:
        yield
    except InstanceError as exc:
        field = exc.field
        m = re.fullmatch(r"--option (\S+)(.*)", field, re.S)
        field = f"options[{m.group(1)!r}]{m.group(2)}" if m else _FLAG.sub(_py, field)
        message = _FLAG.sub(_py, exc.message.replace("not --option", "not in options"))
        if (field, message) == (exc.field, exc.message):
            raise
        raise InstanceError(field, message) from None


def unknown_name(value: Any, known: Iterable[str], field: str, what: str) -> InstanceError:
    """The error for a name not among ``known``: the list, and the nearest names when one is close
    (``'phily'`` -> ``did you mean 'philly'?``)."""
    known = list(known)
    close = difflib.get_close_matches(str(value), known, n=2, cutoff=0.6) if isinstance(value, str) else []
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    return InstanceError(field, f"must be one of {', '.join(known)} ({what}), got {str(value)[:60]!r}{hint}")


def key_value(text: str) -> tuple[str, Any]:
    """``key=value`` with the value read as JSON when it parses (numbers, true/false, lists), else a string."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"must be key=value, got {text!r}")
    if len(value) > 10_000:
        raise argparse.ArgumentTypeError("value must be at most 10,000 characters")
    try:
        return key.replace("-", "_"), parse_document(value, f"--option {key}")
    except InstanceError as exc:
        if "is not valid JSON" in exc.message:
            return key.replace("-", "_"), value
        raise argparse.ArgumentTypeError(exc.message) from None


def option_dict(pairs, flag: str = "--option") -> dict[str, Any]:
    """The ``(key, value)`` pairs of a repeatable ``--option KEY=VALUE`` as a dict; a key given
    twice is an error naming it (as a repeated key of a JSON document is), never the last one
    silently kept."""
    out: dict[str, Any] = {}
    for key, value in pairs or []:
        if key in out:
            raise InstanceError(f"{flag} {key}", f"is given twice ({key}={out[key]!r:.40} and {key}={value!r:.40}); "
                                "give each option once")
        out[key] = value
    return out


def nonnegative_int(text: str) -> int:
    """``--seed`` of every command: an integer >= 0 (argparse reports the flag)."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text[:40]!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text[:40]!r}")
    return v
