"""``--option KEY=VALUE``: one parser for every command that passes keyword arguments (app layer)."""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import InstanceError
from ..io import parse_document

__all__ = ["key_value", "nonnegative_int"]


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


def nonnegative_int(text: str) -> int:
    """``--seed`` of every command: an integer >= 0 (argparse reports the flag)."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text[:40]!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text[:40]!r}")
    return v
