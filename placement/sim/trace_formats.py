"""Trace files of other simulators, read as they are: Tiresias, Gavel, Blox and Pollux.

Each format is read from the simulator's own repository (the file that parses it is named in
each loader) and becomes a :class:`~placement.sim.trace.Trace`; every row is validated, a bad
row is one :class:`InstanceError` naming the file, the row (its line number) and the column.
Samples of each ship in ``instances/data/traces/`` with their provenance (that folder's README).

- **Tiresias** (``SymbioticLab/Tiresias`` ``simulator/*_job.csv``, read by ``jobs.py``): a CSV
  whose header has ``job_id, num_gpu, submit_time, duration`` (s) and optionally ``model_name``;
  other columns (``iterations``, ``interval``, ...) are not used.
- **Gavel** (``stanford-futuredata/gavel`` ``scheduler/traces/*.trace``, read by
  ``scheduler/utils.py`` ``parse_trace``): no header, ten tab-separated fields ``job_type,
  command, working_directory, num_steps_arg, needs_data_dir, total_steps, scale_factor,
  priority_weight, SLO, arrival_time``. GPUs = ``scale_factor``; duration = ``total_steps`` over
  the job type's V100 throughput (:data:`~placement.sim.gavel_throughputs.GAVEL_V100_THROUGHPUT`,
  the run time Gavel's generator drew); ids ``0, 1, ...`` in file order, as Gavel numbers jobs.
  ``priority_weight`` and ``SLO`` are not read (the simulator's priority is a strict class).
- **Blox** (``msr-fiddle/blox`` ``workload/workload.py`` ``populate_from_trace``): no header,
  five comma-separated fields ``job_id, model_name, arrival_time, num_iters, gpu_demand``; Blox
  sets the iteration time to 1 s there, so duration = ``num_iters`` s.
- **Pollux** (``petuum/adaptdl`` branch ``osdi21-artifact`` ``simulator/workloads*/*.csv``):
  :func:`placement.sim.pollux_workload.load_pollux_workload` on the goodput model's applications
  (each job's work is its application's total progress; run it under ``perf="goodput"``).

Model names: a name equal to a Dally Table 1 model up to case and punctuation is written as Table 1
writes it (``vgg11``, ``ResNet-50 (batch size 64)`` -> ``VGG11``, ``ResNet50``), and Blox's
``res18``/``res50`` are ``ResNet18``/``ResNet50``; others are kept as the trace writes them
(the performance model ``dally`` refuses those, :func:`placement.sim.perf.check_models`).
Tenant ``default`` and priority 0 throughout: none of these formats has tenants or priority classes.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..errors import InstanceError
from .gavel_throughputs import GAVEL_V100_THROUGHPUT
from .table1 import DALLY_MODELS
from .trace import (
    CSV_V1_COLUMNS,
    CSV_V1_MAGIC,
    MAX_TRACE_ROWS,
    OPENB_POD_COLUMNS,
    PHILLY_COLUMNS,
    Job,
    Trace,
    _cell,
    _csv_rows,
    _float,
    _header,
    _int,
    _open_rows,
    load_openb,
    load_philly,
    load_trace_csv,
    window,
)

__all__ = ["FORMATS", "detect_format", "trace_format", "load_trace", "load_tiresias", "load_gavel", "load_blox", "load_pollux", "table1_model",
           "TIRESIAS_COLUMNS", "GAVEL_FIELDS", "BLOX_FIELDS", "POLLUX_COLUMNS"]

TIRESIAS_COLUMNS = ("job_id", "num_gpu", "submit_time", "duration")
GAVEL_FIELDS = ("job_type", "command", "working_directory", "num_steps_arg", "needs_data_dir", "total_steps",
                "scale_factor", "priority_weight", "SLO", "arrival_time")
BLOX_FIELDS = ("job_id", "model_name", "arrival_time", "num_iters", "gpu_demand")
POLLUX_COLUMNS = ("name", "time", "application", "num_replicas", "batch_size")
_BLOX_ALIASES = {"res18": "ResNet18", "res50": "ResNet50"}


def _fold(name: str) -> str:
    return "".join(c for c in name.lower() if c.isalnum())


_TABLE1 = {_fold(m): m for m in DALLY_MODELS}


def table1_model(name: str) -> str | None:
    """A trace's model name as Dally Table 1 writes it when they agree up to case and punctuation
    (``resnet-18`` -> ``ResNet18``); otherwise the name as given; ``""`` is None."""
    name = name.strip()
    if not name:
        return None
    return _TABLE1.get(_fold(name), name)


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def detect_format(first_line: str) -> str | None:
    """``tiresias``, ``gavel``, ``blox`` or ``pollux`` from a file's first line, else None."""
    cols = {c.strip() for c in first_line.split(",")}
    if set(POLLUX_COLUMNS) <= cols:
        return "pollux"
    if set(TIRESIAS_COLUMNS) <= cols:
        return "tiresias"
    tabs = first_line.split("\t")
    if len(tabs) == len(GAVEL_FIELDS) and all(_is_number(tabs[i]) for i in (4, 5, 6, 7, 8, 9)):
        return "gavel"
    f = [x.strip() for x in first_line.split(",")]
    if len(f) == len(BLOX_FIELDS) and f[1] and not _is_number(f[1]) and all(_is_number(f[i]) for i in (0, 2, 3, 4)):
        return "blox"
    return None


def _finish(name: str, jobs: list[Job], fmt: str, source: str, extra: str, start, hours, sample, seed) -> Trace:
    if not jobs:
        raise InstanceError(name, "has no job rows")
    seen: set[str] = set()
    for j in jobs:
        if j.id in seen:
            raise InstanceError(f"{name} job {j.id[:40]!r}", "repeats a job id")
        seen.add(j.id)
    n = len(jobs)
    jobs = window(jobs, start=start, hours=hours, sample=sample, seed=seed)
    prov = (f"{fmt} trace ({Path(name).name}; format of {source}); {n} rows, window start={start:g}s "
            f"hours={hours} sample={sample} seed={seed}; {extra}")
    return Trace(name=Path(name).stem[:200] or fmt, jobs=tuple(jobs), provenance=prov)


def load_tiresias(path: str | os.PathLike, *, start: float = 0.0, hours: float | None = None,
                  sample: int | None = None, seed: int = 0) -> Trace:
    """A Tiresias job CSV (module docstring): id ``job_id``, GPUs ``num_gpu``, submit
    ``submit_time`` (s), duration ``duration`` (s), model ``model_name`` (:func:`table1_model`)."""
    name, text = _open_rows(path, "CSV")
    rows = _csv_rows(name, text)
    cols, width = _header(name, rows, TIRESIAS_COLUMNS)
    jobs = []
    for n, row in rows:
        jid = _cell(name, n, row, cols, width, "job_id")
        if not jid:
            raise InstanceError(f"{name} row {n} column 'job_id'", "must be a non-empty job id")
        model = table1_model(_cell(name, n, row, cols, width, "model_name")) if "model_name" in cols else None
        jobs.append(Job(id=jid, submit=_float(name, n, "submit_time", _cell(name, n, row, cols, width, "submit_time")),
                        gpus=_int(name, n, "num_gpu", _cell(name, n, row, cols, width, "num_gpu"), lo=1),
                        duration=_float(name, n, "duration", _cell(name, n, row, cols, width, "duration")),
                        model=model))
    return _finish(name, jobs, "Tiresias", "SymbioticLab/Tiresias simulator/*_job.csv, Apache-2.0",
                   "model names as Dally Table 1 writes them where they agree", start, hours, sample, seed)


def load_gavel(path: str | os.PathLike, *, start: float = 0.0, hours: float | None = None,
               sample: int | None = None, seed: int = 0) -> Trace:
    """A Gavel ``.trace`` file (module docstring): GPUs ``scale_factor``, submit ``arrival_time``,
    duration ``total_steps`` / the job type's V100 throughput, model the job type's model
    (``ResNet-18 (batch size 32)`` -> ``ResNet18``)."""
    name, text = _open_rows(path, "trace")
    known = sorted({t for t, _ in GAVEL_V100_THROUGHPUT})
    jobs = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if len(jobs) >= MAX_TRACE_ROWS:
            raise InstanceError(f"{name} row {n}", f"a trace may have at most {MAX_TRACE_ROWS} rows")
        f = line.split("\t")
        if len(f) != len(GAVEL_FIELDS):
            raise InstanceError(f"{name} row {n}", f"has {len(f)} tab-separated fields; Gavel's trace has "
                                f"{len(GAVEL_FIELDS)} ({', '.join(GAVEL_FIELDS)})")
        job_type = f[0].strip()
        steps = _float(name, n, "total_steps", f[5].strip())
        scale = _int(name, n, "scale_factor", f[6].strip(), lo=1)
        submit = _float(name, n, "arrival_time", f[9].strip())
        tput = GAVEL_V100_THROUGHPUT.get((job_type, scale))
        if tput is None:
            from .perf import near_miss

            if job_type not in known:
                raise InstanceError(f"{name} row {n} column 'job_type'", f"{job_type[:60]!r} is not a job type "
                                    f"Gavel measured{near_miss(job_type, known)}")
            sizes = sorted(s for t, s in GAVEL_V100_THROUGHPUT if t == job_type)
            raise InstanceError(f"{name} row {n} column 'scale_factor'", f"{job_type!r} was measured at scale "
                                f"factors {sizes}, not {scale}")
        model = table1_model(re.sub(r"\s*\(.*\)\s*$", "", job_type))
        jobs.append(Job(id=str(len(jobs)), submit=submit, gpus=scale, duration=steps / tput, model=model))
    return _finish(name, jobs, "Gavel", "stanford-futuredata/gavel scheduler/traces/*.trace, MIT",
                   "duration = total_steps / V100 throughput (simulation_throughputs.json); priority_weight "
                   "and SLO not read", start, hours, sample, seed)


def load_blox(path: str | os.PathLike, *, start: float = 0.0, hours: float | None = None,
              sample: int | None = None, seed: int = 0) -> Trace:
    """A Blox trace (module docstring): id ``job_id``, model ``model_name``, submit
    ``arrival_time``, duration ``num_iters`` x 1 s, GPUs ``gpu_demand``."""
    name, text = _open_rows(path, "CSV")
    jobs = []
    for n, row in _csv_rows(name, text):
        if len(row) != len(BLOX_FIELDS):
            raise InstanceError(f"{name} row {n}", f"has {len(row)} fields; Blox's trace has {len(BLOX_FIELDS)} "
                                f"({', '.join(BLOX_FIELDS)})")
        jid, model = row[0].strip(), row[1].strip()
        if not jid:
            raise InstanceError(f"{name} row {n} column 'job_id'", "must be a non-empty job id")
        jobs.append(Job(id=jid, submit=_float(name, n, "arrival_time", row[2].strip()),
                        gpus=_int(name, n, "gpu_demand", row[4].strip(), lo=1),
                        duration=_float(name, n, "num_iters", row[3].strip()),
                        model=_BLOX_ALIASES.get(model) or table1_model(model)))
    return _finish(name, jobs, "Blox", "msr-fiddle/blox workload/workload.py populate_from_trace, MIT",
                   "duration = num_iters x 1 s (Blox's iteration time there)", start, hours, sample, seed)


def load_pollux(path: str | os.PathLike, *, start: float = 0.0, hours: float | None = None,
                sample: int | None = None, seed: int = 0) -> Trace:
    """A Pollux workload CSV (module docstring), read by
    :func:`placement.sim.pollux_workload.read_pollux_rows` (the loader of the shipped workloads), every row checked with
    its line and column named: id ``name``, submit ``time``, GPUs ``num_replicas`` (1-64), model
    ``application`` (one of the goodput model's, :func:`placement.sim.goodput.default_perf`),
    duration its total progress; ``batch_size`` must lie in the application's measured range
    (the fixed batch sizes are not kept)."""
    from .goodput import default_perf
    from .pollux_workload import read_pollux_rows

    name, rows = read_pollux_rows(path, default_perf().apps)
    jobs = [job for job, _batch in rows]
    return _finish(name, jobs, "Pollux", "petuum/adaptdl osdi21-artifact simulator/workloads, Apache-2.0",
                   "duration = the application's total progress (run it under perf 'goodput')", start, hours,
                   sample, seed)


FORMATS = {"tiresias": load_tiresias, "gavel": load_gavel, "blox": load_blox, "pollux": load_pollux}


# ----------------------------------------------------------------------------- any trace file
def trace_format(path: str | os.PathLike) -> str:
    """The format of a trace file from its first line: ``"v1"`` (the version line, or a header
    with our columns), ``"philly"``, ``"openb"``, or another simulator's
    (:func:`detect_format`: ``tiresias``, ``gavel``, ``blox``,
    ``pollux``)."""
    p = Path(path)
    try:
        with open(p, encoding="utf-8-sig", errors="replace") as f:
            first = f.readline(4096).strip()
    except FileNotFoundError:
        raise InstanceError(str(p), "file not found") from None
    except OSError as exc:
        raise InstanceError(str(p), f"cannot be read ({exc.__class__.__name__})") from None
    if first == CSV_V1_MAGIC:
        return "v1"
    cols = {c.strip() for c in first.split(",")}
    if set(PHILLY_COLUMNS) <= cols:
        return "philly"
    if set(OPENB_POD_COLUMNS) <= cols:
        return "openb"
    other = detect_format(first)
    if other is not None:
        return other
    if set(CSV_V1_COLUMNS[:4]) <= cols:
        return "v1"
    raise InstanceError(f"{p} row 1", f"is not a known trace header (our CSV: a header with "
                        f"{','.join(CSV_V1_COLUMNS[:4])}, optionally after {CSV_V1_MAGIC!r}; Philly: "
                        f"{','.join(PHILLY_COLUMNS)}; openb pods: {','.join(OPENB_POD_COLUMNS)}; Tiresias, "
                        "Gavel, Blox and Pollux traces: placement/sim/trace_formats.py)")


def load_trace(source: str | os.PathLike, **window_args) -> tuple[Trace, str]:
    """A trace from a file of any supported format; returns (trace, format). ``window_args``:
    ``start``, ``hours``, ``sample``, ``seed``. (Shipped names such as ``philly`` are the app's:
    :func:`placement.app.shipped.load_trace_arg`.)"""
    path = Path(source)
    fmt = trace_format(path)
    loader = {"v1": load_trace_csv, "philly": load_philly, "openb": load_openb, **FORMATS}[fmt]
    return loader(path, **window_args), fmt
