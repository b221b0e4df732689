"""The reference evaluation of a simulation: :func:`replay_check` (it shares no code with the event loop).

It rebuilds GPU occupancy and each job's work from the log alone, with its own bookkeeping
(nothing shared with the engine or any policy), and lists every violation it finds:

- ``order``: log times go backwards;
- ``unknown``: a row names a job not in the trace, or an event of the wrong kind;
- ``submit``: a job submitted at another time than the trace says, or twice, or never;
- ``before-submit``: a start before the job's submit;
- ``state``: a start of a job not pending (running, finished, unschedulable), a preempt or
  finish of a job not running, a finish/preempt on other GPUs than started;
- ``gpu-range``, ``gpu-count``, ``gpu-type``: a placement with ids outside the cluster, with
  another number of distinct GPUs than the job asks for, or with GPUs of another type (an
  *elastic* start, a start row whose extra says ``workers=w`` for ``1 <= w`` below the job's
  GPUs, may use ``w`` GPUs: the job then progresses at ``w / job.gpus`` of its placement's rate,
  :class:`placement.sim.policy.Start`; a ``workers=`` that is not the start's GPU count is a
  ``gpu-count`` violation);
- ``gpu-twice``: a GPU used by two jobs at once;
- ``work``: a start or preempt claiming more work than the job could have done at its
  placement's rate (``perf``), or a start carrying other work than the last preempt kept;
- ``early`` / ``late``: a finish before the job's work is done at its placement's speed, or
  after (GPUs held for nothing);
- ``unschedulable``: a job marked unschedulable that fits the cluster, or one that cannot fit
  and was not marked;
- ``unfinished``: a job neither finished nor unschedulable at the end of the log;
- ``rate`` / ``shift`` rows (a cluster with a network): of a running job, on its GPUs, with a
  factor in (0, 1] and a work equal to what the job did since its last rate (``work``); the
  job then progresses at its placement's rate times that factor. Whether the factor is the
  link model's is the check :func:`placement.sim.link_check.link_factor_check`.

``checks``: extra callables ``(trace, cluster, log) -> list[str]`` for policy-specific
guarantees (HiveD sharing safety, quotas); their messages are appended.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

from .cluster import Cluster
from .log import EventLog, LogRow, extra_value
from .perf import DallyPerf, PerfModel
from .trace import Trace

__all__ = ["replay_check", "Check"]

Check = Callable[[Trace, Cluster, EventLog], list[str]]
REL_TOL = 1e-9
ABS_TOL = 1e-6


def _close_le(a: float, b: float, scale: float) -> bool:
    """a <= b up to floating error on quantities of magnitude ``scale``."""
    return a <= b + ABS_TOL + REL_TOL * scale


def replay_check(trace: Trace, cluster: Cluster, log: EventLog | Iterable[LogRow],
                 perf: PerfModel | None = None, checks: Iterable[Check] = (),
                 require_complete: bool = True, limit: int = 1000) -> list[str]:
    """Every violation in ``log`` (empty list: the log is a valid schedule of ``trace``).

    ``require_complete=False`` skips the ``unfinished`` check (for a log cut at a time horizon).
    At most ``limit`` messages are returned (the last one says how many were left out).
    """
    perf = DallyPerf() if perf is None else perf
    rows = list(log)
    jobs = {j.id: j for j in trace.jobs}
    n_gpus = cluster.n_gpus
    owner: dict[int, str] = {}
    status: dict[str, str] = {}          # pending / running / finished / unschedulable
    kept: dict[str, float] = {}          # work at the start of the running segment
    began: dict[str, float] = {}         # work at the start of the running attempt
    run: dict[str, tuple] = {}           # id -> (gpus, segment start time, rate, perf rate)
    out: list[str] = []
    extra = 0

    def bad(msg: str) -> None:
        nonlocal extra
        if len(out) < limit:
            out.append(msg)
        else:
            extra += 1

    last_t = -math.inf
    for i, r in enumerate(rows):
        where = f"row {i + 1} ({r.event} {r.job} at {r.time!r})"
        if r.time < last_t:
            bad(f"order: {where} goes back in time from {last_t!r}")
        last_t = max(last_t, r.time)
        job = jobs.get(r.job)
        if job is None:
            bad(f"unknown: {where} names a job not in the trace")
            continue
        st = status.get(r.job)
        scale = max(1.0, abs(r.time), job.duration)
        if r.event == "submit":
            if st is not None:
                bad(f"submit: {where} submits the job twice")
                continue
            if r.time != job.submit:
                bad(f"submit: {where} but the trace submits it at {job.submit!r}")
            status[r.job] = "pending"
            kept[r.job] = 0.0
        elif r.event == "unschedulable":
            if st != "pending" or r.job in run:
                bad(f"state: {where} for a job that is {st or 'not submitted'}")
            cap = cluster.capacity(job.gpu_type)
            if job.gpus <= cap:
                bad(f"unschedulable: {where} but the job needs {job.gpus} of {cap} GPUs")
            status[r.job] = "unschedulable"
        elif r.event == "start":
            if r.time < job.submit:
                bad(f"before-submit: {where} starts before submit {job.submit!r}")
            if st != "pending":
                bad(f"state: {where} starts a job that is {st or 'not submitted'}")
                if st is None or st in ("finished", "unschedulable"):
                    continue
            g = r.gpus
            if any(x < 0 or x >= n_gpus for x in g):
                bad(f"gpu-range: {where} uses GPU ids outside 0..{n_gpus - 1}")
                continue
            workers = extra_value(r.extra, "workers")
            want = job.gpus if workers is None else workers
            if len(set(g)) != len(g) or len(g) != want or not 1 <= want <= job.gpus:
                bad(f"gpu-count: {where} uses {len(set(g))} distinct GPUs; the job needs {job.gpus}"
                    + ("" if workers is None else f" (elastic: {r.extra!r})"))
            if job.gpu_type is not None and any(str(cluster.gpu_type[x]) != job.gpu_type for x in g):
                bad(f"gpu-type: {where} uses GPUs not of type {job.gpu_type!r}")
            for x in g:
                if x in owner and owner[x] != r.job:
                    bad(f"gpu-twice: {where} uses GPU {x} held by job {owner[x]}")
            if not (abs(r.work_done - kept.get(r.job, 0.0)) <= ABS_TOL + REL_TOL * scale):
                bad(f"work: {where} carries work {r.work_done!r}; the job had kept "
                    f"{kept.get(r.job, 0.0)!r}")
            if st == "running":
                continue
            for x in g:
                owner.setdefault(x, r.job)
            rate = perf.rate(job, cluster.tier(list(g)))
            if workers is not None and 1 <= len(g) < job.gpus:   # elastic: w of its g workers
                rate = rate * len(g) / job.gpus
            run[r.job] = (tuple(g), r.time, rate, rate)
            began[r.job] = kept.get(r.job, 0.0)
            status[r.job] = "running"
        elif r.event in ("rate", "shift"):
            if st != "running":
                bad(f"state: {where} for a job that is {st or 'not submitted'}")
                continue
            g, t0, rate, base = run[r.job]
            if tuple(sorted(r.gpus)) != tuple(sorted(g)):
                bad(f"state: {where} names GPUs {r.gpus} but the job runs on {g}")
            did = min(job.duration, kept[r.job] + rate * (r.time - t0))
            if not abs(r.work_done - did) <= ABS_TOL + REL_TOL * scale:
                bad(f"work: {where} says work {r.work_done!r}; the job had done {did!r}")
            if r.event == "shift":
                continue
            factor = extra_value(r.extra, "factor")
            if not (factor is not None and 0.0 < factor <= 1.0):
                bad(f"rate: {where} has no factor in (0, 1] ({r.extra!r})")
                continue
            kept[r.job] = did
            run[r.job] = (g, r.time, base * factor, base)
        elif r.event in ("preempt", "finish"):
            if st != "running":
                bad(f"state: {where} for a job that is {st or 'not submitted'}")
                continue
            g, t0, rate, _ = run.pop(r.job)
            if tuple(sorted(r.gpus)) != tuple(sorted(g)):
                bad(f"state: {where} names GPUs {r.gpus} but the job runs on {g}")
            for x in g:
                if owner.get(x) == r.job:
                    del owner[x]
            possible = kept[r.job] + rate * (r.time - t0)
            if r.event == "preempt":
                if not _close_le(r.work_done, min(possible, job.duration), scale):
                    bad(f"work: {where} keeps work {r.work_done!r}; at most {possible!r} was done")
                elif r.work_done < began[r.job] - ABS_TOL - REL_TOL * scale:
                    bad(f"work: {where} keeps less work than before the attempt")
                kept[r.job] = r.work_done
                status[r.job] = "pending"
            else:
                if not _close_le(job.duration, possible, scale):
                    bad(f"early: {where} finishes with work {possible!r} of {job.duration!r} done")
                elif not _close_le(possible, job.duration, scale):
                    bad(f"late: {where} finishes after its work was done "
                        f"(at {t0 + (job.duration - kept[r.job]) / rate!r})")
                kept[r.job] = job.duration
                status[r.job] = "finished"
        else:
            bad(f"unknown: {where} has an unknown event kind")
    for j in trace.jobs:
        st = status.get(j.id)
        if st is None:
            bad(f"submit: job {j.id} is never submitted in the log")
            continue
        if st != "unschedulable" and j.gpus > cluster.capacity(j.gpu_type):
            bad(f"unschedulable: job {j.id} can never fit ({j.gpus} GPUs of type "
                f"{j.gpu_type or 'any'}) and is not marked unschedulable")
        if require_complete and st in ("pending", "running"):
            bad(f"unfinished: job {j.id} is {st} at the end of the log")
    for check in checks:
        for msg in check(trace, cluster, log if isinstance(log, EventLog) else EventLog(rows)):
            bad(msg)
    if extra:
        out.append(f"... and {extra} more violations")
    return out
