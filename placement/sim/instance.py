"""A simulation input as a document (``"problem": "trace"``): :class:`SimInstance` and its files.

Instance: a trace with its cluster and performance model (:class:`SimInstance`); solution: an
event log; reference evaluation: :func:`placement.sim.replay.replay_check` (violations) and the
metrics of :mod:`placement.sim.metrics` (terms), together :func:`evaluate_report`. The app layer
registers them as the ``trace`` family (:mod:`placement.app.families.trace`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .. import validate
from ..errors import InstanceError
from .cluster import Cluster
from .cluster_io import cluster_from_doc, cluster_to_doc
from .log import EventLog, _parse_row
from .perf import DallyPerf, IdealPerf, PerfModel
from .trace import CSV_V1_COLUMNS, MAX_PROVENANCE, Job, Trace, trace_name

__all__ = ["SimInstance", "load_instance", "instance_to_json", "load_solution", "solution_to_json",
           "evaluate_report", "make_perf", "PERF_MODELS", "LOG_KEYS", "MAX_JOBS", "table_regions_of", "check_perf"]

PERF_MODELS = ("dally", "dally-machine", "ideal", "goodput")
MAX_JOBS = 2_000_000


def make_perf(name: str) -> PerfModel:
    """``dally`` (Dally Table 1, compute-only ideal), ``dally-machine`` (machine tier = 1.0),
    ``ideal`` (1.0 everywhere), ``goodput`` (Pollux's jobs: a fresh
    :func:`placement.sim.goodput.default_perf` on the measured applications)."""
    if name == "goodput":
        from .goodput import default_perf

        return default_perf()
    if name == "dally":
        return DallyPerf()
    if name == "dally-machine":
        return DallyPerf(baseline="machine")
    if name == "ideal":
        return IdealPerf()
    raise InstanceError("perf", f"must be one of {', '.join(PERF_MODELS)}, not {name!r}")


def check_perf(trace: Trace, cluster: Cluster, perf: str) -> str | None:
    """The trace and cluster checked against what the performance model ``perf`` has data for,
    before a run. ``dally``/``dally-machine``: every named model is a Dally Table 1 row
    (:func:`placement.sim.perf.check_models`); returns the warning for multi-GPU jobs without a
    model (:func:`placement.sim.perf.model_note`), else None. ``goodput``: every job names a
    measured Pollux application, and jobs and machines stay inside the measurements
    (:func:`placement.sim.goodput.check_measured`). ``ideal``: nothing to check."""
    from .perf import DALLY_MODELS, check_models, model_note

    if perf in ("dally", "dally-machine"):
        check_models(trace.jobs, DALLY_MODELS, perf)
        return model_note(trace.jobs, perf)
    if perf == "goodput":
        from .goodput import check_measured

        check_measured(trace.jobs, cluster)
    return None


@dataclass(frozen=True)
class SimInstance:
    """A simulation input: trace, cluster, performance model name, checkpoint and scan intervals,
    and optionally where each data table is (``table_regions``: table name -> the regions that
    hold it, by name; the generated MAST traces carry each workload's candidate regions, Fig. 7,
    and ``placement simulate`` gives them to MAST as its data placement, ``data=candidate-regions``)."""

    trace: Trace
    cluster: Cluster
    perf: str = "dally"
    checkpoint_interval: float | None = None
    scan_interval: float | None = None
    table_regions: Mapping[str, tuple[str, ...]] | None = None

    @property
    def name(self) -> str:
        return self.trace.name

    def perf_model(self) -> PerfModel:
        return make_perf(self.perf)


def _opt_pos(doc: dict, key: str) -> float | None:
    v = doc.get(key)
    if v is None:
        return None
    return validate.number(v, key, positive=True)


def load_instance(doc: Any) -> SimInstance:
    """Validate a ``"problem": "trace"`` document (every job row, the cluster spec)."""
    allowed = {"problem", "name", "provenance", "columns", "jobs", "cluster", "perf",
               "checkpoint_interval", "scan_interval", "table_regions"}
    if isinstance(doc, dict) and ("log" in doc or "log_columns" in doc) and "jobs" not in doc:
        raise InstanceError("document", "is an event log (a run's log.json, the solution), not an instance: give "
                            "the run's instance.json (its trace, cluster and performance model)")
    doc = validate.known_keys(validate.obj(doc, "document"), allowed, "")
    if doc.get("problem", "trace") != "trace":
        raise InstanceError("problem", "must be 'trace'")
    cols = doc.get("columns", list(CSV_V1_COLUMNS))
    if cols != list(CSV_V1_COLUMNS):
        raise InstanceError("columns", f"must be {list(CSV_V1_COLUMNS)}")
    rows = doc.get("jobs")
    if not isinstance(rows, list) or len(rows) > MAX_JOBS:
        raise InstanceError("jobs", f"must be a list of at most {MAX_JOBS} job rows")
    jobs = []
    for i, r in enumerate(rows):
        w = f"jobs[{i}]"
        if not isinstance(r, list) or len(r) != len(cols):
            raise InstanceError(w, f"must be a list of {len(cols)} values ({', '.join(cols)})")
        jid, submit, gpus, dur, tenant, prio, gtype, model, tables, syn = r
        validate.name(jid, f"{w}[0]")
        submit, dur = validate.number(submit, f"{w}[1]"), validate.number(dur, f"{w}[3]")
        gpus, prio = validate.integer(gpus, f"{w}[2]", 1), validate.integer(prio, f"{w}[5]")
        for k, v in ((4, tenant), (6, gtype), (7, model)):
            if v is not None and not isinstance(v, str):
                raise InstanceError(f"{w}[{k}]", "must be a string or null")
        for k, v in ((8, tables), (9, syn)):
            if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
                raise InstanceError(f"{w}[{k}]", "must be a list of strings")
        jobs.append(Job(jid, float(submit), gpus, float(dur), tenant or "default", prio,
                        gtype or None, model or None, tuple(tables), frozenset(syn)))
    name = trace_name(doc.get("name", "trace"), "name")
    provenance = doc.get("provenance", "")
    if not isinstance(provenance, str) or len(provenance) > MAX_PROVENANCE:
        raise InstanceError("provenance", f"must be a string of at most {MAX_PROVENANCE:,} characters")
    trace = Trace(name, tuple(jobs), provenance)
    if "cluster" not in doc:
        raise InstanceError("cluster", "is missing (a cluster spec document)")
    cluster = cluster_from_doc(doc["cluster"], "cluster")
    perf = doc.get("perf", "dally")
    make_perf(perf)
    scan = _opt_pos(doc, "scan_interval")
    if scan is not None and scan < 1.0:
        raise InstanceError("scan_interval", "must be at least 1 s (a scan runs the policy over the whole queue)")
    return SimInstance(trace, cluster, perf, _opt_pos(doc, "checkpoint_interval"), scan,
                       table_regions_of(doc.get("table_regions"), cluster.region_names))


def table_regions_of(value: Any, regions, where: str = "table_regions") -> dict[str, tuple[str, ...]] | None:
    """A ``table_regions`` value checked: null, or an object of at most :data:`MAX_JOBS` tables,
    each a non-empty list of distinct region names of the cluster (``regions``)."""
    if value is None:
        return None
    if not isinstance(value, dict) or len(value) > MAX_JOBS:
        raise InstanceError(where, f"must be an object of at most {MAX_JOBS:,} tables, each a list of region names")
    known = set(regions)
    out: dict[str, tuple[str, ...]] = {}
    for table, regs in value.items():
        w = f"{where}.{table}"[:200]
        validate.name(table, w)
        if not isinstance(regs, list) or not regs or len(regs) > len(known):
            raise InstanceError(w, f"must be a non-empty list of at most {len(known)} region names of the cluster")
        for r in regs:
            if not isinstance(r, str) or r not in known:
                raise InstanceError(w, f"{str(r)[:60]!r} is not a region of the cluster")
        if len(set(regs)) != len(regs):
            raise InstanceError(w, "names a region twice")
        out[table] = tuple(regs)
    return out


def instance_to_json(inst: SimInstance) -> dict:
    return {"problem": "trace", "name": inst.trace.name, "provenance": inst.trace.provenance,
            "columns": list(CSV_V1_COLUMNS),
            "jobs": [[j.id, j.submit, j.gpus, j.duration, j.tenant, j.priority, j.gpu_type,
                      j.model, list(j.tables), sorted(j.synthetic)] for j in inst.trace.jobs],
            "cluster": cluster_to_doc(inst.cluster), "perf": inst.perf,
            "checkpoint_interval": inst.checkpoint_interval, "scan_interval": inst.scan_interval,
            **({} if inst.table_regions is None else
               {"table_regions": {t: list(r) for t, r in inst.table_regions.items()}})}


LOG_KEYS = ["time", "event", "job", "gpus", "work_done", "extra"]


def load_solution(inst: SimInstance, doc: Any) -> EventLog:
    """An event log document (``{"problem": "trace", "log": [[time, event, job, gpus, work,
    extra], ...]}``); every row validated."""
    if not isinstance(doc, dict) or not isinstance(doc.get("log"), list):
        raise InstanceError("log", "must be a list of log rows")
    rows = []
    for i, r in enumerate(doc["log"]):
        if not isinstance(r, list) or len(r) != len(LOG_KEYS):
            raise InstanceError(f"log[{i}]", f"must be a list [{', '.join(LOG_KEYS)}]")
        rows.append(_parse_row(f"log[{i}]", dict(zip(LOG_KEYS, r, strict=True))))
    return EventLog(rows)


def solution_to_json(inst: SimInstance, log: EventLog) -> dict:
    return {"problem": "trace", "log_columns": LOG_KEYS,
            "log": [[r.time, r.event, r.job, list(r.gpus), r.work_done, r.extra] for r in log]}


def evaluate_report(inst: SimInstance, log: EventLog) -> tuple[dict, list[str]]:
    """Metrics (:mod:`.metrics`) and replay_check's violations of a log."""
    from .metrics import per_job, summary
    from .replay import replay_check

    broken = replay_check(inst.trace, inst.cluster, log, perf=inst.perf_model())
    terms = summary(per_job(log, inst.trace), log, inst.cluster.n_gpus)
    return terms, broken
