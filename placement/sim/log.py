"""The event log: what happened, row by row; the input of replay_check and metrics.

Rows ``(time, event, job, gpus, work_done, extra)`` with ``event`` in :data:`EVENTS`.
``work_done`` is the job's kept work (s at rate 1.0) after the event: at ``start`` the work
carried in, at ``preempt`` the work kept up to the last checkpoint, at ``finish`` the duration.
``gpus`` is the placement (start, preempt, finish) or empty. ``extra`` is free text
(``tier=rack rate=0.893`` at start, then the words of the policy's ``Start.note``: HiveD's
``class=guaranteed vc=T cells=8:12`` or ``class=opportunistic vc=T``, which
:func:`placement.sim.replay.guarantee_check` reads). On a cluster with a network (:mod:`.links`) two more
kinds appear: ``rate`` (a running job's link factor changed: ``work_done`` is its work at that
instant, ``extra`` ``factor=... rate=...``) and ``shift`` (a policy set a running job's phase:
``extra`` ``phase=...`` in ms). Floats are written with ``repr`` (exact round trip), so the
same simulation writes the same bytes.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from pathlib import Path
from typing import NamedTuple

from ..errors import InstanceError

__all__ = ["LogRow", "EventLog", "EVENTS", "read_log", "LOG_COLUMNS", "extra_value"]

EVENTS = ("submit", "start", "preempt", "finish", "unschedulable", "rate", "shift")
LOG_COLUMNS = ("time", "event", "job", "gpus", "work_done", "extra")
MAX_LOG_BYTES = 1024 * 2**20


def extra_value(extra: str, key: str) -> float | None:
    """The number ``key=...`` in a row's extra text (``factor`` of a ``rate`` row), or None."""
    for part in extra.split():
        if part.startswith(key + "="):
            try:
                return float(part[len(key) + 1:])
            except ValueError:
                return None
    return None


class LogRow(NamedTuple):
    time: float
    event: str
    job: str
    gpus: tuple[int, ...] = ()
    work_done: float = 0.0
    extra: str = ""


class EventLog:
    """An append-only list of :class:`LogRow` with CSV / JSONL writers."""

    def __init__(self, rows=None):
        self.rows: list[LogRow] = list(rows or [])

    def append(self, row: LogRow) -> None:
        self.rows.append(row)

    def __iter__(self):
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def to_csv(self) -> str:
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(LOG_COLUMNS)
        for r in self.rows:
            w.writerow([repr(float(r.time)), r.event, r.job, " ".join(map(str, r.gpus)),
                        repr(float(r.work_done)), r.extra])
        return out.getvalue()

    def to_jsonl(self) -> str:
        return "".join(json.dumps({"time": r.time, "event": r.event, "job": r.job,
                                   "gpus": list(r.gpus), "work_done": r.work_done,
                                   "extra": r.extra}) + "\n" for r in self.rows)

    def write_csv(self, path: str | os.PathLike) -> None:
        from ..io import write_text

        write_text(path, self.to_csv())

    def write_jsonl(self, path: str | os.PathLike) -> None:
        from ..io import write_text

        write_text(path, self.to_jsonl())


def _parse_row(where: str, rec: dict) -> LogRow:
    def num(col):
        try:
            v = float(rec[col])
        except (TypeError, ValueError, KeyError):
            v = math.nan
        if not math.isfinite(v):
            raise InstanceError(f"{where} column {col!r}", "must be a finite number")
        return v

    ev = rec.get("event")
    if ev not in EVENTS:
        raise InstanceError(f"{where} column 'event'", f"must be one of {', '.join(EVENTS)}")
    job = rec.get("job")
    if not isinstance(job, str) or not job:
        raise InstanceError(f"{where} column 'job'", "must be a job id")
    g = rec.get("gpus", "")
    try:
        gpus = tuple(int(x) for x in (g.split() if isinstance(g, str) else g))
    except (TypeError, ValueError):
        raise InstanceError(f"{where} column 'gpus'", "must be GPU ids (integers)") from None
    extra = rec.get("extra") or ""
    return LogRow(num("time"), ev, job, gpus, num("work_done"), str(extra))


def read_log(path: str | os.PathLike) -> EventLog:
    """Read a log written by :meth:`EventLog.write_csv` (``.csv``) or ``write_jsonl``
    (``.jsonl``); every row validated (one :class:`InstanceError` naming file, row, column)."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_LOG_BYTES:
            raise InstanceError(str(p), f"is {size} bytes; a log may have at most {MAX_LOG_BYTES}")
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InstanceError(str(p), "file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InstanceError(str(p), f"cannot be read ({exc.__class__.__name__})") from None
    rows = []
    if p.suffix.lower() == ".jsonl":
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                raise InstanceError(f"{p} row {n}", "is not valid JSON") from None
            if not isinstance(rec, dict):
                raise InstanceError(f"{p} row {n}", "must be a JSON object")
            rows.append(_parse_row(f"{p} row {n}", rec))
        return EventLog(rows)
    reader = csv.DictReader(io.StringIO(text))
    if tuple(reader.fieldnames or ()) != LOG_COLUMNS:
        raise InstanceError(f"{p} row 1", f"the header must be {','.join(LOG_COLUMNS)}")
    try:
        for rec in reader:
            rows.append(_parse_row(f"{p} row {reader.line_num}", rec))
    except csv.Error as exc:
        raise InstanceError(f"{p} row {reader.line_num}", f"is not valid CSV ({exc})") from None
    return EventLog(rows)
