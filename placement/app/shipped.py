"""Shipped data by name on the command line: traces ``philly`` and ``openb``, the Pollux authors'
workloads ``pollux-workload-N[-xLOAD]``, clusters ``openb`` and ``cassini-testbed``.

The core loaders (:mod:`placement.sim.trace`, :mod:`placement.sim.cluster_io`) read files and
specs; only the app knows the names of the files the package ships (``instances/data/traces/``).
"""

from __future__ import annotations

import functools

from placement.instances.traces import (
    SHIPPED_CLUSTERS,
    SHIPPED_SPECS,
    SHIPPED_TRACES,
    cluster_spec_path,
    pollux_dir,
    pollux_workload_path,
    trace_path,
)
from placement.sim.cluster import Cluster
from placement.sim.cluster_io import load_cluster_spec, load_openb_nodes, resolve_cluster
from placement.sim.goodput import use_applications
from placement.sim.trace import Trace, window
from placement.sim.trace_formats import load_trace

__all__ = ["load_trace_arg", "cluster_arg", "pollux_workload_path", "SHIPPED_TRACES", "SHIPPED_CLUSTERS"]

# the performance model named "goodput" runs on the Pollux authors' applications
use_applications(pollux_dir() / "traces")


def load_trace_arg(source: str, **window_args) -> tuple[Trace, str]:
    """(trace, format) from a file or a shipped trace name (``philly``, ``openb``). A shipped
    trace is parsed once per process and window (:func:`_shipped`): the files ship with the
    package and a :class:`Trace` is immutable, so the cached object is the answer."""
    s = str(source)
    workload = pollux_workload_path(s)
    if workload is not None:   # format "pollux": jobs of the measured applications
        from placement.sim.goodput import load_applications
        from placement.sim.pollux_workload import load_pollux_workload

        tr, _ = load_pollux_workload(workload, load_applications(pollux_dir() / "traces"), name=s)
        return Trace(tr.name, tuple(window(tr.jobs, **window_args)), tr.provenance), "pollux"
    if s in SHIPPED_TRACES:
        key = tuple(sorted(window_args.items()))
        try:
            hash(key)
        except TypeError:  # an unhashable window value: the loader's own error names it
            return load_trace(trace_path(SHIPPED_TRACES[s]), **window_args)
        return _shipped(s, key)
    return load_trace(s, **window_args)


@functools.lru_cache(maxsize=8)
def _shipped(name: str, window: tuple) -> tuple[Trace, str]:
    return load_trace(trace_path(SHIPPED_TRACES[name]), **dict(window))


def cluster_arg(text: str, option: str = "--cluster") -> Cluster:
    """A cluster from a ``--cluster`` value: the shipped ``openb`` node list, a spec file, a node
    list CSV, a shipped spec by name (``cassini-testbed``), or ``RxCxKxMxG[:TYPE]``."""
    if text.lower() in SHIPPED_SPECS:
        return load_cluster_spec(cluster_spec_path(text.lower()))
    if text.lower() in SHIPPED_CLUSTERS:
        return load_openb_nodes(trace_path(SHIPPED_CLUSTERS[text.lower()]))
    return resolve_cluster(text, option)


@functools.lru_cache(maxsize=2)
def philly_rows(seed: int):
    """The whole shipped Philly trace with its seeded model rule (read once per seed): the rows
    :func:`placement.sim.dally_workload.philly_scaled` samples."""
    from placement.sim.trace import load_philly

    return load_philly(trace_path("philly.csv"), seed=seed)
