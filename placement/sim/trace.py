"""Traces: the simulator's instances (jobs with submit time, GPUs, ideal duration, tenant, priority, GPU type, model).

A :class:`Trace` is an immutable, submit-ordered tuple of :class:`Job`. Loaders read the real
traces as they are (the Philly per-job CSV, the Alibaba openb pod list), our own CSV v1, or draw a
seeded synthetic trace. Every row is validated; a bad row is one :class:`InstanceError` naming the
file, the row (its line number in the file) and the column.

What a trace lacks is assigned by a seeded rule and named in ``Job.synthetic``:

- ``model``: drawn uniformly from Dally Table 1's models (:data:`placement.sim.table1.DALLY_MODELS`).
  No trace names the model a job trains (traces README).
- ``priority`` (Philly, synthetic traces): 0 (high) / 1 / 2 (low) with probabilities
  :data:`PRIORITY_WEIGHTS`. Philly has no priority column; this split is our choice.

The draws are made per row of the whole file with ``numpy.random.default_rng(seed)`` before any
windowing, so a job's synthetic fields do not depend on the window or the sample.

Durations are ideal run times in seconds: the work a job needs at progress rate 1.0
(:mod:`placement.sim.perf`).
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from ..errors import InstanceError
from ..validate import parse_integer, parse_number
from .table1 import DALLY_MODELS

__all__ = ["Job", "Trace", "load_philly", "load_openb", "load_trace_csv", "write_trace_csv",
           "trace_to_csv", "synthetic_trace", "window", "PRIORITY_WEIGHTS", "PHILLY_GPU_HISTOGRAM",
           "CSV_V1_COLUMNS", "MAX_TRACE_BYTES", "MAX_TRACE_ROWS", "MAX_NAME", "MAX_PROVENANCE", "trace_name",
           "check_trace", "check_job", "MAX_JOB_GPUS"]

MAX_TRACE_BYTES = 64 * 2**20    # refuse larger trace files before reading them (philly.csv: 3.3 MiB)
MAX_TRACE_ROWS = 1_000_000      # and stop reading beyond this many rows (philly: 82,247)
PRIORITY_WEIGHTS = (0.2, 0.3, 0.5)  # P(priority 0, 1, 2) where a trace has none (our choice)
# GPUs per job in philly.csv (traces README, measured): the synthetic size distribution.
PHILLY_GPU_HISTOGRAM = {1: 76627, 2: 1818, 4: 1870, 8: 1643, 16: 199, 32: 67}
# log(duration s) on philly.csv: mean 6.79, standard deviation 2.16 (measured): synthetic durations.
PHILLY_LOG_DURATION = (6.79, 2.16)
CSV_V1_MAGIC = "# placement-trace v1"
CSV_V1_COLUMNS = ("id", "submit", "gpus", "duration", "tenant", "priority", "gpu_type", "model",
                  "tables", "synthetic")


@dataclass(frozen=True)
class Job:
    """One job of a trace.

    ``duration`` is the ideal run time (s) at progress rate 1.0; ``priority`` 0 is the highest;
    ``gpu_type`` None accepts any GPU; ``tables`` are MAST data dependencies; ``synthetic`` names
    the fields assigned by a seeded rule rather than read from the trace.
    """

    id: str
    submit: float
    gpus: int
    duration: float
    tenant: str = "default"
    priority: int = 0
    gpu_type: str | None = None
    model: str | None = None
    tables: tuple[str, ...] = ()
    synthetic: frozenset[str] = field(default_factory=frozenset)


@dataclass(frozen=True)
class Trace:
    """An immutable trace: ``jobs`` sorted by (submit, id), ids unique."""

    name: str
    jobs: tuple[Job, ...]
    provenance: str = ""

    def __post_init__(self):
        try:
            jobs = tuple(sorted(self.jobs, key=lambda j: (j.submit, j.id)))
            seen: set[str] = set()
            for j in jobs:
                if j.id in seen:
                    raise InstanceError(f"{self.name} job {j.id!r}", "job ids must be unique")
                seen.add(j.id)
        except (TypeError, AttributeError):  # a value no file could hold: name it (check_job)
            if isinstance(self.jobs, tuple | list):
                for i, j in enumerate(self.jobs):
                    check_job(j, f"trace {str(self.name)[:60]!r} job "
                                 f"{(repr(j.id)[:60] if isinstance(j, Job) else f'[{i}]')} ")
            raise InstanceError(f"trace {str(self.name)[:60]!r} jobs", "must be a tuple of Job with numeric "
                                "submit times and distinct string ids") from None
        object.__setattr__(self, "jobs", jobs)

    def __len__(self) -> int:
        return len(self.jobs)

    @classmethod
    def from_dataframe(cls, df, name: str = "dataframe", provenance: str = "") -> Trace:
        """A trace from a table with the CSV v1 columns (README, "Simulator"): ``id, submit,
        gpus, duration`` required; ``tenant, priority, gpu_type, model, tables, synthetic``
        optional (``tables``/``synthetic``: a list, or a ``;``-separated string; a missing or
        empty ``gpu_type``/``model`` is None). ``df`` is a pandas DataFrame (or any mapping of
        column name to a sequence; a column ``Unnamed: N``, pandas' index read back from a CSV,
        is not read). Every row is checked as a CSV row is: one
        :class:`InstanceError` naming the row (0-based, as ``df.iloc``) and the column."""
        # pandas' index read back from a CSV (``Unnamed: 0``) is not a column of the trace: not read
        cols = [str(c) for c in getattr(df, "columns", df) if not re.fullmatch(r"Unnamed: \d+", str(c))]
        for col in CSV_V1_COLUMNS[:4]:
            if col not in cols:
                raise InstanceError("df", f"must have a column {col!r} (the CSV v1 columns: "
                                    f"{', '.join(CSV_V1_COLUMNS)})")
        for col in cols:
            if col not in CSV_V1_COLUMNS:
                raise InstanceError(f"df column {col!r}", f"is not a column of the trace format "
                                    f"(allowed: {', '.join(CSV_V1_COLUMNS)})")
        data = {c: list(df[c]) for c in cols}
        n = len(data["id"])
        if n > MAX_TRACE_ROWS:
            raise InstanceError("df", f"a trace may have at most {MAX_TRACE_ROWS} rows, got {n}")
        trace_name(name, "name")
        if not isinstance(provenance, str) or len(provenance) > MAX_PROVENANCE:
            raise InstanceError("provenance", f"must be a string of at most {MAX_PROVENANCE:,} characters")
        jobs, seen = [], set()
        for i in range(n):
            row = {c: _plain(data[c][i]) for c in cols}
            w = f"df row {i} column"
            jid = row["id"]
            if isinstance(jid, int) and not isinstance(jid, bool):
                jid = str(jid)
            if not isinstance(jid, str) or not jid:
                raise InstanceError(f"{w} 'id'", f"must be a non-empty job id, got {jid!r}")
            if jid in seen:
                raise InstanceError(f"{w} 'id'", f"repeats the job id {jid[:40]!r}")
            seen.add(jid)
            lists = {}
            for col in ("tables", "synthetic"):
                v = row.get(col)
                if _missing(v):
                    v = []
                elif isinstance(v, str):
                    v = [x for x in v.split(";") if x]
                elif isinstance(v, list | tuple | set | frozenset | np.ndarray):
                    v = list(v)
                else:
                    raise InstanceError(f"{w} {col!r}", "must be a list of names or a ';'-separated string")
                if not all(isinstance(x, str) and x for x in v):
                    raise InstanceError(f"{w} {col!r}", "must be a list of non-empty names")
                lists[col] = v
            texts = {}
            for col, default in (("tenant", "default"), ("gpu_type", None), ("model", None)):
                v = row.get(col)
                if _missing(v):
                    v = default
                elif not isinstance(v, str):
                    raise InstanceError(f"{w} {col!r}", f"must be a string or empty, got {v!r}")
                texts[col] = v
            job = Job(jid, row["submit"], row["gpus"], row["duration"], texts["tenant"],
                      0 if _missing(row.get("priority")) else row["priority"], texts["gpu_type"], texts["model"],
                      tuple(lists["tables"]), frozenset(lists["synthetic"]))
            jobs.append(check_job(job, f"df row {i} column ", quote=True))
        return cls(name, tuple(jobs), provenance)

    def to_dataframe(self):
        """The jobs as a pandas DataFrame with the CSV v1 columns (:data:`CSV_V1_COLUMNS`), one
        row per job in submit order; ``tables`` and ``synthetic`` as sorted lists, a missing
        ``gpu_type``/``model`` as None. ``Trace.from_dataframe(t.to_dataframe(), t.name,
        t.provenance) == t``."""
        import pandas as pd

        cols = {"id": [j.id for j in self.jobs], "submit": [j.submit for j in self.jobs],
                "gpus": [j.gpus for j in self.jobs], "duration": [j.duration for j in self.jobs],
                "tenant": [j.tenant for j in self.jobs], "priority": [j.priority for j in self.jobs],
                "gpu_type": [j.gpu_type for j in self.jobs], "model": [j.model for j in self.jobs],
                "tables": [list(j.tables) for j in self.jobs], "synthetic": [sorted(j.synthetic) for j in self.jobs]}
        return pd.DataFrame({c: pd.Series(v, dtype=object if c in ("id", "tenant", "gpu_type", "model", "tables",
                                                                  "synthetic") else
                                          "float64" if c in ("submit", "duration") else "int64")
                             for c, v in cols.items()}, columns=list(CSV_V1_COLUMNS))

    def to_csv(self, path: str | os.PathLike | None = None) -> str | None:
        """The trace as CSV v1 (:func:`trace_to_csv`: the version line, name and provenance,
        then one row per job): returned as text when ``path`` is None, else written there
        atomically (the folder checked first). :func:`load_trace_csv` reads it back equal."""
        if path is None:
            return trace_to_csv(self)
        from ..io import check_output_path

        check_output_path(path, "path")
        write_trace_csv(self, path)
        return None


# ----------------------------------------------------------------------------- in-memory checks

MAX_JOB_GPUS = 10**9   # as a CSV cell's integer (parse_integer)


def _plain(v):
    """A numpy scalar as the Python value it holds; pandas' missing values (NaN in an object
    column, None, NaT, pd.NA) of a text column stay distinguishable: NaN stays a float."""
    if isinstance(v, np.generic):
        return v.item()
    if v is not None and type(v).__name__ in ("NAType", "NaTType"):
        return None
    return v


def _missing(v) -> bool:
    """An empty cell of an optional column: None, "" or NaN (pandas' missing value)."""
    return v is None or (isinstance(v, str) and v == "") or (isinstance(v, float) and math.isnan(v))


def check_job(job: Job, where: str, *, quote: bool = False) -> Job:
    """One in-memory job checked as a CSV v1 row is (:func:`load_trace_csv`): ``id`` a non-empty
    string, ``submit`` and ``duration`` finite numbers >= 0, ``gpus`` an integer in 1..10^9,
    ``priority`` an integer >= 0, ``tenant`` a non-empty string, ``gpu_type``/``model`` a string
    or None, ``tables`` names, ``synthetic`` field names of the format. Returns the job with plain
    Python values (a numpy integer becomes an ``int``). ``where`` prefixes the field named in the
    error (``"trace 't' job 'e' "``); with ``quote`` the field is quoted as a column is."""
    if not isinstance(job, Job):
        raise InstanceError(where.rstrip(), f"must be a Job, got {type(job).__name__}")

    def at(f: str) -> str:
        return f"{where}{f!r}" if quote else f"{where}{f}"

    jid = job.id
    if not isinstance(jid, str) or not jid or len(jid) > 10_000:
        raise InstanceError(at("id"), f"must be a non-empty string (at most 10,000 characters), got {jid!r:.60}")
    vals = {}
    for f in ("submit", "duration"):
        v = _plain(getattr(job, f))
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v < 0:
            raise InstanceError(at(f), f"must be a finite number >= 0, got {v!r:.60}")
        vals[f] = float(v)
    for f, lo, hi in (("gpus", 1, MAX_JOB_GPUS), ("priority", 0, MAX_JOB_GPUS)):
        v = _plain(getattr(job, f))
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            raise InstanceError(at(f), f"must be an integer in {lo}..{hi}, got {v!r:.60}")
        vals[f] = v
    if not isinstance(job.tenant, str) or not job.tenant:
        raise InstanceError(at("tenant"), f"must be a non-empty string, got {job.tenant!r:.60}")
    for f in ("gpu_type", "model"):
        v = getattr(job, f)
        if v is not None and (not isinstance(v, str) or not v):
            raise InstanceError(at(f), f"must be a non-empty string or None, got {v!r:.60}")
    if not isinstance(job.tables, tuple | list) or not all(isinstance(t, str) and t for t in job.tables):
        raise InstanceError(at("tables"), "must be a tuple of non-empty table names")
    syn = job.synthetic
    if not isinstance(syn, frozenset | set | tuple | list) or not all(isinstance(x, str) for x in syn):
        raise InstanceError(at("synthetic"), "must be a set of field names")
    bad = set(syn) - set(CSV_V1_COLUMNS)
    if bad:
        raise InstanceError(at("synthetic"), f"names unknown fields {sorted(bad)}")
    return replace(job, **vals, tables=tuple(job.tables), synthetic=frozenset(syn))


def check_trace(trace: Trace, where: str = "trace") -> Trace:
    """An in-memory :class:`Trace` (a Python caller's, not a file's) checked as a file's rows
    are, before any work: its name, provenance, at most :data:`MAX_TRACE_ROWS` jobs, and each
    job by :func:`check_job`, the error naming the job and the field (``trace 't' job 'e'
    submit: must be a finite number >= 0, got nan``). Returns the trace with plain values."""
    if not isinstance(trace, Trace):
        raise InstanceError(where, f"must be a Trace, got {type(trace).__name__}")
    trace_name(trace.name, f"{where} name")
    if not isinstance(trace.provenance, str) or len(trace.provenance) > MAX_PROVENANCE:
        raise InstanceError(f"{where} provenance", f"must be a string of at most {MAX_PROVENANCE:,} characters")
    if not isinstance(trace.jobs, tuple) or len(trace.jobs) > MAX_TRACE_ROWS:
        raise InstanceError(f"{where} jobs", f"must be a tuple of at most {MAX_TRACE_ROWS} jobs")
    jobs = []
    for i, j in enumerate(trace.jobs):
        label = f"{j.id!r:.60}" if isinstance(j, Job) else f"[{i}]"
        jobs.append(check_job(j, f"{where} {trace.name!r:.60} job {label} "))
    return Trace(trace.name, tuple(jobs), trace.provenance)


# ----------------------------------------------------------------------------- helpers

def _open_rows(path: str | os.PathLike, what: str) -> tuple[str, str]:
    """(file name, text) of a trace file whose size was checked before reading it."""
    p = Path(path)
    try:
        size = p.stat().st_size
    except FileNotFoundError:
        raise InstanceError(str(p), "file not found") from None
    except OSError as exc:
        raise InstanceError(str(p), f"cannot be read ({exc.__class__.__name__})") from None
    if not p.is_file():
        raise InstanceError(str(p), f"must be a {what} file")
    if size > MAX_TRACE_BYTES:
        raise InstanceError(str(p), f"is {size} bytes; a trace may have at most {MAX_TRACE_BYTES}")
    try:
        text = p.read_text(encoding="utf-8-sig")   # a UTF-8 byte-order mark (Excel's) is dropped
    except (OSError, UnicodeDecodeError) as exc:
        raise InstanceError(str(p), f"cannot be read as UTF-8 text ({exc.__class__.__name__})") from None
    return str(p), text


def _csv_rows(name: str, text: str, skip: int = 0):
    """(line number, row) for each non-empty CSV record after ``skip`` lines."""
    lines = text.splitlines()
    reader = csv.reader(io.StringIO("\n".join(lines[skip:])))
    n = skip
    try:
        for row in reader:
            n = skip + reader.line_num
            if n - skip > MAX_TRACE_ROWS + 1:
                raise InstanceError(f"{name} row {n}", f"a trace may have at most {MAX_TRACE_ROWS} rows")
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            yield n, row
    except csv.Error as exc:
        raise InstanceError(f"{name} row {n + 1}", f"is not valid CSV ({exc})") from None


def _header(name: str, rows, required: Sequence[str], allowed: Sequence[str] | None = None):
    try:
        n, header = next(rows)
    except StopIteration:
        raise InstanceError(name, f"is empty; the header must name the columns {', '.join(required)}") from None
    header = [h.strip() for h in header]
    for col in required:
        if col not in header:
            raise InstanceError(f"{name} row {n}", f"the header must have a column {col!r}")
    if len(set(header)) != len(header):
        raise InstanceError(f"{name} row {n}", "the header repeats a column name")
    if allowed is not None:
        for col in header:
            if col not in allowed:
                raise InstanceError(f"{name} row {n} column {col!r}",
                                    f"is not a column of this format (allowed: {', '.join(allowed)})")
    return {c: i for i, c in enumerate(header)}, len(header)


def _cell(name, n, row, cols, width, col):
    if len(row) != width:
        raise InstanceError(f"{name} row {n}", f"has {len(row)} fields; the header has {width}")
    return row[cols[col]].strip()


def _float(name, n, col, s, *, lo=0.0):
    return parse_number(s, f"{name} row {n} column {col!r}", minimum=lo)


def _int(name, n, col, s, *, lo=0):
    return parse_integer(s, f"{name} row {n} column {col!r}", minimum=lo)


MAX_NAME = 200            # a trace's name titles plots and tables: longer ones stall the layout
MAX_PROVENANCE = 10_000


def trace_name(value, where: str) -> str:
    """A trace's name: a string of 1 to :data:`MAX_NAME` characters."""
    if not isinstance(value, str) or not 0 < len(value) <= MAX_NAME:
        raise InstanceError(where, f"must be a string of 1 to {MAX_NAME} characters")
    return value


def window(jobs: Sequence[Job], *, start: float = 0.0, hours: float | None = None,
           sample: int | None = None, seed: int = 0) -> list[Job]:
    """Jobs submitted in ``[t0 + start, t0 + start + hours h)`` (t0 the first submit), re-based so
    the window opens at time 0; then ``sample`` of them drawn uniformly without replacement
    (seeded), kept in submit order. With no window and no sample, the jobs as they are."""
    if not math.isfinite(start) or start < 0:
        raise InstanceError("--start", "must be a finite number of seconds >= 0")
    if hours is not None and (not math.isfinite(hours) or hours <= 0):
        raise InstanceError("--hours", "must be a positive number of hours")
    if sample is not None and sample < 1:
        raise InstanceError("--sample", "must be a positive number of jobs")
    if not jobs or (start == 0 and hours is None and sample is None):
        return list(jobs)
    t0 = min(j.submit for j in jobs) + start
    t1 = math.inf if hours is None else t0 + hours * 3600.0
    out = [replace(j, submit=j.submit - t0) for j in jobs if t0 <= j.submit < t1]
    if not out:  # an empty window is a mistake in --start / --hours, not a 0-job simulation
        first, last = min(j.submit for j in jobs), max(j.submit for j in jobs)
        span = f"{(last - first) / 3600.0:,.1f} h"
        raise InstanceError("--start", f"the window ({start / 3600.0:,.6g} h after the first submit"
                            + (f", {hours:,.6g} h long" if hours is not None else "")
                            + f") holds no job: the trace's submits span {span} after the first")
    if sample is not None and sample < len(out):
        keep = np.sort(np.random.default_rng(seed).choice(len(out), size=sample, replace=False))
        out = [out[i] for i in keep]
    return out


def _synthetic_fields(n_rows: int, seed: int, *, priority: bool):
    rng = np.random.default_rng(seed)
    models = rng.integers(0, len(DALLY_MODELS), size=n_rows)
    prios = rng.choice(len(PRIORITY_WEIGHTS), size=n_rows, p=PRIORITY_WEIGHTS) if priority else None
    return [DALLY_MODELS[m] for m in models], prios


# ----------------------------------------------------------------------------- Philly

PHILLY_COLUMNS = ("timestamp", "duration", "num_gpus", "gpu_time", "cluster")


def load_philly(path: str | os.PathLike, *, start: float = 0.0, hours: float | None = None,
                sample: int | None = None, seed: int = 0) -> Trace:
    """The Philly per-job CSV (``timestamp,duration,num_gpus,gpu_time,cluster``; traces README).

    One job per row, ids ``philly-<line>`` (the file has no job id and 65 duplicate rows, kept as
    separate jobs); submit = seconds since the earliest timestamp; tenant = the ``cluster`` hash
    (a virtual cluster); ``gpu_type`` None (Philly's GPUs are treated as one type); ``model`` and
    ``priority`` synthetic (module docstring). The file is not sorted by time; the trace is.
    """
    name, text = _open_rows(path, "CSV")
    rows = _csv_rows(name, text)
    cols, width = _header(name, rows, PHILLY_COLUMNS)
    parsed = []
    for n, row in rows:
        ts = _cell(name, n, row, cols, width, "timestamp")
        try:
            t = datetime.fromisoformat(ts).replace(tzinfo=UTC).timestamp() if ts else math.nan
        except ValueError:
            t = math.nan
        if not math.isfinite(t):
            raise InstanceError(f"{name} row {n} column 'timestamp'",
                                f"must be a time 'YYYY-MM-DD HH:MM:SS', not {ts[:40]!r}")
        dur = _float(name, n, "duration", _cell(name, n, row, cols, width, "duration"))
        g = _int(name, n, "num_gpus", _cell(name, n, row, cols, width, "num_gpus"), lo=1)
        tenant = _cell(name, n, row, cols, width, "cluster")
        if not tenant:
            raise InstanceError(f"{name} row {n} column 'cluster'", "must name the virtual cluster")
        parsed.append((n, t, dur, g, tenant))
    if not parsed:
        raise InstanceError(name, "has no job rows")
    models, prios = _synthetic_fields(len(parsed), seed, priority=True)
    t_min = min(p[1] for p in parsed)
    syn = frozenset({"model", "priority"})
    jobs = [Job(id=f"philly-{n}", submit=t - t_min, gpus=g, duration=dur, tenant=tenant,
                priority=int(prios[i]), model=models[i], synthetic=syn)
            for i, (n, t, dur, g, tenant) in enumerate(parsed)]
    jobs = window(jobs, start=start, hours=hours, sample=sample, seed=seed)
    prov = (f"Philly per-job table ({Path(name).name}: petuum/adaptdl osdi21-artifact, CC BY 4.0); "
            f"{len(parsed)} rows, window start={start:g}s hours={hours} sample={sample} seed={seed}; "
            "model and priority synthetic")
    return Trace(name=Path(name).stem, jobs=tuple(jobs), provenance=prov)


# ----------------------------------------------------------------------------- openb pods

OPENB_POD_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos",
                     "pod_phase", "creation_time", "deletion_time", "scheduled_time")
OPENB_QOS_PRIORITY = {"Guaranteed": 0, "LS": 0, "Burstable": 1, "BE": 2}


def load_openb(path: str | os.PathLike, *, start: float = 0.0, hours: float | None = None,
               sample: int | None = None, seed: int = 0) -> Trace:
    """The Alibaba openb pod list (``openb_pod_list_*.csv``; traces README).

    A pod is a job: submit = ``creation_time``, duration = ``deletion_time - scheduled_time``
    (its run time in the real cluster; taken as ideal), gpus = ``num_gpu``, gpu_type =
    ``gpu_spec`` (None when empty; a ``|``-separated list of choices keeps its first entry, our
    choice), priority from ``qos`` (Guaranteed/LS 0, Burstable 1, BE 2: our mapping), tenant =
    the qos class. Skipped and counted in the provenance: pods that never ran (empty
    ``scheduled_time``) and pods using no GPU. A fractional GPU (``gpu_milli`` < 1000) counts as a
    whole GPU (our choice: the simulator allocates whole GPUs). ``model`` is synthetic.
    """
    name, text = _open_rows(path, "CSV")
    rows = _csv_rows(name, text)
    cols, width = _header(name, rows, OPENB_POD_COLUMNS)
    parsed, never_ran, no_gpu, n_rows = [], 0, 0, 0
    for n, row in rows:
        n_rows += 1
        pod = _cell(name, n, row, cols, width, "name")
        if not pod:
            raise InstanceError(f"{name} row {n} column 'name'", "must name the pod")
        g = _int(name, n, "num_gpu", _cell(name, n, row, cols, width, "num_gpu"))
        _int(name, n, "gpu_milli", _cell(name, n, row, cols, width, "gpu_milli"))
        created = _float(name, n, "creation_time", _cell(name, n, row, cols, width, "creation_time"))
        deleted = _float(name, n, "deletion_time", _cell(name, n, row, cols, width, "deletion_time"))
        sched = _cell(name, n, row, cols, width, "scheduled_time")
        qos = _cell(name, n, row, cols, width, "qos")
        if qos not in OPENB_QOS_PRIORITY:
            raise InstanceError(f"{name} row {n} column 'qos'",
                                f"must be one of {', '.join(OPENB_QOS_PRIORITY)}, not {qos[:40]!r}")
        if not sched:
            never_ran += 1
            continue
        s = _float(name, n, "scheduled_time", sched)
        if deleted < s:
            raise InstanceError(f"{name} row {n} column 'deletion_time'",
                                "must not be before scheduled_time")
        if g == 0:
            no_gpu += 1
            continue
        spec = _cell(name, n, row, cols, width, "gpu_spec").split("|")[0].strip() or None
        parsed.append((pod, created, g, deleted - s, OPENB_QOS_PRIORITY[qos], qos, spec))
    if not parsed:
        raise InstanceError(name, "has no pod that ran on GPUs")
    models, _ = _synthetic_fields(len(parsed), seed, priority=False)
    syn = frozenset({"model"})
    jobs = [Job(id=pod, submit=c, gpus=g, duration=d, tenant=q, priority=p, gpu_type=spec,
                model=models[i], synthetic=syn)
            for i, (pod, c, g, d, p, q, spec) in enumerate(parsed)]
    jobs = window(jobs, start=start, hours=hours, sample=sample, seed=seed)
    prov = (f"Alibaba openb pods ({Path(name).name}: alibaba/clusterdata cluster-trace-gpu-v2023, "
            f"Apache-2.0); {n_rows} rows, skipped {never_ran} never ran and {no_gpu} without GPU; "
            f"window start={start:g}s hours={hours} sample={sample} seed={seed}; model synthetic")
    return Trace(name=Path(name).stem, jobs=tuple(jobs), provenance=prov)


# ----------------------------------------------------------------------------- CSV v1

def load_trace_csv(path: str | os.PathLike, *, start: float = 0.0, hours: float | None = None,
                   sample: int | None = None, seed: int = 0) -> Trace:
    """Our trace CSV, version 1 (README, "Simulator").

    Line 1 is ``# placement-trace v1``; further ``# key: value`` lines before the header carry
    ``name`` and ``provenance``. The version line is optional: a plain CSV whose header has the
    columns (what ``DataFrame.to_csv(index=False)`` writes) is read the same, without metadata; a
    UTF-8 byte-order mark is dropped. The header names the columns; ``id, submit, gpus,
    duration`` are required, ``tenant, priority, gpu_type, model, tables, synthetic`` optional
    (``tables`` and ``synthetic`` are ``;``-separated lists; an empty ``gpu_type``/``model`` is
    None); a column without a name (pandas' index, ``to_csv()`` without ``index=False``) is not
    read. A file without job rows is an empty trace (a simulation refuses it).
    """
    name, text = _open_rows(path, "CSV")
    lines = text.splitlines()
    meta, skip = {}, 0
    if lines and lines[0].strip() == CSV_V1_MAGIC:
        skip = 1
    while skip and skip < len(lines) and lines[skip].startswith("#"):
        key, _, value = lines[skip][1:].partition(":")
        meta[key.strip()] = value.strip()
        skip += 1
    rows = _csv_rows(name, text, skip=skip)
    # an unnamed column is pandas' index (``DataFrame.to_csv`` without ``index=False``): not read
    cols, width = _header(name, rows, CSV_V1_COLUMNS[:4], (*CSV_V1_COLUMNS, ""))

    def get(n, row, col, default=""):
        return _cell(name, n, row, cols, width, col) if col in cols else default

    jobs, seen = [], set()
    for n, row in rows:
        jid = get(n, row, "id")
        if not jid:
            raise InstanceError(f"{name} row {n} column 'id'", "must be a non-empty job id")
        if jid in seen:
            raise InstanceError(f"{name} row {n} column 'id'", f"repeats the job id {jid[:40]!r}")
        seen.add(jid)
        syn = frozenset(s for s in get(n, row, "synthetic").split(";") if s)
        bad = syn - set(CSV_V1_COLUMNS)
        if bad:
            raise InstanceError(f"{name} row {n} column 'synthetic'", f"names unknown fields {sorted(bad)}")
        jobs.append(Job(
            id=jid,
            submit=_float(name, n, "submit", get(n, row, "submit")),
            gpus=_int(name, n, "gpus", get(n, row, "gpus"), lo=1),
            duration=_float(name, n, "duration", get(n, row, "duration")),
            tenant=get(n, row, "tenant") or "default",
            priority=_int(name, n, "priority", get(n, row, "priority") or "0"),
            gpu_type=get(n, row, "gpu_type") or None,
            model=get(n, row, "model") or None,
            tables=tuple(t for t in get(n, row, "tables").split(";") if t),
            synthetic=syn))
    jobs = window(jobs, start=start, hours=hours, sample=sample, seed=seed)
    tname = trace_name(meta.get("name") or Path(name).stem, f"{name} name")
    provenance = meta.get("provenance", "")
    if len(provenance) > MAX_PROVENANCE:
        raise InstanceError(f"{name} provenance", f"must be at most {MAX_PROVENANCE:,} characters")
    return Trace(name=tname, jobs=tuple(jobs), provenance=provenance)


def _num(x: float) -> str:
    return repr(float(x))


def trace_to_csv(trace: Trace) -> str:
    """The CSV v1 text of a trace (round-trips through :func:`load_trace_csv`)."""
    out = io.StringIO()
    out.write(CSV_V1_MAGIC + "\n")
    out.write(f"# name: {trace.name}\n")
    out.write(f"# provenance: {' '.join(trace.provenance.split())}\n")
    w = csv.writer(out, lineterminator="\n")
    w.writerow(CSV_V1_COLUMNS)
    for j in trace.jobs:
        w.writerow([j.id, _num(j.submit), j.gpus, _num(j.duration), j.tenant, j.priority,
                    j.gpu_type or "", j.model or "", ";".join(j.tables), ";".join(sorted(j.synthetic))])
    return out.getvalue()


def write_trace_csv(trace: Trace, path: str | os.PathLike) -> None:
    """Write a trace as CSV v1, atomically."""
    from ..io import write_text

    write_text(path, trace_to_csv(trace))


# ----------------------------------------------------------------------------- synthetic

def synthetic_trace(kind: str = "poisson", *, jobs: int = 100, seed: int = 0,
                    jobs_per_hour: float = 60.0, max_gpus: int | None = None,
                    tenants: int = 4, gpu_types: Sequence[str] | None = None,
                    mean_log_duration: float = PHILLY_LOG_DURATION[0],
                    sd_log_duration: float = PHILLY_LOG_DURATION[1]) -> Trace:
    """A seeded synthetic trace, drawn like Philly's (Dally §5.1.1 runs batch and Poisson).

    ``kind="batch"``: every job submitted at time 0. ``kind="poisson"``: exponential
    inter-arrival times at ``jobs_per_hour``. GPUs per job follow :data:`PHILLY_GPU_HISTOGRAM`
    (capped at ``max_gpus`` by dropping larger sizes); durations are log-normal with Philly's
    measured log mean and deviation (at least 1 s). Tenants ``t0..``, priority, model and (when
    ``gpu_types`` is given) the GPU type are drawn uniformly / by :data:`PRIORITY_WEIGHTS`; all
    fields are synthetic.
    """
    from ..validate import integer
    from ..validate import seed as seed_of

    seed_of(seed)
    if kind not in ("batch", "poisson"):
        raise InstanceError("kind", "must be 'batch' or 'poisson'")
    integer(jobs, "jobs", 0, MAX_TRACE_ROWS)
    if not 0 <= jobs <= MAX_TRACE_ROWS:
        raise InstanceError("jobs", f"must be an integer in 0..{MAX_TRACE_ROWS}")
    if not (math.isfinite(jobs_per_hour) and jobs_per_hour > 0):
        raise InstanceError("jobs_per_hour", "must be a positive number")
    if tenants < 1:
        raise InstanceError("tenants", "must be at least 1")
    sizes = np.array([g for g in PHILLY_GPU_HISTOGRAM if max_gpus is None or g <= max_gpus])
    if len(sizes) == 0:
        raise InstanceError("max_gpus", "must be at least 1")
    rng = np.random.default_rng(seed)
    w = np.array([PHILLY_GPU_HISTOGRAM[g] for g in sizes], dtype=float)
    g = rng.choice(sizes, size=jobs, p=w / w.sum())
    dur = np.maximum(1.0, np.round(rng.lognormal(mean_log_duration, sd_log_duration, size=jobs)))
    if kind == "batch":
        submit = np.zeros(jobs)
    else:
        submit = np.round(np.cumsum(rng.exponential(3600.0 / jobs_per_hour, size=jobs)), 3)
    ten = rng.integers(0, tenants, size=jobs)
    pri = rng.choice(len(PRIORITY_WEIGHTS), size=jobs, p=PRIORITY_WEIGHTS)
    mod = rng.integers(0, len(DALLY_MODELS), size=jobs)
    types = list(gpu_types or [])
    gt = rng.integers(0, len(types), size=jobs) if types else None
    syn = frozenset({"submit", "gpus", "duration", "tenant", "priority", "model"}
                    | ({"gpu_type"} if types else set()))
    width = len(str(max(jobs - 1, 0)))
    out = tuple(Job(id=f"j{i:0{width}d}", submit=float(submit[i]), gpus=int(g[i]),
                    duration=float(dur[i]), tenant=f"t{ten[i]}", priority=int(pri[i]),
                    gpu_type=types[gt[i]] if types else None, model=DALLY_MODELS[mod[i]],
                    synthetic=syn)
                for i in range(jobs))
    prov = (f"synthetic {kind} trace: jobs={jobs} seed={seed} jobs_per_hour={jobs_per_hour:g} "
            f"max_gpus={max_gpus} (sizes and log-normal durations as Philly's)")
    return Trace(name=f"synthetic-{kind}-{seed}", jobs=out, provenance=prov)


# ----------------------------------------------------------------------------- any trace file



