"""The one error type for bad input.

Every loader and validator raises :class:`InstanceError` with the field path it
objects to (``jobs[3].tables[0]``) and a sentence stating what would be right.
The CLI prints ``str(err)`` as one line and exits with code 2.
"""

from __future__ import annotations

__all__ = ["InstanceError"]


class InstanceError(ValueError):
    """Invalid instance, solution or configuration.

    Parameters
    ----------
    field : str
        Path of the offending field, e.g. ``"tables[2].size"``.
    message : str
        What the field must be, e.g. ``"must be a non-negative integer"``.
    """

    def __init__(self, field: str, message: str):
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")
