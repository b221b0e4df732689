"""The shipped real traces (``instances/data/traces/``, provenance and licence in its README)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["FORMAT_SAMPLES", "pollux_dir", "pollux_workload_path", "POLLUX_LOADS", "trace_path", "TRACES", "SHIPPED_TRACES", "SHIPPED_CLUSTERS", "SHIPPED_SPECS", "cluster_spec_path"]

TRACES = ("philly.csv", "openb_pod_list_default.csv", "openb_node_list_gpu_node.csv")
# A sample of each other simulator's trace format (``placement.sim.trace_formats``; traces README).
FORMAT_SAMPLES = {"tiresias": "tiresias_60_job_head.csv", "gavel": "gavel_artifact_evaluation.trace",
                  "blox": "blox_sample.csv", "pollux": "pollux_workload6_head.csv"}
# Names the command line accepts for shipped files.
SHIPPED_TRACES = {"philly": "philly.csv", "openb": "openb_pod_list_default.csv"}
SHIPPED_CLUSTERS = {"openb": "openb_node_list_gpu_node.csv"}
# Shipped cluster spec files (``instances/clusters/``) by the name ``--cluster`` accepts.
SHIPPED_SPECS = {"cassini-testbed": "cassini-testbed.json", "cassini-testbed-6x4": "cassini-testbed-6x4.json",
                 "cassini-testbed-clos": "cassini-testbed-clos.json"}


# The Pollux authors' workloads (``instances/data/pollux/``): ``pollux-workload-N`` (load 1.0) and
# ``pollux-workload-N-x0.5`` / ``-x1.5`` / ``-x2.0`` (their relative job-load variants), N = 1..8.
POLLUX_LOADS = ("0.5", "1.0", "1.5", "2.0")


def pollux_dir() -> Path:
    """Folder of the shipped Pollux data (applications in ``traces/``, ``workloads/``, ``results/``)."""
    return Path(str(resources.files(__package__).joinpath("data", "pollux")))


def pollux_workload_path(name: str) -> Path | None:
    """Path of a shipped Pollux workload by name (``pollux-workload-6``, ``pollux-workload-6-x2.0``),
    None when ``name`` is not one."""
    stem, _, load = name.partition("-x")
    load = load or "1.0"
    if not stem.startswith("pollux-workload-") or load not in POLLUX_LOADS:
        return None
    n = stem.removeprefix("pollux-workload-")
    if n not in {str(i) for i in range(1, 9)}:
        return None
    return pollux_dir() / "workloads" / load / f"workload-{n}.csv"


def trace_path(name: str) -> Path:
    """Filesystem path of a shipped trace file (``philly.csv``, ...)."""
    return Path(str(resources.files(__package__).joinpath("data", "traces", name)))


def cluster_spec_path(name: str) -> Path:
    """Filesystem path of a shipped cluster spec (``cassini-testbed``)."""
    return Path(str(resources.files(__package__).joinpath("clusters", SHIPPED_SPECS[name])))
