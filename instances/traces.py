"""The shipped real traces (``instances/data/traces/``, provenance and licence in its README)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["trace_path", "TRACES"]

TRACES = ("philly.csv", "openb_pod_list_default.csv", "openb_node_list_gpu_node.csv")


def trace_path(name: str) -> Path:
    """Filesystem path of a shipped trace file (``philly.csv``, ...)."""
    return Path(str(resources.files("instances").joinpath("data", "traces", name)))
