"""One simulation run, below both the face and the command line (app layer): inputs -> a
:class:`Run` -> the files of ``placement simulate -o DIR``.

``placement.simulate`` (:mod:`placement.app.api`) is :func:`simulate` here; the command
``placement simulate`` (:mod:`placement.app.simulate`), the sweep's simulation cells, the bench's
and the reproductions' runs call :func:`simulate`, :func:`run_simulation` and
:func:`write_outputs` here, never the face (``tests/core/test_imports.py``).

The path one input (the ``trace``) takes from here through the simulator to the written files,
module by module, is on the app page (``placement/app/README.md``, "Architecture").

Outputs in ``-o DIR`` (written into a staging folder after the run and moved into place as one
set, :func:`placement.io.staged_folder`): ``instance.json`` (trace + cluster + perf model: the
input ``placement evaluate`` needs), ``log.json`` and ``log.csv`` (the event log), ``jobs.csv``
(per job), ``timeseries.csv``, ``summary.json`` (metrics, engine and policy statistics,
replay_check's verdict, and ``run``: what made the run, :func:`provenance`), and PNG plots
(utilization and queue length over time; SLO violation rate per priority over time; JCT CDF).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InstanceError
from ..io import check_output_folder, read_document, staged_folder, write_json, write_text
from .report import agg_backend, save_figure

__all__ = ["Run", "simulate", "check_policy_name", "network_note", "NETWORK_AWARE", "run_simulation",
           "write_outputs", "sim_instance", "load_inputs", "provenance",
           "resolved_options", "option_json", "policy_checks", "folder_checks", "summary_document",
           "run_figures", "plot_run", "command_line", "package_version", "DEFAULT_CLUSTERS", "OUTPUT_FILES",
           "perf_note"]


@dataclass(eq=False)
class Run:
    """One simulation: what ``placement simulate`` computes, before it is written.

    Attributes
    ----------
    instance : SimInstance
        The trace window, cluster and performance model that ran.
    result : SimResult
        The engine's outcome (the event log ``result.log``, engine and policy statistics).
    policy : str
        The policy's registered name.
    seed : int
    metrics : dict
        The headline numbers (``summary.json``'s ``metrics``).
    violations : list of str
        replay_check's verdict, computed when the run ended (empty: a valid schedule).
    provenance : dict
        What made the run (``summary.json``'s ``run``): options as given and resolved
        (defaults included), seed, perf model, package version, the command line.
    policy_object : the policy as built (its statistics, its VC assignment ...).
    """

    instance: Any
    result: Any
    policy: str
    seed: int
    metrics: dict[str, Any]
    violations: list[str]
    provenance: dict[str, Any]
    policy_object: Any = None
    rows: list[dict[str, Any]] = field(default_factory=list, repr=False)
    bin_s: float | None = None

    def __repr__(self) -> str:
        m = self.metrics

        def hours(key):
            v = m.get(key)
            return "-" if v is None else f"{v / 3600:,.2f} h"

        alloc = m.get("allocation_rate")
        return (f"Run({self.instance.trace.name!r}: {len(self.instance.trace)} jobs on {self.instance.cluster.name} "
                f"({self.instance.cluster.n_gpus} GPUs), policy {self.policy!r}, seed {self.seed}, perf "
                f"{self.instance.perf!r}; {m.get('finished')} finished, mean JCT {hours('mean_jct_s')}, mean wait "
                f"{hours('mean_waiting_s')}, utilization while jobs arrive "
                f"{'-' if alloc is None else f'{alloc:.0%}'}; "
                f"{'replay_check passed' if not self.violations else f'{len(self.violations)} replay violations'})")

    @property
    def label(self) -> str:
        """``policy/seed`` (the ``run`` column of :attr:`jobs` and of :func:`placement.compare`)."""
        return f"{self.policy}/seed{self.seed}"

    @property
    def jobs(self):
        """One row per job (``jobs.csv``'s columns: submit, first_start, finish, jct, queueing_delay,
        slowdown, state, ``tiers`` as a list of the network tiers of its placements ...; times in s)
        and the run's ``policy``, ``seed`` and ``run`` (:attr:`label`), so that the tables of
        several runs concatenate into one tidy table."""
        import pandas as pd

        df = pd.DataFrame(self.rows)
        if "tiers" in df:
            df["tiers"] = [t.replace(";", " ").split() if isinstance(t, str) else [] for t in df["tiers"]]
        df.insert(0, "seed", self.seed)
        df.insert(0, "policy", self.policy)
        df.insert(0, "run", self.label)
        return df

    @property
    def log(self):
        """The event log (``log.csv``): time, event, job, gpus (a tuple), work_done, extra."""
        import pandas as pd

        return pd.DataFrame([r._asdict() for r in self.result.log],
                            columns=["time", "event", "job", "gpus", "work_done", "extra"])

    def _series(self) -> list[dict[str, Any]]:
        from ..sim.metrics import time_series

        return time_series(self.rows, self.result.log, self.instance.cluster.n_gpus, bin_s=self.bin_s)

    @property
    def timeseries(self):
        """Per time bin (``timeseries.csv``): utilization, queue length, running jobs, SLO
        violation rate per priority."""
        import pandas as pd

        return pd.DataFrame(self._series())

    @property
    def summary(self) -> dict[str, Any]:
        """The document ``summary.json`` holds."""
        return summary_document(self.instance, self.result, self.metrics, self.violations, self.provenance)

    def replay(self) -> list[str]:
        """replay_check run again from the log alone (and the checks the policy's guarantees add:
        :func:`policy_checks`); an empty list is a valid schedule."""
        from ..sim.replay import replay_check

        perf = self.instance.perf_model()
        links = recorded_links(self.instance.cluster, self.provenance or {})
        checks = policy_checks(self.policy, self.policy_object, self.instance.cluster, links, perf=perf)
        return replay_check(self.instance.trace, self.instance.cluster, self.result.log,
                            perf=perf, checks=checks)

    def plot(self) -> list:
        """The run's figures (utilization and queue, SLO violations per priority, JCT CDF) as
        matplotlib figures, drawn with the current backend (inline in a notebook)."""
        return [fig for _name, fig in run_figures(self._series(), self.rows,
                                                  f"{self.instance.trace.name} / {self.policy}")]

    def save(self, path: str | os.PathLike, *, checked: bool = False) -> list[str]:
        """Write what ``placement simulate -o PATH`` writes (``instance.json``, ``log.json``,
        ``log.csv``, ``jobs.csv``, ``timeseries.csv``, ``summary.json``, the plots), staged and
        moved into place as one set; returns the plot file names. ``path`` is checked before
        anything is written (:func:`placement.io.check_output_folder`; an error names ``path``)."""
        if not isinstance(path, str | os.PathLike):
            raise InstanceError("path", f"must be a folder path, got {type(path).__name__}")
        out = Path(path)
        if not checked:
            out = check_output_folder(path, "path", OUTPUT_FILES)
        with agg_backend(), staged_folder(out) as stage:
            with _interrupts_deferred():  # an interrupt while writing: the set is dropped whole
                return write_outputs(stage, self.instance, self.result, self.rows, self.metrics, self.violations,
                                     bin_s=self.bin_s, run=self.provenance)


@contextlib.contextmanager
def _interrupts_deferred():
    """``SIGINT`` recorded, not raised, while the files are written into the staging folder
    (main thread only), then raised as one ``KeyboardInterrupt`` before the move: no library
    in the middle of a write sees it, and the staging folder is removed whole
    (:func:`placement.io.staged_folder`), so an interrupt leaves the outputs absent or whole."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: pending.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous if previous is not None else signal.default_int_handler)
    if pending:
        raise KeyboardInterrupt


def simulate(trace, cluster=None, policy="fifo", options: dict[str, Any] | None = None, seed: int = 0,
             perf: str | None = None, start: float = 0.0, hours: float | None = None,
             sample: int | None = None, checkpoint: float | None = None, scan: float | None = None,
             bin_s: float | None = None, progress=None, announce=None, warn=None) -> Run:
    """Run a scheduling policy on a trace: ``placement simulate`` without writing.

    Parameters
    ----------
    trace : str, Path, Trace or SimInstance
        A shipped trace name (``"philly"``, ``"openb"``), a trace file (Philly CSV, openb pod
        CSV, our CSV v1), a ``"trace"`` instance file (``instance.json`` of an earlier run), or
        an object.
    cluster : str or Cluster, optional
        Shorthand ``RxCxKxMxG[:TYPE]`` (regions x clusters x racks x machines x GPUs), a spec
        file, ``"openb"``, ``"cassini-testbed"``, or a Cluster; default by trace format.
    policy : str or Policy
        A registered policy name (``placement simulate --help`` lists them) or a built object.
    options : dict, optional
        The policy's constructor options (``--option KEY=VALUE``), checked against its
        annotations before the run.
    seed, perf, start, hours, sample, checkpoint, scan, bin_s
        As the command's options: ``start`` and ``hours`` in hours after the first submit,
        ``perf`` one of ``"ideal"`` (a trace file's default), ``"dally"``, ``"dally-machine"``.
    progress : callable(done, total, now), optional
        Called now and then during the run.
    warn : callable(str), optional
        Receives the performance model's warning before the run (:func:`perf_note`); default a
        :class:`UserWarning`.

    Returns
    -------
    Run
        ``run.jobs``, ``run.log``, ``run.timeseries`` (DataFrames), ``run.summary``,
        ``run.replay()``, ``run.plot()``, ``run.save(DIR)``.

    Raises
    ------
    InstanceError
        Bad input, one line naming the option (``--hours: must be a positive finite number``).
    """
    if isinstance(policy, str):
        check_policy_name(policy)  # an unknown name is refused before the trace is read
    if options is not None and not isinstance(options, dict):
        raise InstanceError("options", f"must be a mapping of option names to values, got {type(options).__name__}")
    inst, fmt_ = sim_instance(trace, cluster, perf=perf, start=start, hours=hours, sample=sample, seed=seed,
                              checkpoint=checkpoint, scan=scan, bin_s=bin_s)
    note = perf_note(inst)
    if note:
        if warn is None:
            import warnings

            warnings.warn(note, UserWarning, stacklevel=3)
        else:
            warn(note)
    if announce is not None:
        announce(f"{inst.trace.name}: {len(inst.trace)} jobs ({fmt_}) on {inst.cluster.name} "
                 f"({inst.cluster.n_gpus} GPUs), policy {policy if isinstance(policy, str) else type(policy).__name__}, "
                 f"perf {inst.perf}")
    built: list = []
    record: dict[str, Any] = {}
    res, rows, summ, broken = run_simulation(inst, policy, seed, dict(options or {}), progress=progress,
                                             built=built, record=record)
    record["bin_s"] = bin_s
    if isinstance(policy, str):
        record["command"] = command_line(trace, cluster, policy, options, seed, perf, start, hours, sample,
                                         checkpoint, scan, bin_s)
    return Run(inst, res, record["policy"], seed, summ, broken, record, built[0], rows, bin_s)


def check_policy_name(policy: str) -> None:
    """A registered policy's name (``--policy``); an unknown or empty one is refused with the
    list and the nearest names."""
    from ..sim.policies import policy_names
    from .options import unknown_name

    if policy not in policy_names():
        raise unknown_name(policy, policy_names(), "--policy", "a registered policy")


# Policies whose point is where a job's GPUs sit on the network (Dally's tiers; CASSINI's link
# sharing). Their runs mean something only where a spread job runs slower: under perf "dally"
# (Dally Table 1's slowdowns) or on a cluster with a network model (links shared over time). With
# perf "ideal" (a trace file's default, durations as observed) on a cluster without one, every
# placement runs at full speed and placement quality cannot show; placement.simulate warns and the command notes it
# when one runs so (network_note).
NETWORK_AWARE = ("dally", "dally-manual", "dally+cassini", "tiresias+cassini", "themis+cassini")


def network_note(run) -> str | None:
    """The warning for a network-aware policy run where its placements cannot matter (perf
    ``ideal`` on a cluster without a network model), else None."""
    if run.policy in NETWORK_AWARE and run.instance.perf == "ideal" and run.instance.cluster.network is None:
        return (f"policy {run.policy!r} places jobs by network tier, but perf 'ideal' on a cluster without a "
                "network model runs every placement at full speed, so its placements cannot show: run it with "
                "perf 'dally' (Dally Table 1's slowdowns; --perf dally on the command line)")
    return None


# Default cluster per trace format when --cluster is not given. Philly: 512 GPUs (the trace's
# mean demand is 374 GPUs: sum of duration x GPUs over its 109 days, measured), 8 per machine.
# The Pollux authors' workloads (pollux-workload-N): their simulator's 16 nodes of 4 GPUs. The
# other simulators' traces (placement.sim.trace_formats) on their simulators' example clusters:
# Tiresias's n32g4.csv (32 nodes of 4 GPUs), Gavel's default cluster_spec 25:0:0 (25 V100s,
# placed one by one), Blox's none (ours, as our CSV's).
DEFAULT_CLUSTERS = {"philly": "1x1x8x8x8", "openb": "openb", "v1": "1x1x4x8x8", "pollux": "1x1x1x16x4",
                    "tiresias": "1x1x1x32x4", "gavel": "1x1x1x25x1:V100", "blox": "1x1x4x8x8"}


OUTPUT_FILES = ("instance.json", "log.json", "log.csv", "jobs.csv", "timeseries.csv", "summary.json",
                "utilization_queue.png", "slo_violations.png", "jct_cdf.png")


def load_inputs(args: argparse.Namespace):
    """(SimInstance, trace format) from the command-line arguments (:func:`sim_instance`), the
    performance model's data checked against them (:func:`perf_note`)."""
    inst, fmt_ = sim_instance(args.trace, args.cluster, perf=args.perf, start=args.start or 0.0, hours=args.hours,
                              sample=args.sample, seed=args.seed or 0, checkpoint=args.checkpoint, scan=args.scan,
                              bin_s=getattr(args, "bin", None))
    perf_note(inst)
    return inst, fmt_


def sim_instance(trace, cluster=None, *, perf: str | None = None, start: float = 0.0,
                 hours: float | None = None, sample: int | None = None, seed: int = 0,
                 checkpoint: float | None = None, scan: float | None = None, bin_s: float | None = None):
    """(SimInstance, trace format) for ``placement simulate`` and :func:`placement.simulate`; all
    validation here, errors naming the command-line option.

    ``trace``: a shipped name (``philly``, ``openb``), a trace file, a ``"trace"`` instance
    document (``.json``/``.yaml``: trace, cluster and perf model), a
    :class:`~placement.sim.trace.Trace` or a :class:`~placement.sim.instance.SimInstance`.
    ``cluster``: a ``--cluster`` value (shorthand, spec file, shipped name) or a
    :class:`~placement.sim.cluster.Cluster`; ``None`` takes the instance's own or the
    trace format's default (:data:`DEFAULT_CLUSTERS`). The cluster must be one that
    ``placement evaluate`` reads back from ``instance.json`` (one set of limits for both).
    """
    from ..sim.cluster import Cluster
    from ..sim.instance import PERF_MODELS, SimInstance, load_instance
    from ..sim.trace import Trace, check_trace, window
    from .shipped import SHIPPED_TRACES, load_trace_arg, pollux_workload_path

    for name, v in (("start", start), ("hours", hours), ("checkpoint", checkpoint), ("scan", scan),
                    ("bin", bin_s)):
        if v is not None and (not isinstance(v, int | float) or isinstance(v, bool) or not math.isfinite(v)
                              or v < 0 or (v == 0 and name != "start")):
            raise InstanceError(f"--{name}", "must be a finite number >= 0 (hours after the first submit)"
                                if name == "start" else "must be a positive finite number")
    if scan is not None and scan < 1.0:
        raise InstanceError("--scan", "must be at least 1 s (a scan runs the policy over the whole queue)")
    if sample is not None and (not isinstance(sample, int) or isinstance(sample, bool) or sample < 1):
        raise InstanceError("--sample", "must be a positive number of jobs")
    if perf is not None and perf not in PERF_MODELS:
        raise InstanceError("--perf", f"must be one of {', '.join(PERF_MODELS)}, got {perf!r}")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise InstanceError("--seed", f"must be a non-negative integer, got {seed!r}")
    win = {"start": float(start) * 3600.0, "hours": hours, "sample": sample, "seed": seed}
    base = None
    # An in-memory input goes through the checks a file's rows go through, before any work.
    if hasattr(trace, "columns") and hasattr(trace, "iloc"):   # a pandas DataFrame: CSV v1's columns
        trace = Trace.from_dataframe(trace)
    if isinstance(trace, SimInstance):
        base, fmt_ = _checked_instance(trace, PERF_MODELS, Cluster, check_trace), "instance"
    elif isinstance(trace, Trace):
        trace, base, fmt_ = check_trace(trace), None, "trace"
    elif isinstance(trace, dict):
        base, fmt_ = load_instance(trace), "document"
    elif isinstance(trace, str | Path):
        src = str(trace)
        if src.lower().endswith((".json", ".yaml", ".yml")):
            base, fmt_ = load_instance(read_document(src)), "json"
        elif src not in SHIPPED_TRACES and not Path(src).exists() and pollux_workload_path(src) is None:
            from .options import unknown_name

            raise unknown_name(src, SHIPPED_TRACES, "trace", "a trace file, a shipped trace, or a Pollux workload "
                               "pollux-workload-N with N 1-8, -x0.5, -x1.5 or -x2.0 for another load")
    else:
        raise InstanceError("trace", "must be a shipped trace name, a file, a document, a DataFrame, a Trace "
                            f"or a SimInstance, got {type(trace).__name__}")
    if base is not None:
        jobs = window(base.trace.jobs, **win)
        tr = type(base.trace)(base.trace.name, tuple(jobs), base.trace.provenance)
        cl = _cluster(cluster) if cluster is not None else base.cluster
        regions = base.table_regions
        if regions is not None:   # the tables of the jobs kept; checked again only on another cluster
            used = {t for j in jobs for t in j.tables}
            regions = {t: r for t, r in regions.items() if t in used}
            if cluster is not None:
                from ..sim.instance import table_regions_of

                regions = table_regions_of({t: list(r) for t, r in regions.items()}, cl.region_names)
        inst = SimInstance(tr, cl, perf or base.perf, checkpoint or base.checkpoint_interval,
                           scan or base.scan_interval, regions)
    else:
        if isinstance(trace, Trace):
            tr = Trace(trace.name, tuple(window(trace.jobs, **win)), trace.provenance)
            default = DEFAULT_CLUSTERS["v1"]
        else:
            tr, fmt_ = load_trace_arg(str(trace), **win)
            default = DEFAULT_CLUSTERS[fmt_]
        cl = cluster if isinstance(cluster, Cluster) else _cluster(cluster or default)
        # a real trace's durations are what the jobs took: no slowdown model unless asked for;
        # the Pollux workloads' jobs run on their goodput (placement.sim.goodput)
        inst = SimInstance(tr, cl, perf or ("goodput" if fmt_ == "pollux" else "ideal"), checkpoint, scan)
    if not len(inst.trace):
        raise InstanceError("trace", f"{inst.trace.name[:60]!r} has no jobs: a simulation needs at least one")
    _readable_back(inst.cluster)
    return inst, fmt_


def perf_note(inst) -> str | None:
    """The performance model's data checked against the run's jobs and cluster before the run
    (:func:`placement.sim.instance.check_perf`: an unknown model name, a cluster or job outside
    the goodput measurements is an :class:`InstanceError`); returns its warning (multi-GPU jobs
    that name no model run at full speed under ``dally``), else None."""
    from ..sim.instance import check_perf

    return check_perf(inst.trace, inst.cluster, inst.perf)


def _checked_instance(inst, perf_models, cluster_type, check_trace):
    """A Python caller's SimInstance checked as ``instance.json`` is (:func:`placement.sim.instance.load_instance`)."""
    if not isinstance(inst.cluster, cluster_type):
        raise InstanceError("trace.cluster", f"must be a Cluster, got {type(inst.cluster).__name__}")
    if inst.perf not in perf_models:
        raise InstanceError("trace.perf", f"must be one of {', '.join(perf_models)}, got {inst.perf!r:.60}")
    for name in ("checkpoint_interval", "scan_interval"):
        v = getattr(inst, name)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v <= 0):
            raise InstanceError(f"trace.{name}", f"must be a positive finite number or None, got {v!r:.60}")
    if inst.scan_interval is not None and inst.scan_interval < 1.0:
        raise InstanceError("trace.scan_interval", "must be at least 1 s (a scan runs the policy over the whole queue)")
    if inst.table_regions is not None:
        from ..sim.instance import table_regions_of

        table_regions_of({t: list(r) for t, r in dict(inst.table_regions).items()}, inst.cluster.region_names,
                         "trace.table_regions")
    return type(inst)(check_trace(inst.trace), inst.cluster, inst.perf, inst.checkpoint_interval,
                      inst.scan_interval, inst.table_regions)


def _cluster(value):
    from ..sim.cluster import Cluster
    from .shipped import cluster_arg

    if isinstance(value, Cluster):
        return value
    if not isinstance(value, str | Path):
        raise InstanceError("--cluster", f"must be a cluster shorthand, a spec file or a Cluster, "
                            f"got {type(value).__name__}")
    return cluster_arg(str(value))


def _readable_back(cluster) -> None:
    """What ``simulate`` accepts, ``evaluate`` reads: the cluster goes through the spec loader
    that reads ``instance.json`` back (:func:`placement.sim.cluster_io.cluster_from_doc`), so
    the limits are that loader's, once (a shorthand of 1,025 GPUs per machine is refused here,
    not after the run)."""
    from ..sim.cluster_io import cluster_from_doc, cluster_to_doc

    try:
        cluster_from_doc(cluster_to_doc(cluster), "cluster")
    except InstanceError as exc:
        raise InstanceError("--cluster", f"{exc.field}: {exc.message}") from None


def package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("placement")
    except PackageNotFoundError:  # a source tree without an install
        return "0+unknown"


# What the data providers of policy_data.py take when an option is not given (their defaults,
# read there: ``levels`` is the class's ``fit_levels``).
_PROVIDER_DEFAULTS = {"data-placement": {"data_seed": 0, "n_tables": 200, "n_data_jobs": 400}}


_MAX_OPTION_JSON = 200_000


def option_json(value: Any) -> Any:
    """A policy option as JSON: numbers, strings, lists and objects as they are; numpy values and
    arrays as numbers and lists; a dataclass as the object of its fields; anything else as
    ``{"object": its class}``. What ``--option`` takes round-trips."""
    import dataclasses
    import enum

    import numpy as np

    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, np.generic):
        return option_json(value.item())
    if isinstance(value, np.ndarray):
        return option_json(value.tolist())
    if isinstance(value, enum.Enum):
        return option_json(value.value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: option_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): option_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [option_json(v) for v in value]
    if isinstance(value, set | frozenset):
        items = [option_json(v) for v in value]
        return sorted(items, key=lambda x: json.dumps(x, sort_keys=True))
    return {"object": f"{type(value).__module__}.{type(value).__qualname__}"}


def resolved_options(policy: str, options: dict[str, Any] | None, table_regions: bool = False) -> dict[str, Any]:
    """Every constructor option of the registered ``policy``: the given ones, the defaults of the
    rest, and the options its data providers take (``needs``), as JSON (:func:`option_json`); a
    data option not given is the provider's default (:func:`placement.app.policy_data.default_data`:
    ``"candidate-regions"`` when the instance has ``table_regions``, else ``"replicas"``).
    A value whose JSON exceeds 200,000 characters is recorded as its class and length."""
    import inspect

    from ..sim.policies import policy_class
    from .policy_data import default_data

    cls = policy_class(policy)
    given = dict(options or {})
    out: dict[str, Any] = {}
    for p in inspect.signature(cls).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        out[p.name] = given.pop(p.name) if p.name in given else (
            None if p.default is inspect.Parameter.empty else p.default)
    for option, kind in getattr(cls, "needs", {}).items():
        if kind == "vc-assignment":
            out["levels"] = given.pop("levels", getattr(cls, "fit_levels", "multi"))
        if kind == "data-placement" and option not in (options or {}):
            out[option] = default_data(table_regions)
        for k, v in _PROVIDER_DEFAULTS.get(kind, {}).items():
            out[k] = given.pop(k, v)
    out.update(given)  # anything else the caller passed (refused by the checker before a run)
    recorded = {}
    for k, v in out.items():
        j = option_json(v)
        text = json.dumps(j)
        recorded[k] = j if len(text) <= _MAX_OPTION_JSON else {
            "object": f"{type(v).__module__}.{type(v).__qualname__}", "json_chars": len(text)}
    return recorded


def provenance(inst, policy: str, options: dict | None, seed: int, command: str | None = None,
               bin_s: float | None = None, agent: bool | str = False) -> dict[str, Any]:
    """What made a run (``summary.json``'s ``run``): the policy, the options as given and resolved
    (defaults included), the seed, the perf model and intervals, the package version and the
    command line; ``agent`` (CASSINI §4.2 step 3's agent in the link model: ``true`` or
    ``"all"``, :class:`~placement.sim.links.LinkSharing`) only for a run that had it, so the link
    check of a re-check from the files applies the same rule. ``placement simulate --rerun DIR``
    reads it back."""
    given = {k: option_json(v) for k, v in (options or {}).items()}
    return {**({"agent": agent} if agent else {}), "policy": policy, "options": given,
            "resolved_options": resolved_options(policy, options, getattr(inst, "table_regions", None) is not None),
            "seed": seed, "perf": inst.perf, "checkpoint_interval": inst.checkpoint_interval,
            "scan_interval": inst.scan_interval, "bin_s": bin_s, "version": package_version(),
            "command": command}


def policy_checks(policy: str, pol, cluster, links=None, perf=None) -> list:
    """The replay checks a run of ``policy`` must pass beyond the common ones: each link's factor
    over time when the cluster has a network (``links``: the engine's
    :class:`~placement.sim.links.LinkSharing`, or a fresh one), and HiveD's sharing safety
    (§3.2: guaranteed cells within the VC assignment) and the guarantee check of its start rows'
    classes (:func:`placement.sim.replay.guarantee_check`) for the ``hived`` policies; on the
    goodput model (``perf``), every logged rate re-derived from the measurements
    (:func:`placement.sim.goodput.goodput_check`)."""
    from ..sim.link_check import link_factor_check
    from ..sim.links import LinkSharing

    out = []
    if cluster.network is not None:
        out.append(link_factor_check(links if links else LinkSharing(cluster)))
    if hasattr(perf, "segment"):
        from ..sim.goodput import goodput_check

        out.append(goodput_check(perf, cluster))
    assign = getattr(pol, "assign", None)
    if policy.startswith("hived") and assign is None and getattr(pol, "assignment_arg", None) is not None:
        from placement.solvers.online.tenants import as_assignment, check_cluster

        assign = as_assignment(pol.assignment_arg, check_cluster(cluster))  # a policy not yet set up
    if policy.startswith("hived") and assign is not None:
        from placement.solvers.online.hived import sharing_safety_check

        from ..sim.replay import guarantee_check

        out += [sharing_safety_check(assign), guarantee_check(assign.cells)]
    return out


def _recorded_options(options: dict) -> dict:
    """The options ``summary.json`` records, as the policy takes them: a VC assignment is
    recorded as ``{"n_nodes": N, "cells": {tenant: cells per level}}`` (its dataclass form)."""
    a = options.get("assignment")
    if isinstance(a, dict) and set(a) == {"n_nodes", "cells"} and isinstance(a["cells"], dict):
        from placement.models.hived_vc import VCAssignment

        try:
            cells = {str(t): tuple(int(x) for x in c) for t, c in a["cells"].items()}
            return {**options, "assignment": VCAssignment(int(a["n_nodes"]), cells)}
        except (TypeError, ValueError):
            return options  # the option checker names what is wrong
    return options


def recorded_links(cluster, run: dict):
    """The link model a recorded run (:func:`provenance`) shared links with: its ``agent`` rule,
    or ``None`` (the default model) when it recorded none or the cluster has no network."""
    agent = run.get("agent", False)
    if not (isinstance(agent, bool) or agent == "all"):    # 1 == True: a number is not a rule
        raise InstanceError("run.agent", f"must be true or \"all\" when recorded, not {agent!r}")
    if not agent or cluster.network is None:
        return None
    from ..sim.links import LinkSharing

    return LinkSharing(cluster, agent=agent)


def folder_checks(instance_path: str, inst, log) -> list[str]:
    """The policy's own replay checks for ``placement evaluate DIR/instance.json DIR/log.json``:
    when ``DIR/summary.json`` records the run (:func:`provenance`), the policy is rebuilt from
    the options it records and :func:`policy_checks` runs on the log (link factors, HiveD's
    sharing safety), so the replay judges the run by the options it ran with, not by guessed
    defaults. Without such a record: no extra check."""
    from ..sim.policies import policy_names
    from .policy_data import build_policy

    path = Path(instance_path).parent / "summary.json"
    if not path.is_file():
        return []
    try:
        run = read_document(path).get("run")
    except (InstanceError, AttributeError):
        return []
    if not isinstance(run, dict) or run.get("policy") not in policy_names() or not isinstance(run.get("options"), dict):
        return []
    try:
        pol = build_policy(run["policy"], inst.cluster, table_regions=inst.table_regions,
                           **_recorded_options(run["options"]))
    except InstanceError as exc:
        return [f"{path}: the recorded options do not build policy {run['policy']!r} ({exc})"]
    try:
        links = recorded_links(inst.cluster, run)
    except InstanceError as exc:
        return [f"{path}: {exc}"]
    out: list[str] = []
    for check in policy_checks(run["policy"], pol, inst.cluster, links, perf=inst.perf_model()):
        out += check(inst.trace, inst.cluster, log)
    return out


def run_simulation(inst, policy: str, seed: int = 0, options: dict | None = None, progress=None,
                   checks=None, built: list | None = None, record: dict | None = None, agent: bool = False):
    """Simulate; returns (SimResult, per-job rows, summary dict, violations).

    ``checks(policy)``, when given, returns extra replay checks built from the policy object (a
    HiveD run's sharing-safety check needs its VC assignment); without it, :func:`policy_checks`.
    ``built``, when given, receives the policy object (its statistics and classes of jobs beyond
    the log); ``record``, when given, receives the run's :func:`provenance`. ``agent``: links
    shared with CASSINI §4.2 step 3's agent (:class:`~placement.sim.links.LinkSharing`)."""
    from ..sim.engine import simulate
    from ..sim.link_metrics import iteration_summary
    from ..sim.links import LinkSharing
    from ..sim.metrics import per_job, summary
    from ..sim.replay import replay_check
    from .policy_data import build_policy

    if isinstance(policy, str):
        if record is not None:
            record.update(provenance(inst, policy, options, seed, command=record.get("command"), agent=agent))
        pol = build_policy(policy, inst.cluster, table_regions=inst.table_regions, **(options or {}))
    else:  # a policy object built by a Python caller: its class is what can be recorded
        if options:
            raise InstanceError("options", "apply to a policy given by name; this one is already built")
        pol = policy
        policy = f"{type(pol).__module__}.{type(pol).__qualname__}"
        if record is not None:
            record.update({**provenance(inst, "fifo", None, seed, command=record.get("command"), agent=agent),
                           "policy": policy, "options": {},
                           "resolved_options": None})
    if built is not None:
        built.append(pol)
    perf = inst.perf_model()
    links = LinkSharing(inst.cluster, agent=agent) if inst.cluster.network is not None else False
    res = simulate(inst.trace, inst.cluster, pol, perf=perf, seed=seed, scan_interval=inst.scan_interval,
                   checkpoint_interval=inst.checkpoint_interval, progress=progress, links=links)
    t0 = time.perf_counter()
    if checks is not None:
        from ..sim.link_check import link_factor_check

        extra = list(checks(pol)) + ([link_factor_check(links)] if links else [])
        if hasattr(perf, "segment"):
            from ..sim.goodput import goodput_check

            extra.append(goodput_check(perf, inst.cluster))
    else:
        extra = policy_checks(policy, pol, inst.cluster, links, perf=perf)
    broken = replay_check(inst.trace, inst.cluster, res.log, perf=perf, checks=extra)
    replay_s = time.perf_counter() - t0
    rows = per_job(res.log, inst.trace)
    summ = summary(rows, res.log, inst.cluster.n_gpus)
    if links:
        summ.update(iteration_summary(inst.trace, res.log))
    summ["replay_check_s"] = round(replay_s, 3)
    return res, rows, summ, broken


def _csv(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return ""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: ("" if v is None else repr(v) if isinstance(v, float) else v) for k, v in r.items()})
    return buf.getvalue()


def run_figures(ts: list[dict[str, Any]], rows: list[dict[str, Any]], title: str) -> list[tuple[str, Any]]:
    """(file name, matplotlib figure): utilization and queue, SLO violation rate per priority over
    time, JCT CDF. The backend is the caller's (a notebook's inline one, Agg on the command line)."""
    import matplotlib.pyplot as plt
    import numpy as np

    figs = []
    if ts:
        hours = np.array([(r["t_start"] - ts[0]["t_start"]) / 3600 for r in ts])
        fig, ax1 = plt.subplots(figsize=(8, 3.5))
        ax1.plot(hours, [r["utilization"] for r in ts], color="tab:blue", label="GPU utilization")
        ax1.set_ylim(0, 1.05)
        ax1.set_xlabel("hours")
        ax1.set_ylabel("utilization")
        ax2 = ax1.twinx()
        ax2.plot(hours, [r["queue_length"] for r in ts], color="tab:red", label="queue length")
        ax2.set_ylabel("pending jobs")
        lines = ax1.get_lines() + ax2.get_lines()   # inside the axes, clear of the right axis label
        ax1.legend(lines, [ln.get_label() for ln in lines], loc="upper left", fontsize=8, framealpha=0.8)
        ax1.set_title(f"{title}: utilization and queue")
        fig.tight_layout()
        figs.append(("utilization_queue.png", fig))
        keys = [k for k in ts[0] if k.startswith("slo_violation_rate_p")]
        fig, ax = plt.subplots(figsize=(8, 3.5))
        for k in keys:
            ys = [np.nan if r[k] is None else 100 * r[k] for r in ts]
            ax.plot(hours, ys, marker=".", lw=1, label=f"priority {k.rsplit('p', 1)[1]}")
        ax.set_xlabel("hours (by submit time)")
        ax.set_ylabel("SLO violations (%)")
        ax.set_title(f"{title}: scheduling-latency SLO violations per priority")
        ax.legend(fontsize=8)
        fig.tight_layout()
        figs.append(("slo_violations.png", fig))
    jct = sorted(r["jct"] for r in rows if r["jct"] is not None)
    if jct:
        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.plot(np.maximum(jct, 1e-3), np.arange(1, len(jct) + 1) / len(jct))
        ax.set_xscale("log")
        ax.set_xlabel("JCT (s)")
        ax.set_ylabel("fraction of jobs")
        ax.set_title(f"{title}: JCT CDF")
        fig.tight_layout()
        figs.append(("jct_cdf.png", fig))
    return figs


def plot_run(out: Path, ts: list[dict[str, Any]], rows: list[dict[str, Any]], title: str) -> list[str]:
    """:func:`run_figures` written as PNG files into ``out`` (and closed); their names."""
    return [save_figure(fig, out, name) for name, fig in run_figures(ts, rows, title)]


def summary_document(inst, res, summ, broken, run: dict | None = None) -> dict[str, Any]:
    """``summary.json``: the inputs, ``run`` (what made the run: :func:`provenance`), metrics,
    engine and policy statistics and replay_check's verdict."""
    return {
        "trace": inst.trace.name, "provenance": inst.trace.provenance, "jobs": len(inst.trace),
        "cluster": inst.cluster.name, "gpus": inst.cluster.n_gpus, "gpu_types": inst.cluster.type_count,
        "policy": res.policy, "perf": inst.perf, "checkpoint_interval": inst.checkpoint_interval,
        "scan_interval": inst.scan_interval, "run": run, "metrics": summ, "engine": res.stats,
        "policy_stats": res.policy_stats, "replay_violations": broken[:100],
        "replay_ok": not broken,
        "synthetic_fields": sorted(set().union(*(j.synthetic for j in inst.trace.jobs))) if len(inst.trace) else []}


def write_outputs(out: Path, inst, res, rows, summ, broken, bin_s=None, plots=True, run: dict | None = None
                  ) -> list[str]:
    """The files of module docstring into ``out`` (a staging folder: callers move it into place)."""
    from ..sim.instance import instance_to_json, solution_to_json
    from ..sim.metrics import time_series

    out.mkdir(parents=True, exist_ok=True)
    ts = time_series(rows, res.log, inst.cluster.n_gpus, bin_s=bin_s)
    write_text(out / "instance.json", json.dumps(instance_to_json(inst), separators=(",", ":")) + "\n")
    write_text(out / "log.json", json.dumps(solution_to_json(inst, res.log), separators=(",", ":")) + "\n")
    res.log.write_csv(out / "log.csv")
    # a job's tiers as one ';'-separated cell, as lists are in our trace CSV (tables, synthetic)
    write_text(out / "jobs.csv", _csv([{**r, "tiers": ";".join(str(r["tiers"]).split())} if "tiers" in r else r
                                       for r in rows]))
    write_text(out / "timeseries.csv", _csv(ts))
    write_json(out / "summary.json", summary_document(inst, res, summ, broken, run))
    return plot_run(out, ts, rows, f"{inst.trace.name} / {res.policy}") if plots else []


def command_line(trace, cluster=None, policy: str = "fifo", options: dict | None = None, seed: int = 0,
                 perf: str | None = None, start: float = 0.0, hours: float | None = None,
                 sample: int | None = None, checkpoint: float | None = None, scan: float | None = None,
                 bin_s: float | None = None) -> str | None:
    """The ``placement simulate`` command line (without ``-o``) that makes a run, in one canonical
    form whether it ran from the command line or from :func:`placement.simulate`; ``None`` when
    the trace, the cluster or an option is a Python object with no command-line form."""
    import shlex

    if not isinstance(trace, str | Path) or not (cluster is None or isinstance(cluster, str | Path)):
        return None
    words = ["placement", "simulate", str(trace), "--policy", str(policy)]
    if cluster is not None:
        words += ["--cluster", str(cluster)]
    for flag, v in (("--seed", seed), ("--start", start), ("--hours", hours), ("--sample", sample),
                    ("--perf", perf), ("--checkpoint", checkpoint), ("--scan", scan), ("--bin", bin_s)):
        if v is not None and not (flag in ("--seed", "--start") and v == 0):
            words += [flag, str(int(v)) if isinstance(v, float) and v.is_integer() else
                      repr(v) if isinstance(v, float) else str(v)]
    for k, v in (options or {}).items():
        j = option_json(v)
        if isinstance(j, dict) and "object" in j:
            return None
        words += ["--option", f"{k}={j if isinstance(j, str) else json.dumps(j, separators=(',', ':'))}"]
    return " ".join(shlex.quote(w) for w in words)
