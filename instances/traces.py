"""The shipped real traces (``instances/data/traces/``, provenance and licence in its README)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["trace_path", "TRACES", "SHIPPED_TRACES", "SHIPPED_CLUSTERS", "SHIPPED_SPECS", "cluster_spec_path"]

TRACES = ("philly.csv", "openb_pod_list_default.csv", "openb_node_list_gpu_node.csv")
# Names the command line accepts for shipped files.
SHIPPED_TRACES = {"philly": "philly.csv", "openb": "openb_pod_list_default.csv"}
SHIPPED_CLUSTERS = {"openb": "openb_node_list_gpu_node.csv"}
# Shipped cluster spec files (``instances/clusters/``) by the name ``--cluster`` accepts.
SHIPPED_SPECS = {"cassini-testbed": "cassini-testbed.json", "cassini-testbed-6x4": "cassini-testbed-6x4.json",
                 "cassini-testbed-clos": "cassini-testbed-clos.json"}


def trace_path(name: str) -> Path:
    """Filesystem path of a shipped trace file (``philly.csv``, ...)."""
    return Path(str(resources.files(__package__).joinpath("data", "traces", name)))


def cluster_spec_path(name: str) -> Path:
    """Filesystem path of a shipped cluster spec (``cassini-testbed``)."""
    return Path(str(resources.files(__package__).joinpath("clusters", SHIPPED_SPECS[name])))
