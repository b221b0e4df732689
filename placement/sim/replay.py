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

Time sharing (a log whose start rows say ``share=``; :mod:`placement.sim.engine`): a start with
``share=h`` may use GPUs other running jobs hold and progresses at its placement's rate over
``h``; after all rows at one instant, every running job whose GPUs' holders changed must
progress at its placement's rate over the most holders of any of its GPUs, as this check counts
them from the log (``share``: a start's ``share=``, or a missing or wrong ``rate`` row).

Goodput jobs (``perf`` with a ``segment`` method, :class:`placement.sim.goodput.GoodputPerf`):
a start may use any number of GPUs (its ``workers=``), its rate is the row's ``rate=`` and
progress begins ``delay=`` seconds after it; a ``rate`` row sets the logged ``rate=`` times its
``factor=`` (the link factor; a row inside a restart delay leaves progress to begin after it). Whether
those rates are the measurements' goodput is :func:`placement.sim.goodput.goodput_check`.

``checks``: extra callables ``(trace, cluster, log) -> list[str]`` for policy-specific
guarantees (HiveD sharing safety, quotas); their messages are appended.
:func:`guarantee_check` builds one for logs whose start rows name a class (HiveD's VCs).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence

from .cluster import Cluster
from .log import EventLog, LogRow, extra_value
from .perf import DallyPerf, PerfModel
from .trace import Trace

__all__ = ["replay_check", "Check", "guarantee_check"]

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
    goodput = hasattr(perf, "segment")    # rates and restart delays as logged (module docstring)
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
    sharing = any(r.event == "start" and "share=" in r.extra for r in rows)
    holders: dict[int, set[str]] = {}    # time sharing: the running jobs on each GPU
    dirty: set[str] = set()              # time sharing: jobs whose share may have changed

    def bad(msg: str) -> None:
        nonlocal extra
        if len(out) < limit:
            out.append(msg)
        else:
            extra += 1

    def shares(at: float) -> None:
        """Time sharing: each job touched at ``at`` runs at its rate over its GPUs' most holders."""
        for jid in sorted(dirty):
            if jid not in run:
                continue
            g, _t0, rate, base = run[jid]
            h = max(len(holders.get(x, ())) for x in g)
            if not abs(rate * h - base) <= REL_TOL * 10 * base:
                bad(f"share: job {jid} at {at!r} progresses at {rate!r}; its GPUs' most holders, {h}, "
                    f"give {base / h!r}")
        dirty.clear()

    last_t = -math.inf
    for i, r in enumerate(rows):
        where = f"row {i + 1} ({r.event} {r.job} at {r.time!r})"
        if sharing and r.time > last_t and dirty:
            shares(last_t)
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
            if len(set(g)) != len(g) or len(g) != want or not (1 <= want <= job.gpus or (goodput and want >= 1)):
                bad(f"gpu-count: {where} uses {len(set(g))} distinct GPUs; the job needs {job.gpus}"
                    + ("" if workers is None else f" (elastic: {r.extra!r})"))
            if job.gpu_type is not None and any(str(cluster.gpu_type[x]) != job.gpu_type for x in g):
                bad(f"gpu-type: {where} uses GPUs not of type {job.gpu_type!r}")
            share = extra_value(r.extra, "share") if sharing else None
            for x in g:
                other = (sorted(holders.get(x, set()) - {r.job}) if sharing
                         else [owner[x]] if x in owner and owner[x] != r.job else [])
                if other and share is None:
                    bad(f"gpu-twice: {where} uses GPU {x} held by job {other[0]}")
            if not (abs(r.work_done - kept.get(r.job, 0.0)) <= ABS_TOL + REL_TOL * scale):
                bad(f"work: {where} carries work {r.work_done!r}; the job had kept "
                    f"{kept.get(r.job, 0.0)!r}")
            if st == "running":
                continue
            for x in g:
                owner.setdefault(x, r.job)
            if sharing:
                for x in g:
                    holders.setdefault(x, set()).add(r.job)
                    dirty.update(holders[x])
            t0 = r.time
            if goodput:
                rate, t0 = extra_value(r.extra, "rate") or math.nan, r.time + (extra_value(r.extra, "delay") or 0.0)
                if not (math.isfinite(rate) and rate > 0 and t0 >= r.time):
                    bad(f"rate: {where} has no positive rate= and delay= ({r.extra!r})")
                    rate = math.inf
            else:
                rate = perf.rate(job, cluster.tier(list(g)))
            if not goodput and workers is not None and 1 <= len(g) < job.gpus:   # elastic: w of its g workers
                rate = rate * len(g) / job.gpus
            if share is not None and not (share >= 1 and float(share).is_integer()):
                bad(f"share: {where} says share={share!r}, not a whole number of holders")
                share = None
            run[r.job] = (tuple(g), t0, rate / (share or 1), rate)
            began[r.job] = kept.get(r.job, 0.0)
            status[r.job] = "running"
        elif r.event in ("rate", "shift"):
            if st != "running":
                bad(f"state: {where} for a job that is {st or 'not submitted'}")
                continue
            g, t0, rate, base = run[r.job]
            if tuple(sorted(r.gpus)) != tuple(sorted(g)):
                bad(f"state: {where} names GPUs {r.gpus} but the job runs on {g}")
            did = min(job.duration, kept[r.job] + rate * max(0.0, r.time - t0))
            if not abs(r.work_done - did) <= ABS_TOL + REL_TOL * scale:
                bad(f"work: {where} says work {r.work_done!r}; the job had done {did!r}")
            if r.event == "shift":
                continue
            factor = extra_value(r.extra, "factor")
            if not (factor is not None and 0.0 < factor <= 1.0):
                bad(f"rate: {where} has no factor in (0, 1] ({r.extra!r})")
                continue
            kept[r.job] = did
            if goodput:     # the segment's goodput (rate=) times the link factor
                seg_rate = extra_value(r.extra, "rate")
                new = seg_rate * factor if seg_rate else None
            else:
                new = base * factor
            if not (new is not None and new > 0):
                bad(f"rate: {where} has no positive rate= ({r.extra!r})")
                new = base
            run[r.job] = (g, max(r.time, t0) if goodput else r.time, new, base)   # goodput: after a restart delay
            if sharing:
                dirty.add(r.job)
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
                if sharing and r.job in holders.get(x, ()):
                    holders[x].discard(r.job)
                    dirty.update(holders[x])
            possible = kept[r.job] + rate * max(0.0, r.time - t0)
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
    if sharing and dirty:
        shares(last_t)
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


def _words(extra: str) -> dict[str, str]:
    return dict(p.split("=", 1) for p in extra.split() if "=" in p)


def guarantee_check(cells: Mapping[str, Sequence[int]] | None = None,
                    sizes: Sequence[int] = (1, 2, 4, 8)) -> Check:
    """A ``checks`` hook for a log whose start rows name their class (HiveD §3.2-3.3, the words
    :class:`placement.solvers.online.hived.HiveD` writes): ``class=guaranteed vc=T cells=S:I,...``
    or ``class=opportunistic vc=T``. From the log alone, independent of the policy, it reports
    (``guarantee:``) a start without a class, a ``vc`` other than the job's tenant, and for a
    guaranteed job: a cell not aligned in the cluster or of a size not in ``sizes``; GPUs outside
    its cells; a placement that is not a buddy cell of the job's level (a job of ``g <= max(sizes)``
    GPUs inside one aligned block of the smallest size ``>= g``, with one cell of that size or
    more; a larger job on ``ceil(g / max(sizes))`` whole top cells); a cell held at once by two VCs
    (overlapping GPUs); and, given ``cells`` (tenant -> cells per level, smallest level first, as
    :class:`placement.models.hived_vc.VCAssignment`), a VC holding more cells of a size than it
    reserves. A preempted job must be running opportunistic: a guaranteed job is never preempted."""
    top = max(sizes)

    def check(trace, cluster, log) -> list[str]:
        jobs = {j.id: j for j in trace.jobs}
        out: list[str] = []
        held: dict[tuple[str, int, int], int] = {}   # (vc, size, index) -> guaranteed jobs in it
        gpu_vc: dict[int, tuple[str, int]] = {}      # GPU -> (vc, holders) of cells covering it
        running: dict[str, tuple[str, str, list[tuple[int, int]]]] = {}  # job -> (class, vc, cells)
        for n, r in enumerate(log.rows):
            job = jobs.get(r.job)
            if job is None:
                continue
            where = f"row {n + 1} ({r.event} {r.job} at {r.time!r})"
            if r.event == "start":
                w = _words(r.extra)
                cls, vc = w.get("class"), w.get("vc")
                if cls not in ("guaranteed", "opportunistic") or vc is None:
                    out.append(f"guarantee: {where} names no class=guaranteed|opportunistic and vc=")
                    continue
                if vc != job.tenant:
                    out.append(f"guarantee: {where} names vc={vc}; the job's tenant is {job.tenant}")
                mine: list[tuple[int, int]] = []
                if cls == "guaranteed":
                    try:
                        mine = [(int(a), int(b)) for a, b in (c.split(":") for c in w.get("cells", "").split(","))]
                    except ValueError:
                        out.append(f"guarantee: {where} has no cells=S:I,... ({r.extra!r})")
                        continue
                    out += [f"guarantee: {where}: {msg}" for msg in _buddy(job.gpus, r.gpus, mine, sizes, top,
                                                                            cluster.n_gpus)]
                    for c in dict.fromkeys(mine):
                        k = (vc, *c)
                        held[k] = held.get(k, 0) + 1
                        if held[k] == 1:
                            for g in range(c[0] * c[1], c[0] * (c[1] + 1)):
                                o = gpu_vc.get(g)
                                if o is not None and o[0] != vc:
                                    out.append(f"guarantee: {where}: cell {c[0]}:{c[1]} of VC {vc} overlaps "
                                               f"a cell of VC {o[0]} at GPU {g}")
                                gpu_vc[g] = (vc, (o[1] if o is not None and o[0] == vc else 0) + 1)
                            if cells is not None:
                                have = sum(1 for (v, s, _i) in held if v == vc and s == c[0])
                                want = _reserved(cells, vc, c[0], sizes)
                                if have > want:
                                    out.append(f"guarantee: {where}: VC {vc} holds {have} cells of {c[0]} GPUs; "
                                               f"it reserves {want}")
                running[r.job] = (cls, vc, list(dict.fromkeys(mine)))
            elif r.event in ("preempt", "finish") and r.job in running:
                cls, vc, mine = running.pop(r.job)
                if r.event == "preempt" and cls == "guaranteed":
                    out.append(f"guarantee: {where} preempts a guaranteed job of VC {vc}")
                for c in mine:
                    k = (vc, *c)
                    held[k] -= 1
                    if held[k] == 0:
                        del held[k]
                        for g in range(c[0] * c[1], c[0] * (c[1] + 1)):
                            o = gpu_vc.get(g)
                            if o is not None and o[0] == vc:
                                if o[1] <= 1:
                                    del gpu_vc[g]
                                else:
                                    gpu_vc[g] = (vc, o[1] - 1)
        return out
    return check


def _reserved(cells: Mapping[str, Sequence[int]], vc: str, size: int, sizes: Sequence[int]) -> int:
    c = cells.get(vc)
    return 0 if c is None or size not in sizes else int(c[list(sizes).index(size)])


def _buddy(g: int, gpus: Sequence[int], mine: list[tuple[int, int]], sizes: Sequence[int], top: int,
           n_gpus: int) -> list[str]:
    """What is wrong with a guaranteed placement on cells ``mine`` (``(size, index)``)."""
    bad = [f"cell {s}:{i} is not a cell of the cluster" for s, i in mine
           if s not in sizes or i < 0 or (i + 1) * s > n_gpus]
    if bad:
        return bad
    inside = {x for s, i in mine for x in range(s * i, s * (i + 1))}
    if not set(gpus) <= inside:
        return [f"GPUs {sorted(set(gpus) - inside)} lie outside its cells {mine}"]
    if g <= top:
        level = min(s for s in sizes if s >= g)
        if len({x // level for x in gpus}) != 1:
            return [f"{g} GPUs {tuple(gpus)} are not inside one aligned cell of {level} GPUs"]
        if len(mine) != 1 or mine[0][0] < level:
            return [f"{g} GPUs on cells {mine}: one cell of {level} GPUs or more expected"]
        return []
    m = -(-g // top)
    if len(mine) != m or any(s != top for s, _ in mine):
        return [f"{g} GPUs on cells {mine}: {m} whole cells of {top} GPUs expected"]
    return []
